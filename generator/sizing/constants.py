"""Every constant of the sizing engine that is not physics: named, documented, sourced, overridable.

A workload overrides any of them under ``constants:``; ``specgen estimate`` under ``--set NAME=VALUE``.
``CONSTANT_DOCS`` holds each one's meaning and source.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from generator.errors import InputError
from generator.units import GIB, MIB


class Constants(NamedTuple):
    """Named engine constants; ``CONSTANT_DOCS`` says what each means and where it comes from."""

    # --- inference runtime (vLLM-style memory budget) ---
    gpu_memory_utilization: float = 0.9
    non_torch_bytes: int = 512 * MIB
    nccl_bytes: int = 256 * MIB
    cuda_graph_bytes: int = 512 * MIB
    prefill_chunk_tokens: int = 8192
    activation_mlp_copies: int = 3
    activation_hidden_copies: int = 4
    kv_block_tokens: int = 16
    max_num_seqs: int = 256
    safety_margin_fraction: float = 0.05

    # --- training ---
    training_overhead_bytes: int = 1 * GIB
    logits_bytes_per_element: int = 10
    zero3_live_layers: int = 2

    # --- performance (roofline) ---
    decode_bandwidth_efficiency: float = 0.75
    prefill_compute_efficiency: float = 0.55
    training_mfu: float = 0.40


#: name -> (what it means, where the value comes from)
CONSTANT_DOCS: dict[str, tuple[str, str]] = {
    "gpu_memory_utilization": (
        "Fraction of GPU memory the serving engine may use (weights + activations + KV + graphs).",
        "vLLM EngineArgs default gpu_memory_utilization=0.9 (docs.vllm.ai, engine arguments)",
    ),
    "non_torch_bytes": (
        "CUDA context, cuBLAS/cuDNN workspaces and other memory outside PyTorch's allocator, per GPU.",
        "vLLM memory profiling logs: 0.25-0.35 GiB on RTX 3090/4090, 1.79 GiB on an 80 GB GPU "
        "(vllm issue #10517, #13061, PR #10511); 0.5 GiB is a planning value between them",
    ),
    "nccl_bytes": (
        "Extra non-torch memory per GPU when a replica spans several GPUs (NCCL and custom all-reduce buffers).",
        "vLLM PR #10511: non-torch memory grows from 1.79 to 3.58 GiB at TP=2 on 80 GB GPUs; "
        "#13061: 0.25 GiB total at TP=2 on 4090s; a planning value",
    ),
    "cuda_graph_bytes": (
        "Memory held by captured CUDA graphs for decode batch sizes, per GPU.",
        "vLLM logs 'Graph capturing finished ... took 0.3-1 GiB' for 7B-70B models; vLLM >= 0.11 "
        "reserves it in the memory budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS); planning value",
    ),
    "prefill_chunk_tokens": (
        "Tokens processed in one forward pass during the profiling run / chunked prefill (max_num_batched_tokens).",
        "vLLM V1 scheduler default max_num_batched_tokens=8192 for serving (vllm/engine/arg_utils.py)",
    ),
    "activation_mlp_copies": (
        "Live copies of the MLP intermediate per token at the activation peak (gate, up, act(gate)*up).",
        "SwiGLU forward in vLLM: gate_up output (2 x intermediate) and the SiluAndMul output (1 x)",
    ),
    "activation_hidden_copies": (
        "Live hidden-size tensors per token at the activation peak (residual, norm output, attention output, MLP output).",
        "vLLM decoder layer forward (residual + hidden_states pairs); checked against vLLM's measured "
        "activation peak of 1.26 GiB for Llama-3-8B at 8192 tokens (PR #10511)",
    ),
    "kv_block_tokens": (
        "Tokens per paged KV cache block.",
        "vLLM default block_size=16",
    ),
    "max_num_seqs": (
        "Sequences the profiling run samples at once (fp32 logits of this many rows are live).",
        "vLLM default max_num_seqs=256",
    ),
    "safety_margin_fraction": (
        "Fraction of each GPU's memory a plan keeps free beyond the runtime's own budget.",
        "planning headroom; the sizing guide's advice to leave a reserve for working data",
    ),
    "training_overhead_bytes": (
        "CUDA context, cuBLAS workspaces and allocator fragmentation during training, per GPU.",
        "PyTorch CUDA context 0.3-0.5 GiB plus caching-allocator slack; calibrated against "
        "LLaMA-Factory's measured LoRA/QLoRA rows (shared/reference/calibration.json)",
    ),
    "logits_bytes_per_element": (
        "Bytes per (token x vocab) at the loss peak: bf16 logits, their fp32 upcast and the fp32 log-softmax saved for backward.",
        "transformers ForCausalLMLoss upcasts logits to float32 before cross_entropy",
    ),
    "zero3_live_layers": (
        "Decoder layers whose full parameters ZeRO-3 / FSDP gathers at once (current + prefetched).",
        "DeepSpeed stage3_prefetch_bucket_size / FSDP forward_prefetch gather the next layer ahead",
    ),
    "decode_bandwidth_efficiency": (
        "Fraction of peak HBM bandwidth reached while streaming weights and KV in decode.",
        "memory-bound GEMV kernels reach 70-85% of peak bandwidth (NVIDIA and vLLM benchmark blogs); planning value",
    ),
    "prefill_compute_efficiency": (
        "Fraction of dense tensor-core peak reached in prefill GEMMs (model FLOPs utilization).",
        "large-GEMM MFU of 50-65% reported for TensorRT-LLM / vLLM prefill; planning value",
    ),
    "training_mfu": (
        "Model FLOPs utilization of a training step (6*N*D FLOPs / peak dense FLOPs).",
        "Megatron-LM and Llama 3 report 38-43% MFU on H100 at scale (arXiv:2407.21783 Table 4)",
    ),
}


def constant_docs() -> dict[str, dict[str, Any]]:
    """Every constant with its default, doc and source (for ``specgen schema`` and SPEC.md)."""
    defaults = Constants._field_defaults
    return {name: {"default": defaults[name], "doc": doc, "source": src} for name, (doc, src) in CONSTANT_DOCS.items()}


def with_overrides(overrides: dict[str, Any], base: Constants | None = None) -> Constants:
    """A copy of ``base`` with named constants replaced; unknown names or bad types raise."""
    base = base or Constants()
    defaults = Constants._field_defaults
    clean: dict[str, Any] = {}
    for name, value in overrides.items():
        if name not in defaults:
            raise InputError(f"unknown constant '{name}'; known: {', '.join(sorted(defaults))}")
        kind = type(defaults[name])
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
            raise InputError(f"constant '{name}' must be a {kind.__name__}, got {value!r}")
        if value < 0 or (kind is float and name.endswith(("efficiency", "utilization", "fraction", "mfu")) and value > 1):
            raise InputError(f"constant '{name}' is out of range: {value!r}")
        clean[name] = kind(value)
    return base._replace(**clean)
