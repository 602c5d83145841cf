"""The energy of servers bought or owned for training jobs alone, which run only some hours of the month.

An owned server's energy is its planned power x ``power_utilization`` x PUE x ``energy_usd_per_kwh`` over all 730 h
of the month (:func:`~generator.planner.tco.owned_opex_usd_per_month`). A pool that holds training jobs alone is busy
only their runs' hours; the rest of the month it idles or is off, and the catalog has no sourced idle power figure to
charge those hours at. newuser39 item 7: a tower busy 23.6 h a month was charged $82/month of energy (0.6 x 0.92 kW
all month) beside $4.40 for its runs at full power, with nothing said. The plan keeps the month's figure and says
what it assumes, with the runs' own energy beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.planner.plan import Finding, Pool
from generator.planner.racks import racked_nodes
from generator.planner.tco import HOURS_PER_MONTH
from generator.workload.models import TrainingDeployment

if TYPE_CHECKING:
    from generator.planner.plan import DeploymentPlan
    from generator.sizing.constants import Constants
    from generator.workload.models import Workload


def busy_hours(pool: Pool, deployments: list[DeploymentPlan]) -> float | None:
    """Hours a month a pool of training jobs alone runs them (each job's runs a month x its hours a run).

    None where a deployment on it is a service, or a job gives no runs a month or has no hours.
    """
    members = [d for d in deployments if pool.name in d.pools]
    if not members or any(d.kind != "training" for d in members):
        return None
    busy = 0.0
    for d in members:
        runs, hours = d.details.get("runs_per_month"), d.details.get("hours")
        if not isinstance(runs, int | float) or not isinstance(hours, int | float):
            return None
        busy += runs * hours
    return busy


def training_energy_findings(
    wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan], consts: Constants
) -> list[Finding]:
    """Pools bought or owned for training jobs alone, busy less than the month: the energy they are charged assumes."""
    out = []
    runs_at = {d.name: i for i, d in enumerate(wl.deployments) if isinstance(d, TrainingDeployment)}
    for pool in pools:
        if pool.node.provider != "baremetal" or pool.capex_usd is None or pool.node.platform_id in wl.prices:
            continue  # a rental (no capex) or the workload's own all-in price: no energy of the plan's
        busy = busy_hours(pool, deployments)
        if busy is None or busy >= HOURS_PER_MONTH:
            continue
        kw = pool.node.power_w / 1000
        racked = racked_nodes(pool)
        # racked nodes pay the facility's PUE; an owned workstation at home or in the office none (tco.in_colocation)
        kw_pue = kw * (racked * consts.pue + (pool.nodes - racked))
        month = kw_pue * consts.power_utilization * consts.energy_usd_per_kwh * HOURS_PER_MONTH
        runs = kw_pue * busy * consts.energy_usd_per_kwh
        jobs = sorted(d.name for d in deployments if pool.name in d.pools)
        pue = (
            f"PUE {consts.pue:g}"
            if racked == pool.nodes
            else "PUE 1 (owned, not racked)"
            if not racked
            else f"PUE {consts.pue:g} on {racked} racked and 1 on {pool.nodes - racked} owned"
        )
        out.append(
            Finding(
                "info",
                "training-energy-assumed",
                f"pool {pool.name}: its energy, ${month:,.2f}/month, is {consts.power_utilization:g} "
                f"(power_utilization) of its {pool.nodes} x {kw:.2f} kW over all {HOURS_PER_MONTH} h of the month, "
                f"while {', '.join(jobs)} run{'s' if len(jobs) == 1 else ''} {busy:,.1f} h of it (runs_per_month x "
                f"hours a run); the catalog has no sourced idle power for its servers to charge the other "
                f"{HOURS_PER_MONTH - busy:,.1f} h at, so the figure holds whether they idle or are off between runs. "
                f"The runs alone at the servers' full power: {pool.nodes} x {kw:.2f} kW x {busy:,.1f} h x {pue} x "
                f"${consts.energy_usd_per_kwh:g}/kWh = ${runs:,.2f}/month; power_utilization is the fleet's (every "
                "pool's energy uses it)",
                f"deployments[{runs_at[jobs[0]]}].training.runs_per_month" if jobs[0] in runs_at else "",
            )
        )
    return out
