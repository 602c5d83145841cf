"""A superchip's GPU reaches host memory over NVLink-C2C, not PCIe: the offload model's host link by GPU."""

from __future__ import annotations

import pytest

from generator import catalog
from generator.calculator.machine import FixedSpec, build_machine, ddr_assumption, host_link
from generator.catalog.records import dram_bandwidth_gb_per_s
from generator.sizing.constants import Constants
from generator.sizing.performance import pcie_gb_per_s


@pytest.mark.parametrize(
    ("gpu", "per_direction_gb_per_s", "name"),
    [
        # NVLink-C2C 900 GB/s bidirectional (GH200 datasheet: one GPU per Grace); a GB200 superchip's 900 GB/s serves
        # its two GPUs, half each (hardware_facts.json)
        pytest.param("gh200-96gb", 450.0, "NVLink-C2C to Grace", id="gh200-96gb"),
        pytest.param("gh200-144gb", 450.0, "NVLink-C2C to Grace", id="gh200-144gb"),
        pytest.param("gb200-186gb", 225.0, "NVLink-C2C to Grace", id="gb200"),
        # a card in a PCIe slot: its PCIe generation x16, 63.0 GB/s each way at Gen5
        pytest.param("h100-pcie-80gb", 63.0, "PCIe Gen5 x16", id="h100-pcie"),
        pytest.param("rtx-4090-24gb", 31.5, "PCIe Gen4 x16", id="rtx-4090"),
    ],
)
def test_the_host_link_is_the_gpus_own(gpu: str, per_direction_gb_per_s: float, name: str) -> None:
    spec = FixedSpec(gpu=gpu, gpu_count=1, ram_gib=480)
    assert host_link(spec, catalog.find_gpu(gpu)) == (per_direction_gb_per_s, name)
    machine, _, basis = build_machine(spec)
    assert machine.pcie_gb_per_s == per_direction_gb_per_s
    assert basis.endswith(f"{name}: {per_direction_gb_per_s:.1f} GB/s per direction")


def test_a_slower_pcie_setting_narrows_a_card_but_not_a_superchips_c2c() -> None:
    assert host_link(FixedSpec("h100-pcie-80gb", 1, 64, pcie_gen=4, pcie_lanes=8), catalog.find_gpu("h100-pcie-80gb")) == (
        pcie_gb_per_s(4, 8),
        "PCIe Gen4 x8",
    )
    gh200 = catalog.find_gpu("gh200-96gb")
    assert host_link(FixedSpec("gh200-96gb", 1, 480, pcie_gen=4, pcie_lanes=8), gh200)[0] == 450.0


def test_a_superchip_assumes_its_grace_memory() -> None:
    spec = FixedSpec(gpu="gh200-96gb", gpu_count=1, ram_gib=480)
    grace = catalog.cpus()["nvidia-grace"]
    machine, _, basis = build_machine(spec)
    assert machine.ddr_gb_per_s == dram_bandwidth_gb_per_s(grace.memory_channels, grace.ddr_mt_per_s) == 512.0
    assert basis.startswith("512.0 GB/s (assumed like NVIDIA Grace")
    warning = ddr_assumption(spec, Constants())
    assert warning is not None and "assumed for a superchip" in warning


def test_offload_on_a_superchip_is_computed_on_grace_and_streaming_is_said_beside() -> None:
    # Llama 3.3 70B bf16 on one GH200 96GB with 480 GiB of Grace memory: 43.8 GiB of weights live in host memory, the
    # 1.96 GiB input embedding among them. llama.cpp multiplies them on the Grace CPU at one stream (its CUDA backend
    # takes host weights only for a batch of 32 tokens or more; newuser68 item 2: this was timed as streamed, 5.66
    # tokens/s), at Grace's 512 GB/s and the 300 GB/s llama.cpp's CPU kernels were measured to consume on x86 servers,
    # with their attention (2026-12-02 calibration): 3.47 tokens/s. Streamed over C2C (450 GB/s x 0.8, not PCIe Gen5
    # x16), vLLM's --cpu-offload-gb way, 5.66, said beside it
    from tests.helpers import estimate_json

    data = estimate_json("meta-llama/Llama-3.3-70B-Instruct", "--gpu", "gh200-96gb", "--precision", "bf16", "--ram-gib", "480")
    offload = data["offload"]
    assert (offload["mode"], offload["bound"]) == ("cpu-compute", "ddr")
    # 3.47 until review80 items 1-2 (no 5% margin beside the offloaded layers: more of them on the GPU)
    assert offload["cpu_compute_tokens_per_s"] == pytest.approx(3.83, abs=0.01)
    assert offload["pcie_stream_tokens_per_s"] == pytest.approx(6.155, abs=0.005)  # 5.66 until review80 items 1-2
    assert data["machine"]["bandwidths"].endswith("NVLink-C2C to Grace: 450.0 GB/s per direction")


def test_pcie_settings_on_a_superchip_are_reported_as_not_applied() -> None:
    from tests.helpers import run_estimate

    setup = ("meta-llama/Llama-3.3-70B-Instruct", "--precision", "bf16", "--gpu", "gh200-96gb", "--ram-gib", "480")
    code, text = run_estimate(*setup, "--pcie-gen", "3")
    assert code == 0
    assert "  machine      512.0 GB/s (assumed like NVIDIA Grace" in text
    assert text.count("NVLink-C2C to Grace: 450.0 GB/s per direction") == 1
    assert (
        "info: gh200-96gb reaches host memory over NVLink-C2C (450 GB/s per direction), not PCIe: the PCIe generation "
        "and lanes given do not apply to offload"
    ) in text
    # without a PCIe setting there is nothing to say; a PCIe card takes the setting without a note
    assert "pcie-not-applied" not in str(run_estimate(*setup, "--json")[1])
    assert (
        "do not apply"
        not in run_estimate("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-pcie-80gb", "--ram-gib", "64", "--pcie-gen", "4")[
            1
        ]
    )


# newuser25 item 12: a desktop CPU gives its GPU slots x16 between them (Intel "1x16+4, 2x8+4"; AM5's 16 graphics lanes)
SLOT_LANES = [
    pytest.param("rtx-5090-32gb", 1, "ryzen-9-7950x", None, "PCIe Gen5 x16", id="am5-one-gpu-x16"),
    pytest.param("rtx-5090-32gb", 2, "ryzen-9-7950x", None, "PCIe Gen5 x8", id="am5-two-gpus-x8-each"),
    pytest.param("rtx-4090-24gb", 2, "core-i9-14900k", None, "PCIe Gen4 x8", id="lga1700-two-gpus-x8-each"),
    pytest.param("rtx-5090-32gb", 2, "ryzen-9-7950x", 16, "PCIe Gen5 x16", id="lanes-given-win"),
    pytest.param("rtx-5090-32gb", 2, "threadripper-pro-7975wx", None, "PCIe Gen5 x16", id="workstation-cpu-x16-each"),
    # newuser85: no CPU named, the desktop whose memory and cores are assumed (Core i9-14900K) gives the slots (x16 until
    # then, beside "assumed like Intel Core i9-14900K"); four GPUs are a server's, x16 each
    pytest.param("rtx-5090-32gb", 2, None, None, "PCIe Gen5 x8", id="no-cpu-named-the-assumed-desktops-x8"),
    pytest.param("rtx-5090-32gb", 4, None, None, "PCIe Gen5 x16", id="no-cpu-named-four-gpus-a-servers-x16"),
    pytest.param("rtx-5090-32gb", 3, "ryzen-9-7950x", None, "PCIe Gen5 x8", id="past-the-listed-counts-the-last"),
]


@pytest.mark.parametrize(("gpu", "gpus", "cpu", "lanes", "name"), SLOT_LANES)
def test_the_host_link_is_as_wide_as_the_cpu_gives_each_slot(
    gpu: str, gpus: int, cpu: str | None, lanes: int | None, name: str
) -> None:
    spec = FixedSpec(gpu=gpu, gpu_count=gpus, ram_gib=128, cpu=cpu, pcie_lanes=lanes)
    card = catalog.find_gpu(gpu)
    width = int(name.rsplit("x", 1)[1])
    assert host_link(spec, card) == (pcie_gb_per_s(card.pcie_gen, width), name)


@pytest.mark.parametrize(
    ("platform", "tp", "per_direction_gb_per_s", "name"),
    [
        pytest.param("am5-desktop-tower", 2, 31.5, "PCIe Gen5 x8", id="am5-tp2-x8"),
        pytest.param("am5-desktop-tower", 1, 63.0, "PCIe Gen5", id="am5-one-gpu-x16"),
        pytest.param("wrx90-workstation", 2, 63.0, "PCIe Gen5", id="threadripper-x16-each"),
    ],
)
def test_a_bought_towers_tp_link_is_its_slots_width(platform: str, tp: int, per_direction_gb_per_s: float, name: str) -> None:
    from generator.sizing.performance import accelerator_for

    fitted = catalog.platforms()[platform].fitted_gpu(catalog.find_gpu("rtx-5090-32gb"))
    assert accelerator_for(fitted, "bf16", tp).link_gb_per_s == per_direction_gb_per_s
    assert fitted.link_name(False, tp) == name


def test_every_cpu_slot_split_has_a_source() -> None:
    import json
    from pathlib import Path

    records = json.loads((Path(catalog.__file__).with_name("cpus.json")).read_text())["cpus"]
    split = [r for r in records if r.get("gpu_slot_lanes")]
    assert {r["id"] for r in split} >= {"ryzen-9-7950x", "core-i9-14900k"}
    for rec in split:
        assert rec["field_sources"]["gpu_slot_lanes"].startswith("https://"), rec["id"]
