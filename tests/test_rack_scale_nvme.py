"""The catalog's ``nvme`` figures are per host: a rack-scale system must say so, and the planner multiplies by hosts.

By hand for a GB200 NVL72 record (18 compute-tray hosts) given 8 x 3.84 TB drives per host: 8 x 18 = 144 drives,
30.72 x 18 = 552.96 TB in the system; 4 per host is 72 drives, 15.36 x 18 = 276.48 TB.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.calculator.report import plan_text
from generator.catalog.records import PlatformSpec
from generator.planner import plan_workload
from generator.planner.nodes import NodeNeeds, assemble_node
from generator.planner.plan import Finding
from generator.render import render_plan
from generator.render.hosts import host_node
from generator.sizing.constants import Constants
from generator.units import TB
from generator.workload import load_workload
from tests.conftest import catalog_json
from tests.helpers import ansible_reader

GB200 = "gb200-nvl72"
DRIVE = "generic-nvme-u2-gen4-3-84tb"


def _gb200(nvme: dict[str, Any] | None) -> dict[str, Any]:
    (rec,) = [p for p in catalog_json("platforms")["platforms"] if p["id"] == GB200]
    out: dict[str, Any] = copy.deepcopy(rec)
    out["nvme"] = nvme
    return out


@pytest.mark.parametrize(
    ("nvme", "drives", "total_tb"),
    [
        pytest.param({"drive_id": DRIVE, "count": 8, "total_tb": 30.72, "per": "host"}, 144, 552.96, id="8-per-host"),
        pytest.param({"drive_id": DRIVE, "count": 4, "total_tb": 15.36, "per": "host"}, 72, 276.48, id="4-per-host"),
        pytest.param(None, 0, None, id="none-given"),
    ],
)
def test_per_host_nvme_is_multiplied_by_the_hosts(nvme: dict[str, Any] | None, drives: int, total_tb: float | None) -> None:
    platform = PlatformSpec.from_record(_gb200(nvme))
    assert platform.hosts == 18
    assert platform.nvme_count == drives
    if total_tb is None:
        assert platform.nvme_total_tb is None
    else:
        assert platform.nvme_total_tb == pytest.approx(total_tb)


@pytest.mark.parametrize(
    "nvme",
    [
        pytest.param({"drive_id": DRIVE, "count": 144, "total_tb": 552.96}, id="whole-system-count-unmarked"),
        pytest.param({"drive_id": DRIVE, "count": None, "total_tb": 30.72}, id="capacity-unmarked"),
    ],
)
def test_a_rack_scale_nvme_without_per_host_is_refused(nvme: dict[str, Any]) -> None:
    refused = r'^nvme of a system of 18 hosts needs "per": "host" \(count and total_tb are per host\)$'
    with pytest.raises(ValueError, match=refused):
        PlatformSpec.from_record(_gb200(nvme))


def test_a_single_host_server_needs_no_marker() -> None:
    rec = _gb200({"drive_id": DRIVE, "count": 2, "total_tb": 7.68})
    rec["nodes"] = None
    platform = PlatformSpec.from_record(rec)
    assert (platform.hosts, platform.nvme_count, platform.nvme_total_tb) == (1, 2, 7.68)


@pytest.mark.parametrize(
    ("need_tb", "drives", "nvme_tb"),
    [
        pytest.param(1.0, 72, 276.48, id="enough-per-host-as-built"),
        # a system listed with its drives keeps them (its price is that configuration's; fuzz14 item 3), and says so
        pytest.param(20.0, 72, 276.48, id="short-per-host-as-built"),
    ],
)
def test_a_node_counts_every_hosts_drives_once(need_tb: float, drives: int, nvme_tb: float) -> None:
    """4 x 3.84 TB = 15.36 TB per host; 20 TB wanted per host (each caches its own copy) is short on every host."""
    platform = PlatformSpec.from_record(_gb200({"drive_id": DRIVE, "count": 4, "total_tb": 15.36, "per": "host"}))
    gpu = catalog.gpus()[platform.gpu_ids[0]]
    needs = NodeNeeds(int(need_tb * TB), 0, 0, 0, needs_fabric=False)
    findings: list[Finding] = []
    node = assemble_node(platform, gpu, 72, needs, Constants(), findings)
    assert node.nvme_drives == drives
    assert node.nvme_tb == pytest.approx(nvme_tb)
    short = [f.message for f in findings if f.code == "nvme-short"]
    assert short == ([] if need_tb < 15.36 else [f"{platform.id} has 15.36 TB local NVMe per host; 20.00 TB wanted per host"])


GB300_WORKLOAD = """\
version: 1
name: t
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 8192, requests_per_second: 2}
hardware:
  platforms: [gb300-nvl72]
  provider: baremetal
  cooling: liquid
  rack_power_kw: 150
outputs: [ansible]
"""


@pytest.mark.parametrize(
    ("dataset_tb", "message"),
    [
        pytest.param(
            0,
            "gb300-nvl72 has 4 NVMe drives per host of a capacity the catalog has no source for; 0.81 TB wanted per "
            "host: check that they hold it",
            id="model-files",
        ),
        pytest.param(
            2,
            "gb300-nvl72 has 4 NVMe drives per host of a capacity the catalog has no source for; 2.81 TB wanted per "
            "host: check that they hold it, or keep the dataset on network storage",
            id="with-a-dataset",
        ),
    ],
)
def test_drives_of_unsourced_capacity_stay_unknown(dataset_tb: int, message: str) -> None:
    """fuzz18 item 4: a GB300 NVL72 tray's 4 E1.S drives (catalog total_tb null) were planned as 0 TB."""
    platform = catalog.platforms()["gb300-nvl72"]
    assert (platform.nvme_count, platform.nvme_total_tb) == (72, None)  # 4 a tray x 18 trays, capacity not stated
    needs = NodeNeeds(810 * 10**9, 0, dataset_tb * 10**12, 0, needs_fabric=False)
    findings: list[Finding] = []
    node = assemble_node(platform, catalog.gpus()["gb300-288gb"], 72, needs, Constants(), findings)
    assert (node.nvme_tb, node.nvme_drives) == (None, 72)
    assert [(f.level, f.code, f.message) for f in findings if f.code.startswith("nvme")] == [
        ("warning", "nvme-capacity-unknown", message)
    ]
    assert host_node(node).nvme_tb is None


def test_unsourced_nvme_capacity_is_rendered_as_unknown(tmp_path: Path) -> None:
    """The SPEC table, the plan text and the Ansible vars say the capacity is unsourced, never 0.0 TB."""
    path = tmp_path / "w.yaml"
    path.write_text(GB300_WORKLOAD)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    (pool,) = plan.pools
    files = render_plan(plan, loaded.workload)
    nvme = ansible_reader().load(files[f"ansible/group_vars/{pool.name}.yml"])["specgen_nvme"]
    assert (nvme["capacity_tb"], nvme["drives"], nvme["raid_level"]) == (None, 4, 0)
    # the read figure is the generic drive's fitted where the catalog names none (72 x 7.0 GB/s)
    assert "| 72 drives, capacity unsourced (504.0 GB/s read) |" in files["SPEC.md"]
    assert "RAM unsourced, 72 NVMe drives (capacity unsourced), " in plan_text(plan)
    assert "0.0 TB" not in files["SPEC.md"] + plan_text(plan)
