"""A ``run_after`` sequence's run on servers paid by the month, where its jobs run as often as each other.

newuser84 item 3: nightly-tune's two jobs, each at ``runs_per_month: 30`` on servers bought, read "$80 per run of the
sequence" (``usd_per_job`` 82.68 + 7.10, their hours' share of the month) while the servers are paid all month: a night
costs the month over its 30 runs, $405. A job alone gets that since newuser39 item 7 (``plan_runs._month_per_run``).
Where every job of a sequence gives the same runs a month, a run of the sequence is its servers' month over those
runs, split between its jobs by their months (their hours' shares), so that the jobs' runs add up to the sequence's;
the hours' share stays beside (``usd_per_job_hours_share``). Mixed cadences, or a job giving none, keep the hours' share.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from generator.planner.plan import DeploymentPlan, Pool
from generator.units import HOURS_PER_MONTH

#: The month figures a chain job's share of its pool holds (assemble's chain share): re-split when the pool's change.
_MONTHS = ("usd_per_month", "opex_usd_per_month")


def common_runs_per_month(runs: Sequence[float | None]) -> float | None:
    """The runs a month every job of a sequence gives, where they all give the same; else None."""
    kinds = set(runs)
    only = kinds.pop() if len(kinds) == 1 else None
    return only if only is not None and only > 0 else None


def steps_between(points: Sequence[float], digits: int | None = 2) -> list[float]:
    """The rounded steps between cumulative points: each point rounded to ``digits``, then each difference rounded.

    The steps add up to the last point's rounding, so parts split this way add up to their whole to the cent (fuzz23
    item 16). One rule for the three splits of a chain's money: :func:`rounded_steps` (a pool's months re-split),
    :func:`runs_split` (a sequence's run) and :func:`generator.planner.chain_share.share_part` (a chain job's share).
    Each computes its points as it always has: their float arithmetic differs (``upto / runs``, ``whole * upto /
    total``, ``whole * fsum(shares)``), and one formula for all would move a cent at a half-cent boundary (review87:
    tests/test_review87_rounding.py).
    ``digits`` None rounds to whole numbers as ints (a chain share's capex).
    """
    rounded = [round(point, digits) for point in points]
    return [round(upto - before, digits) for before, upto in itertools.pairwise(rounded)]


def rounded_steps(whole: float, weights: Sequence[float]) -> list[float]:
    """``whole`` split by ``weights`` to the cent: the rounded cumulative shares' steps, which add up to it (fuzz23 item 16)."""
    total = math.fsum(weights)
    return steps_between([whole * upto / total for upto in itertools.accumulate(weights, initial=0.0)])


def runs_split(months: Sequence[float], runs_per_month: float) -> list[float]:
    """A run of a sequence split between its jobs by their months: each job's month over the runs, to the cent.

    The rounded cumulative months' steps, so that the jobs' runs add up to the sequence's (fuzz23 item 16).
    """
    return steps_between([upto / runs_per_month for upto in itertools.accumulate(months, initial=0.0)])


def resplit_pool_months(deployments: list[DeploymentPlan], pools: Mapping[str, Pool]) -> list[DeploymentPlan]:
    """Chain jobs sharing a pool whose charge changed after the layout (its runs' energy): the pool's months re-split.

    fix154 (fix150's known gaps): a pool bought for a chain charged its runs' extra energy (+$197/month on nightly-tune
    at 100 runs) kept its jobs' months at the layout's, $196.51 short of it; an owned pool charged its runs' energy at the
    jobs' hours as planned was 1 to 11 cents off its jobs' months (split from the layout's unrounded hours). One rule:
    the jobs holding the pool alone, each a share (``cost_share``), take its new month and opex split as their months
    were (each job's share of the jobs' old months), to the cent (:func:`rounded_steps`). ``pools``: the changed pools.
    """
    out = list(deployments)
    for name, pool in pools.items():
        at = [i for i, d in enumerate(deployments) if name in d.pools]
        jobs = [deployments[i] for i in at]
        shared = all(d.pools == (name,) and "cost_share" in d.details and not d.details.get("co_located") for d in jobs)
        if len(jobs) < 2 or not shared or pool.usd_per_hour is None:
            continue
        wholes = {"usd_per_month": pool.usd_per_hour * HOURS_PER_MONTH, "opex_usd_per_month": pool.opex_usd_per_month}
        for key in _MONTHS:
            old = [float(v) for d in jobs if isinstance(v := d.details.get(key), int | float)]
            whole = wholes[key]
            if whole is None or len(old) != len(jobs) or math.fsum(old) <= 0:
                continue
            for i, part in zip(at, rounded_steps(whole, old), strict=True):
                out[i] = out[i]._replace(details={**out[i].details, key: part})
    return out


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
        runs = runs_split([d.details["usd_per_month"] for d in jobs], times)
        for i, d, run in zip(at, jobs, runs, strict=True):
            hours_share = d.details["usd_per_job"]
            out[i] = d._replace(details={**d.details, "usd_per_job": run, "usd_per_job_hours_share": hours_share})
    return out
