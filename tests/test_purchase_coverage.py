"""Every bare-metal configuration is priced from a sourced record, or its missing piece is listed as unpriced."""

from __future__ import annotations

import pytest

from generator import catalog
from generator.planner.tco import purchase_price
from tests.conftest import catalog_json


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "gpus", "usd", "estimated"),
    [
        pytest.param("dgx-h200", "h200-sxm-141gb", 8, 77000 + 8 * 35000, True, id="dgx-h200-host-plus-gpus"),
        pytest.param("gb200-nvl72", "gb200-186gb", 72, 3_000_000, False, id="gb200-nvl72-rack-high-end"),
        pytest.param("dell-xe9680-mi300x", "mi325x-256gb", 8, 77000 + 8 * 20000, True, id="mi325x-on-xe9680"),
        pytest.param("wrx90-workstation", "a40-48gb", 1, 16028.83 + 5500, True, id="wrx90-host-components-plus-gpu"),
        pytest.param("dell-r760", "l40-48gb", 2, None, None, id="r760-host-unsourced"),
        pytest.param("dell-r760xa", "h100-nvl-94gb", 2, None, None, id="r760xa-host-withdrawn-unknown-currency"),
        pytest.param("dell-r760xa", "l40s-48gb", 4, None, None, id="r760xa-unpriced-whatever-the-gpu"),
        pytest.param("dell-xe7740", "h200-nvl-141gb", 8, None, None, id="xe7740-host-unsourced"),
        pytest.param("hgx-a100-8gpu-oem", "a100-sxm4-40gb", 8, None, None, id="generic-a100-stand-in-not-bought"),
        pytest.param("supermicro-as-4124go-nart", "a100-sxm4-40gb", 8, 77000 + 8 * 8000, True, id="a100-40gb-low-end"),
        pytest.param("supermicro-as-4124go-nart", "a100-sxm4-80gb", 8, 77000 + 8 * 15000, True, id="named-hgx-a100-derived-host"),
    ],
)
def test_new_purchase_prices(platform_id: str, gpu_id: str, gpus: int, usd: float | None, estimated: bool | None) -> None:
    got = purchase_price(catalog.platforms()[platform_id], catalog.gpus()[gpu_id], gpus)
    if usd is None:
        assert isinstance(got, str)
        why = catalog.unpriced()
        assert why[platform_id if platform_id in why else gpu_id] in got  # the plan says why: searched for, not found
        return
    assert not isinstance(got, str)
    assert (got[0], got[2]) == (usd, estimated)


def _configurations() -> list[tuple[str, str, int]]:
    return [
        (p.id, gpu_id, count)
        for p in catalog.platforms().values()
        if p.provider == "baremetal"
        for gpu_id in p.gpu_ids
        for count in p.gpu_counts
    ]


def test_every_unpriced_configuration_names_a_searched_for_missing_piece() -> None:
    why = catalog.unpriced()
    for platform_id, gpu_id, count in _configurations():
        got = purchase_price(catalog.platforms()[platform_id], catalog.gpus()[gpu_id], count)
        if isinstance(got, str):
            assert platform_id in why or gpu_id in why, f"{platform_id} x {gpu_id}: {got}"
            assert any(reason in got for reason in why.values()), got


def test_unpriced_entries_are_not_also_priced() -> None:
    data = catalog_json("purchases")
    ids = [u["id"] for u in data["unpriced"]]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    priced_hosts = {r.platform_id for r in catalog.purchases().values() if r.kind in ("host", "system")}
    priced_gpus = {r.gpu_id for r in catalog.purchases().values() if r.kind == "gpu"}
    for entry in data["unpriced"]:
        assert entry["research_notes"], entry["id"]
        if entry["kind"] == "host":
            assert entry["platform_id"] not in priced_hosts and entry["platform_id"] in catalog.platforms()
        else:
            assert entry["gpu_id"] not in priced_gpus and entry["gpu_id"] in catalog.gpus()


def test_every_new_record_is_dated_and_sourced() -> None:
    for rec in catalog.purchases().values():
        assert rec.source and all(s.startswith(("https://", "github:")) for s in rec.source), rec.id
        assert rec.range_end in ("low", "high", "single")


def test_purchase_listing_shows_priced_and_unpriced() -> None:
    from generator.calculator.catalog_listing import listing_rows

    rows = {r["id"]: r for r in listing_rows("purchases")}
    assert rows["gb200-nvl72-system"]["basis"] == "published analysis, high end"
    assert rows["gb200-nvl72-system"]["source"].startswith("https://")
    assert rows["dell-r760-unpriced"]["usd"] is None and rows["dell-r760-unpriced"]["source"] == "unsourced"


def test_component_estimates_sum_their_sourced_parts() -> None:
    data = catalog_json("purchases")
    estimates = [r for r in data["purchases"] if "components" in r]
    assert {r["id"] for r in estimates} >= {"wrx90-workstation-host"}
    for rec in estimates:
        assert rec["estimated"] is True and rec["kind"] == "host", rec["id"]
        parts = rec["components"]
        assert rec["usd"] == pytest.approx(sum(p["quantity"] * p["usd_each"] for p in parts), abs=0.005)
        assert all(p["source"].startswith("https://") and p["as_of"] for p in parts), rec["id"]
        assert sorted({p["source"] for p in parts}) == sorted(rec["source"]), rec["id"]
