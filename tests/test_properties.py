"""Invariants of the memory engine over random architectures (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.kv_cache import size_kv_cache
from generator.sizing.memory import size_inference
from generator.sizing.precision import weight_format
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.weights import Parallelism, size_weights

#: Format families from more to fewer bits. Within a family a lower precision must never need more bytes;
#: across families it can (int4 keeps embeddings in bf16 while GGUF K-quants quantize them too).
FAMILIES = [
    ["fp32", "bf16", "fp8", "int4"],
    ["fp32", "bf16", "int8", "nf4"],
    ["bf16", "fp8", "mxfp4"],
    ["fp32", "bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"],
    ["q8_0", "q6_k", "q4_0", "q3_k_m"],
]
PAIRS = sorted({(f[i], f[j]) for f in FAMILIES for i in range(len(f)) for j in range(i + 1, len(f))})


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    heads = draw(st.sampled_from([8, 16, 32, 64]))
    kv_heads = draw(st.sampled_from([h for h in (1, 2, 4, 8, 16, 32, 64) if heads % h == 0]))
    head_dim = draw(st.sampled_from([64, 128, 256]))
    layers = draw(st.integers(2, 24))
    cfg: dict[str, Any] = {
        "model_type": draw(st.sampled_from(["llama", "qwen2", "qwen3", "mistral"])),
        "hidden_size": heads * draw(st.sampled_from([64, 128])),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": draw(st.integers(256, 8192)),
        "num_hidden_layers": layers,
        "vocab_size": draw(st.integers(1000, 160000)),
        "max_position_embeddings": 131072,
        "tie_word_embeddings": draw(st.booleans()),
    }
    if draw(st.booleans()):
        experts = draw(st.sampled_from([4, 8, 16, 64]))
        cfg |= {
            "num_experts": experts,
            "num_experts_per_tok": draw(st.integers(1, min(8, experts))),
            "moe_intermediate_size": draw(st.integers(128, 2048)),
        }
    if draw(st.booleans()):
        window = draw(st.sampled_from([128, 1024, 4096]))
        cfg |= {
            "sliding_window": window,
            "layer_types": draw(
                st.lists(st.sampled_from(["sliding_attention", "full_attention"]), min_size=layers, max_size=layers)
            ),
        }
    return cfg


def arch_of(cfg: dict[str, Any]) -> Architecture:
    return parse_architecture(cfg)


@settings(max_examples=60, deadline=None)
@given(cfg=configs(), ctx=st.integers(1, 65536), extra=st.integers(0, 65536), batch=st.integers(1, 64), more=st.integers(0, 64))
def test_more_context_or_batch_never_needs_less(cfg: dict[str, Any], ctx: int, extra: int, batch: int, more: int) -> None:
    arch = arch_of(cfg)
    fmt = weight_format("bf16")
    base = size_inference(arch, fmt, 16, ctx, batch, Parallelism(), Constants(), nvlink=False).per_gpu.total
    assert size_inference(arch, fmt, 16, ctx + extra, batch, Parallelism(), Constants(), nvlink=False).per_gpu.total >= base
    assert size_inference(arch, fmt, 16, ctx, batch + more, Parallelism(), Constants(), nvlink=False).per_gpu.total >= base


@settings(max_examples=60, deadline=None)
@given(cfg=configs(), pair=st.sampled_from(PAIRS))
def test_lower_precision_never_needs_more(cfg: dict[str, Any], pair: tuple[str, str]) -> None:
    a, b = pair
    arch = arch_of(cfg)
    assert size_weights(arch, weight_format(b)).total_bytes <= size_weights(arch, weight_format(a)).total_bytes


@settings(max_examples=40, deadline=None)
@given(cfg=configs(), dp=st.integers(1, 64), method=st.sampled_from(["full", "lora", "qlora"]))
def test_higher_zero_stage_never_needs_more_per_gpu(cfg: dict[str, Any], dp: int, method: str) -> None:
    arch = arch_of(cfg)
    totals = [
        size_training(
            arch, TrainingSetup(method=method, zero_stage=z, data_parallel=dp), Parallelism(), Constants(), nvlink=False
        ).per_gpu.total
        for z in (0, 1, 2, 3)
    ]
    assert totals[0] >= totals[1] >= totals[2] >= totals[3]


@settings(max_examples=40, deadline=None)
@given(cfg=configs(), ctx=st.integers(1, 32768), tp_pow=st.integers(0, 3))
def test_more_tensor_parallel_never_needs_more_per_gpu(cfg: dict[str, Any], ctx: int, tp_pow: int) -> None:
    arch = arch_of(cfg)
    tp = 2**tp_pow
    if arch.num_attention_heads % (tp * 2):
        return
    fmt = weight_format("bf16")
    small = size_weights(arch, fmt, Parallelism(tp=tp * 2)).per_gpu_bytes
    assert small <= size_weights(arch, fmt, Parallelism(tp=tp)).per_gpu_bytes
    kv = size_kv_cache(arch, 16, ctx, 1, Parallelism(tp=tp * 2)).per_gpu_bytes
    assert kv <= size_kv_cache(arch, 16, ctx, 1, Parallelism(tp=tp)).per_gpu_bytes


@settings(max_examples=60, deadline=None)
@given(cfg=configs())
def test_active_params_never_exceed_total_and_breakdown_sums(cfg: dict[str, Any]) -> None:
    arch = arch_of(cfg)
    assert 0 < arch.params_active <= arch.params_total
    mem = size_inference(arch, weight_format("int4"), 8, 4096, 2, Parallelism(), Constants(), nvlink=False).per_gpu
    assert mem.total == mem.weights + mem.kv_cache + mem.activations + mem.gradients + mem.optimizer + mem.overhead
