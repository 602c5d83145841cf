"""A training job on owned servers whose global batch does not split over the ranks all of them hold, leaving some free.

newuser111 item 1: a lab with 3 owned 8-GPU servers and a 70B job at TP8 and a global batch of 256 got a plan on 2 of
them (DP2, 480 h a run) and an ``inventory-free`` info naming the third as free, with no word of why: every
data-parallel rank runs the same micro-batches a step, so the batch is micro-batch x accumulation x ranks (Megatron-LM
asserts the global batch is divisible by micro-batch x data-parallel size, DeepSpeed ``train_batch_size == micro *
gas * world_size``: https://www.deepspeed.ai/docs/config-json/#batch-size-related-parameters), and 256 does not split
over the 3 ranks the three servers hold. Here, where a job's servers leave owned servers of their kind free and the
ranks all of them would hold do not split its batch, the workload is planned again at the nearest multiples of that
rank count below and above the batch, and where one of them runs the job on more of the servers in fewer hours, a
warning says both. The plan itself is not changed: the batch is the job's recipe (learning rate, warm-up), which the
user sets (as :mod:`generator.planner.batch_split_hint` says of a batch that forces too many ranks).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from generator.planner.batch_split_hint import planned_at_batch
from generator.planner.blocked import MORE_RANKS_THAN_BATCH
from generator.planner.lighter_training import fleet_said, job_said
from generator.planner.plan import Finding, Plan
from generator.workload.models import TrainingDeployment

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload
    from generator.workload.models import InventoryGroup, Workload


def ranks_on_all(servers: int, gpus_per_server: int, replica_gpus: int) -> int:
    """Data-parallel ranks of ``replica_gpus`` GPUs (TP x PP) that ``servers`` whole servers hold."""
    return servers * gpus_per_server // replica_gpus


def batches_for_ranks(batch: int, ranks: int) -> list[int]:
    """The nearest global batches below and above ``batch`` that split evenly over ``ranks`` ([]: it already does)."""
    if ranks < 1 or batch % ranks == 0:
        return []
    below = batch // ranks * ranks
    return [v for v in (below, below + ranks) if v >= ranks]


def owned_servers(groups: tuple[InventoryGroup, ...], platform_id: str, gpu_id: str, gpus: int) -> int:
    """How many owned servers of one kind (platform, GPU, GPUs a server) ``hardware.inventory`` lists."""
    total = 0
    for group in groups:
        gpu = group.custom.gpu if group.custom is not None else group.gpu
        per = group.custom.gpus_per_server if group.custom is not None else group.gpus_per_server
        if group.platform_id == platform_id and gpu == gpu_id and (per is None or per == gpus):
            total += group.count
    return total


def batch_free_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """A warning per training job on owned servers whose batch leaves servers of its kind free that a neighbour uses."""
    wl = loaded.workload
    if wl.hardware.buy or not wl.hardware.inventory:
        return []
    pools = {p.name: p for p in plan.pools}
    out = []
    for index, dep in enumerate(wl.deployments):
        if not isinstance(dep, TrainingDeployment) or dep.training.global_batch_size is None:
            continue
        planned = next((d for d in plan.deployments if d.name == dep.name), None)
        pool = pools.get(planned.pool) if planned is not None else None
        if planned is None or pool is None or planned.split:
            continue
        node = pool.node
        owned = owned_servers(wl.hardware.inventory, node.platform_id, node.gpu_id, node.gpus)
        used = sum(p.owned_nodes for p in plan.pools if (p.node.platform_id, p.node.gpu_id) == (node.platform_id, node.gpu_id))
        free = owned - used
        if free < 1:
            continue
        batch = dep.training.global_batch_size
        ranks = ranks_on_all(pool.nodes + free, node.gpus, planned.tp * planned.pp)
        hours = planned.details.get("hours")
        said = []
        for value in batches_for_ranks(batch, ranks):
            other = planned_at_batch(loaded, consts, index, value, replan)
            if other is None:
                continue
            theirs = next((d for d in other.deployments if d.name == dep.name), None)
            their_hours = theirs.details.get("hours") if theirs is not None else None
            wider = theirs is not None and theirs.gpus > planned.gpus
            if wider and isinstance(hours, float | int) and isinstance(their_hours, float | int) and their_hours < hours:
                said.append(f"at a global_batch_size of {value:,}: {job_said(other, index)} ({fleet_said(other)})")
        if not said:
            continue
        servers = pool.nodes + free
        out.append(
            Finding(
                "warning",
                "batch-leaves-servers-free",
                f"deployment {dep.name}: its global batch of {batch:,} sequences does not split evenly over the "
                f"{ranks} data-parallel ranks of TP{planned.tp} x PP{planned.pp} that all {servers} owned "
                f"{node.platform_id} servers hold (every rank runs the same micro-batches a step: the batch is "
                f"micro-batch x accumulation x ranks), so the plan runs {job_said(plan, index)} and leaves {free} of "
                f"them free; " + "; ".join(said),
                f"deployments[{index}].training.global_batch_size",
            )
        )
    return out


#: Batches tried by :func:`batch_free_hint` before it gives up (each a plan of the whole workload).
MAX_HINT_TRIES = 4


def _owned_kinds(wl: Workload) -> list[tuple[int, int]]:
    """(servers, GPUs a server) of each owned group, its GPU count as the inventory states it (8 where not stated)."""
    out = []
    for group in wl.hardware.inventory or ():
        per = group.custom.gpus_per_server if group.custom is not None else group.gpus_per_server
        out.append((group.count, per or 8))
    return out


def hint_batches(batch: int, kinds: list[tuple[int, int]], tp_sizes: tuple[int, ...] = (8, 4, 2, 1)) -> list[int]:
    """Batches nearest ``batch`` first that split over the ranks all of a kind's servers hold at some TP.

    None ([]) for a kind whose ranks at some TP already split ``batch``: its servers are not held back by it.
    """
    found: set[int] = set()
    for servers, per in kinds:
        ranks = [ranks_on_all(servers, per, tp) for tp in tp_sizes if per % tp == 0]
        if any(batch % r == 0 for r in ranks if r > 0):
            continue  # the batch splits over the servers at some TP: it is not what holds them back
        for r in ranks:
            found.update(batches_for_ranks(batch, r))
    return sorted(found, key=lambda v: (abs(v - batch), v))


def batch_free_hint(loaded: LoadedWorkload, consts: Constants, replan: Callable[[LoadedWorkload, Constants], Plan]) -> str:
    """What an infeasible workload on owned servers plans at a training job's nearest batch their ranks split; or "".

    A job at TP8 on 3 owned 8-GPU servers and a batch of 256 was refused ("needs 4 servers; 3 owned are free") where
    a batch of 255 or 258 runs it on all three within its deadline (newuser111 item 1).
    """
    wl = loaded.workload
    if wl.hardware.buy or not wl.hardware.inventory:
        return ""
    tries = 0
    for index, dep in enumerate(wl.deployments):
        if not isinstance(dep, TrainingDeployment) or dep.training.global_batch_size is None:
            continue
        for value in hint_batches(dep.training.global_batch_size, _owned_kinds(wl)):
            if tries >= MAX_HINT_TRIES:
                return ""
            tries += 1
            other = planned_at_batch(loaded, consts, index, value, replan)
            if other is None:
                continue
            return (
                f"; with a global_batch_size of {value:,} in the training of deployment {dep.name} (its "
                f"{dep.training.global_batch_size:,} splits evenly over no count of data-parallel ranks that all the "
                f"owned servers hold), the workload plans {fleet_said(other)}, {job_said(other, index)}"
            )
    return ""


#: The ranks a refusal names where a job's fewest GPUs that hold it are more ranks than its batch has sequences
#: ("TP1 ZeRO-3: DP18 is more ranks than the global batch of 1 sequences", :mod:`generator.planner.training`).
_RANKS_OVER_BATCH = re.compile(rf"DP(\d+)(?:, | is ){MORE_RANKS_THAN_BATCH}")


def batch_ranks_hint(
    loaded: LoadedWorkload, consts: Constants, refusal: str, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> str:
    """What a workload ``refusal`` says a job's batch is too small for plans at the nearest batch of the ranks named; or "".

    fix198 item 4: a 70B job at a global batch of 1 was refused naming DP18 and "at least one sequence for each of the
    data-parallel ranks said above", with no batch that plans; the fewest ranks named first (the nearest batch), each
    a batch that splits over them one sequence a rank, up to :data:`MAX_HINT_TRIES` plans.
    """
    ranks = sorted({int(m.group(1)) for m in _RANKS_OVER_BATCH.finditer(refusal)})
    for index, dep in enumerate(loaded.workload.deployments):
        if not isinstance(dep, TrainingDeployment) or dep.training.global_batch_size is None:
            continue
        batch = dep.training.global_batch_size
        for value in [r for r in ranks if r > batch][:MAX_HINT_TRIES]:
            other = planned_at_batch(loaded, consts, index, value, replan)
            if other is None:
                continue
            return (
                f"; with a global_batch_size of {value:,} in the training of deployment {dep.name} (its {batch:,} "
                f"sequence(s) are fewer than the {value:,} data-parallel ranks of the fewest GPUs that hold it), the "
                f"workload plans {fleet_said(other)}, {job_said(other, index)}"
            )
    return ""
