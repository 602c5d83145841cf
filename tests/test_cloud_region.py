"""The region an AWS or Azure cluster runs in: ``kubernetes.location`` (newuser26 item 5).

A two-region EKS shop wrote ``hardware.region: us-east-1`` (unknown field, no hint) and ``kubernetes.location:
westeurope`` on Azure (refused by GKE's pattern); nothing priced, rendered or diffed a region. The location now names
the cluster's region on every cloud: it chooses the prices where the catalog has them (else a finding says whose
rate each pool carries), goes into the Terraform variables and the Ansible inventory, and a move shows in a diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.api import plan_file, render_file
from generator.errors import InputError
from generator.fleet_diff import diff_plans, markdown_diff
from generator.workload import load_workload
from generator.workload.cloud_regions import AWS_REGIONS, AZURE_REGIONS

WORKLOAD = """\
version: 1
name: regional
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: {provider}
  gpus: [h100-sxm5-80gb]
outputs: [terraform, ansible, kubernetes]
{kubernetes}"""


def _write(tmp_path: Path, provider: str, location: str | None, name: str = "w.yaml") -> Path:
    path = tmp_path / name
    kubernetes = f"kubernetes:\n  location: {location}\n" if location else ""
    path.write_text(WORKLOAD.format(provider=provider, kubernetes=kubernetes))
    return path


def _findings(files: dict[str, str], code: str) -> list[dict[str, str]]:
    return [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == code]


@pytest.mark.parametrize(
    ("provider", "location", "inventory", "filter_text"),
    [
        ("aws", "eu-west-1", "ansible/inventory.aws_ec2.yml", None),
        ("azure", "westeurope", "ansible/inventory.azure_rm.yml", "location != 'westeurope'"),
    ],
)
def test_the_region_goes_into_terraform_and_the_inventory(
    tmp_path: Path, provider: str, location: str, inventory: str, filter_text: str | None
) -> None:
    files = render_file(str(_write(tmp_path, provider, location)))
    assert json.loads(files["spec.json"])["plan"]["region"] == location
    assert json.loads(files["terraform/specgen.auto.tfvars.json"])["region"] == location
    assert 'variable "region"' in files["terraform/variables.tf"] and 'output "region"' in files["terraform/outputs.tf"]
    config = YAML(typ="safe").load(files[inventory])
    if filter_text is None:
        assert config["regions"] == [location]  # aws_ec2 queries that region alone
    else:
        assert filter_text in config["exclude_host_filters"]
        # newuser69 item 1: AKS node pools are scale sets, which azure_rm fetches only from the groups listed (none)
        assert config["include_vmss_resource_groups"] == ["*"]
    assert f"region: **{location}**" in files["SPEC.md"]


@pytest.mark.parametrize("provider", ["aws", "azure"])
def test_no_region_named_renders_none(tmp_path: Path, provider: str) -> None:
    files = render_file(str(_write(tmp_path, provider, None)))
    assert json.loads(files["spec.json"])["plan"]["region"] is None
    assert "region" not in json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert 'variable "region"' not in files["terraform/variables.tf"]
    assert "regions" not in files[f"ansible/inventory.{'aws_ec2' if provider == 'aws' else 'azure_rm'}.yml"]


@pytest.mark.parametrize(
    ("provider", "named", "priced_in"),
    [("aws", "us-east-1", "us-east-1"), ("aws", "eu-west-1", "us-east-1"), ("azure", "eastus2", "eastus2")],
)
def test_a_region_the_catalog_does_not_price_says_whose_rate_each_pool_carries(
    tmp_path: Path, provider: str, named: str, priced_in: str
) -> None:
    files = render_file(str(_write(tmp_path, provider, named)))
    found = _findings(files, "price-region")
    if named == priced_in:
        assert found == []
        return
    (finding,) = found
    assert finding["path"] == "kubernetes.location"
    assert f"is priced at the {priced_in} on-demand rate of" in finding["message"]
    assert f"the cluster is in {named}" in finding["message"]


@pytest.mark.parametrize(
    ("provider", "location", "says"),
    [
        ("aws", "us-east-l", r"'us-east-l' is not an AWS Region .* \(did you mean us-east-1 or us-east-2\?\)"),
        ("aws", "westeurope", r"'westeurope' is not an AWS Region .* \(it is an Azure region\)"),
        ("gcp", "eastus2", r"'eastus2' is not a Google Cloud region \(it is an Azure region\)"),
        ("gcp", "US-CENTRAL1", r"'US-CENTRAL1' is written us-central1 \(lower case\)"),
        ("aws", "US-EAST-1", r"'US-EAST-1' is written us-east-1 \(the region's programmatic name, lower case\)"),
        ("azure", "'East US 2'", r"'East US 2' is written eastus2 \(the region's programmatic name, lower case\)"),
        ("aws", "us-east-1a", r"'us-east-1a' is an Availability Zone of us-east-1: give the Region, us-east-1"),
        ("azure", "eu-west-1", r"'eu-west-1' is not an Azure region .* \(it is an AWS Region\)"),
        (
            "aws",
            "us-central1",
            r"'us-central1' is not an AWS Region .* \(it is a Google Cloud location: copied from a GKE workload\?\)",
        ),
        (
            "azure",
            "westeurop",
            r"'westeurop' is not an Azure region .*\(did you mean westeurope\?\).*/azure/reliability/regions-list",
        ),
    ],
)
def test_a_location_that_names_no_region_of_the_provider_is_refused_at_the_field(
    tmp_path: Path, provider: str, location: str, says: str
) -> None:
    path = _write(tmp_path, provider, location)
    if provider == "gcp":  # the only error: GKE's node pools need the project too (fuzz35 item 6)
        path.write_text(path.read_text() + "  gcp_project: acme-ml\n")
    with pytest.raises(InputError, match=r"w\.yaml:12:13: kubernetes\.location: " + says):
        load_workload(str(path))


def test_hardware_region_points_at_kubernetes_location(tmp_path: Path) -> None:
    path = _write(tmp_path, "aws", None)
    path.write_text(path.read_text().replace("  provider: aws\n", "  provider: aws\n  region: us-east-1\n"))
    with pytest.raises(
        InputError, match=r"hardware\.region: unknown field 'region'; the cluster's region is set as kubernetes\.location"
    ):
        load_workload(str(path))


def test_a_move_of_region_is_said_and_not_counted_as_replacements(tmp_path: Path) -> None:
    old, new = (
        plan_file(str(_write(tmp_path, "aws", region, f"{region}.yaml")))[1].to_dict() for region in ("us-east-1", "eu-west-1")
    )
    result = diff_plans(old, new)
    assert result["region_change"] == {"old": "us-east-1", "new": "eu-west-1"} and result["replacements"] == []
    text = markdown_diff(result)
    assert "**Region changes: us-east-1 → eu-west-1.**" in text
    assert "No change to the fleet." not in text and "The same pools and deployments where they move to." in text
    assert "region_change" not in diff_plans(old, old)


@pytest.mark.parametrize("named_first", [True, False])
def test_a_region_named_on_one_side_alone_is_said_but_may_be_the_same(tmp_path: Path, named_first: bool) -> None:
    """fuzz24 M2: removing kubernetes.location drops the Terraform region and the inventory's filter, and the diff
    said nothing; unset is the provider configuration's region, which may be the one named, so pools still compare."""
    named = plan_file(str(_write(tmp_path, "aws", "us-east-1", "named.yaml")))[1].to_dict()
    unnamed = plan_file(str(_write(tmp_path, "aws", None, "none.yaml")))[1].to_dict()
    old, new = (named, unnamed) if named_first else (unnamed, named)
    result = diff_plans(old, new)
    assert result["region_change"] == {"old": old["region"], "new": new["region"]} and None in result["region_change"].values()
    text = markdown_diff(result)
    if named_first:
        assert "**Region: us-east-1 → (unset).**" in text and "where that is not us-east-1 they are created" in text
    else:
        assert "**Region: (unset) → us-east-1.**" in text and "where that was not us-east-1, the pools are created" in text
    assert text.endswith("No change to the fleet.\n")  # the same pools: nothing else moves


def test_the_region_lists_hold_the_regions_the_catalog_prices_in() -> None:
    from generator import catalog

    regions = {(catalog.platforms()[p.platform_id].provider, p.region) for p in catalog.prices().values() if p.region}
    assert {r for provider, r in regions if provider == "aws"} <= AWS_REGIONS
    assert {r for provider, r in regions if provider == "azure"} <= AZURE_REGIONS


def test_workloads_of_one_tree_name_one_region(tmp_path: Path) -> None:
    """A tree is one cluster: two AWS workloads in different regions are refused, as two cluster names are."""
    from generator.cli import render_files

    a = _write(tmp_path, "aws", "us-east-1", "a.yaml")
    b = _write(tmp_path, "aws", "eu-west-1", "b.yaml")
    b.write_text(b.read_text().replace("name: regional", "name: regional-eu"))
    for path in (a, b):  # one cluster name: the regions alone differ
        path.write_text(path.read_text().replace("kubernetes:\n", "kubernetes:\n  cluster_name: ml-prod\n"))
    pattern = r"b\.yaml:\d+:\d+: kubernetes\.location: the cluster's region is eu-west-1 here but us-east-1 in \S*a\.yaml"
    with pytest.raises(InputError, match=pattern):
        render_files((str(a), str(b)), str(tmp_path / "out"), False, (), 1, None, None, print)
    assert not (tmp_path / "out").exists()


def test_an_aws_availability_zone_as_kubernetes_zone_is_said_unused_not_refused_with_gkes_pattern(tmp_path: Path) -> None:
    """fuzz24 L10: ``zone: us-east-1a`` on AWS was refused with GKE's zone pattern; GKE alone reads the field."""
    path = _write(tmp_path, "aws", "us-east-1")
    path.write_text(path.read_text() + "  zone: us-east-1a\n")
    (finding,) = [f for f in plan_file(str(path))[1].to_dict()["findings"] if f["code"] == "setting-unused"]
    assert finding["path"] == "kubernetes.zone" and "read only for GKE node pools" in finding["message"]
    gke = _write(tmp_path, "gcp", "us-central1", "gke.yaml")
    zoned = "  gcp_project: acme-ml\n  location: us-central1\n  zone: us-central1\n"
    gke.write_text(gke.read_text().replace("  location: us-central1\n", zoned))
    with pytest.raises(InputError, match=r"kubernetes\.zone: 'us-central1' is a region, not a zone"):
        load_workload(str(gke))
