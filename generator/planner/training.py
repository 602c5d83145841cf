"""Size a training deployment on one kind of hardware: parallelism, ZeRO stage, GPUs for the deadline."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from generator.calculator.model_source import ResolvedModel
from generator.catalog import REFERENCE_GPU_ID, find_gpu
from generator.catalog.records import CpuSpec, GpuSpec, PlatformSpec
from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.planner.blocked import (
    BATCH_NOT_SPLIT,
    BATCH_SPLITS_TEXT,
    IN_BACKWARD_MOST_TEXT,
    MORE_RANKS_THAN_BATCH,
    NO_MICRO_BATCH,
)
from generator.planner.idle_degrees import IdleGpus
from generator.planner.memory_edge import (
    EDGE_SPREAD,
    Spread,
    edge_levers,
    lever_pair,
    lever_reason,
    spread_of,
    spreads,
    throughput_dp,
)
from generator.planner.nodes import node_cpu, node_dram_mt_per_s
from generator.planner.options import Hardware, tensor_parallel_sizes
from generator.planner.step_cache import MAX_SEARCHES, kept, step_spec
from generator.planner.training_comm import gpu_link_latency_s
from generator.sizing.architecture import Architecture
from generator.sizing.checkpoint_load import size_checkpoint_load, training_host_ram
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import nvlink_collectives
from generator.sizing.frameworks import (
    CHECKPOINTING_LEVELS,
    data_parallel_only,
    framework_profile,
    job_recipe,
    own_checkpointing_levels,
    resolved_regime,
)
from generator.sizing.memo import memoized
from generator.sizing.mma_issue_slack import step_compute_ceiling
from generator.sizing.nf4_dequant import dequant_bytes_per_micro_batch
from generator.sizing.performance import (
    accelerator_for,
    gpus_for_deadline,
    head_flops_per_token,
    training_attention_width,
    training_flops_per_token,
    training_hours,
)
from generator.sizing.precision import weight_format
from generator.sizing.training import (
    TrainingMemory,
    TrainingSetup,
    eager_elementwise_bytes_per_token,
    eager_kernels_per_micro_batch,
    framework_model_type,
    lora_traffic_bytes_per_token,
    runs_grouped_mm_experts,
    size_training,
    with_recipe,
)
from generator.sizing.training_conflicts import IN_BACKWARD_ACCUMULATION, OWN_OPTIMIZER_OFFLOAD, training_conflicts
from generator.sizing.training_hardware import precision_problem
from generator.sizing.training_mfu import (
    FP8_MFU_NOTE,
    attention_kernel_scale,
    attention_layer_equivalents,
    cudnn_attention_share,
    flash_attention_2_share,
    fp8_step_shape,
    training_utilisation,
)
from generator.sizing.training_moe import moe_step
from generator.sizing.training_offload import (
    NO_OFFLOAD,
    HostOffload,
    host_offload,
    offload_bytes,
    paged_migration_bytes,
    platform_cpu,
)
from generator.sizing.training_optimizer import gpu_optimizer_step_bytes
from generator.sizing.training_step import (
    NO_DP,
    DpTraffic,
    StepLayout,
    StepLinks,
    StepTime,
    hbm_seconds,
    model_flops_utilisation,
    nf4_dequant_seconds,
    training_step,
)
from generator.sizing.weights import Parallelism
from generator.units import GIB, HOURS_PER_MONTH
from generator.workload.models import ParallelismPin, TrainingSpec

#: Largest data-parallel degree the planner considers.
MAX_DATA_PARALLEL = 4096
#: Largest micro-batch the planner tries (the schema's micro_batch_size limit).
MAX_MICRO_BATCH = 4096
#: Deepest pipeline the planner considers (Llama 3 405B trained with 16 stages, arXiv:2407.21783 Table 4).
MAX_PIPELINE_STAGES = 16


@dataclass(frozen=True)
class NearTie:
    """A layout on the same servers a simpler one was kept over (``training_candidates._near_ties_settled``).

    Faster than the kept one, or short of headroom where the kept one is not.
    """

    shape: TrainingShape
    run_hours: float


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
    #: Micro-batches per optimizer step on each data-parallel rank (gradient accumulation steps).
    accumulation: int = 1
    #: The step's time by term; before node placement, without inter-node links.
    step: StepTime | None = None
    #: Model FLOPs per token (6N; 4N for adapters), what MFU counts.
    model_flops_per_token: float = 0.0
    #: FLOPs the step runs per token: the model's and what activation checkpointing recomputes.
    flops_per_token: float = 0.0
    #: The less simple layout on the same servers this one was kept over, where it nearly tied.
    near_tie: NearTie | None = None
    #: Where memory, not the throughput, set its data-parallel degree past :data:`~generator.planner.memory_edge.EDGE_SPREAD`
    #: times what the throughput needs: the narrow degree's shortfall and the levers that fit it (fix145).
    spread: Spread | None = None

    @property
    def layout(self) -> StepLayout:
        """The step layout of this shape."""
        return StepLayout(
            self.par.tp,
            self.par.pp,
            self.setup.data_parallel,
            self.setup.micro_batch_size,
            self.accumulation,
            self.setup.sequence_length,
            self.setup.checkpointing == "full",
        )

    @property
    def model_flops(self) -> float | None:
        """The job's model FLOPs, what MFU counts: ``total_flops`` less the forward passes checkpointing recomputes."""
        if self.total_flops is None or self.flops_per_token <= self.model_flops_per_token:
            return self.total_flops  # nothing recomputed (no float rounding of x * m / m)
        return self.total_flops * self.model_flops_per_token / self.flops_per_token

    @property
    def step_mfu(self) -> float:
        """Model FLOPs (6N per token, 4N for adapters) per second of the step over the GPUs' dense peak."""
        tflops = self.hardware.gpu.tflops("bf16") or 0.0
        if self.step is None:
            return self.mfu
        return model_flops_utilisation(self.step, self.layout, self.model_flops_per_token, tflops)

    @property
    def global_batch_size(self) -> int:
        """Sequences per optimizer step."""
        return self.setup.data_parallel * self.setup.micro_batch_size * self.accumulation


@memoized  # pure; the layout search asks for each setup about twelve times (speed103: 77,759 calls, 6,430 setups)
def _setup(
    arch: Architecture,
    spec: TrainingSpec,
    zero: int,
    dp: int,
    par: Parallelism,
    micro_batch: int | None = None,
    accumulation: int = 1,
    *,
    base_precision: str | None = None,
) -> TrainingSetup:
    """The job of ``spec`` at a stage, data parallelism and layout: the framework recipe's defaults where it sets none.

    The recipe follows the job's GPUs, ``dp`` x ``par``: torchtune's single-device full fine-tune on one (newuser25 item 3).
    ``base_precision``: the frozen base's format where it is not the method's own (the estimate's ``--precision``).
    """
    recipe = job_recipe(spec.framework, spec.method, dp * par.gpus, zero, bool(spec.offload_params))
    setup = TrainingSetup(
        method=spec.method,
        optimizer=resolved_regime(spec.framework, spec.optimizer, zero, dp, recipe)[0],
        zero_stage=zero,
        data_parallel=dp,
        micro_batch_size=micro_batch or _first_micro_batch(spec, dp),
        sequence_length=spec.sequence_length,
        checkpointing=spec.checkpointing,
        flash_attention=spec.flash_attention,
        lora_rank=spec.lora_rank,
        lora_dropout=spec.lora_dropout,
        lora_targets=spec.lora_target_modules,
        offload_optimizer=spec.offload_optimizer,
        offload_params=bool(spec.offload_params),
        framework=spec.framework,
        loss=spec.loss,
        activation_offload=spec.activation_offload,
        optimizer_in_backward=spec.optimizer_in_backward,
        fused_kernels=spec.fused_kernels,
        accumulation_steps=accumulation,
        base_precision=base_precision,
        model_type=framework_model_type(arch),
        compute_precision=spec.compute_precision,
    )
    return with_recipe(setup, recipe, optimizer_given=spec.optimizer is not None, paged=spec.paged_optimizer)


def _asks_in_backward(spec: TrainingSpec) -> bool:
    """Whether the job steps the optimizer in backward whatever its batch: its own field, else its framework's profile.

    A recipe's default (torchtune's single-device full fine-tune) gives way where the job accumulates
    (:func:`~generator.sizing.training.with_recipe`), so it never removes the accumulating batch splits.
    """
    if spec.optimizer_in_backward is not None:
        return spec.optimizer_in_backward
    return bool(spec.framework and framework_profile(spec.framework).optimizer_in_backward)


def _memory(arch: Architecture, setup: TrainingSetup, par: Parallelism, hw: Hardware, consts: Constants) -> TrainingMemory:
    """Per-GPU memory of ``setup`` on ``hw``: its distributed runtime's by whether the job's GPUs have NVLink peers."""
    gpu = hw.gpu
    nvlink = nvlink_collectives(gpu.interconnect_kind, gpu.nvlink_domain_gpus, setup.data_parallel * par.gpus)
    return size_training(arch, setup, par, consts, nvlink=nvlink)


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
        **_step_shape(arch, spec, hw.gpu, consts),
    ).mfu


def _step_shape(arch: Architecture, spec: TrainingSpec, gpu: GpuSpec, consts: Constants) -> dict[str, Any]:
    """What :func:`training_utilisation` sets the step's attention against on ``gpu``: its kernels and the GEMM FLOPs."""
    flops = training_flops_per_token(arch, spec.method, spec.checkpointing, spec.framework)
    return {
        "attention_scale": attention_kernel_scale(gpu.architecture),
        "attention_mfu": framework_attention_mfu(spec.framework, spec.flash_attention, gpu, arch.model_type),
        "gemm_flops_per_param": flops / max(1, arch.flop_params),
        "recompute": spec.checkpointing == "full",
        "operator_bytes_scale": operator_bytes_scale(gpu),
        "attention_layers": attention_layer_equivalents(
            arch, spec.sequence_length, spec.framework, spec.flash_attention, consts.training_masked_attention_rate
        ),
        "attention_width": training_attention_width(arch),  # heads x head_dim, not hidden (newuser70 item 1)
        # FP8 training: the decoder linears' GEMMs at the GPU's dense FP8 rate, the LM head's at bf16's, and the
        # framework's FP8 casts where it does not fuse them (attention, norms, optimizer unchanged)
        **fp8_step_shape(
            arch,
            spec.compute_precision,
            spec.framework is not None and framework_profile(spec.framework).fp8_casts_fused,
            gpu.tflops("fp8"),
            gpu.tflops("bf16"),
            flops,
            spec.micro_batch * spec.sequence_length,
            flops_per_byte(gpu),
            spec.method,
        ),
    }


def flops_per_byte(gpu: GpuSpec) -> float:
    """The GPU's sustained bf16 FLOPs per byte of HBM (0 where either rate is not published).

    What a memory-bound pass's bytes cost in FLOPs of the step's time.
    """
    tflops, bandwidth = gpu.sustained_tflops("bf16") or 0.0, gpu.sustained_bandwidth_gb_per_s
    return tflops * 1e12 / (bandwidth * 1e9) if tflops and bandwidth else 0.0


def operator_bytes_scale(gpu: GpuSpec) -> float:
    """The GPU's sustained FLOPs per byte of HBM over the reference GPU's (:data:`generator.catalog.REFERENCE_GPU_ID`).

    Both rates as the step runs them (:meth:`GpuSpec.sustained_tflops`, :meth:`GpuSpec.sustained_bandwidth_gb_per_s`):
    the step's memory-bound operators cost bytes at the HBM rate against GEMM FLOPs at the tensor rate
    (:func:`generator.sizing.training_mfu.training_utilisation`).
    """
    reference = find_gpu(REFERENCE_GPU_ID)
    own_tflops, own_bandwidth = gpu.sustained_tflops("bf16") or 0.0, gpu.sustained_bandwidth_gb_per_s
    base_tflops, base_bandwidth = reference.sustained_tflops("bf16") or 0.0, reference.sustained_bandwidth_gb_per_s
    if not (own_tflops and own_bandwidth and base_tflops and base_bandwidth):
        return 1.0  # a rate not published: the fitted term as it is
    return (own_tflops / own_bandwidth) / (base_tflops / base_bandwidth)


def _fits(memory: TrainingMemory, budget: float) -> bool:
    return memory.per_gpu.total <= budget


def _first_micro_batch(spec: TrainingSpec, dp: int) -> int:
    """The micro-batch memory is first sized at over ``dp`` ranks: the pinned one, else one sequence when the planner chooses.

    Where the optimizer steps inside backward a rank takes its whole share of the global batch in one micro-batch (no
    accumulation, fuzz20 item 1), so the data-parallel search sizes that share: a 70B torchtune job with a global batch
    of 64 was sized at one sequence on TP8 x DP1 and then refused 64 at once, where DP16 x 4 sequences fits.
    """
    searched = spec.global_batch_size is not None and not spec.micro_batch_pinned
    if searched and spec.optimizer_in_backward and spec.global_batch_size is not None:
        return max(1, math.ceil(spec.global_batch_size / dp))
    return 1 if searched else spec.micro_batch


def framework_attention_mfu(
    framework: str | None, flash_attention: bool, gpu: GpuSpec, model_type: str | None = None
) -> float | None:
    """The attention kernels' share of ``gpu``'s sustained rate under a framework that runs FlashAttention-2.

    FlashAttention-2's published share where the architecture has one (:func:`flash_attention_2_share`), or Megatron-LM's
    Transformer Engine cuDNN attention, the same algorithm (:func:`cudnn_attention_share`; not for ``model_type`` with
    attention sinks); None, the fitted rate, otherwise: no framework named, flash attention off, no published share.
    """
    if framework is None or not flash_attention:
        return None
    peak, sustained = gpu.tflops("bf16") or 0.0, gpu.sustained_tflops("bf16") or 0.0
    if not peak or not sustained:
        return None
    if not framework_profile(framework).flash_attention_2:
        return cudnn_attention_share(framework_profile(framework).name, gpu.architecture, peak / sustained, model_type)
    return flash_attention_2_share(gpu.architecture, peak / sustained)


def compute_efficiency(model: ResolvedModel, spec: TrainingSpec, consts: Constants, gpu: GpuSpec) -> float:
    """The step's compute ceiling on ``gpu`` before communication: large-GEMM MFU x GEMM size x attention share.

    The share is the method's own: a frozen base's backward skips the weights' gradients, not the attention's. On a
    GeForce card, :func:`generator.sizing.mma_issue_slack.step_compute_ceiling`. Kept for the process
    (:mod:`generator.planner.step_cache`): every layout of a job on one GPU asks it.
    """
    arch = model.architecture
    key = (id(arch), id(gpu), id(consts), step_spec(spec))
    return kept(_EFFICIENCIES, key, (arch, gpu, consts), lambda: _compute_efficiency(arch, spec, consts, gpu))


#: :func:`compute_efficiency`'s ceilings (:func:`~generator.planner.step_cache.kept`).
_EFFICIENCIES: dict[object, tuple[tuple[object, ...], float]] = {}


def _compute_efficiency(arch: Architecture, spec: TrainingSpec, consts: Constants, gpu: GpuSpec) -> float:
    """:func:`compute_efficiency`, formed."""
    util = training_utilisation(
        arch.hidden_size, arch.num_layers, arch.flop_params, spec.sequence_length, consts, **_step_shape(arch, spec, gpu, consts)
    )
    # a GeForce card's half-rate FP32-accumulate MMAs hide more of the work beside them (acc135)
    return step_compute_ceiling(util.compute, gpu)


def job_host_offload(
    arch: Architecture,
    setup: TrainingSetup,
    par: Parallelism,
    accumulation: int,
    hw: Hardware,
    host_gpus: int,
    consts: Constants,
    mem: TrainingMemory | None = None,
    node_host_ram: int = 0,
) -> HostOffload:
    """What ``setup``'s CPU offload moves per GPU and step, over ``hw``'s host link and its CPU's DRAM.

    ``host_gpus`` of the job's GPUs share one host (:mod:`generator.sizing.training_offload`); ``mem``: the layout's
    memory, whose paged optimizer states migrate each step where they do not all fit (newuser76 item 3, acc125), and
    whose host RAM sets the DIMMs the node is built with, whose speed the CPU optimizer step runs at
    (:func:`job_host_dram`); ``node_host_ram``: bytes of host RAM the node is built to hold where more than the job's
    own (a ``run_after`` chain's pool, built for its largest job: fix121).
    """
    paged = paged_migration_bytes(mem, hw.gpu) if mem is not None else 0.0
    activations = float(mem.offloaded_activation_bytes) if mem is not None else 0.0
    moved = offload_bytes(arch, setup, par, accumulation, paged, activations)
    if not moved.cpu_step_bytes:  # the host's memory times nothing but a CPU optimizer step
        cpu, sockets = platform_cpu(hw.platform)
        return host_offload(moved, hw.gpu, host_gpus, cpu, sockets, consts)
    # the node's host RAM as the build counts it: the job's GPUs on it, not more (_training_needs)
    held = min(host_gpus, max(1, setup.data_parallel) * par.tp * par.pp)
    cpu, sockets, mt_per_s = job_host_dram(arch, setup, mem, hw.platform, hw.gpu, host_gpus, consts, held, node_host_ram)
    return host_offload(moved, hw.gpu, host_gpus, cpu, sockets, consts, mt_per_s)


def job_host_dram(
    arch: Architecture,
    setup: TrainingSetup,
    mem: TrainingMemory | None,
    platform: PlatformSpec,
    gpu: GpuSpec,
    host_gpus: int,
    consts: Constants,
    held_gpus: int | None = None,
    node_host_ram: int = 0,
) -> tuple[CpuSpec | None, int, int | None]:
    """The CPU a node of ``platform`` with ``host_gpus`` GPUs is built with for the job, its sockets and its DIMMs' rate.

    As :func:`~generator.planner.nodes.assemble_node` builds it (newuser76 item 13): its CPU (a chassis that takes
    several, the one the planner chooses), and the DIMMs that hold what the job's ``held_gpus`` GPUs on it (None: all
    ``host_gpus``) keep in host memory (``mem``'s offloaded states, or the checkpoint as it loads, where more: the
    node's own host RAM need; ``node_host_ram`` where more: what the node is built to hold for another job of its
    pool) at the CPU's rating for that many a channel. None for the rate: no CPU known, the CPU step is timed at
    :data:`~generator.sizing.training_offload.UNKNOWN_HOST_DRAM_GB_PER_S`.
    """
    cpu = node_cpu(platform, gpu, host_gpus, consts)
    if cpu is None:
        return None, max(1, platform.cpu_sockets), None
    held = 0
    if mem is not None:
        load = size_checkpoint_load(arch, setup, consts)
        held, _ = training_host_ram(load, mem.host_ram_bytes_per_gpu, host_gpus if held_gpus is None else held_gpus)
    held = max(held, node_host_ram)
    return cpu, max(1, platform.cpu_sockets), node_dram_mt_per_s(platform, cpu, gpu, host_gpus, held, consts)


def node_free_step(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    layout: StepLayout,
    consts: Constants,
    host: HostOffload = NO_OFFLOAD,
    optimizer_bytes: float = 0.0,
) -> StepTime:
    """A step with every link inside the TP group's GPU link (before the layout is placed on nodes)."""
    gbps = accelerator_for(hw.gpu, "bf16", layout.tp).link_gb_per_s * 8
    latency = gpu_link_latency_s(hw.gpu, layout.tp, consts)
    links = StepLinks(
        tp_gbps=gbps,
        stage_gbps=gbps,
        dp_intra_gbps=0.0,
        tp_latency_s=latency,
        stage_latency_s=latency,
        dp_latency_s=latency,
    )
    return layout_step(model, spec, hw, layout, links, NO_DP, consts, host, optimizer_bytes)


def _dequant_bytes(arch: Architecture, spec: TrainingSpec, model_parallel: int, base_precision: str | None = None) -> float:
    """HBM bytes a GPU moves dequantizing the base each micro-batch: ``base_precision``, else its method's (nf4 for QLoRA)."""
    base = weight_format(TrainingSetup(method=spec.method, base_precision=base_precision).base_precision_name)
    return dequant_bytes_per_micro_batch(arch, base, spec.checkpointing, model_parallel)


def _adapter_bytes_per_token(arch: Architecture, spec: TrainingSpec, base_precision: str | None = None) -> float:
    """HBM bytes a token moves through PEFT's LoRA layers outside their matmuls: the job's regime and base decide."""
    return lora_traffic_bytes_per_token(arch, _setup(arch, spec, 0, 1, Parallelism(), base_precision=base_precision))


def _eager_bytes_per_token(arch: Architecture, spec: TrainingSpec) -> float:
    """HBM bytes a token moves through the layers' eager operators where the job's framework runs them unfused."""
    return eager_elementwise_bytes_per_token(arch, _setup(arch, spec, 0, 1, Parallelism()))


def _eager_kernels(arch: Architecture, spec: TrainingSpec) -> tuple[int, int]:
    """(forward, backward) kernels a micro-batch launches one at a time where the job's framework runs its layers eagerly."""
    return eager_kernels_per_micro_batch(arch, _setup(arch, spec, 0, 1, Parallelism()))


def _compute_share(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    model_parallel: int,
    mfu: float,
    consts: Constants,
    micro_batch: int,
) -> float:
    """Share of a micro-batch's time in compute beside the memory-bound passes that run in series with it.

    A QLoRA base's dequantization, PEFT's activation passes and the layers' eager operators; 1 where none runs.
    ``micro_batch`` sequences: the dequantization takes as long whatever the micro-batch's tokens.
    """
    arch = model.architecture
    tokens = micro_batch * spec.sequence_length
    dequant_bytes = _dequant_bytes(arch, spec, model_parallel)
    adapter_bytes = (_adapter_bytes_per_token(arch, spec) + _eager_bytes_per_token(arch, spec)) * tokens / model_parallel
    tflops = hw.gpu.sustained_tflops("bf16") or 0.0
    bandwidth = hw.gpu.sustained_bandwidth_gb_per_s
    if not (dequant_bytes or adapter_bytes) or not tflops or mfu <= 0 or bandwidth <= 0:
        return 1.0
    flops = training_flops_per_token(arch, spec.method, spec.checkpointing, spec.framework) * tokens
    compute_s = flops / (model_parallel * tflops * 1e12 * mfu)
    memory_s = nf4_dequant_seconds(dequant_bytes, bandwidth, consts) + hbm_seconds(adapter_bytes, bandwidth)
    return compute_s / (compute_s + memory_s)


def layout_step(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    layout: StepLayout,
    links: StepLinks,
    dp: DpTraffic,
    consts: Constants,
    host: HostOffload = NO_OFFLOAD,
    optimizer_bytes: float = 0.0,
) -> StepTime:
    """The step of ``layout`` over ``links``.

    ``host``: the job's CPU offload (:func:`job_host_offload`); ``optimizer_bytes``: its GPU optimizer step
    (:func:`generator.sizing.training_optimizer.gpu_optimizer_step_bytes`).
    """
    return gpu_step(model, spec, hw.gpu, layout, links, dp, consts, host=host, optimizer_bytes=optimizer_bytes)


def gpu_step(
    model: ResolvedModel,
    spec: TrainingSpec,
    gpu: GpuSpec,
    layout: StepLayout,
    links: StepLinks,
    dp: DpTraffic,
    consts: Constants,
    base_precision: str | None = None,
    host: HostOffload = NO_OFFLOAD,
    expert_parallel: int = 1,
    expert_dp: DpTraffic = NO_DP,
    optimizer_bytes: float = 0.0,
) -> StepTime:
    """The step of ``layout`` on ``gpu`` over ``links``, no server needed (what ``specgen estimate`` times).

    ``base_precision``: the frozen base's format where it is not the method's own (the estimate's ``--precision``);
    ``host``: the job's CPU offload, its copies and CPU optimizer step; ``expert_parallel``: the EP degree of an MoE
    model's routed experts, its groups carved out of the data-parallel ranks, so its all-to-alls cross their link;
    ``expert_dp``: their gradients' traffic over the expert-data-parallel group, apart from ``dp``
    (:func:`generator.planner.training_comm.job_dp_traffic_split`); ``optimizer_bytes``: the GPU's optimizer step
    (:func:`generator.sizing.training_optimizer.gpu_optimizer_step_bytes`).

    Kept for the process (:mod:`generator.planner.step_cache`): the search times one layout many times.
    """
    arch = model.architecture
    key = (id(arch), id(gpu), id(consts), step_spec(spec), layout, links, dp, base_precision, host, expert_parallel,
           expert_dp, optimizer_bytes)  # fmt: skip
    return kept(
        _STEPS,
        key,
        (arch, gpu, consts),
        lambda: _gpu_step(
            model, spec, gpu, layout, links, dp, consts, base_precision, host, expert_parallel, expert_dp, optimizer_bytes
        ),
    )


#: :func:`gpu_step`'s steps (:func:`~generator.planner.step_cache.kept`).
_STEPS: dict[object, tuple[tuple[object, ...], StepTime]] = {}


def _gpu_step(
    model: ResolvedModel,
    spec: TrainingSpec,
    gpu: GpuSpec,
    layout: StepLayout,
    links: StepLinks,
    dp: DpTraffic,
    consts: Constants,
    base_precision: str | None,
    host: HostOffload,
    expert_parallel: int,
    expert_dp: DpTraffic,
    optimizer_bytes: float,
) -> StepTime:
    """:func:`gpu_step`, formed."""
    arch = model.architecture
    moe = moe_step(
        arch,
        expert_parallel=expert_parallel,
        link_gbps=links.ep_gbps,
        latency_s=links.ep_latency_s,
        recompute=spec.checkpointing == "full",
        grouped_mm=runs_grouped_mm_experts(_setup(arch, spec, 0, 1, Parallelism())),
    )
    return training_step(
        layout,
        links,
        consts,
        hidden_size=arch.hidden_size,
        num_layers=arch.num_layers,
        flops_per_token=training_flops_per_token(arch, spec.method, spec.checkpointing, spec.framework),
        forward_flops_per_token=2.0 * arch.flop_params,
        base_efficiency=compute_efficiency(model, spec, consts, gpu),
        dense_tflops=accelerator_for(gpu, "bf16", layout.tp).dense_tflops,
        dp_traffic=dp,
        dequant_bytes_per_micro_batch=_dequant_bytes(arch, spec, layout.tp * layout.pp, base_precision),
        adapter_bytes_per_token=_adapter_bytes_per_token(arch, spec, base_precision),
        memory_gb_per_s=gpu.sustained_bandwidth_gb_per_s,
        host=host,
        moe=moe,
        expert_dp_traffic=expert_dp,
        optimizer_bytes=optimizer_bytes,
        elementwise_bytes_per_token=_eager_bytes_per_token(arch, spec),
        eager_kernels_per_micro_batch=_eager_kernels(arch, spec),
        head_flops_per_token=head_flops_per_token(arch, spec.method),
    )


def run_hours(dataset_tokens: int, epochs: float, layout: StepLayout, step: StepTime, consts: Constants) -> float:
    """Wall-clock hours of ``epochs`` passes over ``dataset_tokens``: the steps they take at ``step``'s time.

    Steps run only ``training_goodput`` of the wall clock (restarts after failures, checkpoints, evaluation).
    """
    steps = dataset_tokens * epochs / layout.tokens_per_step
    return steps * step.total_s / 3600 / consts.training_goodput


def _divisors(n: int) -> list[int]:
    """Divisors of ``n`` in ascending order (trial division up to its square root)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


class LayoutSearch(NamedTuple):
    """What the search of one TP x PP layout sizes each job and ZeRO stage against (:func:`_shapes_at`).

    The model, the hardware, the layout, the bytes a GPU may hold (the card less the safety margin) and the constants:
    one record passed to the search's steps in place of the five arguments each took.
    """

    model: ResolvedModel
    hw: Hardware
    par: Parallelism
    budget: float
    consts: Constants

    def smallest_dp(self, spec: TrainingSpec, zero: int, start: int) -> int | None:
        """:func:`_smallest_dp` of ``spec`` at ZeRO-``zero`` in this layout, from ``start`` ranks."""
        return _smallest_dp(self.model, spec, self.hw, zero, self.par, self.budget, self.consts, start=start)


def _batch_split(search: LayoutSearch, spec: TrainingSpec, zero: int, dp: int) -> tuple[int, int, StepTime] | str:
    """(micro-batch, accumulation, step) with the shortest step per token that fits, or why none does.

    Without ``global_batch_size`` each rank runs ``micro_batch_size`` once per step, and a
    pipeline is fed ``training_pipeline_microbatches``. With it, every micro-batch size that divides
    the rank's share of the batch (or the pinned one) is tried: fewer, larger micro-batches fill the
    GEMMs, more of them shrink a pipeline's bubble. Ties go to the larger micro-batch.

    Kept for the process (:mod:`generator.planner.step_cache`): each ZeRO stage's search and a chain's jobs alike ask
    the same splits.
    """
    model, hw, par, budget, consts = search
    arch = model.architecture
    key = (id(arch), id(hw), id(consts), par, budget, step_spec(spec), zero, dp)
    return kept(_SPLITS, key, (arch, hw, consts), lambda: _split_batch(search, spec, zero, dp))


#: :func:`_batch_split`'s splits (:func:`~generator.planner.step_cache.kept`).
_SPLITS: dict[object, tuple[tuple[object, ...], tuple[int, int, StepTime] | str]] = {}


def _split_batch(search: LayoutSearch, spec: TrainingSpec, zero: int, dp: int) -> tuple[int, int, StepTime] | str:
    """:func:`_batch_split`, formed."""
    model, hw, par, budget, consts = search
    arch = model.architecture
    gbs = spec.global_batch_size
    if gbs is None:
        accumulation = consts.training_pipeline_microbatches if par.pp > 1 else 1
        options = [(spec.micro_batch, accumulation)]
    else:
        per_rank = gbs // dp
        sizes = [spec.micro_batch] if spec.micro_batch_pinned else _divisors(per_rank)
        options = [(mb, per_rank // mb) for mb in sizes if per_rank % mb == 0]
        if not options:
            return (
                f"a global batch of {gbs} gives each of {dp} data-parallel ranks {per_rank} sequences, "
                f"not whole micro-batches of {spec.micro_batch}"
            )
    if _asks_in_backward(spec) and (accumulating := [a for _, a in options if a > 1]):
        # the optimizer steps inside backward: one micro-batch a step (fuzz20 item 1)
        options = [(mb, a) for mb, a in options if a == 1]
        if not options:
            return IN_BACKWARD_ACCUMULATION.format(steps=accumulating[0])
    best: tuple[float, int, int, StepTime] | None = None
    for mb, accumulation in options:
        if mb > MAX_MICRO_BATCH:
            break
        setup = _setup(arch, spec, zero, dp, par, mb, accumulation)
        mem = _memory(arch, setup, par, hw, consts)
        if not _fits(mem, budget):
            continue  # a larger micro-batch may still fit: accumulating fewer of them holds fewer gradients across them
        layout = StepLayout(par.tp, par.pp, dp, mb, accumulation, spec.sequence_length, setup.checkpointing == "full")
        # the CPU optimizer step is one a step: fewer, larger micro-batches spread it over more tokens
        host_gpus = min(layout.world, max(hw.platform.gpu_counts, default=1))
        host = job_host_offload(arch, setup, par, accumulation, hw, host_gpus, consts, mem)
        step = node_free_step(model, spec, hw, layout, consts, host, gpu_optimizer_step_bytes(arch, setup, par))
        per_token = step.total_s / layout.tokens_per_step
        if best is None or per_token < best[0] * (1 - 1e-9) or (per_token <= best[0] * (1 + 1e-9) and mb > best[1]):
            best = (per_token, mb, accumulation, step)
    if best is None:
        return f"{NO_MICRO_BATCH} {', '.join(str(mb) for mb, _ in options[:6])} sequence(s) fits"
    return best[1], best[2], best[3]


def _node_filling(dp: int, replica_gpus: int, hw: Hardware, gbs: int | None, timed: bool) -> list[int]:
    """``dp`` and, for a timed job, the data-parallel degrees that fill whole nodes of the platform.

    Servers are bought or rented whole; a job that would leave GPUs of its last node idle can run
    more replicas on them and finish sooner at the same price per hour. With a global batch only
    degrees that split it evenly qualify.
    """
    out = [dp]
    if not timed:
        return out
    for per_node in hw.platform.gpu_counts:
        replicas = per_node // replica_gpus
        if replicas < 1:
            continue
        filled = math.ceil(dp / replicas) * replicas
        if filled <= MAX_DATA_PARALLEL and (gbs is None or gbs % filled == 0) and filled not in out:
            out.append(filled)
    return sorted(out)


def _batch_dp(
    search: LayoutSearch, spec: TrainingSpec, zero: int, dp: int, splits: dict[int, tuple[int, int, StepTime] | str]
) -> int:
    """The smallest DP >= ``dp`` that splits the global batch into micro-batches that fit; ``dp`` where none does.

    ``dp`` fits memory at one micro-batch a step (:func:`_smallest_dp`); a global batch may have each of its ranks
    accumulate several, which holds the gradients across them. Wider degrees that split the batch evenly, up to
    :data:`MAX_DATA_PARALLEL`, give each rank fewer sequences; the first whose split fits is the job's (none: ``dp``
    stays, and its split says why). ``splits`` keeps each DP's batch split.
    """
    gbs = spec.global_batch_size
    if gbs is None:
        return dp
    for each_dp in (d for d in _divisors(gbs) if dp <= d <= MAX_DATA_PARALLEL):
        if each_dp not in splits:
            splits[each_dp] = _batch_split(search, spec, zero, each_dp)
        split = splits[each_dp]
        if not isinstance(split, str):
            return each_dp
        if _stage_refusal(spec, zero, search.par.pp, each_dp):
            break  # no framework runs the stage wider (a pipeline's, an accumulation-free one): its refusal says why
    return dp


def _data_parallel_for_batch(dp: int, gbs: int | None) -> int | None:
    """The smallest DP >= ``dp`` that splits the global batch evenly (None: the batch is too small)."""
    if gbs is None:
        return dp
    return next((d for d in _divisors(gbs) if d >= dp), None)


def training_tp_sizes(arch: Architecture, spec: TrainingSpec, hw: Hardware) -> list[int]:
    """TP degrees a training job may take on ``hw``: only 1 where it never splits a layer (its framework, or QLoRA)."""
    if data_parallel_only(spec.framework, spec.method):
        return [1]
    return tensor_parallel_sizes(hw, arch.num_attention_heads)


def run_window(spec: TrainingSpec, provider: str) -> tuple[float | None, str]:
    """The hours a run may take, and how a message names that limit (empty: no limit).

    Its ``deadline_hours``, or on servers bought or owned (one job at a time, paid by the month) the month shared by
    its ``runs_per_month``, whichever is shorter. Rented servers are paid per run; runs that overlap rent their own.
    """
    deadline = spec.deadline_hours
    runs = spec.runs_per_month if provider == "baremetal" else None
    share = HOURS_PER_MONTH / runs if runs else None
    if share is not None and (deadline is None or share < deadline):
        return share, f"the {share:.4g} h each of {runs:g} runs a month has on the same servers"
    return deadline, f"the {deadline:g} h deadline" if deadline else ""


Checkpointing = Literal["none", "selective", "full"]

#: Activation checkpointing levels the planner tries where a job leaves ``gradient_checkpointing`` out, least recompute
#: first. Megatron-LM recomputes nothing unless ``--recompute-granularity`` is given and Hugging Face's
#: ``gradient_checkpointing`` defaults to False (newuser35 item 6): full recomputation costs a third more FLOPs, and a
#: layout that holds the activations without it trains faster on the same GPUs. :data:`CHECKPOINTING_LEVELS`
#: (:mod:`generator.sizing.frameworks`, imported above) lists them, the estimate's search order too.


def sized_spec(spec: TrainingSpec, setup: TrainingSetup) -> TrainingSpec:
    """``spec`` at the activation checkpointing level ``setup`` is sized at (the one searched, or its own)."""
    level = next(lv for lv in CHECKPOINTING_LEVELS if lv == setup.checkpointing)
    return spec._replace(gradient_checkpointing=level)


def checkpointing_levels(spec: TrainingSpec) -> tuple[Checkpointing, ...]:
    """The activation checkpointing levels a job is sized at: its own, else every level its framework runs with it."""
    if spec.gradient_checkpointing is not None:
        return (spec.gradient_checkpointing,)
    own = own_checkpointing_levels(spec.framework)
    if own is not None:
        return own
    return tuple(
        level
        for level in CHECKPOINTING_LEVELS
        if not training_conflicts(
            method=spec.method,
            framework=spec.framework,
            activation_offload=spec.activation_offload,
            checkpointing=level,
        )
    ) or ("full",)


def training_shapes(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    consts: Constants,
    pin: ParallelismPin | None = None,
    owned_gpus: int = 0,
    idle: IdleGpus | None = None,
) -> tuple[list[TrainingShape], list[str]]:
    """Feasible layouts on ``hw`` (:func:`_shapes_at`) at each activation checkpointing level the job may take.

    ``idle``: a serving pool's idle GPUs the job is timed on (``training-fits-idle-gpus``): every degree they hold too.

    A level the job gives is the one sized; left out, each of :func:`checkpointing_levels` is, and the plan's ranking
    picks among them (on one cost, the faster run: the least recompute that fits). Why nothing fitted is said at the
    last level tried, full recomputation's, which holds the least.

    Kept for the process (:mod:`generator.planner.step_cache`): a ``run_after`` chain's jobs alike but for the job they
    run after share one search.
    """
    arch = model.architecture
    key = (id(arch), id(hw), id(consts), spec._replace(run_after=None), pin, owned_gpus, idle)
    shapes, blocked = kept(
        _SHAPES,
        key,
        (arch, hw, consts),
        lambda: _training_shapes(model, spec, hw, consts, pin, owned_gpus, idle),
        MAX_SEARCHES,
    )
    return list(shapes), list(blocked)


#: :func:`training_shapes`' layouts and reasons (:func:`~generator.planner.step_cache.kept`).
_SHAPES: dict[object, tuple[tuple[object, ...], tuple[tuple[TrainingShape, ...], tuple[str, ...]]]] = {}


def _training_shapes(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    consts: Constants,
    pin: ParallelismPin | None,
    owned_gpus: int,
    idle: IdleGpus | None,
) -> tuple[tuple[TrainingShape, ...], tuple[str, ...]]:
    """:func:`training_shapes`, formed."""
    shapes: list[TrainingShape] = []
    blocked: list[str] = []
    levels = checkpointing_levels(spec)
    for level in levels:
        found, why = _shapes_at(model, spec._replace(gradient_checkpointing=level), hw, consts, pin, owned_gpus, idle)
        if len(levels) > 1:
            named = "no" if level == "none" else level  # newuser45 item 11: "none activation checkpointing" read oddly
            found = [dataclasses.replace(s, reason=f"{s.reason}, {named} activation checkpointing (searched)") for s in found]
        shapes += found
        blocked += why
    return tuple(shapes), tuple(blocked)


def _shapes_at(
    model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    consts: Constants,
    pin: ParallelismPin | None = None,
    owned_gpus: int = 0,
    idle: IdleGpus | None = None,
) -> tuple[list[TrainingShape], list[str]]:
    """Feasible (TP, PP, ZeRO, DP, micro-batch) layouts on ``hw``; the smallest DP that fits and meets the deadline.

    A pinned TP or PP is the one tried (fuzz14 item 1: a pinned PP was tried only where nothing fitted without it);
    a pinned TP ``hw`` does not give leaves nothing to try (the caller says why). Parameter offload is sized where the
    job asks it (``offload_params: true``, ZeRO-3 only), and, where it leaves the field out, tried at ZeRO-3 on a server
    kind the workload owns (``owned_gpus`` of it) when ZeRO-3 without it does not fit that many GPUs (newuser22 item 4):
    what an owned box can run is worth a slower step; on bought servers more GPUs that need no offload are planned
    instead (the step time does not count its copies).
    """
    arch = model.architecture
    budget = hw.gpu.memory_bytes * (1 - consts.safety_margin_fraction)
    # the rate the step runs at (layout_step): the peak scaled by the GPU's measured share over the reference's
    tflops = hw.gpu.sustained_tflops("bf16") or 0.0
    flops = training_flops_per_token(arch, spec.method, spec.checkpointing, spec.framework)
    total_flops = flops * spec.dataset_tokens * spec.epochs if spec.dataset_tokens else None
    # the stage the workload or its framework shards to (FSDP2's fully_shard is ZeRO-3); else each is tried
    profile = framework_profile(spec.framework) if spec.framework else None
    # the regime its recipe trains in where it has one (review40 item 2: axolotl's bf16 model planned on a T4)
    recipe = job_recipe(spec.framework, spec.method, 1, spec.zero_stage or 0, bool(spec.offload_params))
    regime = resolved_regime(spec.framework, spec.optimizer, spec.zero_stage, 1, recipe)[0]
    framework = profile.name if profile else None
    if unfit := precision_problem(
        hw.gpu.id,
        hw.gpu.architecture,
        framework=framework,
        optimizer=regime,
        fp8_dense_tflops=hw.gpu.tflops("fp8"),
        compute_precision=spec.compute_precision,
    ):
        return [], [unfit]  # bf16 on a GPU without it (newuser22 item 8), as the estimate refuses it
    pinned = spec.zero_stage if spec.zero_stage is not None else profile.zero_stage if profile else None
    if spec.offload_params:
        pinned = 3  # parameter offload is ZeRO-3's (a stage given otherwise is refused at its field)
    # not beside paged states where the offload is FSDP's, which steps the optimizer on the CPU (review40 item 5)
    fsdp_offload = profile is not None and profile.fsdp_cpu_offload
    auto_offload = owned_gpus > 0 and spec.offload_params is None and not (spec.paged_optimizer and fsdp_offload)
    # optimizer offload over data parallelism is ZeRO-Offload (stage 1-3); on one GPU ZeRO-1 is planned as stage 0
    zeros = (pinned,) if pinned is not None else (1, 2, 3) if spec.offload_optimizer else (0, 1, 2, 3)
    shapes: list[TrainingShape] = []
    blocked: list[str] = []
    window, window_text = run_window(spec, hw.platform.provider)
    # a framework that scales by data parallelism only never splits a layer, nor does any QLoRA stack its 4-bit layers
    tps = [tp for tp in training_tp_sizes(arch, spec, hw) if pin is None or pin.tp in (None, tp)]
    layouts = [(tp, pin.pp if pin is not None and pin.pp else 1) for tp in tps]
    for tp, pp in layouts:
        par = Parallelism(tp, pp)
        search = LayoutSearch(model, hw, par, budget, consts)
        mfu = layout_mfu(model, spec, hw, tp, consts, pp=pp)
        # the deadline's GPU count at the compute's share of a micro-batch (a QLoRA step also dequantizes, PEFT's LoRA
        # layers pass over the activations); where the search picks the micro-batch under a global batch, from the
        # compute alone and, beside it, from one sequence a micro-batch (the largest dequantization share), so that a
        # later deadline never loses the layouts an earlier one found (fuzz19 item 1)
        searched = spec.global_batch_size is not None and not spec.micro_batch_pinned
        deadline_gpus = cautious_gpus = 1
        if total_flops and window and tflops:
            share = 1.0 if searched else _compute_share(model, spec, hw, tp * pp, mfu, consts, spec.micro_batch)
            deadline_gpus = gpus_for_deadline(total_flops, window, tflops, consts, mfu=mfu * share)
            if searched:
                cautious = mfu * _compute_share(model, spec, hw, tp * pp, mfu, consts, 1)
                cautious_gpus = gpus_for_deadline(total_flops, window, tflops, consts, mfu=cautious)
        deadline_dp = max(math.ceil(deadline_gpus / (tp * pp)), _unaccumulated_dp(spec))
        cautious_dp = math.ceil(cautious_gpus / (tp * pp))
        name = f"TP{tp}" + (f" PP{pp}" if pp > 1 else "")
        if deadline_dp > MAX_DATA_PARALLEL:
            blocked.append(
                f"{name}: {window_text} needs {deadline_gpus:,} GPUs at the modelled "
                f"{mfu:.0%} MFU{FP8_MFU_NOTE if spec.compute_precision == 'fp8' else ''} ({total_flops:.3g} FLOPs), "
                f"more than {MAX_DATA_PARALLEL:,} data-parallel replicas"
            )
            continue
        runnable = _runnable_zeros(spec, zeros, pp, max(deadline_dp, 1), name, blocked)
        jobs = _zero_jobs(search, spec, runnable, deadline_dp, auto_offload, owned_gpus)
        wanted = throughput_dp(deadline_dp, max(hw.platform.gpu_counts), tp * pp)
        memory_dp, levers = _edge_jobs(search, spec, runnable, deadline_dp, wanted, jobs)
        for zero, job, lever in [(z, j, "") for z, j in jobs] + levers:
            said = blocked if not lever else []  # a lever that does not fit is no reason the job was refused
            try:
                found = search.smallest_dp(job, zero, deadline_dp)
                dp = _data_parallel_for_batch(found, spec.global_batch_size) if found is not None else None
                if found is None:
                    mem = _memory(arch, _setup(arch, job, zero, max(deadline_dp, 1), par), par, hw, consts)
                    offloaded = " with the parameters offloaded" if job.offload_params else ""
                    said.append(
                        f"{name} ZeRO-{zero}: needs {mem.per_gpu.total / GIB:.1f} GiB per GPU{offloaded} "
                        f"of {budget / GIB:.1f} GiB"
                    )
                    continue
                if dp is None:
                    # newuser70 item 6: where the window set the ranks, say so (it read as a memory or batch problem alone)
                    # ("the 8 h deadline needs DP92, ...": DEADLINE_NEEDS, which the refusal's advice reads)
                    needed = f"{window_text} needs " if found == deadline_dp > 1 and window_text else ""
                    said.append(
                        f"{name} ZeRO-{zero}: {needed}DP{found}"
                        + (", " if needed else " is ")
                        + f"{MORE_RANKS_THAN_BATCH} of {spec.global_batch_size} sequences"
                    )
                    continue
                if owned_gpus and found * tp * pp <= owned_gpus < dp * tp * pp:
                    # hostile78 item 6: the owned GPUs hold the job, but the batch does not split over their ranks (it
                    # was refused as "no platform of this provider offers an allowed GPU": only wider layouts were said)
                    unsplit = _batch_unsplit(search, job, zero, found, dp)
                    said.append(f"{name} ZeRO-{zero} x DP{found}: {OWNED_LAYOUT} {unsplit}")
                elif dp > MAX_DATA_PARALLEL:
                    # hostile79 item 1: a prime batch of 65,537 took DP65537 (65,544 GPUs bought, 33.7 MW) where the
                    # deadline needed DP12: past the most ranks the planner considers, the batches that split are said
                    unsplit = _batch_unsplit(search, job, zero, found, dp)
                    said.append(f"{name} ZeRO-{zero} x DP{found}: {unsplit}")
                if dp > MAX_DATA_PARALLEL:
                    continue
                splits: dict[int, tuple[int, int, StepTime] | str] = {}
                # the smallest DP that fits was sized without accumulation; where the batch's accumulation is what breaks it,
                # the wider DPs that split the batch into fewer steps a rank are tried (newuser43 item 1: a 32B job at a
                # batch of 64 broke DP8 at 8 steps a rank and was refused, where DP16 over two servers fits at 4)
                narrow = dp
                dp = _batch_dp(search, job, zero, dp, splits)
                if owned_gpus and narrow * tp * pp <= owned_gpus < dp * tp * pp:
                    # newuser76 item 4: the layout the owned GPUs hold broke on the batch alone; said, not only the wider
                    # layouts the owned servers cannot give
                    held = _owned_batch_refusal(search, job, zero, narrow, splits)
                    said.append(f"{name} ZeRO-{zero} x DP{narrow}: {OWNED_LAYOUT} {held}")
                fillings = _node_filling(dp, tp * pp, hw, spec.global_batch_size, total_flops is not None)
                if total_flops and window:
                    # the estimate's MFU is not the step's: every smaller DP whose own step meets the window is tried too
                    # (newuser35 item 1: DP9 at 35.9% rounded to DP16 where DP8 at the step's 37.6% meets 260 h)
                    low = search.smallest_dp(job, zero, _unaccumulated_dp(spec)) or found
                    faster = _faster_dps(search, job, zero, (low, dp), window, splits)
                    fillings = sorted(
                        {*fillings, *(f for d in faster for f in _node_filling(d, tp * pp, hw, spec.global_batch_size, True))}
                    )
                gbs = spec.global_batch_size
                if cautious_dp > dp and (most := _data_parallel_for_batch(cautious_dp, gbs)):
                    between = [d for d in _divisors(gbs or most) if dp < d <= most]
                    fillings = sorted({*fillings, *(f for d in between for f in _node_filling(d, tp * pp, hw, gbs, True))})
                spread = _spread(search, job, zero, wanted, found, lever)
                if total_flops and window and dp * tp * pp > max(hw.platform.gpu_counts):
                    # the time between nodes is timed once placed, and may take the degree the compute sized past the
                    # window: the wider degrees up to twice it are tried too (newuser47 item 2: DP4 over two servers took
                    # 18.1 h of a 16 h deadline, and DP8, 6.3 h, was never tried; a later deadline lost a layout)
                    wider = [d for d in (_divisors(gbs) if gbs else [2 * dp]) if dp < d <= min(2 * dp, MAX_DATA_PARALLEL)]
                    fillings = sorted({*fillings, *(f for d in wider for f in _node_filling(d, tp * pp, hw, gbs, True))})
                if idle is not None:  # on a serving pool's idle GPUs: every degree they hold (fix178)
                    fillings = sorted({*fillings, *idle.degrees(tp * pp, dp, MAX_DATA_PARALLEL, gbs)})
                if lever and memory_dp is not None:  # the lever's layouts narrower than those that fit without it
                    fillings = [f for f in fillings if f < memory_dp]
                for each_dp in fillings:
                    if not lever and job.offload_params and spec.offload_params is None and each_dp * tp * pp > owned_gpus:
                        continue  # tried to bring the job onto the owned GPUs; beyond them it buys GPUs (fuzz19 item 2)
                    if why := _stage_refusal(job, zero, pp, each_dp):
                        said.append(f"{name} ZeRO-{zero} x DP{each_dp}: {why}")
                        continue
                    split = splits.get(each_dp) or _batch_split(search, job, zero, each_dp)
                    if isinstance(split, str):
                        said.append(f"{name} ZeRO-{zero} x DP{each_dp}: {split}")
                        continue
                    micro_batch, accumulation, step = split
                    # a framework's sharding over one data-parallel GPU shards nothing: it is ZeRO-0 there (as the estimate
                    # says), unless it offloads the parameters, which FSDP does on one GPU as well
                    # (newuser43 item 7: nor where it offloads the optimizer through ZeRO-Offload, stage 1-3 on one GPU too)
                    zero_offload = spec.offload_optimizer and framework not in OWN_OPTIMIZER_OFFLOAD
                    stage = zero if spec.zero_stage is not None or each_dp > 1 or job.offload_params or zero_offload else 0
                    setup = _setup(arch, job, stage, each_dp, par, micro_batch, accumulation)
                    mem = _memory(arch, setup, par, hw, consts)
                    world = each_dp * tp * pp
                    hours = training_hours(total_flops, world, tflops, consts, mfu=mfu) if total_flops and tflops else None
                    steps = "accumulation steps" if accumulation > 1 else "accumulation step"
                    reason = f"{name} ZeRO-{stage} x DP{each_dp}, micro-batch {micro_batch} x {accumulation} {steps}"
                    if lever:
                        reason += lever_reason(lever, memory_dp, wanted)
                    elif job.offload_params:
                        tried = " (offload_params left out: tried, as the owned GPUs hold the job only so)"
                        reason += ", parameters offloaded to host RAM" + ("" if spec.offload_params else tried)
                    model_flops = training_flops_per_token(arch, spec.method, "none")
                    shapes.append(
                        TrainingShape(
                            hw,
                            par,
                            setup,
                            mem,
                            world,
                            hours,
                            total_flops,
                            reason,
                            mfu,
                            accumulation,
                            step,
                            model_flops,
                            flops,
                            spread=spread if spread is not None and each_dp > EDGE_SPREAD * wanted else None,
                        )
                    )
            except InputError as err:
                if job is spec:
                    raise
                # a combination the search made, not one the workload wrote: a reason, never the plan's error (newuser76
                # item 15: the owned GPUs' parameter offload beside the recipe's paged optimizer ended the plan bare)
                tried = f"with {lever} (left out: tried, as memory spread the job)" if lever else OFFLOAD_TRIED
                said.append(f"{name} ZeRO-{zero} {tried}: {err}")
        unpinned = pin is None or pin.pp is None
        pipelines = not data_parallel_only(spec.framework, spec.method) and (not profile or profile.pipeline_parallel)
        if not shapes and unpinned and tp == tps[-1] and pp == 1 and pipelines:
            # TP is capped by the node / NVLink domain and nothing fits: split the layers into pipeline stages, where
            # the framework has a pipeline schedule
            layouts += [(tp, stages) for stages in pipeline_sizes(arch.num_layers)]
    return shapes, blocked


#: Most data-parallel degrees below the estimate's tried without a global batch (evenly spread between the fewest
#: that meet the window on their own step and the estimate's).
MAX_FASTER_DPS = 8


def _faster_dps(
    search: LayoutSearch,
    spec: TrainingSpec,
    zero: int,
    span: tuple[int, int],
    window: float,
    splits: dict[int, tuple[int, int, StepTime] | str],
) -> list[int]:
    """Data-parallel degrees in ``span`` = [fewest that fit memory, the estimate's) whose own step meets ``window``.

    The estimate's DP comes from the layout's modelled MFU (:func:`layout_mfu`), which the step of the micro-batch the
    search then picks may beat: a looser deadline must never cost more than a tighter one (newuser35 item 1). Each DP is
    timed by its node-free step (:func:`node_free_step`, no data-parallel traffic: a lower bound on the placed step's
    time), so one that misses the window here misses it placed on nodes too; those that meet it are candidates, and the
    placed step (``training_candidates``) keeps the ones that still do. With a global batch the divisors below the
    estimate are tried from the largest down, stopping at the first that misses (fewer ranks only take longer); without
    one the step does not depend on DP, so the fewest that meet it follow from one step, and at most
    :data:`MAX_FASTER_DPS` degrees from there to the estimate's are tried. ``splits`` keeps each DP's batch split.
    """
    low, estimate = span
    if low >= estimate or not spec.dataset_tokens:
        return []
    gbs = spec.global_batch_size

    def hours(dp: int) -> float | None:
        if dp not in splits:
            splits[dp] = _batch_split(search, spec, zero, dp)
        split = splits[dp]
        if isinstance(split, str):
            return None
        micro_batch, accumulation, step = split
        layout = StepLayout(search.par.tp, search.par.pp, dp, micro_batch, accumulation, spec.sequence_length)
        return run_hours(spec.dataset_tokens or 0, spec.epochs, layout, step, search.consts)

    out: list[int] = []
    if gbs is not None:
        for dp in reversed([d for d in _divisors(gbs) if low <= d < estimate]):
            took = hours(dp)
            if took is not None and took > window * (1 + 1e-9):
                break
            if took is not None:
                out.append(dp)
        return sorted(out)
    took = hours(estimate)
    if took is None:
        return []
    fewest = max(low, math.ceil(estimate * took / window * (1 - 1e-9)))
    if fewest >= estimate:
        return []
    count = estimate - fewest
    picks = (
        range(fewest, estimate)
        if count <= MAX_FASTER_DPS
        else (fewest + i * count // MAX_FASTER_DPS for i in range(MAX_FASTER_DPS))
    )
    return sorted(set(picks))


def _unaccumulated_dp(spec: TrainingSpec) -> int:
    """The fewest data-parallel ranks that split the global batch into pinned micro-batches without accumulating.

    Where the optimizer steps inside backward, which takes no accumulation (fuzz20 item 1: torchtune refuses it); 1
    otherwise.
    """
    if not spec.optimizer_in_backward or spec.global_batch_size is None or not spec.micro_batch_pinned:
        return 1
    return math.ceil(spec.global_batch_size / spec.micro_batch)


def _stage_refusal(spec: TrainingSpec, zero: int, pp: int, dp: int) -> str | None:
    """Why no framework runs ``spec`` at ZeRO-``zero`` with a ``pp``-stage pipeline over ``dp`` ranks; None: one does."""
    conflicts = training_conflicts(
        method=spec.method,
        framework=spec.framework,
        zero_stage=zero,
        data_parallel=dp,
        pipeline_parallel=pp,
        offload_optimizer=spec.offload_optimizer,
    )
    return conflicts[0][1] if conflicts else None


def _runnable_zeros(
    spec: TrainingSpec, zeros: tuple[int, ...], pp: int, dp: int, name: str, blocked: list[str]
) -> tuple[int, ...]:
    """The stages of ``zeros`` a framework runs with ``pp`` stages over ``dp`` ranks (ZeRO-2/3 never under a pipeline).

    A searched stage that cannot run is skipped (fuzz20 item 9: a 405B was chosen as TP4 x PP2 x DP16 at ZeRO-3); a
    pinned one is a reason in ``blocked``.
    """
    runnable = []
    for zero in zeros:
        why = _stage_refusal(spec, zero, pp, dp)
        if why is None:
            runnable.append(zero)
        elif len(zeros) == 1:
            blocked.append(f"{name} ZeRO-{zero}: {why}")
    return tuple(runnable)


#: How a reason of the layout the owned GPUs hold begins (:func:`_shapes_at`): the refusal says these ahead of the
#: wider layouts more servers would give.
OWNED_LAYOUT = "the layout the owned GPUs hold:"
#: How a reason says the optimizer stepped in backward is what holds the job, and takes no accumulation (its advice:
#: the global batch, or the optimizer's states and step on the CPU).
IN_BACKWARD_HOLDS = "fits only with the optimizer stepped in backward"


def _batch_unsplit(search: LayoutSearch, spec: TrainingSpec, zero: int, dp: int, wider: int) -> str:
    """Why ``dp`` ranks, which hold the job, do not take its global batch: it is no multiple of ``dp`` (hostile78 item 6).

    Every data-parallel rank runs the same micro-batches a step, so the batch is micro-batch x accumulation x ranks
    (DeepSpeed asserts ``train_batch_size == micro * gas * world_size``,
    https://www.deepspeed.ai/docs/config-json/#batch-size-related-parameters); the next degree that divides it,
    ``wider``, takes more GPUs than are owned, or more ranks than :data:`MAX_DATA_PARALLEL` (hostile79 item 1). The
    nearest multiples of ``dp`` below and above the batch whose split over ``dp`` ranks fits the GPUs' memory are said
    as the batches that plan on them.
    """
    gbs = spec.global_batch_size or 1
    below, above = gbs // dp * dp, -(-gbs // dp) * dp
    fitting = [
        v
        for v in dict.fromkeys((below, above))
        if v >= dp and not isinstance(_batch_split(search, spec._replace(global_batch_size=v), zero, dp), str)
    ]
    gpus = wider * search.par.gpus
    most = f", more than the {MAX_DATA_PARALLEL:,} data-parallel ranks the planner considers" if wider > MAX_DATA_PARALLEL else ""
    said = (
        f"the global batch of {gbs:,} sequences {BATCH_NOT_SPLIT} its {dp} data-parallel ranks (each runs the same "
        f"micro-batches a step; the next degree that divides it, DP{wider}, takes {gpus:,} GPUs{most})"
    )
    if fitting:
        said += "; " + BATCH_SPLITS_TEXT.format(values=" or ".join(f"{v:,}" for v in fitting))
    return said


def _owned_batch_refusal(
    search: LayoutSearch, spec: TrainingSpec, zero: int, dp: int, splits: dict[int, tuple[int, int, StepTime] | str]
) -> str:
    """Why ``dp`` ranks, which hold the job at one micro-batch a step, do not take its global batch (newuser76 item 4).

    Where the recipe's optimizer in backward (torchtune's single-device default) is what makes a micro-batch fit, the
    batch's accumulation turns it off (torchtune: "Gradient accumulation is not supported with optimizer in bwd"): the
    largest micro-batch that fits in backward sets the largest global batch the ranks take, said beside the split's own
    refusal (the micro-batches stepped after backward).
    """
    model, hw, par, budget, consts = search
    arch = model.architecture
    gbs = spec.global_batch_size or 1
    split = splits.get(dp) or _batch_split(search, spec, zero, dp)
    said = split if isinstance(split, str) else "its split does not fit"
    recipe = job_recipe(spec.framework, spec.method, dp * par.gpus, zero, bool(spec.offload_params))
    if recipe is None or not recipe.optimizer_in_backward or spec.optimizer_in_backward is not None:
        return said
    fitting = [
        (mb, mem)
        for mb in _divisors(max(1, gbs // dp))
        if mb <= MAX_MICRO_BATCH
        and _fits(mem := _memory(arch, _setup(arch, spec, zero, dp, par, mb, 1), par, hw, consts), budget)
    ]
    if not fitting:
        return said
    mb, mem = fitting[-1]
    return (
        f"micro-batch {mb} {IN_BACKWARD_HOLDS} ({mem.per_gpu.total / GIB:.1f} GiB of {budget / GIB:.1f} GiB), "
        f"{spec.framework}'s {recipe.name} default, which takes no accumulation (torchtune: 'Gradient accumulation is "
        f"not supported with optimizer in bwd'); the global batch of {gbs} needs {math.ceil(gbs / (dp * mb))} "
        f"accumulation steps of it over DP{dp}, and with the optimizer stepped after backward {said}; "
        + IN_BACKWARD_MOST_TEXT.format(most=dp * mb)
    )


#: How a reason names the job the search made by offloading the parameters on owned GPUs (:func:`_zero_jobs`).
OFFLOAD_TRIED = "with the parameters offloaded (offload_params left out: tried on the owned GPUs)"


def _zero_jobs(
    search: LayoutSearch, spec: TrainingSpec, zeros: tuple[int, ...], start: int, auto_offload: bool, owned_gpus: int
) -> list[tuple[int, TrainingSpec]]:
    """(ZeRO stage, job) pairs to size: each stage as given, and ZeRO-3 with the parameters offloaded where tried.

    Offload is tried (``auto_offload``) where ZeRO-3 without it fits no more than ``owned_gpus`` GPUs (or none at all).
    """
    out = [(zero, spec) for zero in zeros]
    if auto_offload and 3 in zeros:
        resident = search.smallest_dp(spec, 3, start)
        if resident is None or resident * search.par.gpus > owned_gpus:
            out.append((3, spec._replace(offload_params=True)))
    return out


def _edge_jobs(
    search: LayoutSearch,
    spec: TrainingSpec,
    zeros: tuple[int, ...],
    start: int,
    wanted: int,
    jobs: list[tuple[int, TrainingSpec]],
) -> tuple[int | None, list[tuple[int, TrainingSpec, str]]]:
    """ZeRO-3 with each lever that frees the memory it does not shard, where without them memory spreads the job.

    :mod:`~generator.planner.memory_edge`: where the smallest ZeRO-3 degree that fits (from the deadline's, ``start``)
    is more than the ``wanted`` degree, or where ZeRO-3 fits at no degree (acc127: what it does not shard is more than
    the card), and no other stage fits that (memory, not the throughput, sets it), the job's levers
    (:func:`~generator.planner.memory_edge.edge_levers`) are sized too, not where :func:`_zero_jobs` already tried the
    same offload; the ranking weighs them by cost against the wider layout (tried from the first degree memory sets,
    not only past :data:`~generator.planner.memory_edge.EDGE_SPREAD` x, so that more memory never plans more servers).
    That smallest degree (0 where memory does not set it, None where ZeRO-3 fits at none) and the (3, job, lever as
    written) triples.
    """
    if 3 not in zeros:
        return 0, []
    resident = search.smallest_dp(spec, 3, start)
    if resident is not None and resident <= wanted:
        return 0, []
    for zero, job in jobs:  # a stage that fits the throughput's degree as the job is given: memory does not set it
        if zero != 3 and (dp := search.smallest_dp(job, zero, start)) and dp <= wanted:
            return 0, []
    tried = {j.offload_params for z, j in jobs if z == 3}
    levers = [(3, job, lever) for lever, job in edge_levers(spec) if not (job.offload_params and True in tried)]
    alone = [job for _, job in edge_levers(spec)]
    if (pair := lever_pair(spec)) and all((search.smallest_dp(job, 3, start) or math.inf) > wanted for job in alone):
        # neither lever alone brings ZeRO-3 to the throughput's degree: both at once (acc127)
        levers.append((3, pair[1], pair[0]))
    return resident, levers


def _spread(search: LayoutSearch, spec: TrainingSpec, zero: int, wanted: int, memory_dp: int, lever: str) -> Spread | None:
    """Where ``memory_dp`` spreads the job past ``wanted`` (:func:`~generator.planner.memory_edge.spreads`), its shortfall."""
    if not spreads(memory_dp, wanted):
        return None
    model, hw, par, budget, consts = search
    arch = model.architecture

    def held(job: TrainingSpec, dp: int) -> float:
        try:
            return _memory(arch, _setup(arch, job, zero, dp, par), par, hw, consts).per_gpu.total
        except InputError:  # a setting the stage does not run (parameter offload below ZeRO-3): no fit
            return math.inf

    return spread_of(spec, wanted, memory_dp, zero, budget, held, lever)


@memoized  # pure; the search asks it again for the same job (_zero_jobs, _edge_jobs and each job's own degree)
def _smallest_dp(
    arch_model: ResolvedModel,
    spec: TrainingSpec,
    hw: Hardware,
    zero: int,
    par: Parallelism,
    budget: float,
    consts: Constants,
    start: int,
) -> int | None:
    """Smallest data-parallel degree >= ``start`` at which memory fits (more DP only helps with ZeRO)."""
    arch = arch_model.architecture
    dp = max(1, start)
    if _fits(_memory(arch, _setup(arch, spec, zero, dp, par), par, hw, consts), budget):
        return dp
    if zero == 0:
        return None
    high = MAX_DATA_PARALLEL
    if not _fits(_memory(arch, _setup(arch, spec, zero, high, par), par, hw, consts), budget):
        return None
    low = dp
    while low < high:
        mid = (low + high) // 2
        if _fits(_memory(arch, _setup(arch, spec, zero, mid, par), par, hw, consts), budget):
            high = mid
        else:
            low = mid + 1
    return low
