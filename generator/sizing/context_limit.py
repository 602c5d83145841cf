"""The longest sequence a serving engine accepts for a model: vLLM's derived ``max_model_len``.

vLLM (``vllm/config``, ``_get_and_verify_max_len``) takes the smallest of the config's length keys
(``max_position_embeddings``, ``n_positions``, ``max_seq_len``, ``seq_length``, ``max_target_positions``,
``max_sequence_length``, ``max_seq_length``, ``seq_len``), or ``model_max_length`` where the config has it
(Command-R); then a ``rope_scaling`` block stretches it by its ``factor``, from
``original_max_position_embeddings`` for YaRN, except for the types whose ``max_position_embeddings`` is
already the stretched length (``llama3``, ``longrope``/``su``) and for Gemma 3. A longer ``max_model_len``
is refused unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``; SGLang reads the same keys and refuses it unless
``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

#: Config keys holding a model's longest sequence; the smallest given wins.
LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
#: Cap of the stretched length (a huge ``factor`` must not overflow): the config check's bound on max_position_embeddings.
_MOST_TOKENS = 1 << 31
#: RoPE scaling types whose ``max_position_embeddings`` is already the scaled length.
_PRE_SCALED = ("su", "longrope", "llama3")


def _length(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _factor(value: Any) -> float:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else 1.0
    return float(number) if math.isfinite(number) and number > 0 else 1.0


def served_context_tokens(config: Mapping[str, Any], model_type: str) -> int:
    """The longest sequence vLLM serves for this (text) config; 0 when the config says nothing."""
    lengths = [n for key in LENGTH_KEYS if (n := _length(config.get(key))) is not None]
    derived = _length(config.get("model_max_length")) or min(lengths, default=0)
    rope = config.get("rope_scaling") or config.get("rope_parameters")
    if not derived or not isinstance(rope, Mapping) or "gemma3" in model_type:
        return derived
    kind = rope.get("rope_type", rope.get("type"))
    if kind in _PRE_SCALED:
        return derived
    if kind == "yarn":
        derived = _length(rope.get("original_max_position_embeddings")) or derived
    return int(min(derived * _factor(rope.get("factor", 1.0)), _MOST_TOKENS))


#: Why a serving context above the limit is refused, and the way out a model card may document (newuser24 item 10:
#: Qwen2.5 serves 128k with YaRN factor 4 added to its config, which the served limit then reads).
LONGER_REFUSED = (
    "vLLM and SGLang refuse a longer context; where the model card documents RoPE scaling beyond it (e.g. YaRN), give "
    "the model as a path to a config.json with that rope_scaling"
)
#: What a sequence longer than the served limit means for training: the model must be told to stretch its positions.
CONTEXT_EXTENSION = (
    "training on longer sequences is context extension: configure RoPE scaling (rope_scaling in the model's config, "
    "e.g. YaRN or linear) so the positions beyond it are interpolated"
)


def served_limit_phrase(model_name: str, limit_tokens: int) -> str:
    """How every message names a model's served limit: "the 8,192 tokens <model> serves (the max_model_len ...)"."""
    return (
        f"the {limit_tokens:,} tokens {model_name} serves "
        "(the max_model_len vLLM derives from its config's max_position_embeddings and rope_scaling)"
    )
