"""llama.cpp's CPU attention with flash attention off engages every thread (issue #9, acc136 entry of CALIBRATION.md).

With flash attention on, ggml's CPU kernel (``ggml_compute_forward_flash_attn_ext_f16``, ggml/src/ggml-cpu/ops.cpp)
parallelizes by query rows, one row a thread: a decoded token of 32 query heads engages 32 of 44 threads. With it off,
KQ and KQV are ``ggml_mul_mat`` over the cached positions, split over every thread. The flash-attention rate
(``cpu_attention_gflops_per_s``, 90 GFLOP/s) is the kernel's on the threads it engaged; off, the same rate over those
threads times all of them. The EPYC 9B14 row of Qwen3-30B-A3B at 6,000 tokens, 44 threads, flash attention off
(24.33 tokens/s measured) goes from 13.81 (-43.2%) to 17.22 (-29.2%); its flash-attention row does not move.
"""

from __future__ import annotations

import json

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import (
    Machine,
    Placement,
    llama_cpp_attention_gflops_per_s,
    llama_cpp_attention_threads,
    offload_cost,
)
from generator.sizing.precision import weight_format
from generator.sizing.weights import size_weights
from generator.units import GIB
from tests.conftest import calibration_report


def _cpu_only(context: int) -> tuple[Architecture, Placement]:
    """Qwen3-14B Q4_0 (config.json: 40 layers, 40 query heads of 128, 8 KV heads) all on the CPU."""
    arch = parse_architecture(find_model("Qwen/Qwen3-14B").config)
    total = size_weights(arch, weight_format("q4_0")).total_bytes
    placement = Placement(
        "q4_0", context, ("cpu",) * arch.num_layers, "cpu", "cpu", gpu_bytes=0, cpu_bytes=total, disk_bytes=0,
        kv_gpu_bytes=0, kv_cpu_bytes=0, per_gpu=(), gpu_budget_bytes=0, ram_used_bytes=0, ram_free_bytes=0, steps=(),
    )  # fmt: skip
    return arch, placement


def _machine(cores: float) -> Machine:
    """A 12-channel DDR5-4800 server of ``cores`` threads; its GPU link too slow to stream the weights to the GPU."""
    return Machine(1, 24 * GIB, 1008.0, 165.0, 1.0, 384 * GIB, 8 * GIB, 0, 0, 3.5, 460.8, cpu_cores=cores)


@pytest.mark.parametrize(
    ("rows", "threads", "flash", "engaged"),
    [
        (32, 44, True, 32),  # Qwen3-30B-A3B's 32 heads on the 9B14 row's 44 threads: 12 idle
        (64, 44, True, 44),  # gpt-oss-120b's 64 heads: every thread
        (32, 44, False, 44),  # mul_mat over the cached positions: every thread
        (40, 16, True, 16),
        (40, 16, False, 16),
        (128, 64, True, 64),
    ],
)
def test_threads_engaged(rows: int, threads: float, flash: bool, engaged: float) -> None:
    assert llama_cpp_attention_threads(rows, threads, flash) == engaged


@pytest.mark.parametrize(
    ("rows", "threads", "flash", "rate"),
    [
        (32, 44, True, 90.0),  # the kernel's rate, whatever the threads
        (32, 44, False, 90.0 * 44 / 32),  # 123.75: 12 more threads
        (64, 44, False, 90.0),  # flash attention already engaged all 44
        (40, 16, False, 90.0),
        (32, 0, False, 90.0),  # threads not known: the flash-attention rate
    ],
)
def test_rates(rows: int, threads: float, flash: bool, rate: float) -> None:
    assert llama_cpp_attention_gflops_per_s(Constants(), rows, threads, flash) == pytest.approx(rate, rel=1e-12)


@pytest.mark.parametrize("cores", [16.0, 40.0, 48.0, 96.0])
@pytest.mark.parametrize("context", [1, 4097, 32768])
def test_flash_attention_off_only_shortens_the_attention(cores: float, context: int) -> None:
    """Qwen3-14B's 40 heads: off, its attention time is on's x min(cores, 40) / cores; nothing else moves."""
    arch, placement = _cpu_only(context)
    fmt, machine = weight_format("q4_0"), _machine(cores)
    on, off = (
        offload_cost(arch, fmt, 16, placement, machine, context, Constants(), context, flash_attention=fa) for fa in (True, False)
    )
    assert off.cpu_attention_s == pytest.approx(on.cpu_attention_s * min(cores, 40) / cores, rel=1e-12)
    assert 1 / on.decode_tokens_per_s - 1 / off.decode_tokens_per_s == pytest.approx(
        on.cpu_attention_s - off.cpu_attention_s, rel=1e-9, abs=1e-15
    )
    assert off.decode_tokens_per_s >= on.decode_tokens_per_s
    if cores <= 40:
        assert off == on


def test_ik_llama_cpp_does_not_read_the_flag() -> None:
    """ik_llama.cpp's attention is its own kernels' rate (ik_llama_cpp_cpu_attention_gflops_per_s)."""
    arch, placement = _cpu_only(8192)
    fmt, machine = weight_format("q4_0"), _machine(96.0)
    on, off = (
        offload_cost(arch, fmt, 16, placement, machine, 8192, Constants(), 8192, engine="ik_llama.cpp", flash_attention=fa)
        for fa in (True, False)
    )
    assert on == off


def test_the_9b14_fa_off_row() -> None:
    """Qwen3-30B-A3B Q4_K_M at 6,000 tokens on 44 threads of an EPYC 9B14: flash attention on 14.97 / off 24.33 tokens/s
    measured (r/LocalLLaMA 1mieqcb); predicted 13.77-13.81 for both before, 17.22 off now. Off's extra speed is the
    attention at 44 threads, not 32: 1/on - 1/off is the on row's attention x (1 - 32/44)."""
    report = calibration_report()
    rows = [
        r for r in json.loads(report.DATA.read_text())["offload_decode"]
        if r["model"] == "Qwen/Qwen3-30B-A3B" and r["context_tokens"] == 6000 and r["engine"] == "llama.cpp"
    ]  # fmt: skip
    (off_row,) = (r for r in rows if r.get("flash_attention") is False)
    on_row = {**off_row, "flash_attention": None}
    off, on = report.predict_offload_decode(off_row), report.predict_offload_decode(on_row)
    assert off == pytest.approx(17.22, abs=0.005)
    assert on == pytest.approx(13.81, abs=0.005)
    # Qwen3-30B-A3B: 48 layers, 32 heads of 128; the token sees 6,001 cached tokens
    attention_on_s = 48 * 4 * 32 * 128 * 6001 / 90e9
    assert 1 / on - 1 / off == pytest.approx(attention_on_s * (1 - 32 / 44), rel=1e-9)
    assert off / off_row["tokens_per_s"] - 1 == pytest.approx(-0.292, abs=0.001)  # -43.2% before
