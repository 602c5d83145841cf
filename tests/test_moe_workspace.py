"""TensorRT-LLM's gathered MoE rows under attention DP: the bytes its profiling pass holds before the KV cache (acc108).

The expected figures are worked by hand from ``CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes``
(https://github.com/NVIDIA/TensorRT-LLM/blob/000dea273b339cd5074b3e9b03d5c2c1b10171ba/cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu)
for Qwen3-235B-A22B (hidden 4,096, 128 experts of intermediate 1,536, top 8) at 8,192 tokens a rank.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.memory import size_inference
from generator.sizing.moe_workspace import gathered_moe_bytes, moe_intermediate
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism
from generator.units import GIB, MIB
from tests.helpers import estimate_json

QWEN = "Qwen/Qwen3-235B-A22B"


def _arch(model: str = QWEN) -> Architecture:
    return parse_architecture(find_model(model).config)


def test_the_expert_width_is_the_checkpoints() -> None:
    assert moe_intermediate(_arch()) == 1536
    assert _arch().routed_experts == (128, 8)
    assert moe_intermediate(_arch("meta-llama/Llama-3.1-8B-Instruct")) == 0


@pytest.mark.parametrize(
    ("ep", "precision", "expected"),
    [
        # DEP8, FP8 per tensor (1-byte activations): 65,536 rows, 524,288 pairs. Inputs: max(permuted 2 GiB, fc2 bf16
        # 4 GiB, fc1 0.75 GiB) = 4 GiB; outputs: max(glu 2 x 1,536 bf16 3 GiB, fc2 4 GiB) = 4 GiB; indexes 524,288 x 16 B
        # = 8 MiB and 16 local experts x 65,536 rows x 4 B = 4 MiB; the gathered input (1 B) and output (2 B): 768 MiB
        (8, "fp8", 8 * GIB + 780 * MIB),
        # block FP8 runs its GEMMs on bf16 activations: inputs max(4, 4, 1.5) = 4 GiB, outputs the glu's 3 GiB, the
        # gathered input at 2 bytes (1 GiB with the output)
        (8, "fp8-block", 7 * GIB + 12 * MIB + 1 * GIB),
        # DEP4, NVFP4 (half-byte activations): 32,768 rows, 262,144 pairs: 2 GiB + max(glu 1.5, fc2 2) GiB; indexes 4 MiB +
        # 32 local experts x 32,768 x 4 B = 4 MiB; gathered 32,768 x 4,096 x 2.5 B = 320 MiB
        (4, "nvfp4", 4 * GIB + 328 * MIB),
    ],
)
def test_the_gathered_rows_bytes_are_the_runners_formula(ep: int, precision: str, expected: int) -> None:
    assert gathered_moe_bytes(_arch(), Parallelism(tp=1, ep=ep), 8192, weight_format(precision)) == expected


@pytest.mark.parametrize(
    ("model", "par"),
    [
        (QWEN, Parallelism(tp=8)),  # no attention DP: each GPU's MoE runs its own TP slice of the tokens
        (QWEN, Parallelism(tp=8, ep=8)),  # TP8 EP8: one attention group
        ("meta-llama/Llama-3.1-8B-Instruct", Parallelism(tp=1, ep=2)),  # no routed experts
    ],
)
def test_no_gathered_rows_without_attention_dp_over_experts(model: str, par: Parallelism) -> None:
    assert gathered_moe_bytes(_arch(model), par, 8192, weight_format("fp8")) == 0


def test_the_profiling_peak_holds_the_gathered_rows_beside_the_ranks_hidden_tensors() -> None:
    arch, fmt, par = _arch(), weight_format("fp8"), Parallelism(tp=1, ep=8)
    consts = Constants()
    plain = size_inference(arch, fmt, 8, 2000, 64, par, consts, nvlink=True).per_gpu.activations
    gathered = size_inference(arch, fmt, 8, 2000, 64, par, consts._replace(moe_gathered_workspace=1), nvlink=True)
    hidden = 8192 * consts.activation_hidden_copies * arch.hidden_size * 2
    assert gathered.per_gpu.activations == hidden + 8 * GIB + 780 * MIB > plain


def test_the_estimate_of_a_dep_layout_loses_that_kv_and_a_tp_layout_nothing() -> None:
    """At an 8,192-token pass (the context here) the gathered rows outweigh the sampler's logits: the KV cache loses them."""
    dep = (QWEN, "--gpu", "h100-sxm5-80gb", "--tp", "1", "--ep", "8", "--precision", "fp8", "--context", "8192")
    before, after = estimate_json(*dep), estimate_json(*dep, "--set", "moe_gathered_workspace=1")
    lost = before["capacity"]["kv_cache_bytes"] - after["capacity"]["kv_cache_bytes"]
    peak = after["memory"]["per_gpu"]["activations"] - before["memory"]["per_gpu"]["activations"]
    # the pass's peak was the sampler's logits (1,024 rows on an H100); it is now the gathered rows beside the hidden tensors
    assert after["memory"]["per_gpu"]["activations"] == 8192 * 4 * 4096 * 2 + 8 * GIB + 780 * MIB
    assert lost == peak > 0
    tp = (QWEN, "--gpu", "h100-sxm5-80gb", "--tp", "8", "--precision", "fp8", "--context", "8192")
    assert estimate_json(*tp)["capacity"] == estimate_json(*tp, "--set", "moe_gathered_workspace=1")["capacity"]
