"""llama.cpp's prompt with the whole model on one GPU against published pp512 runs (tests/data/llama_cpp_gpu_decode.json).

The rows' ``pp512_tokens_per_s`` (XiongjieDai/GPU-Benchmarks-on-LLM-Inference: Llama 2 7B / 70B q4_0 and f16, Llama 3
8B Q4_K_M and F16 on six cards) are predicted as benchmarks/calibration_report.py predicts them (groups "llama.cpp
gpu-resident prompt (GDDR / HBM)": offload_cost's ``prefill_s``, generator/sizing/llama_cpp_prompt.py). The serving
engines' prefill (16-bit rate at prefill_compute_efficiency) was off by 50.6% / 201.4% (median / p90) on GDDR cards and
262.5% / 322.8% on HBM ones (every HBM row fast); the passes' fp16 GEMMs, the quantized matrices' fp16 copies and the
layers' fixed time, fitted once over all rows, read 15.7% / 38.2% and 4.0% / 5.8%. The bounds keep headroom over the
fitted figures and fail at the old ones.
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from generator.calculator.machine import FixedSpec, build_machine
from generator.catalog import find_gpu
from generator.sizing.constants import Constants
from generator.sizing.llama_cpp_prompt import (
    dequantized_bytes,
    gemm_tflops,
    pass_layer_seconds,
    resident_prompt_seconds,
)
from generator.sizing.performance import prefill_flops
from tests.conftest import calibration_report as _report

calibration_report = _report()

#: (median, p90) of |predicted / measured - 1| each memory kind's rows must stay under: the fitted model's with
#: headroom (15.7% / 38.2% GDDR, 4.0% / 5.8% HBM); the serving prefill gave 50.6% / 201.4% and 262.5% / 322.8%.
BOUNDS = {"GDDR": (0.19, 0.45), "HBM": (0.06, 0.10)}
COUNTS = {"GDDR": 14, "HBM": 6}

CONSTS = Constants()


def _errors(kind: str, old: bool = False) -> list[float]:
    rows = [row for row in calibration_report.llama_cpp_prompt_rows() if row[0] == f"llama.cpp gpu-resident prompt ({kind})"]
    assert len(rows) == COUNTS[kind]
    return [abs((_serving_prefill if old else predict)(row) / measured - 1) for _, _, measured, predict, row in rows]


@pytest.mark.parametrize("kind", sorted(BOUNDS))
def test_prompt_error_by_memory_kind_is_bounded(kind: str) -> None:
    errors = _errors(kind)
    assert statistics.median(errors) <= BOUNDS[kind][0], sorted(errors)
    assert calibration_report._p90(errors) <= BOUNDS[kind][1], sorted(errors)


def _serving_prefill(row: dict[str, Any]) -> float:
    """The old figure: the prompt's FLOPs at the serving engines' share of the 16-bit rate, nothing else."""
    arch, _, machine, _ = calibration_report._gpu_resident_setup(row)
    seconds: float = prefill_flops(arch, 512) / (machine.gpu_tflops * 1e12 * CONSTS.prefill_compute_efficiency)
    return 512 / seconds


@pytest.mark.parametrize("kind", sorted(BOUNDS))
def test_the_serving_prefill_fails_the_bound(kind: str) -> None:
    errors = _errors(kind, old=True)
    assert statistics.median(errors) > BOUNDS[kind][0] and calibration_report._p90(errors) > BOUNDS[kind][1], sorted(errors)


def _score_seconds(arch: Any, bandwidth_gb_per_s: float) -> float:
    """One 512-token pass's score matrices without flash attention, by hand: 512 x 512 elements a query head and layer
    (Llama: every layer over the whole context), llama_cpp_score_bytes_per_element each at the decode's read rate."""
    elements = float(512 * 512 * arch.num_attention_heads * arch.num_layers)
    read = min(bandwidth_gb_per_s * CONSTS.llama_cpp_gpu_bandwidth_efficiency, CONSTS.llama_cpp_gpu_read_ceiling_gb_per_s)
    return float(elements * CONSTS.llama_cpp_score_bytes_per_element / (read * 1e9))


@pytest.mark.parametrize(
    ("gpu", "model", "precision"),
    [
        pytest.param("h100-pcie-80gb", "LLaMA 2 7B_f16", "fp16", id="h100-f16-no-copy"),
        pytest.param("rtx-4090-24gb", "LLaMA 2 7B_q4_0", "q4_0", id="4090-q4_0-geforce-ceiling"),
        pytest.param("rtx-a6000-48gb", "LLaMA 2 70B_q4_0", "q4_0", id="a6000-70b"),
    ],
)
def test_prompt_seconds_by_hand(gpu: str, model: str, precision: str) -> None:
    """A row's pp512 is its FLOPs at the GEMMs' rate (x2 on a GeForce card), a quantized file's fp16 copy (read and
    written) at the slower of the memory's share and the ceiling, and each layer's fixed time: one pass of 512."""
    from generator.sizing.weights import size_weights

    (row,) = [r for *_, r in calibration_report.llama_cpp_prompt_rows() if r["gpu"] == gpu and r["model_as_reported"] == model]
    arch, fmt, machine, _ = calibration_report._gpu_resident_setup(row)
    consumer = find_gpu(gpu).consumer
    assert machine.gpu_consumer is consumer and consumer is (gpu == "rtx-4090-24gb")
    rate = machine.gpu_tflops * (2.0 if consumer else 1.0) * CONSTS.llama_cpp_prompt_gemm_efficiency * 1e12
    sizes = size_weights(arch, fmt)
    copied = 0.0
    if precision != "fp16":
        params = sum(layer.params for layer in arch.layers) + arch.logits_params
        copied = sum(sizes.layer_bytes) + sizes.lm_head_bytes + 2 * params
    copy_rate = min(machine.gpu_bandwidth_gb_per_s * CONSTS.llama_cpp_dequant_bandwidth_efficiency, 600.0) * 1e9
    layer_s = calibration_report.PROMPT_LAYER_BEFORE_MMQ_S  # the rows' builds (Dec 2023 / May 2024): no int8 MMQ
    seconds = prefill_flops(arch, 512) / rate + copied / copy_rate + arch.num_layers * layer_s
    assert row["flash_attention"] is False  # no flash attention (acc204): a 512 x 512 score matrix a head and layer
    seconds += _score_seconds(arch, machine.gpu_bandwidth_gb_per_s)
    assert calibration_report.predict_gpu_resident_prompt(row) == pytest.approx(512 / seconds, rel=1e-9)


def test_passes_repeat_the_copy_and_the_layers_not_the_flops() -> None:
    """A prompt of 513 tokens takes two passes of -ub 512: the fp16 copy twice, the FLOPs once, and the layers' time of
    each pass by its tokens (acc180: the second, of one token, takes the decode step's launch time and one token's
    share)."""
    machine, _, _ = build_machine(FixedSpec(gpu="rtx-3090-24gb", gpu_count=1, ram_gib=64))
    (row,) = [
        r for *_, r in calibration_report.llama_cpp_prompt_rows() if r["gpu"] == "rtx-3090-24gb" and r["precision"] == "q4_0"
    ]
    arch, fmt, _, _ = calibration_report._gpu_resident_setup(row)
    gpu = (machine.gpu_tflops, machine.gpu_bandwidth_gb_per_s, machine.gpu_consumer, 0.0)  # the cuBLAS fp16 path
    one = resident_prompt_seconds(arch, fmt, 512, 1e12, 10**9, gpu, CONSTS)
    two = resident_prompt_seconds(arch, fmt, 513, 1e12, 10**9, gpu, CONSTS)
    flops_s = 1e12 / (gemm_tflops(machine.gpu_tflops, machine.gpu_consumer, CONSTS) * 1e12)
    layers = arch.num_layers  # Llama 2: one dense layer each
    copy_s = one - flops_s - layers * CONSTS.llama_cpp_prompt_layer_s  # a full pass: the fitted layer time
    assert pass_layer_seconds(512, CONSTS) == pytest.approx(CONSTS.llama_cpp_prompt_layer_s, rel=1e-12)
    second = pass_layer_seconds(1, CONSTS)
    assert second == pytest.approx(
        CONSTS.llama_cpp_layer_launch_s + (CONSTS.llama_cpp_prompt_layer_s - CONSTS.llama_cpp_layer_launch_s) / 512
    )
    assert two - flops_s == pytest.approx(2 * copy_s + layers * (CONSTS.llama_cpp_prompt_layer_s + second), rel=1e-12)
    assert resident_prompt_seconds(arch, fmt, 0, 1e12, 10**9, gpu, CONSTS) == 0.0


def test_a_16_bit_file_copies_nothing_and_a_quantized_one_its_matrices_and_fp16() -> None:
    (f16,) = [
        r
        for *_, r in calibration_report.llama_cpp_prompt_rows()
        if r["gpu"] == "rtx-3090-24gb" and r["model_as_reported"] == "LLaMA 2 7B_f16"
    ]
    arch, fmt, _, _ = calibration_report._gpu_resident_setup(f16)
    assert dequantized_bytes(arch, fmt, 123) == 0.0
    (q4,) = [
        r
        for *_, r in calibration_report.llama_cpp_prompt_rows()
        if r["gpu"] == "rtx-3090-24gb" and r["model_as_reported"] == "LLaMA 2 7B_q4_0"
    ]
    arch, fmt, _, _ = calibration_report._gpu_resident_setup(q4)
    assert dequantized_bytes(arch, fmt, 123) == 123 + 2 * (sum(layer.params for layer in arch.layers) + arch.logits_params)


def test_geforce_runs_fp16_accumulate_at_twice_the_catalog_rate() -> None:
    assert gemm_tflops(100.0, True, CONSTS) == pytest.approx(2 * gemm_tflops(100.0, False, CONSTS))
    assert gemm_tflops(100.0, False, CONSTS) == pytest.approx(100.0 * CONSTS.llama_cpp_prompt_gemm_efficiency)


def test_other_makers_gpus_keep_the_serving_prefill() -> None:
    """The constants are fitted on CUDA runs and follow llama.cpp's CUDA / HIP kernels: a GPU of another maker (an
    MI300X's figures under another vendor's name) keeps prefill_compute_efficiency; the MI300X itself (CDNA 3) runs
    int8 MMQ (acc171, tests/test_llama_cpp_amd_scoreboard.py)."""
    from generator.sizing.offload import offload_cost

    (row,) = [
        r for *_, r in calibration_report.llama_cpp_prompt_rows() if r["gpu"] == "h100-pcie-80gb" and r["precision"] == "fp16"
    ]
    arch, fmt, machine, placement = calibration_report._gpu_resident_setup(row)
    amd, _, _ = build_machine(FixedSpec(gpu="mi300x-192gb", gpu_count=1, ram_gib=4096))
    assert amd.gpu_vendor == "amd" and machine.gpu_vendor == "nvidia"
    other = amd._replace(gpu_vendor="intel")
    cost = offload_cost(arch, fmt, 16, placement, other, 512, CONSTS)
    assert cost.prefill_s == pytest.approx(prefill_flops(arch, 512) / (amd.gpu_tflops * 1e12 * CONSTS.prefill_compute_efficiency))
    assert offload_cost(arch, fmt, 16, placement, amd, 512, CONSTS).prefill_s != pytest.approx(cost.prefill_s)


#: Current builds (tests/data/llama_cpp_gpu_decode_recent.json, llama.cpp's CUDA scoreboard, 2025-26): (median, p90)
#: bounds of the fitted model's error (int8 MMQ on cards with an int8 rate; 5.9% / 35.0% GDDR, 0.2% on the V100) with
#: headroom; acc151's cuBLAS-fp16 model of the 2023-24 builds read them 32-57% of the measured (V100 0.80).
RECENT_BOUNDS = {"GDDR": (0.08, 0.40), "HBM": (0.05, 0.05)}
RECENT_COUNTS = {"GDDR": 15, "HBM": 1}


def _before_mmq(row: dict[str, Any]) -> float:
    """acc151's figure of a row: the builds before int8 MMQ (cuBLAS fp16 and the fp16 copies, 1.7 ms a layer)."""
    return float(calibration_report.predict_gpu_resident_prompt({**row, "build_era": "2023-24"}))


def _recent_errors(kind: str, old: bool = False) -> list[float]:
    group = f"llama.cpp gpu-resident prompt, current builds (NVIDIA {kind})"
    rows = [row for row in calibration_report.llama_cpp_prompt_recent_rows() if row[0] == group]
    assert len(rows) == RECENT_COUNTS[kind]
    return [abs((_before_mmq if old else predict)(row) / measured - 1) for _, _, measured, predict, row in rows]


@pytest.mark.parametrize("kind", sorted(RECENT_BOUNDS))
def test_current_build_prompt_error_is_bounded_and_the_pre_mmq_model_fails_it(kind: str) -> None:
    errors = _recent_errors(kind)
    assert statistics.median(errors) <= RECENT_BOUNDS[kind][0], sorted(errors)
    assert calibration_report._p90(errors) <= RECENT_BOUNDS[kind][1], sorted(errors)
    old = _recent_errors(kind, old=True)
    assert statistics.median(old) > RECENT_BOUNDS[kind][0] and calibration_report._p90(old) > RECENT_BOUNDS[kind][1], sorted(old)


def _recent_row(gpu: str) -> dict[str, Any]:
    (row,) = [r for *_, r in calibration_report.llama_cpp_prompt_recent_rows() if r["gpu"] == gpu]
    return dict(row)


def test_a_quantized_file_on_int8_tensor_cores_runs_mmq_without_a_copy() -> None:
    """RTX 4090 q4_0, current build: the FLOPs at llama_cpp_mmq_int8_efficiency of the catalog's dense int8 rate (not
    the GeForce fp16-accumulate x2), no fp16 copy, llama_cpp_prompt_layer_s a layer."""
    row = _recent_row("rtx-4090-24gb")
    arch, _, machine, _ = calibration_report._gpu_resident_setup(row)
    int8 = find_gpu("rtx-4090-24gb").sustained_tflops("int8")
    assert int8 is not None and machine.gpu_int8_tflops == int8 > 0
    seconds = prefill_flops(arch, 512) / (machine.gpu_int8_tflops * CONSTS.llama_cpp_mmq_int8_efficiency * 1e12)
    seconds += arch.num_layers * CONSTS.llama_cpp_prompt_layer_s
    assert row["flash_attention"] is False  # the scoreboard's -fa 0
    seconds += _score_seconds(arch, machine.gpu_bandwidth_gb_per_s)
    assert calibration_report.predict_gpu_resident_prompt(row) == pytest.approx(512 / seconds, rel=1e-9)
    # with flash attention on (the current default) the pass writes no score matrix
    fa_on = 512 / (seconds - _score_seconds(arch, machine.gpu_bandwidth_gb_per_s))
    assert calibration_report.predict_gpu_resident_prompt(dict(row, flash_attention=True)) == pytest.approx(fa_on, rel=1e-9)


def test_an_f16_file_or_a_card_without_int8_keeps_the_fp16_path() -> None:
    """A V100 (no int8 rate) multiplies a q4_0 file through its fp16 copy; an f16 file never takes MMQ."""
    row = _recent_row("v100-sxm2-32gb")
    arch, fmt, machine, _ = calibration_report._gpu_resident_setup(row)
    assert machine.gpu_int8_tflops == 0.0 and fmt.bits < 16
    args = (arch, fmt, 512, 1e12, 10**9)
    fp16 = resident_prompt_seconds(*args, (100.0, 900.0, False, 0.0), CONSTS)
    assert resident_prompt_seconds(*args, (100.0, 900.0, False, 400.0), CONSTS) < fp16
    (f16,) = [r for *_, r in calibration_report.llama_cpp_prompt_rows() if r["model_as_reported"] == "LLaMA 2 7B_f16"][:1]
    arch16, fmt16, _, _ = calibration_report._gpu_resident_setup(f16)
    with_int8 = resident_prompt_seconds(arch16, fmt16, 512, 1e12, 10**9, (100.0, 900.0, False, 400.0), CONSTS)
    assert with_int8 == resident_prompt_seconds(arch16, fmt16, 512, 1e12, 10**9, (100.0, 900.0, False, 0.0), CONSTS)
