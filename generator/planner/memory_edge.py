"""A training job whose memory, not its throughput, sets its data-parallel degree: the levers tried, and the warning.

ZeRO-3 shards the model states over the data-parallel ranks but not what every rank holds whole: the saved
activations of its micro-batch, the gathered layers in flight and FSDP's root unit (embeddings, LM head), the CUDA
context and allocator reserve. Where that alone sits just under the card, the smallest degree that fits is the one that
spreads the sharded rest thinnest: a 70B QLoRA at 4,096 tokens on bought L4s held 21.35 GiB a GPU at DP64, 498 MiB
over the 20.87 GiB budget, and the search took DP712 on 89 servers ($3.3M) for a run its deadline needed 8 GPUs for
(fix145). Where that degree is more than what the throughput needs, the search also sizes ZeRO-3 with the levers
that move the unsharded memory to the host (:func:`edge_levers`), at fewer ranks than fit without them, and the
ranking weighs them against the wide layout by cost as it weighs any other; where the chosen layout still spreads past
:data:`EDGE_SPREAD` times what the throughput needs, :func:`spread_finding` says how much memory the narrow layout
misses and what fits it. Activation offload's copies over the host link are timed in the step
(:mod:`generator.sizing.training_offload`, acc127). The levers are tried where ZeRO-3 fits at no degree too, and both
at once where neither alone fits the throughput's degree (:func:`lever_pair`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from generator.named_tuple import NamedTuple
from generator.planner.plan import Finding
from generator.units import GIB
from generator.workload.models import TrainingDeployment, TrainingSpec
from generator.workload.value_checks import spec_conflicts

#: How many times the data-parallel degree the throughput needs (:func:`throughput_dp`) a layout may take for memory
#: alone before the levers are tried and the spread is warned about.
EDGE_SPREAD = 4

#: The job's settings that free the memory ZeRO-3 does not shard, as the workload writes them, in the order said:
#: the saved activations to host RAM (torchtune's ``enable_activation_offloading``, DeepSpeed's ``cpu_checkpointing``),
#: the parameters to host RAM (ZeRO-3's ``offload_param``, FSDP's ``CPUOffload``), and a loss that never holds the full
#: logits (Liger's or cut cross-entropy's fused kernel). The search tries the first two (:func:`edge_levers`): the loss
#: kernel is a library the user installs, said only.
SAID_LEVERS: tuple[dict[str, Any], ...] = ({"activation_offload": True}, {"offload_params": True}, {"loss": "fused"})


def throughput_dp(start: int, node_gpus: int, gpus_per_replica: int) -> int:
    """The data-parallel degree the throughput asks for: the deadline's (``start``), at least one node's worth of ranks."""
    return max(start, 1, node_gpus // max(gpus_per_replica, 1))


def spreads(memory_dp: int | None, wanted_dp: int) -> bool:
    """Whether the smallest degree memory fits at (None: none) is more than :data:`EDGE_SPREAD` x ``wanted_dp``."""
    return memory_dp is not None and memory_dp > EDGE_SPREAD * wanted_dp


def lever_said(lever: dict[str, Any]) -> str:
    """``activation_offload: true``, as the workload writes a lever."""
    return ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in lever.items())


def edge_levers(spec: TrainingSpec) -> list[tuple[str, TrainingSpec]]:
    """The jobs the search sizes at ZeRO-3 where memory spreads it: each lever the job leaves out and may take.

    Activation offload and parameter offload (the first two of :data:`SAID_LEVERS`), where the job does not set the
    field and its framework runs with it (:func:`~generator.workload.value_checks.spec_conflicts`); activation offload
    at full activation checkpointing only, where it moves each layer's input (its copies timed in the step:
    :attr:`~generator.sizing.training_step.StepTime.activation_offload_exposed_s`).
    """
    out: list[tuple[str, TrainingSpec]] = []
    for lever in SAID_LEVERS[:2]:
        field = next(iter(lever))
        if getattr(spec, field) is not None:
            continue  # the job's own setting
        if field == "activation_offload" and spec.checkpointing != "full":
            continue  # the layer inputs full recomputation keeps; every saved tensor offloaded is the job's own choice
        job = spec._replace(**lever)
        if not spec_conflicts(job):
            out.append((lever_said(lever), job))
    return out


def lever_pair(spec: TrainingSpec) -> tuple[str, TrainingSpec] | None:
    """Both levers of :func:`edge_levers` at once, where the job may take each (None: it may not take both).

    Tried where neither alone brings ZeRO-3 to the throughput's degree (acc127: a 70B QLoRA at 16,384 tokens on L40S
    fits at no degree without them, at DP46 with its activations offloaded, at DP8 with its parameters offloaded too).
    """
    if len(edge_levers(spec)) < 2:
        return None
    pair: dict[str, Any] = {**SAID_LEVERS[0], **SAID_LEVERS[1]}
    job = spec._replace(**pair)
    return None if spec_conflicts(job) else (lever_said(pair), job)


def lever_reason(lever: str, memory_dp: int | None, wanted_dp: int) -> str:
    """What a layout's reason says of the lever the search took (``, activation_offload: true (left out: tried ...)``).

    ``memory_dp``: the smallest degree ZeRO-3 fits at without it (None: none).
    """
    if memory_dp is None:
        return f", {lever} (left out: tried, as ZeRO-3 without it fits at no data-parallel degree)"
    return (
        f", {lever} (left out: tried, as ZeRO-3 without it fits only at DP{memory_dp:,} or more, "
        f"{memory_dp / wanted_dp:.0f} x the DP{wanted_dp} the throughput needs)"
    )


class Spread(NamedTuple):
    """A layout memory spread past what its throughput needs: the narrow degree's shortfall and what fits it."""

    #: The degree the throughput needs (:func:`throughput_dp`), the smallest memory fits at, and the ZeRO stage.
    wanted_dp: int
    memory_dp: int
    zero_stage: int
    #: Bytes a GPU holds at ``wanted_dp`` and the budget (the card less the safety margin).
    held_bytes: float
    budget_bytes: float
    #: The levers of :data:`SAID_LEVERS` that fit at ``wanted_dp``, as the workload writes them.
    fitting: tuple[str, ...]
    #: The lever the search took for the layout, as written ("" where none).
    lever: str = ""


def spread_of(
    spec: TrainingSpec,
    wanted_dp: int,
    memory_dp: int,
    zero: int,
    budget: float,
    held_at: Callable[[TrainingSpec, int], float],
    lever: str = "",
) -> Spread:
    """The :class:`Spread` of a layout at ZeRO-``zero``; ``held_at(job, dp)``: the bytes a GPU holds at that stage.

    ``held_at`` gives infinity for a job the stage does not run (parameter offload below ZeRO-3).
    """
    fitting = []
    for setting in SAID_LEVERS:
        field = next(iter(setting))
        job = spec._replace(**setting)
        if getattr(spec, field) in (None, "standard") and not spec_conflicts(job) and held_at(job, wanted_dp) <= budget:
            fitting.append(lever_said(setting))
    return Spread(wanted_dp, memory_dp, zero, held_at(spec, wanted_dp), budget, tuple(fitting), lever)


def spread_finding(index: int, dep: TrainingDeployment, spread: Spread, dp: int, gpu_id: str) -> Finding:
    """The warning of a planned job at ``dp`` on ``gpu_id`` whose memory, not its throughput, set that degree."""
    missing = spread.held_bytes - spread.budget_bytes
    if spread.fitting:
        fix = f"with {' or '.join(spread.fitting)} set in its training it fits at DP{spread.wanted_dp}"
    else:
        fix = "none of activation_offload, offload_params or a fused loss fits it there; allow a GPU with more memory"
    taken = f" with {spread.lever}" if spread.lever else ""
    text = (
        f"deployment {dep.name}: ZeRO-{spread.zero_stage}{taken} fits {gpu_id} only at DP{spread.memory_dp:,} or more, "
        f"and the plan takes DP{dp:,}, "
        f"{math.floor(dp / spread.wanted_dp)} x the DP{spread.wanted_dp} its throughput needs: at DP{spread.wanted_dp} a "
        f"GPU holds {spread.held_bytes / GIB:.2f} GiB, {missing / 2**20:,.0f} MiB over its {spread.budget_bytes / GIB:.2f} "
        "GiB, in what ZeRO does not shard (the saved activations, the gathered layers and root unit, the CUDA context), "
        f"which more ranks shrink only by the sharded rest; {fix}"
    )
    return Finding("warning", "training-memory-spread", text, f"deployments[{index}].training")
