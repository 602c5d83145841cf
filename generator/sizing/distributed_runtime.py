"""Memory the distributed runtime takes per GPU before the weights load, by the link its collectives use.

NCCL builds a communicator's channels (and serving engines their custom all-reduce buffers) over the
fastest path to each peer: NVLink peers inside the node, PCIe or the network otherwise. Engines measure
this as memory they do not own (vLLM's non-torch memory, SGLang's "Init torch distributed ends. mem usage").
Pure: no I/O.
"""

from __future__ import annotations

from generator.sizing.constants import Constants
from generator.sizing.weights import Parallelism


def multi_gpu_runtime_bytes(group_gpus: int, consts: Constants, *, nvlink: bool) -> int:
    """Per-GPU memory of the communicators of a collective group of ``group_gpus`` GPUs.

    0 on one GPU; ``nccl_nvlink_bytes`` when the GPU has NVLink peers in its node (:func:`nvlink_collectives`),
    else ``nccl_bytes`` (PCIe).
    """
    if group_gpus <= 1:
        return 0
    return consts.nccl_nvlink_bytes if nvlink else consts.nccl_bytes


def nvlink_collectives(interconnect_kind: str, nvlink_domain_gpus: int, group_gpus: int) -> bool:
    """Whether a collective group's GPUs reach NVLink (SXM) peers inside their node.

    A group larger than the NVLink domain (TP16 over two 8-GPU HGX nodes) still builds NVLink channels
    among each node's GPUs, and adds network connections: per-GPU memory does not fall as the group
    grows, so only ``min(group, domain) > 1`` matters.

    Scope: the figure behind ``nccl_nvlink_bytes`` was measured on an NVSwitch board (8 x H200), and it is
    applied to every SXM NVLink GPU, direct-attached 4-GPU boards (Dell XE8640, V100 SXM2) included.
    The sizing runs per GPU model before a platform is chosen, and that measurement is of SGLang, which turns
    NCCL's NVSwitch-only NVLink SHARP buffers off by default (sglang PR #631, #3502): what it holds, NVLink
    P2P channels and custom all-reduce buffers, is built over direct NVLink links as well. Reserving it
    where the true figure is smaller costs at most ~1.75 GiB of KV cache; leaving it out where it applies
    would overcommit the GPU. NVLink bridges (pairs of PCIe cards) and Infinity Fabric count as PCIe here:
    nothing was measured on them.
    """
    return interconnect_kind == "nvlink" and min(group_gpus, nvlink_domain_gpus) > 1


def nvlink_replica(interconnect_kind: str, nvlink_domain_gpus: int, par: Parallelism) -> bool:
    """Whether a serving replica's tensor-parallel group reaches NVLink peers (:func:`nvlink_collectives`).

    The TP group's collectives (NCCL communicator, custom all-reduce) hold the measured memory; pipeline
    stages only exchange point-to-point sends.
    """
    return nvlink_collectives(interconnect_kind, nvlink_domain_gpus, par.tp)
