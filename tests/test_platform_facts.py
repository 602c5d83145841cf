"""Rack heights and PSUs: sourced where a source was found, left null (and said so) where none exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.planner.nodes import NodeNeeds, assemble_node
from generator.planner.plan import Finding
from generator.sizing.constants import Constants
from generator.workload import load_workload
from tests.conftest import catalog_json


def _raw_platforms() -> dict[str, dict[str, Any]]:
    data = catalog_json("platforms")
    return {p["id"]: p for p in data["platforms"]}


@pytest.mark.parametrize(
    ("platform_id", "field", "value", "sourced", "source_fragment"),
    [
        pytest.param("dgx-h200", "rack_units", 8, True, "dgxh100-user-guide", id="dgx-h200-8u-from-the-shared-h100-h200-guide"),
        pytest.param("dgx-h100", "rack_units", 8, True, None, id="dgx-h100-8u"),
        pytest.param("dell-xe8640", "rack_units", 4, True, "xe8640-spec-sheet", id="xe8640-4u-from-the-spec-sheet"),
        pytest.param("dell-xe8640", "psu", None, False, None, id="xe8640-psu-count-unpublished-stays-null"),
        pytest.param("hgx-a100-8gpu-oem", "rack_units", None, False, None, id="generic-oem-record-has-no-single-height"),
        pytest.param("supermicro-as-4124go-nart", "rack_units", 4, True, "aijishu.com", id="named-hgx-a100-server-4u"),
        pytest.param(
            "supermicro-as-4124go-nart",
            "psu",
            {"count": 4, "rating_w": 2200, "redundant": 1},
            True,
            "aijishu.com",
            id="named-hgx-a100-server-four-2200w-psus-3plus1",
        ),
    ],
)
def test_height_and_psu_facts(platform_id: str, field: str, value: object, sourced: bool, source_fragment: str | None) -> None:
    raw = _raw_platforms()[platform_id]
    assert raw[field] == value
    if sourced:
        assert field not in raw.get("unsourced_fields", []), f"{platform_id}.{field} is still marked unsourced"
        if source_fragment:
            assert any(source_fragment in s for s in raw["source"]), raw["source"]
    else:
        # a null fact carries the searches that failed and why no value can be given
        assert any("2026-12-01" in n and ("null" in n or "no source" in n) for n in raw["research_notes"]), raw


def test_null_height_is_reported_as_assumed_in_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: a100\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 2}\n"
        "hardware:\n  provider: baremetal\n  gpus: [a100-sxm4-80gb]\n  platforms: [hgx-a100-8gpu-oem]\n"
        # priced only as Lambda's rental, in no rack of yours: an owned one stands in the rack
        "  inventory:\n    - {platform: hgx-a100-8gpu-oem, gpu: a100-sxm4-80gb, count: 1}\n"
    )
    plan = plan_workload(load_workload(str(path)))
    assumed = [f.message for f in plan.findings if f.code == "rack-units-assumed"]
    assert len(assumed) == 1 and "hgx-a100-8gpu-oem has no published height" in assumed[0]


@pytest.mark.parametrize("platform_id", ["dell-r760", "dell-r760xa", "dell-xe7740"])
def test_formerly_unpriced_dell_hosts_are_comparable_system_estimates(platform_id: str) -> None:
    data = catalog_json("purchases")
    assert not any(u.get("platform_id") == platform_id for u in data["unpriced"])
    host = next(r for r in data["purchases"] if r.get("platform_id") == platform_id and r["kind"] == "host")
    assert host["estimated"] is True and host["basis"] == "derived" and host["research_notes"]
    # the plan names the system that stands in and what it is priced with
    stands_in = catalog.purchases()[host["id"]].stands_in
    assert stands_in is not None and stands_in.startswith("from a comparable system, not this chassis: ")
    assert catalog.purchases()[host["id"]].priced_with is not None


def test_h100_nvl_is_priced_from_a_dated_us_retail_listing() -> None:
    assert "h100-nvl-94gb" not in catalog.unpriced()
    rec = catalog.purchases()["h100-nvl-94gb-gpu"]
    assert (rec.usd, rec.basis, rec.as_of, rec.range_end, rec.estimated) == (
        32200,
        "retail listing",
        "2026-09-26",
        "single",
        False,
    )
    assert rec.source == ("https://viperatech.com/product/nvidia-h100-nvl-hbm3-94gb-350w",)
    raw = next(r for r in catalog_json("purchases")["purchases"] if r["id"] == "h100-nvl-94gb-gpu")
    # every field sourced; how the listing was found stays with the record
    assert raw["unsourced_fields"] == [] and raw["research_notes"]


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "gpus", "cpu_name"),
    [
        # Xeon 6 (LGA4710) chassis: a Sapphire or Emerald Rapids part would not fit its socket
        pytest.param("dell-xe7740", "rtx-pro-6000-blackwell-96gb", 8, "Intel Xeon 6 6745P", id="xe7740-xeon-6"),
        pytest.param("dell-r760", "l40s-48gb", 2, "Intel Xeon Platinum 8470", id="r760-lga4677"),
        pytest.param("dell-xe8640", "h100-sxm5-80gb", 4, "Intel Xeon Platinum 8470", id="xe8640-lga4677"),
    ],
)
def test_a_chassis_gets_a_cpu_of_its_own_socket(platform_id: str, gpu_id: str, gpus: int, cpu_name: str) -> None:
    platform, gpu = catalog.platforms()[platform_id], catalog.gpus()[gpu_id]
    needs = NodeNeeds(model_file_bytes=10**10, host_ram_bytes=0, dataset_bytes=0, checkpoint_bytes=0, needs_fabric=False)
    node = assemble_node(platform, gpu, gpus, needs, Constants(), [])
    assert cpu_name in node.cpu
    named = next(c for c in catalog.cpus().values() if c.name in node.cpu)
    assert named.socket == platform.cpu_socket


def test_every_stated_socket_has_a_catalog_cpu() -> None:
    sockets = {c.socket for c in catalog.cpus().values()}
    assert all(p.cpu_socket in sockets for p in catalog.platforms().values() if p.cpu_socket)


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "gpus"), [("dgx-h100", "h100-sxm5-80gb", 8), ("dell-xe8640", "h100-sxm5-80gb", 4)]
)
def test_a_listed_system_keeps_its_drives_and_a_chosen_server_takes_what_the_files_need(
    platform_id: str, gpu_id: str, gpus: int
) -> None:
    """fuzz14 item 3: a DGX H100 (8 U.2 drives) was given 16, and 1,042, drives for a dataset; it keeps its 8 and the
    plan says the NVMe is short. A server whose drives are chosen (no drives listed) takes as many as needed."""
    platform, gpu = catalog.platforms()[platform_id], catalog.gpus()[gpu_id]
    dataset = 60 * 10**12
    needs = NodeNeeds(model_file_bytes=10**10, host_ram_bytes=0, dataset_bytes=dataset, checkpoint_bytes=0, needs_fabric=False)
    findings: list[Finding] = []
    node = assemble_node(platform, gpu, gpus, needs, Constants(), findings)
    short = [f for f in findings if f.code == "nvme-short"]
    if platform.nvme_count:
        assert (node.nvme_drives, node.nvme_tb) == (platform.nvme_count, platform.nvme_total_tb) and short
    else:
        assert node.nvme_tb is not None and node.nvme_tb >= 60.01 and not short


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "owned", "drives", "code"),
    [
        # bays published: 8 of 3.84 TB for 200 TB, and the plan says the NVMe is short
        ("dell-xe7740", "l40s-48gb", False, 8, "nvme-short"),
        ("dell-xe9680-hgx-h100-h200", "h100-sxm5-80gb", False, 8, "nvme-short"),
        ("supermicro-as-4124go-nart", "a100-sxm4-80gb", False, 10, "nvme-short"),
        # no source for its bays: as many as the files need (53), with a warning past the most any catalog server takes
        ("dell-r760", "l40s-48gb", False, 53, "nvme-bays-unknown"),
        # an owned server is said to need them: specgen does not know its drives
        ("dell-r760", "l40s-48gb", True, 53, "nvme-owned"),
    ],
)
def test_dataset_drives_stop_at_the_chassis_bays_and_an_owned_server_is_told_to_check_its_own(
    platform_id: str, gpu_id: str, owned: bool, drives: int, code: str
) -> None:
    """fuzz15 item 1: a 2U R760, bought or owned, was given 53 NVMe drives (203 TB) for a dataset, exit 0."""
    platform, gpu = catalog.platforms()[platform_id], catalog.gpus()[gpu_id]
    needs = NodeNeeds(model_file_bytes=0, host_ram_bytes=0, dataset_bytes=200 * 10**12, checkpoint_bytes=0, needs_fabric=False)
    findings: list[Finding] = []
    node = assemble_node(platform, gpu, 1, needs, Constants(), findings, owned=owned)
    assert node.nvme_drives == drives
    assert [f.code for f in findings if f.code.startswith("nvme")] == [code]
