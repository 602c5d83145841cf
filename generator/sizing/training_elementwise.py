"""HBM traffic of a decoder layer's memory-bound operators where eager PyTorch runs them one kernel each.

Transformers' decoder layers run their norms, rotary embedding, gating and residual adds as separate PyTorch
operators (``LlamaRMSNorm.forward``: ``hidden_states.to(torch.float32)``, ``pow(2).mean(-1, keepdim=True)``,
``hidden_states * torch.rsqrt(variance + eps)``, ``self.weight * hidden_states.to(input_dtype)``;
``apply_rotary_pos_emb``: ``(q * cos) + (rotate_half(q) * sin)``; ``LlamaMLP``: ``down_proj(act_fn(gate_proj(x)) *
up_proj(x))``; ``residual + hidden_states`` twice; the attention output's ``transpose(1, 2).contiguous()``,
https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/modeling_llama.py). Each is a pass
over the activations that no GEMM hides: the Hugging Face Trainer runs them so unless ``torch_compile`` is set (default
False, https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.torch_compile) or
Liger's kernels replace them (``LigerRMSNorm``, ``liger_rotary_pos_emb``, ``LigerSwiGLUMLP``,
https://github.com/linkedin/Liger-Kernel). Which frameworks run them eager is a profile field
(:attr:`~generator.sizing.frameworks.FrameworkProfile.eager_elementwise`); a job with fused kernels
(:meth:`~generator.sizing.training.TrainingSetup.kernels_fused`) runs them fused whatever its framework.

Bytes a token and layer, forward, bf16 activations (2 B an element, fp32 4 B):

- each RMSNorm over the hidden state (two a layer; Gemma 2 / 3's four sandwich norms, input, post-attention, pre- and
  post-feed-forward; Cohere's one: :func:`generator.sizing.architecture.hidden_norms_per_layer`): the fp32 upcast (read
  2, write 4), the square (read 4, write 4), the mean (read 4), the scaling (read 4, write 4), the downcast (read 4,
  write 2) and the weight's product (read 2, write 2): :data:`RMSNORM_BYTES` x hidden; where the attention normalises
  q and k (Qwen3's and Gemma 3's ``q_norm`` / ``k_norm`` over each head, OLMo 2's over the projections:
  :func:`generator.sizing.architecture.qk_norm_elements`) the same over every q and k element;
- each residual add (two): read two, write one: :data:`RESIDUAL_BYTES` x hidden;
- the rotary embedding of q and k: ``q * cos``, ``rotate_half(q)`` (a negated half and a concatenation), ``* sin`` and
  the sum: :data:`ROPE_BYTES` x (q + k widths) (the cos / sin tables are a token's, not a head's: not counted);
- the attention output's transpose copy back to ``[tokens, heads x head_dim]``: read and write, :data:`TRANSPOSE_BYTES`
  x the q width;
- the gated MLP: the activation of the gate (read 2, write 2) and its product with up (read 4, write 2):
  :data:`GATING_BYTES` x the width ``down_proj`` reads (a mixture of experts' routed experts: each token's
  ``experts_per_token`` of them, and its shared experts);
- a mixture-of-experts block's routing through Transformers 5's ``grouped_mm`` experts (``integrations/moe.py``
  ``grouped_mm_experts_forward``), each on the token's ``experts_per_token`` copies of its hidden state: the copies
  gathered (``hidden_states[token_idx]``, read and write), sorted by expert (``[perm]``), weighted by the router
  (``* sample_weights``), put back in token order (``[inv_perm]``), 4 + 4 + 4 + 4 bytes a copied element, and summed
  over the copies (read 2 a copy, write 2 a token): :data:`MOE_ROUTING_BYTES` x copies x hidden, plus 2 x hidden.

Backward runs each operator's gradient over the same tensors and reads what forward saved: :data:`BACKWARD_PASSES`
times the forward's bytes; full activation checkpointing runs the forward once more. The loss after the layers
(:func:`loss_bytes_per_token`): Transformers' ``ForCausalLMLoss`` upcasts the LM head's bf16 logits to fp32 and runs
``cross_entropy`` over them (https://github.com/huggingface/transformers/blob/main/src/transformers/loss/loss_utils.py),
:data:`LOSS_BYTES` a token and vocabulary element forward and backward, once a step (the checkpointed blocks do not
hold it); Gemma 3's 262,144-token vocabulary moves more there than its 26 layers' forward passes do. A layer of a
recurrent mixer (Mamba, linear attention) has no rotary embedding or attention transpose; its norms, residual adds and MLP
count.

**Host dispatch.** Eager PyTorch launches each of those operators, and each GEMM, from the CPU one at a time: Python, the
dispatcher, autocast and autograd's bookkeeping before every kernel. Where a kernel's GPU work is shorter than that host
time, the GPU waits for the next launch, and a step of short kernels runs at the CPU's pace, not the GPU's
(https://horace.io/brrr_intro.html, "Overhead"; Transformer Engine measured PyTorch's CPU time for one ``nn.Linear``
forward at 13.48 us on an H100 DGX's Xeon 8480C, https://github.com/NVIDIA/TransformerEngine/issues/2053).
:func:`kernels_per_micro_batch` counts the kernels a micro-batch launches from the same operator lists: each RMSNorm
:data:`RMSNORM_KERNELS`, each residual add one, the rotary embedding :data:`ROPE_KERNELS` (q and k), the attention and
its transpose one each, q_norm and k_norm :data:`RMSNORM_KERNELS` each where the model has them, the gating
:data:`GATING_KERNELS`, one GEMM per linear; a mixture-of-experts block through
Transformers 5's ``grouped_mm`` experts (``integrations/moe.py`` ``grouped_mm_experts_forward``: the router's softmax,
top-k and renormalisation, then each token's copies gathered, sorted by expert, counted with ``histc`` into offsets,
two ``torch._grouped_mm`` calls, weighted, unsorted and summed) :data:`MOE_GROUPED_KERNELS` beside its gating; each
PEFT LoRA layer :data:`PEFT_KERNELS` (``lora_A``, ``lora_B``, the scaling and the sum), :data:`PEFT_CAST_KERNELS` more
where it casts its input and autocast its fp32 weights. Backward launches :data:`BACKWARD_PASSES` times the forward's
kernels, full checkpointing one forward more. The step times the forward's (Python's) at ``eager_forward_kernel_host_s``
each and the backward's (autograd's C++ engine) at ``eager_backward_kernel_host_s``
(:func:`generator.sizing.training_step.training_step`).
"""

from __future__ import annotations

from generator.sizing.architecture import (
    EXPERT,
    MLP,
    SHARED_EXPERT,
    Architecture,
    hidden_norms_per_layer,
    qk_norm_elements,
)
from generator.sizing.memo import memoized

#: Bytes a hidden element moves through one eager RMSNorm (2 + 4, 4 + 4, 4, 4 + 4 + 4, 4 + 2, 2 + 2).
RMSNORM_BYTES = 36
#: Residual adds a layer runs, and the bytes each moves a hidden element (read two bf16, write one).
RESIDUALS_PER_LAYER = 2
RESIDUAL_BYTES = 6
#: Bytes a q or k element moves through eager rotary embedding (``q * cos``, ``rotate_half``, ``* sin``, the sum).
ROPE_BYTES = 20
#: Bytes a q-width element moves through the attention output's transpose copy.
TRANSPOSE_BYTES = 4
#: Bytes an intermediate element moves through the MLP's activation and gating product.
GATING_BYTES = 10
#: Bytes a copied hidden element moves through a grouped_mm experts block's gather, sort, weighting, unsort and sum.
MOE_ROUTING_BYTES = 18
#: Bytes a logit (token x vocabulary element) moves through an eager cross-entropy over bf16 logits: the fp32 upcast
#: (read 2, write 4), ``log_softmax`` (read 4, write 4); backward ``nll_loss``'s gradient (write 4), ``log_softmax``'s
#: (read 4 + 4, write 4) and the cast back to bf16 (read 4, write 2).
LOSS_BYTES = 36
#: Backward's bytes over the forward's.
BACKWARD_PASSES = 2
#: Kernels one eager RMSNorm launches: the fp32 upcast, square, mean, ``+ eps``, ``rsqrt``, scaling, downcast, weight.
RMSNORM_KERNELS = 8
#: Kernels of the eager rotary embedding of q and k: ``* cos``, the negation and concatenation of ``rotate_half``,
#: ``* sin`` and the sum, for each.
ROPE_KERNELS = 10
#: Kernels of the gated MLP's activation and its product with ``up``.
GATING_KERNELS = 2
#: Kernels of a Transformers 5 ``grouped_mm`` experts block beside its gating: the router's softmax, top-k, sum, division
#: and cast (5); the copies' index, two ``argsort``, three gathers by the sort, ``histc`` and ``cumsum`` (8); two
#: ``torch._grouped_mm`` (2); the routing-weight product, the gather back, the sum over top-k and the cast (4).
MOE_GROUPED_KERNELS = 19
#: Kernels of a PEFT LoRA layer beside its base GEMM: ``lora_A``, ``lora_B``, ``* scaling`` and the sum.
PEFT_KERNELS = 4
#: Where PEFT casts the input to fp32 adapters: that cast, and autocast's bf16 copies of the input and both weights.
PEFT_CAST_KERNELS = 4


def _down_width(arch: Architecture, index: int) -> float:
    """The MLP width a token's ``down_proj`` reads in layer ``index``: its routed experts' and shared experts' summed."""
    layer = arch.layers[index]
    width = 0.0
    for lin in layer.linears:
        if lin.group not in (MLP, EXPERT, SHARED_EXPERT) or lin.out_features != arch.hidden_size:
            continue
        visits = min(lin.copies, layer.experts_per_token) if lin.group == EXPERT else lin.copies
        width += lin.in_features * visits
    return width


@memoized  # the planner times every layout of a job: one walk of the layers a model
def forward_bytes_per_token(arch: Architecture) -> float:
    """HBM bytes one token moves through the eager operators of every layer in one forward pass."""
    q_width = arch.num_attention_heads * arch.head_dim
    k_width = arch.num_kv_heads * arch.head_dim
    norms = hidden_norms_per_layer(arch.model_type)
    total = 0.0
    for index, layer in enumerate(arch.layers):
        nbytes: float = (norms * RMSNORM_BYTES + RESIDUALS_PER_LAYER * RESIDUAL_BYTES) * arch.hidden_size
        nbytes += GATING_BYTES * _down_width(arch, index)
        if layer.is_moe:  # the routed copies' gather, sort, weighting, unsort and sum
            nbytes += (MOE_ROUTING_BYTES * layer.experts_per_token + 2) * arch.hidden_size
        if layer.state is None:  # an attention layer: rotary q and k, the output's transpose, q_norm and k_norm
            nbytes += ROPE_BYTES * (q_width + k_width) + TRANSPOSE_BYTES * q_width
            nbytes += RMSNORM_BYTES * qk_norm_elements(arch)
        total += nbytes
    return total


def loss_bytes_per_token(arch: Architecture, loss: str) -> float:
    """HBM bytes one token's logits move through an eager cross-entropy, forward and backward.

    Transformers' ``ForCausalLMLoss`` upcasts the LM head's bf16 logits (``logits.float()``) and runs
    ``nn.functional.cross_entropy`` over them: :data:`LOSS_BYTES` a vocabulary element. A chunked loss moves the same
    bytes a chunk at a time; a fused one (Liger, Unsloth) never writes the logits out: 0. Not recomputed under
    checkpointing (the loss sits outside the checkpointed decoder blocks).
    """
    return LOSS_BYTES * arch.vocab_size if loss in ("standard", "chunked") and not arch.encoder_only else 0.0


def eager_bytes_per_token(arch: Architecture, checkpointing: str) -> float:
    """HBM bytes one token moves through the eager operators in a training step: forward, backward, recompute."""
    passes = 1 + BACKWARD_PASSES + (1 if checkpointing == "full" else 0)
    return forward_bytes_per_token(arch) * passes


@memoized
def forward_kernels(arch: Architecture) -> int:
    """Kernels one forward pass of every decoder layer launches as eager PyTorch operators and GEMMs (LoRA aside)."""
    total = 0
    qk_norms = 2 if qk_norm_elements(arch) else 0
    for layer in arch.layers:
        kernels = hidden_norms_per_layer(arch.model_type) * RMSNORM_KERNELS + RESIDUALS_PER_LAYER
        if layer.state is None:  # an attention layer: rotary q and k, the attention, the output's transpose, q/k norms
            kernels += ROPE_KERNELS + 2 + qk_norms * RMSNORM_KERNELS
        kernels += sum(lin.copies for lin in layer.linears if lin.group != EXPERT)  # the experts' two grouped GEMMs below
        if layer.is_moe:
            kernels += MOE_GROUPED_KERNELS
        groups = {lin.group for lin in layer.linears}
        kernels += GATING_KERNELS * (bool(groups & {MLP, EXPERT}) + (SHARED_EXPERT in groups))  # each gated MLP's
        total += kernels
    return total


def kernels_per_micro_batch(arch: Architecture, checkpointing: str, adapted: int, cast_input: bool) -> tuple[int, int]:
    """(forward, backward) kernels a micro-batch launches through the layers, the recomputed forward among the first.

    Python launches the forward's operators one call at a time; autograd's engine launches the backward's from C++, so
    the two cost the CPU differently a kernel (``eager_forward_kernel_host_s``, ``eager_backward_kernel_host_s``).
    ``adapted``: PEFT LoRA layers the forward runs (0 without PEFT); ``cast_input``: each casts its input to fp32
    adapters (:func:`generator.sizing.training.peft_casts_inputs`).
    """
    forward = forward_kernels(arch) + adapted * (PEFT_KERNELS + (PEFT_CAST_KERNELS if cast_input else 0))
    return forward * (2 if checkpointing == "full" else 1), forward * BACKWARD_PASSES
