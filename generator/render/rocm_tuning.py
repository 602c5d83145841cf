"""An AMD pool's ROCm tuning, as AMD's MI300X / MI355X guides give it (newuser77 item 10).

Host: NUMA auto-balancing off (``kernel.numa_balancing=0``): "To optimize performance, disable automatic NUMA
balancing. Otherwise, the GPU might hang until the periodic balancing is finalized" (AMD's vLLM benchmark page for the
MI300X, :data:`NUMA_SOURCE`).

vLLM on CDNA3 / CDNA4 (MI300X, MI325X, MI350X, MI355X), from AMD's "vLLM V1 performance optimization" guide
(:data:`VLLM_SOURCE`), only what it tells every deployment (or every one of a kind) to set:

- ``HIP_FORCE_DEV_KERNARG=1``: "improves kernel launch performance ... already set by default in vLLM ROCm Docker
  images. Bare-metal users should set this manually."
- ``VLLM_ROCM_USE_AITER=1``: AITER's master switch ("defaults to False/0"), "Enable all AITER optimizations
  (recommended for most workloads)".
- ``NCCL_MIN_NCHANNELS=112`` on the MI300X (and the MI325X, the same CDNA3 die and links), for a replica over more than
  one GPU only: "increases RCCL channels from default (typically 32-64) to 112 on the Instinct MI300X. Only beneficial
  for multi-GPU distributed workloads".
- an MLA model (DeepSeek-V2/V3/R1) under AITER: ``--block-size 1`` ("Must explicitly set --block-size 1 ... If you
  omit --block-size 1, vLLM will raise an error").
- gpt-oss: AITER unified attention (``VLLM_ROCM_USE_AITER_MHA=0``, ``VLLM_ROCM_USE_AITER_UNIFIED_ATTENTION=1``:
  "Required for optimal performance").

Not rendered: ``TORCH_BLAS_PREFER_HIPBLASLT=1`` ("can improve linear layer performance in some workloads": not every
one). The MI250X (CDNA2) gets the host setting only: the guide's AITER kernels are for the MI300X and MI350 series.
Radeon cards (RDNA 3: RX 7900 XTX, Radeon PRO W7900) get neither.
"""

from __future__ import annotations

from typing import Any

NUMA_SOURCE = "https://rocm.docs.amd.com/en/docs-6.2.0/how-to/performance-validation/mi300x/vllm-benchmark.html"
VLLM_SOURCE = "https://rocm.docs.amd.com/en/docs-7.2.0/how-to/rocm-for-ai/inference-optimization/vllm-optimization.html"
#: GPU architectures the guide's AITER kernels and environment are for (MI300X / MI325X; MI350X / MI355X).
AITER_ARCHITECTURES = ("cdna3", "cdna4")
#: The Instinct (CDNA) architectures the MI300X page's NUMA setting is rendered for; a Radeon (RDNA) desktop or
#: workstation gets none (newuser99 item 5: a one-socket RX 7900 XTX box got the MI300X's "the GPU might hang").
INSTINCT_ARCHITECTURES = ("cdna2", "cdna3", "cdna4")
#: Where it gives NCCL_MIN_NCHANNELS=112: "on the Instinct MI300X" (the MI325X is the same CDNA3 part).
RCCL_CHANNELS_ARCHITECTURES = ("cdna3",)


def rocm_host_vars() -> dict[str, Any]:
    """``specgen_rocm_host``: the kernel settings an AMD pool's hosts take (NUMA auto-balancing off)."""
    return {
        "sysctl": {"kernel.numa_balancing": 0},
        "why": "NUMA auto-balancing off: otherwise the GPU might hang until the periodic balancing is finalized (AMD)",
        "source": NUMA_SOURCE,
    }


def rocm_vllm_settings(
    gpu_architecture: str, gpus_per_replica: int, *, latent_attention: bool, attention_sinks: bool
) -> tuple[dict[str, str], list[str]]:
    """The environment and extra vLLM flags of a vLLM replica on an AMD GPU of ``gpu_architecture``; empty elsewhere."""
    if gpu_architecture not in AITER_ARCHITECTURES:
        return {}, []
    env = {"HIP_FORCE_DEV_KERNARG": "1", "VLLM_ROCM_USE_AITER": "1"}
    if gpus_per_replica > 1 and gpu_architecture in RCCL_CHANNELS_ARCHITECTURES:
        env["NCCL_MIN_NCHANNELS"] = "112"
    if attention_sinks:
        env |= {"VLLM_ROCM_USE_AITER_MHA": "0", "VLLM_ROCM_USE_AITER_UNIFIED_ATTENTION": "1"}
    return dict(sorted(env.items())), (["--block-size", "1"] if latent_attention else [])
