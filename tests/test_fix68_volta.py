"""fix68: what ``specgen estimate`` says of Volta and Turing agrees with what the planner does there.

Items from an earlier trial on owned V100 32GB SXM2, A100 PCIe and RTX 6000 Ada servers.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.calculator.estimate import EstimateRequest, estimate

LLAMA_8B = "meta-llama/Llama-3.1-8B"


@pytest.mark.parametrize(("gpu", "launched"), [("v100-sxm2-32gb", False), ("t4-16gb", False), ("a100-pcie-80gb", True)])
def test_a_training_estimate_says_flash_attention_as_the_plan_launches_it(gpu: str, launched: bool) -> None:
    """Item 4: ``estimate --train`` on a V100 or T4 said flash_attention: true, where the plan launches it false."""
    result = estimate(EstimateRequest(model=LLAMA_8B, train="lora", gpu=gpu))
    assert result["training"]["flash_attention"] is launched
    said = [n for n in result["notes"] if n.startswith("FlashAttention-2 runs on Ampere, Ada and Hopper")]
    assert bool(said) is not launched


def test_no_flash_attention_asked_stays_off_everywhere() -> None:
    result = estimate(EstimateRequest(model=LLAMA_8B, train="lora", gpu="a100-pcie-80gb", flash_attention=False))
    assert result["training"]["flash_attention"] is False


def _served(model: str, gpu: str, **kw: object) -> dict[str, Any]:
    return estimate(EstimateRequest(model=model, gpu=gpu, input_tokens=1000, output_tokens=200, batch=8, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("gpu", ["v100-sxm2-32gb", "t4-16gb"])
def test_a_bf16_checkpoint_is_sized_and_said_in_fp16_on_a_gpu_without_bf16(gpu: str) -> None:
    """Item 3: the estimate on a V100 said weights bf16, KV cache bf16; vLLM casts them to float16 there."""
    model = "Qwen/Qwen2.5-7B-Instruct"
    on, ampere = _served(model, gpu), _served(model, "a100-pcie-80gb")
    assert on["precision"] == {"weights": "fp16", "kv_cache": "fp16", "cast_from": "bf16"}
    assert ampere["precision"] == {"weights": "bf16", "kv_cache": "bf16"}
    assert on["weights"]["bytes"] == ampere["weights"]["bytes"]  # the same two bytes a weight
    assert any("served cast to float16" in n for n in on["notes"])


def test_a_quantized_model_caches_in_fp16_on_volta() -> None:
    """Item 3: int4 weights on a V100 were given a bf16 KV cache (vLLM's auto cache dtype is the model's float16)."""
    assert _served(LLAMA_8B, "v100-sxm2-32gb", precision="int4")["precision"]["kv_cache"] == "fp16"
    assert _served(LLAMA_8B, "a100-pcie-80gb", precision="int4")["precision"]["kv_cache"] == "bf16"


@pytest.mark.parametrize("model", ["google/gemma-2-9b-it", "google/gemma-2-27b-it"])
def test_gemma_2_is_sized_in_fp32_on_volta_as_vllm_serves_it(model: str) -> None:
    """Item 2: Gemma 2 on a V100 was sized and said to fit in two bytes a weight; vLLM serves it in float32 there."""
    volta, ampere = _served(model, "v100-sxm2-32gb"), _served(model, "a100-pcie-80gb")
    assert volta["precision"] == {"weights": "fp32", "kv_cache": "fp32", "cast_from": "bf16"}
    assert volta["weights"]["bytes"] == 2 * ampere["weights"]["bytes"]
    assert volta["memory"]["per_gpu"]["kv_cache"] == 2 * ampere["memory"]["per_gpu"]["kv_cache"]
    assert not volta["capacity"]["fits"]  # 34.4 / 101.4 GiB of fp32 weights on a 32 GB GPU
    # timed at the scalar fp32 rate: a prompt takes several times the 16-bit GPU's share of it
    assert volta["throughput"]["dense_tflops"] == 15.7 and volta["throughput"]["ttft_s"] > 4 * ampere["throughput"]["ttft_s"]
    (said,) = [n for n in volta["notes"] if "float32" in n]
    assert "vllm/config/model.py" in said and "a plan at bf16 rules this GPU out" in said


def test_gemma_2_on_volta_under_sglang_is_cast_to_fp16() -> None:
    """The float32 fall-back is vLLM's dtype resolution; SGLang's is not sourced, so it is sized as the cast to fp16."""
    assert _served("google/gemma-2-9b-it", "v100-sxm2-32gb", engine="sglang")["precision"]["weights"] == "fp16"
