"""Pipeline stages get the layers an even split leaves over where each engine puts them (newuser32 item 9)."""

from __future__ import annotations

import itertools

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.kv_cache import size_kv_cache
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, engine_stages, size_weights, stage_layers


@pytest.mark.parametrize(
    ("layers", "pp", "rule", "sizes"),
    [
        # vLLM get_pp_indices: partitions[-i] += 1 for i in 2 .. remaining + 1; its log for DeepSeek-V3 at PP4:
        # "Hidden layers were unevenly partitioned: [15,15,16,15]"
        (61, 4, "vllm", [15, 15, 16, 15]),
        (94, 4, "vllm", [23, 24, 24, 23]),  # Qwen3-235B-A22B
        (22, 4, "vllm", [5, 6, 6, 5]),
        (5, 3, "vllm", [2, 2, 1]),  # more left over than middle stages: the first takes one, never the last
        (3, 2, "vllm", [2, 1]),
        (32, 4, "vllm", [8, 8, 8, 8]),
        # SGLang get_pp_indices: "the last N partitions will have one extra layer, where N = remainder"
        (61, 4, "sglang", [15, 15, 15, 16]),
        (94, 4, "sglang", [23, 23, 24, 24]),
        # TensorRT-LLM Mapping.pp_layers, torch.tensor_split: "first n ranks get one extra layer"
        (61, 4, "first", [16, 15, 15, 15]),
        (94, 4, "first", [24, 24, 23, 23]),
    ],
)
def test_stage_layers_follow_each_engine(layers: int, pp: int, rule: str, sizes: list[int]) -> None:
    stages = stage_layers(layers, pp, rule)
    assert [len(r) for r in stages] == sizes
    assert stages[0].start == 0 and stages[-1].stop == layers
    assert all(a.stop == b.start for a, b in itertools.pairwise(stages))


@pytest.mark.parametrize(
    ("engine", "rule"), [("vllm", "vllm"), ("sglang", "sglang"), ("tensorrt-llm", "first"), ("tensorrt-llm-serve", "first")]
)
def test_engine_stage_rules(engine: str, rule: str) -> None:
    assert engine_stages(engine) == rule


def test_deepseek_v3_pp4_sizes_vllms_heaviest_stage() -> None:
    """newuser32 item 9: DeepSeek-V3 (3 dense + 58 MoE layers) at TP4 x PP4 read 40.83 GiB of weights a GPU: the
    remainder layer went to stage 0, whose 16 layers hold the 3 dense ones; vLLM gives it to stage 2 (16 MoE layers:
    one more block-FP8 MoE layer, ~2.9 GB a TP4 rank, and one more layer of KV)."""
    arch = parse_architecture(find_model("deepseek-ai/DeepSeek-V3").config)
    fmt = weight_format("fp8-block")
    vllm = size_weights(arch, fmt, Parallelism(4, 4, stages="vllm")).per_gpu_bytes
    first = size_weights(arch, fmt, Parallelism(4, 4, stages="first")).per_gpu_bytes
    assert (first, vllm) == (43_845_162_256, 46_273_928_960)  # 40.83 -> 43.10 GiB
    # vLLM's stage 2 is 16 MoE layers; the old split's stages held at most 15 (stage 0: 3 dense + 13 MoE + embedding)
    assert stage_layers(61, 4, "vllm")[2] == range(30, 46) and all(arch.layers[i].is_moe for i in range(30, 46))
    # KV: the heaviest stage holds 16 layers either way (MLA: the same latent every layer)
    assert size_kv_cache(arch, 16, 32768, 1, Parallelism(4, 4, stages="vllm")).per_gpu_bytes == (
        size_kv_cache(arch, 16, 32768, 1, Parallelism(4, 4, stages="first")).per_gpu_bytes
    )
    req = EstimateRequest(model="deepseek-ai/DeepSeek-V3", tp=4, pp=4, gpu="h200-sxm-141gb", context_tokens=32768)
    assert estimate(req)["memory"]["per_gpu"]["weights"] == 46_273_928_960
    # SGLang puts the remainder last: stage 3, 16 MoE layers and the LM head
    sglang = estimate(req._replace(engine="sglang"))["memory"]["per_gpu"]["weights"]
    assert sglang == size_weights(arch, fmt, Parallelism(4, 4, stages="sglang")).per_gpu_bytes > vllm


def test_the_last_stage_never_takes_a_remainder_layer_under_vllm() -> None:
    """The last stage holds the LM head and final norm: vLLM keeps its layer count at the floor ("The last partition is
    excluded because it often contains an additional norm layer")."""
    for layers in range(8, 130):
        for pp in (2, 3, 4, 8):
            if pp <= layers:
                sizes = [len(r) for r in stage_layers(layers, pp, "vllm")]
                assert sizes[-1] == layers // pp
