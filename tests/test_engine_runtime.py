"""Serving runtimes: per-sequence host time only where the host loop handles every sequence each step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.estimate import SERVING_ENGINES
from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.engine_runtime import RUNTIMES, per_sequence_host_scale, runtime_of
from generator.sizing.performance import accelerator_for, static_batch_seconds
from generator.sizing.precision import kv_cache_bits, weight_format
from generator.sizing.weights import Parallelism, size_weights
from tests.conftest import calibration_report as _report

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("engine", "cpu_scale", "scale"),
    [
        ("tensorrt-llm", 1.0, 1.0),  # PyTorch executor: Python loop over every request, the constant's own runtime
        ("tensorrt-llm", 2.75, 2.75),  # ... on a slower host, scaled by its CPU
        ("tensorrt-llm-cpp", 1.0, 0.0),  # gptSessionBenchmark: one GptSession::generate per static batch, GPU sampling
        ("tensorrt-llm-cpp", 2.75, 0.0),  # no per-sequence host work to scale
        ("vllm", 1.0, 1.0),  # Python scheduler
        ("sglang", 1.3, 1.3),  # Python scheduler
        ("tensorrt-llm-serve", 1.0, 1.0),  # trtllm-serve: the PyTorch executor behind an HTTP server
        ("tensorrt-llm-serve", 2.75, 2.75),
    ],
)
def test_per_sequence_host_scale_by_runtime(engine: str, cpu_scale: float, scale: float) -> None:
    assert per_sequence_host_scale(engine, cpu_scale) == scale


def test_an_unknown_runtime_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown serving runtime 'ollama'.*tensorrt-llm-cpp"):
        per_sequence_host_scale("ollama", 1.0)


def test_trtllm_serve_runs_the_pytorch_executor_runtime() -> None:
    assert runtime_of("tensorrt-llm-serve") is RUNTIMES["tensorrt-llm"]
    assert runtime_of("vllm") is RUNTIMES["vllm"] and runtime_of("ollama") is None


def test_every_runtime_names_a_source_to_open() -> None:
    for name, runtime in RUNTIMES.items():
        assert runtime.name == name and runtime.source.startswith("https://github.com/"), name


@pytest.mark.parametrize(
    ("batch", "isl", "osl"),
    [(384, 128, 128), (60, 128, 2048), (52, 2048, 128)],  # the A100 rows of TensorRT-LLM's C++-runtime table
)
def test_a_runtime_without_per_sequence_host_work_saves_exactly_that_time(batch: int, isl: int, osl: int) -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-2-7b-hf").config)
    fmt = weight_format("fp16")
    par = Parallelism()
    weights = size_weights(arch, fmt, par)
    consts = Constants()
    kv_bits = kv_cache_bits("fp16")

    def seconds(engine: str) -> float:
        acc = accelerator_for(find_gpu("a100-sxm4-80gb"), fmt.compute, 1, per_sequence_host_scale(engine, 1.0))
        return static_batch_seconds(arch, weights, kv_bits, par, acc, batch, isl, osl, consts)

    python_loop, cpp = seconds("tensorrt-llm"), seconds("tensorrt-llm-cpp")
    # The GPU work of every step (the prefill and osl - 1 decode steps) outlasts the overlapped part of the
    # host work, so what the C++ runtime saves is the serial rest: (1 - 0.6) x 20 us x batch, osl times.
    saved = osl * (1 - consts.host_overlap_fraction) * consts.decode_overhead_per_sequence_s * batch
    assert python_loop - cpp == pytest.approx(saved, rel=1e-9)


def _cpp_rows() -> list[dict[str, Any]]:
    rows = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["throughput"]
    # the static-batch rows (gptSessionBenchmark); the in-flight-batching rows of the same runtime (the L40S perf-overview
    # cells, accnew entry of 2026-12-04) have no batch and are predicted saturated
    return [r for r in rows if r["engine"] == "tensorrt-llm-cpp" and "batch" in r]


def test_the_report_predicts_cpp_rows_without_per_sequence_host_time() -> None:
    report = _report()
    for row in _cpp_rows():
        arch = parse_architecture(find_model(row["model"]).config)
        fmt = weight_format(row["precision"])
        par = Parallelism(tp=row["tp"], pp=row["pp"])
        acc = accelerator_for(find_gpu(row["gpu"]), fmt.compute, par.tp, 0.0)
        isl, osl, batch = row["input_tokens"], row["output_tokens"], row["batch"]
        # the rows before XQA read a KV head once per query head (acc166): a setting of their version, not host time
        consts = Constants()._replace(decode_kv_read_per_query_head=int(row.get("xqa") is False))
        seconds = static_batch_seconds(
            arch, size_weights(arch, fmt, par), kv_cache_bits(row["kv_precision"]), par, acc, batch, isl, osl, consts
        )
        assert report.predict_static_batch(row) == pytest.approx(batch * osl / seconds), row["gpu"]


def test_every_engine_the_estimate_accepts_has_a_runtime() -> None:
    assert set(SERVING_ENGINES) <= set(RUNTIMES)
