"""The tensor and memory rates output says are the GPU's own, not the ones normalised to the reference (newuser42 item 9).

The roofline applies efficiencies fitted on the H100 SXM to each GPU's peak scaled by its measured share over the
H100's: an A100's 312 dense BF16 TFLOPS x (271.2 / 312) / (794.5 / 989) = 337.6, which ``estimate`` printed as "the
338 TFLOP/s 16-bit rate" and ``sustained_tflops: 337.6`` ("measured"). The figures said are now the rate the GPU is
modelled to reach: its measured max-achievable one where measured (271.2), and the sizing is unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.calculator.cli import format_text
from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import gpus, reference_tflops_shares
from generator.catalog.records import GpuSpec

A100_FP8 = EstimateRequest(
    model="meta-llama/Llama-3.3-70B-Instruct", gpu="a100-sxm4-80gb", tp=2, precision="fp8", input_tokens=1500,
    output_tokens=500, context_tokens=16384, batch=16,
)  # fmt: skip


def test_the_a100s_16_bit_rate_is_its_measured_one() -> None:
    result: dict[str, Any] = estimate(A100_FP8)
    throughput = result["throughput"]
    assert (throughput["dense_tflops"], throughput["sustained_tflops"], throughput["sustained_tflops_basis"]) == (
        312.0,
        271.2,  # stas00/ml-engineering's max-achievable figure, the catalog's max_achievable_tflops
        "measured",
    )
    assert throughput["sustained_memory_bandwidth_gb_per_s"] == 1700.0  # its stream measurement, not 1,917.5
    said = throughput["dequantized_in_gemm"]
    assert said["effective_tflops"] == round(0.66 * 271.2, 1)  # Marlin W8A16 at dequant_gemm_efficiency_ratio 0.66
    text = format_text(result)
    assert "the GEMMs run below the 271 TFLOP/s 16-bit rate it sustains in matmuls: the dense matrices' at 179 TFLOP/s" in text
    assert "338" not in text


#: The estimate's figures before the change (main at a830cf3e): the rates said moved, the sizing did not. The TPOT
#: since fix95 (newuser73 item 17): a sequence's own prefill counted once, so the rate, and the prompts a step, rise.
#: 371.8 tokens/s at nvidia-smi's 81,920 MiB until fix135 sized the A100 80GB at CUDA's 81,051: the KV pool holds
#: fewer sequences; the step times (TPOT, TTFT at batch 16) do not move
EXPECTED_MAX_OUTPUT, EXPECTED_TPOT_S, EXPECTED_TTFT_S = 371.2, 0.061344, 0.9209


def test_the_rates_said_do_not_move_the_sizing() -> None:
    """The decode and prefill figures are those the normalised rates gave (the same run on main)."""
    throughput = estimate(A100_FP8)["throughput"]
    assert (throughput["max_output_tokens_per_s"], throughput["tpot_s"], throughput["ttft_s"]) == (
        pytest.approx(EXPECTED_MAX_OUTPUT, rel=1e-9),
        pytest.approx(EXPECTED_TPOT_S, rel=1e-9),
        pytest.approx(EXPECTED_TTFT_S, rel=1e-9),
    )


@pytest.mark.parametrize("gpu_id", sorted(gpu_id for gpu_id, gpu in gpus().items() if gpu.max_achievable_tflops))
def test_a_measured_gpus_rate_is_its_measurement(gpu_id: str) -> None:
    """A property over the catalog: every measured precision's rate said is the measurement, whatever the reference's
    share; a measured stream bandwidth likewise."""
    gpu = gpus()[gpu_id]
    for compute, measured in (gpu.max_achievable_tflops or {}).items():
        assert gpu.physical_tflops(compute) == pytest.approx(measured, rel=1e-9)
    if gpu.measured_memory_gb_per_s and gpu.measured_like is None:
        assert gpu.physical_bandwidth_gb_per_s == pytest.approx(gpu.measured_memory_gb_per_s, rel=1e-9)


def test_the_reference_share_is_looked_up_on_the_reference_gpu_not_copied_into_each_record() -> None:
    """The H100 SXM's measured shares (794.5 / 989 BF16, fp16 its twin; 1,402.6 / 1,979 FP8), read off its record.

    Each GPU record carried a copy of them (``reference_tflops_shares``, set by the catalog): gone, and every GPU's
    ``reference_share`` is the reference's share of the precision it was normalised in (an L4 measured in BF16 alone
    is normalised in BF16 at FP8 too: its 141.78 FP8 TFLOPS are 176.49 x 0.8033).
    """
    assert reference_tflops_shares() == {
        "bf16": pytest.approx(794.5 / 989, rel=1e-12),
        "fp16": pytest.approx(794.5 / 989, rel=1e-12),
        "fp8": pytest.approx(1402.6 / 1979, rel=1e-12),
    }
    assert "reference_tflops_shares" not in GpuSpec._fields
    l4 = gpus()["l4-24gb"]
    assert l4.reference_share("fp8") == l4.reference_share("bf16") == pytest.approx(794.5 / 989, rel=1e-12)
    assert l4.physical_tflops("fp8") == pytest.approx(141.78, abs=0.005)
    assert gpus()["h100-sxm5-80gb"].reference_share("fp8") == pytest.approx(1402.6 / 1979, rel=1e-12)
