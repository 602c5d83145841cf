"""Bare metal under ``kubernetes.data_residency: eu`` costed at US defaults (newuser114), or rented where no one checked.

A European colocation (Frankfurt) was costed at the US EIA's commercial electricity price and CBRE North America's
colocation rent, the defaults of ``constants.energy_usd_per_kwh`` and ``colocation_usd_per_kw_month``, and the plan's
cost lines named CBRE's figure without its continent. Where the workload says its data stays in the EU and leaves
either at its default, an info says so, names the US source and the constant to give the site's quote in.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.planner.plan import Finding, Pool
from generator.planner.tco import rented_at_given_rates, server_rent
from generator.sizing.constants import Constants
from generator.workload.models import Workload

#: The constants an owned or bought server's month reads whose defaults are US figures, with the source's words.
US_DEFAULTS = {
    "energy_usd_per_kwh": "the US EIA's commercial-sector average",
    "colocation_usd_per_kw_month": "CBRE's North America average asking rent",
}


def residency_cost_findings(wl: Workload) -> list[Finding]:
    """One info where an EU-resident bare-metal workload leaves a US-sourced cost constant at its default."""
    if wl.kubernetes.data_residency != "eu" or wl.hardware.provider != "baremetal":
        return []
    left = [key for key in US_DEFAULTS if key not in wl.constants]
    if not left:
        return []
    defaults = Constants()
    said = "; ".join(f"constants.{key} {getattr(defaults, key):g} ({US_DEFAULTS[key]})" for key in left)
    return [
        Finding(
            "info",
            "us-cost-defaults",
            f"the servers' running costs are at US figures although kubernetes.data_residency is eu: {said}; give "
            "your site's electricity price and colocation quote (USD, as every figure of the plan) under constants",
            "constants",
        )
    ]


def rented_residency_findings(wl: Workload, pools: Iterable[Pool]) -> list[Finding]:
    """One warning per bare-metal pool rented from a provider under ``data_residency: eu``: where it stands is unchecked.

    fix200: a server rented by the hour (Lambda's, priced in the US) was planned under ``eu`` in silence. The catalog's
    rental records say no country (``region`` is free text, "Lambda Cloud (same price in every listed region)"), nor
    does a rate under ``prices:``, so nothing can be refused: the warning says it is unchecked and where to check.
    """
    if wl.kubernetes.data_residency != "eu" or wl.hardware.provider != "baremetal":
        return []
    given = rented_at_given_rates(wl)
    found = []
    for pool in pools:
        node = pool.node
        if not pool.rented:
            continue
        rent = None if node.platform_id in given else server_rent(node.platform_id, node.gpu_id, node.gpus)
        who = rent.rented_from or rent.id if rent is not None else "your provider"
        said = f"catalog price {rent.id} says only '{rent.region}'" if rent is not None else f"prices.{node.platform_id}"
        found.append(
            Finding(
                "warning",
                "residency-unchecked",
                f"pool {pool.name}: its servers are rented from {who}, and the catalog records no country for them "
                f"({said}), so kubernetes.data_residency: eu is not checked for them; rent them in an EU location "
                f"of {who}'s and confirm it in the rental, or plan servers you place (hardware.inventory)",
                "kubernetes.data_residency",
            )
        )
    return found
