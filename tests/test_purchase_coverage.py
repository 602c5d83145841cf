"""Every bare-metal configuration is priced from a sourced record, or its missing piece is listed as unpriced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.report import plan_text
from generator.planner import plan_workload
from generator.planner.tco import purchase_price
from generator.render import render_plan
from generator.workload import load_workload
from tests.conftest import catalog_json


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "gpus", "usd", "estimated"),
    [
        pytest.param("dgx-h200", "h200-sxm-141gb", 8, 77000 + 8 * 35000, True, id="dgx-h200-host-plus-gpus"),
        pytest.param("gb200-nvl72", "gb200-186gb", 72, 3_000_000, False, id="gb200-nvl72-rack-high-end"),
        pytest.param("dell-xe9680-mi300x", "mi325x-256gb", 8, 77000 + 8 * 20000, True, id="mi325x-on-xe9680"),
        pytest.param("wrx90-workstation", "a40-48gb", 1, 16028.83 + 5500, True, id="wrx90-host-components-plus-gpu"),
        # comparable-system hosts: a Precision 7960 Rack quote less its RTX 4000 Ada; a Supermicro 8 x L40S listing less its L40S
        pytest.param("dell-r760", "l40-48gb", 2, 14943.56 - 1300 + 2 * 8174, True, id="r760-comparable-host"),
        pytest.param("dell-r760xa", "l40s-48gb", 4, 85271 - 8 * 8500 + 4 * 8500, True, id="r760xa-comparable-host"),
        pytest.param("dell-xe7740", "h200-nvl-141gb", 8, 85271 - 8 * 8500 + 8 * 30000, True, id="xe7740-comparable-host"),
        pytest.param("dell-xe7740", "l40s-48gb", 8, 85271, True, id="xe7740-with-8-l40s-is-the-listed-system"),
        pytest.param("dell-r760xa", "h100-nvl-94gb", 2, 85271 - 8 * 8500 + 2 * 32200, True, id="h100-nvl-us-retail-listing"),
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
    assert got[0] == pytest.approx(usd, abs=0.005) and got[2] == estimated


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
    unpriced = rows["hgx-a100-8gpu-oem-unpriced"]
    assert unpriced["usd"] is None and unpriced["source"] == "unsourced"
    assert rows["dell-xe7740-host"]["estimated"] is True
    assert rows["dell-xe7740-host"]["basis"] == (
        "derived; from a comparable system, not this chassis: Supermicro SYS-421GE-TNRT-02-G1 with 8 x NVIDIA L40S"
        " (4U, 2 x Xeon, 8 double-wide PCIe GPUs) $85,271 less 8 x NVIDIA L40S at $8,500"
    )


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


@pytest.mark.parametrize(
    ("record_id", "system_usd", "less_usd", "usd"),
    [
        pytest.param("dell-r760-host", 14943.56, 1 * 1300, 13643.56, id="r760-precision-7960-rack-quote"),
        pytest.param("dell-r760xa-host", 85271, 8 * 8500, 17271, id="r760xa-supermicro-8-l40s-listing"),
        pytest.param("dell-xe7740-host", 85271, 8 * 8500, 17271, id="xe7740-supermicro-8-l40s-listing"),
    ],
)
def test_comparable_system_estimates_are_the_system_less_its_gpus(
    record_id: str, system_usd: float, less_usd: float, usd: float
) -> None:
    rec = next(r for r in catalog_json("purchases")["purchases"] if r["id"] == record_id)
    comparable = rec["comparable"]
    assert (rec["kind"], rec["estimated"], rec["basis"]) == ("host", True, "derived")
    assert (comparable["usd"], sum(p["quantity"] * p["usd_each"] for p in comparable["less"])) == (system_usd, less_usd)
    assert rec["usd"] == pytest.approx(usd, abs=0.005)
    assert rec["usd"] == pytest.approx(comparable["usd"] - less_usd, abs=0.005)
    cited = {comparable["source"]} | {p["source"] for p in comparable["less"]}
    assert cited <= set(rec["source"]) and all(s.startswith("https://") for s in cited)
    gpu_prices = {r.gpu_id: r.usd for r in catalog.purchases().values() if r.kind == "gpu"}
    for part in comparable["less"]:
        if "gpu_id" in part:  # a catalog GPU is taken out at the catalog's own price
            assert part["usd_each"] == gpu_prices[part["gpu_id"]]
    assert catalog.purchases()[record_id].stands_in == (
        f"from a comparable system, not this chassis: {comparable['system']} ${comparable['usd']:,.0f} less "
        + ", ".join(f"{p['quantity']} x {p['item']} at ${p['usd_each']:,.0f}" for p in comparable["less"])
    )


XE7740_L40S = """\
version: 1
name: t
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 2}
hardware:
  gpus: [l40s-48gb]
  provider: baremetal
  platforms: [dell-xe7740]
"""
STANDS_IN = (
    "dell-xe7740-host $17,271 (derived, 2026-10-01; from a comparable system, not this chassis: "
    "Supermicro SYS-421GE-TNRT-02-G1 with 8 x NVIDIA L40S (4U, 2 x Xeon, 8 double-wide PCIe GPUs) $85,271"
    " less 8 x NVIDIA L40S at $8,500)"
)


@pytest.mark.parametrize("output", ["text", "spec.json", "SPEC.md"])
def test_a_comparable_system_estimate_is_named_and_marked_estimated_in_every_output(tmp_path: Path, output: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(XE7740_L40S)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    pool = plan.pools[0]
    assert (pool.node.platform_id, plan.deployments[0].details["objective_used"]) == ("dell-xe7740", "cost")
    assert pool.price_estimated is True
    text = plan_text(plan) if output == "text" else render_plan(plan, loaded.workload)[output]
    if output == "spec.json":
        priced = json.loads(text)["plan"]["pools"][0]
        assert priced["price_estimated"] is True and STANDS_IN in priced["price_basis"]
    else:
        assert STANDS_IN in text
