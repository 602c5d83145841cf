"""fix154 item 1: every Azure VM size in the catalog names its vCPU quota family, sourced, and the quota finding sums
the vCPUs of each family (sizes of one family share its quota).

The names are the ``family`` of Azure's Resource SKUs API (``az vm list-skus``) with spaces removed, as SkyPilot's
fetch_azure.py reads them and as aspire.dev (Microsoft's Aspire API reference, generated from the SKU list) titles
its classes; ``az vm list-usage`` lists the quota under that name, compared without regard to case (public scripts read
``standardNCASv3_T4Family`` / ``standardNCADSH100v5Family``). Table below: the catalog's, as those sources give them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.planner.plan import NodeSpec, Pool
from generator.planner.vcpu_quota import vcpu_quota_findings

PLATFORMS = Path(__file__).resolve().parent.parent / "generator" / "catalog" / "platforms.json"

FAMILIES = {
    "Standard_NC4as_T4_v3": "StandardNCASv3_T4Family",
    "Standard_NC8as_T4_v3": "StandardNCASv3_T4Family",
    "Standard_NC16as_T4_v3": "StandardNCASv3_T4Family",
    "Standard_NC64as_T4_v3": "StandardNCASv3_T4Family",
    "Standard_NC24ads_A100_v4": "StandardNCADSA100v4Family",
    "Standard_NC48ads_A100_v4": "StandardNCADSA100v4Family",
    "Standard_NC96ads_A100_v4": "StandardNCADSA100v4Family",
    "Standard_NC40ads_H100_v5": "StandardNCadsH100v5Family",
    "Standard_NC80adis_H100_v5": "StandardNCadsH100v5Family",
    "Standard_ND96asr_v4": "StandardNDASv4_A100Family",
    "Standard_ND96amsr_A100_v4": "standardNDAMSv4_A100Family",
    "Standard_ND96isr_H100_v5": "standardNDSH100v5Family",
    "Standard_ND96isr_H200_v5": "standardNDISRH200V5Family",
    "Standard_ND96isr_MI300X_v5": "standardNDISv5MI300XFamily",
    "Standard_NV36ads_A10_v5": "StandardNVADSA10v5Family",
    "Standard_NV72ads_A10_v5": "StandardNVADSA10v5Family",
}


def _azure() -> dict[str, dict[str, object]]:
    records = json.loads(PLATFORMS.read_text(encoding="utf-8"))["platforms"]
    return {r["instance_type"]: r for r in records if r["provider"] == "azure"}


def test_every_azure_size_names_its_family_as_the_sources_do() -> None:
    records = _azure()
    assert set(records) == set(FAMILIES)  # a new Azure size needs its family sourced here too
    loaded = {p.instance_type: p.quota_family for p in catalog.platforms().values() if p.provider == "azure"}
    assert loaded == FAMILIES


@pytest.mark.parametrize("size", sorted(FAMILIES))
def test_each_family_carries_a_source_a_user_can_open_and_its_notes(size: str) -> None:
    family = _azure()[size]["quota_family"]
    assert isinstance(family, dict)
    sources = family["source"]
    assert sources and all(str(s).startswith("https://") for s in sources)
    # Microsoft's Aspire reference names the family of every size; the class's page is the first source
    assert str(sources[0]).startswith("https://aspire.dev/reference/api/csharp/aspire.hosting.azure.kubernetes/")
    assert family["research_notes"]


def _pool(name: str, platform_id: str, nodes: int, *, spot: bool = False) -> Pool:
    platform = catalog.platforms()[platform_id]
    node = NodeSpec(
        platform_id=platform_id, platform_name=platform.name, kind="cloud-instance", provider="azure",
        instance_type=platform.instance_type, gpu_id="a100-pcie-80gb", gpu_name="A100", gpus=1, gpu_memory_gib=80.0,
        cpu="cpu", cpu_cores=24, ram_gib=None, nvme_tb=None, nvme_drives=0, nvme_read_gb_per_s=1.0,
        nvme_write_gb_per_s=1.0, nics=(), power_w=0, power_basis="", heat_btu_per_h=0, cooling="air", rack_units=None,
        psu=None, nvswitch=False,
    )  # fmt: skip
    return Pool(
        name=name, node=node, nodes=nodes, deployments=(name,), racks=0, power_w=0, usd_per_hour=None, price_basis=None,
        labels=(), taints=(), capacity_type="spot" if spot else None,
    )  # fmt: skip


def test_two_sizes_of_one_family_are_summed_against_its_quota() -> None:
    pools = [
        _pool("a", "azure-standard-nc24ads-a100-v4", 2),
        _pool("b", "azure-standard-nc96ads-a100-v4", 1),
        _pool("c", "azure-standard-nc24ads-a100-v4", 1, spot=True),
    ]
    (found,) = vcpu_quota_findings("azure", "eastus", pools)
    assert (
        "on demand, of each VM size's family quota: StandardNCADSA100v4Family 144 (Standard_NC24ads_A100_v4 2 node(s) x "
        "24 vCPUs = 48, pool a; Standard_NC96ads_A100_v4 1 node(s) x 96 vCPUs = 96, pool b); 144 of Total Regional vCPUs"
    ) in found.message
    # Spot is one quota for every size: no family
    assert "on Spot, of the region's Spot vCPU quota (one for all sizes, apart from the families'): " in found.message
    assert "Standard_NC24ads_A100_v4 1 node(s) x 24 vCPUs = 24 (pool c); 24 in all" in found.message
