"""Encoder-only models (BERT, RoBERTa, XLM-RoBERTa): an exact :class:`~generator.sizing.architecture.Architecture`.

Embedding and reranking checkpoints (bge, e5, all-MiniLM, bge-m3, bge-reranker) ship these layers, which differ from a
decoder's (``transformers/models/bert/modeling_bert.py``, ``roberta/modeling_roberta.py``):

- embeddings: words (``vocab x hidden``), learned absolute positions (``max_position_embeddings x hidden``), token
  types (``type_vocab_size x hidden``) and a LayerNorm with a bias;
- each layer: Q, K, V and the attention output dense with biases, a LayerNorm (weight and bias), the ungated
  intermediate dense and the output dense with biases, a second LayerNorm;
- the pooler (``hidden x hidden`` dense with a bias) where the checkpoint has one: ``BertModel`` /
  ``XLMRobertaModel`` keep it (``add_pooling_layer=True``), as does ``BertForSequenceClassification`` before its
  ``hidden x num_labels`` classifier; ``RobertaForSequenceClassification`` / ``XLMRobertaForSequenceClassification``
  have none and a head of a ``hidden x hidden`` dense and a ``hidden x num_labels`` projection, both with biases.
  XLM-R's ``padding_idx`` offset only moves the position ids: the position table's size is the config's.

Served (vLLM's ``bert.py`` / ``roberta.py`` as pooling models), attention is bidirectional over one request in one
forward pass: the layers keep no KV cache (``EncoderOnlyAttentionSpec``), vLLM turns chunked prefill and prefix caching
off for them (``is_chunked_prefill_supported`` / ``is_prefix_caching_supported`` are False for ``encoder_only``
attention, vLLM's pooling model tests), so a request runs whole. The longest request is the position table less
RoBERTa's offset: position ids start at ``padding_idx + 1`` (``create_position_ids_from_input_ids``), so 514 positions
serve 512 tokens and bge-m3's 8,194 serve 8,192.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.errors import ArchitectureError
from generator.sizing.architecture import ATTENTION, FULL, MLP, Architecture, Layer, Linear

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: RoBERTa's types (BERT's layer, position ids offset by ``padding_idx``); with ``bert``, ``COUNTED_ENCODER_TYPES``.
ROBERTA_TYPES = frozenset({"roberta", "xlm-roberta", "camembert"})

#: Why an encoder's request cannot be longer than its position table (a workload's max_context_tokens above it).
ENCODER_LONGER_REFUSED = (
    "an encoder's learned position table has no row for a later token (for XLM-R less its 2-position padding offset), "
    "and vLLM refuses a longer max_model_len: split longer inputs into chunks"
)

#: The checkpoint heads counted, by the suffix of ``architectures[0]``; any other head (masked-LM, token
#: classification...) is refused, as its parameters would be missed.
_BASE = "Model"
_CLASSIFIER = "ForSequenceClassification"


def _int(cfg: Mapping[str, Any], key: str, default: int) -> int:
    value = cfg.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ArchitectureError(f"config field '{key}' must be a non-negative integer, got {value!r}")
    return value


def _num_labels(cfg: Mapping[str, Any]) -> int:
    """Classifier outputs: ``id2label``'s length where given (transformers derives ``num_labels`` from it), else 2."""
    labels = cfg.get("id2label")
    if isinstance(labels, Mapping) and labels:
        return len(labels)
    return _int(cfg, "num_labels", 2) or 2


def served_tokens(cfg: Mapping[str, Any], model_type: str) -> int:
    """The longest request: the position table, less RoBERTa's ``padding_idx + 1`` offset (514 -> 512)."""
    positions = _int(cfg, "max_position_embeddings", 512)
    if model_type in ROBERTA_TYPES:
        positions -= _int(cfg, "pad_token_id", 1) + 1
    return max(0, positions)


def encoder_layer(index: int, hidden: int, intermediate: int, heads: int) -> Layer:
    """One BERT / RoBERTa layer: biased attention and MLP denses, two LayerNorms (weight and bias), no KV cache."""
    linears = (
        Linear("attention.self.query", hidden, hidden, ATTENTION, True),
        Linear("attention.self.key", hidden, hidden, ATTENTION, True),
        Linear("attention.self.value", hidden, hidden, ATTENTION, True),
        Linear("attention.output.dense", hidden, hidden, ATTENTION, True),
        Linear("intermediate.dense", hidden, intermediate, MLP, True),
        Linear("output.dense", intermediate, hidden, MLP, True),
    )
    return Layer(
        number=index,
        attention=FULL,
        linears=linears,
        other_params=2 * 2 * hidden,  # attention.output.LayerNorm and output.LayerNorm
        kv_elements_per_token=0,
        kv_heads=heads,
    )


def parse_encoder(config: Mapping[str, Any], model_type: str) -> Architecture:
    """An encoder-only checkpoint's :class:`Architecture` (``model_type`` in ``COUNTED_ENCODER_TYPES``)."""
    architectures = config.get("architectures") or ["BertModel"]
    head = str(architectures[0]) if isinstance(architectures, list) and architectures else "BertModel"
    if not (head.endswith(_BASE) or head.endswith(_CLASSIFIER)):
        raise ArchitectureError(
            f"cannot size '{head}': of the encoder-only (BERT / RoBERTa) checkpoints specgen counts the base model "
            f"(*{_BASE}, served for task: embed) and the sequence classifier (*{_CLASSIFIER}, task: score)"
        )
    positions_kind = config.get("position_embedding_type") or "absolute"
    if positions_kind != "absolute":  # relative_key(_query) adds a distance table to every layer's attention
        raise ArchitectureError(
            f"cannot size position_embedding_type {str(positions_kind)[:40]!r}: of BERT / RoBERTa encoders specgen counts "
            "the absolute (learned table) kind exactly"
        )
    hidden = _int(config, "hidden_size", 768)
    heads = _int(config, "num_attention_heads", 12)
    n_layers = _int(config, "num_hidden_layers", 12)
    if not hidden or not heads or not n_layers:
        raise ArchitectureError("hidden_size, num_attention_heads and num_hidden_layers must be positive")
    if hidden % heads:
        raise ArchitectureError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    intermediate = _int(config, "intermediate_size", 3072)
    vocab = _int(config, "vocab_size", 30522)
    positions = _int(config, "max_position_embeddings", 512)
    # position and token-type tables (lookups) and the embedding LayerNorm (weight and bias)
    tables = (positions + _int(config, "type_vocab_size", 2)) * hidden
    top = 2 * hidden
    roberta_classifier = head.endswith(_CLASSIFIER) and model_type in ROBERTA_TYPES
    pooler = 0 if roberta_classifier else hidden * hidden + hidden
    classifier = 0
    if head.endswith(_CLASSIFIER):
        labels = _num_labels(config)
        classifier = hidden * labels + labels  # BERT's classifier, RoBERTa's out_proj
        if roberta_classifier:
            classifier += hidden * hidden + hidden  # RoBERTa's classification head dense
    return Architecture(
        model_type=model_type,
        hidden_size=hidden,
        vocab_size=vocab,
        num_attention_heads=heads,
        num_kv_heads=heads,
        head_dim=hidden // heads,
        max_position_embeddings=positions,
        tie_word_embeddings=False,
        layers=tuple(encoder_layer(i, hidden, intermediate, heads) for i in range(n_layers)),
        other_params=top + tables + pooler + classifier,
        torch_dtype=str(config.get("torch_dtype") or config.get("dtype") or "float32"),
        max_model_len=served_tokens(config, model_type),
        encoder_only=True,
        no_flop_params=tables + pooler + classifier,
    ).with_counts()
