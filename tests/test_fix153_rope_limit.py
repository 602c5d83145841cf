"""fix153 item 3: the estimate's context limit is vLLM's derived ``max_model_len`` for each RoPE scaling type.

vllm/config ``_get_and_verify_max_len`` (https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py): the
smallest of the config's length keys, then, for a ``rope_scaling`` whose type is not ``su`` / ``longrope`` / ``llama3``
(whose ``max_position_embeddings`` is already the scaled length), times its ``factor`` (``rope_scaling.get("factor",
1.0)``), from ``original_max_position_embeddings`` for YaRN; a ``--max-model-len`` above it is refused.
``generator.sizing.context_limit.served_context_tokens`` does this; these cases pin it through the estimate of a
local config.json (linear, dynamic, yarn from two originals, llama3, longrope, default).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from tests.helpers import run_estimate


def _config(tmp_path: Path, **fields: Any) -> str:
    config = dict(catalog.find_model("Qwen/Qwen2.5-7B-Instruct").config)  # 32,768 positions, no rope_scaling
    config.update(fields)
    path = tmp_path / "scaled" / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize(
    ("rope", "limit"),
    [
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 131072),
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16384}, 65536),  # from the original
        ({"type": "linear", "factor": 2.0}, 65536),
        ({"rope_type": "dynamic", "factor": 2.0}, 65536),  # vLLM multiplies dynamic NTK's factor too
        ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, 32768),  # already scaled
        ({"rope_type": "longrope", "factor": 4.0}, 32768),
        ({"rope_type": "default"}, 32768),  # no factor: 1
    ],
)
def test_the_estimate_limit_is_vllms_derived_max_model_len(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rope: dict[str, Any], limit: int
) -> None:
    path = _config(tmp_path, rope_scaling=rope)
    code, text = run_estimate(path, "--gpu", "h100-sxm5-80gb", "--context", str(limit), "--json")
    assert code == 0, capsys.readouterr().err
    assert json.loads(text)["model"]["max_model_len"] == limit
    code, text = run_estimate(path, "--gpu", "h100-sxm5-80gb", "--context", str(limit + 1))
    assert (code, text) == (1, "")
    assert f"is more than the {limit:,} tokens" in capsys.readouterr().err
