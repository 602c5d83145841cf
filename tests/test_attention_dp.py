"""Attention data parallelism with expert parallelism (TensorRT-LLM's DEP layouts): the busiest expert rank, the
all-to-all in the decode step, and the published DEP rows of TensorRT-LLM's perf overview in the calibration data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import (
    accelerator_for,
    busiest_expert_rank_load,
    decode_step,
    expected_normal_max,
    expert_alltoall_seconds,
    gemm_seconds,
)
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "calibration.json"
PERF_OVERVIEW = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/03e27c7d5ff0c6e89f8328838c0a8e64f1b34f9d/"
    "docs/source/developer-guide/perf-overview.md"
)
#: The earlier perf overview (TensorRT-LLM v1.0), whose RTX PRO 6000 MoE cells read "TPn" (acc105).
EARLIER_PERF_OVERVIEW = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/"
    "docs/source/performance/perf-overview.md"
)


def _arch(model: str) -> Architecture:
    return parse_architecture(find_model(model).config)


def test_the_busiest_rank_reproduces_the_published_ep32_imbalance() -> None:
    # TensorRT-LLM's large-EP blog: DeepSeek-R1 (256 experts, top 8) on 32 GPUs, 1,024 routed tokens a rank, average
    # imbalance ratio (busiest / mean - 1) 1.564; the constant is derived from it (constants.py expert_popularity_cv)
    tokens = 1024 * 32 / 8
    assert busiest_expert_rank_load(256, 8, 32, tokens, Constants().expert_popularity_cv) == pytest.approx(2.564, abs=0.005)
    # Blom's expected maximum of n standard normals (exact: 0.564, 1.029, 1.424, 2.070)
    assert [round(expected_normal_max(n), 3) for n in (1, 2, 4, 8, 32)] == [0.0, 0.589, 1.049, 1.434, 2.067]


@pytest.mark.parametrize(
    ("experts", "top_k", "ep", "tokens", "cv", "expected"),
    [
        # Qwen3-235B-A22B's routing: 128 experts, top 8
        pytest.param(128, 8, 1, 4096, 2.17, 1.0, id="tensor-parallel-experts-do-equal-work"),
        pytest.param(128, 8, 2, 4096, 2.17, 1.1132, id="dep2"),
        pytest.param(128, 8, 4, 4096, 2.17, 1.3487, id="dep4"),
        pytest.param(128, 8, 8, 4096, 2.17, 1.7281, id="dep8"),
        # uniform routing: only the sampling spread of 4,096 x 8 / ep pairs a rank
        pytest.param(128, 8, 8, 4096, 0.0, 1.0224, id="dep8-uniform-routing"),
        # one token's 8 experts over 8 ranks: the busiest rank holds 2.6 of them, never more than all 8
        pytest.param(128, 8, 8, 1, 2.17, 2.6083, id="dep8-one-token"),
        # review25 B: Mixtral (8 experts, top 2) at EP8, one expert a rank: its routing allows a CV of sqrt(3) = 1.73 at
        # most (was 4.25 at a CV of 2.17, capped at ep)
        pytest.param(8, 2, 8, 4096, 2.17, 3.3241, id="mixtral-ep8"),
        # 8 experts, top 4, one a rank: a token's 4 pairs on 4 ranks, a rank holds 1 of them at most: twice the mean
        pytest.param(8, 4, 8, 1, 2.17, 2.0, id="one-expert-a-rank-most"),
    ],
)
def test_busiest_expert_rank_grows_with_the_ranks(
    experts: int, top_k: int, ep: int, tokens: int, cv: float, expected: float
) -> None:
    assert busiest_expert_rank_load(experts, top_k, ep, tokens, cv) == pytest.approx(expected, abs=1e-4)


def _dep_step(cv: float, par: Parallelism, batch: int = 1024) -> tuple[float, float]:
    """(step seconds, comm seconds) of Qwen3-235B FP8 on H100 at ``batch`` sequences of 1k/1k, prefill riding along."""
    arch = _arch("Qwen/Qwen3-235B-A22B")
    fmt = weight_format("fp8")
    weights = size_weights(arch, fmt, par)
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), fmt.compute, par.tp)
    consts = Constants()._replace(expert_popularity_cv=cv)
    step = decode_step(arch, weights, 8, par, acc, batch, 1500, consts, float(batch), 1000)
    return step.seconds, step.comm_seconds


def test_the_dp_step_counts_the_all_to_all_at_the_busiest_rank() -> None:
    arch = _arch("Qwen/Qwen3-235B-A22B")
    dep8 = Parallelism(tp=1, ep=8)
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), "fp8", 1)
    consts = Constants()
    tokens = 2048.0  # 1,024 decodes and the 1,024 prompt tokens finishing sequences bring
    busiest = busiest_expert_rank_load(128, 8, 8, tokens, consts.expert_popularity_cv)
    latency = consts.allreduce_latency_nvlink_s
    alltoall = expert_alltoall_seconds(arch, dep8, tokens, acc.link_gb_per_s, latency, busiest)
    _, comm = _dep_step(consts.expert_popularity_cv, dep8)
    # DEP has no TP all-reduce: its step's communication is the dispatch and combine, at the busiest rank's volume
    assert comm == pytest.approx(alltoall, rel=1e-9)
    # 94 MoE layers x 2 x (the busiest rank's bf16 hidden states to the 7 of 8 other GPUs + 32 us)
    sent = tokens / 8 * 8 * 4096 * 2 * 7 / 8
    assert alltoall == pytest.approx(2 * 94 * (busiest * sent / (acc.link_gb_per_s * 1e9) + latency), rel=1e-9)
    assert alltoall > expert_alltoall_seconds(arch, dep8, tokens, acc.link_gb_per_s, latency)
    # EP over the TP group (TP8 EP8, no attention DP) sends nothing: every rank already holds every token
    assert expert_alltoall_seconds(arch, Parallelism(tp=8, ep=8), tokens, acc.link_gb_per_s, latency, busiest) == 0.0


def test_the_busiest_rank_slows_the_dep_step() -> None:
    dep8 = Parallelism(tp=1, ep=8)
    uniform, _ = _dep_step(0.0, dep8)
    skewed, _ = _dep_step(Constants().expert_popularity_cv, dep8)
    # 1,024 sequences of 1k/1k on 8 x H100 (Qwen3-235B FP8): 42.9 ms with uniform routing, 48.9 ms at the busiest rank
    # (40.9 / 46.9 before the routed experts' quantization, activation and top-k sum kernels were timed: 2.0 ms of the
    # 2,048 tokens' 1.93 MB / 8 ranks + 2.07 MB a token at the stream rate, acc101 entry)
    assert (round(uniform * 1e3, 1), round(skewed * 1e3, 1)) == (42.9, 48.9)


def test_expert_gemms_wait_for_the_busiest_rank_only_where_experts_are_placed_whole() -> None:
    arch = _arch("Qwen/Qwen3-235B-A22B")
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), "fp8", 1)
    skewed, uniform = Constants(), Constants()._replace(expert_popularity_cv=0.0)
    # tensor-parallel experts (every rank a slice of each): no busiest rank
    tp8 = Parallelism(tp=8)
    assert gemm_seconds(arch, tp8, acc, 4096, skewed) == gemm_seconds(arch, tp8, acc, 4096, uniform)
    # expert-parallel: the busiest rank's experts take longer than the mean rank's
    dep8 = Parallelism(tp=1, ep=8)
    assert gemm_seconds(arch, dep8, acc, 4096, skewed) > gemm_seconds(arch, dep8, acc, 4096, uniform) * 1.2


def _dep_rows() -> list[dict[str, Any]]:
    return [r for r in json.loads(DATA.read_text())["throughput"] if r.get("ep", 1) > r["tp"] and r["engine"] == "tensorrt-llm"]


def test_the_perf_overview_dep_rows_carry_the_page_and_the_whole_replica() -> None:
    rows = [r for r in _dep_rows() if r["source"] != EARLIER_PERF_OVERVIEW]
    # DeepSeek-R1 14, gpt-oss-120b 11, Qwen3-235B 27, Qwen3-30B 7 (Llama-4-Maverick's 17 need a catalog model)
    assert len(rows) == 59
    for row in rows:
        assert row["source"] == PERF_OVERVIEW and row["version"] and row["setup"], row
        assert row["tp"] == 1
        gpus = int(row["ep"]) * int(row["pp"])
        assert row["output_tokens_per_s"] == int(row["output_tokens_per_s_per_gpu"]) * gpus, row


def test_the_earlier_pages_rtx_moe_cells_are_attention_dp_runs() -> None:
    # acc105: the earlier page's RTX PRO 6000 "TP2 / TP4 / TP8" cells of Qwen3-30B-A3B ran its MoE recipe
    # (enable_attention_dp): rows tp 1, ep 2 / 4 / 8, each saying why, the page's whole-system figure as printed
    rows: list[dict[str, Any]] = [
        r for r in _dep_rows() if r["source"] == EARLIER_PERF_OVERVIEW and r["model"] == "Qwen/Qwen3-30B-A3B"
    ]
    assert len(rows) == 29
    assert {(r["model"], r["gpu"], r["tp"], r["pp"]) for r in rows} == {
        ("Qwen/Qwen3-30B-A3B", "rtx-pro-6000-blackwell-96gb", 1, 1)
    }
    assert sorted({r["ep"] for r in rows}) == [2, 4, 8]
    for row in rows:
        notes: list[str] = row["research_notes"]
        assert len(notes) == 1 and notes[0].startswith("Layout (acc105") and f"DEP{row['ep']}" in notes[0], row
    # the later page's DEP cells of the same model and GPU (per GPU x GPUs) against the earlier page's "TP" cells
    cell = ("Qwen/Qwen3-30B-A3B", "rtx-pro-6000-blackwell-96gb", 1, 1000, 1000)
    later: dict[int, int] = {
        r["ep"]: r["output_tokens_per_s"]
        for r in _dep_rows()
        if r["source"] == PERF_OVERVIEW and (r["model"], r["gpu"], r["pp"], r["input_tokens"], r["output_tokens"]) == cell
    }
    earlier: dict[int, int] = {
        r["ep"]: r["output_tokens_per_s"] for r in rows if (r["input_tokens"], r["output_tokens"]) == (1000, 1000)
    }
    assert later == {2: 16818, 8: 31880} and earlier == {2: 16431, 4: 24046, 8: 31785}
    assert all(abs(earlier[ep] / later[ep] - 1) < 0.03 for ep in later)


def test_the_earlier_pages_qwen3_235b_tp8_cells_are_dep8_runs() -> None:
    # acc155: the earlier page's Qwen3-235B-A22B "TP8" cells on B200 / H200 / H100 ran the same MoE recipe: rows tp 1,
    # ep 8, each saying why, the page's whole-system figure as printed
    rows: list[dict[str, Any]] = [
        r for r in _dep_rows() if r["source"] == EARLIER_PERF_OVERVIEW and r["model"] == "Qwen/Qwen3-235B-A22B"
    ]
    assert len(rows) == 27
    assert {(r["gpu"], r["tp"], r["ep"], r["pp"]) for r in rows} == {
        (gpu, 1, 8, 1) for gpu in ("b200-sxm-180gb", "h200-sxm-141gb", "h100-sxm5-80gb")
    }
    for row in rows:
        notes: list[str] = row["research_notes"]
        assert len(notes) == 1 and notes[0].startswith("Layout (acc155") and "DEP8" in notes[0], row
    # the same 8 H100s at 1000/1000: the later page's DEP8 cell against the earlier page's "TP8" cell, within 4%
    (later,) = [
        r["output_tokens_per_s"]
        for r in _dep_rows()
        if r["source"] == PERF_OVERVIEW
        and (r["model"], r["gpu"], r["ep"], r["input_tokens"], r["output_tokens"])
        == ("Qwen/Qwen3-235B-A22B", "h100-sxm5-80gb", 8, 1000, 1000)
    ]
    (earlier,) = [
        r["output_tokens_per_s"]
        for r in rows
        if (r["gpu"], r["input_tokens"], r["output_tokens"]) == ("h100-sxm5-80gb", 1000, 1000)
    ]
    assert (later, earlier) == (15456, 14898) and abs(earlier / later - 1) < 0.04


@pytest.mark.parametrize(
    ("model", "gpu", "ep", "pp", "isl", "osl", "per_gpu"),
    [
        # the page's tables (output tokens per second per GPU)
        pytest.param("deepseek-ai/DeepSeek-R1", "h200-sxm-141gb", 8, 1, 1000, 1000, 1627, id="dsr1-h200-dep8"),
        pytest.param("deepseek-ai/DeepSeek-R1", "b200-sxm-180gb", 4, 1, 8192, 1024, 1168, id="dsr1-b200-dep4"),
        pytest.param("openai/gpt-oss-120b", "b200-sxm-180gb", 2, 1, 1000, 1000, 25943, id="gptoss-b200-dep2"),
        pytest.param("openai/gpt-oss-120b", "h100-sxm5-80gb", 4, 1, 32768, 1024, 333, id="gptoss-h100-dep4"),
        pytest.param("Qwen/Qwen3-235B-A22B", "h100-sxm5-80gb", 8, 1, 1000, 1000, 1932, id="qwen235-h100-dep8"),
        pytest.param("Qwen/Qwen3-235B-A22B", "h200-sxm-141gb", 4, 1, 32768, 1024, 134, id="qwen235-h200-dep4"),
        pytest.param("Qwen/Qwen3-235B-A22B", "rtx-pro-6000-blackwell-96gb", 2, 2, 1000, 1000, 1731, id="qwen235-rtx-dep2pp2"),
        pytest.param("Qwen/Qwen3-30B-A3B", "rtx-pro-6000-blackwell-96gb", 8, 1, 32768, 1024, 180, id="qwen30-rtx-dep8"),
    ],
)
def test_dep_rows_match_the_page(model: str, gpu: str, ep: int, pp: int, isl: int, osl: int, per_gpu: int) -> None:
    (row,) = [
        r
        for r in _dep_rows()
        if (r["model"], r["gpu"], r["ep"], r["pp"], r["input_tokens"], r["output_tokens"]) == (model, gpu, ep, pp, isl, osl)
        and r["source"] != EARLIER_PERF_OVERVIEW  # acc155: the earlier page's "TP8" cells are DEP8 rows too
    ]
    assert row["output_tokens_per_s"] == per_gpu * ep * pp


def test_a_prompt_under_attention_dp_runs_on_one_rank_and_exchanges_its_tokens() -> None:
    # review72 item 3: R1 FP8 on H200, TP1 EP8 (attention DP 8), one 4,000-token prompt. It runs on ONE DP rank: its
    # dense GEMMs on that rank's one GPU (4,000 x 3.05e10 FLOPs = 1.22e14, ~109 ms at the GEMM rate), only the routed
    # experts over the 8 GPUs, and its routed tokens go all-to-all: 4,000 x 8 (top-k) x 7,168 x 2 B x 7/8 = 401 MB a
    # MoE layer each way, x 2 x 58 layers = 46.6 GB at the 370.8 GB/s NVLink rate = ~126 ms. 118 ms was counted (dense
    # over 8 GPUs, no exchange).
    from generator.sizing.performance import (
        _gemm_at,
        _gemm_parts,
        gemm_efficiency,
        prefill_seconds,
        prompt_attention_flops_per_token,
        routed_expert_traffic_bytes,
    )

    arch = _arch("deepseek-ai/DeepSeek-R1")
    consts = Constants()
    acc = accelerator_for(find_gpu("h200-sxm-141gb"), "fp8", 1)
    par = Parallelism(1, 1, 8)
    n = 4000
    chunk = consts.prefill_chunk_tokens
    assert n <= chunk  # one pass
    parts = _gemm_parts(arch, par, acc, consts)
    rate = (parts.dense_peak_flops or parts.peak_flops) * gemm_efficiency(n, consts)
    dense_on_rank = parts.dense_flops_per_token * n / rate  # all of it on the rank's one GPU
    assert dense_on_rank == pytest.approx(0.1087, rel=0.01)
    _, top_k = arch.routed_experts
    moe_layers = sum(1 for layer in arch.layers if layer.experts_per_token)
    assert (moe_layers, top_k, arch.hidden_size) == (58, 8, 7168)
    sent = n * top_k * arch.hidden_size * 2 * 7 / 8
    assert 2 * moe_layers * sent / 1e9 == pytest.approx(46.6, rel=0.01)  # GB a prompt
    assert 2 * moe_layers * sent / (acc.link_gb_per_s * 1e9) == pytest.approx(0.1256, rel=0.01)
    exchange = 2 * moe_layers * (sent / (acc.link_gb_per_s * 1e9) + consts.allreduce_latency_nvlink_s)
    attention = (
        prompt_attention_flops_per_token(arch, n) * n / (acc.attention_rate_tflops * 1e12 * consts.prefill_compute_efficiency)
    )
    # the LM head (one token) and the routed experts over 8 GPUs, as the replica's parts time them
    head_and_experts = _gemm_at(parts._replace(dense_flops_per_token=0.0, head_split=1), n, 1, consts)
    # the routed experts' quantization / activation / top-k sum kernels of the prompt's tokens, all on its rank (acc101)
    per_token, per_pair = routed_expert_traffic_bytes(arch, par, acc)
    routed = n * (per_token + per_pair) / (acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency)
    by_hand = dense_on_rank + head_and_experts + attention + exchange + routed
    got = prefill_seconds(arch, par, acc, n, consts)
    assert got == pytest.approx(by_hand, rel=1e-6)
    assert got > 0.33  # was 0.118
    # under load the 8 ranks run 8 prompts at once: the replica's share keeps the dense work over all ranks and adds
    # an eighth of the exchange, which waits for the rank whose experts draw the most of the 8 x 4,000 tokens, as the
    # decode step's exchange does (review73 item 5: the mean rank was timed, 1.515x short)
    from generator.sizing.performance import busiest_expert_rank_load

    busiest = busiest_expert_rank_load(256, 8, 8, 8 * n, consts.expert_popularity_cv)
    assert busiest == pytest.approx(1.515, abs=0.001)  # the experts' popularity, not sampling, sets it
    assert busiest_expert_rank_load(256, 8, 8, n, consts.expert_popularity_cv) == pytest.approx(1.515, abs=0.001)
    loaded = 2 * moe_layers * (busiest * sent / (acc.link_gb_per_s * 1e9) + consts.allreduce_latency_nvlink_s)
    before = _gemm_at(parts, n, 1, consts) + attention
    # and of the routed kernels each rank quantizes and sums its own tokens: an eighth of the per-token bytes (acc101)
    spread = n * (per_token / 8 + per_pair) / (acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency)
    assert prefill_seconds(arch, par, acc, n, consts, fill=False) == pytest.approx(before + loaded / 8 + spread, rel=1e-6)
    # a TP8 replica (no attention DP) is timed as before: no exchange, the dense work over its 8 GPUs
    tp8 = Parallelism(8, 1, 8)
    acc8 = accelerator_for(find_gpu("h200-sxm-141gb"), "fp8", 8)
    assert prefill_seconds(arch, tp8, acc8, n, consts) == prefill_seconds(arch, tp8, acc8, n, consts, fill=False)
