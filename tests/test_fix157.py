"""fix157: the quick estimate's usable share under TensorRT-LLM's KV budget (item 2) and llama.cpp's context limit of
a RoPE-scaled model (item 3)."""

from __future__ import annotations

from tests.helpers import estimate_json, run_estimate

L4 = ("llama-3.1-8b", "--gpu", "l4-24gb")


def test_the_usable_basis_names_tensorrt_llms_budget_when_the_constant_sets_it() -> None:
    """Item 2: under ``--set kv_budget_of_free_memory=1`` the capacity is TensorRT-LLM's free_gpu_memory_fraction 0.9
    of what the weights, activations and overhead leave free, but the verdict said "usable at vLLM's
    --gpu-memory-utilization 0.9" and 0.9 of the GPU. L4 (23,583,522,816 bytes), Llama 3.1 8B bf16: held
    16,060,522,496 + 936,116,224 + 1,352,663,040 = 18,349,301,760; usable 0.9 x 23,583,522,816 + 0.1 x held =
    23,060,100,710 bytes (vLLM's: 21,225,170,534)."""
    vllm = estimate_json(*L4)["capacity"]
    assert vllm["usable_basis"] == "vLLM's --gpu-memory-utilization 0.9"
    trt = estimate_json(*L4, "--set", "kv_budget_of_free_memory=1")
    cap, per_gpu = trt["capacity"], trt["memory"]["per_gpu"]
    assert "vLLM" not in cap["usable_basis"]
    assert cap["usable_basis"].startswith("TensorRT-LLM's free_gpu_memory_fraction 0.9 of the memory")
    held = per_gpu["weights"] + per_gpu["activations"] + per_gpu["overhead"]
    assert cap["usable_bytes"] == int(cap["gpu_memory_bytes"] * 0.9 + held * 0.1)
    assert (cap["usable_bytes"], vllm["usable_bytes"]) == (23_060_100_710, 21_225_170_534)
    _, text = run_estimate(*L4, "--set", "kv_budget_of_free_memory=1")
    assert "usable at TensorRT-LLM's free_gpu_memory_fraction 0.9" in text
