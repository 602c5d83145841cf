"""acc139: the LoRA kernels timed in every decode step and prompt pass (:class:`LoraStep`, ``Accelerator.lora``).

Hand-computed figures for Llama 3.1 8B (hidden 4,096, intermediate 14,336, 8 KV heads of 128, 32 layers), vLLM wrapping
all seven linears of a layer, at rank 64. Per layer and token:

- FLOPs ``2 x 64 x (in + out)``: ``in + out`` sums to 81,920 (tests/test_lora_serving.py), so 2 x 64 x 81,920 x 32 =
  335,544,320 FLOPs a token, the same number as one slot's bytes (2 B an element, 2 FLOPs a parameter).
- Activations, elements: the shrink reads ``x`` a slice (q, k, v, gate, up 4,096 each, o 4,096, down 14,336: 38,912),
  writes and the expand reads back its float32 rank buffer (2 + 2 element-widths x 64 a module, 7 modules: 1,792),
  the expand reads and writes ``y`` (2 x (4,096 + 1,024 + 1,024 + 4,096 + 14,336 + 14,336 + 4,096) = 86,016):
  126,720 a layer, 4,055,040 a token, 8,110,080 bytes.
- TP2: column-parallel keep ``in`` and half ``out``, row-parallel (o, down) half ``in`` and whole ``out``: ``x``
  20,480 + 2,048 + 7,168 = 29,696, ``y`` 2 x (2,048 + 512 + 512 + 7,168 + 7,168 + 4,096 + 4,096) = 51,200, buffer 1,792:
  82,688 a layer, 5,292,032 bytes a token; the slot 32 x 64 x 55,296 x 2 = 226,492,416 bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import render_file
from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.lora_serving import LORA_KERNEL_SECONDS, LoraStep, expected_distinct_adapters, lora_step
from generator.sizing.performance import Accelerator, accelerator_for, decode_step, prefill_seconds
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, WeightSizes, size_weights

WORKLOAD = Path(__file__).parent / "data" / "newuser92" / "lora-saas.yaml"
SLOT_R64 = 335_544_320  # 32 x 64 x 81,920 x 2 B
ACTIVATION_R64 = 8_110_080  # 4,055,040 elements x 2 B
KERNELS = 256  # 32 layers x (qkv, o, gate_up, down) x shrink + expand (acc141)


@pytest.fixture(scope="module")
def llama8b() -> Architecture:
    return parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)


@pytest.mark.parametrize(
    ("adapters", "max_loras", "sequences", "expected"),
    [
        (40, 4, 1, 1.0),  # one request: its adapter
        (40, 40, 2, 1.975),  # 40 x (1 - (39/40)^2) = 40 x 79/1,600
        (40, 4, 8, 4.0),  # 40 x (1 - (39/40)^8) = 7.31, capped at the 4 a step may hold
        (1, 4, 256, 1.0),  # one adapter, however many requests
        (40, 40, 0, 0.0),  # no request, no slot read
    ],
)
def test_distinct_adapters_in_a_batch(adapters: int, max_loras: int, sequences: float, expected: float) -> None:
    assert expected_distinct_adapters(adapters, max_loras, sequences) == pytest.approx(expected, rel=1e-12)


def test_distinct_adapters_never_exceed_the_requests_the_adapters_or_the_cap() -> None:
    for adapters in (1, 3, 40, 500):
        for cap in (1, 4, 16):
            last = 0.0
            for batch in range(1, 300, 7):
                got = expected_distinct_adapters(adapters, cap, batch)
                assert last <= got <= min(adapters, cap, batch) + 1e-12
                last = got


@pytest.mark.parametrize(
    ("tp", "pp", "slot", "flops", "activation", "kernels"),
    [
        (1, 1, SLOT_R64, SLOT_R64, ACTIVATION_R64, KERNELS),
        (2, 1, 226_492_416, 226_492_416, 5_292_032, KERNELS),  # TP splits the kernels' work, not their number
        (1, 2, SLOT_R64 // 2, SLOT_R64 // 2, ACTIVATION_R64 // 2, KERNELS // 2),  # a stage of 16 of the 32 layers
    ],
)
def test_the_step_terms_of_one_gpu(
    llama8b: Architecture, tp: int, pp: int, slot: int, flops: int, activation: int, kernels: int
) -> None:
    step = lora_step(llama8b, engine="vllm", targets=("q_proj",), max_rank=64, adapters=40, max_loras=4, tp=tp, pp=pp)
    assert step == LoraStep(40, 4, slot, flops, activation, kernels)


def test_sglang_times_only_the_target_modules(llama8b: Architecture) -> None:
    # q/k/v/o: in + out 26,624 a layer; x 4 x 4,096, y 2 x (4,096 + 1,024 + 1,024 + 4,096), buffer 4 x 4 x 16 a layer
    step = lora_step(
        llama8b, engine="sglang", targets=("q_proj", "k_proj", "v_proj", "o_proj"), max_rank=16, adapters=8, max_loras=8,
        tp=1,
    )  # fmt: skip
    assert step.slot_bytes == 32 * 16 * 26_624 * 2
    assert step.flops_per_token == 2 * 32 * 16 * 26_624
    assert step.activation_bytes_per_token == 32 * (16_384 + 20_480 + 256) * 2


def _replica(arch: Architecture) -> tuple[WeightSizes, Accelerator, Constants]:
    fmt = weight_format("bf16")
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), fmt.compute, 1)
    return size_weights(arch, fmt, Parallelism()), acc, Constants()


def test_a_decode_step_adds_the_distinct_slots_and_the_tokens_activations(llama8b: Architecture) -> None:
    weights, acc, consts = _replica(llama8b)
    step = lora_step(llama8b, engine="vllm", targets=("q_proj",), max_rank=64, adapters=40, max_loras=4, tp=1)
    with_lora = acc._replace(lora=step)
    bandwidth = acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency
    base = decode_step(llama8b, weights, 16, Parallelism(), acc, 8, 1100, consts).seconds
    lora = decode_step(llama8b, weights, 16, Parallelism(), with_lora, 8, 1100, consts).seconds
    # 8 requests of 40 adapters hold 7.31 distinct ones, capped at 4 slots; bytes-bound (2.7 GFLOP is ~5 us)
    floor = KERNELS * LORA_KERNEL_SECONDS  # 2.56 ms a step (acc141)
    assert lora - base == pytest.approx(floor + (4 * SLOT_R64 + 8 * ACTIVATION_R64) / bandwidth, rel=1e-9)
    # one request: its one adapter's slot
    one = decode_step(llama8b, weights, 16, Parallelism(), with_lora, 1, 1100, consts).seconds
    alone = decode_step(llama8b, weights, 16, Parallelism(), acc, 1, 1100, consts).seconds
    assert one - alone == pytest.approx(floor + (SLOT_R64 + ACTIVATION_R64) / bandwidth, rel=1e-9)


def test_a_prompt_pass_runs_its_one_adapter_over_every_token(llama8b: Architecture) -> None:
    weights, acc, consts = _replica(llama8b)
    step = lora_step(llama8b, engine="vllm", targets=("q_proj",), max_rank=64, adapters=40, max_loras=4, tp=1)
    with_lora = acc._replace(lora=step)
    bandwidth = acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency
    base = prefill_seconds(llama8b, Parallelism(), acc, 1000, consts, weights)
    lora = prefill_seconds(llama8b, Parallelism(), with_lora, 1000, consts, weights)
    # one pass of 1,000 tokens (under the 8,192-token chunk): one slot, 1,000 tokens' activations, bytes-bound
    assert lora - base == pytest.approx(KERNELS * LORA_KERNEL_SECONDS + (SLOT_R64 + 1000 * ACTIVATION_R64) / bandwidth, rel=1e-9)


def test_compute_bound_where_the_flops_outlast_the_bytes() -> None:
    step = LoraStep(adapters=1, max_loras=1, slot_bytes=0, flops_per_token=1000, activation_bytes_per_token=1)
    # 10 tokens: 10 bytes at 100 B/s = 0.1 s, 10,000 FLOPs at 1,000 FLOP/s = 10 s
    assert step.seconds(1, 10, 100.0, 1000.0) == 10.0
    assert step.seconds(1, 10, 1.0, 1e9) == 10.0  # 10 bytes at 1 B/s


def test_the_persona_plan_times_the_kernels_and_says_what_it_leaves_out() -> None:
    spec = render_file(str(WORKLOAD))["SPEC.md"]
    # 20.79 req/s a replica without the kernels (the base model's steps), 18.96 with their roofline, 17.61 with their
    # fixed time too (acc141: 256 kernels x 10 us a forward pass)
    assert "one replica sustains 17.61 req/s within the SLOs" in spec
    assert "lora-kernels-timed" in spec
    assert "lora-kernels-roofline" not in spec  # renamed by acc141: the launches are now counted
    assert "for each of the 256 they launch a GPU each forward pass (2.56 ms a decode step" in spec
    assert "33.6% loss was vLLM's removed V0 engine" in spec
    assert "lora-kernels-not-timed" not in spec
    assert "336 MFLOP a token" in spec
    assert "read up to 1,280 MiB of adapter slots a GPU each decode step" in spec
