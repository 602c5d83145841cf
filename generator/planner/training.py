"""Size a training deployment on one kind of hardware: parallelism, ZeRO stage, GPUs for the deadline."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.calculator.model_source import ResolvedModel
from generator.planner.options import Hardware, tensor_parallel_sizes
from generator.sizing.constants import Constants
from generator.sizing.performance import accelerator_for, gpus_for_deadline, training_flops_per_token, training_hours
from generator.sizing.training import TrainingMemory, TrainingSetup, size_training
from generator.sizing.training_mfu import training_utilisation
from generator.sizing.weights import Parallelism
from generator.units import GIB
from generator.workload.models import TrainingSpec

#: Largest data-parallel degree the planner considers.
MAX_DATA_PARALLEL = 4096
#: Deepest pipeline the planner considers (Llama 3 405B trained with 16 stages, arXiv:2407.21783 Table 4).
MAX_PIPELINE_STAGES = 16


@dataclass(frozen=True)
class TrainingShape:
    """A feasible training layout."""

    hardware: Hardware
    par: Parallelism
    setup: TrainingSetup
    memory: TrainingMemory
    world: int
    hours: float | None
    total_flops: float | None
    reason: str
    mfu: float = 0.0


def _setup(spec: TrainingSpec, zero: int, dp: int) -> TrainingSetup:
    return TrainingSetup(
        method=spec.method,
        optimizer=spec.optimizer,
        zero_stage=zero,
        data_parallel=dp,
        micro_batch_size=spec.micro_batch_size,
        sequence_length=spec.sequence_length,
        checkpointing=spec.gradient_checkpointing,
        flash_attention=spec.flash_attention,
        lora_rank=spec.lora_rank,
        lora_targets=spec.lora_target_modules,
        offload_optimizer=spec.offload_optimizer,
        framework=spec.framework,
        loss=spec.loss,
        activation_offload=spec.activation_offload,
        optimizer_in_backward=spec.optimizer_in_backward,
        fused_kernels=spec.fused_kernels,
    )


def pipeline_sizes(num_layers: int) -> list[int]:
    """Pipeline depths > 1 the planner tries: powers of two up to ``MAX_PIPELINE_STAGES`` that divide the layers."""
    return [pp for pp in (2, 4, 8, 16) if pp <= MAX_PIPELINE_STAGES and num_layers % pp == 0]


def layout_mfu(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    tp: int,
    consts: Constants,
    pp: int = 1,
) -> float:
    """Modelled MFU of a TP x PP layout on ``hw`` (model size, sequence, the TP link, the bubble)."""
    arch = model.architecture
    acc = accelerator_for(hw.gpu, "bf16", tp)
    return training_utilisation(
        arch.hidden_size,
        arch.num_layers,
        arch.flop_params,
        spec.sequence_length,
        consts,
        tp=tp,
        pp=pp,
        microbatches=consts.training_pipeline_microbatches,
        tp_link_gbps=acc.link_gb_per_s * 8,
        dense_tflops=acc.dense_tflops,
    ).mfu


def _fits(memory: TrainingMemory, budget: float) -> bool:
    return memory.per_gpu.total <= budget


def training_shapes(
    model: ResolvedModel, spec: TrainingSpec, hw: Hardware, consts: Constants
) -> tuple[list[TrainingShape], list[str]]:
    """Feasible (TP, ZeRO, DP) layouts on ``hw``; the smallest DP that fits and meets the deadline."""
    arch = model.architecture
    budget = hw.gpu.memory_bytes * (1 - consts.safety_margin_fraction)
    tflops = hw.gpu.tflops("bf16") or 0.0
    total_flops = None
    if spec.dataset_tokens:
        total_flops = training_flops_per_token(arch, spec.method, spec.gradient_checkpointing) * spec.dataset_tokens * spec.epochs
    zeros = (spec.zero_stage,) if spec.zero_stage is not None else (0, 1, 2, 3)
    shapes: list[TrainingShape] = []
    blocked: list[str] = []
    tps = tensor_parallel_sizes(hw, arch.num_attention_heads)
    layouts = [(tp, 1) for tp in tps]
    for tp, pp in layouts:
        par = Parallelism(tp, pp)
        mfu = layout_mfu(model, spec, hw, tp, consts, pp=pp)
        if total_flops and spec.deadline_hours and tflops:
            deadline_gpus = gpus_for_deadline(total_flops, spec.deadline_hours, tflops, consts, mfu=mfu)
        else:
            deadline_gpus = 1
        deadline_dp = math.ceil(deadline_gpus / (tp * pp))
        name = f"TP{tp}" + (f" PP{pp}" if pp > 1 else "")
        for zero in zeros:
            dp = _smallest_dp(model, spec, zero, par, budget, consts, start=deadline_dp)
            if dp is None:
                mem = size_training(arch, _setup(spec, zero, max(deadline_dp, 1)), par, consts)
                blocked.append(f"{name} ZeRO-{zero}: needs {mem.per_gpu.total / GIB:.1f} GiB per GPU of {budget / GIB:.1f} GiB")
                continue
            setup = _setup(spec, zero, dp)
            mem = size_training(arch, setup, par, consts)
            world = dp * tp * pp
            hours = training_hours(total_flops, world, tflops, consts, mfu=mfu) if total_flops and tflops else None
            reason = f"{name} ZeRO-{zero} x DP{dp}"
            shapes.append(TrainingShape(hw, par, setup, mem, world, hours, total_flops, reason, mfu))
        if not shapes and tps and tp == tps[-1] and pp == 1:
            # TP is capped by the node / NVLink domain and nothing fits: split the layers into pipeline stages
            layouts += [(tp, stages) for stages in pipeline_sizes(arch.num_layers)]
    return shapes, blocked


def _smallest_dp(
    arch_model: ResolvedModel, spec: TrainingSpec, zero: int, par: Parallelism, budget: float, consts: Constants, start: int
) -> int | None:
    """Smallest data-parallel degree >= ``start`` at which memory fits (more DP only helps with ZeRO)."""
    arch = arch_model.architecture
    dp = max(1, start)
    if _fits(size_training(arch, _setup(spec, zero, dp), par, consts), budget):
        return dp
    if zero == 0:
        return None
    high = MAX_DATA_PARALLEL
    if not _fits(size_training(arch, _setup(spec, zero, high), par, consts), budget):
        return None
    low = dp
    while low < high:
        mid = (low + high) // 2
        if _fits(size_training(arch, _setup(spec, zero, mid), par, consts), budget):
            high = mid
        else:
            low = mid + 1
    return low
