"""What a machine or server as given cannot physically be (fuzz20 items 2, 5, 6) and where a cloud instance's files go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.calculator.machine import FixedSpec, build_machine, machine_findings
from generator.errors import InputError
from generator.sizing.constants import Constants
from generator.workload import load_workload
from tests.helpers import load_errors

RYZEN = {"gpu": "rtx-4090-24gb", "gpu_count": 1, "ram_gib": 64.0, "cpu": "ryzen-9-7950x"}


def codes(spec: FixedSpec) -> dict[str, str]:
    return {code: field for _, code, field, _ in machine_findings(spec, Constants())}


def ddr_gb_per_s(spec: FixedSpec) -> float:
    return build_machine(spec)[0].ddr_gb_per_s


@pytest.mark.parametrize(
    ("given", "gb_per_s", "warned"),
    [
        # the catalog's 7950X: 2 channels x DDR5-5200 = 83.2 GB/s
        pytest.param({}, 83.2, {}, id="as-catalogued"),
        pytest.param({"memory_channels": 2, "ddr_mt_per_s": 5200}, 83.2, {}, id="its-own-figures"),
        pytest.param({"memory_channels": 1}, 41.6, {}, id="fewer-channels-taken"),
        # fuzz20 item 2: 12 x DDR-12000 decoded at 1,152 GB/s; the channels are the CPU's, the speed counted with a warning
        pytest.param(
            {"memory_channels": 12, "ddr_mt_per_s": 12000},
            192.0,
            {"memory-channels-beyond-cpu": "memory_channels", "ddr-speed-beyond-cpu": "ddr_mt_per_s"},
            id="12ch-ddr12000",
        ),
        pytest.param({"memory_channels": 12}, 83.2, {"memory-channels-beyond-cpu": "memory_channels"}, id="12ch"),
        pytest.param({"ddr_mt_per_s": 6000}, 96.0, {"ddr-speed-beyond-cpu": "ddr_mt_per_s"}, id="expo-6000"),
        # 96 over 8 sockets is 12 a socket: one socket's 2 channels counted
        pytest.param(
            {"memory_channels": 96, "cpu_sockets": 8},
            83.2,
            {"memory-channels-beyond-cpu": "memory_channels"},
            id="96ch-8-sockets",
        ),
    ],
)
def test_memory_beyond_the_named_cpu_is_capped_or_warned(given: dict[str, int], gb_per_s: float, warned: dict[str, str]) -> None:
    spec = FixedSpec(**RYZEN, **given)  # type: ignore[arg-type]
    assert ddr_gb_per_s(spec) == pytest.approx(gb_per_s)
    found = codes(spec)
    assert {c: f for c, f in found.items() if c in ("memory-channels-beyond-cpu", "ddr-speed-beyond-cpu")} == warned


def test_channels_without_a_named_cpu_are_the_users() -> None:
    spec = FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64.0, memory_channels=12, ddr_mt_per_s=4800)
    assert ddr_gb_per_s(spec) == pytest.approx(12 * 4800 * 8 / 1000)
    assert "memory-channels-beyond-cpu" not in codes(spec)


def test_the_warning_names_the_cpus_figures() -> None:
    spec = FixedSpec(**RYZEN, memory_channels=12, ddr_mt_per_s=12000)  # type: ignore[arg-type]
    text = " ".join(m for _, _, _, m in machine_findings(spec, Constants()))
    assert "ryzen-9-7950x has 2 memory channels a socket" in text
    assert "DDR-5200 that ryzen-9-7950x is rated for" in text and "2.31x" in text


def test_the_estimate_counts_the_cpus_channels(capsys: pytest.CaptureFixture[str]) -> None:
    from generator.calculator.cli import main

    args = ["llama-3.3-70b-instruct", "--gpu", "rtx-4090-24gb", "--ram-gib", "64", "--reserved-ram-gib", "12", "--cpu",
            "ryzen-9-7950x", "--precision", "q4_k_m", "--context", "8192", "--memory-channels", "12"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "83.2 GB/s" in out and "2 channels x DDR-5200" in out
    assert "memory_channels 12 is 12 a socket" in out


FIXED = """\
version: 1
name: fx
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {{precision: q4_k_m, max_context_tokens: 8192, requests_per_second: 0.1}}
hardware:
  provider: baremetal
  fixed: {{gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 64, cpu: ryzen-9-7950x{extra}}}
"""


def test_a_fixed_machine_is_warned_at_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "fx.yaml"
    path.write_text(FIXED.format(extra=", memory_channels: 12, ddr_mt_per_s: 12000"), encoding="utf-8")
    _, plan = plan_file(str(path))
    found = {f.code: f.path for f in plan.findings}
    assert found["memory-channels-beyond-cpu"].endswith("memory_channels")
    assert found["ddr-speed-beyond-cpu"].endswith("ddr_mt_per_s")


def test_every_cpu_without_max_sockets_says_why() -> None:
    with open(Path(catalog.__file__).parent / "cpus.json", encoding="utf-8") as fh:
        records = json.load(fh)["cpus"]
    for rec in records:
        if rec.get("max_sockets") is None:
            assert any("max_sockets left out" in n for n in rec.get("research_notes", [])), rec["id"]
        else:
            assert rec["field_sources"]["max_sockets"].startswith("https://"), rec["id"]


CUSTOM = """\
version: 1
name: k
deployments:
  - name: a
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  gpus: [{gpu}]
  provider: baremetal
  inventory:
    - custom: {{gpu: {gpu}, gpus_per_server: {count}, cpu_cores: 64, ram_gib: 512{extra}}}
      count: 1
"""


def custom_errors(tmp_path: Path, gpu: str, count: int, extra: str) -> list[str]:
    path = tmp_path / "k.yaml"
    path.write_text(CUSTOM.format(gpu=gpu, count=count, extra=extra), encoding="utf-8")
    return load_errors(path)


@pytest.mark.parametrize(
    ("gpu", "count", "kind", "wanted"),
    [
        # fuzz20 item 5: planned as TP8 over NVLink in a PCIe server
        pytest.param("h100-sxm5-80gb", 8, "pcie-server", "give kind hgx-8gpu for 8 of them", id="sxm-pcie-server"),
        pytest.param("h100-sxm5-80gb", 8, "workstation", "give kind hgx-8gpu for 8 of them", id="sxm-workstation-8"),
        pytest.param("h100-sxm5-80gb", 2, "pcie-server", "give kind hgx-4gpu or hgx-8gpu", id="sxm-2"),
        pytest.param("mi300x-192gb", 8, "pcie-server", "give kind oam-8gpu", id="oam-pcie-server"),
    ],
)
def test_modules_in_a_slot_server_are_refused_at_kind(tmp_path: Path, gpu: str, count: int, kind: str, wanted: str) -> None:
    errors = custom_errors(tmp_path, gpu, count, f", kind: {kind}")
    assert len(errors) == 1
    assert "custom.kind:" in errors[0] and f"kind {kind} holds PCIe cards" in errors[0] and wanted in errors[0]


@pytest.mark.parametrize(
    ("gpu", "count", "kind"),
    [
        pytest.param("h100-sxm5-80gb", 4, "workstation", id="dgx-station-like"),
        pytest.param("h100-sxm5-80gb", 8, "hgx-8gpu", id="hgx"),
        pytest.param("a40-48gb", 4, "pcie-server", id="pcie-card"),
        pytest.param("rtx-4090-24gb", 2, "workstation", id="tower"),
    ],
)
def test_what_a_kind_can_hold_is_accepted(tmp_path: Path, gpu: str, count: int, kind: str) -> None:
    assert custom_errors(tmp_path, gpu, count, f", kind: {kind}") == []


@pytest.mark.parametrize(
    ("gpu", "kind", "how"),
    [
        pytest.param("rtx-4090-24gb", "pcie-server", "its cards talk over PCIe", id="4090"),
        pytest.param("l40s-48gb", "pcie-server", "its cards talk over PCIe", id="l40s"),
        pytest.param("h100-sxm5-80gb", "hgx-4gpu", "an SXM module, linked by its baseboard's NVLink", id="sxm"),
    ],
)
def test_a_bridge_on_a_card_that_takes_none_is_refused(tmp_path: Path, gpu: str, kind: str, how: str) -> None:
    errors = custom_errors(tmp_path, gpu, 4, f", kind: {kind}, gpu_bridge: true")
    assert len(errors) == 1
    assert "custom.gpu_bridge:" in errors[0] and f"{gpu} takes no NVLink bridge ({how})" in errors[0]
    assert "a40-48gb" in errors[0]  # the cards that take one are named


def test_a_bridge_on_a_card_that_takes_one_is_accepted(tmp_path: Path) -> None:
    assert custom_errors(tmp_path, "a40-48gb", 4, ", gpu_bridge: true") == []


@pytest.mark.parametrize(
    ("gpu", "count", "extra", "field", "message"),
    [
        # fuzz21 item 9: both passed without a word
        pytest.param(
            "a40-48gb", 1, ", gpu_bridge: true", "gpu_bridge", "with gpus_per_server 1 there is none to join",
            id="bridge-one-card",
        ),
        pytest.param(
            "a40-48gb", 4, ", cpu: epyc-9354, cpu_sockets: 8", "cpu_sockets",
            "8 sockets: the AMD EPYC 9354 (Genoa, Zen 4) goes in systems of at most 2 sockets", id="sockets-beyond-the-cpu",
        ),
    ],
)  # fmt: skip
def test_a_custom_server_the_named_parts_cannot_make_is_refused(
    tmp_path: Path, gpu: str, count: int, extra: str, field: str, message: str
) -> None:
    (error,) = [e for e in custom_errors(tmp_path, gpu, count, extra) if f"custom.{field}:" in e]
    assert message in error
    fixed = custom_errors(tmp_path, gpu, count, extra.replace("8", "2").replace("true", "false"))
    assert not [e for e in fixed if f"custom.{field}:" in e]


CLOUD = """\
version: 1
name: g
deployments:
  - name: a
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1}
hardware:
  gpus: [a100-sxm4-40gb]
  provider: gcp
outputs: [terraform, ansible]  # planned only: GKE's node pools would need the cluster (fuzz35 item 6)
"""


def test_a_cloud_instance_without_local_nvme_says_where_the_files_go(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text(CLOUD, encoding="utf-8")
    _, plan = plan_file(str(path))
    assert plan.pools[0].node.platform_id.startswith("gcp-a2-highgpu")
    by_code = {f.code: f for f in plan.findings}
    assert "nvme-short" not in by_code
    storage = by_code["cloud-block-storage"]
    assert storage.level == "info"
    assert "has no local NVMe (instance store)" in storage.message
    assert "boot disk or an attached Persistent Disk / Hyperdisk" in storage.message


@pytest.mark.parametrize(
    ("cpu", "sockets", "gpus", "lanes", "warned"),
    [
        ("ryzen-9-7950x", 1, 2, None, False),  # x8 / x8 from the CPU
        ("ryzen-9-7950x", 1, 3, None, True),  # fuzz23 item 13: 16 GPUs on AM5 took x8 each
        ("ryzen-9-7950x", 1, 16, 1, False),  # the lanes given are the machine's wiring
        ("epyc-9654", 1, 16, None, False),  # 128 lanes: x8 each
        ("xeon-platinum-8480-plus", 1, 16, None, False),  # 80 lanes: x4 or more for up to 20
        ("core-i9-14900k", 1, 4, None, True),
    ],
)
def test_gpus_past_the_cpus_own_slots_are_warned(cpu: str, sockets: int, gpus: int, lanes: int | None, warned: bool) -> None:
    spec = FixedSpec(gpu="rtx-4090-24gb", gpu_count=gpus, ram_gib=64.0, cpu=cpu, cpu_sockets=sockets, pcie_lanes=lanes)
    assert ("gpus-beyond-cpu-slots" in codes(spec)) is warned


@pytest.mark.parametrize(("gpu", "refused"), [("h100-sxm5-80gb", True), ("mi300x-192gb", True), ("rtx-4090-24gb", False)])
def test_a_module_gpu_in_a_desktop_is_refused(tmp_path: Path, gpu: str, refused: bool) -> None:
    """fuzz23 item 7: an H100 SXM in a Ryzen 9 7950X tower was planned (the inventory path refuses it in a workstation)."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: fx\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {max_context_tokens: 8192, requests_per_second: 0.2}\n"
        f"hardware:\n  fixed: {{gpu: {gpu}, gpu_count: 1, ram_gib: 64, cpu: ryzen-9-7950x}}\n"
    )
    if not refused:
        load_workload(str(path))
        return
    with pytest.raises(InputError, match=rf"hardware\.fixed\.gpu: {gpu} is an (SXM|OAM) module on a baseboard"):
        load_workload(str(path))
