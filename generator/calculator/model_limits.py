"""Ranges of a model config's dimensions, checked before any arithmetic, and of a layout on that model.

A 1 KB ``config.json`` with ``num_hidden_layers: 1000000`` would build a million layers; ``head_dim: 0``
or more experts per token than experts give nonsense. The bounds are far above every released
model (the largest have about 128 layers, hidden sizes of 32k and 256 routed experts) and far below
what makes the sizing slow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from generator.errors import ArchitectureError, InputError
from generator.sizing.architecture import Architecture

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

#: field -> (lowest, highest) allowed value when the field is given as a number.
DIMENSION_BOUNDS: dict[str, tuple[int, int]] = {
    "num_hidden_layers": (1, 1024),
    "hidden_size": (1, 262_144),
    "num_attention_heads": (1, 4096),
    "num_key_value_heads": (1, 4096),
    "head_dim": (1, 8192),
    "intermediate_size": (1, 1_048_576),
    "ffn_dim": (1, 1_048_576),
    "moe_intermediate_size": (1, 1_048_576),
    "shared_expert_intermediate_size": (0, 1_048_576),
    "vocab_size": (1, 8_388_608),
    "max_position_embeddings": (1, 1 << 31),  # 0: vLLM derives a max_model_len of 0 and serves nothing
    "num_experts": (0, 8192),
    "num_local_experts": (0, 8192),
    "n_routed_experts": (0, 8192),
    "n_shared_experts": (0, 256),
    "num_experts_per_tok": (0, 8192),
    "moe_num_experts": (0, 8192),  # ERNIE 4.5's names
    "moe_k": (0, 8192),
    "moe_num_shared_experts": (0, 256),
    "moe_layer_start_index": (0, 1024),
    "moe_layer_end_index": (-1, 1024),  # -1: the last layer (Transformers' Ernie4_5_MoeConfig)
    "moe_layer_interval": (1, 1024),
    "kv_lora_rank": (1, 65_536),
    "q_lora_rank": (1, 65_536),
    "qk_rope_head_dim": (0, 65_536),
    "qk_nope_head_dim": (0, 65_536),
    "v_head_dim": (1, 65_536),
    "sliding_window": (0, 1 << 31),
    "sliding_window_pattern": (1, 1024),
    "max_window_layers": (0, 1024),
    "first_k_dense_replace": (0, 1024),
    "moe_layer_freq": (1, 1024),
    "decoder_sparse_step": (1, 1024),
    "interleave_moe_layer_step": (1, 1024),
    "num_nextn_predict_layers": (0, 64),
    "depth": (1, 1024),
    "patch_size": (1, 4096),
    "num_channels": (1, 64),
    "image_size": (1, 65_536),
}
#: Most entries in a per-layer list (``layer_types``, ``mlp_only_layers``).
MAX_LAYER_LIST = 1024
_EXPERT_COUNTS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")


def _check_section(section: Mapping[str, Any], where: str) -> None:
    for key, (low, high) in DIMENSION_BOUNDS.items():
        value = section.get(key)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        # hostile92: an integer past a float's range (10**400) raised OverflowError in math.isfinite, named nowhere
        if not ((isinstance(value, int) or math.isfinite(value)) and low <= value <= high):
            raise ArchitectureError(
                f"config field '{where}{key}' = {_shown(value)} is out of range: must be from {low:,} to {high:,}"
            )
    for key in ("layer_types", "mlp_only_layers"):
        value = section.get(key)
        if isinstance(value, list) and len(value) > MAX_LAYER_LIST:
            raise ArchitectureError(f"config field '{where}{key}' has {len(value):,} entries, more than {MAX_LAYER_LIST:,}")
    experts = next((section[k] for k in _EXPERT_COUNTS if isinstance(section.get(k), int) and section[k]), None)
    top_k = section.get("num_experts_per_tok")
    if experts is not None and isinstance(top_k, int) and not isinstance(top_k, bool) and top_k > experts:
        raise ArchitectureError(f"config field '{where}num_experts_per_tok' = {top_k} is more than the {experts} experts")


#: What a JSON value read by Python is, in JSON's words.
_JSON_KINDS = {str: "a text", list: "a list", int: "a number", float: "a number", bool: "a boolean"}


def _shown(value: float) -> str:
    """``value`` as a message shows it: an integer of more than 30 digits by its count of digits."""
    digits = len(str(abs(value))) if isinstance(value, int) else 0
    return f"a number of {digits:,} digits" if digits > 30 else repr(value)


def check_config_dimensions(config: Mapping[str, Any]) -> None:
    """Raise ArchitectureError for a dimension outside :data:`DIMENSION_BOUNDS` (top level, text and vision configs)."""
    _check_section(config, "")
    for sub in ("text_config", "vision_config"):
        if isinstance(config.get(sub), Mapping):
            _check_section(config[sub], f"{sub}.")
        elif config.get(sub) is not None:  # hostile92: a text or a list was passed over, the top level sized instead
            raise ArchitectureError(
                f"config field '{sub}' must be a mapping (the {sub.split('_')[0]} model's own config), "
                f"got {_JSON_KINDS.get(type(config[sub]), 'a value')} {str(config[sub])[:60]!r}"
            )


def check_layout(arch: Architecture, tp: int, pp: int) -> None:
    """Tensor parallelism must split the attention heads evenly; pipeline stages cannot outnumber layers."""
    if arch.num_attention_heads % tp:
        raise InputError(f"--tp {tp} does not divide the model's {arch.num_attention_heads} attention heads")
    if pp > arch.num_layers:
        raise InputError(f"--pp {pp} is more than the model's {arch.num_layers} layers")
