"""What a training step's CPU offload moves over the host link and through host memory, per GPU and optimizer step.

Parameter offload (FSDP's ``CPUOffload(offload_params=True)`` / FSDP2's ``CPUOffloadPolicy``, DeepSpeed ZeRO-3's
``offload_param``) keeps each GPU's parameter shard in host RAM: "Sharded parameters are copied host-to-device before
all-gather. The all-gathered parameters are freed according to ``reshard_after_forward``. Sharded gradients are copied
device-to-host in backward, and the optimizer step runs on CPU with CPU optimizer states"
(https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html, ``CPUOffloadPolicy``). Each rank copies its
own shard, then all-gathers over the GPU link (already the DP / ZeRO term), so per micro-batch a GPU copies its shard
in twice: for the forward's gather and again for the backward's, as the forward's gathered parameters were freed
(``reshard_after_forward``, FSDP's full sharding); activation checkpointing recomputes the forward inside that
backward gather. Its gradient shard goes out once per micro-batch, as backward reduce-scatters it.

Optimizer offload without parameter offload (DeepSpeed's ZeRO-Offload, ``offload_optimizer``) copies the gradient
shard out the same way, steps the optimizer on the CPU, then copies the updated parameter shard back to the GPU.

Parameter offload without optimizer offload (DeepSpeed ZeRO-3's ``offload_param`` alone) is the other way round: the
16-bit parameter partition lives in pinned host memory (``param_groups_fp16_flat_cpu_memory``, built by
``_create_fp16_partitions_with_defragmentation`` where ``offload_param`` is set) while the fp32 partition and the
optimizer stay on the GPU; after each sub-group's step, ``_reassign_or_swap_out_partitioned_parameters`` copies the
updated fp32 partition into that 16-bit host partition (``fp16_partitioned_groups_flat[i].data.copy_(
fp32_partitioned_groups_flat[i].data)``, deepspeed/runtime/zero/stage3.py, https://github.com/deepspeedai/DeepSpeed/blob/master/deepspeed/runtime/zero/stage3.py):
the GPU's shard at the working weights' bytes, device to host, once a step (review 27 item 6: 70.55e9 x 2 / 8 =
17.6 GB for 70B over 8 A100s, 0.70 s at 25.2 GB/s, had been left out). No gradient leaves the GPU.

Overlap, as the frameworks run them: FSDP issues the copy-in on its all-gather stream and prefetches the next unit
while the current one computes (pinned memory "allows ... for the copies to overlap with compute", the same page), and
the gradient copies ride the reduce-scatter stream behind backward: these copies count only where they, with the DP
collectives they feed, last longer than the compute. The CPU optimizer step runs after backward, while the GPU waits,
and ZeRO-Offload's copy of the updated parameters back follows it: both count in full, as does ``offload_param``'s
copy of the updated partition out to the host, which follows the GPU's optimizer step before the next forward.

The CPU step reads each trainable parameter's gradient and reads and writes its weight and optimizer states (the
regime's bytes: :data:`~generator.sizing.training.OPTIMIZERS`): a streaming kernel (PyTorch's fused / foreach AdamW on
CPU tensors, DeepSpeed's CPU Adam) whose time is its bytes over the host's DRAM rate, which the host's ranks share.
torchtune spreads the host's CPUs over its ranks for it (``training.set_torch_num_threads``: ``os.cpu_count() //
world_size`` threads each), so the memory, not the cores, sets it.

Paged optimizer states (bitsandbytes' ``PagedAdamW8bit`` and kin, torchtune's single-device default) live in CUDA
unified memory (``cget_managed_ptr``: ``cudaMallocManaged(..., cudaMemAttachHost)``): they stay on the GPU while it has
room and are paged out only when its memory is exhausted
(https://huggingface.co/docs/bitsandbytes/main/en/explanations/optimizers, "Paged optimizers"). Before each parameter's
update the optimizer prefetches that parameter's states to the GPU (``prefetch_state`` -> ``cprefetch``:
``cudaMemPrefetchAsync(ptr, bytes, device, 0)``, a bulk migration on the legacy default stream, which waits on the
compute before it and holds the compute after it) and synchronizes the device after the update
(https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/optim/optimizer.py,
https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/csrc/pythonInterface.cpp); with torchtune's
``optimizer_in_bwd`` that happens inside backward, parameter by parameter: the migration is in series with the step's
compute, never hidden behind it.

Which states move (:func:`paged_migration_bytes`): none where they all fit on the card beside the step's own memory
(the driver evicts only when the device's memory is exhausted, never at the plan's safety margin, which no allocation
holds), and every one of them where they do not. The driver evicts the 2 MB root chunk that was populated longest ago:
"All allocated user memory root chunks are tracked in an LRU list (root_chunks.va_block_used). A root chunk is moved to
the tail of that list whenever any of its subchunks is allocated", not when it is used ("TODO: Bug 1765193: Move the
chunks to the tail of the used list whenever they get mapped", ``pick_root_chunk_to_evict``,
https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia-uvm/uvm_pmm_gpu.c). Backward visits the
parameters in the same order every step, so under that first-in-first-out eviction each state is evicted before it is
needed again: the whole paged set comes in, and goes out, every step, not only the part beyond the card (acc125).

Their time (:attr:`HostOffload.paged_s`): the bytes at the pinned-copy rate of one direction of the host link. The
prefetch is a bulk migration, 2 MB block by block, not page faults; the eviction that frees a chunk copies out and is
queued as tracked, asynchronous work ("Add all the work tracking the eviction to the tracker", ``uvm_va_block_evict_chunks``
in kernel-open/nvidia-uvm/uvm_va_block.h; "Each root chunk has a tracker for any pending operations on the root chunk
... to support asynchronous alloc and free", uvm_pmm_gpu.c), so one block's copy in runs beside the next block's
eviction on the full-duplex link (acc125: both directions in series, as timed before, would leave an RTX 4090's Llama
3.1 8B full fine-tune, 2.48 s a step measured by torchtune, 1.45 s of matmuls at the card's best measured bf16 GEMM
rate plus 1.27 s of migration: more than the whole step).

Activation offload (:attr:`OffloadBytes.activation_bytes`) copies each layer's saved tensors (under full activation
checkpointing, the layer's input: tokens x hidden x its bytes, the GPU's TP share) to host RAM in the forward pass and
back in the backward pass, every micro-batch (:attr:`~generator.sizing.training.TrainingMemory.offloaded_activation_bytes`).
torchtune's ``OffloadActivations`` (``enable_activation_offloading``; TRL's ``activation_offloading`` is a copy of it)
copies on a second stream, "intended to overlap with the default computation stream": in forward the compute stream
waits only on the copy of the tensor ``max_fwd_stash_size`` (5) tensors back; in backward each tensor's copy in is
issued on that stream as autograd reaches the node that unpacks it, and the compute stream waits on it there, so the
copy runs beside the backward of the layer after it, which the GPU is still running while the CPU queues ahead
(https://github.com/meta-pytorch/torchtune/blob/main/torchtune/training/_activation_offloading.py). Unsloth's
offloaded checkpointing does the same with an extra stream and two GPU buffers (``UnslothCheckpointFunction``,
https://github.com/unslothai/unsloth-zoo/blob/main/unsloth_zoo/gradient_checkpointing.py). So the copies out hide
behind the forward pass's GPU work and the copies in behind the backward pass's (its recomputed forward among it):
only what outlasts its phase shows (:attr:`~generator.sizing.training_step.StepTime.activation_offload_exposed_s`).
DeepSpeed's ``cpu_checkpointing`` (:data:`SERIAL_ACTIVATION_OFFLOAD_FRAMEWORKS`) copies on the compute stream:
``copy_to_device(args, device=torch.device('cpu'), ...)`` in ``CheckpointFunction.forward`` and ``move_to_device(...,
cuda_device, ...)`` in its backward, the side stream left commented out
(https://github.com/deepspeedai/DeepSpeed/blob/master/deepspeed/runtime/activation_checkpointing/checkpointing.py): in
series, both directions in full. Both at the pinned-copy rate of one direction of the GPU's host link, as the other
copies here.

Every argument is a plain number or a sizing record so the planner, the estimate and the calibration report share it.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import CpuSpec, GpuSpec, PlatformSpec, dram_bandwidth_gb_per_s
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.frameworks import framework_profile
from generator.sizing.performance import pcie_gb_per_s
from generator.sizing.precision import weight_format
from generator.sizing.training import OPTIMIZERS, TrainingMemory, TrainingSetup, adapter_targets, lora_params_split
from generator.sizing.weights import Parallelism, size_weights

#: Passes over a unit's parameters per micro-batch that gather them onto the GPU: forward, and backward (the forward's
#: gathered copy freed by ``reshard_after_forward``; a checkpointed layer recomputes inside the backward gather).
GATHERS_PER_MICRO_BATCH = 2

#: Frameworks whose activation offload copies on the compute stream, in series with it: DeepSpeed's
#: ``cpu_checkpointing`` (the module docstring). The others copy on a side stream behind the compute.
SERIAL_ACTIVATION_OFFLOAD_FRAMEWORKS = ("deepspeed",)


class OffloadBytes(NamedTuple):
    """Bytes one GPU moves per optimizer step for its CPU offload."""

    #: Host to GPU, prefetched behind compute (the parameter shard before each gather).
    h2d_bytes: float = 0.0
    #: GPU to host, behind backward (the gradient shard as it is reduced).
    d2h_bytes: float = 0.0
    #: Host to GPU after the CPU step, in series (ZeRO-Offload's updated parameter shard).
    h2d_after_step_bytes: float = 0.0
    #: Host DRAM bytes of this GPU's share of the CPU optimizer step (read and written).
    cpu_step_bytes: float = 0.0
    #: GPU to host after the GPU's optimizer step, in series (ZeRO-3 ``offload_param`` alone: the updated 16-bit
    #: partition written back to its host copy).
    d2h_after_step_bytes: float = 0.0
    #: Paged optimizer states migrated in and evicted again each step (each direction), in series with the step's compute
    #: (:func:`paged_migration_bytes`).
    paged_bytes: float = 0.0
    #: Saved activations copied to host RAM in the forward passes and back in the backward passes (each direction, all
    #: the step's micro-batches), and whether the framework copies them on the compute stream (in series).
    activation_bytes: float = 0.0
    activations_in_series: bool = False

    @property
    def any(self) -> bool:
        """Whether anything is offloaded or paged."""
        return bool(self.link_bytes or self.cpu_step_bytes or self.paged_bytes or self.activation_bytes)

    @property
    def link_bytes(self) -> float:
        """Bytes over the host link, both directions, overlapped or not."""
        return self.h2d_bytes + self.d2h_bytes + self.h2d_after_step_bytes + self.d2h_after_step_bytes


class HostOffload(NamedTuple):
    """:class:`OffloadBytes` and the rates they move at: the GPU's host link and the host's DRAM."""

    bytes: OffloadBytes = OffloadBytes()
    #: Pinned-copy rate of one GPU's host link per direction (the link x ``pcie_efficiency``), GB/s.
    link_gb_per_s: float = 0.0
    #: The host's DRAM rate as a streaming CPU kernel reads it, all sockets, GB/s.
    host_dram_gb_per_s: float = 0.0
    #: GPUs of the job on one host, whose CPU steps share its DRAM at once.
    host_gpus: int = 1

    @property
    def link_s(self) -> float:
        """Seconds of the copies that overlap compute: the busier direction (the link is full duplex)."""
        return _seconds(max(self.bytes.h2d_bytes, self.bytes.d2h_bytes), self.link_gb_per_s)

    @property
    def after_step_s(self) -> float:
        """Seconds of the copy that follows the optimizer step (in at most one direction: the other is never set)."""
        return _seconds(self.bytes.h2d_after_step_bytes + self.bytes.d2h_after_step_bytes, self.link_gb_per_s)

    @property
    def paged_s(self) -> float:
        """Seconds of the paged states' migration, in series with compute: their bytes at one direction's rate.

        Each block's copy in runs beside the next block's eviction, on the link's other direction.
        """
        return _seconds(self.bytes.paged_bytes, self.link_gb_per_s)

    @property
    def activation_s(self) -> float:
        """Seconds of one direction's activation copies (the forward's out, or the backward's in)."""
        return _seconds(self.bytes.activation_bytes, self.link_gb_per_s)

    @property
    def cpu_step_s(self) -> float:
        """Seconds of the CPU optimizer step: every rank of the host streams its shard through the host's DRAM at once."""
        return _seconds(self.bytes.cpu_step_bytes * self.host_gpus, self.host_dram_gb_per_s)


#: Nothing offloaded.
NO_OFFLOAD = HostOffload()


def _seconds(nbytes: float, gb_per_s: float) -> float:
    if nbytes <= 0:
        return 0.0
    return nbytes / (gb_per_s * 1e9) if gb_per_s > 0 else float("inf")


def cpu_step_bytes_per_param(grad_bytes: float, weight_bytes: float, state_bytes: float) -> float:
    """DRAM bytes the CPU optimizer step moves per trainable parameter: the gradient read, weight and states read and written."""
    return grad_bytes + 2 * (weight_bytes + state_bytes)


def paged_migration_bytes(mem: TrainingMemory, gpu: GpuSpec) -> float:
    """Bytes of paged optimizer states (``mem.paged_state_bytes``) migrated in, and evicted again, every step on ``gpu``.

    None where they fit in the card's whole memory (``gpu.memory_bytes``, CUDA's total: unified memory is evicted only
    when the device runs out, never at the plan's safety margin) beside the step's own memory (``mem.per_gpu.total``,
    without the paged states); all of them where they do not, as the driver's first-in-first-out eviction cycles every
    state through the card each step (the module docstring). The planner, the estimate and the calibration report all
    time this.
    """
    if not mem.paged_state_bytes or mem.per_gpu.total + mem.paged_state_bytes <= gpu.memory_bytes:
        return 0.0
    return float(mem.paged_state_bytes)


def offload_bytes(
    arch: Architecture,
    setup: TrainingSetup,
    par: Parallelism,
    accumulation: int,
    paged_migrated: float = 0.0,
    offloaded_activations: float = 0.0,
) -> OffloadBytes:
    """Per GPU and step, what ``setup``'s CPU offload moves (nothing where it offloads neither parameters nor optimizer).

    ``paged_migrated``: its paged optimizer states migrated each step (:func:`paged_migration_bytes`);
    ``offloaded_activations``: the saved activations its activation offload copies out and back each micro-batch
    (:attr:`~generator.sizing.training.TrainingMemory.offloaded_activation_bytes`).

    The parameters are the GPU's model-parallel share as the memory model holds them (full training: the regime's
    working weights; LoRA / QLoRA: the frozen base in its format and the adapters), sharded over data parallelism
    (parameter offload is ZeRO-3's). Paged optimizer states are not counted here.
    """
    optimizer = setup.offloads_optimizer()
    activations = OffloadBytes(
        paged_bytes=paged_migrated,
        activation_bytes=offloaded_activations * max(1, accumulation),
        activations_in_series=bool(setup.framework)
        and framework_profile(setup.framework or "").name in SERIAL_ACTIVATION_OFFLOAD_FRAMEWORKS,
    )
    if not (setup.offload_params or optimizer):
        return activations
    opt = OPTIMIZERS[setup.optimizer]
    dp, micro = max(1, setup.data_parallel), max(1, accumulation)
    share = 1 / (par.tp * par.pp)  # the GPU's model-parallel share (an even split of the layers' parameters)
    if setup.method == "full":
        trainable = arch.params_total * share
        main = framework_profile(setup.framework).main_grad_bytes if setup.framework else None
        weight_bytes, grad_bytes, state_bytes = opt.weight_bytes, main or opt.grad_bytes, opt.state_bytes
        param_bytes = trainable * weight_bytes
    else:
        targets = adapter_targets(arch, setup.lora_targets, setup.framework)
        trainable = sum(lora_params_split(arch, setup.lora_rank, targets)) * share
        weight_bytes = grad_bytes = opt.adapter_bytes
        state_bytes = opt.moment_bytes
        base = size_weights(arch, weight_format(setup.base_precision_name), Parallelism(tp=par.tp, pp=par.pp))
        param_bytes = base.per_gpu_bytes + trainable * weight_bytes
    h2d = GATHERS_PER_MICRO_BATCH * micro * param_bytes / dp if setup.offload_params else 0.0
    shard = trainable / dp
    if not optimizer:  # ZeRO-3 offload_param alone: the GPU's optimizer writes its updated partition back to the host
        return activations._replace(h2d_bytes=h2d, d2h_after_step_bytes=shard * weight_bytes)
    return activations._replace(
        h2d_bytes=h2d,
        d2h_bytes=micro * shard * grad_bytes,
        h2d_after_step_bytes=0.0 if setup.offload_params else shard * weight_bytes,
        cpu_step_bytes=shard * cpu_step_bytes_per_param(grad_bytes, weight_bytes, state_bytes),
        paged_bytes=0.0,
    )


def socket_dram_read_gb_per_s(theoretical_gb_per_s: float, consts: Constants) -> float:
    """GB/s one socket's DRAM delivers to a streaming CPU kernel: the rate the offload model reads host memory at.

    Its theoretical rate at ``ddr_bandwidth_efficiency``, and at most ``cpu_weight_read_ceiling_gb_per_s`` (a sum of
    the two times, as :func:`generator.sizing.offload.cpu_weight_seconds` counts a CPU layer's read): an 8-channel
    DDR4-3200 EPYC (204.8 GB/s) reads at 118 GB/s.
    """
    if theoretical_gb_per_s <= 0:
        return 0.0
    return 1 / (1 / (theoretical_gb_per_s * consts.ddr_bandwidth_efficiency) + 1 / consts.cpu_weight_read_ceiling_gb_per_s)


def host_link_gb_per_s(gpu: GpuSpec, host_gpus: int, consts: Constants) -> float:
    """One GPU's pinned-copy rate to host memory per direction, GB/s, at ``pcie_efficiency``.

    A superchip's NVLink-C2C, else its PCIe slot: the catalog's generation, the lanes the host gives each of
    ``host_gpus`` slots.
    """
    if gpu.host_link_gb_per_s_bidir:
        return gpu.host_link_gb_per_s_bidir / 2 * consts.pcie_efficiency
    return pcie_gb_per_s(gpu.pcie_gen, gpu.lanes_with(host_gpus)) * consts.pcie_efficiency


def host_link_name(gpu: GpuSpec, host_gpus: int) -> str:
    """The link :func:`host_link_gb_per_s` times, by name."""
    if gpu.host_link_gb_per_s_bidir:
        return "NVLink-C2C"
    return f"PCIe Gen{gpu.pcie_gen} x{gpu.lanes_with(host_gpus)}"


def host_offload(
    moved: OffloadBytes,
    gpu: GpuSpec,
    host_gpus: int,
    cpu: CpuSpec | None,
    sockets: int,
    consts: Constants,
    mt_per_s: int | None = None,
) -> HostOffload:
    """``moved`` at ``gpu``'s host link and the DRAM of ``sockets`` x ``cpu`` (None: :data:`UNKNOWN_HOST_DRAM_GB_PER_S`).

    ``mt_per_s``: the rate the host's DIMMs run at (two a channel run below the CPU's rating: newuser76 item 13); None:
    the CPU's rating at one DIMM a channel.
    """
    if not moved.any:
        return NO_OFFLOAD
    theoretical = UNKNOWN_HOST_DRAM_GB_PER_S
    if cpu is not None:
        theoretical = dram_bandwidth_gb_per_s(cpu.memory_channels, mt_per_s or cpu.ddr_mt_per_s)
    return HostOffload(
        bytes=moved,
        link_gb_per_s=host_link_gb_per_s(gpu, host_gpus, consts),
        host_dram_gb_per_s=max(1, sockets) * socket_dram_read_gb_per_s(theoretical, consts),
        host_gpus=max(1, host_gpus),
    )


#: One socket's theoretical DRAM rate where the host's CPU is not known and the catalog names no server of the GPU:
#: 8 channels of DDR4-3200 (an EPYC 7002 / 7003 or a Xeon Ice Lake socket), the older of the catalog's GPU servers'
#: memories, so that the CPU step is not counted at a newer server's rate (GB/s).
UNKNOWN_HOST_DRAM_GB_PER_S = 8 * 3200 * 8 / 1000


def platform_cpu(platform: PlatformSpec) -> tuple[CpuSpec | None, int]:
    """The platform's CPU (None where it names none, or one the catalog lacks) and its sockets."""
    return catalog.cpus().get(platform.cpu_id or ""), max(1, platform.cpu_sockets)


def assumed_host(gpu: GpuSpec) -> PlatformSpec | None:
    """The server a job that names only ``gpu`` is assumed to run in, for its CPU offload.

    The catalog server of the GPU with the most GPUs among those that name their CPU, the first by id (None: none).
    """
    held = [p for p in catalog.platforms().values() if gpu.id in p.gpu_ids and p.cpu_id in catalog.cpus()]
    return min(held, key=lambda p: (-max(p.gpu_counts, default=0), p.id), default=None)
