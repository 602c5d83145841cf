"""A ``deepseek2`` GGUF (DeepSeek-V2, V2-Lite, V2.5, V3, R1) as the config.json fields of its Hugging Face model.

llama.cpp's converter (``DeepseekV2Model.set_gguf_parameters`` in convert_hf_to_gguf.py,
https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py) writes multi-head latent attention as MQA
with one wide head: ``head_count_kv`` 1, ``attention.key_length`` ``kv_lora_rank + qk_rope_head_dim`` (576 for V3) and
``attention.value_length`` ``kv_lora_rank``; the per-head widths go to ``attention.key_length_mla``
(``qk_nope_head_dim + qk_rope_head_dim``, 192) and ``attention.value_length_mla`` (``v_head_dim``, 128); the ranks to
``attention.q_lora_rank`` (absent where the model has none: DeepSeek-V2-Lite) and ``attention.kv_lora_rank``, the
RoPE width to ``rope.dimension_count``, the MoE layout to ``expert_count``, ``expert_used_count``,
``expert_shared_count``, ``expert_feed_forward_length`` and ``leading_dense_block_count`` (key names: gguf-py's
``Keys.LLM`` / ``Keys.Attention`` / ``Keys.Rope`` in gguf/constants.py). Mapped back onto ``kv_lora_rank``,
``qk_nope_head_dim``... the architecture parser sizes the file exactly as the model's config.json: the KV cache one
``kv_lora_rank + qk_rope_head_dim`` latent per token and layer, the first ``first_k_dense_replace`` layers dense.

A file converted before the MLA KV cache (llama.cpp PR 12801, April 2025) lacks the ``*_mla`` keys: it holds the
per-head widths in ``key_length`` / ``value_length`` and the config's KV head count, and llama.cpp runs it as
ordinary multi-head attention (``is_mla`` is ``n_embd_head_k_mla != 0 && n_embd_head_v_mla != 0`` in
src/models/deepseek2.cpp), caching ``heads x (key_length + value_length)`` elements per token and layer:
:func:`as_llama_cpp_runs` sizes such a file so (gpustack/gguf-parser-go issue 8: a DeepSeek-V3 Q4_K_M of February 2025
needed 321 GiB more at a 65,536-token context, 128 x 320 elements x 61 layers x 2 B a token). A file with the keys caches
the latent alone (llama.cpp PR 19067, January 2026: the V cache is the K cache's latent, no second copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.errors import InputError, Location
from generator.sizing.architecture import FULL, Architecture

#: ``deepseek2.<suffix>`` -> config.json field, beyond the keys every architecture shares.
MLA_KEYS = {
    "attention.q_lora_rank": "q_lora_rank",
    "attention.kv_lora_rank": "kv_lora_rank",
    "rope.dimension_count": "qk_rope_head_dim",
    "expert_shared_count": "n_shared_experts",
    "leading_dense_block_count": "first_k_dense_replace",
}
#: Shared keys that mean something else in a deepseek2 file: the KV head count and key width of the MQA form
#: (1 and 576 for V3), not the model's heads and head width; a shared-expert width the converter does not write.
NOT_SHARED = frozenset({"attention.head_count_kv", "attention.key_length", "expert_shared_feed_forward_length"})
#: ``expert_gating_func`` of a sigmoid router (gguf-py ``ExpertGatingFuncType.SIGMOID``): DeepSeek-V3 and R1
#: (config.json ``scoring_func: sigmoid``); V2 routes by softmax, and llama.cpp takes an absent key as softmax.
SIGMOID_GATING = 2
#: gguf-py ``ExpertGatingFuncType``: the routers a file may name.
GATING_FUNCS = {1: "softmax", SIGMOID_GATING: "sigmoid"}
#: The widths a deepseek2 file may say of one head (its key, value): at least 1, at most config.json's bound.
MAX_HEAD_WIDTH = 65_536

#: A deepseek2 key's value as a whole number (``None`` where the file lacks it).
Count = Callable[[str], int | None]


def deepseek2_config(count: Count, config: dict[str, Any], label: str, location: Location | None) -> None:
    """Add the MLA and DeepSeek-MoE fields of a deepseek2 header to ``config`` (which has the shared ones)."""
    gating = count("expert_gating_func")
    if gating not in (None, *GATING_FUNCS):  # fuzz26 L4: 99 was read as softmax
        raise InputError(
            f"{label}: GGUF key deepseek2.expert_gating_func is {gating}, not a router llama.cpp knows "
            f"({', '.join(f'{n} {f}' for n, f in GATING_FUNCS.items())})",
            location,
        )
    config["model_type"] = "deepseek_v3" if gating == SIGMOID_GATING else "deepseek_v2"
    if "num_attention_heads" in config:
        config["num_key_value_heads"] = config["num_attention_heads"]  # as DeepSeek's config.json files say
    for suffix, field in MLA_KEYS.items():
        if (number := count(suffix)) is not None:
            config[field] = number
    dense, layers = config.get("first_k_dense_replace"), config.get("num_hidden_layers")
    if isinstance(dense, int) and isinstance(layers, int) and not 0 <= dense <= layers:  # fuzz26 L4: 10 of 3 layers
        raise InputError(
            f"{label}: GGUF key deepseek2.leading_dense_block_count is {dense:,}, not from 0 to the file's {layers} layers "
            "(deepseek2.block_count)",
            location,
        )
    if not config.get("q_lora_rank"):
        config.pop("q_lora_rank", None)  # V2-Lite projects queries directly (config.json: q_lora_rank null)
    key_suffix, value_suffix = _head_width_keys(count)
    needed = ("attention.kv_lora_rank", "rope.dimension_count", key_suffix, value_suffix)
    values = {suffix: count(suffix) for suffix in needed}
    if missing := [f"deepseek2.{suffix}" for suffix in needed if values[suffix] is None]:
        raise InputError(f"{label}: GGUF metadata lacks {', '.join(missing)}, which a deepseek2 model needs", location)
    rope, key_width, value_width = (int(values[suffix] or 0) for suffix in needed[1:])
    if key_width < rope:
        raise InputError(
            f"{label}: GGUF key deepseek2.{key_suffix} is {key_width}, less than the {rope} of deepseek2.rope.dimension_count "
            "(a key head is its non-rotary part plus the rotary one)",
            location,
        )
    config["qk_nope_head_dim"] = key_width - rope
    config["v_head_dim"] = value_width


def _head_width_keys(count: Count) -> tuple[str, str]:
    """The keys holding one head's key and value widths: the ``*_mla`` ones, else (an older file) the plain ones."""
    if count("attention.key_length_mla") and count("attention.value_length_mla"):
        return "attention.key_length_mla", "attention.value_length_mla"
    return "attention.key_length", "attention.value_length"


def head_width_sources(count: Count) -> dict[str, str]:
    """The GGUF keys the head widths of a deepseek2 config are made of, by config field (for messages naming them)."""
    key_suffix, value_suffix = _head_width_keys(count)
    return {
        "qk_nope_head_dim": f"GGUF keys 'deepseek2.{key_suffix}' minus 'deepseek2.rope.dimension_count'",
        "v_head_dim": f"GGUF key 'deepseek2.{value_suffix}'",
    }


def legacy_attention(count: Count, heads: int, label: str, location: Location | None) -> tuple[int, int, int] | None:
    """(KV heads, key width, value width) llama.cpp caches for a file without the ``*_mla`` keys; ``None`` with them.

    fuzz26 L2: the KV head count was taken unchecked (2^31 sized a cache; 0 read silently as the head count).
    """
    key_suffix, value_suffix = _head_width_keys(count)
    if key_suffix.endswith("_mla"):
        return None
    kv_heads = count("attention.head_count_kv")
    if kv_heads is not None and not 1 <= kv_heads <= heads:
        raise InputError(
            f"{label}: GGUF key deepseek2.attention.head_count_kv is {kv_heads:,}: a file converted before MLA caching "
            f"holds the model's KV heads, from 1 to its {heads} attention heads",
            location,
        )
    widths = []
    for suffix in (key_suffix, value_suffix):
        width = count(suffix)
        if width is None or not 1 <= width <= MAX_HEAD_WIDTH:
            raise InputError(
                f"{label}: GGUF key deepseek2.{suffix} is {width}: a head's width is from 1 to {MAX_HEAD_WIDTH:,}", location
            )
        widths.append(width)
    return kv_heads or heads, widths[0], widths[1]


def as_llama_cpp_runs(arch: Architecture, legacy: tuple[int, int, int], label: str) -> Architecture:
    """``arch`` (parsed as MLA) with the per-head KV cache llama.cpp keeps for a file converted before MLA caching.

    The weights are the model's own (its ``attn_kv_b`` still decompresses the latent); each layer caches
    ``kv_heads x (key + value)`` elements a token, and its attention scores span the key width and read the value
    width (``head_dim`` is their mean, so ``4 x heads x head_dim`` is the ``2 x heads x (key + value)`` FLOPs a
    cached token costs).
    """
    kv_heads, key, value = legacy
    layers = tuple(
        layer._replace(attention=FULL, kv_elements_per_token=kv_heads * (key + value), kv_heads=kv_heads) for layer in arch.layers
    )
    note = (
        f"{label}: converted before llama.cpp cached DeepSeek's compressed latent (no deepseek2.attention.key_length_mla): "
        f"llama.cpp runs it as multi-head attention, {kv_heads} KV heads x ({key} + {value}) elements a token and layer "
        "instead of the latent's "
        f"{arch.layers[0].kv_elements_per_token if arch.layers else 0}; a file converted since (April 2025) caches the latent"
    )
    return arch._replace(
        layers=layers, num_kv_heads=kv_heads, head_dim=(key + value) // 2, notes=(*arch.notes, note)
    ).with_counts()
