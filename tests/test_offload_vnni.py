"""A CPU without VNNI's 8-bit dot product multiplies a quantized weight at its own rate (acc116).

llama.cpp's quantized dot products (ggml/src/ggml-cpu/arch/x86/quants.c ``mul_sum_us8_pairs_float``) multiply a
32-pair vector of 8-bit values with one ``vpdpbusd`` where the CPU has AVX-VNNI or AVX512-VNNI, else with
``vpmaddubsw`` and ``vpmaddwd`` (signed pairs take two ``vpsignb`` first either way). The cores' rate was fitted on desktops with
VNNI (Alder / Raptor Lake's AVX-VNNI, Zen 4 / 5's AVX512-VNNI); the CPU-only rows on Zen 3 (Threadripper PRO 5975WX,
EPYC 7773X, Ryzen 9 5900X) and Skylake-SP (Xeon Gold 6138) ran well below their memory's rate, bound by those
instructions: Llama-3.1-8B Q4_0 on the 32-core 5975WX read 74 GB/s of 205 (+55% predicted), two Gold 6138 read
45-53 GB/s of 128 (+50% / +78%), their author seeing the memory not saturated.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import catalog
from generator.calculator.machine import FixedSpec, build_machine
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, cpu_weight_seconds
from tests.conftest import REPO
from tests.conftest import calibration_report as _report

#: The calibration rows' CPUs without VNNI (the rows' ``int8_vnni_basis`` gives the source of each family).
NO_VNNI_CPUS = ("5975WX", "7773X", "5900X", "EPYC 7343", "Gold 6138")


def _machine(**kw: Any) -> Machine:
    base = {
        "gpus": 1, "gpu_memory_bytes": 0, "gpu_bandwidth_gb_per_s": 1.0, "gpu_tflops": 1.0, "pcie_gb_per_s": 1.0,
        "ram_bytes": 0, "reserved_ram_bytes": 0, "swap_bytes": 0, "nvme_bytes": 0, "nvme_read_gb_per_s": 1.0,
        "ddr_gb_per_s": 1000.0, "cpu_cores": 10.0,
    }  # fmt: skip
    return Machine(**{**base, **kw})


@pytest.mark.parametrize(
    ("vnni", "seconds", "bound"),
    [
        # 8e9 weights on 10 cores: 20 G a core a second with VNNI (0.04 s), 6 without (0.1333 s), over the 8 GB's
        # DRAM time at 950 GB/s (0.0084 s); the kernels' ceiling (8 GB / 300 GB/s) in series either way
        (True, 8e9 / (10 * 20e9) + 8e9 / 300e9, "cpu-cores"),
        (False, 8e9 / (10 * 6e9) + 8e9 / 300e9, "cpu-cores"),
    ],
)
def test_the_cores_multiply_at_their_dot_products_rate(vnni: bool, seconds: float, bound: str) -> None:
    consts = Constants()
    assert (consts.cpu_core_gparams_per_s, consts.cpu_core_gparams_per_s_without_vnni) == (20.0, 6.0)
    got_seconds, got_bound = cpu_weight_seconds(8e9, 8e9, _machine(cpu_int8_vnni=vnni), consts)
    assert got_seconds == pytest.approx(seconds, rel=1e-12)
    assert got_bound == bound


def test_a_memory_bound_cpu_is_not_moved() -> None:
    # 2 GB at 95 GB/s outlasts 0.5e9 weights on 16 cores at either rate: the dot products do not set the time
    slow_memory = _machine(ddr_gb_per_s=100.0, cpu_cores=16.0)
    with_vnni = cpu_weight_seconds(2e9, 0.5e9, slow_memory, Constants())
    without = cpu_weight_seconds(2e9, 0.5e9, slow_memory._replace(cpu_int8_vnni=False), Constants())
    assert with_vnni == without
    assert with_vnni[1] == "ddr"


def test_the_catalog_says_which_cpus_lack_vnni() -> None:
    without = {cpu.id for cpu in catalog.cpus().values() if cpu.int8_vnni is False}
    assert without == {"epyc-7742"}  # Zen 2; every other record is a VNNI part or does not say
    machine, _, basis = build_machine(FixedSpec(gpu="a100-sxm4-80gb", gpu_count=1, ram_gib=512, cpu="epyc-7742"))
    assert not machine.cpu_int8_vnni
    assert "64 cores for llama.cpp's threads, without VNNI's 8-bit dot product" in basis
    machine, _, basis = build_machine(FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64, cpu="ryzen-9-7950x"))
    assert machine.cpu_int8_vnni and "VNNI" not in basis


def _offload_rows() -> list[dict[str, Any]]:
    data = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())
    rows: list[dict[str, Any]] = data["offload_decode"] + data["offload_prefill"]
    return rows


def test_every_calibration_row_on_a_cpu_without_vnni_says_so() -> None:
    for row in _offload_rows():
        named = any(cpu in row["cpu_as_reported"] for cpu in NO_VNNI_CPUS)
        assert (row.get("int8_vnni") is False) == named, row["cpu_as_reported"]
        if named:
            assert "https://en.wikipedia.org/wiki/AVX-512#CPUs_with_AVX-512" in row["int8_vnni_basis"]


@pytest.mark.parametrize(
    ("match", "measured", "with_vnni", "without"),
    [
        # Llama-3.1-8B Q4_0 on the 32-core 5975WX at an empty context (mainline, ik_llama.cpp): +51% / +55% -> +6% / +9%
        ({"engine": "llama.cpp", "model": "meta-llama/Llama-3.1-8B-Instruct", "context_tokens": 0}, 16.96, 25.68, 17.98),
        ({"engine": "ik_llama.cpp", "model": "meta-llama/Llama-3.1-8B-Instruct", "context_tokens": 0}, 16.54, 25.68, 17.98),
        # two Xeon Gold 6138 under Windows, 20 threads over two sockets (out of sample): +78% / +50% -> +15% / -7%
        ({"model": "Qwen/Qwen3-30B-A3B", "sockets": 2}, 12.90, 22.91, 14.83),
        ({"model": "Qwen/Qwen3-235B-A22B", "sockets": 2}, 2.41, 3.62, 2.24),
        # ik_llama.cpp's DeepSeek-R1 on the 7773X at 32 threads moves away: +6.6% -> -23.4% (memory-bound at 24 and 32)
        ({"model": "deepseek-ai/DeepSeek-R1", "engine": "ik_llama.cpp", "memory_channels": 8}, 4.81, 5.13, 3.68),
    ],
)
def test_each_row_without_vnni_is_timed_at_its_rate(
    match: dict[str, Any], measured: float, with_vnni: float, without: float
) -> None:
    report = _report()
    rows: list[dict[str, Any]] = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["offload_decode"]
    row = next(r for r in rows if all(r.get(k) == v for k, v in match.items()) and r["placement"] == "cpu-only")
    assert row["tokens_per_s"] == measured and row["int8_vnni"] is False
    assert report.predict_offload_decode(row) == pytest.approx(without, abs=0.005)
    assert report.predict_offload_decode({**row, "int8_vnni": True}) == pytest.approx(with_vnni, abs=0.005)
