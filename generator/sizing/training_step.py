"""Time of one training optimizer step, split into compute and each communication term.

A step runs ``accumulation`` micro-batches of ``micro_batch_size`` sequences on each data-parallel
rank, then one gradient synchronisation. Per GPU and step (ring collectives move ``2 (n - 1) / n``
of the data for an all-reduce over ``n`` ranks):

- **compute**: the step's FLOPs at the large-GEMM ceiling (``training_mfu``) x GEMM size x the
  attention share (:mod:`generator.sizing.training_mfu`) x the micro-batch's GEMM fill
  ``tokens / (tokens + gemm_half_efficiency_tokens)`` (a micro-batch of few tokens runs GEMMs short);
- **NF4 dequantization** (QLoRA): each micro-batch turns the GPU's NF4 weights back into bf16 before every matmul
  that uses them (:mod:`generator.sizing.nf4_dequant`): its bytes at the GPU's memory bandwidth x
  ``nf4_dequant_bandwidth_efficiency``, in series with the compute and as long whatever the micro-batch's tokens;
- **eager operators**: where the framework runs a layer's norms, rotary embedding, gating and residual adds as eager
  PyTorch operators (:mod:`generator.sizing.training_elementwise`), each token's passes over the activations at the
  GPU's memory bandwidth, in series with the compute;
- **TP all-reduce**: four all-reduces of each token's hidden state per layer (Megatron: two
  forward, two backward; with sequence parallelism the same bytes as all-gather + reduce-scatter),
  over the GPU link of the TP group; ``training_tp_exposed_fraction`` of it is on the critical path;
- **PP activations**: each micro-batch sends its hidden state to the next stage and its gradient
  back (``2 x tokens x hidden x 2 bytes / tp`` per GPU, sequence-parallel sharded), over NVLink /
  PCIe inside a node and over the node's network (shared by its GPUs) across nodes; point-to-point
  sends sit between a stage's compute and the next stage's, so they count in full;
- **PP bubble**: a 1F1B pipeline idles ``pp - 1`` micro-batch slots per step (fewer when interleaved,
  ``training_pipeline_virtual_stages`` chunks, as many as split a stage's layers evenly);
- **PP slowest stage**: the stages run at the pace of the slowest, the last one, which runs the LM head beside its
  share of the decoder layers (:func:`~generator.sizing.pipeline_schedule.slowest_stage_factor`: Megatron-Core's even
  split where the layers divide over the stages, else the best placement in whole layers); the bubble's slots last the
  other stages' time, shorter (:func:`~generator.sizing.pipeline_schedule.bubble_compute_factor`);
- **DP / ZeRO**: the data-parallel bytes (gradient all-reduce, or ZeRO-3's reduce-scatter and two
  all-gathers) over the GPU link for ranks inside one node and over the node's network across
  nodes (a ring is as slow as its slowest hop); bucketed behind the backward pass, so only the part
  longer than the compute shows, except where the framework issues it on the compute stream (DeepSpeed ZeRO-1/2
  without ``overlap_comm``, :attr:`DpTraffic.in_series`): all of it shows.

Each collective also pays a fixed latency (``StepLinks.*_latency_s``, the all-reduce latency of the
GPU link: ``allreduce_latency_nvlink_s`` or ``allreduce_latency_pcie_s``) per call: TP all-reduces
``4 x layers per stage x micro-batches``, PP sends ``2 x micro-batches x interleaved chunks``
(forward activation and backward gradient at every chunk boundary), DP / ZeRO one per gradient
bucket of :data:`DDP_BUCKET_BYTES` and pass over the gradients (:class:`DpTraffic`).

- **mixture of experts** (:mod:`generator.sizing.training_moe`): the routed experts' share of the compute runs at the
  fill of their tokens per expert (and the busiest EP rank's load), not the micro-batch's; under expert parallelism
  four all-to-alls a MoE layer and micro-batch (dispatch and combine, forward and backward; six with full checkpointing)
  over the EP group's link, in series with the compute, each with the link's latency. The routed experts' gradients
  (each GPU's ``1 / ep`` of them) are reduced over their expert-data-parallel group, one rank an EP group, after the
  dense parameters' on the same links (``expert_dp_traffic``, :attr:`StepLinks.expert_dp_gbps`): an EP group that fills
  a node leaves each rank of that group its own NIC, where the dense gradients' ring has the whole node's.
- **host dispatch**: where the framework launches the layers' kernels eagerly, one at a time
  (:func:`generator.sizing.training_elementwise.kernels_per_micro_batch`), each costs the CPU
  ``eager_forward_kernel_host_s`` (forward, Python) or ``eager_backward_kernel_host_s`` (backward, autograd's engine);
  the CPU runs ahead of the GPU while its kernels are long, so only the launches' time beyond the GPU work they feed
  (compute, dequantization, adapters, eager operators) shows: a micro-batch's forward launches against its forward's GPU
  work, its backward's (a full recompute's forward among them) against the backward's and what the forward's left over,
  one stream synced once a micro-batch after the backward (:attr:`StepTime.host_exposed_s`);
- **optimizer step** (:mod:`generator.sizing.training_optimizer`): the GPU's optimizer update after the last micro-batch,
  each trainable parameter's gradient, weight and states (its ZeRO shard) read and written at the GPU's memory
  bandwidth, in series with the compute (none where the optimizer is offloaded to the CPU);
- **CPU offload** (:mod:`generator.sizing.training_offload`): the parameter shards' copies to the GPU before each
  gather and the gradient shards' copies back, over the GPU's host link, prefetched behind compute with the DP / ZeRO
  collectives they feed (only what outlasts the compute shows); the CPU optimizer step over the host's DRAM and
  ZeRO-Offload's copy of the updated parameters back after it, in series;
- **activation offload** (:mod:`generator.sizing.training_offload`): each layer's saved tensors copied to host RAM in
  the forward pass and back in the backward pass, over the GPU's host link, on a side stream: the copies out hide
  behind the forward phase's GPU work, the copies in behind the backward phase's, only what outlasts its phase shows;
  in full where the framework copies on the compute stream (DeepSpeed's ``cpu_checkpointing``).

Every argument is a plain number so the planner and the calibration report share this arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.sizing.constants import Constants
from generator.sizing.nf4_dequant import dequant_passes
from generator.sizing.performance import gemm_fill
from generator.sizing.pipeline_schedule import (
    bubble_compute_factor,
    pipeline_bubble_fraction,
    slowest_stage_factor,
    virtual_stages_for,
)
from generator.sizing.training_elementwise import BACKWARD_PASSES
from generator.sizing.training_moe import NO_MOE, MoeStep, alltoall_bytes, alltoall_calls, expert_compute_factor
from generator.sizing.training_offload import NO_OFFLOAD, HostOffload
from generator.units import MIB

#: Bytes per activation or activation-gradient element on a TP or PP wire (bf16).
WIRE_BYTES = 2
#: All-reduces of the hidden state per layer and token in a training step (2 forward + 2 backward).
TP_ALLREDUCES_PER_LAYER = 4
#: Those a fully recomputed layer runs again: its forward's two.
TP_RECOMPUTED_PER_LAYER = 2
#: Those of a layer's forward pass (the EP all-to-alls' dispatch and combine likewise).
TP_FORWARD_COLLECTIVES_PER_LAYER = 2
#: Bytes per gradient bucket, one DP collective each: PyTorch DDP's default ``bucket_cap_mb=25``
#: (https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html).
DDP_BUCKET_BYTES = 25 * MIB


@dataclass(frozen=True)
class StepLayout:
    """Parallel degrees and batch split of one training step."""

    tp: int
    pp: int
    dp: int
    micro_batch_size: int
    accumulation: int
    sequence_length: int
    #: Full activation checkpointing reruns each layer's forward, its TP collectives with it (newuser51 item 6).
    recompute: bool = False

    @property
    def tp_collectives_per_layer(self) -> int:
        """TP all-reduces (or their reduce-scatter / all-gather pairs) a layer runs a micro-batch."""
        return TP_ALLREDUCES_PER_LAYER + (TP_RECOMPUTED_PER_LAYER if self.recompute else 0)

    @property
    def tokens_per_rank(self) -> int:
        """Tokens one data-parallel rank processes per step."""
        return self.micro_batch_size * self.accumulation * self.sequence_length

    @property
    def tokens_per_step(self) -> int:
        """Tokens of the whole global batch."""
        return self.tokens_per_rank * self.dp

    @property
    def world(self) -> int:
        """GPUs of the job."""
        return self.tp * self.pp * self.dp


@dataclass(frozen=True)
class StepLinks:
    """Gb/s per GPU of each link a step uses (0 where the traffic does not exist)."""

    tp_gbps: float
    stage_gbps: float
    dp_intra_gbps: float = 0.0
    dp_inter_gbps: float = 0.0
    #: Pipeline stages sit on different nodes.
    stages_cross_nodes: bool = False
    #: Fixed seconds per collective (or point-to-point send) of each term.
    tp_latency_s: float = 0.0
    stage_latency_s: float = 0.0
    dp_latency_s: float = 0.0
    #: The EP all-to-alls' link (an MoE step's expert groups, carved out of the data-parallel ranks): Gb/s per GPU,
    #: fixed seconds per collective, and whether the group spans nodes (the fabric) rather than one node's GPU link.
    ep_gbps: float = 0.0
    ep_latency_s: float = 0.0
    ep_crosses_nodes: bool = False
    #: The routed experts' gradient link (the expert-data-parallel group, one rank an EP group): Gb/s per GPU, fixed
    #: seconds per collective, and whether its ranks sit on different nodes (0: no such group, EP 1 or EP = DP).
    expert_dp_gbps: float = 0.0
    expert_dp_latency_s: float = 0.0
    expert_dp_crosses_nodes: bool = False


#: Share of a micro-batch's compute in its backward pass where the forward's is not given: a full step's weight and
#: input gradients, twice the forward's FLOPs.
BACKWARD_SHARE = 2 / 3


@dataclass(frozen=True)
class DpTraffic:
    """What data parallelism moves per optimizer step: bytes each GPU sends, in how many collectives."""

    bytes_per_gpu: float = 0.0
    collectives: int = 0
    #: The traffic is one gradient pass after the last micro-batch (ZeRO 0-1), which overlaps that micro-batch's
    #: backward pass only; else it runs through every micro-batch (ZeRO 2-3 reduce and gather each one's).
    once_after_backward: bool = False
    #: The traffic runs on the compute stream, in series with the backward pass it is issued from, and hides behind
    #: nothing: DeepSpeed ZeRO-1/2 without ``overlap_comm`` (its default there, the one the rendered ds_config.json
    #: keeps) reduces each gradient bucket inline in the backward hook and gathers the updated weights after the
    #: optimizer step (:func:`generator.planner.training_comm.dp_traffic`).
    in_series: bool = False


#: No data parallelism (one replica).
NO_DP = DpTraffic()


@dataclass(frozen=True)
class StepTime:
    """Seconds of one optimizer step by term, and the bytes each GPU moves per term."""

    compute_s: float
    tp_allreduce_s: float
    pp_transfer_s: float
    pp_bubble_s: float
    dp_comm_s: float
    dp_inter_node_s: float
    tp_bytes: float
    pp_bytes: float
    dp_bytes: float
    #: The pipeline's stage-to-stage sends cross nodes.
    stages_cross_nodes: bool = False
    #: Seconds of fixed per-collective latency inside the TP, PP and DP terms above.
    latency_s: float = 0.0
    #: Seconds of a QLoRA step's NF4-to-bf16 dequantization (0 for any other base).
    dequant_s: float = 0.0
    #: HBM bytes each GPU moves per step dequantizing (0 for any other base).
    dequant_bytes: float = 0.0
    #: Seconds and HBM bytes per GPU of PEFT's LoRA layers outside their matmuls (:mod:`generator.sizing.peft_lora`).
    adapter_s: float = 0.0
    adapter_bytes: float = 0.0
    #: Seconds and HBM bytes per GPU of the layers' eager operators (:mod:`generator.sizing.training_elementwise`).
    elementwise_s: float = 0.0
    elementwise_bytes: float = 0.0
    #: Seconds the CPU spends launching the micro-batches' eager kernels (0: compiled or fused layers), and the kernels.
    host_dispatch_s: float = 0.0
    host_kernels: int = 0
    #: Of ``host_dispatch_s``, the launches of the micro-batches' backward phases (the backward's kernels and, under full
    #: checkpointing, the recomputed forward's), and of the busy time, the GPU work of their forward phases
    #: (:func:`training_step`): the CPU launches a micro-batch's backward only after its forward, so the forward's
    #: launches hide behind the forward's GPU work alone, the backward's behind what is left of both phases'
    #: (:attr:`host_exposed_s`).
    host_backward_dispatch_s: float = 0.0
    forward_busy_s: float = 0.0
    #: Seconds of the CPU offload's host-link copies that overlap compute (the busier direction).
    offload_link_s: float = 0.0
    #: Seconds of the CPU optimizer step and of the copy that follows the optimizer step (ZeRO-Offload's in, ZeRO-3
    #: ``offload_param``'s out), in series.
    cpu_optimizer_s: float = 0.0
    offload_after_step_s: float = 0.0
    #: The host DRAM rate the CPU optimizer step streams at, all the host's ranks together, GB/s (0: no CPU step): the
    #: DIMMs the host is built with, at ``ddr_bandwidth_efficiency`` (newuser76 item 13).
    cpu_dram_gb_per_s: float = 0.0
    #: Host-link bytes each GPU moves per step for its CPU offload (both directions).
    offload_bytes: float = 0.0
    #: Seconds and bytes (each direction) of the paged optimizer states migrated in and evicted again each step, in
    #: series with the step's compute, and the host-link rate (one direction) they are timed at, GB/s
    #: (:func:`~generator.sizing.training_offload.paged_migration_bytes`, newuser76 item 3).
    paged_s: float = 0.0
    paged_bytes: float = 0.0
    paged_link_gb_per_s: float = 0.0
    #: Seconds and bytes per GPU of activation offload's copies in one direction (out in the forward passes, the same
    #: back in the backward passes), and whether the framework runs them on the compute stream, in series with it
    #: (:mod:`generator.sizing.training_offload`; :attr:`activation_offload_exposed_s`).
    activation_offload_s: float = 0.0
    activation_offload_bytes: float = 0.0
    activation_offload_in_series: bool = False
    #: The GPU's optimizer step (:mod:`generator.sizing.training_optimizer`): its HBM bytes and their time, in series.
    optimizer_s: float = 0.0
    optimizer_bytes: float = 0.0
    #: Seconds and bytes per GPU of an MoE step's expert-parallel all-to-alls (in series with the compute).
    expert_alltoall_s: float = 0.0
    expert_alltoall_bytes: float = 0.0
    #: Seconds and bytes per GPU of the routed experts' gradient traffic over their expert-data-parallel group (inside
    #: ``dp_comm_s``, after the dense parameters' on the same links).
    expert_dp_s: float = 0.0
    expert_dp_bytes: float = 0.0
    expert_dp_crosses_nodes: bool = False
    #: Of the busy time, what the DP / ZeRO traffic can hide behind: all of it (None: ZeRO-2/3 and FSDP, whose per-layer
    #: all-gathers are prefetched ahead of the layer's forward and backward and whose reduce-scatters follow each
    #: layer's backward, so only what exceeds the busy time shows), or one gradient pass after the last micro-batch's
    #: backward pass (ZeRO 0-1: :func:`training_step`). No fixed share of the traffic is exposed below that line: half
    #: of it exposed makes every FSDP MFU group of the calibration worse (newuser70 item 3, benchmarks/CALIBRATION.md),
    #: whose runs are the measurement of how much of it hides.
    dp_overlap_s: float | None = None
    #: The DP / ZeRO traffic runs in series with the compute (:attr:`DpTraffic.in_series`), so all of it is exposed.
    dp_in_series: bool = False
    #: The pipeline schedule the bubble is timed with: model chunks a GPU runs (1: plain 1F1B; more: interleaved 1F1B,
    #: Megatron-LM's ``--num-layers-per-virtual-pipeline-stage``, off by default), the layers of each, and the bubble
    #: plain 1F1B would have on the same work (newuser70 item 4: the plan never said which schedule it timed).
    pipeline_virtual_stages: int = 1
    layers_per_virtual_stage: int = 0
    plain_pp_bubble_s: float = 0.0
    #: The pipeline's slowest stage's compute over the mean stage's (:func:`~generator.sizing.pipeline_schedule.
    #: slowest_stage_factor`: the last stage runs the LM head beside its layers), which ``compute_s`` is timed at.
    slowest_stage_factor: float = 1.0

    @property
    def _busy_s(self) -> float:
        return (
            self.compute_s + self.dequant_s + self.adapter_s + self.elementwise_s + self.tp_allreduce_s + self.expert_alltoall_s
        )

    @property
    def host_exposed_s(self) -> float:
        """Host dispatch time beyond the GPU work it launches: the GPU waits on the CPU for that long.

        One CPU launches a micro-batch's kernels in order onto one stream, the forward's then the backward's (the
        recompute's among them), and the HF Trainer syncs once a micro-batch, after its backward is launched:
        ``Trainer._inner_training_loop`` tests ``torch.isnan(tr_loss_step) or torch.isinf(tr_loss_step)``, a Python
        ``bool()`` of the GPU's loss, once ``training_step`` has run the backward (``logging_nan_inf_filter``, True by
        default; https://github.com/huggingface/transformers/blob/000945a9b726d87a93e61e873b88ff8f3cd411b5/src/transformers/trainer.py,
        review80 item 8). Nothing syncs between the forward and the backward, so the CPU launches the backward while the
        GPU still runs a GPU-bound forward. With launches ``L_f``, ``L_b`` and GPU work ``B_f``, ``B_b`` the stream ends
        at the latest of its own work (``B_f + B_b``), the forward's last launch and the backward's work after it
        (``L_f + B_b``) and the backward's last launch (``L_f + L_b``), one kernel aside, so the GPU idles
        ``max(0, L_f - B_f, L_f + L_b - B_f - B_b)``; phase by phase, ``max(0, L_f - B_f) + max(0, L_b - B_b)``
        overstated it where the forward is GPU-bound and the backward launch-bound, by ``min(B_f - L_f, L_b - B_b)``.
        The micro-batches of a step are alike and the form is linear in them, so the step's phases' totals give the
        step's exposure.
        """
        forward_launches = self.host_dispatch_s - self.host_backward_dispatch_s
        return max(0.0, forward_launches - self.forward_busy_s, self.host_dispatch_s - self._busy_s)

    @property
    def dp_exposed_s(self) -> float:
        """DP / ZeRO time not hidden behind the micro-batches' compute (and dequantization)."""
        return max(0.0, self.dp_comm_s - (self._busy_s if self.dp_overlap_s is None else self.dp_overlap_s))

    @property
    def offload_exposed_s(self) -> float:
        """The CPU offload's copies not hidden behind compute.

        A shard's copy-in comes before the gather it feeds, so the two share the compute they hide behind.
        """
        if not self.offload_link_s:
            return 0.0
        # never below none: a ZeRO 0-1 gradient pass may be exposed beyond what the copies and it leave of the busy time
        # together (review35 item 2: "-0.337 s exposed")
        return max(0.0, max(0.0, self.dp_comm_s + self.offload_link_s - self._busy_s) - self.dp_exposed_s)

    @property
    def activation_offload_exposed_s(self) -> float:
        """Activation offload's copies not hidden behind the GPU work of their phase.

        The copies out run beside the forward phases (:attr:`forward_busy_s`), the copies in beside the backward phases
        (the rest of the busy time, a full recompute's forward among it); on the compute stream both count in full.
        """
        if not self.activation_offload_s:
            return 0.0
        if self.activation_offload_in_series:
            return 2 * self.activation_offload_s
        backward_busy_s = self._busy_s - self.forward_busy_s
        return max(0.0, self.activation_offload_s - self.forward_busy_s) + max(0.0, self.activation_offload_s - backward_busy_s)

    @property
    def offload_s(self) -> float:
        """What CPU offload adds to the step: exposed copies, the CPU optimizer step and the copy after it."""
        return self.offload_exposed_s + self.cpu_optimizer_s + self.offload_after_step_s

    @property
    def total_s(self) -> float:
        """Wall-clock of one step."""
        return (
            self._busy_s
            + self.host_exposed_s
            + self.pp_transfer_s
            + self.pp_bubble_s
            + self.dp_exposed_s
            + self.offload_s
            + self.paged_s
            + self.activation_offload_exposed_s
            + self.optimizer_s
        )

    @property
    def inter_node_s(self) -> float:
        """Time of the traffic that crosses nodes (what a GPU fabric speeds up)."""
        return self.dp_inter_node_s + (self.pp_transfer_s if self.stages_cross_nodes else 0.0)

    @property
    def dominates(self) -> bool:
        """Inter-node communication takes longer than the step's compute."""
        return self.inter_node_s > self.compute_s

    def as_dict(self) -> dict[str, float]:
        """The split, rounded, for the plan."""
        return {
            "collective_latency_s": round(self.latency_s, 4),
            "compute_s": round(self.compute_s, 4),
            "dp_zero_comm_s": round(self.dp_comm_s, 4),
            "dp_zero_exposed_s": round(self.dp_exposed_s, 4),
            **({"expert_alltoall_s": round(self.expert_alltoall_s, 4)} if self.expert_alltoall_s else {}),
            **({"expert_dp_s": round(self.expert_dp_s, 4)} if self.expert_dp_s else {}),
            **({"nf4_dequant_s": round(self.dequant_s, 4)} if self.dequant_s else {}),
            **({"optimizer_step_s": round(self.optimizer_s, 4)} if self.optimizer_s else {}),
            **({"lora_adapter_traffic_s": round(self.adapter_s, 4)} if self.adapter_s else {}),
            **({"eager_elementwise_s": round(self.elementwise_s, 4)} if self.elementwise_s else {}),
            **({"host_dispatch_exposed_s": round(self.host_exposed_s, 4)} if self.host_exposed_s else {}),
            **({"paged_optimizer_migration_s": round(self.paged_s, 4)} if self.paged_s else {}),
            **(
                {
                    "activation_offload_copies_s": round(2 * self.activation_offload_s, 4),
                    "activation_offload_exposed_s": round(self.activation_offload_exposed_s, 4),
                }
                if self.activation_offload_s
                else {}
            ),
            **(
                {
                    "cpu_offload_s": round(self.offload_s, 4),
                    "cpu_optimizer_step_s": round(self.cpu_optimizer_s, 4),
                    "host_link_copies_s": round(self.offload_link_s + self.offload_after_step_s, 4),
                    "host_link_exposed_s": round(self.offload_exposed_s + self.offload_after_step_s, 4),
                }
                if self.offload_s or self.offload_link_s
                else {}
            ),
            "pp_bubble_s": round(self.pp_bubble_s, 4),
            "pp_transfer_s": round(self.pp_transfer_s, 4),
            "tp_allreduce_s": round(self.tp_allreduce_s, 4),
            "total_s": round(self.total_s, 4),
        }


def collectives_per_step(layout: StepLayout, num_layers: int, virtual_stages: int) -> tuple[int, int]:
    """(TP all-reduces, PP sends) one GPU issues per optimizer step."""
    tp = layout.tp_collectives_per_layer * math.ceil(num_layers / layout.pp) * layout.accumulation if layout.tp > 1 else 0
    pp = 2 * layout.accumulation * max(1, virtual_stages) if layout.pp > 1 else 0
    return tp, pp


def _seconds(nbytes: float, gbps: float) -> float:
    if nbytes <= 0:
        return 0.0
    return nbytes * 8 / (gbps * 1e9) if gbps > 0 else float("inf")


def training_step(
    layout: StepLayout,
    links: StepLinks,
    consts: Constants,
    *,
    hidden_size: int,
    num_layers: int,
    flops_per_token: float,
    base_efficiency: float,
    dense_tflops: float,
    dp_traffic: DpTraffic,
    dequant_bytes_per_micro_batch: float = 0.0,
    adapter_bytes_per_token: float = 0.0,
    memory_gb_per_s: float = 0.0,
    host: HostOffload = NO_OFFLOAD,
    moe: MoeStep = NO_MOE,
    forward_flops_per_token: float = 0.0,
    expert_dp_traffic: DpTraffic = NO_DP,
    optimizer_bytes: float = 0.0,
    elementwise_bytes_per_token: float = 0.0,
    eager_kernels_per_micro_batch: tuple[int, int] = (0, 0),
    head_flops_per_token: float = 0.0,
) -> StepTime:
    """One step of ``layout``: ``base_efficiency`` is the compute ceiling (MFU without communication).

    ``dequant_bytes_per_micro_batch``: HBM bytes one GPU moves per micro-batch dequantizing an NF4 base
    (:func:`generator.sizing.nf4_dequant.dequant_bytes_per_micro_batch`), at ``memory_gb_per_s``;
    ``adapter_bytes_per_token``: what PEFT's LoRA layers move a token outside their matmuls, whole model
    (:func:`generator.sizing.peft_lora.peft_traffic_bytes_per_token`), at the same rate. ``host``: what the job's CPU
    offload moves and at what rates (:mod:`generator.sizing.training_offload`). ``moe``: the model's routed experts,
    their EP degree and link (:func:`generator.sizing.training_moe.moe_step`; a dense model by default).
    ``forward_flops_per_token``: the forward pass's share of ``flops_per_token`` (2 N), which sets the backward pass's
    share a ZeRO 0-1 gradient pass hides behind (:data:`BACKWARD_SHARE` where not given). ``expert_dp_traffic``: an
    MoE step's routed-expert gradients (each GPU's ``1 / ep`` of them), reduced over the expert-data-parallel group at
    ``links.expert_dp_gbps`` after ``dp_traffic``'s dense parameters (:data:`NO_DP`: none, or carried in ``dp_traffic``).
    ``optimizer_bytes``: what the GPU's optimizer step moves through HBM once a step
    (:func:`generator.sizing.training_optimizer.gpu_optimizer_step_bytes`), at ``memory_gb_per_s``, in series.
    ``elementwise_bytes_per_token``: what the layers' eager operators move a token, whole model
    (:func:`generator.sizing.training.eager_elementwise_bytes_per_token`), at the same rate.
    ``eager_kernels_per_micro_batch``: the (forward, backward) kernels the framework launches one at a time a
    micro-batch (:func:`generator.sizing.training.eager_kernels_per_micro_batch`), at ``eager_forward_kernel_host_s``
    and ``eager_backward_kernel_host_s`` each.
    ``head_flops_per_token``: the output layer's share of ``flops_per_token`` (the LM head's GEMMs), which a pipeline's
    last stage runs beside its decoder layers: the stages' compute is timed at the slowest stage's
    (:func:`generator.sizing.pipeline_schedule.slowest_stage_factor`; 0: stages of equal work).
    """
    tokens = layout.tokens_per_rank
    micro_tokens = layout.micro_batch_size * layout.sequence_length
    fill = gemm_fill(micro_tokens, consts)  # a micro-batch of few tokens runs GEMMs short
    gpus_per_replica = layout.tp * layout.pp
    compute_s = flops_per_token * tokens / (gpus_per_replica * dense_tflops * 1e12 * base_efficiency * fill)
    compute_s *= expert_compute_factor(moe, micro_tokens, consts)
    # a pipeline runs at its slowest stage's pace: the last one runs the LM head beside its share of the layers
    slowest = slowest_stage_factor(num_layers, layout.pp, head_flops_per_token, flops_per_token)
    compute_s *= slowest
    # the micro-batches' EP all-to-alls: each stage's MoE layers, its tokens split by TP (sequence parallel)
    a2a_bytes = alltoall_bytes(moe, micro_tokens) * layout.accumulation / (layout.tp * layout.pp)
    a2a_calls = alltoall_calls(moe) * layout.accumulation
    a2a_s = _seconds(a2a_bytes, moe.link_gbps) + a2a_calls * moe.latency_s if a2a_bytes else 0.0
    dequant_bytes = dequant_bytes_per_micro_batch * layout.accumulation
    dequant_s = nf4_dequant_seconds(dequant_bytes, memory_gb_per_s, consts)
    adapter_bytes = adapter_bytes_per_token * tokens / gpus_per_replica
    adapter_s = hbm_seconds(adapter_bytes, memory_gb_per_s)
    elementwise_bytes = elementwise_bytes_per_token * tokens / gpus_per_replica
    elementwise_s = hbm_seconds(elementwise_bytes, memory_gb_per_s)
    tp_bytes = 0.0
    if layout.tp > 1:
        layers_per_stage = num_layers / layout.pp
        share = 2 * (layout.tp - 1) / layout.tp
        tp_bytes = tokens * layers_per_stage * layout.tp_collectives_per_layer * share * hidden_size * WIRE_BYTES
    virtual = virtual_stages_for(num_layers, layout.pp, consts.training_pipeline_virtual_stages, layout.accumulation)
    dp_bytes = dp_traffic.bytes_per_gpu if layout.dp > 1 else 0.0
    dp_calls = dp_traffic.collectives if layout.dp > 1 else 0
    tp_calls, pp_calls = collectives_per_step(layout, num_layers, virtual)
    tp_latency_s = consts.training_tp_exposed_fraction * tp_calls * links.tp_latency_s
    tp_s = consts.training_tp_exposed_fraction * _seconds(tp_bytes, links.tp_gbps) + tp_latency_s
    pp_bytes = 2 * tokens * hidden_size * WIRE_BYTES / layout.tp if layout.pp > 1 else 0.0
    pp_s = _seconds(pp_bytes, links.stage_gbps) + pp_calls * links.stage_latency_s
    bubble = pipeline_bubble_fraction(layout.pp, layout.accumulation, virtual)
    # what a bubble slot lasts: the other stages' time a micro-batch, not the slowest's (review79 item 5)
    staged_s = compute_s * bubble_compute_factor(layout.pp, slowest) + dequant_s + adapter_s + elementwise_s + tp_s + pp_s + a2a_s
    bubble_s = staged_s * bubble / (1 - bubble)
    plain = pipeline_bubble_fraction(layout.pp, layout.accumulation)
    plain_bubble_s = staged_s * plain / (1 - plain)
    dp_latency_s = dp_calls * links.dp_latency_s
    # ZeRO 0-1 reduce the gradients once, bucket by bucket as the last micro-batch's backward pass makes them
    # (newuser51 item 3: every micro-batch's compute was counted as hiding them)
    busy_s = compute_s + dequant_s + adapter_s + elementwise_s + tp_s + a2a_s
    # the backward pass's share: 2/3 of a full step, 1/2 of LoRA's (no weight gradients of the base), 3/4 with full
    # recomputation, which reruns the forward inside it (review35 item 7)
    backward = 1.0 - forward_flops_per_token / flops_per_token if forward_flops_per_token else BACKWARD_SHARE
    forward_s = forward_phase_busy_seconds(
        layout.recompute,
        1.0 - backward,
        compute_s=compute_s,
        collectives_s=tp_s + a2a_s,
        memory_s=elementwise_s + adapter_s,
        dequant_s=dequant_s,
    )
    overlap_s = busy_s / layout.accumulation * backward if dp_traffic.once_after_backward else None
    if dp_traffic.in_series:  # reduced on the compute stream (DeepSpeed ZeRO-1/2 without overlap_comm): none hidden
        overlap_s = 0.0
    intra_s = _seconds(dp_bytes, links.dp_intra_gbps) + dp_latency_s if links.dp_intra_gbps else 0.0
    inter_s = _seconds(dp_bytes, links.dp_inter_gbps) + dp_latency_s if links.dp_inter_gbps else 0.0
    # the routed experts' gradients over their own group, after the dense ones on the same links (one DP stream)
    expert_dp_bytes = expert_dp_traffic.bytes_per_gpu if links.expert_dp_gbps else 0.0
    expert_dp_s = 0.0
    if expert_dp_bytes:
        expert_dp_s = _seconds(expert_dp_bytes, links.expert_dp_gbps)
        expert_dp_s += expert_dp_traffic.collectives * links.expert_dp_latency_s
    return StepTime(
        compute_s=compute_s,
        tp_allreduce_s=tp_s,
        pp_transfer_s=pp_s,
        pp_bubble_s=bubble_s,
        dp_comm_s=max(intra_s, inter_s) + expert_dp_s,
        dp_overlap_s=overlap_s,
        dp_in_series=dp_traffic.in_series and bool(dp_bytes),
        dp_inter_node_s=inter_s + (expert_dp_s if links.expert_dp_crosses_nodes else 0.0),
        tp_bytes=tp_bytes,
        pp_bytes=pp_bytes,
        dp_bytes=dp_bytes,
        stages_cross_nodes=links.stages_cross_nodes,
        latency_s=tp_latency_s
        + pp_calls * links.stage_latency_s
        + (dp_latency_s if intra_s or inter_s else 0.0)
        + (a2a_calls * moe.latency_s if a2a_s else 0.0)
        + (expert_dp_traffic.collectives * links.expert_dp_latency_s if expert_dp_s else 0.0),
        dequant_s=dequant_s,
        dequant_bytes=dequant_bytes,
        adapter_s=adapter_s,
        adapter_bytes=adapter_bytes,
        elementwise_s=elementwise_s,
        elementwise_bytes=elementwise_bytes,
        host_dispatch_s=host_dispatch_seconds(eager_kernels_per_micro_batch, consts) * layout.accumulation,
        host_backward_dispatch_s=backward_phase_dispatch_seconds(eager_kernels_per_micro_batch, layout.recompute, consts)
        * layout.accumulation,
        forward_busy_s=forward_s,
        host_kernels=sum(eager_kernels_per_micro_batch) * layout.accumulation,
        offload_link_s=host.link_s,
        cpu_optimizer_s=host.cpu_step_s,
        cpu_dram_gb_per_s=host.host_dram_gb_per_s if host.cpu_step_s else 0.0,
        offload_after_step_s=host.after_step_s,
        offload_bytes=host.bytes.link_bytes,
        paged_s=host.paged_s,
        paged_bytes=host.bytes.paged_bytes,
        paged_link_gb_per_s=host.link_gb_per_s if host.paged_s else 0.0,
        activation_offload_s=host.activation_s,
        activation_offload_bytes=host.bytes.activation_bytes,
        activation_offload_in_series=host.bytes.activations_in_series,
        optimizer_s=hbm_seconds(optimizer_bytes, memory_gb_per_s),
        optimizer_bytes=optimizer_bytes,
        expert_alltoall_s=a2a_s,
        expert_alltoall_bytes=a2a_bytes,
        expert_dp_s=expert_dp_s,
        expert_dp_bytes=expert_dp_bytes,
        expert_dp_crosses_nodes=links.expert_dp_crosses_nodes and bool(expert_dp_s),
        pipeline_virtual_stages=virtual if layout.pp > 1 else 1,
        layers_per_virtual_stage=num_layers // (layout.pp * virtual) if layout.pp > 1 else 0,
        plain_pp_bubble_s=plain_bubble_s,
        slowest_stage_factor=slowest,
    )


def host_dispatch_seconds(kernels: tuple[int, int], consts: Constants) -> float:
    """CPU seconds to launch a micro-batch's (forward, backward) eager kernels one at a time."""
    forward, backward = kernels
    return forward * consts.eager_forward_kernel_host_s + backward * consts.eager_backward_kernel_host_s


def backward_phase_dispatch_seconds(kernels: tuple[int, int], recompute: bool, consts: Constants) -> float:
    """CPU seconds of a micro-batch's launches in its backward phase.

    The backward's kernels and, under full activation checkpointing, the recomputed forward's (the second half of
    ``kernels[0]``, launched by Python at the forward's rate inside the backward,
    :func:`generator.sizing.training_elementwise.kernels_per_micro_batch`).
    """
    forward, backward = kernels
    recomputed = forward // 2 if recompute else 0
    return recomputed * consts.eager_forward_kernel_host_s + backward * consts.eager_backward_kernel_host_s


def forward_phase_busy_seconds(
    recompute: bool, forward_share: float, *, compute_s: float, collectives_s: float, memory_s: float, dequant_s: float
) -> float:
    """The GPU work of the micro-batches' forward phases (the plain forward: a recompute runs in the backward phase).

    ``forward_share``: the forward's FLOPs over the step's (2 of 6 for full fine-tuning, 2 of 4 over a frozen base, one
    unit more in the backward with full recomputation). The collectives: 2 of a layer's 4 TP all-reduces and EP
    all-to-alls (of 6 with recomputation). The eager operators' and PEFT's bytes: one forward pass of
    ``1 + BACKWARD_PASSES`` (one more recomputed; PEFT's own backward moves about as much as its forward, so its share
    is taken a little low). NF4 dequantization: the forward's one of 2 (3 with the recompute).
    """
    recomputed = 1 if recompute else 0
    return (
        compute_s * forward_share
        + collectives_s * TP_FORWARD_COLLECTIVES_PER_LAYER / (TP_ALLREDUCES_PER_LAYER + TP_RECOMPUTED_PER_LAYER * recomputed)
        + memory_s / (1 + BACKWARD_PASSES + recomputed)
        + dequant_s / dequant_passes("full" if recompute else "none")
    )


def nf4_dequant_seconds(dequant_bytes: float, memory_gb_per_s: float, consts: Constants) -> float:
    """Seconds to move ``dequant_bytes`` of NF4 dequantization traffic at the GPU's bandwidth x the fitted efficiency."""
    if dequant_bytes <= 0:
        return 0.0
    if memory_gb_per_s <= 0:
        return float("inf")
    return dequant_bytes / (memory_gb_per_s * 1e9 * consts.nf4_dequant_bandwidth_efficiency)


def hbm_seconds(nbytes: float, memory_gb_per_s: float) -> float:
    """Seconds to move ``nbytes`` through HBM at ``memory_gb_per_s`` (a sustained, measured rate)."""
    if nbytes <= 0:
        return 0.0
    return nbytes / (memory_gb_per_s * 1e9) if memory_gb_per_s > 0 else float("inf")


def model_flops_utilisation(step: StepTime, layout: StepLayout, model_flops_per_token: float, dense_tflops: float) -> float:
    """Model FLOPs per second over the dense peak of the step's GPUs."""
    if step.total_s <= 0 or dense_tflops <= 0:
        return 0.0
    return model_flops_per_token * layout.tokens_per_step / (step.total_s * layout.world * dense_tflops * 1e12)
