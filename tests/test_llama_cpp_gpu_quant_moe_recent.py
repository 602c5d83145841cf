"""llama.cpp with the whole model on one GPU beyond Llama 2 7B Q4_0, on current builds
(tests/data/llama_cpp_gpu_quant_moe_recent.json).

The rows: the "master" columns of llama.cpp CUDA maintainers' llama-bench tables in pull requests (Aug 2025 - 2026):
the batch-1 steps of their ``-ub 1`` prompt tests (Llama 3 8B BF16 / Q4_0, Llama 3.2 1B Q4_0, Qwen3-30B-A3B Q4_0,
gpt-oss-20b MXFP4, DeepSeek-V2-Lite Q4_0 on the RTX 3090 / 4090 / 5090) and the pp512 of two MoE models' ``-ub 512``
ones. acc159 (2026-12-07) checked the constants fitted to Llama 2 7B Q4_0 against them and changed none: the dense
steps read -20.5% to +9.4%, the MoE ones -1.7% to +14.4% but DeepSeek-V2-Lite's +103% (its layers take ~205 us where
the floor is 100 us) and gpt-oss-20b's on the 3090 +42%; the MoE prompts read 2.1x and 3.0x fast (every routed
expert's GEMM at the dense int8 rate, where each expert sees 48-64 of the pass's 512 tokens). Too few rows to fit
a mechanism to (benchmarks/CALIBRATION.md, acc159 entry): the bounds below pin what is left over.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from tests.conftest import REPO
from tests.conftest import calibration_report as _report

calibration_report = _report()

DATA = REPO / "tests" / "data" / "llama_cpp_gpu_quant_moe_recent.json"

DENSE = "llama.cpp gpu-resident decode, current builds, other models (dense, NVIDIA GDDR)"
MOE = "llama.cpp gpu-resident decode, current builds, other models (MoE, NVIDIA GDDR)"
MOE_PROMPT = "llama.cpp gpu-resident prompt, current builds, other models (MoE, NVIDIA GDDR)"

#: (rows, median bound, p90 bound) of |predicted / measured - 1| by group: acc159's figures (17.0% / 20.5%,
#: 14.4% / 103.2%, 154.5% / 201.7%) with headroom; they pin the left-over, not a fit.
BOUNDS = {DENSE: (3, 0.20, 0.23), MOE: (5, 0.17, 1.10), MOE_PROMPT: (2, 1.60, 2.10)}


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    return rows


def test_every_row_is_sourced_complete_a_catalog_gpu_and_model() -> None:
    rows = _rows()
    assert len(rows) == 8
    for row in rows:
        assert row["source"].startswith("https://github.com/ggml-org/llama.cpp/pull/"), row
        assert find_gpu(row["gpu"]).id == row["gpu"] and find_model(row["model"]).id == row["model"], row
        assert row["decode_tokens_per_s"] > 0 and row["decode_context_tokens"] > 0, row
        assert row["backend"] == "CUDA" and row["build_era"] == "current" and row["kernel_graphs"] is True, row
        assert row["build"] and row["gpu_as_reported"] and row["model_as_reported"] and row["test"], row
    assert sum("pp512_tokens_per_s" in row for row in rows) == 2


def _errors() -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for group, _, measured, predict, row in calibration_report.llama_cpp_other_models_rows():
        out.setdefault(group, []).append(predict(row) / measured - 1)
    return out


def test_the_groups_are_the_rows_by_kind() -> None:
    errors = _errors()
    assert {group: len(e) for group, e in errors.items()} == {group: bound[0] for group, bound in BOUNDS.items()}


@pytest.mark.parametrize("group", sorted(BOUNDS))
def test_error_by_group_is_bounded(group: str) -> None:
    errors = sorted(abs(e) for e in _errors()[group])
    _, median_bound, p90_bound = BOUNDS[group]
    p90 = errors[min(len(errors) - 1, int(0.9 * len(errors)))]
    assert statistics.median(errors) <= median_bound and p90 <= p90_bound, (group, errors)


def test_the_moe_prompts_are_read_fast() -> None:
    # the left-over acc159 found: every routed expert's GEMM timed at the dense int8 rate reads both MoE prompts at
    # more than twice their measured rate; a model of it would move this pin
    assert all(e > 1.0 for e in _errors()[MOE_PROMPT])


@pytest.mark.parametrize("row", _rows(), ids=lambda r: f"{r['model_as_reported']}-{r['gpu']}")
def test_a_step_without_the_lm_head_is_never_slower(row: dict[str, Any]) -> None:
    decode = calibration_report.predict_gpu_resident_decode(dict(row, tg_tokens=2 * row["decode_context_tokens"]))
    assert calibration_report.predict_gpu_resident_step_without_logits(row) >= decode * (1 - 1e-12)
