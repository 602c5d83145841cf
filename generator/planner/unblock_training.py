"""What would unblock a training job every layout of which is ruled out (:func:`generator.planner.unblock.unblock_hint`).

Only what the job does not already do (a GPU with more memory, ZeRO-3, a lighter method, parameter offload, a shorter
sequence), led by the network's fix, the global batch's or the deadline's where those rule layouts out; the GPU or the
framework where FP8 or the framework's kernels run on none allowed; host RAM's ways where a node's RAM is short.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from generator.planner.blocked import (
    BATCH_NOT_SPLIT,
    BATCH_SPLITS,
    COMMUNICATION_DOMINATES,
    DEADLINE_NEEDS,
    IN_BACKWARD_MOST,
    MORE_RANKS_THAN_BATCH,
    NO_MICRO_BATCH,
    PAST_DEADLINE,
    RUNS_PAST_MONTH,
)
from generator.planner.nodes import RAM_SHORT
from generator.planner.unblock_ways import MORE_SERVERS, OWNED_MORE_MEMORY, in_turn, led_by, network_lead

if TYPE_CHECKING:
    from generator.planner.blocked import Blocked
    from generator.workload.models import TrainingDeployment


def training_hint(dep: TrainingDeployment, blocked: list[Blocked], *, racks: bool, bought: bool) -> str:
    """What would unblock the training job ``dep`` ``blocked`` so (the arguments: :func:`.unblock.unblock_hint`)."""
    servers = MORE_SERVERS if racks else ""
    # only what the job does not already do (fuzz14 item 7: LoRA at ZeRO-3 was told to use ZeRO-3 or LoRA)
    from generator.sizing.frameworks import framework_profile
    from generator.sizing.training_hardware import FP8_NEEDS_TENSOR_CORES, FP8_NOT_RUN_HERE, FRAMEWORK_NOT_RUN_HERE

    training = dep.training
    profile_stage = framework_profile(training.framework).zero_stage if training.framework else None
    # ZeRO-3 only where a lower stage is set (by the job or its framework): with none, every stage was tried
    # (review 14 item 3)
    stage = training.zero_stage if training.zero_stage is not None else profile_stage
    lighter = {"full": "LoRA/QLoRA", "lora": "QLoRA", "qlora": None}[training.method]
    if training.compute_precision == "fp8":
        lighter = None  # FP8 training is full training's (a LoRA job is refused compute_precision fp8 at the field)
    # nor parameter offload where the search offloaded them already (newuser47 item 3: "needs 865.6 GiB per GPU with
    # the parameters offloaded ... to unblock: parameter offload")
    offloaded = any("with the parameters offloaded" in b.why for b in blocked)
    offload = ["parameter offload (offload_params: true)"] if training.offload_params is not True and not offloaded else []
    ways = [
        *(["a GPU with more memory"] if bought else []),
        *(["ZeRO-3"] if stage is not None and stage < 3 else []),
        *([lighter] if lighter else []),
        *offload,
    ]
    general = (
        f"to unblock: allow {', '.join(ways)}, "
        + ("a shorter sequence_length" + servers if racks else "or a shorter sequence_length")
        if ways
        else "to unblock: a shorter sequence_length" + servers
    ) + ("" if bought else f"; {OWNED_MORE_MEMORY}")
    # the network between the nodes rules layouts out (newuser76 item 9: a GKE a3 job over its primary NIC was told of
    # memory levers, none of which moves a byte less, and not of the GPU NICs it has): those layouts fit the GPUs'
    # memory, so the network's fix is what plans them, said first, where some reasons are memory's too
    lead = network_lead(dep, blocked)
    if lead and all(b.code == COMMUNICATION_DOMINATES for b in blocked):
        # the network alone: of the memory levers, only a lighter method moves fewer bytes between the nodes
        adapters = "; else LoRA/QLoRA (adapter gradients alone cross)" if training.method == "full" else ""
        general = f"to unblock: {lead}{adapters}" if training.compute_precision != "fp8" else f"to unblock: {lead}"
    elif lead:
        general = led_by(lead, general)
    # the deadline alone sets the ranks (newuser70 item 6): no memory lever, the batch's and the deadline's said first
    deadline_only = bool(blocked) and all(DEADLINE_NEEDS in b.why for b in blocked)
    if deadline_only:
        general = ""
    batch = training.global_batch_size
    if batch is not None and any(MORE_RANKS_THAN_BATCH in b.why for b in blocked):
        # the fewest GPUs that hold the job are more data-parallel ranks than the batch has sequences
        general += (
            f"; for the global batch of {batch:,}: a global_batch_size of at least one sequence for each of the "
            "data-parallel ranks said above (a multiple of them), or leave it out"
        )
    held = [int(m.group(1)) for b in blocked if (m := re.search(IN_BACKWARD_MOST, b.why))]
    if batch is not None and held and training.offload_optimizer is not True:
        # newuser76 items 4 and 9: the optimizer in backward, which takes no accumulation, is what holds the job on the
        # GPUs it fits: the batch or the optimizer's states, ahead of the memory levers the reason does not call for
        first = (
            f"for the global batch of {batch:,}: a global_batch_size of at most {max(held):,} (one "
            "micro-batch a step, the optimizer stepped in backward), or offload_optimizer: true (the optimizer's states "
            "and step on the CPU, after backward, so the micro-batches accumulate)"
        )
        general = "to unblock: " + in_turn(first, general.removeprefix("to unblock: "))
    elif batch is not None and any(NO_MICRO_BATCH in b.why for b in blocked):
        # each rank accumulates its share of the batch and holds the gradients across its micro-batches; wider
        # data parallelism was searched up to the batch's own size
        general += (
            f"; for the global batch of {batch:,}: a lower global_batch_size (fewer micro-batches a rank accumulates, "
            "whose gradients it holds across them), or leave it out"
        )
    if any(b.code == PAST_DEADLINE or DEADLINE_NEEDS in b.why for b in blocked):
        # a later deadline only below the schema's maximum (fuzz15 item 11)
        later = "a later deadline_hours, " if (training.deadline_hours or 0) < most_deadline_hours() else ""
        quicker = "a faster GPU" if bought else "owned servers of a faster GPU (hardware.inventory)"
        general += f"; for the deadline: {later}fewer dataset_tokens or epochs, or {quicker}"
    if any(b.code == RUNS_PAST_MONTH for b in blocked):
        general += "; for its runs a month on the same servers: fewer runs_per_month, more or faster GPUs, or a cloud"
    if blocked and all(FP8_NEEDS_TENSOR_CORES in b.why or FP8_NOT_RUN_HERE in b.why for b in blocked):
        # no allowed GPU has FP8 (fix77), or none the framework's FP8 path runs on (Gaudi 3, review71 item 6): only the
        # GPU or the precision helps
        general = (
            "; allow a GPU with FP8 tensor cores (NVIDIA Ada, Hopper, Blackwell; AMD CDNA 3 or later), or compute_precision bf16"
        )
        deadline_only = True
    if blocked and all(FRAMEWORK_NOT_RUN_HERE in b.why for b in blocked):
        # newuser89 item 7: Unsloth on Gaudi 3 alone allowed was told of memory levers (more memory, offload, a shorter
        # sequence, rack power), none of which runs its kernels there: only the GPU or the framework helps
        general = f"; allow a GPU {training.framework} runs on (hardware.gpus), or another training.framework"
        deadline_only = True
    if deadline_only:  # the parts added above, each after "; "
        general = "to unblock: " + general.removeprefix("; ")
    if batch is not None and any(BATCH_NOT_SPLIT in b.why for b in blocked):
        # hostile78 item 6: the owned GPUs hold the job but do not split its batch: the batches that do, said first
        # (the memory levers after it put the job on fewer ranks, whose count may divide the batch)
        values = next((m.group(1) for b in blocked if (m := re.search(BATCH_SPLITS, b.why))), None)
        ranks = "a multiple of the data-parallel ranks said above"
        said = f"a global_batch_size of {values} ({ranks}, whose split fits)" if values else f"a global_batch_size of {ranks}"
        rest = general.removeprefix("to unblock: ")
        general = "to unblock: " + in_turn(f"for the global batch of {batch:,}: {said}, or leave it out", rest)
    short_of_ram = [b for b in blocked if b.code == RAM_SHORT]
    if not short_of_ram:
        return general
    # host RAM holds the checkpoint as it loads or what the job offloads to the CPU, summed over a node's GPUs
    # (training_candidates._training_needs; the ram-short reason says which)
    ram = (
        "host RAM holds the checkpoint as it is loaded or what is offloaded to the CPU (the need says which): turn "
        "offload_optimizer, offload_params or activation_offload off where the GPUs can hold those states, allow a "
        "platform with more RAM per GPU, or one with fewer GPUs per node (each node holds its own GPUs' share)"
    )
    return f"to unblock: {ram}" if len(short_of_ram) == len(blocked) else f"{general}; where {ram}"


def most_deadline_hours() -> float:
    """The schema's maximum of ``training.deadline_hours``."""
    from generator.workload.schema import workload_schema

    training = workload_schema()["properties"]["deployments"]["items"]["properties"]["training"]
    return float(training["properties"]["deadline_hours"]["maximum"])
