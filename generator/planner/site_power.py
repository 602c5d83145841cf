"""The whole site's power (``hardware.site_power``): the fleet's wall power against what the contract lets it draw.

A colocation cage is sold with a power budget for all its racks together and terms that let a load hold only a share
of it continuously (newuser115). The fleet's draw is its nodes' planned wall power (at their GPUs' power limits where
``hardware.gpu_power_limits`` sets them), the figure the racks and circuits are packed against.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from generator.planner.plan import Finding, Pool
    from generator.workload.models import SitePower

#: The code of the note that says how much of the site's power the fleet draws.
SITE_POWER = "site-power"


def fleet_power_w(pools: Sequence[Pool]) -> int:
    """The fleet's planned wall watts: every pool's nodes together."""
    return sum(p.power_w for p in pools)


def _node_w(pool: Pool) -> float:
    """One node's wall watts of ``pool`` (0 for a pool of no node)."""
    return pool.power_w / pool.nodes if pool.nodes else 0


def _allowed_text(site: SitePower) -> str:
    return f"{site.usable_w:,} W ({site.kw:g} kW x {site.continuous_fraction:g} continuous)"


def _fit_text(pools: Sequence[Pool], allowed_w: int) -> str:
    """Each pool's nodes that fit in what the other pools leave of ``allowed_w``."""
    total = fleet_power_w(pools)
    parts = []
    for p in pools:
        each = _node_w(p)
        left = allowed_w - (total - p.power_w)
        fit = max(0, int(left // each)) if each else p.nodes
        parts.append(
            f"pool {p.name} ({', '.join(p.deployments)}): {p.nodes} x {each:,.0f} W, {min(fit, p.nodes)} of them fit "
            "beside the other pools"
        )
    return "; ".join(parts)


#: What unblocks a planned fleet over the site's power.
FLEET_UNBLOCK = (
    "lower the request rates or training deadlines, limit the GPUs' power (hardware.gpu_power_limits), or contract "
    "more power (site_power.kw)"
)


def site_power_refusal(pools: Sequence[Pool], site: SitePower | None, unblock: str = FLEET_UNBLOCK) -> str | None:
    """Why the fleet of ``pools`` is over ``site``'s continuous power, with the figures; None within it (or no site)."""
    if site is None:
        return None
    fleet_w = fleet_power_w(pools)
    if fleet_w <= site.usable_w:
        return None
    return (
        f"the fleet draws {fleet_w:,} W at full load, over the {_allowed_text(site)} the site may "
        f"draw by {fleet_w - site.usable_w:,} W; {_fit_text(pools, site.usable_w)}; to unblock: {unblock}"
    )


def site_power_findings(pools: Sequence[Pool], site: SitePower | None) -> list[Finding]:
    """An info note of the fleet's share of the site's continuous power and the nodes of each pool it has room for."""
    from generator.planner.plan import Finding

    if site is None:
        return []
    fleet_w = fleet_power_w(pools)
    room = site.usable_w - fleet_w
    more = "; ".join(
        f"{int(room // _node_w(p))} more node(s) of pool {p.name} ({_node_w(p):,.0f} W each)" for p in pools if p.nodes
    )
    text = (
        f"the fleet draws {fleet_w:,} W of the {_allowed_text(site)} the site may draw ({fleet_w / site.usable_w:.0%}); "
        f"{room:,} W are left: room for {more or 'no node'}"
    )
    return [Finding("info", SITE_POWER, text, "hardware.site_power")]
