"""The GeForce findings: the driver licence excludes datacenter deployment, for the cards left out and the racked pools."""

from __future__ import annotations

from generator import catalog
from generator.planner.options import geforce_left_out
from generator.planner.plan import Finding, Pool
from generator.planner.racks import racked_nodes
from generator.sizing.constants import Constants
from generator.words import listed
from generator.workload.models import Workload

#: NVIDIA's GeForce driver licence, whose section 2.1.3 ("No Datacenter Deployment") covers colocated servers.
GEFORCE_LICENCE = "https://www.nvidia.com/en-us/drivers/geforce-license/"


def _geforce_left_out_findings(wl: Workload, consts: Constants) -> list[Finding]:
    """What GeForce cards the servers bought leave out where colocation is charged, and how to allow them (newuser39 item 8)."""
    left_out = geforce_left_out(wl)
    if not left_out:
        return []
    return [
        Finding(
            "info",
            "geforce-left-out",
            f"no server is bought with a GeForce card ({listed(left_out)}): NVIDIA's GeForce driver licence "
            f"excludes datacenter deployment (section 2.1.3, {GEFORCE_LICENCE}) and the plan charges colocation "
            f"(${consts.colocation_usd_per_kw_month:g}/kW-month, a datacenter); in an office or home set constants "
            "colocation_usd_per_kw_month: 0 and pue: 1, or name the card in hardware.gpus to plan it anyway",
            "hardware.gpus",
        )
    ]


def _consumer_gpu_findings(pools: list[Pool], consts: Constants, priced: frozenset[str] = frozenset()) -> list[Finding]:
    """Racked pools of consumer (GeForce) cards: their driver licence excludes datacenter deployment (newuser15 item 8).

    An office or home server is not one; colocation, which the plan's costs assume for what it buys, is. The warning
    follows the cost the plan used (newuser25 item 10): none for owned workstations (they stay in the office, no rack,
    no colocation); the colocation share of the pool's cost where it is charged; and where colocation is charged at $0,
    or the workload's own ``prices:`` (``priced``: platform ids) set the cost, only where the card must stand.
    """
    out = []
    for pool in pools:
        gpu = catalog.gpus().get(pool.node.gpu_id)
        racked = racked_nodes(pool)
        # NVIDIA's GeForce licence: an AMD Radeon's amdgpu driver has no such clause (newuser99 item 3)
        if gpu is None or not gpu.consumer or gpu.vendor != "nvidia" or pool.node.provider != "baremetal" or not racked:
            continue
        kw = racked * pool.node.power_w / 1000
        colocation_usd = kw * consts.colocation_usd_per_kw_month
        where = (
            "the plan's cost for it is the workload's own price (prices:): run it in an office or home, not a "
            "datacenter, or choose a data-center GPU"
            if pool.node.platform_id in priced
            else f"${colocation_usd:,.0f}/month of this pool's cost is colocation ({kw:.2f} kW x "
            f"${consts.colocation_usd_per_kw_month:g}/kW-month, a datacenter): in an office or home set constants "
            "colocation_usd_per_kw_month: 0 and pue: 1, or choose a data-center GPU"
            if colocation_usd > 0
            else "the plan charges no colocation (colocation_usd_per_kw_month 0): keep it in an office or home, not a "
            "datacenter, or choose a data-center GPU"
        )
        out.append(
            Finding(
                "warning",
                "consumer-gpu-licence",
                f"pool {pool.name}: {gpu.name} is a GeForce card, whose driver licence excludes datacenter deployment "
                f"(section 2.1.3, {GEFORCE_LICENCE}); {where}",
            )
        )
    return out
