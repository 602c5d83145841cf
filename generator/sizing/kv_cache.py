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

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import MLA, Architecture, Layer
from generator.sizing.memo import memoized
from generator.sizing.weights import Parallelism, stage_layers


class KvCacheSizes(NamedTuple):
    """KV cache of one model replica for a context and a number of concurrent sequences."""

    #: One token, all layers, whole model (sliding windows not applied).
    bytes_per_token: int
    #: ``context`` tokens x ``sequences``, whole model, sliding windows honoured.
    total_bytes: int
    #: The same on the fullest GPU of the replica.
    per_gpu_bytes: int
    context_tokens: int
    sequences: int


def layer_elements_per_gpu(layer: Layer, tp: int) -> int:
    """KV elements per token one GPU holds for ``layer`` (whole heads; MLA latents replicated)."""
    if layer.attention == MLA or not layer.kv_heads:
        return layer.kv_elements_per_token
    return layer.kv_elements_per_token // layer.kv_heads * math.ceil(layer.kv_heads / tp)


def tokens_held(layer: Layer, context: int) -> int:
    """Tokens of a ``context``-token sequence one layer keeps (``min(context, window)`` for sliding layers)."""
    return context if layer.window_tokens is None else min(context, layer.window_tokens)


def ceil_bytes(bits: int) -> int:
    """Bits rounded up to whole bytes."""
    return -(-bits // 8)


def size_kv_cache(
    arch: Architecture, kv_bits: int, context_tokens: int, sequences: int = 1, par: Parallelism = Parallelism()
) -> KvCacheSizes:
    """KV cache for ``sequences`` concurrent sequences of ``context_tokens`` each.

    Per GPU, expert-parallel attention groups (``par.attention_dp``) split the sequences.
    """
    per_token_elements, sequence_elements, stage_elements = _elements(arch, context_tokens, par.tp, par.pp)
    sequences_per_gpu = -(-sequences // par.attention_dp)
    return KvCacheSizes(
        bytes_per_token=ceil_bytes(per_token_elements * kv_bits),
        total_bytes=ceil_bytes(sequence_elements * kv_bits * sequences),
        per_gpu_bytes=ceil_bytes(stage_elements * kv_bits * sequences_per_gpu),
        context_tokens=context_tokens,
        sequences=sequences,
    )


def stage_kv_elements(arch: Architecture, context_tokens: int, tp: int, pp: int) -> int:
    """KV elements one sequence of ``context_tokens`` keeps on the fullest GPU (times bits and sequences: its bytes)."""
    return _elements(arch, context_tokens, tp, pp)[2]


@memoized
def _elements(arch: Architecture, context_tokens: int, tp: int, pp: int) -> tuple[int, int, int]:
    """KV elements of one sequence: per token (all layers), for ``context_tokens`` tokens, and on the fullest GPU.

    Bytes for any precision and number of sequences are these times bits and sequences, so the walk
    over the layers happens once per (architecture, context, TP, PP).
    """
    per_token = sum(layer.kv_elements_per_token for layer in arch.layers)
    sequence = sum(layer.kv_elements_per_token * tokens_held(layer, context_tokens) for layer in arch.layers)
    stages = [
        sum(layer_elements_per_gpu(arch.layers[i], tp) * tokens_held(arch.layers[i], context_tokens) for i in layers)
        for layers in stage_layers(arch.num_layers, pp)
    ]
    return per_token, sequence, max(stages)
