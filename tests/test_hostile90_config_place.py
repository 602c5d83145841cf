"""hostile90: a config.json refusal that begins with the field it is of is placed at that field's line and column.

hostile86 placed the refusals worded ``config field 'X' ...``; those worded with the field first (``num_key_value_heads
8 must be positive and divide num_attention_heads 7``, ``sliding_window must be a whole number of tokens``,
``layer_types[0] is 'x'``, ``quantization_config must be a mapping``, ``num_experts_per_tok 0 routes no token``) named
the file alone. The words are kept (other tests pin them); the place is added.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.cli import main
from generator.json_positions import line_column, value_offsets


def _llama() -> dict[str, Any]:
    """A Llama 3.1 8B config (its dimensions; the values the cases replace are each case's own)."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "vocab_size": 128256,
        "rms_norm_eps": 1e-05,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


CASES = [
    ("kv-heads", {"num_attention_heads": 7}, "num_key_value_heads",
     "num_key_value_heads 8 must be positive and divide num_attention_heads 7"),
    ("sliding-text", {"sliding_window": "4096"}, "sliding_window",
     "sliding_window must be a whole number of tokens (or null), got '4096'"),
    ("layer-types-text", {"layer_types": "full_attention"}, "layer_types",
     "layer_types must be a list with one entry per layer"),
    ("layer-types-short", {"layer_types": ["full_attention"]}, "layer_types",
     "layer_types has 1 entries but num_hidden_layers is 32"),
    ("layer-types-bad", {"layer_types": ["full_attention"] * 3 + ["x"] * 29}, "layer_types[3]",
     "layer_types[3] is 'x', not a layer type sized here"),
    ("quantization-text", {"quantization_config": "fp8"}, "quantization_config",
     "quantization_config must be a mapping"),
    ("quant-method", {"quantization_config": {"quant_method": "mystery"}}, "quantization_config.quant_method",
     "quantization_config.quant_method 'mystery' is not supported"),
    ("top-k-0", {"num_local_experts": 8, "num_experts_per_tok": 0}, "num_experts_per_tok",
     "num_experts_per_tok 0 routes no token to any of the 8 experts"),
    ("no-experts", {"num_local_experts": 0, "num_experts_per_tok": 2}, "num_experts_per_tok",
     "num_experts_per_tok 2 names routed experts, but the config's expert count is 0"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "field", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_refusal_led_by_its_field_is_placed_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, Any], field: str, said: str
) -> None:
    path = tmp_path / "config.json"
    text = json.dumps(_llama() | edit, indent=2)
    path.write_text(text)
    line, column = line_column(text, value_offsets(text)[field])
    assert main([str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"specgen estimate: error: {path}:{line}:{column}: {said}"), err


def test_a_refusal_led_by_a_word_the_file_does_not_hold_keeps_its_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refusal that begins with no field names the file alone, as before.

    hostile91: "gptq with 0 bits", this test's case, now begins with its field (config field 'quantization_config.bits').
    """
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_llama() | {"quantization_config": {"quant_method": "compressed-tensors"}}, indent=2))
    assert main([str(path)]) == 1
    said = "compressed-tensors quantization_config has no 4- or 8-bit weight group"
    assert capsys.readouterr().err.startswith(f"specgen estimate: error: {path}: {said}")
