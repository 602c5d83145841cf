"""fix177: an EKS or AKS cluster's region checked against the GPU instance types it offers.

Before, GCP alone was checked (``gpu_zones.json``); an AWS or Azure workload rendered p6-b300.48xlarge or
Standard_ND96isr_H100_v5 into a region that does not sell it, and ``terraform apply`` (or the node pool) failed. The
regions come from ``generator/catalog/gpu_regions.json``: SkyPilot's EC2 catalog (v9 ``aws/vms.csv`` at commit
3e9a1751) and Azure catalog (v6 ``azure/vms.csv`` at commit 098741e7, US regions only). fix179: the lists may be
stale or incomplete (Azure's is a mid-2024 snapshot), so a type a region's list leaves out is planned as if offered and
each planned one warned at ``kubernetes.location`` (``gpu-region-unlisted``) with the cloud CLI command that checks it;
nothing is refused. Not checked: a type whose record has no rows read (``regions: null``) and a region the source
does not list at all.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.catalog.gpu_regions import NOT_OFFERED, OFFERED, UNSOURCED, listed_regions, region_offer
from generator.workload import load_workload
from generator.workload.cloud_regions import AWS_REGIONS, AZURE_REGIONS

REPO = Path(__file__).resolve().parent.parent
REGIONS_FILE = REPO / "generator" / "catalog" / "gpu_regions.json"
#: The catalog revision each cloud's rows were read at (the source URL of every record of that cloud).
REVISIONS = {
    "aws": "skypilot-org/skypilot-catalog/blob/3e9a1751b1edfb3592877f242c2f8dc10fc1fc6e/catalogs/v9/aws/vms.csv",
    "azure": "skypilot-org/skypilot-catalog/blob/098741e70562f65d7af1cceb81e33b284f742604/catalogs/v6/azure/vms.csv",
}

#: (instance type, region, offer), each read from the source's rows (column Region).
OFFERS = [
    ("aws-p5-48xlarge", "us-east-1", OFFERED),
    ("aws-p5-48xlarge", "eu-west-1", NOT_OFFERED),  # eu-west-2 and eu-north-1 in Europe
    ("aws-p5e-48xlarge", "us-east-1", NOT_OFFERED),  # us-east-2 and us-west-2 in the US
    ("aws-p5e-48xlarge", "us-east-2", OFFERED),
    ("aws-p6-b300-48xlarge", "us-west-2", OFFERED),  # its one row: usw2-az2
    ("aws-p6-b300-48xlarge", "us-east-1", OFFERED),  # no row, but AWS's own price file prices it there
    ("aws-p6-b300-48xlarge", "us-east-2", NOT_OFFERED),
    ("aws-g5-48xlarge", "us-west-1", NOT_OFFERED),
    ("aws-g5-xlarge", "eu-west-1", OFFERED),
    ("aws-g4dn-2xlarge", "me-south-1", OFFERED),
    ("aws-g4dn-2xlarge", "me-central-1", NOT_OFFERED),
    ("aws-p5-48xlarge", "sa-east-1", UNSOURCED),  # a Region the catalog does not list at all
    ("aws-g6-xlarge", "us-east-1", UNSOURCED),  # rows not read: regions null
    ("azure-standard-nd96isr-h100-v5", "eastus2", OFFERED),
    ("azure-standard-nd96isr-h100-v5", "westus3", NOT_OFFERED),
    ("azure-standard-nc40ads-h100-v5", "westus3", OFFERED),
    ("azure-standard-nd96asr-v4", "eastus2", NOT_OFFERED),
    ("azure-standard-nd96isr-h100-v5", "westeurope", UNSOURCED),  # the Azure catalog lists US regions only
    ("azure-standard-nd96isr-h200-v5", "eastus", UNSOURCED),  # the file predates the size
    ("gcp-a3-highgpu-8g", "us-east-1", UNSOURCED),  # not an AWS or Azure type
]


@pytest.mark.parametrize(("platform_id", "region", "offer"), OFFERS)
def test_region_offer_table(platform_id: str, region: str, offer: str) -> None:
    assert region_offer(platform_id, region) == offer


def regions_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REGIONS_FILE.read_text(encoding="utf-8"))
    return data


KNOWN = {"aws": AWS_REGIONS, "azure": AZURE_REGIONS}


@pytest.mark.parametrize("provider", ["aws", "azure"])
def test_every_region_in_the_file_is_a_region_of_its_cloud(provider: str) -> None:
    listed = regions_data()["listed_regions"][provider]["regions"]
    assert listed == sorted(set(listed))
    assert sorted(set(listed) - KNOWN[provider]) == []
    for rec in regions_data()["gpu_regions"]:
        if rec["provider"] == provider and rec["regions"] is not None:
            assert rec["regions"] == sorted(set(rec["regions"])), rec["id"]
            # a region the record lists is one the source lists at all, so the record's absences mean "not offered"
            assert sorted(set(rec["regions"]) - set(listed)) == [], rec["id"]


def test_aws_regions_are_codes_and_azure_regions_programmatic_names() -> None:
    data = regions_data()
    aws = re.compile(r"[a-z]{2}(-gov)?-[a-z]+-[0-9]")
    azure = re.compile(r"[a-z]+[0-9]?")
    for provider, pattern in (("aws", aws), ("azure", azure)):
        names = set(data["listed_regions"][provider]["regions"])
        names |= {r for rec in data["gpu_regions"] if rec["provider"] == provider for r in rec["regions"] or ()}
        assert sorted(n for n in names if not pattern.fullmatch(n)) == [], provider


def test_every_aws_and_azure_type_has_one_record_of_its_cloud() -> None:
    owners: dict[str, list[str]] = {}
    for rec in regions_data()["gpu_regions"]:
        for platform_id in rec["platform_ids"]:
            owners.setdefault(platform_id, []).append(rec["id"])
            assert catalog.platforms()[platform_id].provider == rec["provider"], (rec["id"], platform_id)
    wanted = sorted(p.id for p in catalog.platforms().values() if p.provider in ("aws", "azure") and not p.custom)
    assert sorted(owners) == wanted
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}


def test_every_record_cites_its_clouds_catalog_revision() -> None:
    data = regions_data()
    for rec in data["gpu_regions"]:
        assert rec["source"][0] == f"https://github.com/{REVISIONS[rec['provider']]}", rec["id"]
        assert rec["research_notes"], rec["id"]
    for provider, entry in data["listed_regions"].items():
        assert entry["source"] == [f"https://github.com/{REVISIONS[provider]}"]


def test_every_catalog_price_of_a_region_is_where_the_type_is_offered() -> None:
    """A region the catalog prices a type in is one that sells it: a region list that left it out would refuse it."""
    prices = json.loads((REPO / "generator" / "catalog" / "prices.json").read_text(encoding="utf-8"))["prices"]
    priced = {(r["platform_id"], r["region"]) for r in prices if r.get("region") and r.get("platform_id")}
    assert sorted((p, r) for p, r in priced if region_offer(p, r) == NOT_OFFERED) == []


def test_the_listed_regions_are_what_the_module_reads() -> None:
    assert listed_regions("aws") == frozenset(regions_data()["listed_regions"]["aws"]["regions"])
    assert listed_regions("gcp") == frozenset()


SERVICE = """\
version: 1
name: regional
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
{pin}hardware:
  provider: {provider}
  gpus: [{gpu}]
objective: cost
kubernetes:
  location: {region}
outputs: [terraform, kubernetes]
"""


def write(tmp_path: Path, provider: str, gpu: str, region: str, pin: str = "") -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(provider=provider, gpu=gpu, region=region, pin=pin), encoding="utf-8")
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def render_cli(path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", "render", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )


#: (provider, GPU, region, instance type, the check command a warning names, or None where the region is listed).
CLI_CASES = [
    pytest.param("aws", "b300-sxm-270gb", "us-west-2", "p6-b300.48xlarge", None, id="aws-listed"),
    pytest.param(
        "aws",
        "b300-sxm-270gb",
        "eu-west-1",
        "p6-b300.48xlarge",
        "aws ec2 describe-instance-type-offerings --location-type region --filters "
        "Name=instance-type,Values=p6-b300.48xlarge --region eu-west-1",
        id="aws-unlisted",
    ),
    pytest.param("azure", "h100-sxm5-80gb", "eastus2", "Standard_ND96isr_H100_v5", None, id="azure-listed"),
    pytest.param(
        "azure",
        "h100-sxm5-80gb",
        "westus3",
        "Standard_ND96isr_H100_v5",
        "az vm list-skus --location westus3 --size Standard_ND96isr_H100_v5 --all --output table",
        id="azure-unlisted",
    ),
]


def unlisted(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in spec["findings"] if f["code"] == "gpu-region-unlisted"]


@pytest.mark.parametrize(("provider", "gpu", "region", "machine", "check"), CLI_CASES)
def test_render_through_the_cli(tmp_path: Path, provider: str, gpu: str, region: str, machine: str, check: str | None) -> None:
    """fix179: a region the (possibly stale) list leaves out is rendered, exit 0, and warned with the check command."""
    path = write(tmp_path, provider, gpu, region)
    out = tmp_path / "out"
    done = render_cli(path, out)
    assert done.returncode == 0, done.stderr
    spec = json.loads((out / "spec.json").read_text(encoding="utf-8"))["plan"]
    assert {p["node"]["instance_type"] for p in spec["pools"]} == {machine}
    if check is None:
        assert unlisted(spec) == []
        return
    (warning,) = unlisted(spec)
    assert warning["level"] == "warning"
    assert warning["path"] == "kubernetes.location"
    assert f"check before applying with `{check}`" in warning["message"]
    assert f"is planned in region {region}, which the catalog's region list for it does not name" in warning["message"]
    assert "https://github.com/" + REVISIONS[provider] in warning["message"]
    assert "(read 2026-12-07)" in warning["message"]


def planned(path: Path) -> dict[str, Any]:
    plan: dict[str, Any] = plan_file(str(path))[1].to_dict()
    return plan


def test_a_pinned_type_the_region_list_lacks_is_planned_and_warned(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "b300-sxm-270gb", "eu-west-1", pin="    platform: aws-p6-b300-48xlarge\n")
    plan = planned(path)
    assert {str(p["node"]["platform_id"]) for p in plan["pools"]} == {"aws-p6-b300-48xlarge"}
    (warning,) = unlisted(plan)
    assert warning["message"] == (
        "p6-b300.48xlarge (aws-p6-b300-48xlarge) is planned in region eu-west-1, which the catalog's region list for it "
        "does not name: EC2 lists it in us-east-1 and us-west-2 by https://github.com/" + REVISIONS["aws"] + " (read "
        "2026-12-07), a snapshot that may be stale or incomplete, so the plan keeps it; check before applying with "
        "`aws ec2 describe-instance-type-offerings --location-type region --filters "
        "Name=instance-type,Values=p6-b300.48xlarge --region eu-west-1` (an empty answer: the region lacks it, so set "
        "kubernetes.location to a region that offers it or leave it out with hardware.platforms)"
    )


def test_an_unlisted_type_is_planned_by_cost_and_warned_only_when_chosen(tmp_path: Path) -> None:
    """p5e.48xlarge (unlisted in us-east-1) stays in the plan's options; p5en, priced, wins on cost: no warning."""
    plan = planned(write(tmp_path, "aws", "h200-sxm-141gb", "us-east-1"))
    assert {str(p["node"]["platform_id"]) for p in plan["pools"]} == {"aws-p5en-48xlarge"}
    assert unlisted(plan) == []
    assert [f for f in plan["findings"] if f["code"] == "gpu-not-in-region"] == []
    (dep,) = plan["deployments"]
    assert [r for r in dep["reasons"] if "region us-east-1" in r] == []


@pytest.mark.parametrize(
    ("provider", "gpu", "region"),
    [
        ("aws", "h100-sxm5-80gb", "sa-east-1"),  # a Region SkyPilot's EC2 catalog does not list
        ("azure", "h100-sxm5-80gb", "westeurope"),  # the Azure catalog read lists US regions only
        ("azure", "h200-sxm-141gb", "westus3"),  # ND96isr_H200_v5: no row in the file read
    ],
)
def test_what_the_source_does_not_list_is_not_checked(tmp_path: Path, provider: str, gpu: str, region: str) -> None:
    load_workload(str(write(tmp_path, provider, gpu, region)))
