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
from fractions import Fraction
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


def _layer_elements_per_gpu(arch: Architecture, layer: Layer, tp: int) -> Fraction:
    if layer.attention == MLA or not layer.kv_heads:
        return Fraction(layer.kv_elements_per_token)
    heads = math.ceil(layer.kv_heads / tp)
    return Fraction(layer.kv_elements_per_token * heads, layer.kv_heads)


def _tokens_held(layer: Layer, context: int) -> int:
    return context if layer.window_tokens is None else min(context, layer.window_tokens)


def size_kv_cache(
    arch: Architecture, kv_bits: int, context_tokens: int, sequences: int = 1, par: Parallelism = Parallelism()
) -> KvCacheSizes:
    """KV cache for ``sequences`` concurrent sequences of ``context_tokens`` each."""
    per_token = sum(layer.kv_elements_per_token for layer in arch.layers) * kv_bits
    total = sum(layer.kv_elements_per_token * _tokens_held(layer, context_tokens) for layer in arch.layers) * kv_bits * sequences
    stage_bits: list[Fraction] = []
    stage_token_bits: list[Fraction] = []
    for layers in stage_layers(arch.num_layers, par.pp):
        held = Fraction(0)
        token = Fraction(0)
        for i in layers:
            elems = _layer_elements_per_gpu(arch, arch.layers[i], par.tp)
            held += elems * _tokens_held(arch.layers[i], context_tokens)
            token += elems
        stage_bits.append(held * kv_bits * sequences)
        stage_token_bits.append(token * kv_bits)
    return KvCacheSizes(
        bytes_per_token=math.ceil(Fraction(per_token, 8)),
        total_bytes=math.ceil(Fraction(total, 8)),
        per_gpu_bytes=math.ceil(max(stage_bits) / 8),
        per_gpu_bytes_per_token=math.ceil(max(stage_token_bits) / 8),
        context_tokens=context_tokens,
        sequences=sequences,
    )


def per_gpu_bytes_per_sequence(arch: Architecture, kv_bits: int, context_tokens: int, par: Parallelism) -> int:
    """KV bytes one sequence of ``context_tokens`` occupies on the fullest GPU."""
    return size_kv_cache(arch, kv_bits, context_tokens, 1, par).per_gpu_bytes
