"""Model architecture: an exact, per-layer description built from a Hugging Face ``config.json``.

The layout is data (linear shapes, attention kind, KV elements per token) so that parameter
counts, weight bytes under any format, KV cache and LoRA adapters are all derived from one
structure. Supported: dense, GQA / MQA, ``head_dim`` != hidden / heads, tied embeddings,
biases, MoE (routed + shared experts, dense-first layers, ``mlp_only_layers``, ERNIE 4.5's names), MLA
(DeepSeek V2/V3), sliding-window and hybrid local/global layers (``layer_types`` or ``sliding_window_pattern``), and
``text_config`` wrappers (Gemma 3, Llama 4) with their vision tower, Qwen2-VL / Qwen2.5-VL towers. Layers of other
kinds (cross-attention, DeepSeek-V3.2's indexer, per-layer ``block_configs`` / ``block_types``) are refused.
Llama 4's chunked local attention is sized as full attention (an overestimate of its KV cache beyond the 8,192-token
chunk). BERT / RoBERTa / XLM-RoBERTa encoders are
laid out by :mod:`generator.sizing.encoder` in the same structure (no KV, no LM head). Qwen3-Next's Gated DeltaNet
layers, which keep a recurrent state instead of KV, are built in :mod:`generator.sizing.linear_attention`; other
state-space hybrids (Mamba-2: Nemotron-H, Granite-4.0-H, Jamba) are refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from generator.errors import ArchitectureError, InputError
from generator.named_tuple import NamedTuple
from generator.sizing.context_limit import LlamaCppRope, llama_cpp_rope, served_context_tokens
from generator.sizing.file_weights import FileWeights
from generator.sizing.gguf_arch import gguf_architecture
from generator.sizing.memo import memoized
from generator.sizing.quantization import QuantizationConfig, parse_quantization_config
from generator.sizing.vision import VisionTower, is_qwen_vl_tower, vision_tower

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.sizing.linear_attention import RecurrentState

#: Linear groups; weight formats decide per group what is quantized.
ATTENTION = "attention"
MLP = "mlp"
EXPERT = "expert"
SHARED_EXPERT = "shared_expert"
ROUTER = "router"

FULL = "full"
SLIDING = "sliding"
MLA = "mla"


class Linear(NamedTuple):
    """One weight matrix (``copies`` identical ones for routed experts)."""

    name: str
    in_features: int
    out_features: int
    group: str
    bias: bool = False
    copies: int = 1

    @property
    def weight_params(self) -> int:
        """Parameters in the weight matrices (all copies)."""
        return self.in_features * self.out_features * self.copies

    @property
    def bias_params(self) -> int:
        """Parameters in the biases (all copies)."""
        return self.out_features * self.copies if self.bias else 0


class Layer(NamedTuple):
    """One decoder layer: its matrices, the small tensors kept at high precision, and its KV."""

    number: int
    attention: str
    linears: tuple[Linear, ...]
    #: Norm weights, attention sinks, biases of fused blocks: never quantized.
    other_params: int
    #: KV elements stored per token in this layer, for the whole model (before TP split).
    kv_elements_per_token: int
    #: KV heads (0 for MLA, whose latent is shared by all heads).
    kv_heads: int
    #: Tokens this layer keeps per sequence (``None``: the whole context).
    window_tokens: int | None = None
    experts_per_token: int = 0
    #: The fixed state a linear-attention layer keeps per sequence instead of KV (see ``linear_attention``).
    state: RecurrentState | None = None

    @property
    def params(self) -> int:
        """Every parameter of the layer."""
        return self.other_params + sum(lin.weight_params + lin.bias_params for lin in self.linears)

    @property
    def inactive_params(self) -> int:
        """Routed-expert parameters a token does not use in this layer."""
        total = 0
        for lin in self.linears:
            if lin.group == EXPERT and lin.copies > self.experts_per_token:
                per_expert = (lin.weight_params + lin.bias_params) // lin.copies
                total += per_expert * (lin.copies - self.experts_per_token)
        return total

    @property
    def is_moe(self) -> bool:
        """Whether this layer has routed experts."""
        return any(lin.group == EXPERT for lin in self.linears)


class Architecture(NamedTuple):
    """A decoder-only language model (or a BERT-family encoder, ``encoder_only``), exactly enough to count and size it."""

    model_type: str
    hidden_size: int
    vocab_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    layers: tuple[Layer, ...]
    #: Final norm and any other top-level small tensors.
    other_params: int
    #: Parameters of a vision tower and projector (multimodal checkpoints), kept at 16 bit.
    vision_params: int = 0
    #: The vision tower itself: its layout and what an image costs in tokens (None: a text model).
    vision: VisionTower | None = None
    #: The config's ``architectures`` (its class names, ``Qwen3ForCausalLM``), as given.
    architectures: tuple[str, ...] = ()
    #: The config says its attention is bidirectional (``is_causal: false``, gte-Qwen2's embedders).
    bidirectional: bool = False
    rotary_dim: int = 0
    torch_dtype: str = "bfloat16"
    quantization: QuantizationConfig | None = None
    notes: tuple[str, ...] = ()

    @property
    def num_layers(self) -> int:
        """Number of decoder layers."""
        return len(self.layers)

    @property
    def embedding_params(self) -> int:
        """Input embedding matrix."""
        return self.vocab_size * self.hidden_size

    @property
    def lm_head_params(self) -> int:
        """Output projection (zero when tied to the embeddings, and for an encoder, which has none)."""
        return 0 if self.tie_word_embeddings or self.encoder_only else self.vocab_size * self.hidden_size

    @property
    def logits_params(self) -> int:
        """Parameters the LM head multiplies a token by, tied or not (none for an encoder)."""
        return 0 if self.encoder_only else self.vocab_size * self.hidden_size

    #: Every parameter, embeddings and vision tower included (set by :func:`parse_architecture`).
    params_total: int = 0
    #: Parameters used per token: the total minus the routed experts a token skips and the vision tower (run once per
    #: image, not per token: newuser32 item 12, Llama 4 Scout's "17B active" is its text path).
    params_active: int = 0
    #: Exact bytes read from the checkpoint's files; used when weights are held in their format.
    file_weights: FileWeights | None = None
    #: Longest sequence a serving engine accepts (vLLM's derived max_model_len, see ``context_limit``); 0: unknown.
    max_model_len: int = 0
    #: A bidirectional encoder (BERT family, :mod:`generator.sizing.encoder`): no LM head, no KV cache, served by
    #: pooling only.
    encoder_only: bool = False
    #: Top-level parameters that cost no per-token matmul: an encoder's position and token-type tables (lookups), its
    #: pooler and classifier (one token a request).
    no_flop_params: int = 0
    #: llama.cpp's context limit where rope_scaling stretches the served one (the GGUF's context_length and the flags that
    #: lift it, :func:`generator.sizing.context_limit.llama_cpp_rope`); None: the same limit as vLLM's.
    llama_cpp_rope: LlamaCppRope | None = None
    #: The quantization of a published checkpoint of this model in another format (the catalog's NVIDIA NVFP4 release,
    #: fix196): its list of unquantized modules sizes that format asked of this model, as the checkpoint vLLM loads.
    published: QuantizationConfig | None = None

    @property
    def is_moe(self) -> bool:
        """Whether any layer has routed experts (found once per architecture: the planner asks it of every option)."""
        return _routed_experts(self) != (0, 0)

    @property
    def uses_mla(self) -> bool:
        """Whether the model's attention is MLA (DeepSeek-V2/V3, Kimi-K2): its layers' own record, the one rule.

        review78 item 10: the planner's ``latent_attention`` detail (vLLM ``--block-size 1`` on AMD pools) tested
        ``num_kv_heads == 0``, ik_llama.cpp's ``-mla 3`` the layers; they agree only while MLA is the one attention
        whose KV heads are counted as 0.
        """
        return any(layer.attention == MLA for layer in self.layers)

    @property
    def routed_experts(self) -> tuple[int, int]:
        """(routed experts per MoE layer, experts each token uses); (0, 0) for dense models."""
        return _routed_experts(self)

    @property
    def flop_params(self) -> int:
        """Active parameters that cost matmul FLOPs: the input embedding is a lookup unless tied to the LM head."""
        lookup = 0 if self.tie_word_embeddings else self.embedding_params
        return self.params_active - lookup - self.no_flop_params

    def with_counts(self) -> Architecture:
        """A copy with ``params_total`` and ``params_active`` counted from the layers."""
        total = (
            self.embedding_params
            + self.lm_head_params
            + self.other_params
            + self.vision_params
            + sum(layer.params for layer in self.layers)
        )
        inactive = sum(layer.inactive_params for layer in self.layers)
        return self._replace(params_total=total, params_active=total - self.vision_params - inactive)


@memoized
def _routed_experts(arch: Architecture) -> tuple[int, int]:
    """:attr:`Architecture.routed_experts`, found once per architecture."""
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT:
                return lin.copies, layer.experts_per_token
    return 0, 0


@memoized  # of the model alone; the layout search times thousands of steps of one model (speed103); here since acc163 so
# llama.cpp's prompt (generator/sizing/llama_cpp_prompt.py) reads it without training_moe's imports
def routed_expert_params(arch: Architecture) -> int:
    """Routed-expert parameters a token multiplies: ``top_k`` experts' matrices in each MoE layer."""
    total = 0
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT and lin.copies:
                per_expert = (lin.weight_params + lin.bias_params) // lin.copies
                total += per_expert * min(layer.experts_per_token, lin.copies)
    return total


_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def _int(cfg: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = cfg.get(key, default)
    if value is None:
        raise ArchitectureError(f"config field '{key}' is required for this architecture")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ArchitectureError(f"config field '{key}' must be a non-negative integer, got {value!r}")
    return value


def _flag(cfg: Mapping[str, Any], key: str) -> bool:
    """A config's boolean field (absent: false); a string or number there is refused (fuzz28 L5: "false" was true)."""
    value = cfg.get(key, False)
    if not isinstance(value, bool):
        raise ArchitectureError(f"config field '{key}' must be true or false, got {str(value)[:40]!r}")
    return value


def _opt_int(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return _int(cfg, key)
    return None


def parse_architecture(config: Mapping[str, Any]) -> Architecture:
    """Build an :class:`Architecture` from a Hugging Face ``config.json`` mapping.

    Raises :class:`ArchitectureError` naming the missing or malformed fields.
    """
    tower: VisionTower | None = None
    text = config
    top_type = str(config.get("model_type") or "")
    vision_notes: list[str] = []
    _check_model_type(config)
    _check_layout(config, top_type)
    if isinstance(config.get("text_config"), Mapping):
        text = {**config["text_config"]}
        for key in ("tie_word_embeddings", "torch_dtype", "quantization_config"):
            if key in config and key not in text:
                text[key] = config[key]
        tower = vision_tower(config, int(text.get("hidden_size") or 0), top_type)
    elif isinstance(config.get("vision_config"), Mapping):
        # a flat config (Qwen2-VL, Qwen2.5-VL as published): its tower was dropped without a word (newuser32 item 6)
        if is_qwen_vl_tower(config["vision_config"]):
            tower = vision_tower(config, int(config.get("hidden_size") or 0), top_type)
        else:
            vision_notes.append(
                "the config's vision_config (a vision tower beside a flat text config) is not counted in the parameters "
                "or weights"
            )
    text = _with_transformers_defaults(text, str(text.get("model_type") or config.get("model_type") or ""))
    _check_counted_layers(config, text)
    missing = [key for key in _REQUIRED if text.get(key) is None]
    if missing:
        kind = text.get("model_type") or config.get("model_type") or "unknown"
        raise ArchitectureError(
            f"cannot size model_type '{kind}': config lacks {', '.join(missing)} "
            "(a decoder-only Hugging Face config.json is expected)"
        )
    model_type = str(text.get("model_type") or config.get("model_type") or "unknown")
    if model_type in COUNTED_ENCODER_TYPES and not config.get("is_encoder_decoder"):
        from generator.sizing.encoder import parse_encoder  # its own layers (imports this module's types)

        return parse_encoder(text, model_type)
    if model_type in ENCODER_ONLY_MODEL_TYPES or config.get("is_encoder_decoder"):
        # other encoders (DeBERTa's relative attention, ModernBERT, nomic_bert's rotary SwiGLU...) and encoder-decoders
        # are not the layers counted here: sized as one, the counts would be wrong, not exact
        raise ArchitectureError(
            f"cannot size model_type '{model_type}': an encoder-decoder model or an encoder-only one outside the BERT / "
            "RoBERTa / XLM-RoBERTa family, whose layers specgen does not count exactly; BERT, RoBERTa and XLM-RoBERTa "
            "encoders (bge, e5, all-MiniLM, bge-m3, bge-reranker) and decoder-only models (Qwen3-Embedding, gte-Qwen2, "
            "e5-mistral) are sized for task: embed / score"
        )
    linear_kinds: list[str] | None = None
    from generator.sizing import linear_attention  # it imports this module

    if linear_attention.is_linear_attention(text) or model_type in linear_attention.MAMBA2_MODEL_TYPES:
        # Qwen3-Next: three of every four layers are Gated DeltaNet (a fixed recurrent state per sequence, no KV per
        # token); sized as attention, their KV would be 4x too large (newuser21 item 1). Other such models are refused.
        # Granite-4.0-H's layer_types are read by its names whether or not it has Mamba layers (review71 item 12: an
        # attention-only layout without mamba_* fields was told of Qwen3-Next's / Gemma's layer types).
        linear_attention.check_supported(text, model_type)
        linear_kinds = linear_attention.layer_kinds(text, _int(text, "num_hidden_layers"), model_type)
    hidden = _int(text, "hidden_size")
    heads = _int(text, "num_attention_heads")
    n_layers = _int(text, "num_hidden_layers")
    if heads == 0 or hidden == 0 or n_layers == 0:
        raise ArchitectureError("hidden_size, num_attention_heads and num_hidden_layers must be positive")
    kv_heads = _opt_int(text, "num_key_value_heads")
    if kv_heads == 0 or (kv_heads is not None and heads % kv_heads):
        raise ArchitectureError(f"num_key_value_heads {kv_heads} must be positive and divide num_attention_heads {heads}")
    kv_heads = kv_heads or heads
    top_k = _opt_int(text, *_TOP_K_KEYS) or 0
    if top_k and not _num_experts(text) and any(k in text for k in _EXPERT_COUNT_KEYS):
        raise ArchitectureError(f"num_experts_per_tok {top_k} names routed experts, but the config's expert count is 0")
    if _opt_int(text, "head_dim") is None and hidden % heads and text.get("kv_lora_rank") is None:
        raise ArchitectureError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads} and no head_dim is given")
    given_head_dim = _opt_int(text, "head_dim")
    if given_head_dim is not None and given_head_dim % 2:
        # fix181: an odd head_dim (3, 127) was sized. RoPE rotates a head in two halves (transformers' rotate_half,
        # x[..., : x.shape[-1] // 2], and inv_freq over torch.arange(0, dim, 2): src/transformers/models/llama/
        # modeling_llama.py, modeling_rope_utils.py), and vLLM's attention kernels take even head sizes only
        # (FlashAttentionBackend.get_supported_head_sizes: 32, 64, ..., 256; vllm/attention/backends/flash_attn.py).
        raise ArchitectureError(f"config field 'head_dim' must be an even number of dimensions, got {given_head_dim}")
    head_dim = given_head_dim or hidden // heads
    intermediate = _opt_int(text, "intermediate_size", "ffn_dim") or None
    if intermediate is None and not _given_null(text, "intermediate_size"):
        intermediate = 4 * hidden  # absent: specgen's guess (a null is refused where a layer needs it, in _mlp)
    windows = [None] * n_layers if linear_kinds else _layer_windows(text, model_type, n_layers)
    biases = _attention_biases(text, model_type)
    qk_norm = model_type == "glm4_moe" and _flag(text, "use_qk_norm")  # Glm4MoeConfig's default: false
    mla = text.get("kv_lora_rank") is not None
    layers = []
    for index in range(n_layers):
        attn, attn_other, kv_elems, layer_kv_heads = (
            _mla_attention(text, hidden, heads)
            if mla
            else _gqa_attention(model_type, hidden, heads, kv_heads, head_dim, biases, qk_norm)
        )
        mlp, mlp_other, top_k = _mlp(text, model_type, index, hidden, intermediate)
        norms = _norm_params(model_type, hidden)
        window = windows[index]
        if linear_kinds:
            if model_type in linear_attention.MAMBA2_MODEL_TYPES:
                mixer = _mamba2_layer(text, linear_kinds[index], index, hidden, (attn, attn_other, kv_elems, layer_kv_heads))
            else:
                mixer = _linear_attention_layer(text, linear_kinds[index], index, hidden, (heads, kv_heads, head_dim))
            other = mixer.other_params + mlp_other + norms
            layers.append(mixer._replace(linears=mixer.linears + mlp, other_params=other, experts_per_token=top_k))
            continue
        layers.append(
            Layer(
                number=index,
                attention=MLA if mla else (SLIDING if window is not None else FULL),
                linears=attn + mlp,
                other_params=attn_other + mlp_other + norms,
                kv_elements_per_token=kv_elems,
                kv_heads=layer_kv_heads,
                window_tokens=window,
                experts_per_token=top_k,
            )
        )
    if not any(layer.is_moe for layer in layers):
        _check_no_unread_experts(text, model_type)
    rotary_dim = _opt_int(text, "qk_rope_head_dim") or int(head_dim * float(text.get("partial_rotary_factor") or 1.0))
    notes: list[str] = vision_notes
    if tower is not None and not tower.exact:  # newuser62 item 2: Pixtral and LLaVA's CLIP were short without a word
        kind = config["vision_config"].get("model_type") if isinstance(config.get("vision_config"), Mapping) else None
        notes.append(
            f"the vision tower ({str(kind or 'no model_type')[:60]} under '{top_type[:60]}') is counted approximately, "
            f"with the SigLIP formula ({tower.params:,} parameters): specgen counts Gemma 3's SigLIP, LLaVA's CLIP and "
            "Pixtral, and Qwen2-VL / Qwen2.5-VL towers exactly"
        )
    if model_type not in DECODER_TYPES_READ:  # newuser58 item 6: sized as a generic decoder without a word
        named = ", ".join(str(a) for a in config.get("architectures") or [] if isinstance(a, str))[:120]
        notes.append(
            f"model_type '{model_type[:60]}'{f' ({named})' if named else ''} is not one specgen reads by name: sized as a "
            "generic decoder from the config's sizes (attention biases and norms as Llama's); check the parameter "
            "count against the model card"
        )
    if model_type == "minimax_m2" and "use_qk_norm" in text and not _flag(text, "use_qk_norm"):
        # review71 item 11f: vLLM's minimax_m2.py (MiniMaxM2Attention) and Transformers' (through FlexOlmoAttention) build
        # q_norm and k_norm whatever the flag says, so they are counted; said, not read silently
        notes.append(
            "use_qk_norm: false is not read by vLLM's minimax_m2.py nor Transformers' MiniMaxM2Attention, which build "
            "q_norm and k_norm over the whole projections whatever it says: counted with them "
            f"({(heads + kv_heads) * head_dim:,} parameters a layer)"
        )
    if text.get("num_nextn_predict_layers"):
        notes.append(
            f"{text['num_nextn_predict_layers']} multi-token-prediction layer(s) are not counted "
            "(they are not used for ordinary decoding)"
        )
    return Architecture(
        model_type=model_type,
        hidden_size=hidden,
        vocab_size=_int(text, "vocab_size"),
        num_attention_heads=heads,
        num_kv_heads=0 if mla else kv_heads,
        head_dim=head_dim,
        max_position_embeddings=_opt_int(text, "max_position_embeddings") or 0,
        tie_word_embeddings=_tied(text, config, model_type),
        layers=tuple(layers),
        other_params=hidden,  # final norm
        vision_params=tower.params if tower else 0,
        vision=tower,
        architectures=_class_names(config),
        bidirectional=text.get("is_causal", config.get("is_causal")) is False,
        rotary_dim=rotary_dim,
        torch_dtype=_dtype(text),
        quantization=parse_quantization_config(text.get("quantization_config")),
        notes=tuple(notes),
        max_model_len=served_context_tokens(text, model_type),
        llama_cpp_rope=llama_cpp_rope(text, model_type, gguf_architecture(config, model_type)),
    ).with_counts()


#: A model's name that says it embeds or reranks (Qwen3-Embedding, bge-reranker, a folder named ``qwen3emb8b``).
_POOLING_NAME = re.compile(r"embed|rerank|emb(?=[\d_-]|$)")


def pooling_model_signs(arch: Architecture, *names: str) -> str:
    """What says a decoder is served for embedding or scoring, not generation; empty where nothing does.

    newuser62 item 7: the config (``architectures``: a base ``*Model`` or a ``*ForSequenceClassification`` head,
    ``is_causal: false``) or the model's name (``embed``, ``rerank``).
    """
    if arch.encoder_only:
        return ""
    signs = [
        f"architectures {name}"
        for name in arch.architectures
        if name.endswith("ForSequenceClassification") or (name.endswith("Model") and "For" not in name)
    ]
    if arch.bidirectional:
        signs.append("is_causal: false")
    named = next((n for n in names if _POOLING_NAME.search(n.lower())), None)
    if named is not None:
        signs.append(f"its name {named[:80]!r}")
    return ", ".join(signs)


def _class_names(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The config's ``architectures`` (class names such as ``Qwen3ForCausalLM``): strings of a list, at most eight."""
    names = config.get("architectures")
    return tuple(name[:120] for name in names if isinstance(name, str))[:8] if isinstance(names, list) else ()


def _linear_attention_layer(cfg: Mapping[str, Any], kind: str, index: int, hidden: int, attention: tuple[int, int, int]) -> Layer:
    """A Qwen3-Next layer's mixer: Gated DeltaNet (a state, no KV) or gated full attention."""
    from generator.sizing import linear_attention

    heads, kv_heads, head_dim = attention
    if kind == linear_attention.LINEAR:
        linears, other, state = linear_attention.gated_delta_net(cfg, hidden)
        return Layer(index, linear_attention.LINEAR, linears, other, 0, 0, state=state)
    linears, other, kv_elems = linear_attention.gated_attention(hidden, heads, kv_heads, head_dim)
    return Layer(index, FULL, linears, other, kv_elems, kv_heads)


def _mamba2_layer(
    cfg: Mapping[str, Any], kind: str, index: int, hidden: int, attention: tuple[tuple[Linear, ...], int, int, int]
) -> Layer:
    """A Granite-4.0-H layer's mixer: Mamba-2 (a state, no KV) or the model's GQA attention (``attention``)."""
    from generator.sizing import linear_attention

    if kind == linear_attention.LINEAR:
        linears, other, state = linear_attention.mamba2(cfg, hidden)
        return Layer(index, linear_attention.LINEAR, linears, other, 0, 0, state=state)
    attn, attn_other, kv_elems, kv_heads = attention
    return Layer(index, FULL, attn, attn_other, kv_elems, kv_heads)


#: Encoder-only model types (transformers' ``model_type``): BERT and its descendants, as embedding and reranking models
#: ship them (bge-m3 and bge-reranker-v2-m3 are xlm-roberta; gte-multilingual is "new"; nomic-embed is nomic_bert).
ENCODER_ONLY_MODEL_TYPES = frozenset(
    {
        "albert",
        "bert",
        "camembert",
        "deberta",
        "deberta-v2",
        "distilbert",
        "electra",
        "ernie",
        "jina_bert",
        "modernbert",
        "mpnet",
        "new",
        "nomic_bert",
        "roberta",
        "xlm-roberta",
    }
)

#: Encoder-only types counted exactly (:mod:`generator.sizing.encoder`).
COUNTED_ENCODER_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "camembert"})

#: Decoder model types the parser reads by name (their biases, norms, layer kinds and defaults) or whose catalog
#: configs its tests count exactly; another type is sized as a generic decoder, and says so in a note.
DECODER_TYPES_READ = frozenset(
    {
        "cohere", "cohere2", "deepseek_v2", "deepseek_v3", "deepseek_v32", "ernie4_5", "ernie4_5_moe", "exaone4",
        "gemma2", "gemma3", "gemma3_text", "glm4_moe", "gpt_oss", "granitemoehybrid", "llama", "llama4", "llama4_text",
        "minimax_m2",
        "mistral", "mixtral", "mllama", "mllama_text_model", "olmo2", "phi3", "qwen2", "qwen2_moe", "qwen2_5_vl",
        "qwen2_5_vl_text", "qwen2_vl", "qwen2_vl_text", "qwen3", "qwen3_moe", "qwen3_next",
    }
)  # fmt: skip

#: Model types whose transformers config class defaults ``tie_word_embeddings`` to False;
#: every other type inherits ``PretrainedConfig``'s default of True (Gemma, for one).
_UNTIED_BY_DEFAULT = frozenset(
    {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "phi3",
        "deepseek_v2",
        "deepseek_v3",
        "gpt_oss",
        "llama4_text",
    }
)


#: Encoder-decoder model types (Transformers' config classes default ``is_encoder_decoder`` to true for them): T5
#: and BART write ``d_model`` where a decoder writes ``hidden_size``, so they were refused for lacking it (newuser62 item 6).
ENCODER_DECODER_MODEL_TYPES = frozenset(
    {"bart", "blenderbot", "blenderbot-small", "fsmt", "led", "longt5", "m2m_100", "marian", "mbart", "mt5",
     "nllb-moe", "pegasus", "pegasus_x", "plbart", "prophetnet", "seamless_m4t", "speech_to_text",
     "switch_transformers", "t5", "umt5", "whisper"}
)  # fmt: skip

#: InternVL's layouts: the original ``internvl_chat`` (an ``llm_config`` beside InternViT) and Transformers' ``internvl``.
_INTERNVL_TYPES = ("internvl_chat", "internvl")


def _check_layout(config: Mapping[str, Any], top_type: str) -> None:
    """Refuse, naming the layout, a config of a kind specgen does not size before its fields are read (newuser62 item 6).

    An encoder-decoder (T5, BART, Whisper: ``d_model``) was refused as "config lacks hidden_size", InternVL's
    ``llm_config`` the same way and its ``-hf`` conversion's ``[448, 448]`` image size as a malformed field.
    """
    if top_type in ENCODER_DECODER_MODEL_TYPES or config.get("is_encoder_decoder") is True:
        speech = "; Whisper (speech to text) is served by vLLM, but not sized by specgen" if top_type == "whisper" else ""
        raise ArchitectureError(
            f"cannot size model_type '{top_type or 'unknown'}': an encoder-decoder model (is_encoder_decoder), whose "
            f"encoder, decoder and cross-attention layers specgen does not count exactly{speech}; decoder-only models, "
            "and BERT / RoBERTa / XLM-RoBERTa encoders for task: embed / score, are sized"
        )
    if _gemma3n(config, top_type):
        raise ArchitectureError(_gemma3n_refusal(config, top_type))
    if top_type in _INTERNVL_TYPES:
        raise ArchitectureError(
            f"cannot size model_type '{top_type}' (InternVL): its layout (an InternViT vision tower with a pixel-shuffle "
            "MLP projector beside the language model's llm_config / text_config) is not one specgen counts; "
            "vision-language models sized are Gemma 3, LLaVA (CLIP or Pixtral towers) and Qwen2-VL / Qwen2.5-VL"
        )


#: Fields of Gemma 3n's text model (Transformers ``Gemma3nTextConfig``) that no layer counted here has.
_GEMMA3N_FIELDS = ("altup_num_inputs", "laurel_rank", "hidden_size_per_layer_input", "num_kv_shared_layers")


def _text_of(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """A config's ``text_config``, or the config itself where it is flat."""
    text = config.get("text_config")
    return text if isinstance(text, Mapping) else config


def _gemma3n(config: Mapping[str, Any], top_type: str) -> bool:
    """Whether ``config`` is Gemma 3n's (``gemma3n`` / ``gemma3n_text``, or a text model with its AltUp and LAuReL)."""
    text = _text_of(config)
    types = {top_type, str(text.get("model_type") or "")}
    return bool(types & {"gemma3n", "gemma3n_text"}) or ("altup_num_inputs" in text and "laurel_rank" in text)


def _gemma3n_refusal(config: Mapping[str, Any], top_type: str) -> str:
    """Gemma 3n's refusal, naming what is not counted (newuser71 item 3: refused as a malformed ViT field).

    Transformers ``modeling_gemma3n.py``: AltUp keeps ``altup_num_inputs`` copies of the hidden state, LAuReL a
    rank-``laurel_rank`` residual, each layer a per-layer embedding (``hidden_size_per_layer_input`` from a
    ``vocab_size_per_layer_input`` table), the last ``num_kv_shared_layers`` layers reuse earlier layers' K and V
    (vLLM ``models/gemma3n.py`` ``kv_sharing_target_layer_name``), and ``intermediate_size`` is a per-layer list.
    """
    text = _text_of(config)
    named = [key for key in _GEMMA3N_FIELDS if key in text]
    towers = []
    vision = config.get("vision_config")
    if isinstance(vision, Mapping):
        built = vision.get("architecture")
        timm = f", timm {str(built)[:60]!r}" if isinstance(built, str) else ""
        towers.append(
            f"its vision tower (model_type {str(vision.get('model_type') or 'none given')[:60]!r}{timm}: a CNN, not a ViT)"
        )
    audio = config.get("audio_config")
    if isinstance(audio, Mapping):
        towers.append(f"its audio tower (model_type {str(audio.get('model_type') or 'none given')[:60]!r})")
    also = f", nor {' and '.join(towers)}" if towers else ""
    fields = f": {', '.join(named)}" if named else ""
    return (
        f"cannot size model_type '{top_type or 'unknown'}' (Gemma 3n): specgen does not count its text layers (AltUp, "
        "LAuReL, per-layer embeddings, a per-layer intermediate_size, and the last num_kv_shared_layers layers reusing "
        f"earlier layers' KV cache{fields}){also}; sized as a plain decoder the "
        "parameters and the KV cache would be wrong"
    )


def _check_model_type(config: Mapping[str, Any]) -> None:
    """Refuse a ``model_type`` (top level or ``text_config``'s) that is not a name such as llama."""
    for where, cfg in (("", config), ("text_config.", config.get("text_config"))):
        kind = cfg.get("model_type") if isinstance(cfg, Mapping) else None
        # fuzz25 L1: 1e308 and true were sized as the clean config; fix181: "" as "unknown" (5 was refused)
        if kind is not None and (not isinstance(kind, str) or not kind):
            raise ArchitectureError(
                f"config field '{where}model_type' must be a model type name such as llama, got {str(kind)[:60]!r}"
            )


#: Fields a published config gives per layer (a list) where this parser reads one value for every layer: Hunyuan-A13B's
#: ``moe_topk``, per-layer widths or head counts.
_PER_LAYER_LISTS = (
    "moe_topk",
    "moe_k",
    "moe_num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "num_experts",
    "num_local_experts",
    "n_routed_experts",
    "intermediate_size",
    "num_key_value_heads",
    "num_attention_heads",
    "head_dim",
)


#: What the Llama 3.2 Vision refusal adds for vLLM, the default engine; a workload on SGLang, which still serves it
#: (python/sglang/srt/models/mllama.py), is told the layout alone (newuser62 item 6).
MLLAMA_VLLM = (
    ", and vLLM no longer serves it natively (encoder-decoder support removed with its V0 engine, "
    "https://github.com/vllm-project/vllm/pull/24907)"
)


def without_vllm_reason(exc: InputError) -> InputError:
    """A model's refusal said to a job vLLM does not run: without :data:`MLLAMA_VLLM` (``exc`` where it has none)."""
    if MLLAMA_VLLM not in exc.message:
        return exc
    return type(exc)(exc.message.replace(MLLAMA_VLLM, ""), exc.location)


def no_prefix_cache_reason(name: str, arch: Architecture) -> str | None:
    """Why vLLM runs ``name`` without prefix caching, so that a cached share of its prompts is read by nothing; None.

    A model whose layers keep a recurrent state (Qwen3-Next's Gated DeltaNet, Granite-4.0-H's Mamba-2): a state is the
    whole prefix's, not a block of it, and vLLM's ``HybridAttentionMambaModelConfig`` sets such a model up without
    prefix caching. One rule for a workload's ``cached_prompt_share`` and ``estimate --cached-prompt-share``.
    """
    if not any(layer.state is not None for layer in arch.layers):
        return None
    return (
        f"{name} has linear-attention or Mamba layers (a recurrent state a sequence), which vLLM runs without prefix "
        "caching (HybridAttentionMambaModelConfig)"
    )


def _check_counted_layers(config: Mapping[str, Any], text: Mapping[str, Any]) -> None:
    """Refuse a config whose layers are not the kinds counted here, naming the real reason (newuser32 items 5, 7, 12).

    Each was sized as uniform attention layers without a word: Llama 3.2 Vision's cross-attention layers, DeepSeek-V3.2's
    indexer, RecurrentGemma's RG-LRU blocks, Nemotron-NAS's per-layer ``block_configs``, per-layer lists of widths.
    """
    model_type = str(config.get("model_type") or text.get("model_type") or "unknown")
    if model_type == "mllama" or text.get("model_type") == "mllama_text_model" or "cross_attention_layers" in text:
        raise ArchitectureError(
            f"cannot size model_type '{model_type}' (Llama 3.2 Vision): its cross-attention layers "
            f"(cross_attention_layers) attend to the image tokens, an encoder-decoder layout specgen does not size{MLLAMA_VLLM}"
        )
    if model_type == "deepseek_v32" or any(key in text for key in ("index_topk", "index_n_heads", "index_head_dim")):
        raise ArchitectureError(
            f"cannot size model_type '{model_type}' (DeepSeek-V3.2 sparse attention): its lightning indexer "
            "(index_n_heads, index_head_dim, index_topk) adds per-layer linears and a key cache of its own (vLLM "
            "models/deepseek_v2.py DeepseekV32IndexerCache: 132 B a token a layer beside the MLA latent) that specgen "
            "does not count; sized as DeepSeek-V3 the parameters and the KV cache would be short"
        )
    if "block_types" in text or model_type == "recurrent_gemma":
        raise ArchitectureError(
            f"cannot size model_type '{model_type}': its layers are listed in block_types (RecurrentGemma: RG-LRU "
            "recurrent blocks, which keep a fixed state per sequence, beside local-attention ones), which specgen does "
            "not size; sized as attention layers the KV cache and the parameters would be wrong"
        )
    if "block_configs" in text:
        raise ArchitectureError(
            f"cannot size model_type '{model_type}': its layers differ one from another (block_configs: per-layer "
            "attention, some removed, and feed-forward widths, as in Llama-3.3-Nemotron-Super-49B), which specgen does "
            "not count; sized as uniform layers the parameters and KV cache would be wrong"
        )
    listed = next((key for key in _PER_LAYER_LISTS if isinstance(text.get(key), list)), None)
    if listed is not None:
        raise ArchitectureError(
            f"cannot size model_type '{model_type}': config field '{listed}' is a per-layer list (layers that differ one "
            "from another, as in Hunyuan-A13B), which specgen does not count; one whole number for every layer is read"
        )


def _given_null(cfg: Mapping[str, Any], key: str) -> bool:
    """Whether the config holds ``key`` as null (which transformers keeps as None, where leaving it out takes a default)."""
    return key in cfg and cfg[key] is None


def _width(cfg: Mapping[str, Any], key: str, fallback: int | None) -> int:
    """A feed-forward width: ``key``, else ``fallback``; refused when null where a layer needs it.

    fuzz25 L1: ``intermediate_size: null`` was sized as 4 x hidden; transformers keeps a null as None (its class
    default, 11,008 for LlamaConfig, applies only to a field left out) and cannot build the layer from it.
    """
    width = _opt_int(cfg, key)
    if width:
        return width
    if fallback is None or _given_null(cfg, key):
        null = key if _given_null(cfg, key) else "intermediate_size"
        raise ArchitectureError(f"config field '{null}' is null, but the feed-forward layers need their width (a whole number)")
    return fallback


#: The ``torch_dtype`` names a checkpoint's config gives (PyTorch's, with and without ``torch.``; ``auto`` leaves it to
#: the loader, which reads bfloat16 for the checkpoints sized here).
_TORCH_DTYPES = frozenset({"float32", "float", "float16", "half", "bfloat16", "float64", "double", "float8_e4m3fn",
                           "float8_e5m2", "auto"})  # fmt: skip


def _dtype(text: Mapping[str, Any]) -> str:
    """The config's ``torch_dtype`` (or ``dtype``), a name such as bfloat16; bfloat16 where it gives none."""
    dtype = text.get("torch_dtype") or text.get("dtype") or "bfloat16"
    if not isinstance(dtype, str):  # fuzz25 L1: 5, [] and {} were read as bfloat16 without a word
        raise ArchitectureError(f"config field 'torch_dtype' must be a dtype name such as bfloat16, got {str(dtype)[:60]!r}")
    if dtype.removeprefix("torch.") not in _TORCH_DTYPES:  # fuzz27 L4: "float128" was sized as bfloat16 without a word
        raise ArchitectureError(
            f"config field 'torch_dtype' is {dtype[:60]!r}, not a PyTorch dtype a checkpoint is stored in "
            f"({', '.join(sorted(_TORCH_DTYPES))})"
        )
    return dtype.removeprefix("torch.")


def _tied(text: Mapping[str, Any], config: Mapping[str, Any], model_type: str) -> bool:
    for cfg in (text, config):
        tied = cfg.get("tie_word_embeddings")
        if tied is not None and not isinstance(tied, bool):  # fuzz25 L1: "x" was read as true, the head uncounted
            raise ArchitectureError(f"config field 'tie_word_embeddings' must be true or false, got {str(tied)[:60]!r}")
        if tied is not None:
            return tied
    return model_type not in _UNTIED_BY_DEFAULT


def _attention_biases(cfg: Mapping[str, Any], model_type: str) -> tuple[bool, bool]:
    """(q/k/v bias, output bias)."""
    if model_type in ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text"):
        return True, False
    if model_type.startswith("ernie4_5"):
        bias = _flag(cfg, "use_bias")  # ERNIE 4.5's qkv_proj and o_proj (vLLM models/ernie45_moe.py)
        return bias, bias
    bias = bool(cfg.get("attention_bias", cfg.get("bias", False)))
    if model_type == "glm4_moe":
        # Transformers modeling_glm4_moe.py Glm4MoeAttention: q/k/v bias=config.attention_bias, o_proj bias=False
        # (newuser71 item 6: GLM-4.5-Air +188,416 parameters)
        return bias, False
    return bias, bias


def _gqa_attention(
    model_type: str,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    biases: tuple[bool, bool],
    qk_norm: bool = False,
) -> tuple[tuple[Linear, ...], int, int, int]:
    qkv_bias, o_bias = biases
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    linears = (
        Linear("q_proj", hidden, q_dim, ATTENTION, qkv_bias),
        Linear("k_proj", hidden, kv_dim, ATTENTION, qkv_bias),
        Linear("v_proj", hidden, kv_dim, ATTENTION, qkv_bias),
        Linear("o_proj", q_dim, hidden, ATTENTION, o_bias),
    )
    other = 0
    if model_type in HEAD_QK_NORM_TYPES or (model_type == "glm4_moe" and qk_norm):
        other += 2 * head_dim  # q_norm and k_norm over head_dim (GLM-4.5's where use_qk_norm)
    if model_type in PROJECTION_QK_NORM_TYPES:
        # q_norm and k_norm over the whole projections, before the heads are split (newuser71 item 6): Transformers
        # modeling_olmo2.py Olmo2Attention, which MiniMaxM2Attention (through FlexOlmoAttention) inherits
        other += q_dim + kv_dim
    if model_type == "gpt_oss":
        other += heads  # attention sinks, one per head
    return linears, other, 2 * kv_dim, kv_heads


def _mla_attention(cfg: Mapping[str, Any], hidden: int, heads: int) -> tuple[tuple[Linear, ...], int, int, int]:
    """Multi-head latent attention (DeepSeek V2/V3): KV is one compressed latent per token."""
    kv_rank = _int(cfg, "kv_lora_rank")
    q_rank = _opt_int(cfg, "q_lora_rank")
    nope = _int(cfg, "qk_nope_head_dim")
    rope = _int(cfg, "qk_rope_head_dim")
    v_dim = _int(cfg, "v_head_dim")
    linears: list[Linear] = []
    other = kv_rank  # kv_a_layernorm
    if q_rank:
        linears += [Linear("q_a_proj", hidden, q_rank, ATTENTION), Linear("q_b_proj", q_rank, heads * (nope + rope), ATTENTION)]
        other += q_rank  # q_a_layernorm
    else:
        linears.append(Linear("q_proj", hidden, heads * (nope + rope), ATTENTION))
    linears += [
        Linear("kv_a_proj_with_mqa", hidden, kv_rank + rope, ATTENTION),
        Linear("kv_b_proj", kv_rank, heads * (nope + v_dim), ATTENTION),
        Linear("o_proj", heads * v_dim, hidden, ATTENTION),
    ]
    return tuple(linears), other, kv_rank + rope, 0


def _gated(prefix: str, hidden: int, inter: int, group: str, bias: bool = False, copies: int = 1) -> tuple[Linear, ...]:
    return (
        Linear(f"{prefix}gate_proj", hidden, inter, group, bias, copies),
        Linear(f"{prefix}up_proj", hidden, inter, group, bias, copies),
        Linear(f"{prefix}down_proj", inter, hidden, group, bias, copies),
    )


def _num_experts(cfg: Mapping[str, Any]) -> int:
    return _opt_int(cfg, *_EXPERT_COUNT_KEYS) or 0


#: Routed experts per MoE layer, by the names configs give them (``moe_num_experts``: ERNIE 4.5).
_EXPERT_COUNT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts")
#: Experts each token is routed to (``moe_k``: ERNIE 4.5).
_TOP_K_KEYS = ("num_experts_per_tok", "experts_per_token", "moe_topk", "moe_k")
#: ERNIE 4.5's MoE layer placement (vLLM ``models/ernie45_moe.py``): layer i has experts when
#: ``(i + 1) % moe_layer_interval == 0`` and ``moe_layer_start_index <= i <= moe_layer_end_index``.
_ERNIE_MOE_PLACEMENT = ("moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval")


def _check_no_unread_experts(cfg: Mapping[str, Any], model_type: str) -> None:
    """Refuse a config sized dense that still names experts in a field not read here.

    newuser32 item 4: ERNIE 4.5's ``moe_num_experts`` / ``moe_k`` were not read, so ERNIE-4.5-21B-A3B was sized as a
    3.35 B dense model (21.8 B published). A field whose name holds ``moe`` or ``expert`` with a value that is not
    empty, zero or false means experts this parser did not lay out.
    """
    unread = sorted(
        key
        for key, value in cfg.items()
        if ("moe" in key.lower() or "expert" in key.lower()) and value not in (None, False, 0, "", [], {})
    )
    if unread:
        raise ArchitectureError(
            f"cannot size model_type '{model_type}': the config names experts ({', '.join(unread[:4])}) but no routed "
            f"experts are read from it (their count is read from {', '.join(_EXPERT_COUNT_KEYS)}); sized as a dense "
            "model, its parameters and weights would be a fraction of the real ones"
        )


def _is_moe_layer(cfg: Mapping[str, Any], model_type: str, index: int) -> bool:
    if _num_experts(cfg) == 0:
        return False
    if index in (cfg.get("mlp_only_layers") or []):
        return False
    if any(key in cfg for key in _ERNIE_MOE_PLACEMENT):
        start = _opt_int(cfg, "moe_layer_start_index") or 0
        # -1: the last layer, as Transformers' Ernie4_5_MoeConfig reads it (review24 L11: refused as negative)
        end = None if cfg.get("moe_layer_end_index") == -1 else _opt_int(cfg, "moe_layer_end_index")
        interval = _opt_int(cfg, "moe_layer_interval") or 1
        return (index + 1) % interval == 0 and start <= index and (end is None or index <= end)
    if "first_k_dense_replace" in cfg or model_type.startswith("deepseek"):
        first_dense = int(cfg.get("first_k_dense_replace") or 0)
        freq = int(cfg.get("moe_layer_freq") or 1)
        return index >= first_dense and index % freq == 0
    step = int(cfg.get("decoder_sparse_step") or cfg.get("interleave_moe_layer_step") or 1)
    return (index + 1) % step == 0


def _mlp(
    cfg: Mapping[str, Any], model_type: str, index: int, hidden: int, intermediate: int | None
) -> tuple[tuple[Linear, ...], int, int]:
    """Linears of the feed-forward block, its extra small tensors, and experts per token (``intermediate``: None if null)."""
    mlp_bias = bool(cfg.get("mlp_bias", False))
    if model_type == "granitemoehybrid":
        return _granite_mlp(cfg, hidden, intermediate)
    if not _is_moe_layer(cfg, model_type, index):
        dense_inter = _width(cfg, "intermediate_size_mlp", intermediate)
        return _gated("", hidden, dense_inter, MLP, mlp_bias), 0, 0
    experts = _num_experts(cfg)
    top_k = _opt_int(cfg, *_TOP_K_KEYS)
    if top_k is None:
        raise ArchitectureError("MoE config lacks 'num_experts_per_tok'")
    if top_k < 1:
        raise ArchitectureError(
            f"num_experts_per_tok {top_k} routes no token to any of the {experts} experts: it must be at least 1"
        )
    if top_k > experts:
        raise ArchitectureError(f"num_experts_per_tok {top_k} is more than the {experts} routed experts")
    expert_inter = _width(cfg, "moe_intermediate_size", intermediate)
    expert_bias = model_type == "gpt_oss"
    linears = _gated("experts.", hidden, expert_inter, EXPERT, expert_bias, experts)
    router = Linear("router", hidden, experts, ROUTER, bias=expert_bias)
    other = 0  # DeepSeek-V3's e_score_correction_bias is a buffer, not a parameter
    shared: tuple[Linear, ...] = ()
    n_shared = _opt_int(cfg, "n_shared_experts", "moe_num_shared_experts") or 0  # of the expert width each
    shared_inter = _opt_int(cfg, "shared_expert_intermediate_size")
    if model_type.startswith("llama4"):
        n_shared = 1  # one shared expert of the expert width in every MoE layer (transformers Llama4TextMoe)
    if n_shared:
        shared = _gated("shared_experts.", hidden, expert_inter * n_shared, SHARED_EXPERT)
    elif shared_inter:
        shared = _gated("shared_expert.", hidden, shared_inter, SHARED_EXPERT)
        shared += (Linear("shared_expert_gate", hidden, 1, ROUTER),)
    return linears + shared + (router,), other, top_k


def _granite_mlp(cfg: Mapping[str, Any], hidden: int, intermediate: int | None) -> tuple[tuple[Linear, ...], int, int]:
    """Granite-4.0-H's feed-forward block: the shared MLP, beside the routed experts where there are any.

    Transformers ``GraniteMoeHybridDecoderLayer``: ``shared_mlp`` (``GraniteMoeSharedMLP``: ``input_linear`` hidden ->
    2 x ``shared_intermediate_size``, ``output_linear`` back, bias-free) in every layer; ``block_sparse_moe``
    (``GraniteMoeMoE``: ``num_local_experts`` experts of ``intermediate_size`` the same way, a bias-free router) where
    ``num_local_experts`` is above 0.
    """
    shared_inter = _granite_shared_width(cfg)
    experts = _num_experts(cfg)
    if not experts:
        if not shared_inter:
            raise ArchitectureError(
                "config field 'shared_intermediate_size' is 0 and num_local_experts is 0: Granite-4.0-H's layers would "
                "have no feed-forward block (vLLM builds no shared MLP at 0); give the shared MLP's width"
            )
        return _gated("shared_mlp.", hidden, shared_inter, MLP), 0, 0
    top_k = _opt_int(cfg, *_TOP_K_KEYS)
    if top_k is None or not 1 <= top_k <= experts:
        raise ArchitectureError(f"num_experts_per_tok {top_k} must be from 1 to the {experts} routed experts")
    expert_inter = _width(cfg, "intermediate_size", intermediate)
    linears = _gated("experts.", hidden, expert_inter, EXPERT, False, experts)
    if shared_inter:  # 0: the routed experts alone (vLLM granitemoehybrid.py: shared_mlp None where it is 0)
        linears += _gated("shared_mlp.", hidden, shared_inter, SHARED_EXPERT)
    return (*linears, Linear("router", hidden, experts, ROUTER)), 0, top_k


def _granite_shared_width(cfg: Mapping[str, Any]) -> int:
    """Granite-4.0-H's ``shared_intermediate_size`` (0: no shared MLP), refused by its own name where absent or null.

    review71 item 4: a config without it was told "'intermediate_size' is null" (768 in the file). Transformers would
    build an omitted one at ``GraniteMoeHybridConfig``'s class default (1,024), which is no checkpoint's width.
    """
    if cfg.get("shared_intermediate_size") is None:
        said = "null" if _given_null(cfg, "shared_intermediate_size") else "missing"
        raise ArchitectureError(
            f"config field 'shared_intermediate_size' is {said}, but Granite-4.0-H's shared MLP needs its width (a whole "
            "number; 0 for none): Transformers' GraniteMoeHybridConfig would build it at its class default, 1,024, not "
            "the checkpoint's"
        )
    return _int(cfg, "shared_intermediate_size")


#: Model types whose attention runs an RMSNorm over each head of q and of k (``q_norm`` / ``k_norm`` over head_dim).
HEAD_QK_NORM_TYPES = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "qwen3_next", "exaone4")
#: Model types whose ``q_norm`` / ``k_norm`` run over the whole projections, before the heads are split.
PROJECTION_QK_NORM_TYPES = ("olmo2", "minimax_m2")


def hidden_norms_per_layer(model_type: str) -> int:
    """Hidden-width norms a decoder layer runs: two (input, post-attention), four for Gemma 2 / 3, one for Cohere's."""
    return _norm_params(model_type, 1)


def qk_norm_elements(arch: Architecture) -> int:
    """Elements of a token's q and k an attention layer's ``q_norm`` / ``k_norm`` run over (0 where it has none).

    Per head or over the whole projection, a norm of every q and k element either way. GLM-4.5's, where its config sets
    ``use_qk_norm``, is not read back from the layout (its flag is not kept): 0.
    """
    if arch.model_type in HEAD_QK_NORM_TYPES or arch.model_type in PROJECTION_QK_NORM_TYPES:
        return (arch.num_attention_heads + arch.num_kv_heads) * arch.head_dim
    return 0


def _norm_params(model_type: str, hidden: int) -> int:
    """RMSNorm weights per layer: two (input, post-attention), four for Gemma 2/3's sandwich norms."""
    if model_type.startswith("gemma2") or model_type.startswith("gemma3"):
        return 4 * hidden  # pre/post attention and pre/post feed-forward norms
    if model_type in ("cohere", "cohere2"):
        # Command R / R7B / A: attention and MLP side by side after one input_layernorm (a weight-only LayerNorm;
        # vLLM models/commandr.py CohereDecoderLayer, Transformers modeling_cohere2.py)
        return hidden
    return 2 * hidden


#: Fields Transformers' config classes default that published configs leave out, by model type: Gemma 3's
#: ``Gemma3TextConfig`` (https://github.com/huggingface/transformers/blob/main/src/transformers/models/gemma3/
#: configuration_gemma3.py) defaults ``vocab_size`` to 262,208, which google/gemma-3-27b-it's ``text_config`` omits,
#: as it omits ``max_position_embeddings`` (131,072: the 27B took any context); the 12B's omits ``head_dim`` (256, not
#: its hidden size over its heads, 240) and the 4B's the head counts (8 and 4) too (catalog helper, session 31).
_TRANSFORMERS_DEFAULTS: dict[str, dict[str, int]] = {
    "gemma3_text": {
        "vocab_size": 262_208,
        "max_position_embeddings": 131_072,
        "head_dim": 256,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
    }
}


def _with_transformers_defaults(text: Mapping[str, Any], model_type: str) -> Mapping[str, Any]:
    """``text`` with the fields its Transformers config class defaults filled in where the config leaves them out."""
    defaults = _TRANSFORMERS_DEFAULTS.get(model_type, {})
    missing = {key: value for key, value in defaults.items() if text.get(key) is None}
    return {**text, **missing} if missing else text


#: The ``layer_types`` entries of Transformers' attention layers this engine sizes. ``chunked_attention`` (Llama 4's
#: local layers, Transformers ``Llama4TextConfig`` derives it from ``no_rope_layers``) is sized as full attention, as
#: vLLM allocates it by default (it turns the hybrid KV manager off for chunked local attention) and as the original
#: config without ``layer_types`` is sized (newuser32 item 11).
_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention")


def _layer_windows(cfg: Mapping[str, Any], model_type: str, n_layers: int) -> list[int | None]:
    """Per layer: the sliding-window size in tokens, or ``None`` for full attention."""
    window = cfg.get("sliding_window")
    if isinstance(window, bool):  # JSON true is an int to Python: a 1-token window (fuzz13 item 5)
        raise ArchitectureError(f"sliding_window is {str(window).lower()}: it must be a window in tokens (or null)")
    if window is not None and not isinstance(window, int):  # fuzz28 L5: "4096" was sized as full attention
        raise ArchitectureError(f"sliding_window must be a whole number of tokens (or null), got {str(window)[:40]!r}")
    types = cfg.get("layer_types")
    if types is not None and not isinstance(types, list):
        raise ArchitectureError("layer_types must be a list with one entry per layer")
    if types:
        if len(types) != n_layers:
            raise ArchitectureError(f"layer_types has {len(types)} entries but num_hidden_layers is {n_layers}")
        unknown = next(((i, t) for i, t in enumerate(types) if t not in _LAYER_TYPES), None)
        if unknown is not None:  # sized as full attention, a sliding layer would be lost (fuzz12 item 14)
            raise ArchitectureError(
                f"layer_types[{unknown[0]}] is {str(unknown[1])[:40]!r}, not a layer type sized here ({', '.join(_LAYER_TYPES)})"
            )
        if any(str(t).startswith("sliding") for t in types) and not (isinstance(window, int) and window >= 1):
            # a window of 0 tokens would hold no KV at all (fuzz13 item 10)
            raise ArchitectureError("layer_types names sliding layers but 'sliding_window' is not a whole number of tokens >= 1")
        return [window if str(t).startswith("sliding") else None for t in types]
    if not isinstance(window, int) or window <= 0 or cfg.get("use_sliding_window") is False:
        return [None] * n_layers
    if model_type == "gemma2":
        return [window if i % 2 == 0 else None for i in range(n_layers)]
    pattern = cfg.get("sliding_window_pattern")
    if pattern is None:
        pattern = _DEFAULT_WINDOW_PATTERN.get(model_type)
        if pattern is None and model_type.startswith("gemma3"):
            pattern = 6
    if pattern is not None:
        return _pattern_windows(pattern, window, n_layers)
    if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        first = _opt_int(cfg, "max_window_layers") or 0
        return [window if i >= first else None for i in range(n_layers)]
    return [window] * n_layers


#: ``sliding_window_pattern`` by model type where Transformers' config class defaults it and a published config may
#: leave it out: ``Cohere2Config`` (Command R7B, Command A) defaults 4 (every 4th layer global).
_DEFAULT_WINDOW_PATTERN: dict[str, int] = {"cohere2": 4}


def _pattern_windows(pattern: object, window: int, n_layers: int) -> list[int | None]:
    """Per layer from ``sliding_window_pattern``: a number N (every Nth layer global) or a string of L/G per layer.

    newuser32 item 1: read for Gemma 3 only, Command A's 16 global layers were sized as 4,096-token windows (KV ~9x
    short at 131k). A number N: layer i slides unless ``(i + 1) % N == 0`` (vLLM ``models/commandr.py``:
    ``layer_has_sliding_window = ... (layer_idx + 1) % self.config.sliding_window_pattern != 0``; ``gemma3.py`` alike;
    Transformers' ``Cohere2Config`` derives ``layer_types`` so). A string (EXAONE 4.0's ``"LLLG"``): character
    ``i % len`` of it, ``L`` a local (sliding) layer, ``G`` a global one, the last layer always global (TensorRT-LLM
    ``_torch/models/modeling_exaone4.py::check_is_sliding``). Any other form is refused: sized as all-sliding, the
    global layers' KV would be lost.
    """
    if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern >= 1:
        return [window if (i + 1) % pattern else None for i in range(n_layers)]
    if isinstance(pattern, str) and pattern and set(pattern) <= {"L", "G"}:
        last = n_layers - 1  # the last layer is global whatever the pattern says (TensorRT-LLM exaone4.py check_is_sliding)
        return [window if pattern[i % len(pattern)] == "L" and i != last else None for i in range(n_layers)]
    raise ArchitectureError(
        f"sliding_window_pattern {str(pattern)[:40]!r} is not read here: a whole number N >= 1 (every Nth layer global) or "
        "a string of L (sliding) and G (global) layers such as 'LLLG' is; give 'layer_types' (full_attention / "
        "sliding_attention per layer) instead"
    )
