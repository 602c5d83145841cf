"""vLLM's fused-MoE layers: a fixed time per MoE layer per engine step (acc181, issue 9; adopted at 70 us, acc183).

``moe_layer_step_s`` adds that time, once per MoE layer of a stage, to every decode step
(generator/sizing/performance.py ``DecodeModel``); vLLM's value is ``vllm_moe_layer_step_s``, which the planner
(``engine_constants``), the estimate (``_engine_batches``) and the calibration report (``ENGINE_SETTINGS``) give vLLM
alone: SGLang's and TensorRT-LLM's MoE rows fit without it. Its default is the 70 us fitted over all calibration
groups at once (benchmarks/CALIBRATION.md, acc181 entry); ``--set vllm_moe_layer_step_s=0`` removes it.
"""

from __future__ import annotations

import pytest

from generator import catalog
from generator.calculator.estimate import EstimateRequest, estimate
from generator.errors import InputError
from generator.planner.inference import engine_constants
from generator.sizing.constants import Constants, with_overrides
from generator.workload.models import InferenceSpec
from tests.conftest import calibration_report as _report

#: gpt-oss-20b's decoder: 24 layers, every one a MoE layer (32 experts, top-4).
GPT_OSS_20B_MOE_LAYERS = 24
#: The argmin over all calibration groups (CALIBRATION.md, acc181 entry), the default these tests set explicitly.
FITTED_S = 70e-6


def _step_seconds(model: str, moe_layer_step_s: float, tp: int = 1, pp: int = 1) -> float:
    """A single-sequence decode step of ``model`` on an H200 under vLLM's settings, at ``moe_layer_step_s``."""
    report = _report()
    row = {"engine": "vllm", "gpu": "h200-sxm-141gb", "model": model, "precision": "bf16", "kv_precision": "bf16",
           "tp": tp, "pp": pp, "input_tokens": 1000, "output_tokens": 1000}  # fmt: skip
    if model == "openai/gpt-oss-20b":
        row["precision"] = "mxfp4"
    arch, weights, par, acc, kv_bits, consts = report._replica(row)
    consts = with_overrides({"moe_layer_step_s": moe_layer_step_s}, consts)
    return float(report.decode_model(arch, weights, kv_bits, par, acc, 1500, consts, 1000).step(1, 0).seconds)


def test_each_moe_layer_adds_its_fixed_time_to_a_step() -> None:
    without = _step_seconds("openai/gpt-oss-20b", 0.0)
    with_it = _step_seconds("openai/gpt-oss-20b", 100e-6)
    assert with_it - without == pytest.approx(GPT_OSS_20B_MOE_LAYERS * 100e-6, rel=1e-9)


def test_a_pipeline_stage_pays_for_its_own_moe_layers_once_a_step() -> None:
    """PP 2 runs two stages a step, each with half the layers: the step still pays every MoE layer once."""
    without = _step_seconds("openai/gpt-oss-20b", 0.0, pp=2)
    with_it = _step_seconds("openai/gpt-oss-20b", 100e-6, pp=2)
    assert with_it - without == pytest.approx(GPT_OSS_20B_MOE_LAYERS * 100e-6, rel=1e-9)


def test_a_dense_model_pays_nothing() -> None:
    assert _step_seconds("meta-llama/Llama-3.1-8B-Instruct", 100e-6) == _step_seconds("meta-llama/Llama-3.1-8B-Instruct", 0.0)


def test_it_is_adopted_at_its_fitted_value() -> None:
    # moe_layer_step_s is what a step reads, left to the engine (-1) unless set; vLLM alone is given vllm_moe_layer_step_s
    assert Constants().moe_layer_step_s == -1.0 and Constants().vllm_moe_layer_step_s == FITTED_S


@pytest.mark.parametrize(("engine", "expected"), [("vllm", FITTED_S), ("sglang", 0.0)])
def test_the_planner_gives_vllm_alone_its_moe_layer_time(engine: str, expected: float) -> None:
    spec = InferenceSpec(max_context_tokens=8192, engine=engine)  # type: ignore[arg-type]
    given = with_overrides({"vllm_moe_layer_step_s": FITTED_S})
    consts = engine_constants(spec, catalog.gpus()["h200-sxm-141gb"], given, model_type="gpt_oss")
    assert consts.moe_layer_step_s == expected


def _tpot_s(engine: str, constants: tuple[tuple[str, float], ...] = ()) -> float:
    request = EstimateRequest(
        model="openai/gpt-oss-20b",
        precision="mxfp4",
        gpu="h200-sxm-141gb",
        input_tokens=1000,
        output_tokens=1000,
        context_tokens=2000,
        batch=1,
        engine=engine,
        constants=constants,
    )
    return float(estimate(request)["throughput"]["decode_step_s"])


def test_the_estimate_times_vllms_moe_layers_and_keeps_a_given_value() -> None:
    fitted = _tpot_s("vllm", (("vllm_moe_layer_step_s", FITTED_S),))
    none = _tpot_s("vllm", (("vllm_moe_layer_step_s", 0.0),))
    assert _tpot_s("vllm") == pytest.approx(fitted)  # the default is the fitted value
    assert fitted - none == pytest.approx(GPT_OSS_20B_MOE_LAYERS * FITTED_S, rel=0.02)
    # a moe_layer_step_s given stands (the report's rows of other runtimes, estimated under vLLM's limits, give 0)
    assert _tpot_s("vllm", (("vllm_moe_layer_step_s", FITTED_S), ("moe_layer_step_s", 0.0))) == pytest.approx(none)
    assert _tpot_s("sglang", (("vllm_moe_layer_step_s", FITTED_S),)) == _tpot_s("sglang")


def test_the_calibration_rows_of_other_runtimes_state_none() -> None:
    report = _report()
    for engine in ("sglang", "tensorrt-llm", "tensorrt-llm-cpp", "tensorrt-llm-serve"):
        assert dict(report._row_constants({"engine": engine}))["moe_layer_step_s"] == 0.0
    assert dict(report._row_constants({"engine": "vllm"}))["moe_layer_step_s"] == Constants().vllm_moe_layer_step_s


@pytest.mark.parametrize(
    ("given", "engine", "expected"),
    [
        ({}, "vllm", FITTED_S),
        ({}, "sglang", 0.0),
        ({"moe_layer_step_s": 0.0}, "vllm", 0.0),
        ({"moe_layer_step_s": 50e-6}, "vllm", 50e-6),
        ({"moe_layer_step_s": 50e-6}, "sglang", 50e-6),
        ({"moe_layer_step_s": 0.0, "vllm_moe_layer_step_s": 90e-6}, "vllm", 0.0),
        ({"vllm_moe_layer_step_s": 90e-6}, "vllm", 90e-6),
    ],
)
def test_the_planner_keeps_a_workloads_moe_layer_time_as_the_estimate_does(
    given: dict[str, float], engine: str, expected: float
) -> None:
    # fix191: a workload's ``constants: {moe_layer_step_s: 0}`` reaches the planner as the estimate's ``--set`` does
    # (with_overrides); the planner overwrote it with vllm_moe_layer_step_s where the estimate kept it
    spec = InferenceSpec(max_context_tokens=8192, engine=engine)  # type: ignore[arg-type]
    consts = engine_constants(spec, catalog.gpus()["h200-sxm-141gb"], with_overrides(given), model_type="gpt_oss")
    assert consts.moe_layer_step_s == pytest.approx(expected)
    # the estimate under the same setting times the same step as the planner's constants give
    assert _tpot_s(engine, tuple(given.items())) == pytest.approx(_tpot_s(engine, (("moe_layer_step_s", expected),)), rel=1e-12)


def test_only_the_engines_choice_may_be_negative() -> None:
    # -1 (the default) leaves the time to the engine; any other negative is refused with the allowed values
    assert with_overrides({"moe_layer_step_s": -1}).moe_layer_step_s == -1
    with pytest.raises(InputError, match=r"constant 'moe_layer_step_s' must be in \[0, 0.01\] or -1 \(the engine's\)"):
        with_overrides({"moe_layer_step_s": -0.5})
