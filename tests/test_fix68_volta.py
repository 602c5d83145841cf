"""fix68: what ``specgen estimate`` says of Volta and Turing agrees with what the planner does there.

Items from an earlier trial on owned V100 32GB SXM2, A100 PCIe and RTX 6000 Ada servers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_as_deployed
from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import accelerator_for, decode_step, gemm_seconds
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights

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


@pytest.mark.parametrize(
    ("gpu", "precision", "kernel"),
    [
        ("v100-sxm2-32gb", "int4", "exllama"),  # Marlin needs compute capability 8.0: vLLM's GPTQ kernel on Volta
        ("v100-pcie-16gb", "int8-gptq", "exllama"),
        ("a100-pcie-80gb", "int4", "marlin"),
        ("rtx-6000-ada-48gb", "int4", "marlin"),
    ],
)
def test_int4_on_volta_runs_the_kernel_vllm_has_there(gpu: str, precision: str, kernel: str) -> None:
    """Item 1: int4 on a V100 was timed with Marlin's kernel, which vLLM does not have on Volta."""
    fmt = weight_format(precision)
    acc = accelerator_for(find_gpu(gpu), fmt.compute, 1, 1.0, fmt)
    assert acc.dequant_kernel == kernel
    # exllama's small passes run on the CUDA cores: half2, twice the fp32 rate
    assert acc.scalar_half_tflops == (2 * (find_gpu(gpu).sustained_tflops("fp32") or 0) if kernel == "exllama" else 0.0)


def test_exllama_multiplies_up_to_50_rows_as_stored_and_reconstructs_fp16_above() -> None:
    """q_gemm.cu: more than MAX_Q_GEMM_ROWS (50) rows reconstruct each matrix to fp16 and run cuBLAS at the tensor rate."""
    gpu, fmt, par, consts = find_gpu("v100-sxm2-32gb"), weight_format("int4"), Parallelism(), Constants()
    arch = parse_architecture(find_model(LLAMA_8B).config)
    acc = accelerator_for(gpu, fmt.compute, 1, 1.0, fmt)
    flops = 2.0 * (arch.flop_params - arch.logits_params)
    # at 50 rows the dense multiply-adds run on the CUDA cores at the half2 rate (prefill_compute_efficiency of it)
    scalar = acc.scalar_half_tflops * 1e12 * consts.prefill_compute_efficiency
    at_50 = gemm_seconds(arch, par, acc, 50, consts, logit_tokens=0)
    assert at_50 == pytest.approx(flops * 50 / scalar)
    # at 51 rows, cuBLAS at the whole 16-bit tensor rate: the same as the fp16 model's GEMMs
    fp16 = accelerator_for(gpu, "fp16", 1)
    assert gemm_seconds(arch, par, acc, 51, consts, logit_tokens=0) == gemm_seconds(arch, par, fp16, 51, consts, logit_tokens=0)
    # ... after writing each quantized matrix as fp16 and reading it back: two fp16 bytes a weight, each way
    weights = size_weights(arch, fmt, par)
    small, large = (decode_step(arch, weights, 16, par, acc, n, 2048, consts) for n in (50, 51))
    bandwidth = acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency
    reconstructed = 2 * 2 * (arch.flop_params - arch.logits_params)  # written and read, two bytes a weight
    kv_row = small.memory_seconds / 50  # upper bound of one more sequence's reads
    assert large.memory_seconds - small.memory_seconds == pytest.approx(reconstructed / bandwidth, abs=kv_row)


def test_the_estimate_says_which_int4_formats_load_on_volta() -> None:
    """Item 1: the GEMM rate line named Marlin's kernel on a V100; it names the exllama kernel and the formats."""
    volta = _served(LLAMA_8B, "v100-sxm2-32gb", precision="int4")["throughput"]["dequantized_in_gemm"]
    assert volta["dense_kernel"] == "exllama" and volta["dense_ratio"] == 1.0 and volta["fused_rows"] == 50
    assert "marlin's kernel" not in volta["basis"] and "AWQ needs 7.5" in volta["basis"]
    assert "q_gemm.cu" in volta["basis"] and "GPTQ checkpoints" in volta["basis"]
    ampere = _served(LLAMA_8B, "a100-pcie-80gb", precision="int4")["throughput"]["dequantized_in_gemm"]
    assert ampere["dense_kernel"] == "marlin" and "fused_rows" not in ampere


def test_a_plan_of_int4_on_owned_v100s_times_it_with_the_exllama_kernel(tmp_path: Path) -> None:
    """Item 1, the planner: the V100 int4 service's reasons named Marlin's kernel at dequant_gemm_efficiency_ratio."""
    path = tmp_path / "v100.yaml"
    path.write_text((Path(__file__).parent / "data" / "newuser67_v100_chat.yaml").read_text())
    (deployment,) = plan_as_deployed(str(path))[1].deployments
    (said,) = [r for r in deployment.reasons if "GEMMs' dequantization" in r]
    assert "exllama" in said and "marlin's kernel" not in said


def test_exllama_switches_8_bit_weights_at_24_rows() -> None:
    """q_gemm.cu's MAX_Q_GEMM_ROWS_8BIT: 8-bit GPTQ weights reconstruct from 25 rows on."""
    gpu, fmt, par, consts = find_gpu("v100-sxm2-32gb"), weight_format("int8-gptq"), Parallelism(), Constants()
    arch = parse_architecture(find_model(LLAMA_8B).config)
    acc, fp16 = accelerator_for(gpu, fmt.compute, 1, 1.0, fmt), accelerator_for(gpu, "fp16", 1)
    assert gemm_seconds(arch, par, acc, 24, consts, 0) > gemm_seconds(arch, par, fp16, 24, consts, 0)
    assert gemm_seconds(arch, par, acc, 25, consts, 0) == gemm_seconds(arch, par, fp16, 25, consts, 0)
