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
from generator.calculator.machine import FixedSpec, build_machine, machine_findings
from generator.planner import plan_workload
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, cpu_weight_seconds
from generator.workload import load_workload
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


#: review80 item 15: each catalog CPU's flag and the page that says it (the 7742's since acc116; the rest fix134)
#: Zen 2, Zen 3 and Skylake-SP (acc132: the calibration rows' CPUs)
WITHOUT_VNNI = {"epyc-7742", "epyc-7773x", "threadripper-pro-5975wx", "ryzen-9-5950x", "xeon-gold-6138"}

VNNI_SOURCES = {
    "https://en.wikipedia.org/wiki/Advanced_Vector_Extensions#AVX-VNNI,_AVX-IFMA": {
        "core-i5-12600k", "core-i9-13900k", "core-i9-14900k",  # Alder / Raptor Lake: AVX-VNNI (no AVX-512)
    },
    "https://en.wikipedia.org/wiki/AVX-512#CPUs_with_AVX-512": {
        "epyc-7742",  # Zen 2: none (false)
        "epyc-7773x", "threadripper-pro-5975wx", "ryzen-9-5950x",  # Zen 3: none (false)
        "xeon-gold-6138",  # Skylake-SP: AVX-512 without VNNI (false)
        "xeon-6-6745p", "xeon-6-6747p", "xeon-6-6776p", "xeon-6-6980p",  # Granite Rapids
        "xeon-platinum-8470", "xeon-platinum-8480-plus", "xeon-platinum-8480c", "xeon-gold-6454s",  # Sapphire Rapids
        "xeon-platinum-8570",  # Emerald Rapids
    },
    "https://docs.amd.com/r/en-US/57404-AOCL-user-guide/8.1.5.-Hardware-Features": {  # 'AVX512_VNNI AMD Zen4+'
        "epyc-9354", "epyc-9454", "epyc-9654", "ryzen-7-7700x", "ryzen-7-7800x3d", "ryzen-9-7950x", "ryzen-9-9950x",
        "threadripper-pro-7965wx", "threadripper-pro-7975wx",
    },
    # Neoverse V2 (Armv9.0-A): SDOT (FEAT_DotProd) and SMMLA (FEAT_I8MM), the one-instruction class the rate stands for
    "https://developer.arm.com/documentation/102375/latest/": {"nvidia-grace"},
}  # fmt: skip


def test_every_catalog_cpu_says_whether_it_has_vnni_and_where_it_is_said() -> None:
    records = {rec["id"]: rec for rec in json.loads((REPO / "generator" / "catalog" / "cpus.json").read_text())["cpus"]}
    said = {cpu_id: url for url, ids in VNNI_SOURCES.items() for cpu_id in ids}
    assert set(said) == set(records) == set(catalog.cpus())
    for cpu_id, rec in records.items():
        assert rec["field_sources"]["int8_vnni"] == said[cpu_id], cpu_id
        assert catalog.cpus()[cpu_id].int8_vnni is (cpu_id not in WITHOUT_VNNI), cpu_id
        assert any(note.startswith(f"int8_vnni {str(rec['int8_vnni']).lower()}") for note in rec["research_notes"]), cpu_id


def test_a_record_that_does_not_say_is_counted_without_vnni(monkeypatch: pytest.MonkeyPatch) -> None:
    unsaid = catalog.cpus()["ryzen-9-7950x"]._replace(int8_vnni=None)
    monkeypatch.setitem(catalog.cpus(), "ryzen-9-7950x", unsaid)
    machine, _, basis = build_machine(FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64, cpu="ryzen-9-7950x"))
    assert not machine.cpu_int8_vnni  # the floor, 6 a core, where it was 20 before (review80 item 15)
    assert "16 cores for llama.cpp's threads, without VNNI's 8-bit dot product" in basis


def test_an_assumed_cpu_says_the_rate_its_cores_are_counted_at() -> None:
    """review80 item 15: a machine with no CPU was counted at the VNNI rate without a word; the assumed CPU (a desktop's
    i9-14900K) has AVX-VNNI, sourced, and the warning says its rate and the other."""
    spec = FixedSpec(gpu="rtx-3090-24gb", gpu_count=1, ram_gib=64)
    machine, _, _ = build_machine(spec)
    assert (machine.cpu_cores, machine.cpu_int8_vnni) == (8, True)
    (message,) = [m for _, code, _, m in machine_findings(spec, Constants()) if code == "ddr-bandwidth-assumed"]
    assert (
        "like Intel Core i9-14900K (Raptor Lake Refresh, desktop LGA1700)) and its 8 cores for llama.cpp's threads, each "
        "multiplying 20 billion weights a second (the rate of a core with VNNI's 8-bit dot product, as it has; one "
        "without it, AMD's Zen 2 / Zen 3 or Intel's Skylake-derived cores (Skylake-SP Xeons, desktops to Comet Lake), 6); "
        "give the CPU"
    ) in message
    # memory given, CPU not: no core is counted (its memory alone), and the info says both rates (offload_report)
    known_memory = spec._replace(memory_channels=2, ddr_mt_per_s=3200)
    machine, _, basis = build_machine(known_memory)
    assert machine.cpu_cores == 0 and "CPU not given: its cores assumed to keep up with the memory" in basis


def test_the_catalog_says_which_cpus_lack_vnni() -> None:
    without = {cpu.id for cpu in catalog.cpus().values() if cpu.int8_vnni is not True}
    # Zen 2, Zen 3 and Skylake-SP (acc132: the calibration rows' CPUs); every other record is a VNNI (or Arm SDOT) part
    assert without == WITHOUT_VNNI
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


def test_an_assumed_cpu_s_core_rates_are_the_workload_s_constants() -> None:
    """review81 item 5: the warning said the defaults (20, and 6 without VNNI) where the workload's ``constants:``
    (12 and 5) were counted; it says the rates the engine counts."""
    plan = plan_workload(load_workload(str(REPO / "tests" / "data" / "review81" / "nocpu_consts.yaml")))
    (message,) = [f.message for f in plan.findings if f.code == "ddr-bandwidth-assumed"]
    assert "each multiplying 12 billion weights a second (the rate of a core with VNNI's 8-bit dot product" in message
    assert "Skylake-derived cores (Skylake-SP Xeons, desktops to Comet Lake), 5); give the CPU" in message
    assert "20 billion" not in message
