"""newuser109: an AKS cluster in a region no catalog list covers (every European Azure region) is told so.

Before, ``region_offer`` returned UNSOURCED for westeurope / swedencentral (SkyPilot's Azure catalog lists US regions
only) and the plan said nothing of it; the ``price-region`` warning claimed the catalog records no region's offer of
any instance type, untrue on AWS and Azure since fix177. A user who gave westeurope prices under ``prices:`` (so no
``price-region``) got no word at all that the VM size was never checked in the region.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.planner.region_offer_clause import region_offer_clause

SERVICE = """\
version: 1
name: eu-assistant
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: {provider}
  gpus: [{gpu}]
objective: cost
{prices}kubernetes:
  location: {region}
outputs: [terraform, kubernetes]
"""


def plan(tmp_path: Path, provider: str, gpu: str, region: str, prices: str = "") -> dict[str, Any]:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(provider=provider, gpu=gpu, region=region, prices=prices), encoding="utf-8")
    planned: dict[str, Any] = plan_file(str(path))[1].to_dict()
    return planned


def coded(planned: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in planned["findings"] if f["code"] == code]


@pytest.mark.parametrize("region", ["westeurope", "swedencentral"])
def test_a_european_aks_region_is_said_unchecked_with_the_command(tmp_path: Path, region: str) -> None:
    planned = plan(tmp_path, "azure", "h100-sxm5-80gb", region)
    (machine,) = {p["node"]["instance_type"] for p in planned["pools"]}
    (info,) = coded(planned, "gpu-region-unchecked")
    assert info["level"] == "info"
    assert info["path"] == "kubernetes.location"
    assert f"do not cover {region} (their source, SkyPilot's Azure catalog, lists US regions only)" in info["message"]
    assert f"`az vm list-skus --location {region} --size {machine} --all --output table`" in info["message"]
    for warning in coded(planned, "price-region"):
        assert "the catalog records no region's offer" not in warning["message"]
        assert "info gpu-region-unchecked gives the command" in warning["message"]


def test_given_prices_still_say_the_region_is_unchecked(tmp_path: Path) -> None:
    """No price-region warning where the user prices the size: the region's offer is still unchecked, and said."""
    prices = "prices: {azure-standard-nd96isr-h100-v5: 110.0}\n"
    planned = plan(tmp_path, "azure", "h100-sxm5-80gb", "westeurope", prices)
    assert coded(planned, "price-region") == []
    (info,) = coded(planned, "gpu-region-unchecked")
    assert "Standard_ND96isr_H100_v5 (pool " in info["message"]


def test_a_listed_region_offering_the_type_says_nothing(tmp_path: Path) -> None:
    planned = plan(tmp_path, "azure", "h100-sxm5-80gb", "eastus2")
    assert coded(planned, "gpu-region-unchecked") == []
    assert coded(planned, "gpu-region-unlisted") == []


def test_a_type_without_a_region_list_in_a_listed_region(tmp_path: Path) -> None:
    planned = plan(tmp_path, "azure", "h200-sxm-141gb", "westus3")
    (info,) = coded(planned, "gpu-region-unchecked")
    assert "the catalog holds no region list for them" in info["message"]
    assert "--size Standard_ND96isr_H200_v5 " in info["message"]


def test_an_aws_region_the_catalog_does_not_list(tmp_path: Path) -> None:
    planned = plan(tmp_path, "aws", "h100-sxm5-80gb", "sa-east-1")
    (info,) = coded(planned, "gpu-region-unchecked")
    assert "whether EC2 offers the planned instance types in sa-east-1 is not checked" in info["message"]
    assert "SkyPilot's Azure" not in info["message"]
    assert "aws ec2 describe-instance-type-offerings --location-type region" in info["message"]


def test_the_price_region_clause_by_offer() -> None:
    offered = region_offer_clause("azure", "azure-standard-nc40ads-h100-v5", "Standard_NC40ads_H100_v5", "westus3")
    assert offered.startswith("westus3 offers Standard_NC40ads_H100_v5 (generator/catalog/gpu_regions.json: https://")
    lacks = region_offer_clause("azure", "azure-standard-nd96isr-h100-v5", "Standard_ND96isr_H100_v5", "westus3")
    assert lacks.endswith("does not name westus3 (warning gpu-region-unlisted)")
    unchecked = region_offer_clause("azure", "azure-standard-nd96isr-h100-v5", "Standard_ND96isr_H100_v5", "westeurope")
    assert "info gpu-region-unchecked" in unchecked
    other = region_offer_clause("oci", "x", "X", "eu-frankfurt-1")
    assert "the catalog records no region's offer" in other


def test_price_region_says_where_azure_lists_the_regions_rate(tmp_path: Path) -> None:
    """The warning asked for a westeurope rate without saying where Azure publishes one."""
    planned = plan(tmp_path, "azure", "h100-sxm5-80gb", "westeurope")
    (machine,) = {p["node"]["instance_type"] for p in planned["pools"]}
    (warning,) = coded(planned, "price-region")
    url = (
        "https://prices.azure.com/api/retail/prices?$filter=armRegionName%20eq%20%27westeurope%27%20and%20armSkuName"
        f"%20eq%20%27{machine}%27%20and%20priceType%20eq%20%27Consumption%27"
    )
    assert f"under 'prices:'; Azure's Retail Prices API lists it, {url}: the row whose productName" in warning["message"]


def test_price_region_on_aws_names_no_azure_api(tmp_path: Path) -> None:
    planned = plan(tmp_path, "aws", "h100-sxm5-80gb", "eu-west-2")
    for warning in coded(planned, "price-region"):
        assert "prices.azure.com" not in warning["message"]
