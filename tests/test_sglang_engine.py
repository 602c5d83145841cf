"""SGLang as the serving engine: its default mem_fraction_static, its KV pool in estimate and in the planner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_gpu, find_model
from generator.errors import InputError
from generator.sizing.architecture import parse_architecture
from generator.sizing.sglang_kv import (
    sglang_capacity,
    sglang_cell_bytes,
    sglang_default_mem_fraction_static,
    sglang_mem_fraction,
)
from generator.sizing.weights import Parallelism
from generator.units import GIB, MIB
from tests.helpers import VALID, estimate_json, run_specgen

CALIBRATION: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "calibration.json").read_text())


@pytest.mark.parametrize(
    ("gpu_mib", "tp", "expected"),
    [
        # reserved = 512 + max(chunk, 2048) x 1.5 + max_bs x 2 + tp x pp / 8 x 1024 MiB (sglang PR #10975)
        pytest.param(24564, 1, round((24564 - (512 + 3072 + 48 + 128)) / 24564, 3), id="rtx4090-tp1-chunk2k-bs24"),
        pytest.param(24564, 4, round((24564 - (512 + 3072 + 160 + 512)) / 24564, 3), id="rtx4090-tp4-bs80"),
        pytest.param(40960, 1, round((40960 - (512 + 6144 + 64 + 128)) / 40960, 3), id="a100-40g-chunk4k"),
        pytest.param(81559, 1, round((81559 - (512 + 12288 + 512 + 128)) / 81559, 3), id="h100-tp1"),
        pytest.param(81559, 8, round((81559 - (512 + 12288 + 1024 + 1024)) / 81559, 3), id="h100-tp8-bs512"),
        pytest.param(65536, 1, round((65536 - (512 + 12288 + 512 + 128)) / 65536, 3), id="64g-chunk8k"),
        pytest.param(184320, 1, round((184320 - (512 + 24576 + 1024 + 128)) / 184320, 3), id="b200-chunk16k"),
    ],
)
def test_default_mem_fraction_static_follows_sglang_heuristic(gpu_mib: int, tp: int, expected: float) -> None:
    assert sglang_default_mem_fraction_static(gpu_mib * MIB, tp) == expected


@pytest.mark.parametrize(
    ("gpu_mib", "tp", "dp", "expected"),
    [
        # SGLang ServerArgs._handle_gpu_memory_settings (python/sglang/srt/server_args.py, after PR #10975): under
        # --enable-dp-attention reserved += max_bs x dp_size x 3, and + max_bs x dp_size x 1.5 more where max_bs > 300;
        # tp is SGLang's --tp-size (8 for --tp-size 8 --dp-size 8), so max_bs is 512 (review72 item 5).
        # H200 143,771 MiB: 512 + 12,288 + 1,024 + 1,024 + 12,288 + 6,144 = 33,280 MiB -> 0.769 (not 0.907 at tp 1)
        pytest.param(143771, 8, 8, 0.769, id="h200-tp8-dp8"),
        pytest.param(143771, 8, 1, round((143771 - (512 + 12288 + 1024 + 1024)) / 143771, 3), id="h200-tp8-no-dp"),
        pytest.param(143771, 8, 4, round((143771 - (512 + 12288 + 1024 + 1024 + 6144 + 3072)) / 143771, 3), id="h200-dp4"),
        # max_bs 256 (tp < 4): no 1.5 term; 81,559 MiB H100 tp 2 dp 2 -> 512 + 12,288 + 512 + 256 + 1,536
        pytest.param(81559, 2, 2, round((81559 - (512 + 12288 + 512 + 256 + 1536)) / 81559, 3), id="h100-tp2-dp2-bs256"),
    ],
)
def test_default_mem_fraction_static_reserves_for_dp_attention(gpu_mib: int, tp: int, dp: int, expected: float) -> None:
    assert sglang_default_mem_fraction_static(gpu_mib * MIB, tp, 1, dp) == expected


def test_an_attention_dp_replica_takes_sglangs_default_at_its_tp_size() -> None:
    """TP1 EP8 runs as SGLang --tp-size 8 --enable-dp-attention --dp-size 8: its default is taken there."""
    h200 = find_gpu("h200-sxm-141gb").memory_bytes
    assert sglang_mem_fraction(h200, Parallelism(1, 1, 8)) == 0.769
    assert sglang_mem_fraction(h200, Parallelism(8, 1, 8)) == sglang_default_mem_fraction_static(h200, 8) == 0.897
    assert sglang_mem_fraction(h200, Parallelism(1, 1, 8), 0.8) == 0.8


def test_pool_is_the_static_fraction_less_the_weights() -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
    gpu, weights, runtime = 80 * GIB, 16 * GIB, GIB
    got = sglang_capacity(arch, 16, 8192, Parallelism(), gpu, weights, runtime, 0.9)
    free = gpu - runtime
    cell = sglang_cell_bytes(arch, 16)
    assert cell == 32 * 8 * 128 * 2 * 2
    assert got.pool.tokens == int(free * 0.9 - weights) // cell
    assert got.capacity.kv_cache_tokens == got.pool.tokens
    assert got.capacity.max_concurrency == pytest.approx(got.pool.tokens / 8192)
    # a larger static fraction gives a larger pool; one that leaves nothing beside the weights gives none
    assert sglang_capacity(arch, 16, 8192, Parallelism(), gpu, weights, runtime, 0.95).pool.tokens > got.pool.tokens
    assert sglang_capacity(arch, 16, 8192, Parallelism(), gpu, weights, runtime, 0.1).pool.tokens == 0


#: Each public log row's token count by hand: free = GPU memory - CUDA context (512 MiB) - the distributed runtime
#: (nccl_nvlink_bytes 2 GiB with NVLink (SXM) peers in the node, nccl_bytes 256 MiB over PCIe); rest = free x fraction -
#: weights per GPU; tokens = rest // (layers x KV heads per rank x head_dim x K and V x 2 bytes).
SGLANG_ROW_TOKENS: dict[str, int] = {
    # H100 SXM TP4 (NVLink): 85,520,809,984 - 536,870,912 - 2,147,483,648 = 82,836,455,424 free;
    # x 0.93 - 59,186,485,760 (FP8-block weights) = 17,851,417,784; // (94 x 1 x 128 x 2 x 2 = 48,128) -> log 367,404
    "Qwen/Qwen3-235B-A22B-tp4": 370915,
    # L4 TP4 (PCIe): CUDA's 22,491 MiB (fix135) = 23,583,522,816 - 536,870,912 - 268,435,456 = 22,778,216,448 free;
    # x 0.85 - 16,382,928,896 (bf16 weights) = 2,978,555,084; // (64 x 2 x 128 x 2 x 2 = 65,536) -> log 46,611 (-2.5%;
    # 52,833, +13.3%, from nvidia-smi's 24,152,899,584 B before)
    "Qwen/Qwen2.5-32B-tp4": 45449,
    # H100 TP1 (no distributed runtime): 85,520,809,984 - 536,870,912 = 84,983,939,072 free;
    # x 0.88 - 16,060,522,496 (bf16 weights) = 58,725,343,887; // (32 x 8 x 128 x 2 x 2 = 131,072) -> log 442,750
    "meta-llama/Llama-3.1-8B-Instruct-tp1": 448038,
}


@pytest.mark.parametrize("row", CALIBRATION["sglang_kv_tokens"], ids=lambda r: f"{r['model']}-tp{r['tp']}")
def test_estimate_sglang_tokens_against_public_log(row: dict[str, Any]) -> None:
    # The prediction starts from the GPU's memory (no measured free memory): CUDA context, the distributed runtime
    # and weights are the engine's. Exact hand-computed counts; the logs are +1.0%, -2.5% and +1.2% from them.
    result = estimate(
        EstimateRequest(
            model=row["model"],
            precision=row["precision"],
            kv_precision=row["kv_precision"],
            context_tokens=row["max_model_len"],
            tp=row["tp"],
            gpu=row["gpu"],
            engine="sglang",
            mem_fraction_static=row["mem_fraction_static"],
        )
    )
    log = result["capacity"]["sglang_log"]
    assert log["mem_fraction_static"] == row["mem_fraction_static"]
    assert log["max_total_num_tokens"] == result["capacity"]["kv_cache_tokens"]
    assert log["max_total_num_tokens"] == SGLANG_ROW_TOKENS[f"{row['model']}-tp{row['tp']}"]
    assert abs(log["max_total_num_tokens"] / row["logged_tokens"] - 1) < 0.14
    assert row["source"].startswith("https://") and row["setup"]


def test_estimate_sglang_default_fraction_and_vllm_unchanged() -> None:
    req = EstimateRequest(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm5-80gb", context_tokens=8192)
    vllm = estimate(req)["capacity"]
    sglang = estimate(req._replace(engine="sglang"))["capacity"]
    assert "vllm_log" in vllm and "sglang_log" not in vllm
    assert sglang["engine"] == "sglang" and "vllm_log" not in sglang
    expected = sglang_default_mem_fraction_static(find_gpu("h100-sxm5-80gb").memory_bytes)
    assert sglang["sglang_log"]["mem_fraction_static"] == expected
    assert sglang["kv_cache_tokens"] != vllm["kv_cache_tokens"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"engine": "tgi"}, "unknown serving engine 'tgi'; choose one of vllm, sglang", id="engine"),
        pytest.param({"engine": "sglang", "mem_fraction_static": 1.0}, "--mem-fraction-static must be", id="fraction-1"),
        pytest.param({"engine": "sglang", "mem_fraction_static": 0.0}, "--mem-fraction-static must be", id="fraction-0"),
    ],
)
def test_estimate_refuses_bad_engine_settings(change: dict[str, Any], message: str) -> None:
    req = EstimateRequest(model="meta-llama/Llama-3.1-8B", gpu="h100-sxm5-80gb")._replace(**change)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        estimate(req)


def test_estimate_text_prints_the_sglang_log_line() -> None:
    result = run_specgen("estimate", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm5-80gb", "--engine", "sglang")
    assert result.returncode == 0, result.stderr
    assert "SGLang log   'KV Cache is allocated. #tokens: " in result.stdout
    assert "vLLM log" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("--mem-fraction-static", "0.8"), "--mem-fraction-static is SGLang's setting", id="needs-sglang"),
        pytest.param(("--engine", "sglang", "--gpu-memory-utilization", "0.8"), "is vLLM's setting", id="vllm-knob"),
        pytest.param(("--engine", "tgi"), "invalid choice: 'tgi'", id="unknown-engine"),
    ],
)
def test_estimate_cli_usage_errors(args: tuple[str, ...], message: str) -> None:
    result = run_specgen("estimate", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm5-80gb", *args)
    assert result.returncode == 2
    assert message in result.stderr


def _sglang_workload(extra: str) -> str:
    return VALID.replace("      requests_per_second: 2\n", f"      requests_per_second: 2\n{extra}")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(
            "      engine: tgi\n",
            "workload.yaml:9:15: deployments[0].inference.engine: 'tgi' is not one of",
            id="schema-enum",
        ),
        pytest.param(
            "      mem_fraction_static: 0.8\n",
            "workload.yaml:9:28: deployments[0].inference.mem_fraction_static: mem_fraction_static is SGLang's setting",
            id="fraction-without-sglang",
        ),
        pytest.param(
            "      engine: sglang\n      mem_fraction_static: 1.5\n",
            "deployments[0].inference.mem_fraction_static",
            id="fraction-range",
        ),
    ],
)
def test_workload_engine_errors_name_the_place(tmp_path: Path, extra: str, message: str) -> None:
    (tmp_path / "workload.yaml").write_text(_sglang_workload(extra))
    result = run_specgen("validate", "workload.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_planner_sizes_kv_by_sglang_when_asked(tmp_path: Path) -> None:
    plans = {}
    for engine in ("vllm", "sglang"):
        (tmp_path / "workload.yaml").write_text(_sglang_workload(f"      engine: {engine}\n"))
        result = run_specgen("plan", "workload.yaml", "--format", "json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        plans[engine] = result.stdout
    assert "serving_engine" not in plans["vllm"]
    assert '"serving_engine": "sglang"' in plans["sglang"]
    text = run_specgen("plan", "workload.yaml", cwd=tmp_path).stdout
    assert "KV tokens fit" in text and "by SGLang's mem_fraction_static accounting" in text


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_a_batching_engine_on_a_fixed_machine_is_refused_with_its_place(tmp_path: Path, engine: str) -> None:
    """fuzz15 item 8: engine: vllm was planned as one llama.cpp stream without a word (sglang was refused)."""
    text = (
        "version: 1\nname: home\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    inference:\n      max_context_tokens: 8192\n      engine: {engine}\n"
        "hardware:\n  fixed:\n    gpu: rtx-4090-24gb\n    gpu_count: 1\n    ram_gib: 64\n"
    )
    (tmp_path / "workload.yaml").write_text(text)
    result = run_specgen("validate", "workload.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"workload.yaml:8:15: deployments[0].inference.engine: engine: {engine} is not planned on hardware.fixed" in (
        result.stderr
    )


def test_the_engines_agree_across_schema_model_and_estimate() -> None:
    import json
    import typing

    from generator.calculator.estimate import SERVING_ENGINES
    from generator.workload.models import InferenceSpec
    from tests.conftest import REPO

    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text(encoding="utf-8"))
    found = [v for k, v in _walk(schema) if k == "engine"]
    annotation = get_type_hints(InferenceSpec)["engine"]
    assert [sorted(str(e) for e in f["enum"]) for f in found] == [sorted(SERVING_ENGINES)]  # type: ignore[attr-defined]
    assert sorted(typing.get_args(annotation)) == sorted(SERVING_ENGINES)


def _walk(node: object) -> list[tuple[str, dict[str, object]]]:
    """Every (property name, property schema) pair in a JSON schema."""
    out: list[tuple[str, dict[str, object]]] = []
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            out.append((name, sub))
        for value in node.values():
            out.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            out.extend(_walk(value))
    return out


def test_the_sglang_verdict_is_its_pool_holding_one_request() -> None:
    """newuser15 item 3: 8B at 16,384 tokens on an L4 said "does NOT fit" (exit 3) although SGLang's own pool held
    28,275 tokens and a plan took the layout: activations live beside mem_fraction_static, not in it."""
    data = estimate_json("llama-3.1-8b", "--gpu", "l4-24gb", "--engine", "sglang", "--input-tokens", "16000",
                         "--output-tokens", "200", "--context", "16384")  # fmt: skip
    capacity = data["capacity"]
    assert capacity["fits"] and capacity["max_concurrency"] >= 1
    assert data["memory"]["per_gpu"]["total"] > capacity["usable_bytes"]  # the whole breakdown is more than the fraction
    assert capacity["usable_basis"].endswith("for the weights and the KV pool")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("meta-llama/Llama-3.1-8B", "--gpu", "l40s-48gb", "--context", "4096"), id="8b-l40s"),
        pytest.param(("meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm5-80gb", "--context", "131072"), id="8b-h100-128k"),
    ],
)
def test_sglang_verdict_counts_the_batch_asked(args: tuple[str, ...]) -> None:
    """newuser71 item 8: ``--engine sglang --batch N`` said "fits", exit 0, where the pool held fewer than N sequences.

    The pool's whole-context sequences against --batch: N held fits (exit 0); N + 1 runs N at a time and the one more
    queues (exit 0: SGLang starts and runs it, newuser73 item 8), as vLLM's verdict says of a batch past its pool.
    """
    one = estimate_json(*args, "--engine", "sglang")
    held = int(one["capacity"]["kv_cache_tokens"] // one["kv_cache"]["context_tokens"])
    assert held >= 2  # the rows are chosen so that a batch of two or more is held
    assert one["capacity"]["fits"]
    at_most = run_specgen("estimate", *args, "--engine", "sglang", "--batch", str(held))
    assert at_most.returncode == 0, at_most.stderr
    assert f"fits: SGLang's KV pool holds {held:,} sequences" in at_most.stdout
    over = run_specgen("estimate", *args, "--engine", "sglang", "--batch", str(held + 1))
    assert over.returncode == 0, over.stderr
    assert f"runs {held:,} at a time, the rest queue: SGLang's KV pool holds {held:,} sequences" in over.stdout
    assert f"(batch {held + 1:,} asked: 1 waits for a place in it)" in over.stdout
    # vLLM says the same of a batch far past its pool
    vllm = run_specgen("estimate", *args, "--batch", str(50 * held))
    assert vllm.returncode == 0, vllm.stderr
    assert "at a time, the rest queue: the KV pool holds" in vllm.stdout


SHORT_REQUESTS = ("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--context", "131072")


@pytest.mark.parametrize(
    ("batch", "verdict"),
    [
        pytest.param(100, "fits: the KV pool holds {held:,} sequences of 1,200 tokens (batch 100 asked)", id="batch-100"),
        pytest.param(
            1000,
            "runs {held:,} at a time, the rest queue: the KV pool holds {held:,} sequences of 1,200 tokens (batch 1,000 "
            "asked: {waiting:,} wait for a place in it)",
            id="batch-1000-queues",
        ),
    ],
)
def test_sglang_counts_a_batch_of_short_requests_at_their_tokens(batch: int, verdict: str) -> None:
    """review71 item 2: 100 requests of 1,000 + 200 tokens (29% of the pool) read "does NOT fit", exit 3, counted at the
    whole 131,072-token context each, beside "at saturation (batch 349)". SGLang's scheduler admits a request by the
    tokens it holds: the verdict is vLLM's rule, one whole-context sequence fits and the pool's tokens hold the batch of
    average ones, the rest queue; vLLM's verdict reads the same."""
    short = ("--input-tokens", "1000", "--output-tokens", "200", "--batch", str(batch))
    data = estimate_json(*SHORT_REQUESTS, "--engine", "sglang", *short)
    capacity = data["capacity"]
    pool = capacity["sglang_log"]["max_total_num_tokens"]
    held = pool // 1200  # one-token pages: the pool's tokens over each request's
    assert (pool, held) == (418_861, 349)
    assert capacity["fits"] and capacity["average_batch"]["sequences_held"] == held
    # the batch's tokens, never below one whole-context sequence (fix78: 100 x 1,200 < 131,072 is sized at the context)
    tokens = max(1200 * batch, 131_072)
    sized = "average" if 1200 * batch >= 131_072 else "one_whole_context"
    kv = data["kv_cache"]
    assert kv["sized_at"] == sized and kv.get("asked_bytes", kv["bytes"]) == 131_072 * tokens
    # a batch that queues is sized in the table at the requests the pool holds at a time (review76 item 12)
    assert kv["bytes"] == 131_072 * (max(1200 * held, 131_072) if batch > held else tokens)
    assert data["throughput"]["saturation_batch"] == held  # the throughput line's batch is the verdict's
    done = run_specgen("estimate", *SHORT_REQUESTS, "--engine", "sglang", *short)
    assert done.returncode == 0, done.stderr
    expected = verdict.format(held=held, waiting=batch - held)
    assert f"{expected}, 3 of the whole 131,072-token context" in done.stdout
    assert "if it ran" not in done.stdout
    vllm = run_specgen("estimate", *SHORT_REQUESTS, *short)
    assert vllm.returncode == 0, vllm.stderr
    vllm_held = estimate_json(*SHORT_REQUESTS, *short)["capacity"]["average_batch"]["sequences_held"]
    assert verdict.format(held=vllm_held, waiting=batch - vllm_held) in vllm.stdout  # the same words, vLLM's pool


def test_sglang_batch_without_request_lengths_stays_at_the_whole_context() -> None:
    """newuser71 item 8 kept beside review71 item 2: without --input-tokens / --output-tokens each of --batch's requests is
    the whole --context, so 8 x 131,072 tokens run 3 at a time in a pool of 3 such sequences, the rest queueing (exit 0,
    newuser73 item 8), and a batch of one is sized at the whole context whatever lengths are given."""
    over = run_specgen("estimate", *SHORT_REQUESTS, "--engine", "sglang", "--batch", "8")
    assert over.returncode == 0, over.stderr
    assert (
        "runs 3 at a time, the rest queue: SGLang's KV pool holds 3 sequences of 131,072 tokens (batch 8 asked: 5 wait "
        "for a place in it)"
    ) in over.stdout
    one = estimate_json(*SHORT_REQUESTS, "--engine", "sglang", "--input-tokens", "1000", "--batch", "1")
    assert one["kv_cache"]["sized_at"] == "context" and "average_batch" not in one["capacity"]
