"""FP4/FP8 formats as storage and compute paths, and checkpoint layouts (modelopt, fbgemm_fp8, compressed-tensors)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.performance import accelerator_for
from generator.sizing.precision import weight_format
from generator.sizing.quantization import parse_quantization_config
from generator.sizing.weights import size_weights
from generator.units import GB, GIB


def _llama70b(quantization: dict[str, Any] | None = None) -> Any:
    config = dict(find_model("meta-llama/Llama-3.3-70B-Instruct").config)
    if quantization is not None:
        config["quantization_config"] = quantization
    return parse_architecture(config)


def test_nvfp4_bits_are_e2m1_plus_e4m3_per_16_plus_a_tensor_scale() -> None:
    arch = _llama70b()
    proj = arch.layers[0].linears[0]
    expected = Fraction(4) + Fraction(8, 16) + Fraction(32, proj.in_features * proj.out_features)
    assert weight_format("nvfp4").linear_bits(proj, 0, arch.num_layers) == expected


@pytest.mark.parametrize("name", ["fp4", "NVFP4", "nvfp4", "modelopt-fp4"])
def test_fp4_names_mean_nvfp4(name: str) -> None:
    assert weight_format(name).name == "nvfp4"


def test_nvfp4_llama_70b_checkpoint_size() -> None:
    # Published NVFP4 checkpoints of Llama-3.x-70B with lm_head in BF16: "~40 GB" (3.5x smaller than
    # ~141 GB BF16): https://huggingface.co/Kaleto/Llama-3.3-70B-Instruct-NVFP4 and
    # https://huggingface.co/nvidia/Llama-3.3-70B-Instruct-FP4 ("approximately 3.5x").
    total = size_weights(_llama70b(), weight_format("nvfp4")).total_bytes
    assert total / GB == pytest.approx(40, rel=0.08)
    bf16 = size_weights(_llama70b(), weight_format("bf16")).total_bytes
    assert bf16 / total == pytest.approx(3.5, rel=0.08)


def test_mxfp4_gpt_oss_20b_checkpoint_size() -> None:
    # OpenAI gpt-oss model card (arXiv:2508.10925, table 1): gpt-oss-20b checkpoint 12.8 GiB, MXFP4 experts.
    arch = parse_architecture(find_model("openai/gpt-oss-20b").config)
    assert size_weights(arch, weight_format("mxfp4")).total_bytes / GIB == pytest.approx(12.8, rel=0.03)


@pytest.mark.parametrize(
    ("gpu", "precision", "compute", "tflops"),
    [
        # the B200's FP4 at its own measured FP4 share over the H100's FP8 one (cuBLASLt 5,239 of 9,000, DeepGEMM PR
        # #348, against 1,402.6 of 1,979; acc142): 7,392, was 9,686 at its FP8 share (3,432.5 of 4,500; acc138)
        pytest.param("b200-sxm-180gb", "nvfp4", "fp4", 9000 * (5239 / 9000) / (1402.6 / 1979), id="blackwell-w4a4-at-fp4-rate"),
        pytest.param("h100-sxm5-80gb", "nvfp4", "fp4", 989, id="hopper-nvfp4-dequantizes-to-bf16"),
        pytest.param("h100-sxm5-80gb", "fp8", "fp8", 1979, id="hopper-w8a8-at-fp8-rate"),
        # at the bf16 rate, scaled by the A100's measured share over the H100's (271.2 of 312 against 794.5 of 989)
        pytest.param("a100-sxm4-80gb", "fp8", "fp8", 271.2 * 989 / 794.5, id="ampere-fp8-weight-only-bf16"),
        pytest.param("b200-sxm-180gb", "int4", "bf16", 1745 * 989 / 794.5, id="gptq-weight-only-bf16"),  # measured (acc138)
        pytest.param("gb300-288gb", "fp4", "fp4", 15000, id="blackwell-ultra-dense-fp4"),
        pytest.param("h20-96gb", "fp8", "fp8", 296, id="h20-cut-down-hopper-fp8"),
    ],
)
def test_compute_path_uses_the_gpus_dense_rate(gpu: str, precision: str, compute: str, tflops: float) -> None:
    fmt = weight_format(precision)
    assert fmt.compute == compute
    assert accelerator_for(find_gpu(gpu), fmt.compute, 1).dense_tflops == pytest.approx(tflops)


def test_modelopt_hf_quant_config_nvfp4_with_exclusions() -> None:
    quant = parse_quantization_config({"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}})
    assert quant is not None and quant.precision == "nvfp4" and quant.keeps("lm_head")


def test_compressed_tensors_nvfp4_and_fp8_channel() -> None:
    nvfp4 = {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "type": "float"}}}}
    fp8 = {
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
    }
    assert parse_quantization_config(nvfp4).precision == "nvfp4"  # type: ignore[union-attr]
    assert parse_quantization_config(fp8).precision == "fp8-channel"  # type: ignore[union-attr]


def test_fbgemm_fp8_keeps_its_bf16_layers_even_when_asked_for_fp8() -> None:
    # Meta's Llama-3.1-405B-Instruct-FP8 (fbgemm_fp8) keeps attention and the first/last layers' MLPs in BF16;
    # a small stand-in list: every self_attn module stays BF16.
    keep = [f"model.layers.{i}.self_attn.{p}" for i in range(80) for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    arch = _llama70b({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": keep})
    plain = _llama70b()
    for name in ("fp8", "fp8-channel"):
        kept = size_weights(arch, weight_format(name)).total_bytes
        assert kept > size_weights(plain, weight_format(name)).total_bytes
    attn_params = sum(lin.weight_params for layer in plain.layers for lin in layer.linears if lin.name in ("q_proj", "o_proj"))
    extra = size_weights(arch, weight_format("fp8")).total_bytes - size_weights(plain, weight_format("fp8")).total_bytes
    assert extra >= attn_params


def _meta_fp8_keep_list(layers: int) -> list[str]:
    """modules_to_not_convert as Meta's Llama-3.1-405B-Instruct-FP8 writes it: every attention projection, the MLP of
    the first and last layers, and the LM head."""
    attention = [f"model.layers.{i}.self_attn.{p}" for i in range(layers) for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    edges = [f"model.layers.{i}.mlp.{p}" for i in (0, layers - 1) for p in ("gate_proj", "up_proj", "down_proj")]
    return [*attention, *edges, "lm_head"]


@pytest.mark.parametrize("tp", [1, 8])
def test_fbgemm_fp8_on_a_bf16_checkpoint_sizes_metas_recipe(tp: int) -> None:
    """newuser20 item 3: ``fbgemm-fp8`` named Meta's FP8 checkpoints but quantized every linear layer. Meta keeps attention
    and the first and last layers in BF16 (Llama 3 paper section 6.2): on a BF16 checkpoint the name sizes exactly what
    the checkpoint's own keep-list does."""
    from generator.sizing.weights import Parallelism

    plain = _llama70b()
    checkpoint = _llama70b({"quant_method": "fbgemm_fp8", "modules_to_not_convert": _meta_fp8_keep_list(plain.num_layers)})
    par = Parallelism(tp=tp)
    recipe = size_weights(plain, weight_format("fbgemm-fp8"), par)
    assert recipe == size_weights(checkpoint, weight_format("fp8-channel"), par)
    # by hand: BF16 attention (80 layers) and two BF16 MLPs on top of fp8-channel's bytes
    attention = sum(lin.weight_params for layer in plain.layers for lin in layer.linears if lin.group == "attention")
    edge_mlp = sum(lin.weight_params for i in (0, 79) for lin in plain.layers[i].linears if lin.group == "mlp")
    all_fp8 = size_weights(plain, weight_format("fp8-channel"), par)
    scales = sum(
        lin.out_features * 4
        for layer in plain.layers
        for lin in layer.linears
        if lin.group == "attention" or layer.number in (0, 79)
    )
    assert recipe.total_bytes - all_fp8.total_bytes == pytest.approx(attention + edge_mlp - scales, abs=200)


def test_fbgemm_fp8_on_an_fbgemm_checkpoint_follows_the_checkpoints_list() -> None:
    # the checkpoint's list, not the recipe, says what it quantized: here only attention is kept
    keep = [f"model.layers.{i}.self_attn.{p}" for i in range(80) for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    arch = _llama70b({"quant_method": "fbgemm_fp8", "modules_to_not_convert": keep})
    assert size_weights(arch, weight_format("fbgemm-fp8")) == size_weights(arch, weight_format("fp8-channel"))


@pytest.mark.parametrize(
    ("gpu", "engine", "gib"),
    [
        # vLLM runs MXFP4 experts through Marlin below compute capability 9.0, which pads each rank's expert matrices
        # (intermediate to 128, hidden to 256: 2880 -> 2944 x 3072): 65.90 GiB, vLLM logged 65.97 (vllm_weights rows)
        pytest.param("a100-sxm4-80gb", "vllm", 65.90, id="ampere-marlin-pads"),
        pytest.param("l40s-48gb", "vllm", 65.90, id="ada-marlin-pads"),
        # Hopper's Triton path holds about the checkpoint (61.29 logged by vLLM 0.25.1)
        pytest.param("h100-sxm5-80gb", "vllm", 60.77, id="hopper-as-stored"),
        pytest.param("a100-sxm4-80gb", "sglang", 60.77, id="other-engine-as-stored"),
    ],
)
def test_gpt_oss_weights_per_gpu_as_vllm_holds_them(gpu: str, engine: str, gib: float) -> None:
    from generator.calculator.estimate import EstimateRequest, estimate

    result = estimate(EstimateRequest(model="openai/gpt-oss-120b", gpu=gpu, engine=engine, context_tokens=8192))
    assert result["memory"]["per_gpu"]["weights"] / GIB == pytest.approx(gib, abs=0.005)
    assert result["weights"]["bytes"] == size_weights(_gpt_oss_120b(), weight_format("mxfp4")).total_bytes  # the file, unpadded


def _gpt_oss_120b() -> Any:
    return parse_architecture(find_model("openai/gpt-oss-120b").config)


@pytest.mark.parametrize(
    ("tp", "ep", "gib"),
    [
        # by hand (review 17 item L5): 56.80 GiB of experts over 2 ranks, each rank's 1,440-wide intermediate padded to
        # 1,536 and the 2,880 hidden to 3,072 (x 1.1378), plus 2.0 GiB of attention, router and embeddings a rank
        (2, 1, 34.31),
        # expert parallelism keeps each expert whole: 2,880 -> 2,944 (x 1.0904)
        (2, 2, 32.96),
    ],
)
def test_marlin_pads_each_ranks_expert_share(tp: int, ep: int, gib: float) -> None:
    from generator.sizing.loaded_weights import loaded_format
    from generator.sizing.weights import Parallelism

    held = loaded_format(weight_format("mxfp4"), "ampere", "vllm")
    assert size_weights(_gpt_oss_120b(), held, Parallelism(tp=tp, ep=ep)).per_gpu_bytes / GIB == pytest.approx(gib, abs=0.01)


def test_fbgemm_fp8_keeps_a_mixture_of_experts_routed_experts_16_bit() -> None:
    """fuzz18 item 8: vLLM's fbgemm_fp8 method quantizes linear layers only (get_quant_method returns None for FusedMoE,
    which then holds 16-bit experts), so Mixtral under fbgemm-fp8 is about its bf16 size, not 47.65 GiB."""
    mixtral = parse_architecture(find_model("mistralai/Mixtral-8x7B-Instruct-v0.1").config)
    recipe = size_weights(mixtral, weight_format("fbgemm-fp8")).total_bytes
    bf16 = size_weights(mixtral, weight_format("bf16")).total_bytes
    assert recipe == bf16  # every Mixtral matrix is attention, a routed expert or a router: none is quantized
