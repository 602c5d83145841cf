"""newuser25 item 4: a desktop tower was filled with DIMMs no desktop takes ("2 x 96 GiB DDR5-5600, 1 per channel" on
a Core i9-14900K; unbuffered DDR5 DIMMs stop at 64 GB), and no DIMM count lowered the speed: 192 GiB on a Ryzen 9 7950X
(4 DIMMs, two a channel, which AMD rates at DDR5-3600) was counted at DDR5-5200, 83.2 GB/s instead of 57.6."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import catalog
from generator.catalog.dimms import UDIMM_SIZES_GIB, dimm_sizes_gib
from generator.errors import InputError
from generator.planner.bom import fill_channels
from tests.conftest import REPO
from tests.helpers import estimate_json

TWO = "2 per channel, 2 channels: the rating at 2 a channel"


@pytest.mark.parametrize(
    ("cpu_id", "sockets", "wanted_gib", "max_gib", "text", "mt_per_s"),
    [
        # the newuser25 tower: 192 GiB is 4 x 48 GiB UDIMMs at Intel's 2-DIMM rate, not 2 x 96 GiB at 5600
        ("core-i9-14900k", 1, 192, 192, f"4 x 48 GiB DDR5-4000 UDIMM ({TWO}, DDR5-5600 at 1)", 4000),
        ("ryzen-9-7950x", 1, 150, 192, f"4 x 48 GiB DDR5-3600 UDIMM ({TWO}, DDR5-5200 at 1)", 3600),
        # 128 GiB fits one 64 GiB UDIMM a channel: the full rate
        ("ryzen-9-7950x", 1, 128, 192, "2 x 64 GiB DDR5-5200 UDIMM (1 per channel, 2 channels)", 5200),
        ("core-i9-14900k", 1, 64, 192, "2 x 32 GiB DDR5-5600 UDIMM (1 per channel, 2 channels)", 5600),
        # servers keep their registered DIMMs, unchanged
        ("epyc-9654", 2, 768, None, "24 x 32 GiB DDR5-4800 (1 per channel, 24 channels)", 4800),
        # two a channel on a CPU whose 2-DIMM rating the catalog lacks: said, not guessed
        (
            "xeon-platinum-8480-plus",
            1,
            3000,
            None,
            "16 x 256 GiB DDR5-4800 (2 per channel, 8 channels; DDR5-4800 is the rating at 1 a channel, the catalog "
            "has none at 2)",
            4800,
        ),
    ],
)
def test_fill_channels_uses_the_dimms_and_the_speed_the_cpu_takes(
    cpu_id: str, sockets: int, wanted_gib: int, max_gib: int | None, text: str, mt_per_s: int
) -> None:
    layout = fill_channels(catalog.cpus()[cpu_id], sockets, wanted_gib, max_gib)
    assert (layout.text, layout.mt_per_s) == (text, mt_per_s)


@settings(max_examples=60, deadline=None)
@given(cpu_id=st.sampled_from(["core-i9-14900k", "ryzen-9-7950x"]), wanted_gib=st.integers(1, 400))
def test_a_desktop_is_only_given_udimm_sizes(cpu_id: str, wanted_gib: int) -> None:
    cpu = catalog.cpus()[cpu_id]
    layout = fill_channels(cpu, 1, wanted_gib, 192)
    assert layout.dimm_gib in UDIMM_SIZES_GIB and layout.total_gib <= 192
    two_a_channel = layout.dimms > cpu.memory_channels
    assert layout.mt_per_s == (cpu.ddr_mt_per_s_2dpc if two_a_channel else cpu.ddr_mt_per_s)


def test_desktop_cpus_carry_a_sourced_or_flagged_two_dimm_rate() -> None:
    records = json.loads((REPO / "generator" / "catalog" / "cpus.json").read_text())["cpus"]
    desktops = [r for r in records if r.get("dimm_type") == "udimm"]
    assert {r["id"] for r in desktops} == {
        "core-i5-12600k", "core-i9-13900k", "core-i9-14900k", "ryzen-7-7700x", "ryzen-7-7800x3d", "ryzen-9-7950x",
        "ryzen-9-9950x", "ryzen-9-5950x",
    }  # fmt: skip
    for rec in desktops:
        cpu = catalog.cpus()[rec["id"]]
        assert cpu.dimm_type == "udimm" and max(dimm_sizes_gib(cpu)) == (32 if cpu.ddr_generation == "ddr4" else 64)
        assert rec["ddr_mt_per_s_2dpc"] < rec["ddr_mt_per_s"]
        sourced = rec.get("field_sources", {}).get("ddr_mt_per_s_2dpc", "").startswith("https://")
        assert sourced != ("ddr_mt_per_s_2dpc" in rec.get("unsourced_fields", [])), rec["id"]


ESTIMATE = ("meta-llama/Llama-3.3-70B-Instruct", "--gpu", "rtx-4090-24gb", "--reserved-ram-gib", "12", "--cpu",
            "ryzen-9-7950x", "--precision", "q8_0", "--context", "8192")  # fmt: skip


@pytest.mark.parametrize(
    ("ram_gib", "given", "gb_per_s", "derated"),
    [
        ("192", (), "57.6 GB/s", True),  # 4 DIMMs: AMD's DDR5-3600, 2 x 3600 x 8 B
        ("128", (), "83.2 GB/s", False),  # 2 x 64 GiB: one a channel, DDR5-5200
        ("192", ("--ddr-mt-per-s", "5200"), "83.2 GB/s", False),  # the speed given is the speed counted
    ],
)
def test_the_offload_estimate_counts_the_two_dimm_speed(
    ram_gib: str, given: tuple[str, ...], gb_per_s: str, derated: bool
) -> None:
    data = estimate_json(*ESTIMATE, "--ram-gib", ram_gib, *given)
    assert data["machine"]["bandwidths"].startswith(gb_per_s)
    notes = [f["message"] for f in data["findings"] if f["code"] == "ddr-two-dimms-per-channel"]
    assert bool(notes) is derated
    if derated:
        assert "at 2 DIMMs a channel, DDR-5200 at 1" in data["machine"]["bandwidths"]
        assert notes[0].startswith("192 GiB takes 2 DIMMs a channel")


def test_the_two_dimm_speed_slows_the_offloaded_decode() -> None:
    """The CPU-bound decode reads the RAM layers at the bandwidth: 3600 / 5200 of the speed, within the GPU's share."""
    slow = estimate_json(*ESTIMATE, "--ram-gib", "192")["throughput"]["decode_tokens_per_s"]
    fast = estimate_json(*ESTIMATE, "--ram-gib", "192", "--ddr-mt-per-s", "5200")["throughput"]["decode_tokens_per_s"]
    assert 3600 / 5200 <= slow / fast < 0.85


@pytest.mark.parametrize(
    ("cpu_id", "sockets", "ram_gib", "most_gib"),
    [
        ("ryzen-9-7950x", 1, 257, 256),  # 2 channels x 2 UDIMMs x 64 GiB
        ("core-i9-14900k", 1, 65536, 256),
        ("epyc-9654", 2, 12289, 12288),  # 2 x 12 channels x 2 RDIMMs x 256 GiB
    ],
)
def test_more_ram_than_the_cpus_slots_hold_is_refused(
    tmp_path: Path, cpu_id: str, sockets: int, ram_gib: int, most_gib: int
) -> None:
    """fuzz23 item 4: 65,536 GiB on a Ryzen 9 7950X was planned (its offload counted on RAM no AM5 board holds), with
    an info saying 64 GiB is the largest UDIMM it takes. Refused at the field (--ram-gib alike)."""
    from generator.workload import load_workload

    fixed = f"{{gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: {ram_gib}, cpu: {cpu_id}, cpu_sockets: {sockets}}}"
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: fx\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    inference: {{max_context_tokens: 8192, requests_per_second: 0.2}}\nhardware:\n  fixed: {fixed}\n"
    )
    with pytest.raises(InputError, match=rf"hardware\.fixed\.ram_gib: ram_gib {ram_gib} is more than .* = {most_gib} GiB"):
        load_workload(str(path))
    path.write_text(path.read_text().replace(f"ram_gib: {ram_gib}", f"ram_gib: {most_gib}"))
    load_workload(str(path))  # at the limit: accepted


@pytest.mark.parametrize(("gpu", "count", "most_gib"), [("rtx-4090-24gb", 1, 256), ("h100-sxm5-80gb", 8, 4096)])
def test_more_ram_than_the_assumed_machine_holds_is_refused(gpu: str, count: int, most_gib: int) -> None:
    """newuser29 item 9: --ram-gib 64000 (MB typed as GiB) without a CPU planned a "desktop like i9-14900K" with 63,970
    GiB free; the machine assumed holds what its CPU's slots hold (a desktop's 2 x 2 x 64 GiB UDIMMs; a server's
    8 channels x 2 x 256 GiB RDIMMs of a Xeon Platinum 8480+ socket)."""
    from generator.calculator.machine import FixedSpec, ram_beyond_slots

    said = ram_beyond_slots(FixedSpec(gpu, count, 64000.0), "--ram-gib")
    assert said is not None and said.startswith("--ram-gib 64000 is more than the machine assumed without a CPU (like")
    assert said.endswith(f"= {most_gib:g} GiB; give the CPU, or the RAM in GiB")
    assert ram_beyond_slots(FixedSpec(gpu, count, float(most_gib)), "--ram-gib") is None
