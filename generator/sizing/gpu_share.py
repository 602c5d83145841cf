"""One pod's share of a GPU under ``kubernetes.gpu_sharing``: its memory, SMs and memory bandwidth.

The planner sizes an inference replica of one GPU against its share when the workload shares GPUs, ``specgen estimate
--mig`` / ``--share`` sizes one there, and the render gives vLLM the same memory; all read it here (one
implementation).

- MIG: the instance's memory as ``nvidia-smi mig -lgip`` reports it where the catalog has it, its fraction of the SMs
  (compute slices g of 7) and its fraction of the memory bandwidth (memory slices of 8: each slice is its own memory
  controllers and DRAM, MIG user guide). Where no ``-lgip`` figure is sourced, the memory is the profile's fraction of
  the GPU's memory times the lowest ratio of measured instance memory to that fraction on the GPUs measured (an
  instance reports less than its fraction: the H100 NVL's 1g.12gb 10.62 GiB of 11.70), so a derived share never
  exceeds what a measured GPU gives.
- Time-slicing and MPS: the GPU's memory over ``replicas_per_gpu`` (the render gives each vLLM pod its fraction of it),
  and, assumed, 1/``replicas_per_gpu`` of its compute and memory bandwidth each: every replica on the GPU at full load
  at once (time slices, or MPS clients' concurrent kernels, split the SMs and the DRAM bandwidth between them). A
  lightly loaded neighbour leaves more: the figures are a floor.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import GpuSpec
from generator.named_tuple import NamedTuple
from generator.units import GIB, MIB
from generator.workload.models import GpuSharing


class GpuShare(NamedTuple):
    """What one pod of a shared GPU gets (the figures a replica of one GPU is sized against)."""

    strategy: str
    #: The MIG profile, or "1/N" of a time-sliced or MPS GPU.
    label: str
    #: Pods (MIG instances, time-slicing or MPS replicas) one GPU holds.
    per_gpu: int
    memory_bytes: int
    #: Shares of the GPU's SMs and of its memory bandwidth, as fractions in text ("3/7") and as numbers.
    sm_fraction: str
    bandwidth_fraction: str
    #: Where the memory figure comes from.
    memory_basis: str

    @property
    def sm_share(self) -> float:
        """The share of the GPU's SMs, as a number."""
        return _ratio(self.sm_fraction)

    @property
    def bandwidth_share(self) -> float:
        """The share of the GPU's memory bandwidth, as a number."""
        return _ratio(self.bandwidth_fraction)

    def text(self, gpu_id: str) -> str:
        """The share as plan text says it."""
        what = f"one {self.label} MIG instance" if self.strategy == "mig" else f"one of {self.per_gpu} {self.strategy} replicas"
        return (
            f"{what} of one {gpu_id} ({self.per_gpu} a GPU): {self.memory_bytes / GIB:.2f} GiB ({self.memory_basis}), "
            f"{self.sm_fraction} of its SMs and {self.bandwidth_fraction} of its memory bandwidth"
        )


def _ratio(text: str) -> float:
    top, _, bottom = text.partition("/")
    return int(top) / int(bottom)


def _listed_bytes(gpu: GpuSpec) -> int:
    """The whole card's memory as nvidia-smi lists it, the basis a MIG instance's memory is measured on.

    ``nvidia-smi mig -lgip`` sizes an instance as a slice of the card's memory, not of CUDA's total for the whole card
    (``GpuSpec.memory_cuda_mib``, less the driver's reserve): an A100-SXM4-40GB's 7g.40gb instance lists 39.5 GiB,
    more than the 40,339 MiB the whole card's CUDA total gives.
    """
    return gpu.memory_usable_mib * MIB if gpu.memory_usable_mib else gpu.memory_bytes


def _derived_memory_ratio() -> float:
    """The lowest measured instance memory over its fraction of the GPU's memory, of every GPU the catalog measured."""
    gpus = catalog.gpus()
    ratios = [
        profile.memory_gib * GIB / (float(profile.memory_fraction) * _listed_bytes(gpus[gpu_id]))
        for gpu_id, profiles in catalog.mig_profile_specs().items()
        for profile in profiles.values()
        if profile.memory_gib is not None and gpu_id in gpus
    ]
    return min(ratios)


def gpu_share(gpu: GpuSpec, sharing: GpuSharing) -> GpuShare | None:
    """One pod's share of ``gpu`` under ``sharing``; None where the GPU has no such MIG profile (refused at load)."""
    if sharing.strategy != "mig":
        n = sharing.replicas_per_gpu or 1
        return GpuShare(sharing.strategy, f"1/{n}", n, gpu.memory_bytes // n, f"1/{n}", f"1/{n}", f"the GPU's memory over {n}")
    profile = catalog.mig_profile_specs().get(gpu.id, {}).get(str(sharing.mig_profile))
    if profile is None:
        return None
    if profile.memory_gib is not None:
        memory = round(profile.memory_gib * GIB / MIB) * MIB
        basis = "nvidia-smi mig -lgip"
    else:
        memory = int(float(profile.memory_fraction) * _listed_bytes(gpu) * _derived_memory_ratio()) // MIB * MIB
        part = profile.memory_fraction
        of = "all" if part == 1 else f"{part.numerator}/{part.denominator}"  # fuzz32 item 13: "1 of the GPU's memory"
        basis = f"{of} of the GPU's memory, less what measured GPUs' instances lack"
    return GpuShare(
        "mig",
        profile.name,
        profile.instances,
        memory,
        f"{profile.sm_fraction.numerator}/{profile.sm_fraction.denominator}",
        f"{profile.memory_fraction.numerator}/{profile.memory_fraction.denominator}",
        basis,
    )


def shared_gpu(gpu: GpuSpec, share: GpuShare) -> GpuSpec:
    """``gpu`` as one pod of ``share`` sees it: its memory, and its tensor rates and bandwidth scaled by the share."""
    sm, bandwidth = share.sm_share, share.bandwidth_share
    achievable = gpu.max_achievable_tflops
    return gpu._replace(
        # the share's memory is what a pod allocates: the whole card's CUDA total no longer applies
        memory_cuda_mib=None,
        memory_usable_mib=share.memory_bytes // MIB,
        memory_gb=share.memory_bytes / 1e9,
        dense_tflops={k: None if v is None else v * sm for k, v in gpu.dense_tflops.items()},
        max_achievable_tflops=None if achievable is None else {k: v * sm for k, v in achievable.items()},
        memory_bandwidth_gb_per_s=gpu.memory_bandwidth_gb_per_s * bandwidth,
        measured_memory_gb_per_s=None if gpu.measured_memory_gb_per_s is None else gpu.measured_memory_gb_per_s * bandwidth,
    )


def pod_memory_fraction(gpu_memory_utilization: float, sharing: GpuSharing | None) -> float:
    """The ``--gpu-memory-utilization`` one vLLM pod of a pool is given.

    Under time-slicing every pod sees the whole GPU and vLLM's fraction is of its total memory, so each of the
    ``replicas_per_gpu`` pods takes its share of it (vLLM's docs: two instances on one GPU at 0.5 each); whole GPUs,
    MIG instances and MPS clients keep the fraction (fuzz17 item 12: the second pod on a time-sliced GPU found 8 GB
    free where it asked for 72).
    """
    if sharing is None or sharing.strategy != "time-slicing":
        return gpu_memory_utilization
    return round(gpu_memory_utilization / (sharing.replicas_per_gpu or 1), 4)


#: Sharing strategies whose pods do not see their share as the memory free when they start (time-slicing: the whole
#: GPU, less what the pods started before took; MPS: its client limit, or the GPU where a client is not limited).
CAPPED_POOL_STRATEGIES = ("time-slicing", "mps")


def sglang_pool_capped(sharing: GpuSharing | None) -> bool:
    """Whether an SGLang pod in ``sharing`` is also given ``--max-total-tokens``: its pool as sized, whatever it sees.

    SGLang's ``--mem-fraction-static`` is the share of the memory *free when it starts* that its weights and KV pool
    take, the rest being left to activations and CUDA graphs (``total`` in :mod:`generator.sizing.sglang_kv`); vLLM's
    ``--gpu-memory-utilization`` is a share of the GPU's *total* memory that holds everything. On a time-sliced GPU the
    first SGLang pod would take that fraction of the whole GPU and those started after it a fraction of what is left,
    so no fraction gives each pod its share (split like vLLM's, the pods after the first get a smaller pool than
    planned or none). The fraction the replica is sized with, over the share's memory, reaches the planned pool on any
    pod that finds its share free; ``--max-total-tokens`` (a cap on the pool's tokens, SGLang's ``min`` with what it
    profiles) holds a pod that finds more free at the planned pool, so that its neighbours find their shares free.
    Under MPS the cap also holds a pod whose client limit SGLang's free-memory reading does not show.
    """
    return sharing is not None and sharing.strategy in CAPPED_POOL_STRATEGIES
