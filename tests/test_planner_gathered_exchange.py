"""What the throughput gaps' notes say of the planner's MoE exchange stays true (acc162).

acc157 timed TensorRT-LLM's MoE exchange under attention DP as an all-gather + reduce-scatter for engines with
``moe_gathered_workspace`` 1: the calibration's TensorRT-LLM rows. The planner and the estimate serve vLLM and SGLang
alone, whose plans keep 0 (no start-up workspace) and, since acc164, time the gathered exchange too
(``moe_gathered_exchange``: vLLM 1, the quantized tokens; SGLang 2, the bf16 hidden states); the notes say so, and
``tensorrt-llm-hopper-mxfp4`` matches no plan. Were a TensorRT-LLM engine added to the planner, these fail: its
constants would then need ``moe_gathered_workspace`` 1 (benchmarks/calibration_report.py ENGINE_SETTINGS) and the
notes restating.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.estimate import SERVING_ENGINES
from generator.planner.inference import engine_constants
from generator.sizing.constants import Constants
from generator.workload.models import InferenceSpec

GAPS = Path(__file__).resolve().parent.parent / "generator" / "catalog" / "throughput_gaps.json"


def _planner_engines() -> tuple[str, ...]:
    """The engines a workload may name (InferenceSpec.engine's Literal)."""
    hints = typing.get_type_hints(InferenceSpec)
    return tuple(typing.get_args(hints["engine"]))


def test_planner_and_estimate_serve_vllm_and_sglang_alone() -> None:
    assert sorted(_planner_engines()) == ["sglang", "vllm"]
    assert sorted(SERVING_ENGINES) == ["sglang", "vllm"]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("gpu_id", ["h100-sxm5-80gb", "b200-sxm-180gb"])
def test_planner_engines_gather_without_the_trtllm_workspace(engine: str, gpu_id: str) -> None:
    spec = InferenceSpec(max_context_tokens=8192, engine=engine)  # type: ignore[arg-type]
    consts = engine_constants(spec, catalog.gpus()[gpu_id], Constants(), model_type="llama")
    assert consts.moe_gathered_workspace == 0
    # acc164: vLLM's allgather_reducescatter gathers the quantized tokens, SGLang's DP attention the bf16 hidden states
    assert consts.moe_gathered_exchange == {"vllm": 1, "sglang": 2}[engine]


def test_gathered_model_gaps_name_what_the_planner_does() -> None:
    gaps = {gap["id"]: gap for gap in json.loads(GAPS.read_text())["throughput_gaps"]}
    engines = set(_planner_engines())
    assert not engines & set(gaps["tensorrt-llm-hopper-mxfp4"]["engines"])  # no plan matches it
    for gap_id in ("moe-attention-dp-blackwell", "moe-attention-dp-hopper"):
        assert engines <= set(gaps[gap_id]["engines"])
        notes = " ".join(gaps[gap_id]["research_notes"])
        assert "plans no TensorRT-LLM service" in notes and "keep moe_gathered_workspace 0" in notes
        assert "time the same gathered exchange (moe_gathered_exchange: vLLM 1" in notes  # acc164
