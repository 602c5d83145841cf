"""Throughput against the public calibration rows, by group: the issue's targets where they hold, pinned figures elsewhere.

Issue 9's target is a median |error| of at most 15% and a p90 of at most 40% in every throughput group.
Groups that meet it are held to it; groups that do not (see benchmarks/CALIBRATION.md for why) are
pinned at today's figures, so a change that makes any group worse fails here. The rows, their sources
and the per-group report are in ``benchmarks/calibration_report.py``; the constants are fitted across
all in-sample groups at once (``--fit``), never per group.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

TARGET_MEDIAN = 0.15
TARGET_P90 = 0.40

#: group -> (median, p90) |error| today, for groups that miss the target (benchmarks/CALIBRATION.md).
PINNED: dict[str, tuple[float, float]] = {
    # p90: Qwen3-30B-A3B prefill-heavy shapes and Qwen3-235B TP8 short prompts
    "throughput tensorrt-llm b200-sxm-180gb nvfp4": (0.0843, 0.4761),
    # median 15.3%: since the vLLM reservation became a mechanism (profiling forward, sampler, graph pool), 80 GB
    # cards keep less KV memory and batch-capped rows (70B at TP2, long outputs) lose a little more
    "throughput tensorrt-llm h100-sxm5-80gb fp8": (0.1534, 0.3339),
    # Qwen3-30B-A3B at TP2-TP8 over PCIe, under-predicted by 20-60% (the source's MoE runs used attention DP and EP,
    # whose layout it does not state; read as TP it fits the other GPUs better, see benchmarks/CALIBRATION.md)
    "throughput tensorrt-llm rtx-pro-6000-blackwell-96gb nvfp4": (0.1745, 0.4747),
    # out of sample (vLLM on MI300X, October 2024): measured far below the hardware's roofline at large batch
    "throughput vllm mi300x-192gb fp8": (0.8127, 0.8137),
    "throughput vllm mi300x-192gb fp8 static batch": (0.2952, 0.8072),
}

#: Tolerance on a pinned figure (rounding of the report's four decimals).
SLACK = 0.005


def _report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibration_report", REPO / "benchmarks" / "calibration_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("calibration_report", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def groups() -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = _report().evaluate()
    return {name: g for name, g in summary.items() if name.startswith("throughput")}


def test_every_throughput_row_is_answered(groups: dict[str, dict[str, Any]]) -> None:
    assert groups and all(g["failed"] == 0 for g in groups.values())


def test_groups_meet_the_target_or_their_pinned_figures(groups: dict[str, dict[str, Any]]) -> None:
    for name, g in groups.items():
        median, p90 = g["median_abs_error"], g["p90_abs_error"]
        if name in PINNED:
            pinned_median, pinned_p90 = PINNED[name]
            assert median <= pinned_median + SLACK and p90 <= pinned_p90 + SLACK, (name, median, p90)
        else:
            assert median <= TARGET_MEDIAN and p90 <= TARGET_P90, (name, median, p90)


def test_pinned_groups_are_real_and_still_miss_the_target(groups: dict[str, dict[str, Any]]) -> None:
    # a pin for a group that now meets the target should be dropped, so the target guards it
    for name in PINNED:
        assert name in groups, name
        g = groups[name]
        assert g["median_abs_error"] > TARGET_MEDIAN or g["p90_abs_error"] > TARGET_P90, name
