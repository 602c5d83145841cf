"""acc141: the LoRA kernels' fixed GPU time, counted once a forward pass (:func:`lora_kernels`, ``LoraStep.kernels``).

Sourced, not fitted: vllm-project/vllm#32425 profiled ``_lora_expand_kernel`` at ~14 us, ~10 us after its fix, so
:data:`LORA_KERNEL_SECONDS` is 10 us. Kernel counts, by hand:

- vLLM wraps every linear module whatever the adapter targets, packed as it loads them (``qkv_proj``, ``o_proj``,
  ``gate_up_proj``, ``down_proj``), and launches one shrink and one expand a module over all its slices. Llama 3.1 8B:
  32 layers x 4 modules x 2 = 256 (not 7 x 2 = 448: q/k/v and gate/up are one module each).
- Qwen3-30B-A3B under vLLM (48 layers): qkv 2 + o 2 + the router ``gate`` (a ``ReplicatedLinear``) 2 + the
  ``FusedMoEWithLoRA`` experts 5 (``moe_lora_align_block_size``, shrink + expand for w13 and w2) = 11 a layer, 528.
- SGLang: its target modules only, two a packed module: q/k/v/o -> (qkv, o) x 2 x 32 = 128; q and v alone still run
  the packed ``qkv_proj``: 64.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.lora_serving import LORA_KERNEL_SECONDS, LoraStep, lora_kernels, lora_step
from generator.sizing.performance import accelerator_for, decode_step, prefill_seconds
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights

QKVO = ("q_proj", "k_proj", "v_proj", "o_proj")


@pytest.fixture(scope="module")
def llama8b() -> Architecture:
    return parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)


@pytest.fixture(scope="module")
def qwen3_moe() -> Architecture:
    return parse_architecture(find_model("Qwen/Qwen3-30B-A3B").config)


def test_the_sourced_kernel_time() -> None:
    assert LORA_KERNEL_SECONDS == 10e-6


@pytest.mark.parametrize(
    ("engine", "targets", "expected"),
    [
        ("vllm", ("q_proj",), 256),  # every module wrapped, whatever the targets
        ("vllm", ("all-linear",), 256),
        ("sglang", QKVO, 128),
        ("sglang", ("q_proj", "v_proj"), 64),  # one packed qkv_proj
        ("sglang", ("all-linear",), 256),
        ("sglang", ("down_proj",), 64),
    ],
)
def test_llama_kernels_a_pass(llama8b: Architecture, engine: str, targets: tuple[str, ...], expected: int) -> None:
    assert lora_kernels(llama8b, engine, targets) == expected


def test_moe_kernels_a_pass(qwen3_moe: Architecture) -> None:
    assert lora_kernels(qwen3_moe, "vllm", QKVO) == 48 * (2 + 2 + 2 + 5) == 528
    assert lora_kernels(qwen3_moe, "sglang", QKVO) == 48 * (2 + 2) == 192


@pytest.mark.parametrize(("tp", "pp", "kernels"), [(1, 1, 256), (4, 1, 256), (1, 2, 128), (1, 3, 88)])
def test_a_gpu_launches_its_stage_s_kernels(llama8b: Architecture, tp: int, pp: int, kernels: int) -> None:
    # TP splits the kernels' work, not their number; PP3: the fullest stage holds ceil(32 / 3) = 11 layers, 8 x 11
    step = lora_step(llama8b, engine="vllm", targets=QKVO, max_rank=16, adapters=4, max_loras=4, tp=tp, pp=pp)
    assert step.kernels == kernels


def test_the_fixed_time_is_added_once_a_pass_whatever_its_tokens() -> None:
    step = LoraStep(adapters=1, max_loras=1, slot_bytes=0, flops_per_token=0, activation_bytes_per_token=1, kernels=256)
    # 256 x 10 us = 2.56 ms, plus 1 B a token at 1 GB/s
    assert step.seconds(1, 1, 1e9, 1e15) == pytest.approx(2.56e-3 + 1e-9, rel=1e-12)
    assert step.seconds(64, 64, 1e9, 1e15) == pytest.approx(2.56e-3 + 64e-9, rel=1e-12)
    assert step.seconds(1, 0, 1e9, 1e15) == 0.0  # no token, no pass


def test_a_decode_step_and_a_prompt_pass_each_pay_the_kernels_once(llama8b: Architecture) -> None:
    fmt = weight_format("bf16")
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), fmt.compute, 1)
    weights, consts = size_weights(llama8b, fmt, Parallelism()), Constants()
    step = lora_step(llama8b, engine="vllm", targets=QKVO, max_rank=16, adapters=1, max_loras=1, tp=1)
    floorless = acc._replace(lora=step._replace(kernels=0))
    timed = acc._replace(lora=step)
    for batch in (1, 8, 64):
        with_floor = decode_step(llama8b, weights, 16, Parallelism(), timed, batch, 1100, consts).seconds
        without = decode_step(llama8b, weights, 16, Parallelism(), floorless, batch, 1100, consts).seconds
        assert with_floor - without == pytest.approx(2.56e-3, rel=1e-9)
    # a 20,000-token prompt runs in 3 passes of the 8,192-token chunk: 3 x 2.56 ms
    passes = -(-20_000 // consts.prefill_chunk_tokens)
    with_floor = prefill_seconds(llama8b, Parallelism(), timed, 20_000, consts, weights)
    without = prefill_seconds(llama8b, Parallelism(), floorless, 20_000, consts, weights)
    assert passes == 3
    assert with_floor - without == pytest.approx(3 * 2.56e-3, rel=1e-9)
