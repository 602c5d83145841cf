"""llama.cpp's batch-1 decode on a GPU: a layer's fixed time by the kernels it runs, a file's mat-vec kernel by its type
(acc165; generator/sizing/llama_cpp_gpu.py).

The layers' floor was one figure a layer, so DeepSeek-V2-Lite (27 layers, MoE with shared experts and MLA) read 2x
its measured rate on an RTX 3090 where Qwen3-30B-A3B's and Llama's read within 7%; and one efficiency for every file
read Llama 3 8B BF16 on an RTX 4090 21% slow (its float mat-vec kernel reads 90% of the memory's rate, the quantized
one 64-80%). The tables below pin the counts and the kernel choice by hand.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.llama_cpp_gpu import (
    DENSE_LAYER_KERNELS,
    dense_layer_equivalents,
    gpu_read_bytes_per_s,
    kernels_floor_seconds,
    layer_kernels,
    mat_vec_kernel,
    resident_step_seconds,
)
from generator.sizing.precision import weight_format


def _layers(model: str) -> list[int]:
    return [layer_kernels(layer) for layer in parse_architecture(find_model(model).config).layers]


@pytest.mark.parametrize(
    ("model", "first", "rest", "layers"),
    [
        # 10 + 2 x (q, k, v, o, gate, up, down): the dense layer the floor is timed against
        ("meta-llama/Llama-3.2-1B", 24, 24, 16),
        ("meta-llama/Meta-Llama-3-8B", 24, 24, 32),
        # 10 + 2 x (q, k, v, o, router, the experts' gate, up, down) + the routing's 4
        ("Qwen/Qwen3-30B-A3B", 30, 30, 48),
        ("openai/gpt-oss-20b", 30, 30, 24),
        ("mistralai/Mixtral-8x7B-v0.1", 30, 30, 32),
        # a dense MLA layer first: 10 + 2 x (q, kv_a, k_b, v_b, o, gate, up, down) + MLA's 2; then MoE ones with 2 shared
        # experts: 10 + 2 x (q, kv_a, k_b, v_b, o, router, 3 routed, 3 shared) + 4 routing + 2 shared + 2 MLA
        ("deepseek-ai/DeepSeek-V2-Lite", 28, 42, 27),
    ],
)
def test_a_layers_kernels_by_its_structure(model: str, first: int, rest: int, layers: int) -> None:
    counts = _layers(model)
    assert len(counts) == layers
    assert counts[0] == first and set(counts[1:]) == {rest}


def test_a_dense_model_counts_one_equivalent_a_layer_and_deepseek_v2_lite_1_7() -> None:
    llama = parse_architecture(find_model("meta-llama/Meta-Llama-3-8B").config)
    assert dense_layer_equivalents(llama.layers) == llama.num_layers
    lite = parse_architecture(find_model("deepseek-ai/DeepSeek-V2-Lite").config)
    assert dense_layer_equivalents(lite.layers) == pytest.approx((28 + 26 * 42) / DENSE_LAYER_KERNELS)
    consts = Constants()
    # 27 layers at 84 us a dense one: 3.92 ms, where one figure a layer said 2.27 ms
    assert kernels_floor_seconds(dense_layer_equivalents(lite.layers), consts) == pytest.approx(1120 / 24 * 84e-6)


@pytest.mark.parametrize(
    ("precision", "kernel"),
    [
        ("bf16", "mmvf"),
        ("fp16", "mmvf"),
        ("fp32", "mmvf"),
        ("q4_0", "mmvq"),
        ("q8_0", "mmvq"),
        ("q4_k_m", "mmvq"),
        ("mxfp4", "mmvq"),
    ],
)
def test_the_mat_vec_kernel_of_a_files_type(precision: str, kernel: str) -> None:
    fmt = weight_format(precision)
    assert mat_vec_kernel(float(fmt.bits), float(fmt.scale_bits)) == kernel


@pytest.mark.parametrize(
    ("bandwidth_gb_per_s", "kernel", "expected_gb_per_s"),
    [
        (1008.0, "mmvq", 1008.0 * 0.72),  # an RTX 4090: the quantized kernel's share
        (1008.0, "mmvf", 1008.0 * 0.77),  # the float kernel's
        (936.0, "mmvf", 936.0 * 0.77),  # an RTX 3090
        (1792.0, "mmvf", 1075.0),  # an RTX 5090: the ceiling either way
        (1792.0, "mmvq", 1075.0),
    ],
)
def test_read_rate_by_kernel(bandwidth_gb_per_s: float, kernel: str, expected_gb_per_s: float) -> None:
    assert gpu_read_bytes_per_s(bandwidth_gb_per_s, Constants(), kernel) == pytest.approx(expected_gb_per_s * 1e9)


def test_an_unknown_kernel_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown llama\.cpp mat-vec kernel 'cublas'"):
        gpu_read_bytes_per_s(1008.0, Constants(), "cublas")


def test_a_16_bit_step_reads_faster_than_the_same_bytes_quantized() -> None:
    # Llama 3 8B BF16's 14 GB of layers on an RTX 4090: read-bound either way, 0.72 / 0.77 apart
    consts = Constants()
    _, quantized_s = resident_step_seconds(14e9, 32, 1008.0, consts, "mmvq")
    part, float_s = resident_step_seconds(14e9, 32, 1008.0, consts, "mmvf")
    assert part == "hbm" and quantized_s / float_s == pytest.approx(0.77 / 0.72)
