"""The memory engine against published and measured numbers (tests/reference/, copied from shared/reference/)."""

from __future__ import annotations

import json
import statistics
from fractions import Fraction
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants, with_overrides
from generator.sizing.kv_cache import size_kv_cache
from generator.sizing.memory import size_inference
from generator.sizing.precision import WEIGHT_FORMATS, weight_format
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.weights import Parallelism, size_weights
from generator.units import GB, GIB
from tests.conftest import REFERENCE, calibration, reference_config

PARAM_COUNTS: dict[str, dict[str, int]] = json.loads((REFERENCE / "configs" / "param_counts.json").read_text())


@pytest.mark.parametrize("name", sorted(PARAM_COUNTS), ids=sorted(PARAM_COUNTS))
def test_parameter_count_matches_reference(name: str) -> None:
    arch = parse_architecture(reference_config(name))
    expected = PARAM_COUNTS[name]["total_params"]
    assert abs(arch.params_total - expected) / expected < 0.001
    assert arch.params_total == expected  # exact, in fact


@pytest.mark.parametrize(
    ("name", "active_billions"),
    [
        pytest.param("mixtral-8x7b", 12.88, id="mixtral-12.9B-active"),  # Mistral AI: 12.9B active
        pytest.param("qwen3-30b-a3b", 3.35, id="qwen3-30b-3.3B-active"),  # Qwen3 model card: 3.3B activated
        pytest.param("deepseek-v3", 37.55, id="deepseek-v3-37B-active"),  # DeepSeek-V3 report: 37B activated
        pytest.param("llama-3.1-8b", 8.03, id="dense-all-active"),
    ],
)
def test_active_parameters(name: str, active_billions: float) -> None:
    arch = parse_architecture(reference_config(name))
    assert arch.params_active / 1e9 == pytest.approx(active_billions, rel=0.005)


# KV bytes per token (one token, all layers, bf16): exact arithmetic from each config.
@pytest.mark.parametrize(
    ("name", "bytes_per_token"),
    [
        pytest.param("llama-3.1-8b", 32 * 2 * 8 * 128 * 2, id="gqa-8-kv-heads"),
        pytest.param("llama-3.1-70b", 80 * 2 * 8 * 128 * 2, id="gqa-70b"),
        pytest.param("qwen2.5-7b", 28 * 2 * 4 * 128 * 2, id="gqa-4-kv-heads"),
        pytest.param("qwen3-30b-a3b", 48 * 2 * 4 * 128 * 2, id="qwen3-head-dim-128-not-hidden-over-heads"),
        pytest.param("deepseek-v3", 61 * (512 + 64) * 2, id="mla-latent"),
        pytest.param("gemma-2-9b", 42 * 2 * 8 * 256 * 2, id="gemma2-head-dim-256"),
    ],
)
def test_kv_bytes_per_token_exact(name: str, bytes_per_token: int) -> None:
    kv = size_kv_cache(parse_architecture(reference_config(name)), 16, 1024)
    assert kv.bytes_per_token == bytes_per_token


def test_sliding_window_layers_hold_only_the_window() -> None:
    arch = parse_architecture(reference_config("gemma-2-9b"))  # 21 local layers (4096 window) + 21 global
    per_layer_token = 2 * 8 * 256 * 2
    kv = size_kv_cache(arch, 16, 8192)
    assert kv.total_bytes == 21 * per_layer_token * 8192 + 21 * per_layer_token * 4096
    assert size_kv_cache(arch, 16, 2048).total_bytes == 42 * per_layer_token * 2048


def test_mistral_window_caps_every_layer() -> None:
    arch = parse_architecture(find_model("mistralai/Mistral-7B-v0.1").config)
    short = size_kv_cache(arch, 16, 4096).total_bytes
    assert size_kv_cache(arch, 16, 32768).total_bytes == short


def test_gpt_oss_alternates_128_token_windows() -> None:
    arch = parse_architecture(find_model("openai/gpt-oss-120b").config)
    per_layer_token = 2 * 8 * 64 * 2
    kv = size_kv_cache(arch, 16, 32768)
    sliding = sum(1 for layer in arch.layers if layer.window_tokens)
    assert sliding == 18
    assert kv.total_bytes == per_layer_token * (18 * 128 + 18 * 32768)


def test_kv_heads_replicate_beyond_tensor_parallel_heads() -> None:
    arch = parse_architecture(reference_config("qwen2.5-7b"))  # 4 KV heads
    full = size_kv_cache(arch, 16, 4096).total_bytes
    assert size_kv_cache(arch, 16, 4096, par=Parallelism(tp=4)).per_gpu_bytes == full // 4
    assert size_kv_cache(arch, 16, 4096, par=Parallelism(tp=8)).per_gpu_bytes == full // 4  # one head each, replicated


def test_mla_latent_is_replicated_per_tensor_parallel_rank() -> None:
    arch = parse_architecture(reference_config("deepseek-v3"))
    kv = size_kv_cache(arch, 16, 4096, par=Parallelism(tp=8))
    assert kv.per_gpu_bytes == kv.total_bytes


VLLM_ROWS = [
    pytest.param(row, id=f"{row['model'].split('/')[-1]}-tp{row['tensor_parallel_size']}-{i}")
    for i, row in enumerate(calibration()["vllm_memory"])
]


@pytest.mark.parametrize("row", VLLM_ROWS)
def test_weights_per_gpu_within_2_percent_of_vllm(row: dict[str, Any]) -> None:
    arch = parse_architecture(find_model(row["model"]).config)
    sizes = size_weights(arch, weight_format("bf16"), Parallelism(tp=row["tensor_parallel_size"]))
    measured = row["weights_gib"] * GIB
    assert abs(sizes.per_gpu_bytes / measured - 1) < 0.02


def test_kv_capacity_close_to_vllm_on_rtx_3090() -> None:
    # vLLM V0 profiled activations at max_model_len tokens; total memory as torch reports it.
    row = calibration()["vllm_memory"][0]
    arch = parse_architecture(find_model(row["model"]).config)
    consts = with_overrides({"prefill_chunk_tokens": row["max_model_len"], "non_torch_bytes": 0, "cuda_graph_bytes_per_size": 0})
    mem = size_inference(
        arch,
        weight_format("bf16"),
        16,
        row["max_model_len"],
        1,
        Parallelism(),
        consts,
        int(row["total_gpu_memory_gib"] * GIB),
        nvlink=False,
    )
    assert mem.capacity is not None
    predicted_gib = (mem.capacity.kv_available_bytes + mem.per_gpu.overhead) / GIB - row["non_torch_memory_gib"]
    assert predicted_gib == pytest.approx(row["kv_cache_gib"], rel=0.15)


@pytest.mark.parametrize(
    ("fmt", "bits_per_weight"),
    [
        pytest.param("int4", Fraction(4) + Fraction(20, 128), id="gptq-g128"),
        pytest.param("nf4", Fraction(4) + Fraction(8, 64) + Fraction(32, 64 * 256), id="nf4-double-quant-0.127"),
        pytest.param("mxfp4", Fraction(17, 4), id="mxfp4-4.25"),
        pytest.param("q8_0", Fraction(34 * 8, 32), id="gguf-q8_0-8.5"),
        pytest.param("q4_0", Fraction(18 * 8, 32), id="gguf-q4_0-4.5"),
    ],
)
def test_quantized_bits_are_exact_fractions(fmt: str, bits_per_weight: Fraction) -> None:
    arch = parse_architecture(reference_config("llama-3.1-8b"))
    proj = arch.layers[0].linears[0]
    assert weight_format(fmt).linear_bits(proj, 0, arch.num_layers) == bits_per_weight


def test_int4_weights_keep_embeddings_at_16_bit() -> None:
    arch = parse_architecture(reference_config("llama-3.1-70b"))
    sizes = size_weights(arch, weight_format("int4"))
    embeddings = arch.embedding_params + arch.lm_head_params
    norms = arch.num_layers * 2 * arch.hidden_size + arch.hidden_size
    linear = arch.params_total - embeddings - norms
    assert sizes.embedding_bytes == arch.embedding_params * 2
    expected = linear * (Fraction(4) + Fraction(20, 128)) / 8 + (embeddings + norms) * 2
    assert sizes.total_bytes == -(-expected.numerator // expected.denominator)
    # "70B in INT4 is about 35 GB" (the seed article) holds for the linear layers only.
    assert sizes.total_bytes / GB == pytest.approx(39.77, abs=0.01)


def test_gguf_q4_k_m_llama_8b_file_size() -> None:
    # bartowski/Meta-Llama-3.1-8B-Instruct-GGUF lists Q4_K_M at 4.92 GB (file includes ~5 MB of metadata).
    arch = parse_architecture(reference_config("llama-3.1-8b"))
    assert size_weights(arch, weight_format("q4_k_m")).total_bytes / GB == pytest.approx(4.92, rel=0.01)


def test_checkpoint_quantization_config_leaves_attention_in_bf16() -> None:
    arch = parse_architecture(find_model("openai/gpt-oss-120b").config)
    sizes = size_weights(arch, weight_format("mxfp4"))
    # OpenAI: the checkpoint of gpt-oss-120b is 60.8 GiB with MXFP4 experts and bf16 elsewhere.
    assert sizes.total_bytes / GIB == pytest.approx(60.8, rel=0.02)


TRAINING_DATA = [
    row
    for row in calibration()["training_memory"]
    if row["framework"] in ("LLaMA-Factory (HF)", "LLaMA-Factory (HF+FA2)", "LLaMA-Factory (FlashAttention2)")
    and isinstance(row["vram_gb"], (int, float))
]
TRAINING_ROWS = [
    pytest.param(row, id=f"{row['framework']}-{row['method']}-b{row['batch_size']}-s{row['seq_len']}-{i}")
    for i, row in enumerate(TRAINING_DATA)
]


def _training_prediction_gb(row: dict[str, Any]) -> float:
    arch = parse_architecture(find_model("meta-llama/Llama-2-7b-hf").config)
    setup = TrainingSetup(
        method=row["method"],
        micro_batch_size=row["batch_size"],
        sequence_length=row["seq_len"],
        lora_rank=row["lora_rank"],
        flash_attention="FA2" in row["framework"] or "FlashAttention2" in row["framework"],
    )
    return size_training(arch, setup, Parallelism(), Constants(), nvlink=False).per_gpu.total / GB


@pytest.mark.parametrize("row", TRAINING_ROWS)
def test_fine_tuning_peak_within_15_percent_of_llama_factory(row: dict[str, Any]) -> None:
    assert _training_prediction_gb(row) == pytest.approx(row["vram_gb"], rel=0.15)


def test_fine_tuning_median_error_under_8_percent() -> None:
    errors = [abs(_training_prediction_gb(row) / row["vram_gb"] - 1) for row in TRAINING_DATA]
    assert statistics.median(errors) < 0.08


def test_qlora_at_65k_tokens_overflows_a100_40gb_as_measured() -> None:
    # LLaMA-Factory: FlashAttention2 QLoRA at 65,536 tokens ran out of memory on one A100 40GB.
    arch = parse_architecture(find_model("meta-llama/Llama-2-7b-hf").config)
    setup = TrainingSetup(method="qlora", sequence_length=65536, lora_rank=8)
    assert (
        size_training(arch, setup, Parallelism(), Constants(), nvlink=False).per_gpu.total
        > find_gpu("a100-sxm4-40gb").memory_bytes
    )


@pytest.mark.parametrize(
    ("optimizer", "bytes_per_param"),
    [
        pytest.param("adamw", 16, id="mixed-adamw-16"),
        pytest.param("adamw-torch-amp", 18, id="torch-amp-18"),
        pytest.param("adamw-8bit", 10, id="adam-8bit-10"),
        pytest.param("adamw-bf16", 8, id="pure-bf16-8"),
        pytest.param("sgd", 12, id="sgd-momentum-12"),
    ],
)
def test_full_training_model_states_per_parameter(optimizer: str, bytes_per_param: int) -> None:
    arch = parse_architecture(reference_config("llama-3.1-8b"))
    mem = size_training(arch, TrainingSetup(optimizer=optimizer), Parallelism(), Constants(), nvlink=False).per_gpu
    states = mem.weights + mem.gradients + mem.optimizer
    assert states / arch.params_total == pytest.approx(bytes_per_param, rel=1e-6)


def test_memory_is_a_sum_not_a_max() -> None:
    arch = parse_architecture(reference_config("llama-3.1-8b"))
    mem = size_training(arch, TrainingSetup(sequence_length=4096), Parallelism(), Constants(), nvlink=False).per_gpu
    parts = [mem.weights, mem.kv_cache, mem.activations, mem.gradients, mem.optimizer, mem.overhead]
    assert mem.total == sum(parts) > max(parts)


def test_every_weight_format_is_known_by_name() -> None:
    assert {"bf16", "fp8", "int8", "int4", "nf4", "mxfp4", "q4_k_m", "q8_0"} <= set(WEIGHT_FORMATS)
