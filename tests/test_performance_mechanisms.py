"""Decode and prefill mechanisms: pipelines, expert GEMMs at few tokens, MLA attention, per-step engine time."""

from __future__ import annotations

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import (
    accelerator_for,
    attention_flops_per_token,
    decode_step,
    gemm_efficiency,
    pipeline_speedup,
    saturated_throughput,
)
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights


def _arch(model: str) -> Architecture:
    return parse_architecture(find_model(model).config)


@pytest.mark.parametrize("pp", [2, 4, 8])
def test_pipeline_rate_rises_with_micro_batches_and_falls_with_the_bubble(pp: int) -> None:
    rates = [pipeline_speedup(pp, m) for m in (1, 2, 4, 16, 256)]
    assert rates == sorted(rates) and rates[0] == pytest.approx(1.0) and rates[-1] < pp
    # at a fixed number of micro-batches, the bubble (pp - 1 idle slots) takes a growing share
    assert pipeline_speedup(pp, 8) / pp > pipeline_speedup(2 * pp, 8) / (2 * pp)


def test_pipeline_throughput_rises_with_micro_batches() -> None:
    arch = _arch("meta-llama/Llama-3.3-70B-Instruct")
    gpu = find_gpu("rtx-pro-6000-blackwell-96gb")
    fmt = weight_format("nvfp4")
    par = Parallelism(pp=4)
    weights = size_weights(arch, fmt, par)
    acc = accelerator_for(gpu, fmt.compute, 1)
    consts = Constants()
    # more KV room = more sequences = more micro-batches in flight
    rates = [
        saturated_throughput(arch, weights, 8, par, acc, kv, 2048, 128, consts).output_tokens_per_s for kv in (8192, 65536, 2**19)
    ]
    assert rates == sorted(rates) and rates[-1] > 1.5 * rates[0]


def test_prefill_does_not_divide_by_tp_only_under_pipelines() -> None:
    arch = _arch("meta-llama/Llama-3.3-70B-Instruct")
    gpu = find_gpu("rtx-pro-6000-blackwell-96gb")
    fmt = weight_format("nvfp4")
    consts = Constants()
    rate = {}
    for pp in (2, 8):
        par = Parallelism(pp=pp)
        acc = accelerator_for(gpu, fmt.compute, 1)
        weights = size_weights(arch, fmt, par)
        rate[pp] = saturated_throughput(arch, weights, 8, par, acc, 10**6, 2048, 128, consts).output_tokens_per_s
    assert rate[8] > 2.5 * rate[2]  # prefill-heavy 2048/128: more stages, more prompts in flight


def test_moe_decode_is_slower_per_token_than_dense_of_the_same_active_size() -> None:
    # Qwen3-30B-A3B (3.3B active of 30.5B) against Llama-3.2-3B (3.2B dense), same GPU, format and batch
    moe, dense = _arch("Qwen/Qwen3-30B-A3B"), _arch("meta-llama/Llama-3.2-3B-Instruct")
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), "bf16", 1)
    consts = Constants()
    for batch in (1, 16, 64, 256):
        steps = {}
        for name, arch in (("moe", moe), ("dense", dense)):
            weights = size_weights(arch, weight_format("bf16"))
            steps[name] = decode_step(arch, weights, 16, Parallelism(), acc, batch, 1024, consts).seconds
        assert steps["moe"] > steps["dense"], batch


def test_small_expert_batches_run_below_large_gemm_efficiency() -> None:
    consts = Constants()
    peak = consts.prefill_compute_efficiency
    assert gemm_efficiency(4, consts) < gemm_efficiency(64, consts) < gemm_efficiency(8192, consts) < peak


def test_mla_attention_is_over_the_latent() -> None:
    arch = _arch("deepseek-ai/DeepSeek-V3")
    latent = arch.layers[0].kv_elements_per_token  # kv_lora_rank 512 + rope 64
    assert latent == 576
    assert attention_flops_per_token(arch, 1000) == pytest.approx(4 * arch.num_attention_heads * latent * 1000 * arch.num_layers)


def test_sliding_window_layers_attend_over_the_window_only() -> None:
    arch = _arch("openai/gpt-oss-120b")
    short, long = attention_flops_per_token(arch, 128), attention_flops_per_token(arch, 256)
    assert long < 2 * short  # half the layers stop at their 128-token window


def test_per_step_engine_time_grows_with_the_batch() -> None:
    arch = _arch("meta-llama/Llama-3.1-8B-Instruct")
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), "fp8", 1)
    weights = size_weights(arch, weight_format("fp8"))
    base = Constants()
    with_engine = decode_step(arch, weights, 8, Parallelism(), acc, 512, 1024, base).seconds
    bare = base._replace(decode_overhead_per_sequence_s=0.0)
    without = decode_step(arch, weights, 8, Parallelism(), acc, 512, 1024, bare).seconds
    assert with_engine - without == pytest.approx(512 * base.decode_overhead_per_sequence_s)
