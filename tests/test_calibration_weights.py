"""Weights per GPU of quantized and MoE checkpoints against vLLM's "Model loading took X GiB" (``vllm_weights``).

The logged figure is ``torch.cuda.memory_allocated()`` after ``process_weights_after_loading`` less before: every
tensor the loaded model keeps (repacked weights, scales, padding, small buffers), in GiB. specgen sizes the
checkpoint's own tensors in its own layout (``benchmarks/calibration_report.py``'s ``predict_loaded_weights``: the
catalog model's config with the checkpoint's ``quantization_config``). Groups are by storage family (FP8 per channel
and per block together) and kernel path; the per-group report is ``python benchmarks/calibration_report.py --groups``
and the rows, sources and per-row errors are in benchmarks/CALIBRATION.md (2026-12-02, weights of quantized and MoE
checkpoints).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights
from generator.units import GIB
from tests.conftest import REPO
from tests.conftest import calibration_report as _report
from tests.helpers import check_calibration_groups

ROWS: list[dict[str, Any]] = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["vllm_weights"]

#: Median and p90 |predicted / measured - 1| of every group below, and the |error| of each of its rows.
#: The 14 rows on CUDA (H200, B200, H100, A100, RTX 3090; BF16, FP8 per channel and per block, INT4 W4A16 and AWQ, and
#: gpt-oss on the gpt_oss_mxfp4 Triton path) are all under-predicted by 0.02% to 0.85%: the log adds to the
#: checkpoint's tensors only buffers specgen does not size (0.01 to 0.59 GiB; the largest DeepSeek-R1 block FP8 at TP8
#: on B200, 0.59 GiB, -0.74%, and gpt-oss-120b on Triton, 0.52 GiB, -0.85%). 1% holds every one of them and is half
#: the 2% the BF16 ``weights`` groups are held to; it fails on a layout error of the size these checkpoints carry: RedHat's
#: Llama-3.3-70B FP8-dynamic with its lm_head quantized instead of kept BF16 would lose 0.245 GiB a TP4 rank (-1.4%).
TARGET = 0.01

#: group -> (median, p90) |error| today, for groups that miss the target, with why.
PINNED: dict[str, tuple[float, float]] = {
    # MI300X (ROCm builds of vLLM 0.11-0.13) loads more than the same checkpoint on H200: the dense Llama-3.3-70B
    # rows by 0.1-0.2 GiB (-0.15% / -0.32%), the MoE Qwen3-235B-A22B by 3.07 GiB at TP4 (-2.72%) and 1.74 GiB at
    # TP8 (-3.06%). The cause (an extra or padded expert layout of the ROCm MoE kernels) was not checked in code:
    # not modelled.
    "weights-loaded vllm bf16 rocm": (0.0152, 0.0306),
    # the same on FP8: DeepSeek-R1 block FP8 TP8 +2.02 GiB over specgen (-2.48%; H200 +0.45), Qwen3-235B-A22B
    # FP8-dynamic +0.73 GiB at TP4 (-1.31%) and +0.35 at TP8 (-1.26%), Llama-3.3-70B FP8-dynamic TP1 +0.67 (-0.98%)
    "weights-loaded vllm fp8 rocm": (0.0128, 0.0248),
    # the classic MXFP4 Triton path on ROCm (vLLM 0.11.1, Radeon AI PRO R9700, gpt-oss-20b TP2): experts padded to
    # 128, fp32 biases, the original uint8 scales kept beside the swizzled ones: 7.26 GiB where specgen has 6.41
    # (-11.75%). Not modelled.
    "weights-loaded vllm mxfp4 rocm triton (not modelled)": (0.1175, 0.1175),
}

#: Tolerance on a pinned figure (the report's four decimals).
SLACK = 0.005

#: The most a prediction may exceed a logged figure: the log counts at least the checkpoint's tensors, so specgen,
#: which sizes exactly those, must not be above it beyond the rounding of a two-decimal figure (0.005 / 16.96).
OVER_PREDICTION = 0.0005


@pytest.fixture(scope="module")
def groups() -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = _report().evaluate(only=lambda name: name.startswith("weights-loaded "))
    return summary


def _error(row: dict[str, Any]) -> float:
    predicted: float = _report().predict_loaded_weights(row)
    measured: float = row["weights_gib"]
    return predicted / measured - 1


def _row_id(row: dict[str, Any]) -> str:
    return f"{row['model'].split('/')[-1]}-tp{row['tp']}-{row['gpu'] or 'gpu-unnamed'}-{row['engine_version']}"


def test_every_group_is_held_or_pinned(groups: dict[str, dict[str, Any]]) -> None:
    expected = {
        "weights-loaded vllm bf16 cuda",
        "weights-loaded vllm fp8 cuda",
        "weights-loaded vllm int4 cuda",
        "weights-loaded vllm mxfp4 cuda triton",
        # Marlin's padding (each rank's expert intermediate size to 128, the hidden size to 256): gpt-oss-120b TP1
        # 65.90 GiB against the 65.97 logged (the checkpoint is 60.77), gpt-oss-20b 13.67 against 13.72 / 13.8 / 13.72 (GB10)
        "weights-loaded vllm mxfp4 marlin",
        *PINNED,
    }
    assert set(groups) == expected
    assert all(g["failed"] == 0 for g in groups.values())
    assert sum(g["rows"] for g in groups.values()) == len(ROWS) == 28


def test_groups_meet_the_target_or_their_pinned_figures(groups: dict[str, dict[str, Any]]) -> None:
    # a group that now meets the target (the Marlin padding modelled, say) loses its pin, so the target guards it
    check_calibration_groups(groups, lambda _: (TARGET, TARGET), PINNED, SLACK)


@pytest.mark.parametrize("row", [r for r in ROWS if "not_modelled" not in r], ids=_row_id)
def test_modelled_rows_within_target_or_their_group_pin(row: dict[str, Any]) -> None:
    error = _error(row)
    group = _report().loaded_weights_group(row)
    bound = PINNED[group][1] + SLACK if group in PINNED else TARGET
    assert abs(error) <= bound, (group, error)


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_no_row_is_over_predicted(row: dict[str, Any]) -> None:
    assert _error(row) <= OVER_PREDICTION


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_rows_are_predicted_in_the_checkpoints_own_layout(row: dict[str, Any]) -> None:
    # the precision a row is sized in is the one its checkpoint's quantization_config parses to (bf16 without one)
    quant = _report().loaded_architecture(row).quantization
    assert (quant.precision if quant is not None else "bf16") == row["precision"]
    assert row["source"].startswith("https://") and row["quantization_layout_source"].startswith("https://")


def test_fp8_dynamic_llama_tp4_by_hand() -> None:
    # RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic at TP4: FP8 weights with one fp32 scale per output row, split four
    # ways (8 KV heads: 2 a rank); lm_head and embeddings BF16 split four ways; norms BF16 on every rank.
    row = next(r for r in ROWS if r["model"] == "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic" and r["tp"] == 4)
    hidden, kv, inter, vocab, layers = 8192, 1024, 28672, 128256, 80
    weights = 2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inter  # q, o; k, v; gate, up, down
    scale_rows = 2 * hidden + 2 * kv + 2 * inter + hidden  # output rows of q, o, k, v, gate, up, down
    layer = (weights + 4 * scale_rows) // 4 + 2 * hidden * 2
    expected = layers * layer + 2 * (vocab * hidden * 2 // 4) + hidden * 2
    arch = _report().loaded_architecture(row)
    assert size_weights(arch, weight_format("fp8-channel"), Parallelism(tp=4)).per_gpu_bytes == expected
    assert expected / GIB == pytest.approx(16.9247, abs=5e-5)  # logged: 16.9619 (H200), 16.96 (B200)


def test_gpt_oss_120b_loads_its_logged_checkpoint_size_on_triton() -> None:
    # vLLM 0.25.1 printed "Checkpoint size: 60.77 GiB" beside "Model loading took 61.29 GiB" (gpt_oss_mxfp4 Triton)
    row = next(r for r in ROWS if r["model"] == "openai/gpt-oss-120b" and r["kernel_path"] == "cuda triton")
    assert round(_report().predict_loaded_weights(row), 2) == 60.77
