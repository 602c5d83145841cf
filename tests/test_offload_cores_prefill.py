"""The CPU's cores in offloaded decode and llama.cpp's prompt passes over the weights held in RAM (newuser38 items 1,
2, 7 and 10).

Hand-computed figures: a CPU layer's weight time is the larger of its bytes over the DRAM rate and its weights over the
cores' rate, plus its bytes over the kernels' ceiling; a prompt pass of at least 32 tokens copies the routed experts
it uses over the host link (pinned with --no-mmap, pageable from a memory-mapped file), a shorter one runs them on the
CPU. The published rows these constants were fitted to are in ``tests/data/calibration.json`` (``offload_decode``,
``offload_prefill``) and their groups' targets in ``tests/test_calibration_memory.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import catalog
from generator.calculator.machine import FixedSpec, build_machine, machine_findings
from generator.catalog import find_model
from generator.errors import InfeasibleError
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import (
    Machine,
    Placement,
    cpu_weight_seconds,
    layer_params,
    offload_cost,
    prefill_host_parts,
)
from generator.sizing.performance import expected_experts_touched
from generator.sizing.precision import weight_format
from generator.sizing.weights import size_weights
from generator.units import GIB
from tests.conftest import calibration_report as _report
from tests.helpers import estimate_json, run_estimate

CONSTS = Constants()
GPT_OSS = "openai/gpt-oss-120b"


def _machine(cores: float, ddr_gb_per_s: float = 100.0, pcie_gb_per_s: float = 25.0) -> Machine:
    return Machine(1, 24 * GIB, 1000.0, 100.0, pcie_gb_per_s, 256 * GIB, 8 * GIB, 0, 0, 3.5, ddr_gb_per_s, cores)


@pytest.mark.parametrize(
    ("read_bytes", "params", "cores", "seconds", "bound"),
    [
        # 9.5 GB at 95 GB/s (100 x 0.95) = 0.1 s, and over the kernels' 300 GB/s 0.031667 s
        (9.5e9, 0.0, 0, 0.1 + 9.5e9 / 300e9, "ddr"),
        # 120 G weights on 6 cores at 20 G a second each: 1.0 s, more than the memory's 0.1
        (9.5e9, 1.2e11, 6, 1.0 + 9.5e9 / 300e9, "cpu-cores"),
        # the same CPU not known: its memory alone
        (9.5e9, 1.2e11, 0, 0.1 + 9.5e9 / 300e9, "ddr"),
        # 64 cores: 1.2e11 / (64 x 20e9) = 0.09375 s, below the memory's 0.1
        (9.5e9, 1.2e11, 64, 0.1 + 9.5e9 / 300e9, "ddr"),
    ],
)
def test_a_cpu_layer_takes_the_slower_of_its_memory_and_its_cores(
    read_bytes: float, params: float, cores: int, seconds: float, bound: str
) -> None:
    got, got_bound = cpu_weight_seconds(read_bytes, params, _machine(cores), CONSTS)
    assert got == pytest.approx(seconds, rel=1e-12)
    assert got_bound == bound


@pytest.mark.parametrize(
    ("cpu_id", "cores"),
    [
        ("core-i5-12600k", 6),  # 6 P-cores + 4 E-cores: llama.cpp's default threads run on the 6 (cpu_get_num_math)
        ("core-i9-13900k", 8),
        ("core-i9-14900k", 8),
        ("ryzen-9-7950x", 16),  # no E-cores: one thread a physical core
        ("ryzen-9-9950x", 16),
        ("ryzen-7-7800x3d", 8),
        ("epyc-9654", 96),
    ],
)
def test_llama_cpp_runs_one_thread_a_p_core(cpu_id: str, cores: int) -> None:
    assert catalog.cpus()[cpu_id].llama_cpp_cores == cores


def test_every_cpu_of_the_published_offload_rows_carries_its_vendor_page() -> None:
    for cpu_id in ("core-i5-12600k", "core-i9-13900k", "ryzen-9-9950x", "ryzen-7-7700x", "ryzen-7-7800x3d"):
        cpu = catalog.cpus()[cpu_id]
        assert cpu.source and all(url.startswith(("https://www.intel.com/", "https://www.amd.com/")) for url in cpu.source)
        assert cpu.threads is not None and cpu.threads >= cpu.cores


@pytest.mark.parametrize(
    ("spec", "cores", "said"),
    [
        (FixedSpec("rtx-4090-24gb", 1, 64, cpu="core-i5-12600k"), 6, "6 P-cores for llama.cpp's threads"),
        (FixedSpec("rtx-4090-24gb", 1, 64, cpu="ryzen-9-7950x"), 16, "16 cores for llama.cpp's threads"),
        # memory given, CPU not: its cores are not counted, and the machine's line says so
        (FixedSpec("rtx-4090-24gb", 1, 64, memory_channels=2, ddr_mt_per_s=6000), 0, "CPU not given"),
        # nothing given: the desktop assumed (the 14900K's memory) with its cores
        (FixedSpec("rtx-4090-24gb", 1, 64), 8, "8 P-cores for llama.cpp's threads"),
    ],
)
def test_the_machine_counts_the_cores_of_the_cpu_named(spec: FixedSpec, cores: int, said: str) -> None:
    machine, _, basis = build_machine(spec)
    assert machine.cpu_cores == cores
    assert said in basis


def test_the_assumed_desktop_says_its_cores_are_assumed_too() -> None:
    said = {code: message for _, code, _, message in machine_findings(FixedSpec("rtx-4090-24gb", 1, 64), Constants())}
    assert "and its 8 cores for llama.cpp's threads" in said["ddr-bandwidth-assumed"]


def _experts_in_ram(arch: Any, fmt_name: str, layers: int) -> Placement:
    sizes = size_weights(arch, weight_format(fmt_name))
    devices = ("gpu:0+experts:cpu",) * layers + ("gpu:0",) * (arch.num_layers - layers)
    experts = sum(sizes.layer_expert_bytes[:layers])
    return Placement(
        fmt_name, 4097, devices, "gpu:0", "gpu:0", gpu_bytes=sizes.total_bytes - experts, cpu_bytes=experts,
        disk_bytes=0, kv_gpu_bytes=0, kv_cpu_bytes=0, per_gpu=(), gpu_budget_bytes=0, ram_used_bytes=0,
        ram_free_bytes=0, steps=(),
    )  # fmt: skip


def test_gpt_oss_multiplies_four_experts_a_layer_by_hand() -> None:
    arch = parse_architecture(find_model(GPT_OSS).config)
    # gate, up and down 2880 x 2880 with their biases, 4 of the 128 experts a token
    assert layer_params(arch)[0][1] == 4 * (3 * 2880 * 2880 + 3 * 2880)


def test_decode_on_one_core_is_its_weights_at_the_cores_rate() -> None:
    """gpt-oss-120b's 36 layers' experts in RAM on one core: 36 x 99,567,360 weights at 20 G a second, plus their bytes
    over the kernels' ceiling and 144 expert calls of 10 us."""
    arch = parse_architecture(find_model(GPT_OSS).config)
    fmt = weight_format("mxfp4")
    placement = _experts_in_ram(arch, "mxfp4", 36)
    cost = offload_cost(arch, fmt, 16, placement, _machine(1), 0, CONSTS)
    read = sum(size_weights(arch, fmt).layer_expert_bytes) * 4 / 128
    assert cost.bound == "cpu-cores"
    assert cost.seconds_per_token["cpu-cores"] == pytest.approx(36 * 99_567_360 / 20e9 + read / 300e9 + 144 * 10e-6)
    # four server slots multiply each weight once a slot: the cores' time four times over (the experts they route to
    # read once)
    four = offload_cost(arch, fmt, 16, placement, _machine(1), 0, CONSTS, streams=4)
    touched = expected_experts_touched(128, 4, 4)
    read_four = sum(size_weights(arch, fmt).layer_expert_bytes) * touched / 128
    calls = 36 * touched * 10e-6
    assert four.seconds_per_token["cpu-cores"] == pytest.approx(4 * 36 * 99_567_360 / 20e9 + read_four / 300e9 + calls)


@pytest.mark.parametrize("memory_mapped", [False, True])
def test_a_prompt_pass_copies_the_experts_it_routes_to_over_the_host_link(memory_mapped: bool) -> None:
    """1,024 tokens at -ub 512: two passes, each the experts 512 tokens route to (1 - (1 - 4/128)^512 of them, all but
    1e-7) over 25 GB/s x 0.8 pinned, x 0.6 of that from a memory-mapped file."""
    arch = parse_architecture(find_model(GPT_OSS).config)
    placement = _experts_in_ram(arch, "mxfp4", 36)
    experts = sum(size_weights(arch, weight_format("mxfp4")).layer_expert_bytes)
    share = 1 - (1 - 4 / 128) ** 512
    rate = 25e9 * 0.8 * (0.6 if memory_mapped else 1.0)
    got = prefill_host_parts(arch, weight_format("mxfp4"), placement, _machine(6), CONSTS, 1024, memory_mapped).seconds
    assert got == pytest.approx(2 * experts * share / rate)


def test_a_pass_shorter_than_32_tokens_runs_the_ram_layers_on_the_cpu() -> None:
    """520 tokens at -ub 512: one pass over the host link, then 8 tokens on the CPU: the experts they route to read
    once (at the slower of 95 GB/s and 8 x 36 x 99,567,360 weights over 6 x 20 G a second) and over the 300 GB/s
    ceiling, and each layer's routed experts called once."""
    arch = parse_architecture(find_model(GPT_OSS).config)
    fmt = weight_format("mxfp4")
    placement = _experts_in_ram(arch, "mxfp4", 36)
    experts = sum(size_weights(arch, fmt).layer_expert_bytes)
    full = experts * (1 - (1 - 4 / 128) ** 512) / (25e9 * 0.8)
    touched = 128 * (1 - (1 - 4 / 128) ** 8)
    in_ram = experts * touched / 128
    cpu = max(in_ram / 95e9, 8 * 36 * 99_567_360 / (6 * 20e9)) + in_ram / 300e9 + 36 * touched * 10e-6
    host = prefill_host_parts(arch, fmt, placement, _machine(6), CONSTS, 520, False)
    assert host.seconds == pytest.approx(full + cpu)
    # review99: the parts (the estimate's prefill_seconds) are the sum's, the full pass's copy first, the CPU's after
    (copy, copy_s), (cpu_bound, cpu_s) = host.parts
    assert copy == "pcie" and cpu_bound in {"cpu-cores", "ddr"}
    assert copy_s == pytest.approx(full) and cpu_s == pytest.approx(cpu) and copy_s + cpu_s == pytest.approx(host.seconds)


DEEPSEEK_HOME = ("deepseek-ai/DeepSeek-V3", "--gpu", "rtx-4090-24gb", "--ram-gib", "512", "--memory-channels", "8",
                 "--ddr-mt-per-s", "4800", "--precision", "q4_k_m", "--context", "16384", "--output-tokens", "500")  # fmt: skip


def test_a_long_prompt_gets_the_largest_ubatch_the_gpus_free_memory_holds() -> None:
    """newuser38 item 7: DeepSeek-V3 with 8,000 prompt tokens on a 4090 at -ub 512 took 16 passes over 360 GiB of
    experts (252 s); -ub 4096 takes 2, and the 4090 holds its compute buffer beside the same layers."""
    from generator.sizing.offload import place, plan_offload

    data = estimate_json(*DEEPSEEK_HOME, "--input-tokens", "8000")
    assert data["throughput"]["ubatch_tokens"] == 4096
    assert "-b 4096 -ub 4096" in data["runtime_settings"]["llama.cpp"]
    arch = parse_architecture(find_model("deepseek-ai/DeepSeek-V3").config)
    fmt = weight_format("q4_k_m")
    machine = build_machine(FixedSpec("rtx-4090-24gb", 1, 512, memory_channels=8, ddr_mt_per_s=4800))[0]
    plan = plan_offload(arch, [fmt], 16, 16384, None, machine, 8000, CONSTS)
    at_512 = place(arch, fmt, 16, 16384, machine, CONSTS)
    assert plan.ubatch_tokens == 4096 and plan.cost.ttft_s == pytest.approx(data["throughput"]["ttft_s"], abs=1e-3)
    assert plan.placement.layer_devices == at_512.layer_devices  # no weight moved off the GPU for it
    default = offload_cost(arch, fmt, 16, at_512, machine, 8000, CONSTS)
    assert plan.cost.decode_tokens_per_s == default.decode_tokens_per_s
    assert plan.cost.ttft_s < default.ttft_s / 5


def test_a_prompt_of_one_pass_keeps_llama_cpps_default_passes() -> None:
    data = estimate_json(*DEEPSEEK_HOME, "--input-tokens", "500")
    assert data["throughput"]["ubatch_tokens"] == 512
    assert " -ub " not in data["runtime_settings"]["llama.cpp"]


def test_a_larger_pass_that_would_push_weights_off_the_gpu_is_not_taken() -> None:
    """A 24 GiB GPU filled to the brim with a dense 70B's layers: the larger compute buffer would move a layer to RAM."""
    from generator.sizing.offload import larger_ubatch, place

    arch = parse_architecture(find_model("meta-llama/Llama-3.3-70B-Instruct").config)
    fmt = weight_format("q4_k_m")
    machine = _machine(16)
    placement = place(arch, fmt, 16, 8192, machine, CONSTS)
    cost = offload_cost(arch, fmt, 16, placement, machine, 8000, CONSTS)
    _, _, ubatch = larger_ubatch(arch, fmt, 16, machine, 8000, CONSTS, (placement, cost))
    for tried in (1024, 2048, 4096):
        try:
            there = place(arch, fmt, 16, 8192, machine, CONSTS._replace(offload_ubatch_tokens=tried))
        except InfeasibleError:  # it does not fit at all
            assert ubatch < tried
            continue
        if there.layer_devices != placement.layer_devices:
            assert ubatch < tried
    # 45 layers on the GPU at 512 tokens a pass, 44 at 1,024, 43 at 2,048 (43 / 43 / 42 under the 5% margin). By hand
    # (review80 item 1, a logit row a token of the pass): 512 more tokens take 512 x 128,256 x 4 B = 250.5 MiB of
    # logits + 512 x 118,784 x 2 B = 116 MiB of activations = 366.5 MiB, more than the 260.8 MiB the 45 layers leave
    assert ubatch == 512


def test_the_estimate_says_the_prompt_its_ttft_is_of_and_the_prefill_rate() -> None:
    """newuser38 item 10: 'TTFT 3.15 s' said no prompt and no prefill rate."""
    code, text = run_estimate(*DEEPSEEK_HOME, "--input-tokens", "8000")
    data = estimate_json(*DEEPSEEK_HOME, "--input-tokens", "8000")
    thr = data["throughput"]
    assert code == 0
    assert thr["ttft_prompt_tokens"] == 8000
    assert thr["prefill_tokens_per_s"] == pytest.approx(8000 / (thr["ttft_s"] - 1 / thr["decode_tokens_per_s"]), rel=2e-3)
    rate = f"{round(thr['prefill_tokens_per_s'], 3):.2f}"
    # fix192: then what bounds the prefill, as the JSON's prefill_bound
    assert f"for 8,000 prompt tokens (prefill {rate} tokens/s at -ub 4096; {thr['prefill_bound']}-bound: " in text
    checklist = {row["item"]: row for row in data["checklist"]}["time to first token"]
    # fix195: the prompt and its -ub said with the prefill's bound, as the speed line says them
    assert (
        f" s for 8,000 prompt tokens (prefill {rate} tokens/s at -ub 4096; {thr['prefill_bound']}-bound: "
        in (checklist["predicted"])
    )


def test_an_unknown_cpu_is_said_to_be_counted_at_its_memory_alone() -> None:
    data = estimate_json(*DEEPSEEK_HOME, "--input-tokens", "500")
    assert "cpu-cores-unknown" in {f["code"] for f in data["findings"]}
    # review80 item 15: both rates said, the one without VNNI's 8-bit dot product beside the one with it
    (said,) = [f["message"] for f in data["findings"] if f["code"] == "cpu-cores-unknown"]
    assert "20 billion weights a second each with VNNI's 8-bit dot product, 6 without it: AMD's Zen 2 / Zen 3" in said
    named = estimate_json(*DEEPSEEK_HOME, "--input-tokens", "500", "--cpu", "epyc-9654")
    assert "cpu-cores-unknown" not in {f["code"] for f in named["findings"]}


def _row(kind: str, **match: Any) -> dict[str, Any]:
    from tests.conftest import REPO

    rows = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())[kind]
    return next(r for r in rows if all(r.get(k) == v for k, v in match.items()))


@pytest.mark.parametrize(
    ("match", "bound"),
    [
        # gpt-oss-120b with 31 layers' experts in RAM on an i5-12600K's 6 P-cores at DDR5-6000: 23.85 measured, 22.85
        # (24.59 before llama.cpp's 62 switches between the GPU and the CPU were counted, accoff entry of 2026-12-04)
        ({"cpu": "core-i5-12600k", "ddr_mt_per_s": 6000}, 0.05),
        # all 36 on an i9-14900K's 8 P-cores (DDR5-5600 assumed): 25.62 measured, 25.52 (28.10 before, 72 switches)
        ({"cpu": "core-i9-14900k"}, 0.12),
        # the same 12600K before its XMP profile, at DDR5-2000: 9.77 measured, 13.87 (its memory ran below 0.95 of it)
        ({"cpu": "core-i5-12600k", "ddr_mt_per_s": 2000, "context_tokens": 0}, 0.50),
    ],
)
def test_the_published_experts_in_ram_decode_rows_within_their_bounds(match: dict[str, Any], bound: float) -> None:
    row = _row("offload_decode", **match)
    assert _report().predict_offload_decode(row) / row["tokens_per_s"] - 1 == pytest.approx(0.0, abs=bound)


@pytest.mark.parametrize(
    ("match", "bound"),
    [
        # ik_llama.cpp's main branch (every expert copied) on a 5975WX + RTX 4080 at -ub 1024 / 2048 / 4096
        ({"engine": "ik_llama.cpp", "ubatch_tokens": 1024}, 0.05),
        ({"engine": "ik_llama.cpp", "ubatch_tokens": 4096}, 0.10),
        # 12,717 tokens at -ub 512, memory-mapped, on an RTX 3090 + i9-14900K: 134.44 measured
        ({"prompt_tokens": 12717}, 0.10),
        # pp512 on an RTX 5090, every layer's experts in RAM: 245.63 measured
        ({"gpu": "rtx-5090-32gb", "cpu_moe_layers": 36}, 0.05),
    ],
)
def test_the_published_prompt_passes_within_their_bounds(match: dict[str, Any], bound: float) -> None:
    row = _row("offload_prefill", **match)
    assert _report().predict_offload_prefill(row) / row["tokens_per_s"] - 1 == pytest.approx(0.0, abs=bound)
