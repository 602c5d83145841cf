"""Op-level selective activation checkpointing: what it saves and what it recomputes (newuser60 item 1).

torchtitan's ``--activation_checkpoint.mode selective`` with ``selective_ac_option = "op"`` (its Llama 3 configs'
default; torchtitan/distributed/activation_checkpoint.py) wraps each decoder block in ``checkpoint_wrapper`` with a
policy over the ops the forward runs: the outputs of the ops on its save list are kept (``aten.mm``, the SDPA /
flash attention kernels, ``reduce_scatter``), every other op is recomputed in backward from the block's input, and of
the ``aten.mm`` calls every second one is recomputed too ("Saves output of all compute ops, except every second mm").
A Llama block runs wq, wk, wv, wo, w1, w3, w2 in that order: q, v, w1 and w2's outputs and the attention output are
saved, k, wo and w3 run again, as do the norms, RoPE and SwiGLU's activation. The routed experts' grouped GEMMs
(``torch._grouped_mm``) are not on the list: recomputed.

Megatron-LM's ``--recompute-granularity selective`` (Korthikanti et al., https://arxiv.org/abs/2205.05198) is
another technique under the same word: it recomputes only the attention core, which FlashAttention never saves
anyway, so with it every other activation of the block stays.
"""

from __future__ import annotations

from generator.sizing.architecture import EXPERT, Architecture, Layer
from generator.sizing.memo import memoized

#: Bytes of the fp32 log-sum-exp FlashAttention saves per head and token beside its output.
LSE_BYTES = 4


def _block_matmuls(layer: Layer) -> list[tuple[int, int]]:
    """(output features, active parameters) of each ``aten.mm`` the block runs, in its order (routed experts left out)."""
    return [(lin.out_features, lin.in_features * lin.out_features * lin.copies) for lin in layer.linears if lin.group != EXPERT]


def _routed_active_params(layer: Layer) -> int:
    """Parameters of the routed experts one token passes through in the layer."""
    per_expert = sum(lin.in_features * lin.out_features for lin in layer.linears if lin.group == EXPERT)
    return per_expert * layer.experts_per_token


@memoized
def saved_bytes_per_token_per_layer(arch: Architecture, act_bytes: int = 2) -> int:
    """Bytes one token keeps in the widest decoder block between its forward and its backward.

    The block's input (``checkpoint_wrapper`` keeps it), the attention output and its log-sum-exp, and the outputs of
    the first, third, fifth ... matmul.
    """
    widest = 0
    for layer in arch.layers:
        saved = arch.hidden_size + arch.num_attention_heads * arch.head_dim
        saved += sum(out for position, (out, _params) in enumerate(_block_matmuls(layer)) if position % 2 == 0)
        widest = max(widest, saved * act_bytes + arch.num_attention_heads * LSE_BYTES)
    return widest


@memoized
def recomputed_params(arch: Architecture) -> int:
    """Parameters whose matmul backward runs again a token: the second, fourth ... matmul of each block and its experts."""
    total = 0
    for layer in arch.layers:
        total += sum(params for position, (_out, params) in enumerate(_block_matmuls(layer)) if position % 2 == 1)
        total += _routed_active_params(layer)
    return total
