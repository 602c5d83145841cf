"""The routed experts' memory-bound kernels beside their grouped GEMMs (acc101 entry of benchmarks/CALIBRATION.md).

vLLM's ``fused_experts_impl`` (and SGLang's ``fused_moe_triton``, Marlin's MoE, TensorRT-LLM's CUTLASS MoE) quantize a
W8A8 layer's input, run the gated activation between the two grouped GEMMs and sum each token's top-k expert outputs
at the full hidden size. Every GPU of a TP group does that for every token while the GEMMs' FLOPs divide by TP, so at
TP8 it is a large share of a prompt pass: the lab's DeepSeek-R1 TP8 rows on H200 were +46% / +48% without it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.loaded_weights import loaded_format
from generator.sizing.performance import accelerator_for, routed_expert_traffic_bytes
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights
from tests.conftest import calibration_report


def _setup(model: str, precision: str, gpu_id: str, tp: int, ep: int = 1) -> tuple[Any, Any, Any, Any]:
    arch = parse_architecture(find_model(model).config)
    gpu = find_gpu(gpu_id)
    fmt = loaded_format(weight_format(precision), gpu.architecture, "vllm")
    par = Parallelism(tp=tp, ep=ep)
    return arch, par, accelerator_for(gpu, fmt.compute, tp, 1.0, fmt), fmt


# (model, precision, GPU, TP, EP, per-token bytes, per-pair bytes), the bytes counted by hand from the configs:
# DeepSeek-R1: 58 MoE layers of 61, hidden 7,168, top-8 of 256 experts of 2,048 intermediate columns (256 a GPU at TP8);
# W8A8 FP8: input quantization 3 bytes an element, the sum's write 2; a pair: silu_and_mul 6 + re-quantization 3 bytes a
# column, the sum's read 2 bytes an element of the hidden size.
# Qwen3-235B-A22B: 94 MoE layers, hidden 4,096, top-8 of 128 experts of 1,536 columns (192 a GPU at TP8); BF16: no
# quantization. gpt-oss-20b on an A100: MXFP4 through Marlin's MoE (24 layers, hidden 2,880, top-4 of 32 experts of
# 2,880 columns, the format's Marlin padding of the hidden size to 3,072 not counted here: the config's 2,880).
CASES = [
    ("deepseek-ai/DeepSeek-R1", "fp8", "h200-sxm-141gb", 8, 1, 58 * 7168 * (3 + 2), 58 * 8 * (2048 // 8 * 9 + 7168 * 2)),
    # EP8: the pairs spread over the 8 ranks; each GPU still quantizes and sums its own tokens
    ("deepseek-ai/DeepSeek-R1", "fp8", "h200-sxm-141gb", 1, 8, 58 * 7168 * 5, 58 * 8 * (2048 * 9 + 7168 * 2) / 8),
    ("Qwen/Qwen3-235B-A22B", "bf16", "h100-sxm5-80gb", 8, 1, 94 * 4096 * 2, 94 * 8 * (1536 // 8 * 6 + 4096 * 2)),
    ("openai/gpt-oss-20b", "mxfp4", "a100-sxm4-80gb", 1, 1, 24 * 2880 * 2, 24 * 4 * (2880 * 6 + 2880 * 2)),
]


@pytest.mark.parametrize(("model", "precision", "gpu", "tp", "ep", "per_token", "per_pair"), CASES)
def test_the_bytes_are_those_counted_from_the_kernels(
    model: str, precision: str, gpu: str, tp: int, ep: int, per_token: float, per_pair: float
) -> None:
    arch, par, acc, _ = _setup(model, precision, gpu, tp, ep)
    assert routed_expert_traffic_bytes(arch, par, acc) == pytest.approx((per_token, per_pair), rel=1e-9)


@pytest.mark.parametrize(
    ("model", "precision", "gpu", "tp"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "bf16", "h100-sxm5-80gb", 4),  # dense: no routed experts
        ("Qwen/Qwen3-14B", "bf16", "h100-sxm5-80gb", 1),
        # MXFP4 experts off Marlin: vLLM's triton_kernels matmul_ogs gathers in its first GEMM and sums in its second
        ("openai/gpt-oss-120b", "mxfp4", "h100-sxm5-80gb", 1),
        ("openai/gpt-oss-120b", "mxfp4", "mi300x-192gb", 1),
        # and on Blackwell (FlashInfer's / TensorRT-LLM-gen's MoE); NVFP4 computed as stored
        ("openai/gpt-oss-120b", "mxfp4", "b200-sxm-180gb", 1),
        ("deepseek-ai/DeepSeek-R1", "nvfp4", "b200-sxm-180gb", 8),
    ],
)
def test_none_where_there_is_nothing_to_move_or_the_kernels_fuse_it(model: str, precision: str, gpu: str, tp: int) -> None:
    arch, par, acc, _ = _setup(model, precision, gpu, tp)
    assert routed_expert_traffic_bytes(arch, par, acc) == (0.0, 0.0)


def test_a_step_and_a_prompt_pass_take_the_bytes_at_the_stream_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels run after the GEMMs, not beside them: a decode step (its prompt tokens riding) and a prompt pass each
    grow by exactly tokens x bytes / the stream rate over the same step without them."""
    from generator.sizing import performance

    arch, par, acc, fmt = _setup("Qwen/Qwen3-235B-A22B", "bf16", "h100-sxm5-80gb", 8)
    consts = Constants()
    weights = size_weights(arch, fmt, par)
    per_token, per_pair = routed_expert_traffic_bytes(arch, par, acc)
    bandwidth = acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency
    step = performance.DecodeModel(arch, weights, 16, par, acc, 2050, consts, 2000).step(99, 1980.0)
    monkeypatch.setattr(performance, "routed_expert_traffic_bytes", lambda *_: (0.0, 0.0))
    bare = performance.DecodeModel(arch, weights, 16, par, acc, 2050, consts, 2000).step(99, 1980.0)
    assert step.seconds - bare.seconds == pytest.approx((99 + 1980) * (per_token + per_pair) / bandwidth, rel=1e-9)
    pass_s = performance.prefill_seconds.__wrapped__(arch, par, acc, 8192, consts, fill=False)  # type: ignore[attr-defined]
    monkeypatch.undo()
    with_s = performance.prefill_seconds.__wrapped__(arch, par, acc, 8192, consts, fill=False)  # type: ignore[attr-defined]
    assert with_s - pass_s == pytest.approx(8192 * (per_token + per_pair) / bandwidth, rel=1e-9)


@pytest.mark.parametrize(
    ("source", "rows", "low", "high"),
    [
        # GPUStack's DeepSeek-R1-0528 TP8 runs on 8 x H200, vLLM v0.11.0 (32000/100, 4000/200, 2000/100): +18 / +46 / +48%
        # before; the prompt passes' routed kernels took them to +12 / +37 / +37%; acc203 (a step that runs a prompt pass
        # takes its own roofline): +9.8 / +26.3 / +32.3% today
        ("deepseek-r1/h200.md", 3, 0.09, 0.38),
    ],
)
def test_the_labs_deepseek_tp8_rows_move_toward_the_measurements(source: str, rows: int, low: float, high: float) -> None:
    report = calibration_report()
    data = json.loads((report.DATA).read_text())["throughput"]
    picked = [r for r in data if r["engine"] == "vllm" and r["source"].endswith(source)]
    assert len(picked) == rows
    errors = sorted(report.predict_throughput(r) / r["output_tokens_per_s"] - 1 for r in picked)
    assert low <= errors[0] and errors[-1] <= high, errors
