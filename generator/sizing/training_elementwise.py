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

- each RMSNorm (two a layer, :data:`NORMS_PER_LAYER`): the fp32 upcast (read 2, write 4), the square (read 4, write 4),
  the mean (read 4), the scaling (read 4 + 4, write 4), the downcast (read 4, write 2) and the weight's product (read 2,
  write 2): :data:`RMSNORM_BYTES` x hidden;
- each residual add (two): read two, write one: :data:`RESIDUAL_BYTES` x hidden;
- the rotary embedding of q and k: ``q * cos``, ``rotate_half(q)`` (a negated half and a concatenation), ``* sin`` and
  the sum: :data:`ROPE_BYTES` x (q + k widths) (the cos / sin tables are a token's, not a head's: not counted);
- the attention output's transpose copy back to ``[tokens, heads x head_dim]``: read and write, :data:`TRANSPOSE_BYTES`
  x the q width;
- the gated MLP: the activation of the gate (read 2, write 2) and its product with up (read 4, write 2):
  :data:`GATING_BYTES` x the width ``down_proj`` reads (a mixture of experts' routed experts: each token's
  ``experts_per_token`` of them, and its shared experts).

Backward runs each operator's gradient over the same tensors and reads what forward saved: :data:`BACKWARD_PASSES`
times the forward's bytes; full activation checkpointing runs the forward once more. A layer of a recurrent mixer
(Mamba, linear attention) has no rotary embedding or attention transpose; its norms, residual adds and MLP count.
"""

from __future__ import annotations

from generator.sizing.architecture import EXPERT, MLP, SHARED_EXPERT, Architecture
from generator.sizing.memo import memoized

#: Norms a decoder layer runs (input and post-attention RMSNorm).
NORMS_PER_LAYER = 2
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
#: Backward's bytes over the forward's.
BACKWARD_PASSES = 2


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
    total = 0.0
    for index, layer in enumerate(arch.layers):
        nbytes: float = (NORMS_PER_LAYER * RMSNORM_BYTES + RESIDUALS_PER_LAYER * RESIDUAL_BYTES) * arch.hidden_size
        nbytes += GATING_BYTES * _down_width(arch, index)
        if layer.state is None:  # an attention layer: rotary q and k, the output's transpose
            nbytes += ROPE_BYTES * (q_width + k_width) + TRANSPOSE_BYTES * q_width
        total += nbytes
    return total


def eager_bytes_per_token(arch: Architecture, checkpointing: str) -> float:
    """HBM bytes one token moves through the eager operators in a training step: forward, backward, recompute."""
    passes = 1 + BACKWARD_PASSES + (1 if checkpointing == "full" else 0)
    return forward_bytes_per_token(arch) * passes
