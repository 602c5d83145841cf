"""KV cache bytes by layer type: GQA/MQA heads, MLA latents, sliding windows; per GPU under TP/PP.

- GQA/MQA: K and V, ``kv_heads * (head_dim_k + head_dim_v)`` elements per token and layer.
  Under TP each rank keeps ``ceil(kv_heads / tp)`` heads (replicated when TP > KV heads).
- MLA (DeepSeek V2/V3): one compressed latent plus the shared RoPE key,
  ``kv_lora_rank + qk_rope_head_dim`` elements per token and layer, replicated on every TP
  rank (vLLM's MLA backend stores the latent once per rank).
- Sliding-window layers keep ``min(context, window)`` tokens per sequence.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from generator.sizing.architecture import MLA, Architecture, Layer
from generator.sizing.weights import Parallelism, stage_layers


class KvCacheSizes(NamedTuple):
    """KV cache of one model replica for a context and a number of concurrent sequences."""

    #: One token, all layers, whole model (sliding windows not applied).
    bytes_per_token: int
    #: ``context`` tokens x ``sequences``, whole model, sliding windows honoured.
    total_bytes: int
    #: The same on the fullest GPU of the replica.
    per_gpu_bytes: int
    #: Bytes one GPU needs per token of a full-attention layer set (for capacity in tokens).
    per_gpu_bytes_per_token: int
    context_tokens: int
    sequences: int


def _layer_elements_per_gpu(layer: Layer, tp: int) -> int:
    """KV elements per token one GPU holds for ``layer`` (whole heads; MLA latents replicated)."""
    if layer.attention == MLA or not layer.kv_heads:
        return layer.kv_elements_per_token
    return layer.kv_elements_per_token // layer.kv_heads * math.ceil(layer.kv_heads / tp)


def _tokens_held(layer: Layer, context: int) -> int:
    return context if layer.window_tokens is None else min(context, layer.window_tokens)


def _ceil_bytes(bits: int) -> int:
    return -(-bits // 8)


def size_kv_cache(
    arch: Architecture, kv_bits: int, context_tokens: int, sequences: int = 1, par: Parallelism = Parallelism()
) -> KvCacheSizes:
    """KV cache for ``sequences`` concurrent sequences of ``context_tokens`` each."""
    per_token = sum(layer.kv_elements_per_token for layer in arch.layers) * kv_bits
    total = sum(layer.kv_elements_per_token * _tokens_held(layer, context_tokens) for layer in arch.layers) * kv_bits * sequences
    stage_bits: list[int] = []
    stage_token_bits: list[int] = []
    for layers in stage_layers(arch.num_layers, par.pp):
        held = token = 0
        for i in layers:
            elems = _layer_elements_per_gpu(arch.layers[i], par.tp)
            held += elems * _tokens_held(arch.layers[i], context_tokens)
            token += elems
        stage_bits.append(held * kv_bits * sequences)
        stage_token_bits.append(token * kv_bits)
    return KvCacheSizes(
        bytes_per_token=_ceil_bytes(per_token),
        total_bytes=_ceil_bytes(total),
        per_gpu_bytes=_ceil_bytes(max(stage_bits)),
        per_gpu_bytes_per_token=_ceil_bytes(max(stage_token_bits)),
        context_tokens=context_tokens,
        sequences=sequences,
    )
