"""Every bare-metal configuration is priced from a sourced record, or its missing piece is listed as unpriced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from generator import catalog
from generator.calculator.report import plan_text
from generator.catalog.records import PricedWith, PurchaseRecord
from generator.errors import CatalogError
from generator.planner import plan_workload
from generator.planner.tco import BuiltHost, purchase_price, versus_built
from generator.render import render_plan
from generator.workload import load_workload
from tests.conftest import REPO, catalog_json


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
        " (4U, 2 x Xeon, 8 double-wide PCIe GPUs) $85,271 less 8 x NVIDIA L40S at $8,500; its CPU and RAM are not published"
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


def _comparable_records() -> list[dict[str, Any]]:
    return [r for r in catalog_json("purchases")["purchases"] if "comparable" in r]


def test_the_comparable_system_estimates_are_these() -> None:
    # the sweep below checks every record with a comparable system; this pins that it finds them
    assert [r["id"] for r in _comparable_records()] == ["dell-r760-host", "dell-r760xa-host", "dell-xe7740-host"]
    r760 = next(r for r in _comparable_records() if r["id"] == "dell-r760-host")["comparable"]
    # the Precision 7960 Rack quote less its RTX 4000 Ada; its CPU, RAM and bundled services as the quote lists them
    assert (r760["usd"], r760["less"][0]["usd_each"], r760["priced_with"]) == (
        14943.56,
        1300,
        {
            "cpu": "Intel Xeon Gold 6442Y",
            "cpu_cores_each": 24,
            "cpu_count": 2,
            "includes": ["3-year ProSupport Plus", "a Windows 11 Pro for Workstations licence"],
            "ram_gb": 128,
        },
    )


def test_comparable_system_estimates_are_the_system_less_its_gpus() -> None:
    gpu_prices = {r.gpu_id: r.usd for r in catalog.purchases().values() if r.kind == "gpu"}
    for rec in _comparable_records():
        comparable = rec["comparable"]
        assert (rec["kind"], rec["estimated"], rec["basis"]) == ("host", True, "derived"), rec["id"]
        less_usd = sum(p["quantity"] * p["usd_each"] for p in comparable["less"])
        assert rec["usd"] == pytest.approx(comparable["usd"] - less_usd, abs=0.005), rec["id"]
        cited = {comparable["source"]} | {p["source"] for p in comparable["less"]}
        assert cited <= set(rec["source"]) and all(s.startswith("https://") for s in cited), rec["id"]
        for part in comparable["less"]:
            if "gpu_id" in part:  # a catalog GPU is taken out at the catalog's own price
                assert part["usd_each"] == gpu_prices[part["gpu_id"]], rec["id"]
        said = PricedWith.from_record(comparable["priced_with"]).text()
        assert catalog.purchases()[rec["id"]].stands_in == (
            f"from a comparable system, not this chassis: {comparable['system']} ${comparable['usd']:,.0f} less "
            + ", ".join(f"{p['quantity']} x {p['item']} at ${p['usd_each']:,.0f}" for p in comparable["less"])
            + f"; {said}"
        ), rec["id"]


@pytest.mark.parametrize(
    ("priced_with", "said"),
    [
        pytest.param(
            {
                "cpu": "Intel Xeon Gold 6442Y",
                "cpu_count": 2,
                "cpu_cores_each": 24,
                "ram_gb": 128,
                "includes": ["3-year ProSupport Plus"],
            },
            "priced with 2 x Intel Xeon Gold 6442Y, 48 cores, and 128 GB RAM, with 3-year ProSupport Plus",
            id="cpu-ram-and-a-service",
        ),
        pytest.param(
            {"cpu": "Intel Xeon Gold 6442Y", "cpu_count": 2, "cpu_cores_each": None, "ram_gb": None, "includes": []},
            "priced with 2 x Intel Xeon Gold 6442Y and unpublished RAM",
            id="cores-and-ram-unpublished",
        ),
        pytest.param(
            {"cpu": None, "cpu_count": None, "cpu_cores_each": None, "ram_gb": None, "includes": []},
            "its CPU and RAM are not published",
            id="nothing-published",
        ),
    ],
)
def test_the_priced_configuration_is_said_from_its_data(priced_with: dict[str, Any], said: str) -> None:
    assert PricedWith.from_record(priced_with).text() == said


HERE = "the node here has 2 x Intel Xeon Platinum 8470, 104 cores, and 256 GiB RAM"


@pytest.mark.parametrize(
    ("cores_each", "ram_gb", "includes", "verdict"),
    [
        # 2 x 24 = 48 cores < 104; 128 GB of DIMMs (binary: 128 GiB) < 256 GiB
        pytest.param(24, 128, (), "capex likely understates its CPU cores and RAM", id="fewer-cores-less-ram"),
        pytest.param(24, 256, (), "capex likely understates its CPU cores", id="fewer-cores-same-ram"),
        pytest.param(52, 128, (), "capex likely understates its RAM", id="same-cores-less-ram"),
        pytest.param(60, 512, (), "capex likely overstates its CPU cores and RAM", id="more-cores-more-ram"),
        pytest.param(60, 128, (), "capex may err either way on CPU cores and RAM", id="more-cores-less-ram"),
        pytest.param(52, 256, (), "the same CPU cores and RAM", id="the-same"),
        pytest.param(52, 256, ("support",), "the same CPU cores and RAM; bundled extras raise the price", id="same-extras"),
        pytest.param(
            24,
            128,
            ("support",),
            "capex likely understates its CPU cores and RAM; bundled extras raise the price, the other way",
            id="fewer-extras-the-other-way",
        ),
        pytest.param(
            60,
            512,
            ("support",),
            "capex likely overstates its CPU cores and RAM; bundled extras raise the price further",
            id="more-extras-further",
        ),
        pytest.param(None, 128, (), "how capex compares is not known", id="cores-unpublished"),
    ],
)
def test_the_node_built_is_compared_with_the_priced_configuration(
    cores_each: int | None, ram_gb: float, includes: tuple[str, ...], verdict: str
) -> None:
    priced = PricedWith("Intel Xeon Gold 6442Y", 2, cores_each, ram_gb, includes)
    assert versus_built(priced, BuiltHost("2 x Intel Xeon Platinum 8470", 104, 256)) == f"{HERE}: {verdict}"


def test_a_comparable_record_must_be_an_estimated_host() -> None:
    good = next(r for r in _comparable_records() if r["id"] == "dell-r760-host")
    data = catalog_json("purchases")
    validator = Draft202012Validator(json.loads((REPO / "schemas" / "catalog" / "purchases.schema.json").read_text()))
    assert not list(validator.iter_errors(data))
    for field, bad, error in (
        ("estimated", False, "$.purchases[0].estimated: True was expected"),
        ("kind", "system", "$.purchases[0].kind: 'host' was expected"),
    ):
        data["purchases"] = [good | {field: bad}]
        assert sorted(f"{e.json_path}: {e.message}" for e in validator.iter_errors(data)) == [error]
        with pytest.raises(
            ValueError, match=r"comparable: a comparable-system estimate must have estimated: true and kind: host"
        ):
            PurchaseRecord.from_record(good | {field: bad})


def test_the_catalog_loader_names_the_record_of_a_comparable_that_is_not_an_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    good = next(r for r in _comparable_records() if r["id"] == "dell-r760-host")
    monkeypatch.setattr(catalog, "_records", lambda kind: (good | {"estimated": False},))
    with pytest.raises(CatalogError) as err:
        catalog._build("purchases", PurchaseRecord.from_record)
    assert str(err.value).endswith(
        "purchases.json: dell-r760-host: bad or missing field: comparable: a comparable-system estimate must have"
        ' estimated: true and kind: host (has estimated: false, kind: "host")'
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
    " less 8 x NVIDIA L40S at $8,500; its CPU and RAM are not published; the node here has"
    " 2 x Intel Xeon 6 6745P (Granite Rapids-SP), 64 cores, and 256 GiB RAM: how capex compares is not known)"
)
R760_L40 = XE7740_L40S.replace("l40s-48gb", "l40-48gb").replace("dell-xe7740", "dell-r760")
R760_STANDS_IN = (
    "dell-r760-host $13,644 (derived, 2026-01-26; from a comparable system, not this chassis: "
    "Dell Precision 7960 Rack quote (rack-mounted) $14,944 less 1 x NVIDIA RTX 4000 Ada at $1,300; "
    "priced with 2 x Intel Xeon Gold 6442Y, 48 cores, and 128 GB RAM, with 3-year ProSupport Plus and a Windows 11 Pro"
    " for Workstations licence; the node here has 2 x Intel Xeon Platinum 8470 (Sapphire Rapids), 104 cores, and"
    " 256 GiB RAM: capex likely understates its CPU cores and RAM; bundled extras raise the price, the other way)"
)


@pytest.mark.parametrize("output", ["text", "spec.json", "SPEC.md"])
@pytest.mark.parametrize(
    ("workload", "platform_id", "stands_in"),
    [
        pytest.param(XE7740_L40S, "dell-xe7740", STANDS_IN, id="supermicro-listing-configuration-unpublished"),
        pytest.param(R760_L40, "dell-r760", R760_STANDS_IN, id="precision-quote-smaller-than-the-node"),
    ],
)
def test_a_comparable_system_estimate_is_named_and_marked_estimated_in_every_output(
    tmp_path: Path, output: str, workload: str, platform_id: str, stands_in: str
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(workload)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    pool = plan.pools[0]
    assert (pool.node.platform_id, plan.deployments[0].details["objective_used"]) == (platform_id, "cost")
    assert pool.price_estimated is True
    text = plan_text(plan) if output == "text" else render_plan(plan, loaded.workload)[output]
    if output == "spec.json":
        priced = json.loads(text)["plan"]["pools"][0]
        assert priced["price_estimated"] is True and stands_in in priced["price_basis"]
    else:
        assert stands_in in text
