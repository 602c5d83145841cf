"""llama.cpp's decode of MXFP4 matrices (acc187, issue 9): mmvq's byte-gathered 17-byte blocks.

A MXFP4_MOE GGUF (gpt-oss's) holds its routed experts in MXFP4 and its other matrices in Q8_0. llama.cpp's mmvq
multiplies an MXFP4 block (``vec_dot_mxfp4_q8_1``) by gathering each 32-bit word of its nibbles byte by byte
(``get_int_b1``: 17-byte blocks, no 2-byte alignment) and mapping them through a 16-entry table before the dp4a; the
step reads those experts at ``llama_cpp_gpu_mxfp4_bandwidth_efficiency`` of the card's rate, the Q8_0 matrices at
``llama_cpp_gpu_bandwidth_efficiency``. gpt-oss-20b on an RTX 4090 read +50% (PR #16834's tg rows) and on an RTX 3090
+42% (PR #20586's -ub 1 row) with every matrix at the Q8_0 share; a Q4_0 MoE file (Qwen3-30B-A3B, DeepSeek-V2-Lite)
and every dense row do not move.
"""

from __future__ import annotations

import pytest

from generator.sizing.constants import Constants
from generator.sizing.llama_cpp_gpu import (
    MAT_VEC_KERNELS,
    expert_mat_vec_kernel,
    gpu_read_bytes_per_s,
    resident_step_seconds,
)
from tests.conftest import calibration_report as _report

calibration_report = _report()

MOE = "llama.cpp gpu-resident decode, current builds, other models (MoE, NVIDIA GDDR)"
GPT_OSS_4090 = "gpt-oss 20B MXFP4 MoE tg128 rtx-4090-24gb PR16834"
QWEN3_4090 = "qwen3moe 30B.A3B Q4_0 tg128 rtx-4090-24gb PR16834"


def test_a_mxfp4_moe_files_experts_run_the_mxfp4_kernel_and_others_keep_the_files() -> None:
    assert "mmvq_mxfp4" in MAT_VEC_KERNELS
    assert expert_mat_vec_kernel("mxfp4_moe", "mmvq") == "mmvq_mxfp4"
    assert expert_mat_vec_kernel("q4_0", "mmvq") == "mmvq"
    assert expert_mat_vec_kernel("bf16", "mmvf") == "mmvf"


def test_the_mxfp4_kernel_reads_its_share_under_the_ceiling() -> None:
    consts = Constants()
    share = consts.llama_cpp_gpu_mxfp4_bandwidth_efficiency
    assert gpu_read_bytes_per_s(1008.0, consts, "mmvq_mxfp4") == pytest.approx(1008.0 * share * 1e9)
    ceiling = consts.llama_cpp_gpu_read_ceiling_gb_per_s
    assert gpu_read_bytes_per_s(1e5, consts, "mmvq_mxfp4") == pytest.approx(ceiling * 1e9)


def test_a_steps_experts_read_at_their_kernels_rate_and_the_rest_at_the_files() -> None:
    consts = Constants()
    read, experts = 2.5e9, 1.2e9
    _, seconds = resident_step_seconds(read, 24.0, 1008.0, consts, "mmvq", experts, "mmvq_mxfp4")
    expected = (read - experts) / gpu_read_bytes_per_s(1008.0, consts) + experts / gpu_read_bytes_per_s(
        1008.0, consts, "mmvq_mxfp4"
    )
    assert seconds == pytest.approx(expected)
    # no expert bytes, or experts of the file's own kernel: the one-rate step as before
    plain = resident_step_seconds(read, 24.0, 1008.0, consts, "mmvq")
    assert resident_step_seconds(read, 24.0, 1008.0, consts, "mmvq", 0.0, "mmvq_mxfp4") == plain
    assert resident_step_seconds(read, 24.0, 1008.0, consts, "mmvq", experts, "mmvq")[1] == pytest.approx(plain[1])


def _predict(label: str, share: float | None = None) -> float:
    rows = {r[1]: r for r in calibration_report.llama_cpp_moe_tg_rows() + calibration_report.llama_cpp_other_models_rows()}
    _, _, _, predict, row = rows[label]
    saved = dict(calibration_report.OVERRIDES)
    try:
        if share is not None:
            calibration_report.OVERRIDES["llama_cpp_gpu_mxfp4_bandwidth_efficiency"] = share
        return float(predict(row))
    finally:
        calibration_report.OVERRIDES.clear()
        calibration_report.OVERRIDES.update(saved)


def test_the_share_alone_moves_gpt_oss_and_leaves_the_q4_0_moe_file() -> None:
    q8_share = Constants().llama_cpp_gpu_bandwidth_efficiency
    assert _predict(GPT_OSS_4090, q8_share) == pytest.approx(279.7, rel=1e-3)  # acc180's engine: +50%
    assert _predict(GPT_OSS_4090) == pytest.approx(204.05, rel=1e-3)  # measured 186.10: +9.6%
    assert _predict(QWEN3_4090, q8_share) == _predict(QWEN3_4090) == pytest.approx(197.63, rel=1e-3)


def test_the_fitted_share_is_the_least_summed_error_of_the_llama_cpp_groups() -> None:
    # the only group the share moves is the MoE decode one (every other llama.cpp group keeps its figures)
    def summed(share: float) -> tuple[float, dict[str, tuple[float, float]]]:
        saved = dict(calibration_report.OVERRIDES)
        try:
            calibration_report.OVERRIDES["llama_cpp_gpu_mxfp4_bandwidth_efficiency"] = share
            groups = calibration_report.evaluate(only=lambda g: g.startswith("llama.cpp gpu-resident"))
        finally:
            calibration_report.OVERRIDES.clear()
            calibration_report.OVERRIDES.update(saved)
        figures = {g: (s["median_abs_error"], s["p90_abs_error"]) for g, s in groups.items()}
        return sum(m + p for m, p in figures.values()), figures

    fitted = Constants().llama_cpp_gpu_mxfp4_bandwidth_efficiency
    best, at_fit = summed(fitted)
    for other in (fitted - 0.01, fitted + 0.01, Constants().llama_cpp_gpu_bandwidth_efficiency):
        total, figures = summed(other)
        assert total > best, other
        assert {g: f for g, f in figures.items() if g != MOE} == {g: f for g, f in at_fit.items() if g != MOE}
    assert at_fit[MOE] == pytest.approx((0.115, 0.242), abs=1e-3)  # 22.3% / 51.7% at the Q8_0 share


def test_calibrate_fits_the_mxfp4_share_to_a_gpt_oss_run() -> None:
    """`specgen calibrate` on a llama-bench tg128 of gpt-oss-20b on an RTX 4090 (tests/data/calibrate/
    llama-bench-gpt-oss.md, PR #16834's 186.10 tokens/s): the MXFP4 experts' share binds the step and is the constant it
    fits, and the estimate at that share reproduces the run; the Q4_0 / Q4_K files keep fitting the quantized share
    (tests/test_llama_cpp_gpu_decode.py)."""
    import contextlib
    import io

    from generator.calculator.calibrate import main
    from tests.conftest import REPO
    from tests.helpers import estimate_json

    setup = ("openai/gpt-oss-20b", "--precision", "mxfp4", "--gpu", "rtx-4090-24gb", "--ram-gib", "128",
             "--input-tokens", "512", "--output-tokens", "128")  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*setup, "--log", str(REPO / "tests" / "data" / "calibrate" / "llama-bench-gpt-oss.md")])
    assert code == 0, out.getvalue()
    block = out.getvalue().split("constants:\n", 1)[1]
    found = {k.strip(): float(v) for k, v in (line.split(":") for line in block.splitlines() if line.strip())}
    assert list(found) == ["llama_cpp_gpu_mxfp4_bandwidth_efficiency"]
    assert 0.3 < found["llama_cpp_gpu_mxfp4_bandwidth_efficiency"] < Constants().llama_cpp_gpu_mxfp4_bandwidth_efficiency
    again = estimate_json(
        *setup, "--set", f"llama_cpp_gpu_mxfp4_bandwidth_efficiency={found['llama_cpp_gpu_mxfp4_bandwidth_efficiency']}"
    )
    assert again["throughput"]["decode_tokens_per_s"] == pytest.approx(186.10, rel=0.005)
