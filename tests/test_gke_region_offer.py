"""fix169: a GKE cluster's regional location without a zone is checked against every zone of its region.

fix164 checked only a zone (``kubernetes.zone`` or a zonal ``location``); a regional ``location`` with no zone (where no
ContainerNodePool is rendered, so no zone is asked for) planned a machine type none of the region's zones offers. Now
such a type is left out of the plan (info ``gpu-not-in-zone`` naming where it is), a region offering none of the
allowed types is refused at ``kubernetes.location``, and a pinned ``platform`` or a reservation of such a type at its
line. Each deployment's reasons name the types its zone (or region) lacks (the plan said it only once). Zones from
``generator/catalog/gpu_zones.json`` (SkyPilot's catalog of the Compute Engine API, v9 rows read 2026-12-07).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_as_deployed, plan_file, render_file
from generator.catalog.gpu_zones import NOT_OFFERED, OFFERED, UNSOURCED, region_offer
from generator.errors import InputError, MultipleInputError, SpecgenError
from generator.workload import load_workload
from tests.test_gke_node_pool_fields import applied_pools, terraform_dir, terraform_env

__all__ = ["terraform_env"]  # the fixture, used by name

#: (machine type, region, offer): each the union of the type's zone rows of that region in gpu_zones.json.
REGION_OFFERS = [
    ("gcp-a3-ultragpu-8g", "us-central1", OFFERED),  # us-central1-b only
    ("gcp-a3-ultragpu-8g", "us-west2", NOT_OFFERED),
    ("gcp-a3-highgpu-8g", "us-south1", NOT_OFFERED),
    ("gcp-a3-highgpu-8g", "europe-west8", NOT_OFFERED),
    ("gcp-a3-highgpu-4g", "europe-west8", NOT_OFFERED),  # fix174: v8 listed europe-west8-c for it, v9 for no A3 High
    ("gcp-a4-highgpu-8g", "europe-north1", OFFERED),  # europe-north1-b (and, since v9, -c)
    ("gcp-a4-highgpu-8g", "us-south1", OFFERED),
    ("gcp-g4-standard-48", "us-west2", NOT_OFFERED),  # G4: v9 catalog, fix169
    ("gcp-g4-standard-48", "us-south1", OFFERED),
    ("gcp-no-such-type", "us-west2", UNSOURCED),  # no record: not checked
]


@pytest.mark.parametrize(("platform_id", "region", "offer"), REGION_OFFERS, ids=[f"{p}@{r}" for p, r, _ in REGION_OFFERS])
def test_region_offer_table(platform_id: str, region: str, offer: str) -> None:
    assert region_offer(platform_id, region) == offer


SERVICE = """\
version: 1
name: regions
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
{pin}    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 350
      requests_per_second: 20
      slo: {{ttft_p95_ms: 2000, tpot_ms: 40}}
hardware:
  provider: gcp
{gpus}objective: cost
outputs: [{outputs}]
kubernetes:
  gcp_project: acme-inference
{place}"""


def write(tmp_path: Path, *, place: str, gpus: str = "", pin: str = "", outputs: str = "terraform") -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(place=place, gpus=gpus, pin=pin, outputs=outputs), encoding="utf-8")
    return path


def refusals(path: Path) -> list[SpecgenError]:
    with pytest.raises((InputError, MultipleInputError)) as info:
        load_workload(str(path))
    exc = info.value
    return list(exc.errors) if isinstance(exc, MultipleInputError) else [exc]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_a_region_without_the_only_allowed_gpu_is_refused_at_location(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-west2\n", gpus="  gpus: [h200-sxm-141gb]\n")
    (err,) = refusals(path)
    assert f"w.yaml:{line_of(path, 'location: us-west2')}:" in str(err)
    assert "no zone of region us-west2 offers any of the GPU machine types hardware.gpus allows (gcp-a3-ultragpu-8g)" in str(err)
    assert "h200-sxm-141gb in no zone of us-west2 (elsewhere: " in str(err)


def test_a_pinned_type_no_zone_of_the_region_offers_is_refused_at_platform(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-west2\n", pin="    platform: gcp-a3-ultragpu-8g\n")
    (err,) = refusals(path)
    assert f"w.yaml:{line_of(path, 'platform: gcp-a3-ultragpu-8g')}:" in str(err)
    assert "'gcp-a3-ultragpu-8g' is not offered in any zone of region us-west2 (kubernetes.location)" in str(err)


def test_a_reservation_no_zone_of_the_region_offers_is_refused_at_its_key(tmp_path: Path) -> None:
    place = "  location: us-west2\n  reservations:\n    gcp-a3-ultragpu-8g: r1\n"
    path = write(tmp_path, place=place)
    errors = refusals(path)
    assert any(
        f"w.yaml:{line_of(path, 'gcp-a3-ultragpu-8g:')}:" in str(e)
        and "a reservation of 'gcp-a3-ultragpu-8g' cannot be in any zone of region us-west2" in str(e)
        for e in errors
    ), [str(e) for e in errors]


@pytest.mark.parametrize("place", ["  location: us-central1\n", "  location: us-south1\n"])
def test_a_region_offering_an_allowed_type_loads(tmp_path: Path, place: str) -> None:
    load_workload(str(write(tmp_path, place=place)))


def planned(path: Path) -> dict[str, Any]:
    plan: dict[str, Any] = plan_file(str(path))[1].to_dict()
    return plan


def test_a_region_without_the_cheapest_gpu_plans_the_next_and_says_why(tmp_path: Path) -> None:
    """us-south1 offers no A3 High in any zone: the 70B FP8 service (2 x a3-highgpu-8g in us-central1) plans another."""
    plan = planned(write(tmp_path, place="  location: us-south1\n"))
    platforms = sorted({str(p["node"]["platform_id"]) for p in plan["pools"]})
    assert platforms and "gcp-a3-highgpu-8g" not in platforms
    assert all(region_offer(p, "us-south1") != NOT_OFFERED for p in platforms)
    said = [f for f in plan["findings"] if f["code"] == "gpu-not-in-zone"]
    h100 = next(f for f in said if f["message"].startswith("h100-sxm5-80gb ("))
    assert h100["path"] == "kubernetes.location"
    assert "no zone of region us-south1 offers them" in h100["message"]
    (dep,) = plan["deployments"]
    (reason,) = [r for r in dep["reasons"] if r.startswith("not planned: ")]
    assert "h100-sxm5-80gb" in reason
    assert "(no zone of region us-south1 offers them; info gpu-not-in-zone)" in reason


def test_each_deployment_names_the_types_its_zone_lacks(tmp_path: Path) -> None:
    """us-central1-f offers no A3 High: the deployment's reasons say so, not only the plan's info (fix169 item 2)."""
    plan = planned(write(tmp_path, place="  location: us-central1\n  zone: us-central1-f\n", outputs="kubernetes"))
    (dep,) = plan["deployments"]
    (reason,) = [r for r in dep["reasons"] if r.startswith("not planned: ")]
    assert "h100-sxm5-80gb" in reason
    assert reason.endswith("(zone us-central1-f does not offer them; info gpu-not-in-zone)")


def test_a_pinned_deployment_carries_no_zone_reason(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-central1\n  zone: us-central1-b\n", pin="    platform: gcp-a3-highgpu-8g\n")
    (dep,) = planned(path)["deployments"]
    assert not [r for r in dep["reasons"] if r.startswith("not planned: ")]


# ---------------------------------------------------------------- Terraform's node_locations of a regional pool


def tf_pools(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    pools: dict[str, dict[str, Any]] = json.loads(files["terraform/specgen.auto.tfvars.json"])["gke_node_pools"]
    return pools


def regional_warnings(path: Path) -> list[dict[str, Any]]:
    plan = plan_as_deployed(str(path))[1].to_dict()
    return [f for f in plan["findings"] if f["code"] == "gke-regional-node-count"]


def test_a_regional_pool_lists_only_the_zones_offering_its_type(tmp_path: Path) -> None:
    """Unset, a pool's node_locations were the cluster's zones, a zone lacking the type among them (the pool fails).

    us-central1: a3-highgpu-8g is offered in zones a, b and c (not f); node_count is per zone, which a warning says.
    """
    path = write(tmp_path, place="  location: us-central1\n")
    (pool,) = tf_pools(render_file(str(path))).values()
    assert pool["node_config"]["machine_type"] == "a3-highgpu-8g"
    assert pool["node_locations"] == ["us-central1-a", "us-central1-b", "us-central1-c"]
    (warning,) = regional_warnings(path)
    assert warning["level"] == "warning" and warning["path"] == "kubernetes.location"
    assert "3 zones of us-central1 that offer gcp-a3-highgpu-8g" in warning["message"]
    assert f"{pool['node_count']} node(s) in each" in warning["message"]


def test_a_regional_pool_of_a_one_zone_type_gets_that_zone_and_no_warning(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-central1\n", pin="    platform: gcp-a3-ultragpu-8g\n")
    (pool,) = tf_pools(render_file(str(path))).values()
    assert pool["node_locations"] == ["us-central1-b"]
    assert regional_warnings(path) == []


def test_a_zone_set_is_the_pools_one_zone(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-central1\n  zone: us-central1-c\n")
    (pool,) = tf_pools(render_file(str(path))).values()
    assert pool["node_locations"] == ["us-central1-c"]
    assert regional_warnings(path) == []


@pytest.mark.usefixtures("terraform_env")
def test_terraform_gives_the_regional_zones_unless_gke_zone_is_set(tmp_path: Path) -> None:
    files = render_file(str(write(tmp_path, place="  location: us-central1\n")))
    root = terraform_dir(files, tmp_path / "tf")
    (pool,) = applied_pools(root).values()
    assert pool["node_locations"] == ["us-central1-a", "us-central1-b", "us-central1-c"]
    (pool,) = applied_pools(root, {"gke_zone": "us-central1-a"}).values()
    assert pool["node_locations"] == ["us-central1-a"]


def test_a_pool_priced_in_another_region_says_its_region_offers_it(tmp_path: Path) -> None:
    """price-region said "whether europe-west1 offers a3-highgpu-8g at all is not checked" for a regional location."""
    path = write(tmp_path, place="  location: europe-west1\n", gpus="  gpus: [h100-sxm5-80gb]\n")
    (found,) = [f for f in planned(path)["findings"] if f["code"] == "price-region"]
    assert "and region europe-west1 (a zone of it) offers a3-highgpu-8g (generator/catalog/gpu_zones.json: " in found["message"]
    assert "not checked" not in found["message"]
