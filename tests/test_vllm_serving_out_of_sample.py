"""vLLM serving rows measured outside the calibration set (acc174, issue 9): each row's error pinned.

The rows (``tests/data/vllm_serving_out_of_sample.json``, calibration.json's throughput schema) are read by
``benchmarks/calibration_report.py`` with the other throughput rows and judged by group in
``tests/test_calibration_throughput.py``. Here each row's signed error (predicted / measured - 1) is held to the figure
recorded when the rows were added, within ``TOLERANCE``: a change to the engine that moves any of them fails, and its
author restates the figures (benchmarks/CALIBRATION.md) rather than losing them in a group median.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import calibration_report as _report

#: Absolute tolerance on a row's signed error.
TOLERANCE = 0.02

#: (gpu, model, tp, input tokens, output tokens, client concurrency or 0 for a max-load run) -> signed error when the
#: rows were added (acc174, 2026-12-07), restated by acc181 (vLLM's fused-MoE layers' fixed time a step,
#: vllm_moe_layer_step_s 70 us: every MoE row moved, the Qwen3-8B and A10G rows did not; CALIBRATION.md), and by acc186
#: (GPUStack's rows end with the tail of their stated request count, bench_requests: each of them moved by 1-3 points),
#: and by acc190 (the A10G run's 1,000 prompts: 22.07 -> 21.11%; the tail's batch falls to the last request, one, not to
#: none: the concurrency-4 rows 0.3-0.5 points up, the rest under 0.1).
#: acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline; moved: A10G +21.11 -> +1.12%,
#: H100 PCIe gpt-oss-20b c16 / c8 -10.64 / -15.66 -> -14.36 / -17.73%, H100 gpt-oss-120b 4000/134 -4.92 -> +0.04%, H200
#: gpt-oss-20b c16 / c8 / c4 +7.81 / -14.45 / -12.84 -> +10.91 / -9.78 / -8.44%
EXPECTED_ERROR: dict[tuple[str, str, int, int, int, int], float] = {
    # AIMultiple, gpt-oss-20b MXFP4, 1,000-token prompts, ~930 output tokens, closed loop
    ("h200-sxm-141gb", "gpt-oss-20b", 1, 1000, 929, 1): -0.0674,
    ("h200-sxm-141gb", "gpt-oss-20b", 1, 1000, 941, 4): -0.0844,
    ("h200-sxm-141gb", "gpt-oss-20b", 1, 1000, 938, 8): -0.0978,
    ("h200-sxm-141gb", "gpt-oss-20b", 1, 1000, 929, 16): 0.1091,
    ("b200-sxm-180gb", "gpt-oss-20b", 1, 1000, 926, 1): 0.0293,
    ("b200-sxm-180gb", "gpt-oss-20b", 1, 1000, 929, 4): 0.1581,
    ("b200-sxm-180gb", "gpt-oss-20b", 1, 1000, 918, 8): 0.2897,
    ("b200-sxm-180gb", "gpt-oss-20b", 1, 1000, 930, 16): 0.6750,
    ("h100-pcie-80gb", "gpt-oss-20b", 1, 1000, 899, 1): 0.0457,
    ("h100-pcie-80gb", "gpt-oss-20b", 1, 1000, 948, 8): -0.1773,
    ("h100-pcie-80gb", "gpt-oss-20b", 1, 1000, 929, 16): -0.1436,
    # GPUStack's Qwen3-8B latency page, vLLM v0.11.0 baseline, ShareGPT means 233 / 221, concurrency 4
    ("h100-sxm5-80gb", "Qwen3-8B", 1, 233, 221, 4): -0.0799,
    # GPUStack's gpt-oss-120b H100 page, v0.10.2: the baseline server (TP1) and the optimized one (TP2, async scheduling)
    ("h100-sxm5-80gb", "gpt-oss-120b", 1, 4000, 134, 0): 0.0004,
    ("h100-sxm5-80gb", "gpt-oss-120b", 1, 2000, 98, 0): 0.0391,
    ("h100-sxm5-80gb", "gpt-oss-120b", 1, 128, 4, 0): 0.2901,
    ("h100-sxm5-80gb", "gpt-oss-120b", 1, 230, 217, 4): -0.0784,
    ("h100-sxm5-80gb", "gpt-oss-120b", 2, 4000, 136, 0): 0.0994,
    ("h100-sxm5-80gb", "gpt-oss-120b", 2, 2000, 98, 0): 0.1181,
    ("h100-sxm5-80gb", "gpt-oss-120b", 2, 128, 4, 0): 0.2940,
    ("h100-sxm5-80gb", "gpt-oss-120b", 2, 230, 217, 4): -0.3431,
    # Neural Magic's nm-vllm nightly benchmark (V0, spring 2024), Llama 2 7B FP16 on one A10G, 256 / 128, 1,000 prompts
    ("a10g-24gb", "Llama-2-7b-hf", 1, 256, 128, 0): 0.0112,
}

#: vLLM PR #12093's offline runs (acc182, 2026-12-07), Llama-3.1-8B-Instruct BF16, 2,048 / 128, 1,000 prompts,
#: max_num_batched_tokens 16384, on a Hopper GPU: the measured output tokens/s -> signed error. One shape, so one key
#: of EXPECTED_ERROR's form cannot tell them apart: keyed by the measured figure. acc190: the runs' 1,000 prompts (the
#: script's default) end with a tail: -9.16 / +0.99 / +4.29% -> -9.37 / +0.76 / +4.05%.
PR_12093_ERROR: dict[float, float] = {
    1822.71: -0.0937,  # V1, FlashAttention 3 (the Hopper default since the PR)
    1639.54: 0.0076,  # V1, FlashAttention 2 forced
    1587.74: 0.0405,  # V0, FlashAttention 2 forced
}


def _all_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(_report().VLLM_SERVING.read_text())["rows"]
    return rows


def _pr_12093_rows() -> list[dict[str, Any]]:
    return [row for row in _all_rows() if row["source"].endswith("/pull/12093")]


def _rows() -> list[dict[str, Any]]:
    return [row for row in _all_rows() if not row["source"].endswith("/pull/12093")]


def _key(row: dict[str, Any]) -> tuple[str, str, int, int, int, int]:
    model = row["model"].split("/")[-1]
    return row["gpu"], model, row["tp"], row["input_tokens"], row["output_tokens"], row.get("max_concurrency", 0)


def test_every_row_is_pinned_once() -> None:
    keys = [_key(row) for row in _rows()]
    assert sorted(keys) == sorted(EXPECTED_ERROR)


def test_async_scheduling_is_the_rows_stated_server_flag() -> None:
    # the lab's optimized gpt-oss-120b server runs --async-scheduling (not v0.10.2's default): the host loop overlaps
    for row in _rows():
        assert row.get("async_scheduling", False) == ("--async-scheduling" in row["setup"] and row["tp"] == 2), row


@pytest.mark.parametrize("key", sorted(EXPECTED_ERROR), ids=lambda k: "-".join(map(str, k)))
def test_a_rows_error_stays_where_it_was_recorded(key: tuple[str, str, int, int, int, int]) -> None:
    (row,) = [r for r in _rows() if _key(r) == key]
    error = _report().predict_throughput(row) / row["output_tokens_per_s"] - 1
    assert error == pytest.approx(EXPECTED_ERROR[key], abs=TOLERANCE)


def test_rows_state_their_setup_source_and_notes_and_stay_out_of_the_fit() -> None:
    report = _report()
    for row in _all_rows():
        assert row["engine"] == "vllm" and row["engine"] not in report.FIT_ENGINES, row
        assert row["version"] and row["setup"] and row["source"].startswith("https://github.com/"), row
        assert row["research_notes"] and all(note for note in row["research_notes"]), row
        if row["gpu"] == "a10g-24gb":  # V0 of 2024 on a 24 GB GPU: 256 sequences, no chunked prefill (max_model_len)
            assert (row["max_num_seqs"], row["max_num_batched_tokens"]) == (256, 4096), row
            continue
        if row["source"].endswith("/pull/12093"):  # the command's --max-num-batched-tokens; that build's 256 sequences
            assert (row["max_num_seqs"], row["max_num_batched_tokens"]) == (256, 16384), row
            continue
        # a closed-loop run's client concurrency is the batch bound the predictor takes, below the server's limit; a
        # max-load run keeps V1's server default on a >= 70 GiB GPU
        assert row["max_num_seqs"] == row.get("max_concurrency", 1024) in (1, 4, 8, 16, 1024), row
        assert row["max_num_batched_tokens"] == 8192, row


def test_the_rows_join_the_throughput_groups_of_the_report() -> None:
    report = _report()
    groups = [group for group, _, _, _, row in report._rows() if row.get("lab") == "AIMultiple"]
    assert set(groups) == {
        "throughput vllm h200-sxm-141gb mxfp4",
        "throughput vllm b200-sxm-180gb mxfp4",
        "throughput vllm h100-pcie-80gb mxfp4",
    }
    assert len(groups) == 11


def test_the_h200_and_b200_print_one_single_stream_rate_the_model_nearly_does() -> None:
    """At concurrency 1 both GPUs print 221 tok/s (4.5 ms a token): a per-step time their bandwidth does not set.

    Before acc181 the model had the B200 1.17x the H200 (its bandwidth) and both 42-67% over; vLLM's fused-MoE layers'
    fixed time a step (24 x 70 us) is most of the single-stream step, so the model has them within 10% of each other.
    """
    report = _report()
    single = {r["gpu"]: r for r in _rows() if r.get("max_concurrency") == 1 and r["gpu"] != "h100-pcie-80gb"}
    measured = single["b200-sxm-180gb"]["output_tokens_per_s"] / single["h200-sxm-141gb"]["output_tokens_per_s"]
    modelled = report.predict_throughput(single["b200-sxm-180gb"]) / report.predict_throughput(single["h200-sxm-141gb"])
    assert measured == pytest.approx(1.0, abs=0.01)
    assert 1.0 < modelled < 1.11
    for gpu in ("b200-sxm-180gb", "h200-sxm-141gb"):
        assert report.predict_throughput(single[gpu]) / single[gpu]["output_tokens_per_s"] - 1 < 0.1


@pytest.mark.parametrize("measured", sorted(PR_12093_ERROR))
def test_vllm_pr_12093_rows_errors_stay_where_they_were_recorded(measured: float) -> None:
    (row,) = [r for r in _pr_12093_rows() if r["output_tokens_per_s"] == measured]
    error = _report().predict_throughput(row) / measured - 1
    assert error == pytest.approx(PR_12093_ERROR[measured], abs=TOLERANCE)


def test_vllm_s_own_h100_prompt_pass_meets_the_model_where_the_labs_does_not() -> None:
    """acc182 (issue 9): on the same dense BF16 prompt-bound shape (about 2,000-token prompts, 100-128 outputs, max
    load) vLLM's developers' Hopper GPU is predicted within 10% (PR #12093, V1 FA3: the model is under) while the
    GPUStack lab's H100 is predicted 60% over (Qwen3-14B 2,000 / 100, v0.11.0): the lab's rows, not vLLM's prompt
    path, are the outliers. Fails if the engine learns a slower vLLM prompt pass (the PR rows would go low) or the
    lab's rows come in (restate CALIBRATION.md then)."""
    report = _report()
    (fa3,) = [r for r in _pr_12093_rows() if r["output_tokens_per_s"] == 1822.71]
    shape = ("vllm", "Qwen/Qwen3-14B", "h100-sxm5-80gb", "bf16", 2000)
    keys = ("engine", "model", "gpu", "precision", "input_tokens")
    lab = [r for _, _, _, _, r in report._rows() if tuple(r.get(key) for key in keys) == shape]
    assert len(lab) == 1
    assert -0.15 < report.predict_throughput(fa3) / fa3["output_tokens_per_s"] - 1 < 0.0
    assert report.predict_throughput(lab[0]) / lab[0]["output_tokens_per_s"] - 1 > 0.5
