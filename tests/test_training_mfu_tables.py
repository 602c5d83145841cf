"""Out-of-sample training-MFU tables added whole (acc178, issue 9): each row as published, the step's error on it.

Rows of ``tests/data/calibration_training_mfu.json``: every row of llm-foundry's MPT benchmark tables not already in the
file (A100 80GB and 40GB, H100 80GB BF16 760m), NeMo 24.07's FP8 Llama 2 pre-training rows on DGX H100 and
torchtitan's published FP8 Llama 3.1 8B runs on 32 / 64 H200 (benchmarks/CALIBRATION.md, acc178 entry of
2026-12-07). The figures pinned here are the engine's today: a change to the step moves them, and its entry must restate
them.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import calibration_report

ROWS = json.loads((Path(__file__).parent / "data" / "calibration_training_mfu.json").read_text())["rows"]
FOUNDRY = "llm-foundry README, every row"
NEMO = "NeMo 24.07 perf summary"
TITAN = "torchtitan benchmarks"
#: Composer's dense bf16 peaks its MFU column is counted against (llm-foundry's README: A100 312, H100 989 TFLOPS).
COMPOSER_PEAK_FLOPS = {"a100-sxm4-80gb": 312e12, "a100-sxm4-40gb": 312e12, "h100-sxm5-80gb": 989e12}


def _rows(tag: str) -> list[dict[str, Any]]:
    return [r for r in ROWS if r.get("out_of_sample") == tag]


def test_every_foundry_row_is_added_once_with_its_whole_setup() -> None:
    rows = _rows(FOUNDRY)
    assert len(rows) == 138
    keys = {(r["gpu"], r["hidden_size"], r["sequence_length"], r["gpus"], r["micro_batch"], r["accumulation"]) for r in rows}
    assert len(keys) == len(rows)
    for row in rows:
        assert row["source"].startswith("https://github.com/mosaicml/llm-foundry/blob/061f2c7c") and row["research_notes"]
        assert f"MicroBatchSize {row['micro_batch']}, GradAccum {row['accumulation']}" in row["setup"]
        assert row["checkpointing"] == ("full" if "Activation Checkpointing True" in row["setup"] else "none")


def test_foundry_mfu_is_the_published_throughput_over_composers_peak() -> None:
    # each row's MFU column is its T/s/GPU column x (6 N + 12 L d s) over the peak: the transcription holds to the
    # throughput's rounding (0.22% at most)
    for row in _rows(FOUNDRY):
        flops = 6 * row["params"] + 12 * row["num_layers"] * row["hidden_size"] * row["sequence_length"]
        mfu = row["tokens_per_gpu_per_sec"] * flops / COMPOSER_PEAK_FLOPS[row["gpu"]]
        assert mfu == pytest.approx(row["mfu"], rel=0.003), row["setup"]


def test_nemo_rows_mfu_is_6n_of_their_throughput() -> None:
    report = calibration_report()
    rows = _rows(NEMO)
    assert [r["model"].split("/")[-1] for r in rows] == ["Llama-2-7b-hf", "Llama-2-13b-hf", "Llama-2-70b-hf"]
    for row in rows:
        params = report.parse_architecture(report.find_model(row["model"]).config).flop_params
        assert row["tp"] * row["pp"] * row["dp"] == row["gpus"] and row["dp"] * row["accumulation"] == 128
        assert 6 * params * row["tokens_per_gpu_per_sec"] / 989e12 == pytest.approx(row["mfu"], abs=1e-4)


def test_torchtitan_h200_rows_mfu_is_6n_of_their_throughput() -> None:
    rows = _rows(TITAN)
    assert [(r["gpus"], r["tokens_per_gpu_per_sec"]) for r in rows] == [(32, 10938.0), (64, 10753.0)]
    for row in rows:
        assert row["dp"] == row["gpus"] and row["compute_precision"] == "fp8" and row["profile"] == "fsdp2"
        assert 6 * 7_504_924_672 * row["tokens_per_gpu_per_sec"] / 989e12 == pytest.approx(row["mfu"], abs=1e-4)


@pytest.mark.parametrize(
    ("group", "rows", "median", "p90", "signed"),
    [
        # acc198: llm-foundry's non-reentrant checkpoint skips each block's down projection in the recompute (its
        # checkpointed rows 6.87% / 21.85% / -4.94% and 5.89% / 17.28% / -4.06% before)
        ("training-mfu FSDP a100-sxm4-80gb (llm-foundry README, every row, out of sample)", 56, 0.0616, 0.1581, -0.0392),
        ("training-mfu FSDP a100-sxm4-40gb (llm-foundry README, every row, out of sample)", 75, 0.0506, 0.1191, -0.0333),
        ("training-mfu FSDP h100-sxm5-80gb (llm-foundry README, every row, out of sample)", 7, 0.0186, 0.0519, 0.0186),
        ("training-mfu FP8 dense h100-sxm5-80gb (NeMo 24.07 perf summary, out of sample)", 3, 0.0792, 0.1251, 0.0792),
        ("training-mfu FP8 dense h200-sxm-141gb (torchtitan benchmarks, out of sample)", 2, 0.1122, 0.1200, -0.1122),
    ],
)
def test_new_groups_hold_their_figures(group: str, rows: int, median: float, p90: float, signed: float) -> None:
    got = calibration_report().evaluate(only=lambda name: name == group)[group]
    assert (got["rows"], got["failed"]) == (rows, 0)
    assert (got["median_abs_error"], got["p90_abs_error"], got["median_signed_error"]) == pytest.approx(
        (median, p90, signed), abs=0.002
    )


@pytest.mark.parametrize(
    ("gpu", "checkpointing", "median_signed"),
    [
        # no recomputation: the step lands on the measured MFU (every size, 512 to 65,536 tokens, 8 to 128 GPUs)
        ("a100-sxm4-80gb", "none", -0.003),
        ("a100-sxm4-40gb", "none", -0.024),
        # full checkpointing (7B to 70B, short sequences mostly): under-predicted by about a seventh on both A100s
        # (-15.0% / -14.3%) until acc198 left each block's down projection out of the non-reentrant recompute
        # (llm-foundry's ``activation_checkpointing_reentrant: false`` stops early): a tenth still
        ("a100-sxm4-80gb", "full", -0.110),
        ("a100-sxm4-40gb", "full", -0.082),
    ],
)
def test_foundry_rows_by_checkpointing(gpu: str, checkpointing: str, median_signed: float) -> None:
    report = calibration_report()
    rows = [r for r in _rows(FOUNDRY) if r["gpu"] == gpu and r["checkpointing"] == checkpointing]
    errors = [report.predict_training_mfu(r) / r["mfu"] - 1 for r in rows]
    assert statistics.median(errors) == pytest.approx(median_signed, abs=0.003)
