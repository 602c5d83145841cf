"""Hybrid models whose linear-attention layers keep a fixed recurrent state per sequence instead of a KV cache.

Built exactly for Qwen3-Next (``model_type: qwen3_next``, Qwen/Qwen3-Next-80B-A3B): three of every four layers
are Gated DeltaNet, every ``full_attention_interval``-th layer is gated full attention; every layer has the MoE
block (routed experts, one shared expert behind a sigmoid gate). Shapes from transformers
``models/qwen3_next/modeling_qwen3_next.py`` and vLLM ``model_executor/models/qwen3_next.py``:

- Gated DeltaNet (``linear_attn``): ``in_proj_qkvz`` hidden -> 2 x key_dim + 2 x value_dim, ``in_proj_ba``
  hidden -> 2 x value heads, ``conv1d`` a depthwise convolution of ``linear_conv_kernel_dim`` taps over
  ``conv_dim = 2 x key_dim + value_dim`` channels (no bias), ``dt_bias`` and ``A_log`` one per value head, ``norm``
  a gated RMSNorm over one value head, ``out_proj`` value_dim -> hidden (key_dim = key heads x key head dim,
  value_dim = value heads x value head dim).
- Gated attention (``self_attn``): ``q_proj`` emits the query and its output gate (2 x heads x head_dim), K/V as
  GQA, ``q_norm`` / ``k_norm`` over head_dim.

State per sequence and layer (vLLM ``MambaStateShapeCalculator.gated_delta_net_state_shape``): a conv state of
``(kernel - 1) x conv_dim / tp`` and a recurrent state of ``value heads / tp x value head dim x key head dim``.
vLLM keeps both in the model dtype unless ``--mamba-cache-dtype`` / ``--mamba-ssm-cache-dtype`` say otherwise
(``MambaStateDtypeCalculator.gated_delta_net_state_dtype``: "auto" is the model dtype; ``--kv-cache-dtype fp8``
does not apply to them). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.errors import ArchitectureError
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import ATTENTION, FULL, Layer, Linear

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from generator.sizing.architecture import Architecture

#: Attention kind of a layer that keeps a recurrent state and no KV per token.
LINEAR = "linear"

#: Model types whose linear-attention layers are sized here; any other config naming such layers is refused.
LINEAR_ATTENTION_MODEL_TYPES = frozenset({"qwen3_next"})

_GDN_FIELDS = (
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
)

#: Times a decode step moves each sequence's state through memory: read, then written back updated.
STATE_PASSES_PER_STEP = 2

#: Bits of one state element by the checkpoint's dtype (vLLM's "auto" state dtype is the model dtype).
_DTYPE_BITS = {"bfloat16": 16, "float16": 16, "fp16": 16, "bf16": 16, "float32": 32, "fp32": 32}


class RecurrentState(NamedTuple):
    """The fixed state one linear-attention layer keeps per sequence (whole model, before the TP split)."""

    #: Channels of the causal convolution (``conv_dim``), split across TP ranks.
    conv_channels: int
    #: Past tokens the convolution keeps: ``kernel - 1``.
    conv_tokens: int
    #: Heads of the recurrent state, split across TP ranks.
    heads: int
    #: Elements of one head's state: value head dim x key head dim.
    head_elements: int

    def elements_per_gpu(self, tp: int) -> int:
        """Elements one GPU keeps for one sequence (vLLM's ``divide``: both dimensions split evenly)."""
        return self.conv_tokens * (self.conv_channels // tp) + self.heads // tp * self.head_elements


#: Config fields that name layers keeping a recurrent state: Qwen3-Next / Qwen3.5 Gated DeltaNet, and the Mamba / Mamba-2
#: mixers of Jamba (``mamba_d_state``, ``attn_layer_period``), Nemotron-H (``hybrid_override_pattern``,
#: ``mamba_num_heads``, ``ssm_state_size``), Granite-4.0-H and Falcon-H1 (``mamba_n_heads``, ``mamba_d_state``).
STATE_MARKERS = (
    "full_attention_interval",
    "linear_num_value_heads",
    "mamba_d_state",
    "mamba_n_heads",
    "mamba_num_heads",
    "mamba_expand",
    "ssm_state_size",
    "hybrid_override_pattern",
    "attn_layer_period",
)


def is_linear_attention(config: Mapping[str, Any]) -> bool:
    """Whether a config names layers that keep a recurrent state (linear attention or Mamba) beside or instead of KV."""
    return any(key in config for key in STATE_MARKERS) or _lightning_layers(config)


def _lightning_layers(config: Mapping[str, Any]) -> bool:
    """Whether ``attn_type_list`` (MiniMax) names a linear (lightning) attention layer: any entry that is not 1.

    newuser32 item 2: MiniMax-Text-01 / MiniMax-M1 (``attn_type_list`` 0 = lightning attention, 1 = softmax attention,
    https://huggingface.co/MiniMaxAI/MiniMax-Text-01; vLLM ``models/minimax_text_01.py`` builds a linear-attention
    layer for each 0) were sized as 80 softmax layers, KV 8x too large. MiniMax-M2's list is all 1s (every layer
    softmax attention), sized as attention. A list that is not one 0 / 1 per layer is refused as well.
    """
    types = config.get("attn_type_list")
    if types is None:
        return False
    if not isinstance(types, list) or any(isinstance(t, bool) or t not in (0, 1) for t in types):
        raise ArchitectureError(
            f"attn_type_list must list 0 (linear attention) or 1 (softmax attention) per layer, got {str(types)[:60]}"
        )
    return any(t == 0 for t in types)


def check_supported(config: Mapping[str, Any], model_type: str) -> None:
    """Refuse a linear-attention config this module does not size exactly, naming what is missing."""
    missing = [key for key in _GDN_FIELDS if config.get(key) is None]
    if model_type not in LINEAR_ATTENTION_MODEL_TYPES or missing:
        reason = f"config lacks {', '.join(missing)}" if missing else "only qwen3_next is sized"
        kind = "linear-attention (Gated DeltaNet)" if "linear_num_value_heads" in config else "state-space (Mamba)"
        if "full_attention_interval" in config and "linear_num_value_heads" not in config:
            kind = "linear-attention (Gated DeltaNet)"
        if _lightning_layers(config):
            kind = "linear-attention (lightning attention, attn_type_list 0)"
            reason = "only qwen3_next is sized"
        raise ArchitectureError(
            f"cannot size model_type '{model_type}': its {kind} layers keep a fixed recurrent state per sequence "
            f"instead of a KV cache, which specgen sizes exactly only for Qwen3-Next ({reason}); sizing them as "
            "attention would get the KV cache and the parameters wrong"
        )
    for key in _GDN_FIELDS:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ArchitectureError(f"config field '{key}' must be a positive integer, got {value!r}")
    if config["linear_num_value_heads"] % config["linear_num_key_heads"]:
        raise ArchitectureError(
            f"linear_num_value_heads {config['linear_num_value_heads']} must be a multiple of "
            f"linear_num_key_heads {config['linear_num_key_heads']}"
        )


def layer_kinds(config: Mapping[str, Any], n_layers: int) -> list[str]:
    """Per layer: :data:`LINEAR` or :data:`FULL`, from ``layer_types`` or ``full_attention_interval``.

    Transformers' ``Qwen3NextConfig``: layer ``i`` is linear unless ``(i + 1) % full_attention_interval == 0``.
    """
    types = config.get("layer_types")
    if types:
        if not isinstance(types, list) or len(types) != n_layers:
            raise ArchitectureError(f"layer_types must list one entry per layer ({n_layers})")
        kinds = {"linear_attention": LINEAR, "full_attention": FULL}
        unknown = next((t for t in types if t not in kinds), None)
        if unknown is not None:
            raise ArchitectureError(f"layer_types entry {str(unknown)[:40]!r} is not linear_attention or full_attention")
        return [kinds[t] for t in types]
    interval = config.get("full_attention_interval", 4)
    if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
        raise ArchitectureError(f"full_attention_interval must be a positive integer, got {interval!r}")
    return [FULL if (i + 1) % interval == 0 else LINEAR for i in range(n_layers)]


def gated_delta_net(config: Mapping[str, Any], hidden: int) -> tuple[tuple[Linear, ...], int, RecurrentState]:
    """Linears, small tensors and per-sequence state of one Gated DeltaNet layer."""
    k_heads, v_heads = config["linear_num_key_heads"], config["linear_num_value_heads"]
    k_dim, v_dim = config["linear_key_head_dim"], config["linear_value_head_dim"]
    kernel = config["linear_conv_kernel_dim"]
    key_dim, value_dim = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_dim + value_dim
    linears = (
        Linear("in_proj_qkvz", hidden, 2 * key_dim + 2 * value_dim, ATTENTION),
        Linear("in_proj_ba", hidden, 2 * v_heads, ATTENTION),
        Linear("out_proj", value_dim, hidden, ATTENTION),
    )
    other = conv_dim * kernel + 2 * v_heads + v_dim  # conv1d weight, dt_bias and A_log, the gated norm
    return linears, other, RecurrentState(conv_dim, kernel - 1, v_heads, v_dim * k_dim)


def gated_attention(hidden: int, heads: int, kv_heads: int, head_dim: int) -> tuple[tuple[Linear, ...], int, int]:
    """Linears, small tensors and KV elements per token of one gated full-attention layer."""
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    linears = (
        Linear("q_proj", hidden, 2 * q_dim, ATTENTION),  # the query and its sigmoid output gate
        Linear("k_proj", hidden, kv_dim, ATTENTION),
        Linear("v_proj", hidden, kv_dim, ATTENTION),
        Linear("o_proj", q_dim, hidden, ATTENTION),
    )
    return linears, 2 * head_dim, 2 * kv_dim  # q_norm and k_norm


#: FLOPs of a Gated DeltaNet token per element of a head's (key dim x value dim) state, the recurrence's update
#: (vLLM's ``fused_recurrent_gated_delta_rule``, ``fla/ops/gated_delta_rule``): decay the state by ``exp(g)`` (1),
#: read it with the key (``h^T k``, 2), add the delta rule's rank-1 correction ``k (beta (v - h^T k))^T`` (2), read
#: the output with the query (``h^T q``, 2).
STATE_FLOPS_PER_ELEMENT = 7


def layer_state_flops(layer: Layer) -> int:
    """FLOPs one token spends in ``layer``'s recurrence (whole model, before TP): 0 for an attention layer.

    The state's update and reads (:data:`STATE_FLOPS_PER_ELEMENT` an element of every head's state) and the causal
    convolution's ``kernel`` taps over its channels (2 a tap): the same for every token, whatever the context, where
    an attention layer's (query, key) pairs grow with it.
    """
    state = layer.state
    if state is None:
        return 0
    return STATE_FLOPS_PER_ELEMENT * state.heads * state.head_elements + 2 * (state.conv_tokens + 1) * state.conv_channels


def state_bits(arch: Architecture) -> int:
    """Bits of one state element: vLLM's "auto" mamba cache dtype, the model's dtype."""
    bits = _DTYPE_BITS.get(arch.torch_dtype)
    if bits is None:
        raise ArchitectureError(f"no state dtype for torch_dtype '{arch.torch_dtype}'")
    return bits


def layer_state_bytes(layer: Layer, tp: int, bits: int) -> int:
    """Bytes of one sequence's state in ``layer`` on one GPU (0 for attention layers)."""
    state = layer.state
    return 0 if state is None else state.elements_per_gpu(tp) * bits // 8


#: What is not sized for a model whose layers keep a recurrent state (only vLLM serving is), as an error names it.
UNSIZED_USES = {
    "training": "cannot size training of model_type '{model_type}'",
    "sglang": "cannot size SGLang's KV pool for model_type '{model_type}'",
    "offload": "cannot place model_type '{model_type}' across GPU, RAM and disk (llama.cpp)",
}


def check_sized_use(arch: Architecture, use: str) -> None:
    """Refuse ``use`` (a key of :data:`UNSIZED_USES`) of a model with recurrent-state layers; nothing otherwise."""
    if has_state(arch):
        raise ArchitectureError(unsized_use_message(arch, use))


def unsized_use_message(arch: Architecture, use: str) -> str:
    """Why ``use`` of this model is refused: its linear-attention layers are sized for vLLM serving only."""
    return (
        f"{UNSIZED_USES[use].format(model_type=arch.model_type)}: the recurrent state and activations of its "
        "linear-attention layers are sized for serving with vLLM only (vLLM's hybrid KV cache)"
    )


def has_state(arch: Architecture) -> bool:
    """Whether any layer keeps a recurrent state."""
    return any(layer.state is not None for layer in arch.layers)
