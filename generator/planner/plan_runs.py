"""A plan's training runs: the runs each month, the overlapping ones, those rented per run and the chained jobs' runs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from generator.planner.chain_runs import common_runs_per_month
from generator.planner.option import Option
from generator.planner.plan import DeploymentPlan, Finding, Pool
from generator.units import HOURS_PER_MONTH
from generator.workload.capacity_type import given_rate
from generator.workload.models import TrainingDeployment, Workload

if TYPE_CHECKING:
    from generator.planner.training_chain import Sequenced


def _chain_runs_per_month(wl: Workload, sequenced: Mapping[int, Sequenced], job: Sequenced) -> float | None:
    """The runs a month every job of ``job``'s sequence gives, where all give the same (:mod:`chain_runs`); else None."""
    runs = [
        d.training.runs_per_month if isinstance(d := wl.deployments[i], TrainingDeployment) else None
        for i, s in sequenced.items()
        if s.first == job.first
    ]
    return common_runs_per_month(runs)


def _sequenced(wl: Workload, chosen: list[tuple[int, Option, list[Option]]]) -> dict[int, Sequenced]:
    """The jobs of chains chosen (``run_after``), by deployment index; empty where the workload has none."""
    if not any(opt.sequence for _, opt, _ in chosen):
        return {}
    from generator.planner.training_chain import sequenced_jobs

    return sequenced_jobs(wl, chosen)


def _given_rate_run_findings(
    wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan], rented: Mapping[str, float | None]
) -> list[Finding]:
    """Training jobs paid per run at a rate the workload gives (``prices:``), which may be a commitment's.

    newuser31 item 9: a savings-plan rate given for the serving pool's instance type costed a weekly job's runs too, and
    moved the job onto that type "$27 a run" cheaper, while a commitment is paid whether the job runs or not and hours
    beyond it bill on demand.
    """
    out = []
    for pool in pools:
        given = given_rate(wl.prices, pool.node.platform_id, pool.spot)
        if pool.name not in rented or given is None or given[1] != pool.node.platform_id:
            continue  # a spot rate (prices.<platform>@spot) is no commitment's
        rate = given[0]
        for dep in (d for d in deployments if pool.name in d.pools and d.kind == "training"):
            hours, job = dep.details.get("hours"), dep.details.get("usd_per_job")
            timed = isinstance(hours, int | float) and isinstance(job, int | float)
            run = f", {hours:,.2f} h a run (${job:,.2f})" if timed else ""
            out.append(
                Finding(
                    "info",
                    "run-at-given-rate",
                    f"deployment {dep.name}: its runs are costed at prices.{pool.node.platform_id}, ${rate:,.2f} a "
                    f"node-hour{run}, paid only while it runs; a commitment's rate (a savings plan, reserved instances) "
                    "is paid whether the job runs or not, and hours beyond the committed ones bill on demand: where "
                    f"this rate is one, its pool costs ${rate * pool.nodes * HOURS_PER_MONTH:,.0f} a month, or give the "
                    "rate the job's hours are billed at",
                    f"prices.{pool.node.platform_id}",
                )
            )
    return out


def _rented_jobs(pools: list[Pool], deployments: list[DeploymentPlan], per_run: set[str]) -> dict[str, float | None]:
    """Pools whose deployments are all billed per run (:func:`billed_per_run`): paid per job, not per month.

    Pool name -> USD per job (None where a job is unpriced).
    """
    out: dict[str, float | None] = {}
    for pool in pools:
        members = [d for d in deployments if pool.name in d.pools]
        if members and all(d.name in per_run for d in members):
            jobs = [d.details.get("usd_per_job") for d in members]
            out[pool.name] = None if None in jobs else float(sum(j for j in jobs if j is not None))
    return out


def _with_runs(wl: Workload, deployments: list[DeploymentPlan], per_run: set[str]) -> list[DeploymentPlan]:
    """Training jobs whose workload says how often they run: their runs a month, and rented per run what those cost.

    newuser26 item 12: a nightly fine-tune was "$41 per training run" beside a monthly headline that left its 30 runs
    out. On servers paid by the month the runs add no cost: their runs a month alone (newuser30 item 12: ``diff``'s
    bought side read its hours a run with no runs a month beside the rented side's).
    """
    runs = {d.name: d.training.runs_per_month for d in wl.deployments if isinstance(d, TrainingDeployment)}
    out = []
    for d in deployments:
        times, job = runs.get(d.name), d.details.get("usd_per_job")
        if times is None:
            out.append(d)
            continue
        if d.name not in per_run:
            out.append(d._replace(details={**d.details, "runs_per_month": times, **_month_per_run(d.details, times)}))
            continue
        month = None if job is None else round(job * times, 2)
        out.append(d._replace(details={**d.details, "runs_per_month": times, "usd_per_month_of_runs": month}))
    return out


def _month_per_run(details: dict[str, Any], times: float) -> dict[str, Any]:
    """A job's run on servers paid by the month that it alone holds: the month over its runs a month.

    newuser39 item 7: one LoRA run a month on a $372.92/month tower read ``usd_per_job: 12.05`` (its 23.6 h's share of
    the month, as if the tower ran jobs all 730 h) while the month is paid whatever runs: $372.92 a run. The hours'
    share stays beside it (``usd_per_job_hours_share``). A job sharing its servers (a ``run_after`` sequence's, whose
    ``cost_share`` splits them) keeps its hours' share.
    """
    month, job = details.get("usd_per_month"), details.get("usd_per_job")
    if "cost_share" in details or details.get("co_located") or month is None or job is None or times <= 0:
        return {}
    return {"usd_per_job": round(month / times, 2), "usd_per_job_hours_share": job}


def _overlapping_runs(deployments: list[DeploymentPlan]) -> list[Finding]:
    """Rented jobs whose runs a month take longer than the month: runs overlap, each on servers of its own."""
    out = []
    for i, d in enumerate(deployments):
        times, hours = d.details.get("runs_per_month"), d.details.get("hours")
        rented = "usd_per_month_of_runs" in d.details  # servers paid by the month run one job at a time
        if rented and times and hours and times * hours > HOURS_PER_MONTH:
            at_once = math.ceil(times * hours / HOURS_PER_MONTH)
            out.append(
                Finding(
                    "warning",
                    "runs-overlap",
                    f"'{d.name}': {times:g} runs a month of {hours:,.1f} h take {times * hours:,.0f} h, more than a month "
                    f"({HOURS_PER_MONTH} h): up to {at_once} runs at once, each renting pool {d.pools[0]}'s servers, "
                    "beyond the node limits rendered for one run; fewer runs_per_month, or a deadline_hours of "
                    f"{HOURS_PER_MONTH / times:.4g} h, runs them one after another",
                    f"deployments[{i}].training.runs_per_month",
                )
            )
    return out


def _monthly_runs(
    pools: list[Pool], deployments: list[DeploymentPlan], rented_jobs: dict[str, float | None], capped: bool = False
) -> dict[str, float | None]:
    """Per pool rented per job: what its jobs' runs cost in a month, where every job of it says how often it runs.

    None where a job is unpriced; a pool left out where a job says nothing. ``capped``: at most the pool's month (runs
    that would take longer run back to back), the figure the budget holds.
    """
    hourly = {p.name: (p.usd_per_hour or 0.0) * HOURS_PER_MONTH for p in pools}
    out: dict[str, float | None] = {}
    for name in rented_jobs:
        members = [d.details for d in deployments if name in d.pools]
        if not members or any("runs_per_month" not in m for m in members):
            continue
        months = [m["usd_per_month_of_runs"] for m in members]
        total = None if None in months else math.fsum(months)
        out[name] = min(total, hourly[name]) if capped and total is not None else total
    return out
