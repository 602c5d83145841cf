"""fix153 item 6: a workload sized at a GGUF type (``precision: q4_k``) on a vLLM or SGLang pool says what that engine
does with it.

The warning (``precision-not-in-checkpoint``) told the user to point ``model`` at "a local config.json with its
quantization_config", which no GGUF has: vLLM serves a .gguf file given as the model (single-file, "highly experimental
and under-optimized", https://docs.vllm.ai/en/latest/features/quantization/gguf/), SGLang loads a .gguf model path with
its gguf loader (--load-format gguf). Neither makes a GGUF of a 16-bit checkpoint.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.sizing.precision import gguf_serving_note
from tests.helpers import VALID

RPS = "      requests_per_second: 2\n"


def _finding(tmp_path: Path, extra: str) -> str:
    assert RPS in VALID
    path = tmp_path / "workload.yaml"
    path.write_text(VALID.replace(RPS, RPS + extra))
    findings = [f.message for f in plan_file(str(path))[1].findings if f.code == "precision-not-in-checkpoint"]
    assert len(findings) == 1, findings
    return findings[0]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ("      precision: q4_k\n", "vLLM makes no GGUF of a checkpoint: it serves a .gguf file given as the model"),
        ("      precision: q2_k_s\n", "vLLM makes no GGUF of a checkpoint"),
        ("      precision: iq3_xs\n      engine: sglang\n", "SGLang makes no GGUF of a checkpoint"),
    ],
)
def test_a_gguf_type_on_a_serving_engine_says_what_it_does(tmp_path: Path, extra: str, says: str) -> None:
    message = _finding(tmp_path, extra)
    assert says in message
    assert "quantization_config" not in message  # no GGUF has one
    assert ".gguf file of it" in message


def test_a_quantized_checkpoint_format_keeps_its_advice(tmp_path: Path) -> None:
    message = _finding(tmp_path, "      precision: int4\n")
    assert "a local config.json with its quantization_config" in message
    assert "GGUF" not in message


@pytest.mark.parametrize(
    ("name", "engine", "file_type"),
    [("q4_k", "vllm", "Q4_K_M"), ("Q5_K_S", "sglang", "Q5_K_S"), ("mxfp4_moe", "vllm", "MXFP4_MOE")],
)
def test_the_note_names_the_file_type(name: str, engine: str, file_type: str) -> None:
    note = gguf_serving_note(name, engine)
    assert note is not None and f"a {file_type} .gguf file of it" in note


@pytest.mark.parametrize(("name", "engine"), [("int4", "vllm"), ("fp8", "sglang"), ("q4_k_m", "llama.cpp"), ("bf16", "vllm")])
def test_no_note_where_it_is_not_a_gguf_type_on_a_serving_engine(name: str, engine: str) -> None:
    assert gguf_serving_note(name, engine) is None
