"""fix181: config.json fields hostile90 found accepted, each now refused at its line and column.

- ``model_type: ""`` was sized as "unknown" (while ``5`` was refused): a model type is a name such as llama.
- ``rope_scaling.original_max_position_embeddings`` of 0, -5, 1.5, true or "8192" was read as absent (the context from
  ``max_position_embeddings`` instead): it is a positive whole number of tokens, or null.
- An odd ``head_dim`` (3, 127) was sized: RoPE rotates the head in two halves (transformers' ``rotate_half``) and
  vLLM's attention kernels take even head sizes only. 0, negative and non-integer values were refused already (kept).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.cli import main
from generator.json_positions import line_column, value_offsets
from tests.test_hostile90_config_place import _llama

YARN = {"rope_type": "yarn", "factor": 4.0}
OMPE = "rope_scaling.original_max_position_embeddings"
OMPE_SAID = "config field 'rope_scaling.original_max_position_embeddings' must be a whole number of tokens above 0"

CASES = [
    ("model-type-empty", {"model_type": ""}, "model_type",
     "config field 'model_type' must be a model type name such as llama, got ''"),
    ("text-model-type-empty", {"text_config": {**_llama(), "model_type": ""}}, "text_config.model_type",
     "config field 'text_config.model_type' must be a model type name such as llama, got ''"),
    ("ompe-0", {"rope_scaling": {**YARN, "original_max_position_embeddings": 0}}, OMPE, f"{OMPE_SAID} (or null), got 0"),
    ("ompe-negative", {"rope_scaling": {**YARN, "original_max_position_embeddings": -5}}, OMPE,
     f"{OMPE_SAID} (or null), got -5"),
    ("ompe-fraction", {"rope_scaling": {**YARN, "original_max_position_embeddings": 1.5}}, OMPE,
     f"{OMPE_SAID} (or null), got 1.5"),
    ("ompe-true", {"rope_scaling": {**YARN, "original_max_position_embeddings": True}}, OMPE,
     f"{OMPE_SAID} (or null), got true"),
    ("ompe-text", {"rope_scaling": {**YARN, "original_max_position_embeddings": "8192"}}, OMPE,
     f"{OMPE_SAID} (or null), got '8192'"),
    ("head-dim-3", {"head_dim": 3}, "head_dim", "config field 'head_dim' must be an even number of dimensions, got 3"),
    ("head-dim-127", {"head_dim": 127}, "head_dim", "config field 'head_dim' must be an even number of dimensions, got 127"),
    # refused before fix181, kept
    ("head-dim-0", {"head_dim": 0}, "head_dim", "config field 'head_dim' = 0 is out of range"),
    ("head-dim-negative", {"head_dim": -2}, "head_dim", "config field 'head_dim' = -2 is out of range"),
    ("head-dim-fraction", {"head_dim": 2.5}, "head_dim", "config field 'head_dim' must be a non-negative integer"),
    ("head-dim-true", {"head_dim": True}, "head_dim", "config field 'head_dim' must be a non-negative integer"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "field", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_malformed_field_is_refused_at_it(
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
    assert "Traceback" not in err


GOOD = [
    ("ompe-given", {"rope_scaling": {**YARN, "original_max_position_embeddings": 8192}}),
    ("ompe-null", {"rope_scaling": {**YARN, "original_max_position_embeddings": None}}),
    ("head-dim-even", {"head_dim": 128}),
    ("model-type-absent", {"model_type": None}),
]


@pytest.mark.parametrize("edit", [c[1] for c in GOOD], ids=[c[0] for c in GOOD])
def test_a_well_formed_field_is_still_sized(tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, Any]) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_llama() | edit, indent=2))
    assert main([str(path)]) == 0, capsys.readouterr().err
