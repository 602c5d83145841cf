"""TensorRT-LLM's KV budget: ``free_gpu_memory_fraction`` of the memory its profiling pass left free (acc130).

vLLM's ``gpu_memory_utilization`` is a share of the whole GPU, the KV cache what is left of it after the weights,
activations and runtime; TensorRT-LLM's ``free_gpu_memory_fraction`` (default 0.9,
https://nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html) is a share of what is free once those are held:
``(total - peak memory of the profiling forward) x fraction`` (``cal_max_tokens`` in
https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/_util.py). The constant
``kv_budget_of_free_memory`` switches ``kv_capacity`` to the second; the figures below are worked by hand.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.memory import MemoryBreakdown, kv_capacity
from generator.sizing.weights import Parallelism
from generator.units import GIB
from tests.helpers import estimate_json

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _available(free_memory: int, utilization: float, held_gib: tuple[int, int, int]) -> int:
    arch = parse_architecture(find_model(LLAMA).config)
    weights, activations, overhead = (gib * GIB for gib in held_gib)
    per_gpu = MemoryBreakdown(weights, 0, activations, 0, 0, overhead)
    consts = Constants()._replace(gpu_memory_utilization=utilization, kv_budget_of_free_memory=free_memory)
    return kv_capacity(arch, 16, 4096, Parallelism(tp=1), consts, 80 * GIB, per_gpu).kv_available_bytes


@pytest.mark.parametrize(
    ("held_gib", "vllm_gib", "tensorrt_gib"),
    [
        # 80 GiB, 16 + 2 + 2 held: vLLM 72 - 20 = 52 GiB; TensorRT-LLM (80 - 20) x 0.9 = 54 GiB
        ((16, 2, 2), 52.0, 54.0),
        # 60 GiB held: vLLM 12 GiB, TensorRT-LLM 18 GiB (the tenth it keeps back is of the 20 GiB free, not of 80)
        ((56, 3, 1), 12.0, 18.0),
        # nothing held: the two budgets are the same share of the GPU
        ((0, 0, 0), 72.0, 72.0),
        # more held than vLLM's budget: vLLM has no KV, TensorRT-LLM still a tenth short of the 4 GiB free
        ((70, 4, 2), 0.0, 3.6),
    ],
)
def test_the_kv_budget_is_vllms_share_of_the_gpu_or_tensorrt_llms_of_the_free_memory(
    held_gib: tuple[int, int, int], vllm_gib: float, tensorrt_gib: float
) -> None:
    assert _available(0, 0.9, held_gib) == pytest.approx(vllm_gib * GIB, abs=2)
    assert _available(1, 0.9, held_gib) == pytest.approx(tensorrt_gib * GIB, abs=2)


def test_nothing_is_available_once_the_held_memory_passes_the_gpu() -> None:
    assert _available(1, 0.9, (70, 8, 4)) == 0


def test_the_estimate_keeps_vllms_budget_unless_set() -> None:
    """The planner's engines (vLLM, SGLang) keep 0; ``--set`` gives the estimate TensorRT-LLM's budget."""
    args = (LLAMA, "--gpu", "h100-sxm5-80gb", "--context", "8192")
    vllm, tensorrt = estimate_json(*args), estimate_json(*args, "--set", "kv_budget_of_free_memory=1")
    per_gpu = vllm["memory"]["per_gpu"]
    held = per_gpu["weights"] + per_gpu["activations"] + per_gpu["overhead"]
    gained = tensorrt["capacity"]["kv_cache_bytes"] - vllm["capacity"]["kv_cache_bytes"]
    # the tenth of the held memory that TensorRT-LLM's budget does not keep back, whole 16-token blocks of it
    block = vllm["capacity"]["kv_cache_bytes"] / vllm["capacity"]["kv_cache_tokens"] * 16
    assert abs(gained - 0.1 * held) <= block
    assert gained > 0
