"""The calibration report sizes a TensorRT-LLM row's KV cache with TensorRT-LLM's own budget (acc133, after acc130).

TensorRT-LLM's PyTorch executor runs a profiling forward, then takes ``free_gpu_memory_fraction`` (KvCacheConfig
default 0.9; trtllm-bench's ``--kv_cache_free_gpu_mem_fraction`` default .90, "The percentage of memory to use for KV
Cache after model load") of what it left free::

    available_kv_mem = (total_gpu_memory - peak_memory + alloc_kv_tokens * kv_size_per_token) * fraction

(``cal_max_tokens``, https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/_util.py): the
peak includes the small KV cache the profiling pass ran with, which is added back. vLLM's budget is
``gpu_memory_utilization`` of the whole GPU, the KV cache what is left of it beside what is held. Figures worked by hand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.calculator.estimate import estimate
from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.memory import MemoryBreakdown, kv_capacity
from generator.sizing.weights import Parallelism
from generator.units import GIB
from tests.conftest import calibration_report

TENSORRT_ENGINES = ("tensorrt-llm", "tensorrt-llm-serve", "tensorrt-llm-cpp")


def cal_max_tokens_bytes(total: float, peak: float, profiling_kv: float, fraction: float) -> float:
    """TensorRT-LLM's ``available_kv_mem`` (the PyTorch executor's ``cal_max_tokens``), in bytes."""
    return (total - peak + profiling_kv) * fraction


@pytest.mark.parametrize(
    ("total_gib", "peak_gib", "profiling_kv_gib", "available_gib"),
    [
        # 80 GiB, a 30 GiB peak of which 2 GiB were the profiling pass's KV: (80 - 30 + 2) x 0.9 = 46.8 GiB
        (80, 30, 2, 46.8),
        # 141 GiB, a 70 GiB peak with 1 GiB of it KV: (141 - 70 + 1) x 0.9 = 64.8 GiB (vLLM's budget: 126.9 - 69 = 57.9)
        (141, 70, 1, 64.8),
    ],
)
def test_the_pool_is_cal_max_tokens_available_memory(
    total_gib: int, peak_gib: int, profiling_kv_gib: int, available_gib: float
) -> None:
    assert cal_max_tokens_bytes(total_gib, peak_gib, profiling_kv_gib, 0.9) == pytest.approx(available_gib)
    held = (peak_gib - profiling_kv_gib) * GIB  # what the pass held beside its KV: weights, activations, runtime
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    consts = Constants()._replace(gpu_memory_utilization=0.9, kv_budget_of_free_memory=1)
    per_gpu = MemoryBreakdown(held, 0, 0, 0, 0, 0)
    got = kv_capacity(arch, 16, 4096, Parallelism(tp=1), consts, total_gib * GIB, per_gpu).kv_available_bytes
    assert got == pytest.approx(available_gib * GIB, abs=2)


def _rows(engine: str, gpu: str, input_tokens: int) -> list[dict[str, Any]]:
    report = calibration_report()
    rows = json.loads(report.DATA.read_text())["throughput"]
    return [r for r in rows if r["engine"] == engine and r["gpu"] == gpu and r["input_tokens"] == input_tokens]


def test_a_tensorrt_llm_row_holds_the_fraction_of_the_free_memory() -> None:
    """trtllm-serve's Qwen3-14B BF16 32,000/100 row on one A100 80GB (GPUStack's lab): 84,988,133,376 B, held
    29,536,614,400 (weights) + 1,191,182,336 (a pass's activations) + 1,343,225,856 (runtime) = 32,071,022,592 B.
    TensorRT-LLM: 0.9 x (84,988,133,376 - 32,071,022,592) = 47,625,399,705 B, 290,682 tokens of 163,840 B (40 layers x 8
    KV heads x 128 x 2 x bf16), 18,167 whole blocks of 16: 290,672 tokens. vLLM's budget would leave 76,489,320,038 -
    32,071,022,592 = 44,418,297,446 B: 16,944 blocks, 271,104 tokens."""
    report = calibration_report()
    (row,) = [r for r in _rows("tensorrt-llm-serve", "a100-sxm4-80gb", 32000) if r["model"] == "Qwen/Qwen3-14B"]
    result = estimate(report.estimate_request(row))
    per_gpu, capacity = result["memory"]["per_gpu"], result["capacity"]
    held = per_gpu["weights"] + per_gpu["activations"] + per_gpu["overhead"]
    assert (capacity["gpu_memory_bytes"], held) == (84_988_133_376, 32_071_022_592)
    assert capacity["kv_cache_bytes"] == 47_625_399_705
    assert capacity["kv_cache_tokens"] == 290_672
    vllm_budget = report.estimate_request(row)._replace(
        constants=tuple((k, 0 if k == "kv_budget_of_free_memory" else v) for k, v in report._row_constants(row))
    )
    assert estimate(vllm_budget)["capacity"]["kv_cache_tokens"] == 271_104


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_planners_engines_keep_their_own_budget(engine: str) -> None:
    """A vLLM or SGLang row is never sized with TensorRT-LLM's budget: the flag is set for TensorRT-LLM's three
    entries only."""
    report = calibration_report()
    assert dict(report._row_constants({"engine": engine})).get("kv_budget_of_free_memory", 0) == 0
    for name in TENSORRT_ENGINES:
        assert dict(report._row_constants({"engine": name}))["kv_budget_of_free_memory"] == 1
