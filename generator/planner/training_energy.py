"""The energy of servers bought or owned for training jobs alone, which run only some hours of the month.

An owned server's energy is its planned power x ``power_utilization`` x PUE x ``energy_usd_per_kwh`` over all 730 h
of the month (:func:`~generator.planner.tco.owned_opex_usd_per_month`). A pool that holds training jobs alone is busy
only their runs' hours; the rest of the month it idles or is off, and the catalog has no sourced idle power figure to
charge those hours at. newuser39 item 7: a tower busy 23.6 h a month was charged $82/month of energy (0.6 x 0.92 kW
all month) beside $4.40 for its runs at full power, with nothing said. The plan keeps the month's figure and says
what it assumes, with the runs' own energy beside it.

A job busy most of the month draws more than that figure: newuser64 item 1, 128 DGX H100 busy 645.7 h a month were
charged $115,972 (0.6 x 730 h of full power) against $170,963 for the runs alone. Such a pool is charged at least its
runs' energy, busy hours x its full power (:func:`charge_runs_energy`), and the note says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from generator.planner.chain_runs import resplit_pool_months
from generator.planner.colocation import undrawn_clause
from generator.planner.plan import RUNS_ENERGY_BASIS, Finding, OwnedRuns, Pool
from generator.planner.racks import racked_nodes
from generator.planner.tco import owned_runs
from generator.units import HOURS_PER_MONTH
from generator.workload.models import TrainingDeployment

if TYPE_CHECKING:
    from generator.planner.plan import DeploymentPlan
    from generator.sizing.constants import Constants
    from generator.workload.models import Workload


def job_runs(pool: Pool, deployments: list[DeploymentPlan]) -> list[tuple[str, float | None, float]] | None:
    """A pool of training jobs alone: each job's name, runs a month (None where not given) and hours a run.

    A run's hours hold its checkpoint's writes and reads between the slices of a ``run_after`` job run in slices or
    stretched: they hold the servers too (fix140, review80 item 6). None where a deployment on it is a service, or a
    job has no hours.
    """
    members = [d for d in deployments if pool.name in d.pools]
    if not members or any(d.kind != "training" for d in members):
        return None
    out: list[tuple[str, float | None, float]] = []
    for d in members:
        runs, hours = d.details.get("runs_per_month"), d.details.get("hours")
        if not isinstance(hours, int | float) or hours <= 0:
            return None
        pauses = d.details.get("slice_checkpoint_hours_per_run") or d.details.get("stretched_checkpoint_hours_per_run")
        given = float(runs) if isinstance(runs, int | float) and runs > 0 else None
        out.append((d.name, given, hours + (pauses if isinstance(pauses, int | float) else 0.0)))
    return out


def busy_hours(pool: Pool, deployments: list[DeploymentPlan]) -> float | None:
    """Hours a month a pool of training jobs alone runs them (each job's runs a month x its hours a run).

    None where a deployment on it is a service, or a job gives no runs a month or has no hours.
    """
    jobs = job_runs(pool, deployments)
    if jobs is None or any(runs is None for _, runs, _ in jobs):
        return None
    return sum((runs or 0.0) * hours for _, runs, hours in jobs)


def _energy_usd_per_month(pool: Pool, consts: Constants, busy: float) -> tuple[float, float, str]:
    """The pool's energy a month at ``power_utilization`` over the month, its runs' at full power over ``busy`` h, and PUE."""
    kw = pool.node.power_w / 1000
    racked = racked_nodes(pool)
    # racked nodes pay the facility's PUE; an owned workstation at home or in the office none (tco.in_colocation)
    kw_pue = kw * (racked * consts.pue + (pool.nodes - racked))
    month = kw_pue * consts.power_utilization * consts.energy_usd_per_kwh * HOURS_PER_MONTH
    runs = kw_pue * min(busy, HOURS_PER_MONTH) * consts.energy_usd_per_kwh
    pue = (
        f"PUE {consts.pue:g}"
        if racked == pool.nodes
        else "PUE 1 (owned, not racked)"
        if not racked
        else f"PUE {consts.pue:g} on {racked} racked and 1 on {pool.nodes - racked} owned"
    )
    return month, runs, pue


def owned_pool_runs(wl: Workload, pool: Pool, deployments: list[DeploymentPlan], consts: Constants) -> OwnedRuns | None:
    """A pool all of owned servers (no ``prices:`` rate) that training jobs alone hold: what its runs charge it (fix89).

    Its jobs' runs a month (one where a job gives none; a ``run_after`` chain's, its jobs' hours summed) at full power,
    as :func:`~generator.planner.tco.charged_runs` charges the layout it was chosen as. Jobs of different cadences (a
    chain's, newuser80 item 2): each job's runs x its hours, summed, each said, and so is a job charged one run because
    it gives no runs a month (fix150: "one run a month" was said of the pool, and no run charged). None for another pool.
    """
    if pool.node.provider != "baremetal" or pool.capex_usd != 0 or pool.owned_nodes != pool.nodes or pool.rented:
        return None
    if pool.node.platform_id in wl.prices:
        return None
    jobs = job_runs(pool, deployments)
    if jobs is None:
        return None
    # each job's runs a month where it gives them, one where not (newuser84 item 3: the charge says so)
    cadences = tuple((name, 1.0 if runs is None else runs, hours, runs is not None) for name, runs, hours in jobs)
    given = all(named for *_, named in cadences)
    if len({runs for _, runs, _, _ in cadences}) == 1:
        # a chain's jobs run as often as each other (workload.chains): its runs of their hours summed
        each, busy = cadences[0][1], math.fsum(hours for _, _, hours, _ in cadences)
    else:
        each, busy = 1.0, math.fsum(runs * hours for _, runs, hours, _ in cadences)
    said = cadences if len(cadences) > 1 else ()  # a job alone's runs are its pool's
    return owned_runs(pool.node.power_w * pool.nodes, racked_nodes(pool) == pool.nodes, each, busy, consts, given, said)


def _charged(wl: Workload, pool: Pool, deployments: list[DeploymentPlan]) -> float | None:
    """Busy hours a month of a pool bought or owned for training jobs alone, whose energy the plan charges; else None."""
    if pool.node.provider != "baremetal" or pool.capex_usd is None or pool.node.platform_id in wl.prices:
        return None  # a rental (no capex) or the workload's own all-in price: no energy of the plan's
    if pool.opex_usd_per_month is None or pool.usd_per_hour is None:
        return None
    return busy_hours(pool, deployments)


def charge_runs_energy(
    wl: Workload,
    pools: list[Pool],
    deployments: list[DeploymentPlan],
    consts: Constants,
    undrawn: Mapping[str, float] | None = None,
) -> tuple[list[Pool], list[DeploymentPlan]]:
    """Pools of training jobs alone whose runs draw more than ``power_utilization`` x the month: charged the runs'.

    The pool's opex and rate rise by the difference, and so does a job's own month (and its cost a run) where it alone
    holds the pool; the jobs sharing the pool in a chain take its new month split as their months were
    (:func:`~generator.planner.chain_runs.resplit_pool_months`, fix154). newuser64 item 1. A pool of
    owned servers is charged its runs' energy and colocation (fix89), and its share of its racks' undrawn contracted kW
    (``undrawn``: :attr:`~generator.planner.colocation.RackBill.undrawn_usd`) as before (fix150: it was dropped, while
    the colocation finding said the pools carry it and the jobs' months held it).
    """
    extra_by_pool: dict[str, float] = {}
    owned_by_pool: dict[str, OwnedRuns] = {}
    contract = undrawn or {}
    out_pools = []
    for pool in pools:
        owned = owned_pool_runs(wl, pool, deployments, consts)
        if owned is not None:  # fix89: owned servers charged their runs' energy and colocation, not a month of energy
            month = owned.usd_per_month + contract.get(pool.name, 0.0)
            owned_by_pool[pool.name] = owned
            basis = f"{pool.nodes} {RUNS_ENERGY_BASIS}{owned.text()}"
            if contract.get(pool.name):
                basis += f"; {undrawn_clause(contract[pool.name])}"
            out_pools.append(
                pool._replace(opex_usd_per_month=round(month, 2), usd_per_hour=month / HOURS_PER_MONTH, price_basis=basis)
            )
            continue
        busy = _charged(wl, pool, deployments)
        if busy is None:
            out_pools.append(pool)
            continue
        month, runs, pue = _energy_usd_per_month(pool, consts, busy)
        if runs <= month:
            out_pools.append(pool)
            continue
        extra = runs - month
        extra_by_pool[pool.name] = extra
        basis = (
            f"; the pool's energy is charged at its training runs' instead, which draw more than "
            f"{consts.power_utilization:g} utilisation over the month: {pool.nodes} x {pool.node.power_w / 1000:.2f} kW "
            f"x {min(busy, HOURS_PER_MONTH):,.1f} h busy x {pue} x ${consts.energy_usd_per_kwh:g}/kWh = "
            f"${runs:,.0f}/month for the pool, +${extra:,.0f}/month"
        )
        out_pools.append(
            pool._replace(
                opex_usd_per_month=round((pool.opex_usd_per_month or 0.0) + extra, 2),
                usd_per_hour=(pool.usd_per_hour or 0.0) + extra / HOURS_PER_MONTH,
                price_basis=(pool.price_basis or "") + basis,
            )
        )
    if not extra_by_pool and not owned_by_pool:
        return out_pools, deployments
    out_deps = []
    for d in deployments:
        mine = [owned_by_pool[n] for n in d.pools if n in owned_by_pool]
        if mine and "cost_share" not in d.details and not d.details.get("co_located"):
            # the month its layout was charged (charged_runs) with its racks' undrawn contract, and a run the energy it
            # adds, not the month over its runs
            undrawn_usd = [contract.get(n, 0.0) for n in d.pools if n in owned_by_pool]
            month = round(math.fsum([*(o.usd_per_month for o in mine), *undrawn_usd]), 2)
            job = round(math.fsum(o.run_usd for o in mine), 2)
            kept = {k: v for k, v in d.details.items() if k != "usd_per_job_hours_share"}
            new = {**kept, "usd_per_month": month, "opex_usd_per_month": month, "usd_per_job": job}
            out_deps.append(d._replace(details=new))
            continue
        held = [n for n in d.pools if n in extra_by_pool]
        details = d.details
        if not held or details.get("co_located") or "cost_share" in details or details.get("usd_per_month") is None:
            out_deps.append(d)
            continue
        extra = sum(extra_by_pool[n] for n in held)
        new = {**details, "usd_per_month": round(details["usd_per_month"] + extra, 2)}
        if details.get("opex_usd_per_month") is not None:
            new["opex_usd_per_month"] = round(details["opex_usd_per_month"] + extra, 2)
        runs_a_month = details.get("runs_per_month")
        if "usd_per_job_hours_share" in details and isinstance(runs_a_month, int | float) and runs_a_month > 0:
            new["usd_per_job"] = round(new["usd_per_month"] / runs_a_month, 2)  # the month over its runs (_month_per_run)
        out_deps.append(d._replace(details=new))
    changed = {p.name: p for p in out_pools if p.name in extra_by_pool or p.name in owned_by_pool}
    return out_pools, resplit_pool_months(out_deps, changed)


def training_energy_findings(
    wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan], consts: Constants
) -> list[Finding]:
    """Pools bought or owned for training jobs alone, busy less than the month: the energy they are charged assumes."""
    out = []
    runs_at = {d.name: i for i, d in enumerate(wl.deployments) if isinstance(d, TrainingDeployment)}
    for pool in pools:
        busy = _charged(wl, pool, deployments)
        if busy is None or busy >= HOURS_PER_MONTH or owned_pool_runs(wl, pool, deployments, consts) is not None:
            continue  # an owned pool's cost line says its runs' basis (OwnedRuns)
        kw = pool.node.power_w / 1000
        month, runs, pue = _energy_usd_per_month(pool, consts, busy)
        jobs = sorted(d.name for d in deployments if pool.name in d.pools)
        job_runs = (
            f"while {', '.join(jobs)} run{'s' if len(jobs) == 1 else ''} {busy:,.1f} h of it (runs_per_month x hours a run)"
        )
        at_full = f"{pool.nodes} x {kw:.2f} kW x {busy:,.1f} h x {pue} x ${consts.energy_usd_per_kwh:g}/kWh"
        if runs > month:  # newuser64 item 1: charged the runs' energy (charge_runs_energy), the month's falls short
            text = (
                f"pool {pool.name}: its energy is charged at its runs' at the servers' full power, {at_full} = "
                f"${runs:,.2f}/month, not at {consts.power_utilization:g} (power_utilization) of its {pool.nodes} x "
                f"{kw:.2f} kW over all {HOURS_PER_MONTH} h of the month (${month:,.2f}), which is less than the runs "
                f"draw: {', '.join(jobs)} run{'s' if len(jobs) == 1 else ''} {busy:,.1f} h of the month (runs_per_month "
                f"x hours a run). The other {HOURS_PER_MONTH - busy:,.1f} h are charged nothing: the catalog has no "
                "sourced idle power for its servers, so servers left idle between runs draw more than this figure. "
                "The layouts were compared at the month's figure (power_utilization is the fleet's)"
            )
        else:
            text = (
                f"pool {pool.name}: its energy, ${month:,.2f}/month, is {consts.power_utilization:g} "
                f"(power_utilization) of its {pool.nodes} x {kw:.2f} kW over all {HOURS_PER_MONTH} h of the month, "
                f"{job_runs}; the catalog has no sourced idle power for its servers to charge the other "
                f"{HOURS_PER_MONTH - busy:,.1f} h at, so the figure holds whether they idle or are off between runs. "
                f"The runs alone at the servers' full power: {at_full} = ${runs:,.2f}/month; power_utilization is the "
                "fleet's (every pool's energy uses it)"
            )
        out.append(
            Finding(
                "info",
                "training-energy-assumed",
                text,
                f"deployments[{runs_at[jobs[0]]}].training.runs_per_month" if jobs[0] in runs_at else "",
            )
        )
    return out
