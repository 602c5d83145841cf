"""review85: llama.cpp on a machine without a GPU (``--ram-gib`` without ``--gpu``) says a checkpoint it cannot load.

The ``--gpu`` offload plan notes "llama.cpp loads GGUF files, not fp8 checkpoints: convert to q8_0 (7.95 GiB against
8.46)"; the CPU-only estimate (newuser86 item 2) planned and timed the fp8 checkpoint with no word that llama.cpp cannot
run it. A GGUF type, or a float llama.cpp loads as stored, has no such finding.
"""

from __future__ import annotations

import pytest

from tests.helpers import estimate_json

ARGS = ("meta-llama/Llama-3.1-8B", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")


@pytest.mark.parametrize(
    ("precision", "gguf"), [("fp8", "q8_0"), ("int4", "q4_k_m"), ("q4_k_m", None), ("bf16", None), ("q8_0", None)]
)
def test_a_checkpoint_llama_cpp_cannot_load_is_said(precision: str, gguf: str | None) -> None:
    data = estimate_json(*ARGS, "--precision", precision)
    said = [f["message"] for f in data["findings"] if f["code"] == "gguf-conversion"]
    if gguf is None:
        assert said == []
        return
    assert len(said) == 1
    assert said[0].startswith(f"llama.cpp loads GGUF files, not {precision} checkpoints: convert to {gguf} (")
    assert f"--precision {gguf} plans that file" in said[0]
    assert data["cpu_only"]["decode_tokens_per_s"] > 0  # still planned, as the checkpoint


def test_the_text_prints_it() -> None:
    from tests.helpers import run_estimate

    code, text = run_estimate(*ARGS, "--precision", "fp8")
    assert code == 0
    assert "  warning: llama.cpp loads GGUF files, not fp8 checkpoints: convert to q8_0 (7.95 GiB against 8.46);" in text
