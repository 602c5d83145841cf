"""KV cache bytes by layer type: GQA/MQA heads, MLA latents, sliding windows; per GPU under TP/PP.

- GQA/MQA: K and V, ``kv_heads * (head_dim_k + head_dim_v)`` elements per token and layer.
  Under TP each rank keeps ``ceil(kv_heads / tp)`` heads (replicated when TP > KV heads).
- MLA (DeepSeek V2/V3): one compressed latent plus the shared RoPE key,
  ``kv_lora_rank + qk_rope_head_dim`` elements per token and layer, replicated on every TP
  rank (vLLM's MLA backend stores the latent once per rank).
- Sliding-window layers keep ``min(context, window)`` tokens per sequence.
- Linear-attention layers (Qwen3-Next's Gated DeltaNet) keep no KV per token but a fixed state per sequence, in the
  model dtype (:mod:`generator.sizing.linear_attention`): it is added to every sequence's bytes, whatever its length.
"""

from __future__ import annotations

import math

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import MLA, Architecture, Layer
from generator.sizing.linear_attention import STATE_PASSES_PER_STEP, has_state, layer_state_bytes, state_bits
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
    #: Recurrent state of one sequence, whole model (linear-attention layers; 0 without them), in ``total_bytes``.
    state_bytes_per_sequence: int = 0


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


@memoized
def size_kv_cache(
    arch: Architecture, kv_bits: int, context_tokens: int, sequences: int = 1, par: Parallelism = Parallelism()
) -> KvCacheSizes:
    """KV cache for ``sequences`` concurrent sequences of ``context_tokens`` each.

    Per GPU, expert-parallel attention groups (``par.attention_dp``) split the sequences. Kept per input: every GPU's
    layouts of one TP x PP ask it alike, twice a layout (its memory and its KV capacity; speed100).
    """
    per_token_elements, sequence_elements, stage_elements = _elements(arch, context_tokens, par.tp, par.pp, par.stages)
    sequences_per_gpu = -(-sequences // par.attention_dp)
    state_total, state_stages = state_bytes(arch, par.tp, par.pp, par.stages)
    return KvCacheSizes(
        bytes_per_token=ceil_bytes(per_token_elements * kv_bits),
        total_bytes=ceil_bytes(sequence_elements * kv_bits * sequences) + state_total * sequences,
        per_gpu_bytes=max(
            ceil_bytes(elements * kv_bits * sequences_per_gpu) + state * sequences_per_gpu
            for elements, state in zip(stage_elements, state_stages, strict=True)
        ),
        context_tokens=context_tokens,
        sequences=sequences,
        state_bytes_per_sequence=state_total,
    )


def windowed_split(arch: Architecture, kv_bits: int) -> tuple[int, int]:
    """KV bytes a token takes in the layers that keep every token, and the most a sequence holds in sliding layers.

    The whole model's; a sequence of ``n`` tokens holds ``n`` times the first plus at most the second (newuser55 item 4:
    Gemma 3 27B's 507,904 B a token counted its 52 sliding layers as growing with the context; 81,920 B do, the sliding
    ones hold at most 436 MB a request).
    """
    growing = sum(layer.kv_elements_per_token for layer in arch.layers if layer.window_tokens is None)
    windowed = sum(layer.kv_elements_per_token * layer.window_tokens for layer in arch.layers if layer.window_tokens)
    return ceil_bytes(growing * kv_bits), ceil_bytes(windowed * kv_bits)


def token_bytes_per_gpu(arch: Architecture, kv_bits: int, par: Parallelism) -> int:
    """KV bytes of one token of one sequence on the fullest GPU (TP splits the KV heads, PP the layers; no state)."""
    return ceil_bytes(max(_elements(arch, 1, par.tp, par.pp, par.stages)[2]) * kv_bits)


def stage_decode_bits(arch: Architecture, context_tokens: int, kv_bits: int, tp: int, pp: int, stages: str = "first") -> int:
    """Bits one decode step moves per sequence on the busiest stage's GPU: its KV read, and its recurrent state.

    A Gated DeltaNet step reads each state and writes it back updated (vLLM's ``fused_recurrent_gated_delta_rule``
    stores the final state in place; ``causal_conv1d_update`` shifts the conv state in place), so the state moves
    :data:`~generator.sizing.linear_attention.STATE_PASSES_PER_STEP` times; the KV of one new token is not counted.
    """
    return busiest_stage_decode_bits(arch, _elements(arch, context_tokens, tp, pp, stages)[2], kv_bits, tp, pp, stages)


def busiest_stage_decode_bits(
    arch: Architecture, stage_kv_elements: tuple[int, ...], kv_bits: int, tp: int, pp: int, stages: str
) -> int:
    """The busiest stage's bits a decode step: its ``stage_kv_elements`` read at ``kv_bits``, its recurrent state moved.

    The state moves :data:`~generator.sizing.linear_attention.STATE_PASSES_PER_STEP` times (read, written back).
    """
    states = state_bytes(arch, tp, pp, stages)[1]
    return max(kv * kv_bits + 8 * STATE_PASSES_PER_STEP * state for kv, state in zip(stage_kv_elements, states, strict=True))


@memoized
def _elements(
    arch: Architecture, context_tokens: int, tp: int, pp: int, stages: str = "first"
) -> tuple[int, int, tuple[int, ...]]:
    """KV elements of one sequence: per token (all layers), for ``context_tokens`` tokens, and on each stage's GPU.

    Bytes for any precision and number of sequences are these times bits and sequences, so the walk
    over the layers happens once per (architecture, context, TP, PP).
    """
    per_token = sum(layer.kv_elements_per_token for layer in arch.layers)
    sequence = sum(layer.kv_elements_per_token * tokens_held(layer, context_tokens) for layer in arch.layers)
    by_stage = tuple(
        sum(layer_elements_per_gpu(arch.layers[i], tp) * tokens_held(arch.layers[i], context_tokens) for i in layers)
        for layers in stage_layers(arch.num_layers, pp, stages)
    )
    return per_token, sequence, by_stage


@memoized
def state_bytes(arch: Architecture, tp: int, pp: int, stages: str = "first") -> tuple[int, tuple[int, ...]]:
    """Recurrent-state bytes of one sequence: whole model, and on each stage's GPU (zeros without linear attention)."""
    if not has_state(arch):
        return 0, (0,) * pp
    bits = state_bits(arch)
    total = sum(layer_state_bytes(layer, 1, bits) for layer in arch.layers)
    by_stage = tuple(
        sum(layer_state_bytes(arch.layers[i], tp, bits) for i in layers) for layers in stage_layers(arch.num_layers, pp, stages)
    )
    return total, by_stage
