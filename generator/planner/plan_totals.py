"""A plan's totals: GPUs, nodes, watts, the month and the capex, the fleet's up-front cost and the budget's spend."""

from __future__ import annotations

import math
from typing import Any

from generator.planner.batch_job import pool_month_usd
from generator.planner.heat import heat_btu_per_h
from generator.planner.peak import floor_usd_per_hour
from generator.planner.plan import Pool, runs_only_totals
from generator.units import HOURS_PER_MONTH


def budget_spend_usd(
    fleet: dict[str, Any], pools: list[Pool], rented_jobs: dict[str, float | None], runs: dict[str, float | None]
) -> float | None:
    """What the fleet costs in a month: the figure max_budget_usd_per_month holds.

    Its monthly pools, plus the runs of each rented training job: as many as the workload says it runs a month
    (``runs``, at most a month of its servers), else one (a job longer than a month counts a month); None when any of
    it is unpriced.
    """
    if fleet["usd_per_month"] is None or None in rented_jobs.values() or None in runs.values():
        return None
    hourly = {p.name: p.usd_per_hour or 0.0 for p in pools}
    jobs = sum(
        runs[name] or 0.0 if name in runs else min(usd or 0.0, hourly[name] * HOURS_PER_MONTH)
        for name, usd in rented_jobs.items()
    )
    return float(fleet["usd_per_month"]) + jobs


def fleet_up_front_usd(fleet: dict[str, Any]) -> float | None:
    """What a fleet pays up front for the servers it buys (its totals' capex): the figure max_capex_usd holds.

    Owned servers and servers rented cost nothing up front; None for a fleet with an unpriced pool (its capex is not
    known).
    """
    if fleet["usd_per_month"] is None:
        return None
    return float(fleet["capex_usd"] or 0.0)


def _month_usd(priced: list[Pool]) -> float:
    """What priced pools cost a month: those that run all month at their hourly rates, those of batch jobs their runs."""
    whole = sum(p.usd_per_hour or 0.0 for p in priced if p.busy_hours_per_month is None) * HOURS_PER_MONTH
    return whole + math.fsum(pool_month_usd(p) or 0.0 for p in priced if p.busy_hours_per_month is not None)


def _floor_month_usd(pool: Pool) -> float:
    """A pool's month at its fewest nodes all month; a pool of batch jobs its runs' month (0 where unpriced)."""
    if pool.busy_hours_per_month is not None:
        return pool_month_usd(pool) or 0.0
    return (floor_usd_per_hour(pool) or 0.0) * HOURS_PER_MONTH


def totals(
    pools: list[Pool],
    racks: int | None = None,
    rented_jobs: dict[str, float | None] | None = None,
    monthly_runs: dict[str, float | None] | None = None,
) -> dict[str, Any]:
    """Fleet totals: GPUs (bought and idle), nodes, racks, power, heat and cost (else the priced pools' and the others).

    Rented pools that only run finite training jobs are costed per job (``training_usd_per_job``), not per month;
    the runs a month of the pools whose jobs say how often they run (``monthly_runs``) too (``training_usd_per_month``),
    and the month with them (``usd_per_month_with_runs``). A pool whose jobs do not say is named with its cost a run
    (``training_pools_without_runs``, ``training_usd_per_job_without_runs``): newuser35 item 7, one one-off job
    without ``runs_per_month`` dropped a nightly job's $12,138 a month from the fleet's month.
    """
    rented_jobs = rented_jobs or {}
    runs = monthly_runs or {}
    run_months = [runs[name] for name in rented_jobs if name in runs]
    without_runs = sorted(name for name in rented_jobs if name not in runs)
    counted = bool(run_months) and None not in run_months
    left_out = [rented_jobs[name] for name in without_runs]
    monthly = [p for p in pools if p.name not in rented_jobs]
    priced = [p.usd_per_hour for p in monthly if p.usd_per_hour is not None]
    usd = sum(priced) if len(priced) == len(monthly) else None
    if not pools:
        usd = None
    # the month of each pool's hours: a month, or its batch jobs' runs where it scales to zero between them
    month = None if usd is None else _month_usd([p for p in monthly if p.usd_per_hour is not None])
    jobs = list(rented_jobs.values())
    power = sum(p.power_w for p in pools)
    capex = [p.capex_usd for p in pools if p.capex_usd is not None]
    opex = [p.opex_usd_per_month for p in monthly if p.opex_usd_per_month is not None]
    return {
        "gpus": sum(p.node.gpus * p.nodes for p in pools),
        "idle_gpus": sum(p.idle_gpus for p in pools),
        "nodes": sum(p.nodes for p in pools),
        "racks": racks if racks is not None else sum(p.racks for p in pools),
        "capex_usd": round(sum(capex), 2) if capex and usd is not None else None,
        "opex_usd_per_month": round(sum(opex), 2) if len(opex) == len(monthly) and usd is not None else None,
        "power_w": power,
        # of those, the pools that rest at 0 nodes between their jobs' runs (newuser69 item 9)
        **runs_only_totals(pools),
        "heat_btu_per_h": heat_btu_per_h(power),  # the fleet's watts rounded once, not its nodes' rounded figures summed
        "usd_per_hour": round(usd, 2) if usd is not None else None,
        "usd_per_month": round(month, 2) if month is not None else None,
        # the month with a cloud's serving pools at the nodes their services' average rates need all month: the floor
        # of a month that depends on the day's profile (newuser39 item 9); a pool of batch jobs at its runs' month
        **(
            {"usd_per_month_floor": round(math.fsum(_floor_month_usd(p) for p in monthly), 2)}
            if usd is not None and any(p.min_nodes is not None and p.busy_hours_per_month is None for p in monthly)
            else {}
        ),
        "training_usd_per_job": round(sum(j for j in jobs if j is not None), 2) if jobs and None not in jobs else None,
        **({"training_usd_per_month": round(math.fsum(m for m in run_months if m is not None), 2)} if counted else {}),
        # the month with the rented jobs' runs, what the budget holds (newuser28 item 10: "opex" and the headline
        # left $34,626 of runs out of a $99,224 month)
        **(
            {"usd_per_month_with_runs": round((month or 0.0) + math.fsum(m for m in run_months if m is not None), 2)}
            if month is not None and counted
            else {}
        ),
        # the rented jobs whose runs a month are not given, beside those counted
        **(
            {
                "training_pools_without_runs": without_runs,
                "training_usd_per_job_without_runs": round(math.fsum(j for j in left_out if j is not None), 2)
                if None not in left_out
                else None,
            }
            if counted and without_runs
            else {}
        ),
        # what the priced pools cost where others are not: a reviewer keeps the rest of the bill (fuzz21 item 14)
        **(
            {
                "priced_usd_per_month": round(_month_usd([p for p in monthly if p.usd_per_hour is not None]), 2),
                "priced_pools": len(priced),
                "unpriced_pools": sorted(p.name for p in monthly if p.usd_per_hour is None),
            }
            if usd is None and priced
            else {}
        ),
        # the priced jobs' runs where another job has no price (newuser28 item 3: one unpriced job hid them all)
        **(
            {
                "priced_training_usd_per_job": round(sum(j for j in jobs if j is not None), 2),
                "unpriced_training_pools": sorted(name for name, job in rented_jobs.items() if job is None),
            }
            if None in jobs
            else {}
        ),
    }
