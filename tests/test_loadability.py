"""Layouts the serving engines refuse to load are infeasible, with the engine's reason."""

from __future__ import annotations

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_model
from generator.errors import InputError
from generator.sizing.architecture import parse_architecture
from generator.sizing.loadability import loadability_problems
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism


def _qwen3_235b() -> object:
    return parse_architecture(find_model("Qwen/Qwen3-235B-A22B").config)


@pytest.mark.parametrize(
    ("tp", "ep", "loads"),
    [
        # moe_intermediate_size 1536: /8 = 192 is not a whole number of 128-wide blocks (Qwen3-235B-A22B-FP8 at TP8
        # fails in vLLM with "... is not divisible by weight quantization block_n = 128"); /4 = 384 = 3 blocks
        pytest.param(8, 1, False, id="tp8-192-wide-shard-refused"),
        pytest.param(4, 1, True, id="tp4-384-wide-shard-loads"),
        pytest.param(8, 8, True, id="tp8-with-ep8-whole-experts-load"),
    ],
)
def test_block_quantized_moe_expert_shards(tp: int, ep: int, loads: bool) -> None:
    problems = loadability_problems(_qwen3_235b(), weight_format("fp8-block"), Parallelism(tp=tp, ep=ep))  # type: ignore[arg-type]
    assert (problems == ()) is loads
    if not loads:
        assert "not divisible by the weight quantization block (128)" in problems[0]
        assert "1536 / TP 8 = 192" in problems[0]


def test_estimate_refuses_a_block_quantized_moe_at_a_non_dividing_tp() -> None:
    req = EstimateRequest(model="Qwen/Qwen3-235B-A22B", precision="fp8-block", tp=8, gpu="h200-sxm-141gb")
    with pytest.raises(InputError, match=r"will not load: .*expert intermediate size"):
        estimate(req)
    assert estimate(req._replace(precision="fp8"))["capacity"]["fits"]  # per-tensor FP8 has no blocks to split


def test_attention_heads_must_divide_over_tp() -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    problems = loadability_problems(arch, weight_format("bf16"), Parallelism(tp=3))
    assert any("attention heads (32) must be divisible by the tensor parallel size (3)" in p for p in problems)
    assert loadability_problems(arch, weight_format("bf16"), Parallelism(tp=8)) == ()


def test_expert_parallel_must_hold_whole_experts() -> None:
    problems = loadability_problems(_qwen3_235b(), weight_format("bf16"), Parallelism(tp=2, ep=3))  # type: ignore[arg-type]
    assert any("multiple of the tensor parallel size" in p for p in problems)
    assert any("routed experts (128)" in p for p in problems)
