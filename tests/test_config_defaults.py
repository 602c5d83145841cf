"""Published configs that leave out fields their Transformers class defaults, and architectures specgen refuses
rather than mis-sizes (newuser21 items 1 and 8)."""

from __future__ import annotations

from typing import Any

import pytest

from generator.errors import ArchitectureError
from generator.sizing.architecture import parse_architecture

#: google/gemma-3-27b-it's config.json (https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json) as
#: published, vision tower left out: its text_config has no vocab_size, max_position_embeddings or
#: sliding_window_pattern (Gemma3TextConfig defaults 262,208 / 131,072 / 6).
GEMMA3_27B: dict[str, Any] = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": {
        "head_dim": 128,
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "model_type": "gemma3_text",
        "num_attention_heads": 32,
        "num_hidden_layers": 62,
        "num_key_value_heads": 16,
        "query_pre_attn_scalar": 168,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
    },
    "torch_dtype": "bfloat16",
}


def test_gemma3_text_config_without_vocab_size_takes_transformers_default() -> None:
    arch = parse_architecture(GEMMA3_27B)
    assert arch.vocab_size == 262_208
    # the default changes nothing else: the same config with the field written sizes the same
    written = {**GEMMA3_27B, "text_config": {**GEMMA3_27B["text_config"], "vocab_size": 262_208}}
    assert parse_architecture(written) == arch


def test_a_config_that_states_vocab_size_keeps_it() -> None:
    config = {**GEMMA3_27B, "text_config": {**GEMMA3_27B["text_config"], "vocab_size": 1000}}
    assert parse_architecture(config).vocab_size == 1000


def test_a_model_type_without_a_default_still_needs_vocab_size() -> None:
    llama = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}
    with pytest.raises(ArchitectureError, match="config lacks vocab_size"):
        parse_architecture(llama)


@pytest.mark.parametrize("marker", [{"full_attention_interval": 4}, {"linear_num_value_heads": 32}])
def test_linear_attention_layers_are_refused_not_sized_as_attention(marker: dict[str, int]) -> None:
    # Qwen3-Next-80B-A3B geometry: 3 of 4 layers are Gated DeltaNet, with no KV per token
    config = {
        "model_type": "qwen3_next",
        "hidden_size": 2048,
        "num_hidden_layers": 48,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "vocab_size": 151936,
        **marker,
    }
    # without the Gated DeltaNet's head counts and dimensions it is still refused, naming what is missing
    with pytest.raises(ArchitectureError, match=r"\(Gated DeltaNet\) layers .* only for Qwen3-Next \(config lacks"):
        parse_architecture(config)
