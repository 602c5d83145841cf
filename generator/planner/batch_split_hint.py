"""A training job whose global batch splits evenly over few degrees, planned at far more ranks than a neighbour needs.

hostile79 item 1: every data-parallel rank runs the same micro-batches a step, so the batch is micro-batch x
accumulation x ranks (DeepSpeed asserts ``train_batch_size == micro * gas * world_size``,
https://www.deepspeed.ai/docs/config-json/#batch-size-related-parameters). A prime batch of 97 splits over DP1 or DP97
only, so a deadline that needs more than one rank took DP97: 104 GPUs bought ($1.1M capex), where a batch of 96 plans 6
GPUs ($99k), with no word of it (owned servers already refuse it naming the batches that split, hostile78 item 6).
Here, where the degree the plan takes has no divisor of the batch well below it, the workload is planned again at the
nearest batches below and above that split over some degree in between, and where one of them plans better by the
objective on at most 1 / :data:`FORCED_FACTOR` of the job's GPUs, a warning says both fleets. The plan itself is not
changed: the batch is the job's recipe (learning rate, warm-up), which the user sets.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from generator.errors import InfeasibleError
from generator.planner.lighter_training import fleet_said, job_said
from generator.planner.plan import Finding, Plan
from generator.workload.models import TrainingDeployment

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: A neighbouring batch is said where its plan runs the job on at most 1 / this of the GPUs the batch given takes.
FORCED_FACTOR = 2


def planned_at_batch(
    loaded: LoadedWorkload,
    consts: Constants,
    index: int,
    batch: int,
    replan: Callable[[LoadedWorkload, Constants], Plan],
) -> Plan | None:
    """The workload planned with deployment ``index``'s global batch at ``batch`` (None: that plan is infeasible)."""
    wl = loaded.workload
    dep = wl.deployments[index]
    assert isinstance(dep, TrainingDeployment)
    job = dep._replace(training=dep.training._replace(global_batch_size=batch))
    changed = wl._replace(deployments=tuple(job if k == index else d for k, d in enumerate(wl.deployments)))
    try:
        return replan(loaded._replace(workload=changed), consts)
    except InfeasibleError:
        return None


def _divisors(n: int) -> list[int]:
    """Divisors of ``n`` in ascending order."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def degree_gap(batch: int, dp: int) -> tuple[int, int] | None:
    """(lowest, highest) data-parallel degree below ``dp`` that ``batch`` does not split over, where the gap is wide.

    The largest divisor of ``batch`` below ``dp`` is ``low``; the degrees ``low + 1`` to ``dp - 1`` split it unevenly, so
    a job that needs any of them takes ``dp``. Wide: ``dp`` is more than :data:`FORCED_FACTOR` x ``low + 1`` (a batch of
    64 at DP8 has DP4 below it: not wide; 97 at DP97 has DP1: wide). None where it is not.
    """
    low = max((d for d in _divisors(batch) if d < dp), default=0)
    if low == 0 or dp <= FORCED_FACTOR * (low + 1):
        return None
    return low + 1, dp - 1


def neighbours(batch: int, gap: tuple[int, int]) -> list[int]:
    """The nearest batches below and above ``batch`` that split evenly over some degree in ``gap``."""
    first, last = gap

    def splits(value: int) -> bool:
        return any(first <= d <= last for d in _divisors(value))

    below = next((v for v in range(batch - 1, 0, -1) if splits(v)), None)
    above = next(v for v in range(batch + 1, 2 * batch + 2) if splits(v))  # 2 x first is in the gap's reach
    return [v for v in (below, above) if v is not None]


def _fleet_gpus(plan: Plan) -> str:
    """``104 GPUs``: the fleet's GPUs, bought or owned."""
    return f"{plan.totals['gpus']:,} GPUs"


def batch_split_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """A warning per training job whose batch's divisors set its ranks far above a neighbouring batch's plan."""
    from generator.planner import _fleet_objective, _fleet_rank  # the fleet's sort key, as the fleet search ranks plans

    wl = loaded.workload
    out = []
    for index, dep in enumerate(wl.deployments):
        if not isinstance(dep, TrainingDeployment) or dep.training.global_batch_size is None:
            continue
        batch = dep.training.global_batch_size
        planned = next((d for d in plan.deployments if d.name == dep.name), None)
        dp = planned.details.get("data_parallel") if planned is not None else None
        world = planned.details.get("world_size") if planned is not None else None
        if planned is None or not isinstance(dp, int) or not isinstance(world, int):
            continue
        gap = degree_gap(batch, dp)
        if gap is None:
            continue
        said = []
        for value in neighbours(batch, gap):
            other = planned_at_batch(loaded, consts, index, value, replan)
            theirs = next((d for d in other.deployments if d.name == dep.name), None) if other is not None else None
            if other is None or theirs is None:
                continue
            objective = _fleet_objective(wl.objective, [plan, other])
            fewer = FORCED_FACTOR * int(theirs.details.get("world_size") or world) <= world
            if fewer and _fleet_rank(objective, other, wl=wl) < _fleet_rank(objective, plan, wl=wl):
                gpus = theirs.details.get("world_size")
                said.append(
                    f"at a global_batch_size of {value:,} the job takes DP{theirs.details.get('data_parallel')} on "
                    f"{gpus:,} GPUs and the workload plans {_fleet_gpus(other)}, {fleet_said(other)}, {job_said(other, index)}"
                )
        if not said:
            continue
        first, last = gap
        out.append(
            Finding(
                "warning",
                "batch-sets-ranks",
                f"deployment {dep.name}: its global batch of {batch:,} sequences splits evenly over no data-parallel "
                f"degree from DP{first} to DP{last} (every rank runs the same micro-batches a step), so the job takes "
                f"DP{dp} on {world:,} GPUs and the workload plans {_fleet_gpus(plan)}, {fleet_said(plan)}, "
                f"{job_said(plan, index)}; " + "; ".join(said),
                f"deployments[{index}].training.global_batch_size",
            )
        )
    return out
