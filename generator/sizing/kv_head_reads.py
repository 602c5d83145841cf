"""Decode KV traffic of an attention kernel that reads a KV head's cache once for each query head sharing it.

TensorRT-LLM's masked multi-head attention kernel, its only generation kernel before XQA (v0.8), runs one thread
block per sequence and query head and has each read the cache of the KV head its query head maps to ("The different
kernels assign a threadblock for B x H pair", ``hi_kv = hi / qhead_per_kv``): a GQA layer's cache is read once per
query head of its group, not once. XQA reads it once for the group ("New XQA-kernel provides 2.4x more Llama-70B
throughput", https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/XQA-kernel.md), as FlashInfer's and
FlashAttention's decode kernels do; the planner's engines read it once (constants.py
``decode_kv_read_per_query_head`` 0), the calibration rows of the older runtime set 1.
"""

from __future__ import annotations

import math

from generator.sizing.architecture import MLA, Architecture, Layer
from generator.sizing.kv_cache import busiest_stage_decode_bits, layer_elements_per_gpu, tokens_held
from generator.sizing.memo import memoized
from generator.sizing.weights import stage_layers


def query_heads_per_kv_read(arch: Architecture, layer: Layer, tp: int) -> int:
    """Times one GPU's kernel reads a layer's cached KV heads a step: its query heads over its KV heads (1 for MLA).

    Under TP a GPU holds ``ceil(heads / tp)`` query heads and ``ceil(kv_heads / tp)`` KV heads (replicated when TP
    exceeds the KV heads, :func:`generator.sizing.kv_cache.layer_elements_per_gpu`).
    """
    if layer.attention == MLA or not layer.kv_heads:
        return 1
    return max(1, math.ceil(arch.num_attention_heads / tp) // math.ceil(layer.kv_heads / tp))


@memoized
def per_query_head_decode_bits(arch: Architecture, context_tokens: int, kv_bits: int, tp: int, pp: int, stages: str) -> int:
    """:func:`~generator.sizing.kv_cache.stage_decode_bits` with each layer's KV read once per query head.

    The recurrent state (linear-attention layers) moves as there; only the cached KV is read more than once.
    """
    reads = tuple(
        sum(
            layer_elements_per_gpu(arch.layers[i], tp)
            * tokens_held(arch.layers[i], context_tokens)
            * query_heads_per_kv_read(arch, arch.layers[i], tp)
            for i in layers
        )
        for layers in stage_layers(arch.num_layers, pp, stages)
    )
    return busiest_stage_decode_bits(arch, reads, kv_bits, tp, pp, stages)
