"""A ``run_after`` sequence's run on servers paid by the month, where its jobs run as often as each other.

newuser84 item 3: nightly-tune's two jobs, each at ``runs_per_month: 30`` on servers bought, read "$80 per run of the
sequence" (``usd_per_job`` 82.68 + 7.10, their hours' share of the month) while the servers are paid all month: a night
costs the month over its 30 runs, $405. A job alone gets that since newuser39 item 7 (``assemble._month_per_run``).
Where every job of a sequence gives the same runs a month, a run of the sequence is its servers' month over those
runs, split between its jobs by their months (their hours' shares), so that the jobs' runs add up to the sequence's;
the hours' share stays beside (``usd_per_job_hours_share``). Mixed cadences, or a job giving none, keep the hours' share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from generator.planner.plan import DeploymentPlan


def common_runs_per_month(runs: Sequence[float | None]) -> float | None:
    """The runs a month every job of a sequence gives, where they all give the same; else None."""
    kinds = set(runs)
    only = kinds.pop() if len(kinds) == 1 else None
    return only if only is not None and only > 0 else None


def _month_share_per_run(details: Mapping[str, Any]) -> bool:
    """Whether a chain job's details can take the month over its runs: a share of servers paid by the month."""
    return (
        "cost_share" in details
        and not details.get("co_located")
        and details.get("usd_per_month") is not None
        and details.get("usd_per_job") is not None
    )


def sequence_month_per_run(deployments: list[DeploymentPlan], per_run: set[str], own_energy: set[str]) -> list[DeploymentPlan]:
    """Chain jobs whose sequence runs at one cadence on servers paid by the month: their month over its runs.

    ``per_run``: jobs billed per run (their run is what it is billed); ``own_energy``: pools of owned servers whose
    run is the energy it adds (fix89), left as they are, as a job alone's is.
    """
    chains: dict[str, list[int]] = {}
    for i, d in enumerate(deployments):
        sequence = d.details.get("sequence")
        if isinstance(sequence, str) and d.kind == "training":
            chains.setdefault(sequence, []).append(i)
    out = list(deployments)
    for sequence, at in chains.items():
        jobs = [deployments[i] for i in at]
        given = [r if isinstance(r := d.details.get("runs_per_month"), int | float) else None for d in jobs]
        times = common_runs_per_month(given)
        whole = len(jobs) == len(sequence.split(" -> "))
        if times is None or not whole or any(d.name in per_run or set(d.pools) & own_energy for d in jobs):
            continue
        if not all(_month_share_per_run(d.details) for d in jobs):
            continue
        # the rounded cumulative months' steps, so that the jobs' runs add up to the sequence's (fuzz23 item 16)
        before = 0.0
        for i, d in zip(at, jobs, strict=True):
            upto = before + d.details["usd_per_month"]
            run = round(round(upto / times, 2) - round(before / times, 2), 2)
            hours_share = d.details["usd_per_job"]
            out[i] = d._replace(details={**d.details, "usd_per_job": run, "usd_per_job_hours_share": hours_share})
            before = upto
    return out
