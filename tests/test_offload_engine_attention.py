"""Each engine's CPU attention in offloaded decode (issue #9, 2026-12-03 ik attention entry of benchmarks/CALIBRATION.md).

llama.cpp's flash attention runs a decoded token's query heads one at a time over the cached context (90 GFLOP/s,
fitted to mainline's long-context rows); ik_llama.cpp multiplies the query heads that share a KV head together
(ik_llama.cpp PR #207) and runs the same FLOPs at 500 GFLOP/s, fitted with the other CPU constants over the offload
groups at once. ktransformers runs attention on the GPU: a placement with its layers on the CPU is refused.
"""

from __future__ import annotations

import json

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import OFFLOAD_ENGINES, Machine, Placement, cpu_attention_gflops_per_s, offload_cost
from generator.sizing.precision import weight_format
from generator.sizing.weights import size_weights
from generator.units import GIB
from tests.conftest import calibration_report

#: Qwen3-14B (config.json: 40 layers, 40 query heads of 128, 8 KV heads): 4 x 40 x 128 FLOPs a cached token and layer.
QWEN3_14B_FLOPS_PER_CACHED_TOKEN = 40 * 4 * 40 * 128


def _cpu_only(context: int) -> tuple[Architecture, Placement]:
    arch = parse_architecture(find_model("Qwen/Qwen3-14B").config)
    total = size_weights(arch, weight_format("q4_0")).total_bytes
    placement = Placement(
        "q4_0", context, ("cpu",) * arch.num_layers, "cpu", "cpu", gpu_bytes=0, cpu_bytes=total, disk_bytes=0,
        kv_gpu_bytes=0, kv_cpu_bytes=0, per_gpu=(), gpu_budget_bytes=0, ram_used_bytes=0, ram_free_bytes=0, steps=(),
    )  # fmt: skip
    return arch, placement


#: A 2-channel DDR5-6400 desktop of 16 cores, as the Ryzen 9 9950X row (ik_llama.cpp PR #602); no GPU holds a layer,
#: and its link is too slow to stream the weights to one (the CPU runs them at every context).
DESKTOP = Machine(1, 24 * GIB, 1008.0, 165.0, 1.0, 96 * GIB, 8 * GIB, 0, 0, 3.5, 102.4, cpu_cores=16.0)


def test_the_engines_rates_are_their_constants() -> None:
    consts = Constants()
    assert cpu_attention_gflops_per_s("llama.cpp", consts) == 90.0
    assert cpu_attention_gflops_per_s("ik_llama.cpp", consts) == 500.0
    assert cpu_attention_gflops_per_s("ktransformers", consts) is None
    assert set(OFFLOAD_ENGINES) == {"llama.cpp", "ik_llama.cpp", "ktransformers"}
    with pytest.raises(ValueError, match="unknown offload engine 'vllm'"):
        cpu_attention_gflops_per_s("vllm", consts)


def test_ik_llama_cpps_attention_by_hand_on_the_9950x_row() -> None:
    """Qwen3-14B Q4_0 at 4,096 cached tokens (the row's token sees 4,097): 3,356,262,400 FLOPs a token on the CPU.

    At 90 GFLOP/s that is 37.29 ms, at 500 6.71 ms: ik_llama.cpp's token is 30.58 ms shorter, all else equal, and
    its attention 500 / 90 = 5.56 times as fast.
    """
    context = 4097
    arch, placement = _cpu_only(context)
    flops = QWEN3_14B_FLOPS_PER_CACHED_TOKEN * context
    assert flops == 3_356_262_400
    fmt = weight_format("q4_0")
    main = offload_cost(arch, fmt, 16, placement, DESKTOP, context, Constants(), context)
    ik = offload_cost(arch, fmt, 16, placement, DESKTOP, context, Constants(), context, engine="ik_llama.cpp")
    assert main.cpu_attention_s == pytest.approx(0.037291804444, rel=1e-10)
    assert ik.cpu_attention_s == pytest.approx(0.0067125248, rel=1e-12)
    assert main.cpu_attention_s / ik.cpu_attention_s == pytest.approx(500 / 90, rel=1e-12)
    # nothing else differs: the weights and the KV cache are read alike
    assert 1 / main.decode_tokens_per_s - 1 / ik.decode_tokens_per_s == pytest.approx(0.030579279644, rel=1e-9)
    assert ik.decode_tokens_per_s > main.decode_tokens_per_s


@pytest.mark.parametrize("context", [0, 2048, 8192, 32768])
def test_ik_llama_cpp_is_faster_than_llama_cpp_by_the_rates_ratio_as_the_context_grows(context: int) -> None:
    """Ordering: the same placement is faster under ik_llama.cpp at any context, its attention by 500 / 90 exactly."""
    arch, placement = _cpu_only(max(context, 1))
    fmt = weight_format("q4_0")
    main, ik = (
        offload_cost(arch, fmt, 16, placement, DESKTOP, context, Constants(), context, engine=engine)
        for engine in ("llama.cpp", "ik_llama.cpp")
    )
    if context == 0:
        assert ik.decode_tokens_per_s == main.decode_tokens_per_s
        return
    assert main.cpu_attention_s / ik.cpu_attention_s == pytest.approx(500 / 90, rel=1e-12)
    gained = 1 / main.decode_tokens_per_s - 1 / ik.decode_tokens_per_s
    assert gained == pytest.approx(QWEN3_14B_FLOPS_PER_CACHED_TOKEN * context * (1 / 90e9 - 1 / 500e9), rel=1e-9)


def test_ktransformers_runs_no_attention_on_the_cpu() -> None:
    arch, placement = _cpu_only(4096)
    with pytest.raises(ValueError, match="ktransformers runs attention on the GPU"):
        offload_cost(arch, weight_format("q4_0"), 16, placement, DESKTOP, 4096, Constants(), 4096, engine="ktransformers")


def test_the_calibration_rows_are_timed_for_their_own_engine() -> None:
    """The 9950X's Q4_0 row at 4,096 tokens (ik_llama.cpp PR #602, 9.16 tokens/s measured): its prediction as an
    ik_llama.cpp row is the llama.cpp prediction of the same row less 30.58 ms of attention a token."""
    report = calibration_report()
    (row,) = (
        r for r in json.loads(report.DATA.read_text())["offload_decode"]
        if r["engine"] == "ik_llama.cpp" and r["model"] == "Qwen/Qwen3-14B" and r["precision"] == "q4_0"
        and r["cpu_as_reported"].startswith("AMD Ryzen 9 9950X") and r["context_tokens"] == 4096
    )  # fmt: skip
    ik = report.predict_offload_decode(row)
    main = report.predict_offload_decode({**row, "engine": "llama.cpp"})
    assert 1 / main - 1 / ik == pytest.approx(QWEN3_14B_FLOPS_PER_CACHED_TOKEN * 4097 * (1 / 90e9 - 1 / 500e9), rel=1e-9)
    assert ik / row["tokens_per_s"] - 1 == pytest.approx(-0.14, abs=0.01)  # -31% before the engine's own rate
