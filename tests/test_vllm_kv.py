"""vLLM's KV accounting: the token count its start-up log prints, against public logs and its grouping rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.precision import kv_cache_bits
from generator.sizing.sglang_kv import sglang_cell_bytes, sglang_kv_pool
from generator.sizing.vllm_kv import TOKENS_FROM_CONCURRENCY, request_kv_bytes, vllm_kv_cache
from generator.sizing.weights import Parallelism
from generator.units import GIB

CALIBRATION: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "calibration.json").read_text())


def _arch(model: str) -> Architecture:
    return parse_architecture(find_model(model).config)


@pytest.mark.parametrize("row", CALIBRATION["vllm_kv_tokens"], ids=lambda r: f"{r['model']}-tp{r['tp']}")
def test_logged_tokens_match_public_start_up_logs(row: dict[str, Any]) -> None:
    # Available KV memory is printed to 0.01 GiB, so the token count is known to about 0.2% at best;
    # the Qwen3-235B run had an LMCache connector attached (its own small reservation), hence 2%.
    cache = vllm_kv_cache(
        _arch(row["model"]),
        kv_cache_bits(row["kv_precision"]),
        int(row["available_kv_gib"] * GIB),
        row["max_model_len"],
        Parallelism(tp=row["tp"], pp=row.get("pp", 1)),
        row["block_size"],
        row.get("max_num_batched_tokens", 8192),  # a sliding layer's pages per request count it (the A100 row: 2,048)
    )
    assert cache.logged_tokens == pytest.approx(row["logged_tokens"], rel=0.02)
    if "logged_max_concurrency" in row:
        # printed to 0.01x, from a KV memory printed to 0.01 GiB (0.2% of the smallest pool here)
        assert cache.max_concurrency == pytest.approx(row["logged_max_concurrency"], rel=0.002, abs=0.02)


def test_hybrid_model_groups_pad_and_count_every_layer() -> None:
    # Gemma 3 1B: 22 sliding (512) + 4 full layers -> group size 4, sliding split into 6 groups (2 padding layers),
    # 7 groups in all; the log's tokens are the pool over the bytes of all 28 (padded) layers.
    arch = _arch("google/gemma-3-1b-it")
    available = 10 * GIB
    cache = vllm_kv_cache(arch, 16, available, 32768)
    assert (cache.group_size, cache.groups) == (4, 7)
    kinds = {t.kind: t for t in cache.by_layer_type}
    assert kinds["full"].layers == 4 and kinds["full"].padding_layers == 0
    assert kinds["sliding:512"].layers == 22 and kinds["sliding:512"].padding_layers == 2
    blocks = available // (cache.page_bytes * 4)
    assert cache.num_blocks == blocks
    assert cache.logged_tokens == blocks // 7 * 16
    # The pool splits among the types by their groups (1 : 6).
    assert kinds["sliding:512"].pool_bytes == pytest.approx(6 * kinds["full"].pool_bytes, abs=8)


def test_sliding_layers_do_not_shrink_the_logged_count_but_raise_concurrency() -> None:
    # gpt-oss-20b: 12 full + 12 sliding (128). Same bytes per token as 24 full layers for the log line,
    # but a request needs only (128 - 1 + 8192) / 16 + 1 pages in the sliding group.
    arch = _arch("openai/gpt-oss-20b")
    available, length = 20 * GIB, 131072
    cache = vllm_kv_cache(arch, 16, available, length)
    per_token_all_layers = sum(layer.kv_elements_per_token for layer in arch.layers) * 2
    assert cache.logged_tokens == pytest.approx(available / per_token_all_layers, rel=0.001)
    full_pages = length // 16
    sliding_pages = -(-(128 - 1 + 8192) // 16) + 1
    assert cache.max_concurrency == pytest.approx(cache.num_blocks / (full_pages + sliding_pages))
    assert cache.max_concurrency * length > cache.logged_tokens


def test_near_equal_buckets_use_the_largest_as_group_size() -> None:
    # 13 full + 11 sliding: 13 < 11 x 1.5, so vLLM pads the sliding bucket to 13 instead of splitting full in two.
    arch = _arch("openai/gpt-oss-20b")
    first_sliding = next(i for i, layer in enumerate(arch.layers) if layer.window_tokens is not None)
    layers = list(arch.layers)
    layers[first_sliding] = layers[first_sliding]._replace(window_tokens=None)
    cache = vllm_kv_cache(arch._replace(layers=tuple(layers)), 16, 20 * GIB, 131072)
    assert (cache.group_size, cache.groups) == (13, 2)
    assert {t.kind: t.padding_layers for t in cache.by_layer_type} == {"full": 0, "sliding:128": 2}


def test_newer_log_form_is_concurrency_times_length() -> None:
    arch = _arch("openai/gpt-oss-20b")
    cache = vllm_kv_cache(arch, 16, 20 * GIB, 65536, tokens_from=TOKENS_FROM_CONCURRENCY)
    assert cache.logged_tokens == int(cache.max_concurrency * 65536)


@given(st.integers(min_value=0, max_value=200 * GIB), st.integers(min_value=1, max_value=64 * GIB))
def test_more_memory_never_means_fewer_tokens(available: int, extra: int) -> None:
    arch = _arch("google/gemma-2-9b-it")
    low = vllm_kv_cache(arch, 16, available, 8192)
    high = vllm_kv_cache(arch, 16, available + extra, 8192)
    assert high.logged_tokens >= low.logged_tokens and high.max_concurrency >= low.max_concurrency


def test_estimate_reports_the_log_line_and_memory_by_layer_type() -> None:
    result = estimate(EstimateRequest(model="openai/gpt-oss-20b", gpu="h100-sxm5-80gb", context_tokens=131072))
    log = result["capacity"]["vllm_log"]
    assert log["kv_cache_groups"] == 2
    assert [part["kind"] for part in log["by_layer_type"]] == ["full", "sliding:128"]
    pool = sum(part["pool_bytes"] for part in log["by_layer_type"])
    assert pool <= result["capacity"]["kv_cache_bytes"]
    assert log["gpu_kv_cache_size_tokens"] < result["capacity"]["kv_cache_tokens"]


@pytest.mark.parametrize(
    ("model", "precision", "needed", "starts"),
    [
        # 80 layers x 2 x 8 KV heads x 128 x 2 bytes = 327,680 bytes a token; 131,072 tokens: 40 GiB, far
        # beyond what one H100 keeps beside 70 GB of FP8 weights.
        pytest.param("meta-llama/Llama-3.1-70B-Instruct", "fp8", 40 * GIB, False, id="70b-fp8-refused"),
        # vLLM's H100 default of 1,024 sequences: its profiling run samples 1,024 rows of a 201,088-token vocabulary
        # (5.4 GiB of sampler buffers); issue 27508 was refused at 131,072 tokens even at 0.95 and 1,024 batched tokens
        pytest.param("openai/gpt-oss-120b", None, None, False, id="gpt-oss-120b-refused-at-vllm-defaults"),
        pytest.param("openai/gpt-oss-20b", None, None, True, id="gpt-oss-20b-starts"),
    ],
)
def test_estimate_says_when_vllm_refuses_to_start(model: str, precision: str | None, needed: int | None, starts: bool) -> None:
    # at vLLM's H100 default, given: the estimate would otherwise size vLLM's smaller limit where the default has no room
    request = EstimateRequest(model=model, gpu="h100-sxm5-80gb", context_tokens=131072, precision=precision, max_num_seqs=1024)
    result = estimate(request)
    log = result["capacity"]["vllm_log"]
    assert log["starts"] is starts
    assert (log["one_request_kv_bytes"] <= result["capacity"]["kv_cache_bytes"]) is starts
    if needed is not None:
        assert log["one_request_kv_bytes"] == needed


def test_sglang_reserve_is_a_fraction_of_the_memory_before_loading() -> None:
    # SGLang log (sglang PR #18263): 'Load weight end ... avail mem=230.20 GB, mem usage=56.98 GB',
    # mem_fraction_static 0.911 -> 'initial available_bytes ... 204.63 GB' (its GB are GiB).
    arch = _arch("Qwen/Qwen3-30B-A3B")
    pool = sglang_kv_pool(arch, 16, int((230.20 + 56.98) * GIB), int(230.20 * GIB), 0.911)
    # Three printed figures each rounded to 0.01, and "total" is measured at init, a moment before the load starts.
    assert pool.rest_bytes / GIB == pytest.approx(204.63, abs=0.02)
    assert pool.cell_bytes == 48 * 4 * 128 * 2 * 2


def test_sglang_cell_matches_its_logged_k_size() -> None:
    # vllm issue #21348: SGLang, Qwen3-235B-A22B-FP8 TP4: '#tokens: 367404, K size: 8.23 GB' (K is half a cell).
    cell = sglang_cell_bytes(_arch("Qwen/Qwen3-235B-A22B"), 16, Parallelism(tp=4))
    assert 367404 * cell / 2 / GIB == pytest.approx(8.23, abs=0.01)


@pytest.mark.parametrize("section", ["vllm_kv_tokens", "vllm_kv_needed", "training_time"])
def test_new_calibration_rows_carry_a_source_a_user_can_open(section: str) -> None:
    rows = CALIBRATION[section]
    assert rows
    for row in rows:
        assert row["source"].startswith("https://") and row["setup"]


@pytest.mark.parametrize("row", CALIBRATION["vllm_kv_needed"], ids=lambda r: f"{r['model']}-len{r['max_model_len']}")
def test_request_kv_matches_the_gib_vllm_prints_when_it_refuses_to_start(row: dict[str, Any]) -> None:
    # vllm#27508: 'X GiB KV cache is needed' is printed to 0.01 GiB
    needed = request_kv_bytes(
        _arch(row["model"]),
        kv_cache_bits(row["kv_precision"]),
        row["max_model_len"],
        Parallelism(tp=row["tp"]),
        row["block_size"],
        row["max_num_batched_tokens"],
    )
    assert round(needed / GIB, 2) == row["needed_gib"]


@pytest.mark.parametrize(
    ("max_num_batched_tokens", "gib"),
    [
        (1024, 4.54),  # the run's --max-num-batched-tokens: each sliding layer holds 73 pages of 16 tokens
        (8192, 4.79),  # vLLM's default: the window plus a whole chunked-prefill step
        (0, 4.50),  # the window alone would print 4.50, not the logged 4.54
    ],
)
def test_a_sliding_layer_holds_its_window_plus_one_scheduler_step(max_num_batched_tokens: int, gib: float) -> None:
    # gpt-oss-120b at 131,072 tokens, bf16 KV: 18 full layers (4.50 GiB) and 18 sliding layers of 128 tokens
    needed = request_kv_bytes(_arch("openai/gpt-oss-120b"), 16, 131072, max_num_batched_tokens=max_num_batched_tokens)
    assert round(needed / GIB, 2) == gib


def test_request_kv_charges_sliding_layers_less_than_full_ones() -> None:
    arch = _arch("openai/gpt-oss-120b")
    hybrid = request_kv_bytes(arch, 16, 131072, max_num_batched_tokens=1024)
    # every layer charged as full attention (2,048 B per token and layer): 9.00 GiB, twice what vLLM printed
    every_layer_full = len(arch.layers) * 131072 * 2048
    assert round(every_layer_full / GIB, 2) == 9.0
    assert hybrid < every_layer_full * 0.51


def test_pipeline_stage_with_most_full_layers_binds() -> None:
    # Gemma 2 9B at PP2: 21 layers a stage, the first holding 10 full-attention layers and the second 11.
    # A layer keeps 2 x 8 KV heads x 256 = 4,096 BF16 values a token: a 16-token page is 131,072 bytes. At
    # 8,192 tokens and a 1,024-token scheduler step a full layer needs 512 pages, a sliding (4,096) layer
    # ceil(5,119 / 16) + 1 = 321: the second stage needs (11 x 512 + 10 x 321) pages.
    arch = _arch("google/gemma-2-9b-it")
    par = Parallelism(pp=2)
    assert request_kv_bytes(arch, 16, 8192, par, max_num_batched_tokens=1024) == (11 * 512 + 10 * 321) * 131072


def test_vllm_pool_is_the_stage_with_fewest_tokens() -> None:
    # Gemma 3 1B at PP3 (full attention every sixth layer): stages of 9, 9 and 8 layers hold 1, 2 and 1 full
    # layers. The first stage groups 1 + 8 layers (group size 1, 9 groups), the second 2 + 7 (group size 2,
    # 1 + 4 groups). A layer's 16-token page is 16 x 2 x 1 KV head x 256 x 2 bytes = 16,384 bytes, so 4 GiB
    # gives the second stage 4 GiB // (2 x 16,384) = 131,072 blocks and 131,072 // 5 x 16 tokens: fewer than
    # the first stage's 262,144 // 9 x 16, and the engine runs at the smallest stage.
    cache = vllm_kv_cache(_arch("google/gemma-3-1b-it"), 16, 4 * GIB, 32768, Parallelism(pp=3))
    assert cache.logged_tokens == 131072 // 5 * 16
    assert {t.kind: t.layers for t in cache.by_layer_type} == {"full": 2, "sliding:512": 7}


def test_a_hybrid_models_steady_capacity_counts_padding_layers_and_window_blocks() -> None:
    """newuser21 item 3: Gemma 3 27B at 8,192 tokens was planned at 109.81 concurrent requests, the pool's bytes over a
    request's windowed bytes; vLLM's groups of 10 layers (52 sliding in 6 groups, 8 of them padding, 10 full in 1) share
    its blocks, and a request holds 512 full-group blocks and 65 in each sliding group (a 1,024-token window spans 64
    blocks, 65 unaligned): num_blocks / 902."""
    from generator.sizing.constants import Constants
    from generator.sizing.memory import size_inference
    from generator.sizing.precision import weight_format
    from tests.test_config_defaults import GEMMA3_27B

    arch = parse_architecture(GEMMA3_27B)
    assert sum(layer.window_tokens == 1024 for layer in arch.layers) == 52 and arch.num_layers == 62
    memory = size_inference(arch, weight_format("bf16"), 16, 8192, 1, Parallelism(), Constants(), 192 * GIB, nvlink=False)
    capacity = memory.capacity
    assert capacity is not None
    page = 16 * 128 * 2 * 2 * 16  # 16 KV heads x 128 x K and V x 2 bytes, 16 tokens a block
    num_blocks = capacity.kv_available_bytes // (page * 10)
    assert capacity.max_concurrency == pytest.approx(num_blocks / (512 + 6 * 65), rel=1e-9)
    # the bytes of a windowed request (10 full layers x 8,192 tokens + 52 sliding x 1,024) held 6.8% more: vLLM's
    # request is 902 blocks x 10 layers x 16 tokens = 144,320 layer-tokens, not 135,168
    windowed = capacity.kv_available_bytes / ((10 * 8192 + 52 * 1024) * page // 16)
    assert windowed / capacity.max_concurrency == pytest.approx(144_320 / 135_168, rel=1e-3)


@pytest.mark.parametrize(("engine", "windowed"), [("vllm", True), ("sglang", False)])
def test_only_the_engine_whose_pool_applies_windows_is_said_to_serve_more_context(engine: str, windowed: bool) -> None:
    """newuser21 item 11: SGLang's figures charge sliding layers as full (tokens = concurrency x context exactly), yet
    the estimate said its pool serves more context than it has token slots."""
    result = estimate(EstimateRequest(model="openai/gpt-oss-120b", gpu="h200-sxm-141gb", engine=engine, context_tokens=131072))
    assert result["capacity"]["kv_cache_tokens_windowed"] is windowed
