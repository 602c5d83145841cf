"""``specgen estimate`` with vLLM / SGLang on an RDNA 3 card says specgen has no measurement there (fix183 item 4).

Its llama.cpp path said AMD prompts are unchecked; the serving engines' path on an RX 7900 XTX or a Radeon PRO W7900
said nothing, and no vLLM or SGLang row of the calibration is of RDNA 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.calculator.rdna3_engines import VLLM_ROCM_GPUS_URL, rdna3_engine_note

REPO = Path(__file__).resolve().parents[1]
RDNA3 = ("rx-7900-xtx-24gb", "radeon-pro-w7900-48gb")


def _notes(gpu: str, engine: str) -> list[str]:
    req = EstimateRequest(model="meta-llama/Llama-3.1-8B-Instruct", precision="bf16", gpu=gpu, engine=engine)
    notes: list[str] = estimate(req)["notes"]
    return notes


@pytest.mark.parametrize("gpu", RDNA3)
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_rdna3_says_no_measurement(gpu: str, engine: str) -> None:
    name = "vLLM" if engine == "vllm" else "SGLang"
    (note,) = [n for n in _notes(gpu, engine) if n.startswith("specgen has no ")]
    assert note.startswith(f"specgen has no {name} measurement on RDNA 3")
    assert (VLLM_ROCM_GPUS_URL in note) is (engine == "vllm")


@pytest.mark.parametrize("gpu", ["mi300x-192gb", "mi210-64gb", "h100-sxm5-80gb"])
def test_not_said_off_rdna3(gpu: str) -> None:
    assert not [n for n in _notes(gpu, "vllm") if "measurement on RDNA 3" in n]


def test_no_calibration_row_is_of_rdna3() -> None:
    """The note's premise: were a row of these cards added, the note would have to go."""
    rows = json.loads((REPO / "tests" / "data" / "calibration.json").read_text(encoding="utf-8"))["throughput"]
    assert not [r for r in rows if r.get("gpu") in RDNA3]


def test_llama_cpp_is_left_to_its_own_note() -> None:
    assert rdna3_engine_note("llama.cpp", "rdna3") is None
