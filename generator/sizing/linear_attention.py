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
does not apply to them).

Built exactly too for IBM Granite-4.0-H (``model_type: granitemoehybrid``, newuser71 item 2): ``layer_types`` names each
layer ``mamba`` (a Mamba-2 mixer) or ``attention`` (GQA, no position embedding needed for the count); every layer has
the MoE block (``num_local_experts`` experts of ``intermediate_size``, a router) beside a shared MLP of
``shared_intermediate_size``, or the shared MLP alone where there are no experts. Shapes from Transformers
``models/granitemoehybrid/modular_granitemoehybrid.py`` (``GraniteMoeHybridMambaLayer`` is ``BambaMixer``,
``models/bamba/modeling_bamba.py``) and vLLM ``model_executor/layers/mamba/mamba_mixer2.py``:

- Mamba-2 (``mamba``): ``in_proj`` hidden -> intermediate + conv_dim + heads (z, then x / B / C, then dt;
  intermediate = ``mamba_expand`` x hidden = heads x ``mamba_d_head``, conv_dim = intermediate + 2 x ``mamba_n_groups``
  x ``mamba_d_state``), ``conv1d`` depthwise over conv_dim channels of ``mamba_d_conv`` taps (bias
  ``mamba_conv_bias``), ``dt_bias``, ``A_log`` and ``D`` one per head, a gated RMSNorm over the intermediate size,
  ``out_proj`` intermediate -> hidden (projections biased where ``mamba_proj_bias``). vLLM splits heads over TP; with
  one group and TP > 1 it gives every rank the group's B / C rows of ``in_proj`` and ``conv1d``
  (``extra_groups_for_head_shards``, ``mamba_v2_sharded_weight_loader``; held whole on each GPU here, review71 item 5),
  splits ``conv1d``'s other channels, ``A`` / ``D`` / ``dt_bias`` and the gated norm over TP
  (:meth:`RecurrentState.mixer_small_params`), and refuses other groups TP does not divide.
- State (vLLM ``MambaStateShapeCalculator.mamba2_state_shape``): conv ``(d_conv - 1) x (intermediate + 2 x (groups +
  extra) x d_state) / tp`` with extra = 0 where TP divides the groups, else tp - groups; SSM ``heads / tp x d_head x
  d_state``; both in the model dtype by default (``MambaStateDtypeCalculator.mamba2_state_dtype``).

Pure: no I/O.
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
#: Model types whose Mamba-2 layers are sized here (see the module notes).
MAMBA2_MODEL_TYPES = frozenset({"granitemoehybrid"})

_MAMBA2_FIELDS = ("mamba_n_heads", "mamba_d_head", "mamba_d_state", "mamba_n_groups", "mamba_d_conv", "mamba_expand")

#: The name of the B / C rows of a one-group Mamba-2 ``in_proj``, which vLLM holds whole on every TP rank.
MAMBA2_SHARED_GROUP_PROJ = "in_proj_bc_one_group"

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
    #: Elements of one head's state: value head dim x key head dim (Mamba-2: head dim x state size).
    head_elements: int
    #: Mamba-2's groups, whose B and C channels (``group_channels`` each group) join ``conv_channels`` in the conv
    #: state; 0 where there are none (Gated DeltaNet's ``conv_channels`` are all of them).
    groups: int = 0
    group_channels: int = 0
    #: Mamba-2: whether ``conv1d`` has a bias (``mamba_conv_bias``), for the mixer's small tensors.
    conv_bias: bool = False

    def padded_groups(self, tp: int) -> int:
        """Mamba-2's groups as ``MambaMixer2`` builds them at ``tp``: padded to the TP size where it does not divide them.

        vLLM ``extra_groups_for_head_shards``: 0 extra where TP divides the groups, else ``tp - groups`` (one group at TP
        8 becomes 8, each rank keeping the one group's B / C whole).
        """
        return self.groups if not self.groups or self.groups % tp == 0 else tp

    def elements_per_gpu(self, tp: int) -> int:
        """Elements one GPU keeps for one sequence (vLLM's ``divide``: both dimensions split evenly).

        ``mamba2_state_shape``: conv ``(d_conv - 1) x (intermediate + 2 x padded groups x d_state) / tp``, SSM
        ``heads / tp x d_head x d_state``.
        """
        channels = self.conv_channels + self.padded_groups(tp) * self.group_channels
        return self.conv_tokens * (channels // tp) + self.heads // tp * self.head_elements

    def mixer_small_params(self, tp: int) -> int | None:
        """A Mamba-2 mixer's tensors beside its linears on one GPU at ``tp`` (None: not a Mamba-2 state).

        ``MambaMixer2``: ``conv1d`` a ``ColumnParallelLinear`` over the padded conv channels (weight ``d_conv`` a
        channel, and its bias), ``A``, ``D`` and ``dt_bias`` split by heads, the gated norm's weight split over the
        intermediate size (``Mixer2RMSNormGated``); at TP1 the layer's whole count.
        """
        if not self.groups:
            return None
        channels = (self.conv_channels + self.padded_groups(tp) * self.group_channels) // tp
        conv = channels * (self.conv_tokens + 1) + (channels if self.conv_bias else 0)
        return conv + 3 * (self.heads // tp) + self.conv_channels // tp

    def tp_problem(self, tp: int) -> str | None:
        """Why vLLM refuses this layer's state at ``tp`` (its ``divide`` asserts, MambaMixer2's one-group rule)."""
        if self.heads % tp:
            return f"recurrent-state heads ({self.heads}) must be divisible by the tensor parallel size ({tp})"
        if self.conv_channels % tp:
            return f"recurrent-state channels ({self.conv_channels}) must be divisible by the tensor parallel size ({tp})"
        if self.groups > 1 and self.groups % tp:
            return (
                f"Mamba-2 groups ({self.groups}) must be divisible by the tensor parallel size ({tp}), or be one "
                "(vLLM MambaMixer2)"
            )
        return None


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
    if model_type in MAMBA2_MODEL_TYPES:
        _check_mamba2(config, model_type)
        return
    missing = [key for key in _GDN_FIELDS if config.get(key) is None]
    if model_type not in LINEAR_ATTENTION_MODEL_TYPES or missing:
        reason = f"config lacks {', '.join(missing)}" if missing else "only qwen3_next is sized"
        kind = "linear-attention (Gated DeltaNet)" if "linear_num_value_heads" in config else "state-space (Mamba)"
        if "full_attention_interval" in config and "linear_num_value_heads" not in config:
            kind = "linear-attention (Gated DeltaNet)"
        if _lightning_layers(config):
            kind = "linear-attention (lightning attention, attn_type_list 0)"
            reason = "only qwen3_next is sized"
        if kind.startswith("state-space"):
            # newuser71 item 2: Granite-4.0-H, Nemotron-H and Falcon-H1 were told their config "lacks" Qwen3-Next's
            # Gated DeltaNet fields, as if adding them would help
            raise ArchitectureError(
                f"cannot size model_type '{model_type}': it is a Mamba / SSM (state-space) hybrid, whose Mamba layers "
                "keep a fixed recurrent state per sequence instead of a KV cache, and specgen does not size this "
                "model's Mamba / SSM hybrid layers yet (the recurrent layers it sizes are Granite-4.0-H's Mamba-2, "
                "model_type granitemoehybrid, and Qwen3-Next's Gated DeltaNet); sizing them as attention would get the "
                "KV cache and the parameters wrong"
            )
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


def _check_mamba2(config: Mapping[str, Any], model_type: str) -> None:
    """Refuse a Mamba-2 config whose fields are missing or do not fit together (as ``BambaMixer`` builds it).

    The ``mamba_*`` fields are needed only where ``layer_types`` names a ``mamba`` layer (review71 item 12: an
    attention-only layout, as Transformers builds it, was refused without them).
    """
    types = config.get("layer_types")
    mamba = not isinstance(types, list) or "mamba" in types
    missing = [key for key in (*(_MAMBA2_FIELDS if mamba else ()), "layer_types") if config.get(key) is None]
    if missing:
        layers = " (its mamba layers' Mamba-2 mixers need them)" if isinstance(types, list) else ""
        raise ArchitectureError(
            f"cannot size model_type '{model_type}' (Mamba-2 hybrid): config lacks {', '.join(missing)}{layers}"
        )
    if not mamba:
        return
    for key in _MAMBA2_FIELDS:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ArchitectureError(f"config field '{key}' must be a positive integer, got {str(value)[:40]!r}")
    for key in ("mamba_conv_bias", "mamba_proj_bias"):
        if not isinstance(config.get(key, False), bool):
            raise ArchitectureError(f"config field '{key}' must be true or false, got {str(config[key])[:40]!r}")
    inner = config["mamba_expand"] * config["hidden_size"]
    if config["mamba_n_heads"] * config["mamba_d_head"] != inner:
        raise ArchitectureError(
            f"mamba_n_heads {config['mamba_n_heads']} x mamba_d_head {config['mamba_d_head']} must equal mamba_expand "
            f"{config['mamba_expand']} x hidden_size {config['hidden_size']} ({inner:,}), the Mamba-2 intermediate size"
        )
    if config["mamba_n_heads"] % config["mamba_n_groups"]:
        raise ArchitectureError(
            f"mamba_n_heads {config['mamba_n_heads']} must be a multiple of mamba_n_groups {config['mamba_n_groups']}"
        )


#: ``layer_types`` entries by model type: Qwen3-Next's, Granite-4.0-H's (``GraniteMoeHybridConfig``).
_LAYER_TYPE_NAMES = {
    "granitemoehybrid": {"mamba": LINEAR, "attention": FULL},
}
_GDN_LAYER_TYPES = {"linear_attention": LINEAR, "full_attention": FULL}


def layer_kinds(config: Mapping[str, Any], n_layers: int, model_type: str = "qwen3_next") -> list[str]:
    """Per layer: :data:`LINEAR` or :data:`FULL`, from ``layer_types`` or ``full_attention_interval``.

    Transformers' ``Qwen3NextConfig``: layer ``i`` is linear unless ``(i + 1) % full_attention_interval == 0``.
    """
    types = config.get("layer_types")
    if types:
        if not isinstance(types, list) or len(types) != n_layers:
            raise ArchitectureError(f"layer_types must list one entry per layer ({n_layers})")
        kinds = _LAYER_TYPE_NAMES.get(model_type, _GDN_LAYER_TYPES)
        unknown = next((t for t in types if not isinstance(t, str) or t not in kinds), None)
        if unknown is not None:
            raise ArchitectureError(f"layer_types entry {str(unknown)[:40]!r} is not {' or '.join(kinds)}")
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


def mamba2(config: Mapping[str, Any], hidden: int) -> tuple[tuple[Linear, ...], int, RecurrentState]:
    """Linears, small tensors and per-sequence state of one Mamba-2 layer (see the module notes)."""
    heads, head_dim = config["mamba_n_heads"], config["mamba_d_head"]
    d_state, groups, kernel = config["mamba_d_state"], config["mamba_n_groups"], config["mamba_d_conv"]
    inner = config["mamba_expand"] * hidden
    group_dim = 2 * groups * d_state  # B and C
    conv_dim = inner + group_dim
    bias = bool(config.get("mamba_proj_bias", False))
    conv_bias = bool(config.get("mamba_conv_bias", True))
    group_proj = MAMBA2_SHARED_GROUP_PROJ if groups == 1 else "in_proj_bc"
    linears = (
        Linear("in_proj", hidden, 2 * inner + heads, ATTENTION, bias),  # z, x and dt
        Linear(group_proj, hidden, group_dim, ATTENTION, bias),  # B and C
        Linear("out_proj", inner, hidden, ATTENTION, bias),
    )
    # conv1d weight (and bias), dt_bias, A_log and D, the gated RMSNorm
    other = conv_dim * kernel + (conv_dim if conv_bias else 0) + 3 * heads + inner
    state = RecurrentState(inner, kernel - 1, heads, head_dim * d_state, groups, 2 * d_state, conv_bias)
    return linears, other, state


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
        "linear-attention / Mamba layers are sized for serving with vLLM only (vLLM's hybrid KV cache)"
    )


def has_state(arch: Architecture) -> bool:
    """Whether any layer keeps a recurrent state."""
    return any(layer.state is not None for layer in arch.layers)
