"""The GEMM parts are kept by constants with the engine's settings blanked (review77 item 8).

:func:`generator.sizing.performance._gemm_constants` sets ``prefill_chunk_tokens`` and ``max_num_seqs`` to one value
before :func:`_gemm_parts_of` (memoized) is called, on the claim that the parts read neither. If a later change made
them (or ``dense_dequant_ratio`` / ``expert_dequant_ratio`` they call) read either, the memo would silently return the
canonical constants' parts; these cases call the uncached body with those two changed and demand the same parts.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.loaded_weights import loaded_format
from generator.sizing.performance import (
    _ENGINE_SETTINGS,
    _gemm_constants,
    _gemm_parts,
    _gemm_parts_of,
    accelerator_for,
    prompt_gemm_parts,
)
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism

# (model, precision, GPU, TP, EP, attention DP, what the case covers)
CASES = [
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", "h100-sxm5-80gb", 1, 1, 1, "dense"),
    ("meta-llama/Llama-3.1-70B-Instruct", "int4", "a100-sxm4-80gb", 4, 1, 1, "dense, dequantized (exllama/Marlin)"),
    ("Qwen/Qwen3-30B-A3B", "int4", "a100-sxm4-80gb", 2, 1, 1, "MoE, dequantized"),
    ("Qwen/Qwen3-235B-A22B", "bf16", "h100-sxm5-80gb", 8, 1, 1, "MoE, replicated matrices at TP8"),
    ("deepseek-ai/DeepSeek-R1", "fp8", "h200-sxm-141gb", 1, 8, 8, "MoE, W8A8, EP and attention DP"),
    ("openai/gpt-oss-20b", "mxfp4", "a100-sxm4-80gb", 1, 1, 1, "MoE, MXFP4 through Marlin"),
    ("openai/gpt-oss-20b", "mxfp4", "b200-sxm-180gb", 1, 1, 1, "MoE, native FP4"),
]

CHANGED = [
    {"prefill_chunk_tokens": 512},
    {"max_num_seqs": 3},
    {"prefill_chunk_tokens": 65536, "max_num_seqs": 1024},
]


@pytest.mark.parametrize(("model", "precision", "gpu", "tp", "ep", "dp", "what"), CASES, ids=[c[-1] for c in CASES])
@pytest.mark.parametrize("changed", CHANGED, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_the_parts_read_neither_engine_setting(
    model: str, precision: str, gpu: str, tp: int, ep: int, dp: int, what: str, changed: dict[str, int]
) -> None:
    assert set(changed) <= set(_ENGINE_SETTINGS)
    arch = parse_architecture(find_model(model).config)
    record = find_gpu(gpu)
    fmt = loaded_format(weight_format(precision), record.architecture, "vllm")
    par = Parallelism(tp=tp, ep=ep)
    assert par.attention_dp == dp
    acc = accelerator_for(record, fmt.compute, tp, 1.0, fmt)
    if "dequantized" in what:
        assert acc.dequantized is not None
    base = Constants()
    other = base._replace(**changed)
    assert other != base
    body = _gemm_parts_of.__wrapped__  # type: ignore[attr-defined]  # the body, past the memo
    assert body(arch, par, acc, other) == body(arch, par, acc, base)
    # and the memoized path answers what the body would at the constants given
    assert _gemm_constants(other) == base
    assert _gemm_parts(arch, par, acc, other) == body(arch, par, acc, other)
    assert prompt_gemm_parts(arch, par, acc, other) == prompt_gemm_parts(arch, par, acc, base)
