"""The catalog's GCP spot rates (review80 item 14).

The price file the catalog's GCP on-demand prices cite (Cyclenerd google-cloud-pricing-cost-calculator pricing.yml
@0166a59e, "generated: Thu Mar 6 03:53:56 2025", built from the Cloud Billing SKU API) gives each machine type's
``hour_spot`` beside its ``hour``: the catalog holds them as ``"capacity_type": "spot"`` prices, and a spot pool of the
type is priced at its spot rate in the pricing region, as a workload's ``<platform>@spot`` key prices it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import render_file
from generator.errors import CatalogError
from generator.planner.tco import catalog_spot_rate
from tests.conftest import REPO

CYCLENERD = (
    "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/0166a59ebba7c36f2cc8c931d9f258dcebc44776/pricing.yml"
)

#: (platform, region) -> (the file's hour_spot, its hour: the on-demand sibling's usd, None where GCP sells the type
#: through Spot and Flex-start alone), read from the file (read_file, fix134 2026-12-06)
SPOT = {
    ("gcp-a2-highgpu-1g", "us-central1"): (1.293355, 3.673385),
    ("gcp-a2-highgpu-2g", "us-central1"): (2.58671, 7.34677),
    ("gcp-a2-highgpu-4g", "us-central1"): (5.17342, 14.69354),
    ("gcp-a2-highgpu-8g", "us-central1"): (10.34684, 29.38708),
    ("gcp-a2-megagpu-16g", "us-central1"): (19.48024, 55.739504),
    ("gcp-a2-ultragpu-1g", "us-central1"): (2.02746835616438, 5.06879789041096),
    ("gcp-a2-ultragpu-2g", "us-central1"): (4.05493671232877, 10.1375957808219),
    ("gcp-a2-ultragpu-4g", "us-central1"): (8.10987342465753, 20.2751915616438),
    ("gcp-a2-ultragpu-8g", "us-central1"): (16.2197468493151, 40.5503831232877),
    ("gcp-a3-highgpu-1g", "us-central1"): (4.42446871232877, None),
    ("gcp-a3-highgpu-1g", "us-east4"): (4.45487967123288, None),
    ("gcp-a3-highgpu-2g", "us-central1"): (8.84893742465754, None),
    ("gcp-a3-highgpu-2g", "us-east4"): (8.90975934246575, None),
    ("gcp-a3-highgpu-4g", "us-central1"): (17.6978748493151, None),
    ("gcp-a3-highgpu-4g", "us-east4"): (17.8195186849315, None),
    ("gcp-a3-highgpu-8g", "us-central1"): (35.3957496986301, 88.4899999025753),
    ("gcp-a3-megagpu-8g", "us-east4"): (37.391837369863, 92.9375881512329),
    ("gcp-g2-standard-12", "us-central1"): (0.393596, 1.000416287),
    ("gcp-g2-standard-16", "us-central1"): (0.450428, 1.147208303),
    ("gcp-g2-standard-24", "us-central1"): (0.787192, 2.000832574),
    ("gcp-g2-standard-32", "us-central1"): (0.677756, 1.734376367),
    ("gcp-g2-standard-4", "us-central1"): (0.279932, 0.706832255),
    ("gcp-g2-standard-48", "us-central1"): (1.574384, 4.001665148),
    ("gcp-g2-standard-8", "us-central1"): (0.336764, 0.853624271),
    ("gcp-g2-standard-96", "us-central1"): (3.148768, 8.003330296),
}

GKE_SPOT_A100 = """\
version: 1
name: lora16
deployments:
  - name: lora
    model: meta-llama/Llama-3.1-8B-Instruct
    capacity_type: spot
    platform: gcp-a2-megagpu-16g
    training: {method: lora, dataset_tokens: 50000000, epochs: 1, deadline_hours: 24, runs_per_month: 4}
hardware: {provider: gcp, gpus: [a100-sxm4-40gb]}
kubernetes: {gcp_project: acme-ml, location: us-central1, zone: us-central1-a}
PRICES"""


def test_every_gcp_spot_rate_is_the_files_beside_its_on_demand_sibling() -> None:
    spot = {(p.platform_id, p.region): p for p in catalog.spot_prices().values()}
    assert {key: rec.usd for key, rec in spot.items()} == {key: rate for key, (rate, _) in SPOT.items()}
    on_demand = {(p.platform_id, p.region): p.usd for p in catalog.prices().values() if p.platform_id.startswith("gcp-")}
    for key, (rate, hour) in SPOT.items():
        rec = spot[key]
        assert (rec.unit, rec.source, rec.third_party, rec.as_of) == ("hour", (CYCLENERD,), True, "2025-03-06")
        assert on_demand.get(key) == hour  # the same file's on-demand rate, already in the catalog (or none)
        assert hour is None or rate < hour
    # the 1-GPU slice is an eighth of the 8-GPU VM, to the file's digits
    assert SPOT[("gcp-a3-highgpu-1g", "us-central1")][0] * 8 == pytest.approx(SPOT[("gcp-a3-highgpu-8g", "us-central1")][0])


def test_a_spot_rate_is_no_on_demand_price() -> None:
    assert not any(p.spot for p in catalog.prices().values())
    assert all(p.spot for p in catalog.spot_prices().values())
    assert catalog_spot_rate("gcp-a2-megagpu-16g", "us-central1") == catalog.spot_prices()["gcp-a2-megagpu-16g-spot-us-central1"]
    assert catalog_spot_rate("gcp-a2-megagpu-16g", "europe-west4") is None
    assert catalog_spot_rate("gcp-g4-standard-48", "us-central1") is None  # the file predates G4: none held


def test_a_spot_rate_must_be_a_cloud_types_hourly_rate_in_a_region(monkeypatch: pytest.MonkeyPatch) -> None:
    # the file's month_spot of a2-highgpu-1g: a spot rate is held by the hour
    rec = {
        "id": "x-spot", "platform_id": "gcp-a2-highgpu-1g", "unit": "month", "usd": 944.14915, "capacity_type": "spot",
        "region": "us-central1", "source": [CYCLENERD], "third_party_source": True,
    }  # fmt: skip
    records = catalog._records
    monkeypatch.setattr(catalog, "_records", lambda kind: [rec] if kind == "prices" else records(kind))
    with pytest.raises(CatalogError, match="x-spot: capacity_type: a spot rate is a cloud instance type's"):
        catalog.spot_prices.__wrapped__()


def _plan(tmp_path: Path, prices: str = "") -> dict[str, Any]:
    path = tmp_path / "w.yaml"
    path.write_text(GKE_SPOT_A100.replace("PRICES", prices), encoding="utf-8")
    plan: dict[str, Any] = json.loads(render_file(str(path))["spec.json"])["plan"]
    return plan


def _findings(plan: dict[str, Any], code: str) -> list[str]:
    return [str(f["message"]) for f in plan["findings"] if f["code"] == code]


def test_a_gke_spot_pool_on_a2_megagpu_16g_is_priced_at_its_spot_rate(tmp_path: Path) -> None:
    """Before: $55.739504 a node-hour, the on-demand rate, with spot-priced-on-demand; now the file's $19.48024."""
    plan = _plan(tmp_path)
    (pool,) = plan["pools"]
    assert (pool["node"]["platform_id"], pool["capacity_type"]) == ("gcp-a2-megagpu-16g", "spot")
    assert pool["usd_per_hour"] == pytest.approx(19.48024 * pool["nodes"])
    assert pool["price_basis"] == "catalog gcp-a2-megagpu-16g-spot-us-central1 (hour), its spot rate"
    assert _findings(plan, "spot-priced-on-demand") == []
    (third,) = _findings(plan, "price-third-party")
    assert f"{pool['name']}: gcp-a2-megagpu-16g-spot-us-central1 $19.48/hour as of 2025-03-06 ({CYCLENERD})" in third
    assert "({gcp-a2-megagpu-16g@spot: ...})" in third
    (listed,) = _findings(plan, "cloud-list-prices")
    assert (
        "a spot pool its spot rate there (an @spot key) (in us-central1: gcp-a2-megagpu-16g@spot $19.48/h as of 2025-03-06)"
        in listed
    )


def test_the_workloads_spot_rate_still_comes_first(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "prices: {gcp-a2-megagpu-16g@spot: 15.0}\n")
    (pool,) = plan["pools"]
    assert pool["usd_per_hour"] == pytest.approx(15.0 * pool["nodes"])
    assert pool["price_basis"].endswith("spot rate prices.gcp-a2-megagpu-16g@spot")
    # a plain key is an on-demand (or committed) rate: the spot pool takes the catalog's spot rate before it
    plain = _plan(tmp_path, "prices: {gcp-a2-megagpu-16g: 40.0}\n")
    (pool,) = plain["pools"]
    assert pool["usd_per_hour"] == pytest.approx(19.48024 * pool["nodes"])


def test_the_readme_no_longer_says_the_catalog_holds_no_spot_rate() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "The catalog has no spot prices" not in readme
    assert "Google Cloud's spot rates" in readme
