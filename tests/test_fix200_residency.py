"""fix200: newuser114's left-outs of ``kubernetes.data_residency: eu``.

1. AWS eu-central-1 lists no H100 / H200 instance type (p5 is in eu-north-1); an EU-resident plan still picked
   p5.48xlarge there with a warning. Now a type the EU region's list leaves out is left out of the plan (info
   ``gpu-not-in-eu-region``, naming the EU regions that list it), and a workload left with none is refused at
   ``kubernetes.location``; an Azure EU region, which no list covers, is left unchecked (``gpu-region-unchecked``).
2. SPEC.md and spec.json record ``data_residency`` beside the region.
3. ``specgen diff`` between providers names each side's region.
4. A bare-metal server rented from a provider (Lambda) under ``eu``: the catalog records no country, so a warning
   says the residency is unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.fleet_diff import diff_plans, markdown_diff
from generator.planner import plan_workload
from generator.workload import load_workload
from generator.workload.residency_offer import residency_left_out
from tests.test_newuser114_eu import errors_of, write

H100_H200 = "h100-sxm5-80gb, h200-sxm-141gb"


def test_an_eu_region_lacking_every_allowed_type_is_refused_with_the_eu_regions_that_offer_them(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "  location: eu-central-1\n  data_residency: eu", H100_H200)
    (error,) = errors_of(path)
    assert error.startswith(f"{path}:14:13: kubernetes.location: eu-central-1 offers none of the GPU types"), error
    assert "h100-sxm5-80gb (aws-p5-48xlarge and aws-p5-4xlarge) in eu-north-1;" in error
    assert "h200-sxm-141gb (aws-p5e-48xlarge and aws-p5en-48xlarge) in eu-north-1 and eu-south-2;" in error


def test_without_residency_the_region_only_warns(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "  location: eu-central-1", H100_H200)
    assert errors_of(path) == []
    assert residency_left_out(load_workload(str(path)).workload) == frozenset()


def test_a_type_the_eu_region_lacks_is_left_out_and_said(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "  location: eu-central-1\n  data_residency: eu", "a100-sxm4-40gb, h100-sxm5-80gb")
    plan = plan_workload(load_workload(str(path)))
    assert {p.node.platform_id for p in plan.pools} == {"aws-p4d-24xlarge"}
    codes = [f.code for f in plan.findings]
    assert "gpu-region-unlisted" not in codes
    (said,) = [f for f in plan.findings if f.code == "gpu-not-in-eu-region"]
    assert said.path == "kubernetes.location"
    assert "h100-sxm5-80gb (aws-p5-48xlarge and aws-p5-4xlarge) in eu-north-1;" in said.message
    (layout,) = [f for f in plan.findings if f.code == "gpu-no-layout"]
    assert layout.message.endswith(
        "no layout on h100-sxm5-80gb: region eu-central-1's list names none of its instance types and "
        "kubernetes.data_residency is eu (info gpu-not-in-eu-region)"
    ), layout.message


def test_a_pinned_type_the_eu_region_lacks_is_refused_at_the_pin(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "  location: eu-central-1\n  data_residency: eu", "a100-sxm4-40gb, h100-sxm5-80gb")
    path.write_text(path.read_text().replace("  - name: chat\n", "  - name: chat\n    platform: aws-p5-48xlarge\n"))
    errors = errors_of(path)
    assert any(
        e.startswith(f"{path}:5:15: deployments[0].platform: 'aws-p5-48xlarge' is not offered in eu-central-1") for e in errors
    ), errors


def test_an_azure_eu_region_is_unchecked_not_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "azure", "  location: westeurope\n  data_residency: eu")
    assert errors_of(path) == []
    assert residency_left_out(load_workload(str(path)).workload) == frozenset()


def test_spec_json_and_spec_md_record_the_residency(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "  location: eu-north-1\n  data_residency: eu")
    assert plan_workload(load_workload(str(path))).to_dict()["data_residency"] == "eu"
    path = write(tmp_path, "aws", "  location: eu-north-1")
    assert "data_residency" not in plan_workload(load_workload(str(path))).to_dict()
    golden = Path(__file__).parent / "golden" / "eu-insurer-70b"
    assert json.loads((golden / "spec.json").read_text())["plan"]["data_residency"] == "eu"
    assert "region: **europe-west4**, data residency: **EU**." in (golden / "SPEC.md").read_text()


def _plan_dict(
    tmp_path: Path, name: str, provider: str, location: str, residency: str = "\n  data_residency: eu"
) -> dict[str, Any]:
    path = tmp_path / name
    path.write_text(write(tmp_path, provider, f"  location: {location}{residency}").read_text())
    plan: dict[str, Any] = json.loads(json.dumps(plan_workload(load_workload(str(path))).to_dict()))
    return plan


def test_a_diff_between_providers_names_the_regions(tmp_path: Path) -> None:
    gcp = _plan_dict(tmp_path, "gcp.yaml", "gcp", "europe-west4")
    aws = _plan_dict(tmp_path, "aws.yaml", "aws", "eu-north-1")
    result = diff_plans(gcp, aws)
    assert result["provider_change"] == {"old": "gcp", "new": "aws", "old_region": "europe-west4", "new_region": "eu-north-1"}
    assert "**Provider changes: gcp (region europe-west4) → aws (region eu-north-1).**" in markdown_diff(result)
    ohio = _plan_dict(tmp_path, "aws3.yaml", "aws", "us-east-2", "")
    moved = diff_plans(aws, ohio)
    assert "provider_change" not in moved and moved["region_change"] == {"old": "eu-north-1", "new": "us-east-2"}
    assert "**Region changes: eu-north-1 → us-east-2.**" in markdown_diff(moved)


def test_a_rented_bare_metal_server_under_eu_is_said_unchecked(tmp_path: Path) -> None:
    path = write(tmp_path, "baremetal", "  data_residency: eu", "gh200-96gb")
    plan = plan_workload(load_workload(str(path)))
    assert {p.rented for p in plan.pools} == {"hour"}
    (said,) = [f for f in plan.findings if f.code == "residency-unchecked"]
    assert said.level == "warning" and said.path == "kubernetes.data_residency"
    assert (
        "rented from Lambda" in said.message
        and "catalog price supermicro-ars-111gl-nhr-lambda-on-demand says only" in said.message
    )
    path = write(tmp_path, "baremetal", "  {}", "gh200-96gb")
    assert not [f for f in plan_workload(load_workload(str(path))).findings if f.code == "residency-unchecked"]
