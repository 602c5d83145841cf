"""Throughput against the public calibration rows, by group: the issue's targets where they hold, pinned figures elsewhere.

Issue 9's target is a median |error| of at most 15% and a p90 of at most 40% in every throughput group.
Groups that meet it are held to it; groups that do not (see benchmarks/CALIBRATION.md for why) are
pinned at today's figures, so a change that makes any group worse fails here. The rows, their sources
and the per-group report are in ``benchmarks/calibration_report.py``; the constants are fitted across
all in-sample groups at once (``--fit``), never per group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import calibration_report as _report

REPO = Path(__file__).resolve().parents[1]

TARGET_MEDIAN = 0.15
TARGET_P90 = 0.40

#: group -> (median, p90) |error| today, for groups that miss the target (benchmarks/CALIBRATION.md).
PINNED: dict[str, tuple[float, float]] = {
    # out of sample (vLLM V0 on MI300X, October 2024), over-predicted even at AMD's max-achievable GEMM rate and RCCL's
    # 48 GB/s per xGMI link: each added sequence costs about 0.24 ms per decode step, a host loop or GEMM path slower
    # than the roofline (benchmarks/CALIBRATION.md, 2026-12-01)
    "throughput vllm mi300x-192gb fp8": (0.2254, 0.2959),
    "throughput vllm mi300x-192gb fp8 static batch": (0.2351, 0.3069),
    # out of sample (TensorRT-LLM v0.6.1 C++ runtime, Llama-2-7B FP16 on one A100, static batches): 14-25% low even
    # without per-sequence host time (generator/sizing/engine_runtime.py); the fitted GEMM efficiency applies to
    # datasheet peaks, and A100 FP16 sustains more of its peak than H100 FP8 (MAMF 86.9% vs 70.9%, CALIBRATION.md)
    "throughput tensorrt-llm-cpp a100-sxm4-80gb fp16 static batch": (0.2265, 0.2489),
}

#: Tolerance on a pinned figure (rounding of the report's four decimals).
SLACK = 0.005


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
