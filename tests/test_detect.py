"""`specgen detect` on recorded machines (tests/data/detect, see SOURCES.md) and on this machine."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.calculator import detect
from generator.calculator.detect import (
    GpuReading,
    Sources,
    detect_machine,
    fixed_block,
    match_cpu,
    match_gpu,
    recorded,
    this_machine,
)
from generator.calculator.estimate import EstimateRequest, estimate
from generator.calculator.machine import FixedSpec
from generator.workload.schema import workload_schema
from tests.conftest import REPO

FIXTURES = Path(__file__).parent / "data" / "detect"


def fixture(name: str) -> Sources:
    commands = {p.stem: p.read_text() for p in (FIXTURES / name / "commands").glob("*.txt")}
    return Sources(str(FIXTURES / name / "root"), recorded(commands))


@pytest.mark.parametrize(
    ("machine", "expected"),
    [
        pytest.param(
            "desktop-4090",
            {"gpu": "rtx-4090-24gb", "gpu_count": 1, "pcie_gen": 4, "pcie_lanes": 16, "cpu": "core-i9-14900k",
             "ram_gib": 62.6, "swap_gib": 8.0, "nvme_gib": 1863.0, "cpu_sockets": 1, "cores": 24},
            id="desktop-one-gpu",
        ),
        pytest.param(
            "server-8xh100",
            {"gpu": "h100-sxm5-80gb", "gpu_count": 8, "pcie_gen": 5, "pcie_lanes": 16, "cpu": "xeon-platinum-8480-plus",
             "ram_gib": 1007.5, "swap_gib": 0.0, "nvme_gib": 28615.9, "cpu_sockets": 2, "cores": 112,
             "memory_channels": 16, "ddr_mt_per_s": 4800},
            id="two-socket-eight-gpus",
        ),
        pytest.param(
            "no-nvidia-ryzen",
            {"cpu": "ryzen-9-7950x", "ram_gib": 31.1, "swap_gib": 2.0, "cpu_sockets": 1, "cores": 16,
             "memory_channels": 2, "ddr_mt_per_s": 4800},
            id="no-nvidia-tools",
        ),
    ],
)  # fmt: skip
def test_recorded_machines(machine: str, expected: dict[str, Any]) -> None:
    facts = detect_machine(fixture(machine))
    assert {k: facts[k].value for k in expected} == expected
    if machine == "no-nvidia-ryzen":
        assert "gpu" not in facts and "gpu_count" not in facts and "nvme_gib" not in facts
    assert all(f.how.startswith(("measured: ", "assumed: ")) for f in facts.values())


@pytest.mark.parametrize(
    ("smi", "meminfo", "expected", "absent"),
    [
        # a Gen2 slot (old boards, some VMs): the Gen3 link of about its bandwidth, not a value the schema refuses
        pytest.param("0, NVIDIA GeForce RTX 4090, 24564, 2, 16", "MemTotal: 65536000 kB\nMemAvailable: 60000000 kB\n",
                     {"pcie_gen": 3, "pcie_lanes": 8, "ram_gib": 62.5, "reserved_ram_gib": 6}, (), id="gen2-x16"),
        # review 7 L4: a Gen1 x16 link carries what Gen3 x4 does; a Gen2 x2 (no lane count hardware.fixed takes) Gen3 x1
        pytest.param("0, NVIDIA GeForce RTX 4090, 24564, 1, 16", "", {"pcie_gen": 3, "pcie_lanes": 4}, (), id="gen1-x16"),
        pytest.param("0, NVIDIA GeForce RTX 4090, 24564, 2, 2", "", {"pcie_gen": 3, "pcie_lanes": 1}, (), id="gen2-x2"),
        # a container's meminfo: more available than in total, then a total of 1 MB
        pytest.param("0, NVIDIA GeForce RTX 4090, 24564, 4, 16", "MemTotal: 65536000 kB\nMemAvailable: 99999999 kB\n",
                     {"ram_gib": 62.5}, ("reserved_ram_gib",), id="available-above-total"),
        pytest.param("0, NVIDIA GeForce RTX 4090, 24564, 4, 16", "MemTotal: 1000 kB\nMemAvailable: 999999999 kB\n",
                     {}, ("ram_gib", "reserved_ram_gib"), id="no-ram"),
        # fuzz11 item 5: a machine under memory pressure (reserve rounds up to the RAM), more GPUs than hardware.fixed
        # takes: left out, each with a comment saying why
        pytest.param("0, NVIDIA GeForce RTX 4090, 24564, 4, 16", "MemTotal: 16777216 kB\nMemAvailable: 10000 kB\n",
                     {"ram_gib": 16.0}, ("reserved_ram_gib",), id="reserve-reaches-the-ram"),
        pytest.param("\n".join(f"{i}, NVIDIA GeForce RTX 4090, 24564, 4, 16" for i in range(20)), "", {}, ("gpu_count",),
                     id="twenty-gpus"),
        # digits int() refuses, and thousands of them: the row is no reading
        pytest.param("0, NVIDIA GeForce RTX 4090, \u00b2\u00b3, 4, 16", "", {}, ("gpu",), id="superscript-memory"),
        pytest.param("0, NVIDIA GeForce RTX 4090, " + "9" * 5000 + ", 4, 16", "", {}, ("gpu",), id="5000-digits"),
        # fuzz11 item 13: control characters in the name never reach the block's comments
        pytest.param("0, NVIDIA GeForce\x1b[2J RTX 4090\x07, 24564, 4, 16", "", {"gpu": "rtx-4090-24gb"}, (),
                     id="control-characters-in-the-name"),
    ],
)  # fmt: skip
def test_detect_writes_only_values_hardware_fixed_takes(
    tmp_path: Path, smi: str, meminfo: str, expected: dict[str, Any], absent: tuple[str, ...]
) -> None:
    """fuzz10 item 10: detect wrote pcie_gen 2, ram_gib 0.0 and a negative reserve, which estimate --detect then
    blamed on options never given; a superscript digit passed isdigit() and failed int() (a traceback)."""
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "meminfo").write_text(meminfo)
    facts = detect_machine(Sources(str(tmp_path), recorded({"nvidia-smi": smi})))
    assert {k: facts[k].value for k in expected} == expected
    assert not set(absent) & set(facts)
    block = fixed_block(facts)
    assert all(ch.isprintable() or ch == "\n" for ch in block)
    fixed = YAML(typ="safe", pure=True).load(block)["hardware"]["fixed"]
    import jsonschema

    jsonschema.validate({"gpu": "rtx-4090-24gb", "gpu_count": 1, "ram_gib": 64, **(fixed or {})}, fixed_schema())


def fixed_schema() -> dict[str, Any]:
    schema: dict[str, Any] = workload_schema()["properties"]["hardware"]["properties"]["fixed"]
    return schema


@pytest.mark.parametrize("machine", ["desktop-4090", "server-8xh100", "no-nvidia-ryzen"])
def test_block_is_a_valid_hardware_fixed(machine: str) -> None:
    import jsonschema

    text = fixed_block(detect_machine(fixture(machine)))
    block = YAML(typ="safe").load(io.StringIO(text))["hardware"]["fixed"]
    schema = fixed_schema()
    if machine == "no-nvidia-ryzen":
        assert "add gpu:" in text
        block = {"gpu": "rtx-4090-24gb", "gpu_count": 1, **block}  # what the comment asks the user to add
    jsonschema.validate(block, schema)
    assert "# measured: /proc/meminfo MemTotal" in text


def test_detected_desktop_plans_without_assuming_memory() -> None:
    facts = detect_machine(fixture("desktop-4090"))
    spec = FixedSpec(
        gpu=str(facts["gpu"].value), gpu_count=int(str(facts["gpu_count"].value)), ram_gib=float(str(facts["ram_gib"].value)),
        cpu=str(facts["cpu"].value), pcie_gen=4,
    )  # fmt: skip
    result = estimate(EstimateRequest(model="meta-llama/Llama-3.1-70B-Instruct", precision="q4_k_m", fixed=spec))
    assert "Core i9-14900K" in result["machine"]["bandwidths"]
    assert not [f for f in result["findings"] if f["code"] == "ddr-bandwidth-assumed"]


@pytest.mark.parametrize(
    ("gpus", "gpu", "kind", "channels"),
    [
        pytest.param(1, "rtx-4090-24gb", "desktop", "2 channels x DDR-5600", id="desktop"),
        pytest.param(8, "h100-sxm5-80gb", "server", "8 channels x DDR-4800", id="server"),
    ],
)
def test_without_cpu_facts_a_default_machine_is_assumed_with_a_warning(gpus: int, gpu: str, kind: str, channels: str) -> None:
    spec = FixedSpec(gpu=gpu, gpu_count=gpus, ram_gib=64)
    result = estimate(EstimateRequest(model="meta-llama/Llama-3.1-70B-Instruct", precision="q4_k_m", fixed=spec))
    assert channels in result["machine"]["bandwidths"]
    warning = next(f for f in result["findings"] if f["code"] == "ddr-bandwidth-assumed")
    assert f"assumed for a {kind}" in warning["message"] and "memory_channels and ddr_mt_per_s" in warning["message"]


def test_detect_runs_on_this_machine(tmp_path: Path) -> None:
    facts = detect_machine(this_machine())
    assert "ram_gib" in facts  # every Linux machine has /proc/meminfo
    out = tmp_path / "fixed.yaml"
    run = subprocess.run(
        [sys.executable, "-m", "generator", "detect", "-o", str(out)], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert run.returncode == 0, run.stderr
    block = YAML(typ="safe").load(out.read_text())["hardware"]["fixed"]
    assert block["ram_gib"] == facts["ram_gib"].value


@pytest.mark.parametrize("kind", ["cpus", "nics", "drives", "prices"])
def test_catalog_listings_the_error_messages_point_to(kind: str) -> None:
    import json

    from generator import catalog

    run = subprocess.run(
        [sys.executable, "-m", "generator", "catalog", kind, "--json"], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    tables: dict[str, dict[str, Any]] = {
        "cpus": dict(catalog.cpus()), "nics": dict(catalog.nics()), "drives": dict(catalog.drives()),
        "prices": {**catalog.prices(), **catalog.spot_prices()},  # fix134: the spot rates listed beside on-demand
    }  # fmt: skip
    assert [r["id"] for r in rows] == sorted(tables[kind])
    assert all(r["source"] for r in rows)


def dimm(locator: str, bank: str = "BANK 0", size: str = "32 GB") -> str:
    """One SMBIOS type 17 record as ``dmidecode -t memory`` prints it."""
    return (
        f"Handle 0x0040, DMI type 17, 92 bytes\nMemory Device\n\tSize: {size}\n\tLocator: {locator}\n"
        f"\tBank Locator: {bank}\n\tConfigured Memory Speed: 4800 MT/s\n"
    )


# Locator forms as public dmidecode dumps print them:
#   Intel Alder/Raptor Lake client: "Locator: Controller0-ChannelA-DIMM0" / "Bank Locator: BANK 0"
#     (one ChannelA per controller: Controller0 and Controller1 are two channels);
#   AMD desktop: "Locator: DIMM 0" / "Bank Locator: P0 CHANNEL A";
#   servers: "Locator: CPU0_DIMM_A1" (Intel reference boards), "Locator: P1-DIMMA1" / "Bank Locator: Not Specified"
#     (Supermicro), "Locator: DIMM_P0_A0" (Gigabyte EPYC), desktop boards "Locator: DIMM_A1".
@pytest.mark.parametrize(
    ("records", "dimms", "channels"),
    [
        pytest.param([dimm("Controller0-ChannelA-DIMM1"), dimm("Controller1-ChannelA-DIMM1")], 2, 2, id="intel-2-controllers"),
        pytest.param([dimm(f"Controller{c}-ChannelA-DIMM{d}") for c in (0, 1) for d in (0, 1)], 4, 2, id="intel-4-dimms"),
        pytest.param([dimm("Controller0-ChannelA-DIMM0"), dimm("Controller0-ChannelB-DIMM0")], 2, 2, id="intel-a-b"),
        pytest.param([dimm("Controller0-ChannelA-DIMM0"), dimm("Controller0-ChannelA-DIMM1")], 2, 1, id="intel-same-channel"),
        pytest.param([dimm("DIMM 0", "P0 CHANNEL A"), dimm("DIMM 1", "P0 CHANNEL A")], 2, 1, id="amd-one-channel"),
        pytest.param([dimm("DIMM 0", "P0 CHANNEL A"), dimm("DIMM 0", "P0 CHANNEL B")], 2, 2, id="amd-two-channels"),
        pytest.param([dimm("DIMM_A1"), dimm("DIMM_B1"), dimm("DIMM_A2")], 3, 2, id="board-letters"),
        pytest.param([dimm(f"CPU{s}_DIMM_{c}1") for s in (0, 1) for c in "ABCD"], 8, 8, id="server-cpu-letter"),
        pytest.param([dimm(f"P{s}-DIMM{c}1", "Not Specified") for s in (1, 2) for c in "AB"], 4, 4, id="supermicro"),
        pytest.param([dimm(f"DIMM_P{s}_{c}0") for s in (0, 1) for c in "AB"], 4, 4, id="gigabyte-epyc"),
        pytest.param([dimm("Controller0-ChannelA-DIMM0", size="No Module Installed"), dimm("Controller1-ChannelA-DIMM1")],
                     1, 1, id="empty-slot-ignored"),
        pytest.param([dimm("DIMM 1"), dimm("DIMM 2"), dimm("DIMM 3")], 3, 3, id="no-channel-names"),
        # fuzz17 item 3: Supermicro's Intel boards name each socket's two controllers "Node" (X11: DDR4, 2 x 3 channels
        # a socket, 'P1-DIMMD1' / 'P0_Node1_Channel0_Dimm0'): 12 channels, not the 6 (socket, channel) pairs
        pytest.param([dimm(f"P{s + 1}-DIMM{'ABCDEF'[3 * n + c]}1", f"P{s}_Node{n}_Channel{c}_Dimm0")
                      for s in (0, 1) for n in (0, 1) for c in (0, 1, 2)], 12, 12, id="supermicro-x11-node"),
    ],
)  # fmt: skip
def test_dmidecode_channels_count_controller_and_channel(records: list[str], dimms: int, channels: int) -> None:
    from generator.calculator.detect import parse_dmidecode

    reading = parse_dmidecode("\n".join(records))
    assert reading is not None
    assert (reading.dimms, reading.channels) == (dimms, channels)


def test_intel_client_fixture_has_two_channels_and_names_the_mixed_gpus() -> None:
    facts = detect_machine(fixture("desktop-intel-mixed-gpus"))
    assert (facts["memory_channels"].value, facts["ddr_mt_per_s"].value) == (2, 5200)
    assert (facts["gpu"].value, facts["gpu_count"].value) == ("rtx-4090-24gb", 2)
    assert facts["mixed_gpus"].value == "2 x NVIDIA GeForce RTX 4090, 24564 MiB; 1 x NVIDIA GeForce RTX 3090, 24576 MiB"
    assert facts["pcie_lanes"].value == 8  # the narrowest link of the GPUs described (the two RTX 4090s)
    text = fixed_block(facts)
    assert "# mixed GPUs: nvidia-smi lists 2 x NVIDIA GeForce RTX 4090" in text
    assert "the other 1 GPU(s) are left out" in text


@pytest.mark.parametrize(
    ("which", "euid", "why"),
    [
        pytest.param(None, 0, "dmidecode not installed", id="root-not-installed"),
        pytest.param(None, 1000, "dmidecode not installed", id="user-not-installed"),
        pytest.param("/usr/sbin/dmidecode", 1000, "dmidecode needs root: run with sudo", id="user-installed"),
        pytest.param("/usr/sbin/dmidecode", 0, "dmidecode ran as root but failed", id="root-installed"),
    ],
)
def test_dmidecode_missing_is_told_from_needing_root(
    monkeypatch: pytest.MonkeyPatch, which: str | None, euid: int, why: str
) -> None:
    from generator.calculator import detect

    monkeypatch.setattr("shutil.which", lambda name: which)
    monkeypatch.setattr("os.geteuid", lambda: euid)
    facts = detect_machine(Sources(str(FIXTURES / "desktop-4090" / "root"), lambda argv: None, detect.command_failure))
    assert "memory_channels" not in facts
    assert str(facts["dimms_unread"].value).startswith(why)
    desktop = detect_machine(fixture("desktop-4090"))
    assert "cpu" in desktop  # the CPU is known, so the note is not needed there
    no_cpu = {k: v for k, v in facts.items() if k != "cpu"}
    assert f"DIMMs unreadable ({why}" in fixed_block(no_cpu)


@pytest.mark.parametrize(
    ("name", "mib", "gpu_id"),
    [
        # the three RTX PRO 6000 editions share every word but Max-Q / Server and report the same memory
        pytest.param("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887, "rtx-pro-6000-ws-96gb", id="pro-ws"),
        pytest.param("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 97887, "rtx-pro-6000-max-q-96gb", id="pro-max-q"),
        pytest.param("NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887, "rtx-pro-6000-blackwell-96gb", id="pro-server"),
        # nvidia-smi names the 96 GB GH200 by its module memory (480 GB of Grace LPDDR5X)
        pytest.param("NVIDIA GH200 480GB", 97871, "gh200-96gb", id="gh200-96"),
        pytest.param("NVIDIA GH200 144G HBM3e", 146000, "gh200-144gb", id="gh200-144"),
    ],
)
def test_nvidia_smi_names_of_the_new_editions(name: str, mib: int, gpu_id: str) -> None:
    assert match_gpu(GpuReading(name, mib, 5, 16))[0] == gpu_id


# fuzz17 items 1-4: the machines of tests/data/detect/SOURCES.md ("Machines of the fuzz17 report")
@pytest.mark.parametrize(
    ("machine", "expected", "absent"),
    [
        # item 1: "... Gold 6248 CPU @ 2.50GHz" was Grace (the catalog name's last word "CPU"); item 2: a 16 GB V100 was the
        # 32 GB one
        pytest.param("xeon-gold-6248-4xv100", {"gpu_count": 4, "cpu_sockets": 2, "cores": 8}, ("cpu", "gpu"),
                     id="pre-spr-xeon-16gb-v100"),
        # item 1: an arm64 cpuinfo has no model name; "unknown CPU" was Grace
        pytest.param("altra-80-core", {"cpu_model": "Arm Neoverse-N1 (CPU implementer 0x41, part 0xd0c)", "cpu_sockets": 1,
                                       "cores": 80}, ("cpu",), id="ampere-altra"),
        pytest.param("grace-gh200", {"cpu": "nvidia-grace", "gpu": "gh200-96gb", "cpu_sockets": 1,
                                     "cpu_model": "Arm Neoverse-V2 (CPU implementer 0x41, part 0xd4f)"}, (), id="grace"),
        # item 3: P0_Node0_Channel0 and P0_Node1_Channel0 are two channels: 2 sockets x 2 controllers x 4
        pytest.param("x13deg-2x8462y", {"memory_channels": 16, "ddr_mt_per_s": 4800, "cpu_sockets": 2}, ("cpu",),
                     id="supermicro-x13deg"),
        # item 4: 8 physical ids, one NUMA node
        pytest.param("vm-8vcpu-7950x", {"cpu": "ryzen-9-7950x", "cpu_sockets": 1, "gpu": "rtx-3090-24gb"}, (),
                     id="vm-one-socket-per-vcpu"),
    ],
)  # fmt: skip
def test_fuzz17_machines(machine: str, expected: dict[str, Any], absent: tuple[str, ...]) -> None:
    import jsonschema

    facts = detect_machine(fixture(machine))
    assert {k: facts[k].value for k in expected} == expected
    assert not set(absent) & set(facts)
    text = fixed_block(facts)
    block = YAML(typ="safe").load(io.StringIO(text))["hardware"]["fixed"]
    jsonschema.validate({"gpu": "rtx-4090-24gb", "gpu_count": 1, "ram_gib": 64, **block}, fixed_schema())
    # no catalog CPU and no DIMMs read: the block still asks for them
    assert ("add cpu: or memory_channels:" in text) == ("cpu" not in facts and "memory_channels" not in facts)


@pytest.mark.parametrize(
    "model",
    [
        pytest.param("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", id="cascade-lake"),
        pytest.param("Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz", id="coffee-lake"),
        pytest.param("Intel(R) Xeon(R) CPU E5-2690 v4 @ 2.60GHz", id="broadwell"),
        pytest.param("Intel(R) Xeon(R) CPU @ 2.20GHz", id="cloud-vm"),  # GCP / AWS instances hide the model number
        pytest.param("QEMU Virtual CPU version 2.5+", id="qemu"),
        pytest.param("unknown CPU", id="no-model-name"),
    ],
)
def test_a_generic_word_is_no_model_number(model: str) -> None:
    """fuzz17 item 1: every name with the word "CPU" matched nvidia-grace ("NVIDIA Grace CPU (in GH200 ...)")."""
    assert match_cpu(model) is None


GRACE_CPUINFO = FIXTURES / "grace-gh200" / "root" / "proc" / "cpuinfo"


@pytest.mark.parametrize(
    ("soc_id", "smi", "cpu", "how"),
    [
        pytest.param("jep106:036b:0241\n", "", "nvidia-grace",
                     "measured: /sys/devices/soc0/soc_id 'jep106:036b:0241' (Neoverse-V2 cores)", id="grace-soc-id"),
        pytest.param(None, "0, NVIDIA GH200 480GB, 97871, 5, 16", "nvidia-grace",
                     "measured: Neoverse-V2 cores (/proc/cpuinfo) beside gh200-96gb, which the catalog pairs with "
                     "nvidia-grace alone", id="beside-a-gh200"),
        # AWS Graviton4 and Google Axion are Neoverse-V2 too: the cores alone are no Grace
        pytest.param(None, "", None, "", id="neoverse-v2-alone"),
        pytest.param(None, "0, NVIDIA H100 PCIe, 81559, 5, 16", None, "", id="neoverse-v2-with-a-pcie-gpu"),
    ],
)  # fmt: skip
def test_grace_is_told_by_its_soc_or_its_superchip_gpu(
    tmp_path: Path, soc_id: str | None, smi: str, cpu: str | None, how: str
) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(GRACE_CPUINFO.read_text())
    if soc_id is not None:
        (tmp_path / "sys" / "devices" / "soc0").mkdir(parents=True)
        (tmp_path / "sys" / "devices" / "soc0" / "soc_id").write_text(soc_id)
    facts = detect_machine(Sources(str(tmp_path), recorded({"nvidia-smi": smi} if smi else {})))
    if cpu is None:
        assert "cpu" not in facts
    else:
        assert (facts["cpu"].value, facts["cpu"].how) == (cpu, how)
    assert facts["cpu_model"].value == "Arm Neoverse-V2 (CPU implementer 0x41, part 0xd4f)"


@pytest.mark.parametrize(
    ("name", "mib"),
    [
        pytest.param("Tesla V100-SXM2-16GB", 16384, id="v100-sxm2-16gb"),  # the catalog has the 32 GB SXM2
        pytest.param("Tesla V100-PCIE-32GB", 32768, id="v100-pcie-32gb"),  # ... and the 16 GB PCIe
        pytest.param("Quadro RTX 6000", 24576, id="quadro-rtx-6000"),  # Turing, 24 GB: no RTX 6000 Ada
        pytest.param("Quadro RTX 6000", 49140, id="quadro-rtx-6000-at-48gb"),  # no 'Ada': refused whatever the memory
        pytest.param("NVIDIA A800-SXM4-80GB", 81920, id="a800"),  # 'sxm4' is no model number: no A100
    ],
)
def test_gpu_of_another_memory_or_generation_is_not_written(name: str, mib: int) -> None:
    """fuzz17 item 2: the name's words matched and the memory nvidia-smi read was never compared."""
    gpu_id, how = match_gpu(GpuReading(name, mib, 3, 16))
    assert gpu_id is None
    assert how.startswith(f"assumed: nvidia-smi '{name}', {mib} MiB is not in the GPU catalog")


@pytest.mark.parametrize(
    ("name", "mib", "other_mib", "gpu_id"),
    [
        pytest.param("Tesla V100-SXM2-32GB", 32768, 16384, "v100-sxm2-32gb", id="v100-sxm2"),
        pytest.param("Tesla V100-PCIE-16GB", 16384, 32768, "v100-pcie-16gb", id="v100-pcie"),
        # GDDR with ECC on reads 15/16 of it (the catalog's 49140 MiB is with ECC off): 46068 is the same card
        pytest.param("NVIDIA RTX 6000 Ada Generation", 46068, 24576, "rtx-6000-ada-48gb", id="rtx-6000-ada-ecc-on"),
        # the catalog's T4 (15360 MiB) is with ECC on; a T4 with it off reads 16384, under driver 418 15079
        pytest.param("Tesla T4", 16384, 8192, "t4-16gb", id="t4-ecc-off"),
        pytest.param("Tesla T4", 15079, 32768, "t4-16gb", id="t4-driver-418"),
        # no usable MiB in the catalog: 144 GB anywhere from GB to GiB (137,329 to 147,456 MiB, 160,429 with ECC and
        # slack); no catalog GH200 has 170,000 MiB
        pytest.param("NVIDIA GH200 144G HBM3e", 146000, 170000, "gh200-144gb", id="gh200-144-from-memory-gb"),
    ],
)
def test_gpu_memory_decides_between_reading_and_catalog(name: str, mib: int, other_mib: int, gpu_id: str) -> None:
    assert match_gpu(GpuReading(name, mib, 3, 16))[0] == gpu_id
    assert match_gpu(GpuReading(name, other_mib, 3, 16))[0] is None


def test_unmatched_gpu_says_why_in_the_block() -> None:
    text = fixed_block(detect_machine(fixture("xeon-gold-6248-4xv100")))
    assert (
        "# gpu not written: assumed: nvidia-smi 'Tesla V100-SXM2-16GB', 16384 MiB is not in the GPU catalog (its name "
        "matches, its memory does not: v100-sxm2-32gb has 32768 MiB); give gpu: (see 'specgen catalog gpus')"
    ) in text
    assert "no GPU detected" not in text


def _cpuinfo(physical_ids: int, cpus: int) -> str:
    """x86 /proc/cpuinfo of ``cpus`` processors over ``physical_ids`` sockets (none listed where 0, as on arm64)."""
    rows = []
    for i in range(cpus):
        socket = f"physical id\t: {i * physical_ids // cpus}\ncore id\t\t: {i}\n" if physical_ids else ""
        rows.append(f"processor\t: {i}\nmodel name\t: AMD EPYC 9654 96-Core Processor\n{socket}")
    return "\n".join(rows)


NODES = "/sys/devices/system/node"


@pytest.mark.parametrize(
    ("physical_ids", "node_cpus", "sockets", "how"),
    [
        # fuzz17 item 4: a hypervisor's socket per vCPU, one NUMA node
        pytest.param(8, ["0-7"], 1, f"measured: 1 NUMA node(s) with CPUs ({NODES}), fewer than its 8 physical id(s) "
                     "(/proc/cpuinfo)", id="vm-socket-per-vcpu"),
        # a socket split into NUMA nodes (NPS4 / SNC4) stays one socket
        pytest.param(2, ["0-1", "2-3", "4-5", "6-7", "8-9", "10-11", "12-13", "14-15"], 2,
                     f"measured: 2 physical id(s) (/proc/cpuinfo); 8 NUMA node(s) with CPUs ({NODES})", id="nps4"),
        pytest.param(2, ["0-7", "8-15"], 2, f"measured: 2 physical id(s) (/proc/cpuinfo); 2 NUMA node(s) with CPUs ({NODES})",
                     id="two-sockets"),
        # arm64 lists no physical id: a Grace CPU Superchip is two NUMA nodes; a GH200's HBM node holds no CPU
        pytest.param(0, ["0-71", "72-143"], 2, f"measured: 2 NUMA node(s) with CPUs ({NODES}); /proc/cpuinfo lists no "
                     "physical id", id="grace-superchip"),
        pytest.param(0, ["0-71", ""], 1, f"measured: 1 NUMA node(s) with CPUs ({NODES}); /proc/cpuinfo lists no physical id",
                     id="gh200-hbm-node"),
        pytest.param(1, [], 1, f"measured: 1 physical id(s) (/proc/cpuinfo); no NUMA node in {NODES}", id="no-numa-folder"),
        pytest.param(0, [], 1, f"assumed: /proc/cpuinfo lists no physical id, {NODES} no NUMA node", id="neither"),
    ],
)  # fmt: skip
def test_sockets_are_the_fewer_of_physical_ids_and_numa_nodes(
    tmp_path: Path, physical_ids: int, node_cpus: list[str], sockets: int, how: str
) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(_cpuinfo(physical_ids, 16))
    for n, cpus in enumerate(node_cpus):
        node = tmp_path / NODES.lstrip("/") / f"node{n}"
        node.mkdir(parents=True)
        (node / "cpulist").write_text(cpus + "\n")
    fact = detect_machine(Sources(str(tmp_path), recorded({})))["cpu_sockets"]
    assert (fact.value, fact.how) == (sockets, how)


def test_a_four_socket_machines_channels_are_written_as_read() -> None:
    """fuzz18 item 5: 32 channels (4 sockets x 8) were written as 24, the schema's old maximum, still "measured"; with
    cpu_sockets 4 that is 6 channels a socket, 25% under the machine's bandwidth. The schema takes 8 sockets of 12."""
    from generator.calculator import detect

    records = "\n".join(dimm(f"CPU{s}_DIMM_{c}1") for s in range(4) for c in "ABCDEFGH")
    root = FIXTURES / "desktop-4090" / "root"
    facts = detect_machine(
        Sources(str(root), lambda argv: records if argv[0].endswith("dmidecode") else None, detect.command_failure)
    )
    assert facts["memory_channels"].value == 32
    assert "memory_channels: 32" in fixed_block(facts)


@pytest.mark.parametrize(
    "row",
    [
        pytest.param("0, NVIDIA H100 80GB HBM3, 81559 MiB, 5, 16", id="unit"),
        pytest.param("0, NVIDIA H100 80GB HBM3, 81559.5, 5, 16", id="float"),
        pytest.param("0, NVIDIA H100, 80GB HBM3, 81559, 5, 16", id="comma-in-name"),
    ],
)
def test_rows_nvidia_smi_printed_but_specgen_cannot_read_are_said(
    tmp_path: Path, row: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """review70 item 5: such a row was skipped unsaid and the machine said to have no GPU, "nvidia-smi missing"."""
    facts = detect_machine(Sources(str(tmp_path), recorded({"nvidia-smi": f"{row}\n"})))
    assert "gpu" not in facts
    said = f"nvidia-smi printed 1 line(s) specgen could not read as {detect.SMI_COLUMNS}: '{row}'"
    block = fixed_block(facts)
    assert f"# gpu not written: {said}; add gpu: and gpu_count: before using it" in block
    assert "nvidia-smi missing" not in block
    # read beside a row it can read: the one left out is said
    both = detect_machine(Sources(str(tmp_path), recorded({"nvidia-smi": f"0, NVIDIA H100 80GB HBM3, 81559, 5, 16\n{row}\n"})))
    assert both["gpu"].value == "h100-sxm5-80gb" and "# GPUs left out: nvidia-smi printed 1 line(s)" in fixed_block(both)
    # a header line is no unread row
    header = "index, name, memory.total [MiB], pcie.link.gen.max, pcie.link.width.max\n0, NVIDIA H100 80GB HBM3, 81559, 5, 16\n"
    assert "gpu_unread" not in detect_machine(Sources(str(tmp_path), recorded({"nvidia-smi": header})))


def test_estimate_detect_says_which_row_it_could_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.calculator.cli import main as estimate_main

    row = "0, NVIDIA H100 80GB HBM3, 81559 MiB, 5, 16"
    monkeypatch.setattr(detect, "this_machine", lambda: Sources(str(tmp_path), recorded({"nvidia-smi": row})))
    monkeypatch.setattr(detect, "parse_meminfo", lambda text: {"MemTotal": 64 * 2**30, "MemAvailable": 60 * 2**30})
    assert estimate_main(["meta-llama/Llama-3.1-8B-Instruct", "--detect"]) == 2
    err = capsys.readouterr().err
    assert "usage:" not in err  # hostile79 item 11: the one line, not the usage before it
    assert f"--detect found no GPU: nvidia-smi printed 1 line(s) specgen could not read as {detect.SMI_COLUMNS}: '{row}'" in err


def test_the_reserve_detected_is_a_whole_gib_so_that_two_runs_agree(tmp_path: Path) -> None:
    """review70 item 19: 1.3 then 1.4 GiB two seconds apart churned a committed hardware.fixed block."""
    reserves = set()
    for available_kb in (60_000_000, 60_100_000):  # 5.28 and 5.18 GiB in use
        meminfo = f"MemTotal: 65536000 kB\nMemAvailable: {available_kb} kB\n"
        (tmp_path / "proc").mkdir(exist_ok=True)
        (tmp_path / "proc" / "meminfo").write_text(meminfo)
        fact = detect_machine(Sources(str(tmp_path), recorded({})))["reserved_ram_gib"]
        reserves.add(fact.value)
        assert "stop a model server first" in fact.how
    assert reserves == {6}


def test_estimate_detect_says_the_gpus_and_reserve_it_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """review70 items 14 and 19: an H100 beside two RTX 4090 was left out unsaid, and the reserve taken unsaid."""
    import json

    from generator.calculator.cli import main as estimate_main

    rows = "0, NVIDIA H100 80GB HBM3, 81559, 5, 16\n" + "".join(f"{i}, NVIDIA GeForce RTX 4090, 24564, 4, 16\n" for i in (1, 2))
    monkeypatch.setattr(detect, "this_machine", lambda: Sources(str(tmp_path), recorded({"nvidia-smi": rows})))
    monkeypatch.setattr(detect, "parse_meminfo", lambda text: {"MemTotal": 64 * 2**30, "MemAvailable": 60 * 2**30})
    assert estimate_main(["meta-llama/Llama-3.1-8B-Instruct", "--detect", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("--detect: nvidia-smi lists 1 x NVIDIA H100 80GB HBM3, 81559 MiB; 2 x NVIDIA GeForce") for n in notes)
    assert "--detect took --reserved-ram-gib 4, the RAM in use now: a model server running now is counted" in " ".join(notes)
