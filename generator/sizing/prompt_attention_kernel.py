"""A prompt's attention under a paged kernel that streams the KV cache again for every few query rows.

vLLM's Triton unified attention (``TRITON_ATTN``, vllm/attention/ops/triton_unified_attention.py) runs a prompt in
its 2-D kernel, one program per KV head and block of query rows: ``BLOCK_M`` is 16 where a KV head serves 16 query heads
or fewer (else the next power of two of that count), packed as ``BLOCK_Q = BLOCK_M // num_queries_per_kv`` prompt
tokens times the group's query heads, and each program loads every key and value tile up to its last token's position
(``num_tiles = cdiv(max_seq_prefix_len, TILE_SIZE)``; a window layer only the window's tiles). A (query token, key) pair
of a layer then costs ``4 x heads x head_dim`` FLOPs and moves ``kv_heads x 2 x head_dim`` cache elements over
``BLOCK_Q`` tokens: ``2 x BLOCK_M / element_bytes`` FLOPs a byte, 16 for a 16-bit cache, far below what keeps an
A100's or H100's tensor cores busy, so the kernel's prompt rate is that ratio times the rate it streams the cache at
(:func:`kernel_flops_per_read_byte`, ``prompt_attention_read_share``). FlashAttention-2 / 3 and FlashInfer hold a
128-row query tile on chip (its rate: ``prefill_compute_efficiency`` of the tensor rate) and are not capped.

vLLM selects the kernel on CUDA where FlashAttention cannot run the model: attention sinks (gpt-oss) before Hopper
(vllm/platforms/cuda.py; :func:`engine_prompt_query_rows`, which the calibration report applies, and the estimate and
the planner through :func:`prompt_query_rows`). ``prompt_attention_query_rows`` 0 (every other engine, GPU and
model): no cap; ``ENGINE_KERNEL`` (-1, the default): the engine's choice (:func:`prompt_query_rows`), so a user's 0 (a
workload's ``constants`` or ``--set``) keeps FlashAttention's rate wherever vLLM would pick Triton.
"""

from __future__ import annotations

from generator.sizing.architecture import MLA, Architecture
from generator.sizing.constants import Constants
from generator.units import GB

#: ``BLOCK_M`` of vLLM's Triton unified prompt kernel where a KV head serves 16 query heads or fewer.
TRITON_UNIFIED_BLOCK_M = 16
#: Model types whose attention adds a learned sink logit a head to the softmax.
SINK_MODEL_TYPES = ("gpt_oss",)
#: NVIDIA architectures before Hopper, where vLLM's FlashAttention backend takes no sinks.
PRE_HOPPER_NVIDIA = ("ampere", "ada-lovelace", "turing", "volta")

#: ``prompt_attention_query_rows`` of "the kernel the engine picks" (the default): :func:`prompt_query_rows`.
ENGINE_KERNEL = -1

#: Bytes of one cached key or value element as the kernel reads it (a 16-bit cache; an FP8 cache is not modelled here).
KV_ELEMENT_BYTES = 2


def engine_prompt_query_rows(engine: str, gpu_architecture: str, model_type: str) -> int:
    """``prompt_attention_query_rows`` of an engine's prompt kernel: 16 where vLLM runs Triton unified attention, else 0."""
    if engine == "vllm" and gpu_architecture in PRE_HOPPER_NVIDIA and model_type in SINK_MODEL_TYPES:
        return TRITON_UNIFIED_BLOCK_M
    return 0


def prompt_query_rows(consts: Constants, engine: str, gpu_architecture: str, model_type: str) -> int:
    """``prompt_attention_query_rows`` a prompt runs at: the constant where set, else the engine's kernel.

    Set: a workload's ``constants`` or ``--set`` (0 too); ``ENGINE_KERNEL`` (the default): the engine's kernel on that
    GPU for that model (:func:`engine_prompt_query_rows`).

    The one reading of the constant the estimate and the planner share (fix189: the planner read a user's 0 as unset).
    """
    given = consts.prompt_attention_query_rows
    return engine_prompt_query_rows(engine, gpu_architecture, model_type) if given == ENGINE_KERNEL else given


def query_tokens_per_block(query_rows: int, queries_per_kv: int) -> int:
    """``BLOCK_Q``: prompt tokens a program holds, ``BLOCK_M // num_queries_per_kv`` (``BLOCK_M`` at least the group)."""
    block_m = query_rows
    while block_m < queries_per_kv:
        block_m *= 2
    return max(1, block_m // max(1, queries_per_kv))


def kernel_flops_per_read_byte(arch: Architecture, query_rows: int) -> float:
    """Attention FLOPs per byte of KV the kernel streams over a prompt's MHA / GQA layers; 0: none such, or no cap.

    A (query token, key) pair of a layer costs ``4 x heads x head_dim`` FLOPs and reads ``kv_heads x 2 x head_dim x
    KV_ELEMENT_BYTES / BLOCK_Q`` bytes: the same ratio in every such layer (a window layer has fewer pairs, not another
    ratio). MLA and linear-attention layers are not this kernel's.
    """
    if query_rows <= 0 or arch.num_kv_heads <= 0:  # perf11: most calls (no such kernel) skip the walk over the layers
        return 0.0
    if not any(layer.state is None and layer.attention != MLA for layer in arch.layers):
        return 0.0
    block_q = query_tokens_per_block(query_rows, arch.num_attention_heads // arch.num_kv_heads)
    flops_per_pair = 4.0 * arch.num_attention_heads * arch.head_dim
    read_bytes_per_pair = arch.num_kv_heads * 2.0 * arch.head_dim * KV_ELEMENT_BYTES / block_q
    return flops_per_pair / read_bytes_per_pair


def prompt_attention_rate(arch: Architecture, compute_flops_per_s: float, bandwidth_gb_per_s: float, consts: Constants) -> float:
    """One GPU's prompt-attention rate, FLOP/s: the tensor rate ``compute_flops_per_s``, capped where the kernel re-reads.

    ``bandwidth_gb_per_s``: the GPU's sustained memory bandwidth (:attr:`Accelerator.memory_bandwidth_gb_per_s`); the
    kernel streams the cache at ``prompt_attention_read_share`` of it (its re-reads of a tile partly hit L2).
    """
    per_byte = kernel_flops_per_read_byte(arch, consts.prompt_attention_query_rows)
    if not per_byte:
        return compute_flops_per_s
    return min(compute_flops_per_s, per_byte * bandwidth_gb_per_s * GB * consts.prompt_attention_read_share)
