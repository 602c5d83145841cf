"""A prompt's attention in vLLM's Triton unified kernel: the KV cache re-read for every block of 16 query rows (acc177)."""

from __future__ import annotations

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import accelerator_for, attention_flops_per_s, prefill_seconds
from generator.sizing.prompt_attention_kernel import (
    kernel_flops_per_read_byte,
    prompt_attention_rate,
    query_tokens_per_block,
)
from generator.sizing.weights import Parallelism
from tests.conftest import calibration_report as _report

GPT_OSS_20B = "openai/gpt-oss-20b"
LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


def _arch(model: str):  # type: ignore[no-untyped-def]
    return parse_architecture(find_model(model).config)


def test_a_block_holds_sixteen_rows_of_query_heads() -> None:
    # BLOCK_M 16 over the query heads a KV head serves: gpt-oss 64 / 8 -> 2 tokens, Llama 3 8B 32 / 8 -> 4, MHA 16
    assert query_tokens_per_block(16, 8) == 2
    assert query_tokens_per_block(16, 4) == 4
    assert query_tokens_per_block(16, 1) == 16
    # a group wider than 16: BLOCK_M is the next power of two of it, one token a block
    assert query_tokens_per_block(16, 24) == 1
    assert query_tokens_per_block(16, 32) == 1


def test_sixteen_flops_a_byte_of_sixteen_bit_cache() -> None:
    # 4 x heads x head_dim FLOPs a pair over kv_heads x 2 x head_dim x 2 bytes / BLOCK_Q: 2 x BLOCK_M / 2
    for model in (GPT_OSS_20B, LLAMA_8B):
        assert kernel_flops_per_read_byte(_arch(model), 16) == pytest.approx(16.0)
    assert kernel_flops_per_read_byte(_arch(GPT_OSS_20B), 0) == 0.0
    assert kernel_flops_per_read_byte(_arch("deepseek-ai/DeepSeek-V3"), 16) == 0.0  # MLA layers: not this kernel's


def test_the_rate_is_the_tensor_rate_capped_by_the_re_reads() -> None:
    arch = _arch(GPT_OSS_20B)
    compute = 186e12
    off = Constants()
    assert prompt_attention_rate(arch, compute, 1917.5, off) == compute  # FlashAttention: no cap
    on = off._replace(prompt_attention_query_rows=16, prompt_attention_read_share=1.3)
    assert prompt_attention_rate(arch, compute, 1917.5, on) == pytest.approx(16 * 1917.5e9 * 1.3)
    # a GPU whose memory outruns its tensor cores keeps the tensor rate
    assert prompt_attention_rate(arch, 10e12, 1917.5, on) == 10e12


def test_the_anchor_run_h100_llama_8b_10k_tokens() -> None:
    """vLLM PR #20690's TRITON_ATTN baseline on an H100: 10,000 prompt tokens of Llama-3.1-8B in 0.6648 s (batch 1)."""
    arch = _arch(LLAMA_8B)
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), "bf16", 1)
    par = Parallelism(tp=1, pp=1)
    consts = Constants()._replace(prefill_chunk_tokens=16384)
    flash = prefill_seconds(arch, par, acc, 10_000, consts)
    triton = prefill_seconds(arch, par, acc, 10_000, consts._replace(prompt_attention_query_rows=16))
    assert consts.prompt_attention_read_share == 1.3
    assert triton - flash == pytest.approx(0.33, abs=0.03)  # 0.66 s measured against ~0.33 s at FlashAttention's rate
    capped = prompt_attention_rate(
        arch, attention_flops_per_s(acc, consts), acc.memory_bandwidth_gb_per_s, consts._replace(prompt_attention_query_rows=16)
    )
    assert capped < attention_flops_per_s(acc, consts) / 4  # the kernel, not the tensor cores, sets the rate


@pytest.mark.parametrize(
    ("engine", "gpu", "model", "expected"),
    [
        ("vllm", "a100-sxm4-80gb", GPT_OSS_20B, {"prompt_attention_query_rows": 16}),  # sinks before Hopper
        ("vllm", "rtx-4090-24gb", GPT_OSS_20B, {"prompt_attention_query_rows": 16}),
        ("vllm", "h100-sxm5-80gb", GPT_OSS_20B, {}),  # FlashAttention 3 takes the sinks
        ("vllm", "a100-sxm4-80gb", LLAMA_8B, {}),  # no sinks: FlashAttention 2
        ("sglang", "a100-sxm4-80gb", GPT_OSS_20B, {}),
    ],
)
def test_the_report_sets_the_kernel_where_vllm_picks_it(engine: str, gpu: str, model: str, expected: dict[str, float]) -> None:
    assert _report().attention_kernel_of({"engine": engine, "gpu": gpu, "model": model}) == expected


def _estimate_tokens_per_s(gpu: str, constants: tuple[tuple[str, float], ...] = ()) -> float:
    from generator.calculator.estimate import EstimateRequest, estimate

    request = EstimateRequest(
        model=GPT_OSS_20B,
        precision="mxfp4",
        kv_precision="bf16",
        tp=1,
        gpu=gpu,
        engine="vllm",
        context_tokens=32_100,
        input_tokens=32_000,
        output_tokens=100,
        constants=constants,
    )
    return float(estimate(request)["throughput"]["max_output_tokens_per_s"])


def test_the_estimate_picks_the_kernel_as_vllm_does() -> None:
    # gpt-oss on an A100 under vLLM: Triton unified attention, a 32,000-token prompt's attention 4.7x slower than at
    # FlashAttention's rate (--set prompt_attention_query_rows=0 asks for that rate)
    triton = _estimate_tokens_per_s("a100-sxm4-80gb")
    flash = _estimate_tokens_per_s("a100-sxm4-80gb", (("prompt_attention_query_rows", 0),))
    assert triton < 0.7 * flash
    # on an H100 FlashAttention 3 takes the sinks: the estimate is the same either way
    assert _estimate_tokens_per_s("h100-sxm5-80gb") == _estimate_tokens_per_s(
        "h100-sxm5-80gb", (("prompt_attention_query_rows", 0),)
    )


@pytest.mark.parametrize(
    ("given", "expected"), [({}, 16), ({"prompt_attention_query_rows": 0}, 0), ({"prompt_attention_query_rows": 32}, 32)]
)
def test_the_planner_keeps_a_workloads_kernel_as_the_estimate_does(given: dict[str, int], expected: int) -> None:
    # fix189 (review96 bug 1): a workload's ``constants: {prompt_attention_query_rows: 0}`` reaches the planner as the
    # estimate's ``--set`` does (with_overrides); its 0 (FlashAttention's rate) was read as "unset" and became 16
    from generator import catalog
    from generator.planner.inference import engine_constants
    from generator.sizing.constants import with_overrides
    from generator.workload.models import InferenceSpec

    spec = InferenceSpec(max_context_tokens=8192, engine="vllm")
    consts = engine_constants(spec, catalog.gpus()["a100-sxm4-80gb"], with_overrides(given), model_type="gpt_oss")
    assert consts.prompt_attention_query_rows == expected
    # the same setting on an H100 (FlashAttention 3 takes the sinks): the engine's choice is no cap
    on_hopper = engine_constants(spec, catalog.gpus()["h100-sxm5-80gb"], with_overrides(given), model_type="gpt_oss")
    assert on_hopper.prompt_attention_query_rows == (expected if given else 0)
