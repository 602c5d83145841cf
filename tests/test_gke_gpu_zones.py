"""fix164: every GKE GPU pool runs in one zone, and the zone must offer the planned machine type.

A G4 or A3 Ultra pool in a zone that does not offer it rendered, passed review and failed at ``terraform apply``.
The zones of each GCP machine type are ``generator/catalog/gpu_zones.json`` (SkyPilot's catalog of the Compute Engine
API: every family's rows from its v9 catalog at one commit, read 2026-12-07 by fix174; fix164 read v8's). A zone that
offers none of the allowed types is refused at the field that names it; a pinned type the zone lacks at the
deployment's ``platform``; otherwise the planner leaves the types the zone lacks out, says so (info
``gpu-not-in-zone``) and plans the next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.catalog.gpu_zones import NOT_OFFERED, OFFERED, UNSOURCED, offering_zones, zone_offer
from generator.errors import InputError, MultipleInputError, SpecgenError
from generator.workload import load_workload
from generator.workload.gke_zone import GCP_REGIONS, place_problem, region_of

ZONES_FILE = Path(__file__).resolve().parent.parent / "generator" / "catalog" / "gpu_zones.json"

#: The one catalog revision every GCP zone record cites (fix174; fix164 read v8 at 006059e0, fix169 G4 from this one).
CATALOG_REVISION = "2c3d7ea7d76bf84cf80d382e946c1609571485fd"
CATALOG_URL = f"https://github.com/skypilot-org/skypilot-catalog/blob/{CATALOG_REVISION}/catalogs/v9/gcp/vms.csv"

#: (machine type, zone, what the source says): each row a vms.csv row present or absent at :data:`CATALOG_URL`.
OFFERS = [
    ("gcp-a3-ultragpu-8g", "us-central1-b", OFFERED),
    ("gcp-a3-ultragpu-8g", "us-central1-a", NOT_OFFERED),  # A3 Ultra: one zone of us-central1
    ("gcp-a3-ultragpu-8g", "us-south1-b", OFFERED),
    ("gcp-a4-highgpu-8g", "us-central1-b", OFFERED),
    ("gcp-a4-highgpu-8g", "us-central1-c", NOT_OFFERED),
    ("gcp-a4-highgpu-8g", "us-west3-c", OFFERED),
    ("gcp-a3-highgpu-8g", "us-central1-a", OFFERED),
    ("gcp-a3-highgpu-8g", "europe-west8-c", NOT_OFFERED),
    # v8 (006059e0, 8427bbff) listed europe-west8-c for a3-highgpu-1g/2g/4g; v9 lists it for no A3 High size
    ("gcp-a3-highgpu-4g", "europe-west8-c", NOT_OFFERED),
    ("gcp-a3-highgpu-1g", "europe-west8-c", NOT_OFFERED),
    ("gcp-a3-highgpu-1g", "europe-west9-c", OFFERED),
    ("gcp-a4-highgpu-8g", "europe-north1-c", OFFERED),  # new in v9 (v8: europe-north1-b alone)
    ("gcp-a4-highgpu-8g", "europe-north1-b", OFFERED),
    ("gcp-a3-megagpu-8g", "asia-south1-c", NOT_OFFERED),
    ("gcp-a3-megagpu-8g", "us-east4-a", OFFERED),
    ("gcp-a2-highgpu-1g", "us-central1-f", OFFERED),
    ("gcp-a2-megagpu-16g", "us-west1-b", NOT_OFFERED),
    ("gcp-a2-ultragpu-8g", "us-central1-b", NOT_OFFERED),
    ("gcp-a2-ultragpu-1g", "us-east5-b", OFFERED),
    ("gcp-g2-standard-4", "us-east1-d", OFFERED),
    ("gcp-g2-standard-96", "us-central1-f", NOT_OFFERED),
    ("gcp-g2-standard-48", "me-central2-c", OFFERED),
    # G4: v8 had no g4 row (fix164 left it unchecked; fix169 read these rows)
    ("gcp-g4-standard-48", "us-central1-a", NOT_OFFERED),
    ("gcp-g4-standard-48", "us-central1-f", OFFERED),
    ("gcp-g4-standard-384", "asia-east1-a", OFFERED),
    ("gcp-g4-standard-384", "europe-west8-c", OFFERED),  # the 8-GPU type alone has europe-west8-c
    ("gcp-g4-standard-96", "europe-west8-c", NOT_OFFERED),
]


@pytest.mark.parametrize(("platform_id", "zone", "offer"), OFFERS, ids=[f"{p}@{z}" for p, z, _ in OFFERS])
def test_zone_offer_table(platform_id: str, zone: str, offer: str) -> None:
    assert zone_offer(platform_id, zone) == offer


def test_every_gcp_machine_type_has_one_zone_record() -> None:
    """A GCP type added to platforms.json without a zone record would be planned anywhere, unchecked, in silence."""
    records = json.loads(ZONES_FILE.read_text(encoding="utf-8"))["gpu_zones"]
    covered = [p for rec in records for p in rec["platform_ids"]]
    gcp = sorted(p.id for p in catalog.platforms().values() if p.provider == "gcp")
    assert sorted(covered) == gcp
    assert len(covered) == len(set(covered))


def test_every_gcp_zone_record_cites_the_same_catalog_revision() -> None:
    """fix174: G4's zones came from the v9 catalog while every other family's came from a v8 snapshot, so a zone Google
    added since (A4's europe-north1-c) read as "not offered". One revision for all: the first source of every record is
    the same commit-pinned vms.csv, the research notes name that commit, and the record was read on or after it."""
    records = json.loads(ZONES_FILE.read_text(encoding="utf-8"))["gpu_zones"]
    assert {rec["source"][0] for rec in records} == {CATALOG_URL}
    for rec in records:
        assert CATALOG_REVISION in rec["research_notes"][0], rec["id"]
        assert rec["read"] >= "2026-12-07", rec["id"]


def test_a_record_holds_machine_types_of_one_zone_list() -> None:
    """Records merge the sizes of a family that list the same zones (A3 High's four since v9): no two records list the
    same zones for one family's types, so a change of one size's zones is one record's edit."""
    records = json.loads(ZONES_FILE.read_text(encoding="utf-8"))["gpu_zones"]
    zone_lists = [tuple(rec["zones"]) for rec in records]
    assert len(zone_lists) == len(set(zone_lists))
    assert offering_zones("gcp-a3-highgpu-1g") == offering_zones("gcp-a3-highgpu-8g")


def test_every_listed_zone_is_a_zone_specgen_accepts() -> None:
    zones = {z for p in catalog.platforms().values() if p.provider == "gcp" for z in offering_zones(p.id) or ()}
    assert zones
    assert sorted(z for z in zones if region_of(z) not in GCP_REGIONS or place_problem(z)) == []


def test_every_gcp_type_has_a_sourced_zone_list() -> None:
    """Which types go unchecked is a choice the report states: none since fix169 sourced G4's zones (a type without a
    record, or a record with ``zones: null``, would be planned anywhere, unchecked: UNSOURCED)."""
    unchecked = sorted(p.id for p in catalog.platforms().values() if p.provider == "gcp" and offering_zones(p.id) is None)
    assert unchecked == []
    assert zone_offer("gcp-no-such-type", "us-central1-a") == UNSOURCED


SERVICE = """\
version: 1
name: zones
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
outputs: [kubernetes]
kubernetes:
  gcp_project: acme-inference
{place}"""


def write(tmp_path: Path, *, place: str, gpus: str = "", pin: str = "") -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(place=place, gpus=gpus, pin=pin), encoding="utf-8")
    return path


def refusals(path: Path) -> list[SpecgenError]:
    with pytest.raises((InputError, MultipleInputError)) as info:
        load_workload(str(path))
    exc = info.value
    return list(exc.errors) if isinstance(exc, MultipleInputError) else [exc]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_a_zone_without_the_only_allowed_gpu_is_refused_at_kubernetes_zone(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-central1\n  zone: us-central1-a\n", gpus="  gpus: [h200-sxm-141gb]\n")
    (err,) = refusals(path)
    assert err.location is not None
    assert (err.location.line, err.location.column) == (line_of(path, "zone: us-central1-a"), 9)
    assert "kubernetes.zone" in str(err)
    assert "zone us-central1-a offers none of the GPU machine types hardware.gpus allows (gcp-a3-ultragpu-8g)" in str(err)
    assert "h200-sxm-141gb in us-central1-b (https://github.com/skypilot-org/skypilot-catalog/" in str(err)


def test_a_zonal_location_is_refused_at_kubernetes_location(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: europe-west4-c\n", gpus="  gpus: [b200-sxm-180gb]\n")
    (err,) = refusals(path)
    assert err.location is not None
    assert err.location.line == line_of(path, "location: europe-west4-c")
    assert "set kubernetes.location to a zone that offers one" in str(err)
    assert "b200-sxm-180gb in europe-west4-b" in str(err)


def test_a_gpu_no_zone_of_the_region_offers_names_the_zones_elsewhere(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-west2\n  zone: us-west2-a\n", gpus="  gpus: [h200-sxm-141gb]\n")
    (err,) = refusals(path)
    assert "h200-sxm-141gb in no zone of us-west2 (elsewhere: asia-south1-b, asia-south2-c" in str(err)


def test_a_pinned_type_the_zone_lacks_is_refused_at_the_pin(tmp_path: Path) -> None:
    path = write(tmp_path, place="  location: us-central1\n  zone: us-central1-a\n", pin="    platform: gcp-a4-highgpu-8g\n")
    (err,) = refusals(path)
    assert err.location is not None
    assert err.location.line == line_of(path, "platform: gcp-a4-highgpu-8g")
    assert "'gcp-a4-highgpu-8g' is not offered in zone us-central1-a (kubernetes.zone)" in str(err)


def in_zone(zone: str) -> str:
    """The ``kubernetes`` lines that put the pools in ``zone`` of its region."""
    return f"  location: {region_of(zone)}\n  zone: {zone}\n"


def test_a_reservation_of_a_type_the_zone_lacks_is_refused_at_its_key(tmp_path: Path) -> None:
    place = in_zone("us-central1-a") + "  reservations: {gcp-a3-ultragpu-8g: h200-res}\n"
    path = write(tmp_path, place=place, gpus="  gpus: [h200-sxm-141gb, h100-sxm5-80gb]\n")
    (err,) = refusals(path)
    assert err.location is not None
    assert (err.location.line, err.location.column) == (line_of(path, "reservations:"), 18)
    assert "a reservation of 'gcp-a3-ultragpu-8g' cannot be in zone us-central1-a" in str(err)


@pytest.mark.parametrize(
    ("place", "gpus"),
    [
        pytest.param(in_zone("us-central1-b"), "  gpus: [h200-sxm-141gb]\n", id="offered"),
        pytest.param(in_zone("us-central1-f"), "  gpus: [rtx-pro-6000-blackwell-96gb]\n", id="unsourced"),
        pytest.param(in_zone("us-central1-a"), "  gpus: [h200-sxm-141gb, h100-sxm5-80gb]\n", id="one-offered"),
    ],
)
def test_a_zone_offering_an_allowed_type_loads(tmp_path: Path, place: str, gpus: str) -> None:
    load_workload(str(write(tmp_path, place=place, gpus=gpus)))


def test_other_providers_are_not_checked(tmp_path: Path) -> None:
    path = tmp_path / "aws.yaml"
    text = SERVICE.format(place="", gpus="", pin="").replace("provider: gcp", "provider: aws")
    path.write_text(text.replace("  gcp_project: acme-inference\n", "  location: us-east-1\n"), encoding="utf-8")
    load_workload(str(path))


def chosen(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    plan: dict[str, Any] = plan_file(str(path))[1].to_dict()
    platforms = sorted({str(p["node"]["platform_id"]) for p in plan["pools"]})
    return platforms, [f for f in plan["findings"] if f["code"] == "gpu-not-in-zone"]


def test_a_zone_without_the_cheapest_gpu_plans_the_next(tmp_path: Path) -> None:
    """us-central1-b: two a3-highgpu-8g (the cheapest); us-central1-f offers no A3 High: the plan takes another type."""
    where_b = tmp_path / "b"
    where_f = tmp_path / "f"
    where_b.mkdir()
    where_f.mkdir()
    in_b, _ = chosen(write(where_b, place="  location: us-central1\n  zone: us-central1-b\n"))
    assert in_b == ["gcp-a3-highgpu-8g"]
    in_f, said = chosen(write(where_f, place="  location: us-central1\n  zone: us-central1-f\n"))
    assert in_f and "gcp-a3-highgpu-8g" not in in_f
    assert all(zone_offer(p, "us-central1-f") != NOT_OFFERED for p in in_f)
    h100 = next(f for f in said if f["message"].startswith("h100-sxm5-80gb ("))
    assert h100["path"] == "kubernetes.zone"
    assert "zone us-central1-f does not offer them" in h100["message"]
    assert "offers them in us-central1-a, us-central1-b and us-central1-c" in h100["message"]


def test_a_pool_priced_in_another_region_says_its_zone_offers_it(tmp_path: Path) -> None:
    """price-region said "whether europe-west1 offers a3-highgpu-8g at all is not checked": on GKE it now is."""
    path = write(tmp_path, place=in_zone("europe-west1-b"), gpus="  gpus: [h100-sxm5-80gb]\n")
    plan: dict[str, Any] = plan_file(str(path))[1].to_dict()
    (found,) = [f for f in plan["findings"] if f["code"] == "price-region"]
    assert "the cluster is in europe-west1," in found["message"]
    assert "and zone europe-west1-b offers a3-highgpu-8g (generator/catalog/gpu_zones.json: https://" in found["message"]
    assert "not checked" not in found["message"]


def test_a_region_the_catalog_revision_lists_is_accepted() -> None:
    """fix174: the v9 catalog lists asia-southeast3's zones a-c (n4 machine types), a region the regions page as read
    did not name: a GKE location there was refused as "not a Google Cloud region". No GPU type is listed there."""
    assert place_problem("asia-southeast3") is None
    assert place_problem("asia-southeast3-a") is None
    assert "asia-southeast3" in GCP_REGIONS
    assert not any(region_of(z) == "asia-southeast3" for p in catalog.platforms().values() for z in offering_zones(p.id) or ())
