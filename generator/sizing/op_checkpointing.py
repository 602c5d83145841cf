"""Op-level selective activation checkpointing: what it saves and what it recomputes (newuser60 item 1).

torchtitan's ``--activation_checkpoint.mode selective`` with ``selective_ac_option = "op"`` (its Llama 3 configs'
default; torchtitan/distributed/activation_checkpoint.py) wraps each decoder block in ``checkpoint_wrapper`` with a
policy over the ops the forward runs: the outputs of the ops on its save list are kept (``aten.mm``, the SDPA /
flash attention kernels, ``reduce_scatter``), every other op is recomputed in backward from the block's input, and of
the ``aten.mm`` calls every second one is recomputed too ("Saves output of all compute ops, except every second mm").
A Llama block runs wq, wk, wv, wo, w1, w3, w2 in that order: q, v, w1 and w2's outputs and the attention output are
saved, k, wo and w3 run again, as do the norms, RoPE and SwiGLU's activation. What is not an ``aten.mm`` is recomputed
and not counted: the routed experts' grouped GEMMs (``torch._grouped_mm``) and a linear with a bias, which runs as
``aten.addmm`` (review40 item 10: Qwen2's q / k / v). A LoRA linear runs three matmuls in the sequence, the base's,
``lora_A``'s and ``lora_B``'s (PEFT's ``result + lora_B(lora_A(dropout(x)))``; review40 item 3).

Megatron-LM's ``--recompute-granularity selective`` (Korthikanti et al., https://arxiv.org/abs/2205.05198) is
another technique under the same word: it recomputes only the attention core, which FlashAttention never saves
anyway, so with it every other activation of the block stays.
"""

from __future__ import annotations

from generator.sizing.architecture import EXPERT, Architecture, Layer
from generator.sizing.memo import memoized

#: Bytes of the fp32 log-sum-exp FlashAttention saves per head and token beside its output.
LSE_BYTES = 4

#: (decoder layer, linear name) of each linear a LoRA job adapts; empty for full training.
Adapted = frozenset[tuple[int, str]]


def _block_matmuls(layer: Layer, adapted: Adapted, rank: int) -> list[tuple[int, int]]:
    """(output features, active parameters) of each ``aten.mm`` the block runs, in its order."""
    out: list[tuple[int, int]] = []
    for lin in layer.linears:
        if lin.group == EXPERT or lin.bias:
            continue  # a grouped GEMM or an addmm: neither counted nor saved
        out.append((lin.out_features, lin.in_features * lin.out_features * lin.copies))
        if (layer.number, lin.name) in adapted:
            out += [(rank, lin.in_features * rank), (lin.out_features, rank * lin.out_features)]
    return out


def _recomputed_outside_mm(layer: Layer) -> int:
    """Parameters one token passes through in the layer's matmuls that are not ``aten.mm``: routed experts, biased."""
    routed = sum(lin.in_features * lin.out_features for lin in layer.linears if lin.group == EXPERT)
    biased = sum(lin.in_features * lin.out_features * lin.copies for lin in layer.linears if lin.bias and lin.group != EXPERT)
    return routed * layer.experts_per_token + biased


def _attention_output(arch: Architecture, layer: Layer) -> int:
    """Features of the attention kernel's output a token: ``o_proj``'s input (MLA's heads x v_head_dim)."""
    o_proj = next((lin for lin in layer.linears if lin.name == "o_proj"), None)
    return o_proj.in_features if o_proj is not None else arch.num_attention_heads * arch.head_dim


@memoized
def saved_bytes_per_token_per_layer(arch: Architecture, adapted: Adapted = frozenset(), rank: int = 0) -> int:
    """Bytes one token keeps in the widest decoder block between its forward and its backward.

    The block's input (``checkpoint_wrapper`` keeps it), the attention output and its log-sum-exp, and the outputs of
    the first, third, fifth ... matmul.
    """
    widest = 0
    for layer in arch.layers:
        saved = arch.hidden_size + _attention_output(arch, layer)
        saved += sum(out for position, (out, _) in enumerate(_block_matmuls(layer, adapted, rank)) if position % 2 == 0)
        widest = max(widest, saved * 2 + arch.num_attention_heads * LSE_BYTES)
    return widest


@memoized
def recomputed_params(arch: Architecture, adapted: Adapted = frozenset(), rank: int = 0) -> int:
    """Parameters whose matmuls run again a token.

    The second, fourth ... ``aten.mm`` of each block, and the matmuls that are none (routed experts, biased linears).
    """
    total = 0
    for layer in arch.layers:
        total += sum(params for position, (_, params) in enumerate(_block_matmuls(layer, adapted, rank)) if position % 2)
        total += _recomputed_outside_mm(layer)
    return total


#: Model types whose decoder layer normalizes the MLP's output before the residual add (Gemma 2 / 3's
#: ``post_feedforward_layernorm``, OLMo 2 / 3's): that norm saves the down projection's output, so a recompute runs it.
POST_MLP_NORM_TYPES = ("gemma2", "gemma3", "olmo2", "olmo3")


@memoized
def early_stop_skipped_params(arch: Architecture) -> int:
    """Parameters whose matmuls a non-reentrant checkpoint's early stop leaves out of the recomputed forward.

    PyTorch's non-reentrant ``torch.utils.checkpoint`` counts the tensors autograd saved in a block's forward and, in
    the recompute, raises ``_StopRecomputationError`` from its pack hook once the last of them is saved again
    (``early_stop``, on by default: https://docs.pytorch.org/docs/stable/checkpoint.html). An op saves its inputs
    before its kernel runs (``gen_variable_type.py``: ``setup_derivative``, which saves the inputs, is emitted before
    ``emit_call``), so the last op that saves anything never runs in the recompute: a dense block's MLP down
    projection, whose output only the residual add takes, and that saves nothing. Counted for a full fine-tune's
    dense blocks; none where a norm follows the MLP (:data:`POST_MLP_NORM_TYPES`), in a mixture-of-experts block (the
    routing weights multiply each expert's output and save it), or for a layer whose last linear is not its MLP's.
    A LoRA adapter on that linear runs ``lora_A`` after the base matmul and saves its output, so the base matmul runs
    again (the caller counts full fine-tunes only).
    """
    if arch.model_type.startswith(POST_MLP_NORM_TYPES):
        return 0
    total = 0
    for layer in arch.layers:
        if layer.experts_per_token or not layer.linears or any(lin.group == EXPERT for lin in layer.linears):
            continue
        last = layer.linears[-1]
        if last.group == "mlp":
            total += last.in_features * last.out_features * last.copies
    return total
