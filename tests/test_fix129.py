"""fix129: newuser80 items 4 and 9 (a bare-metal buyer's trial).

Item 4: one $77,000 host price, derived from an 8-GPU HGX quote less its GPUs, priced every 4- and 8-GPU chassis;
the plan called it "not sourced" beside a catalog record citing the quote, and did not say that the choice of 3 x Dell
XE8640 over 2 x DGX H100 ($687/month, 3.5%) rests on it. A derived host now names its derivation (``derived_from``,
checked against the quote and the parts taken out), and a choice resting on one says how far the price would have to
move for the runner-up to win.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.planner.plan import Plan
from generator.planner.tco import _cite

PURCHASES = Path(catalog.__file__).parent / "purchases.json"


def _records() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in json.loads(PURCHASES.read_text(encoding="utf-8"))["purchases"]}


DERIVED = [r for r in _records().values() if r.get("derived_from")]


def test_the_shared_77000_hosts_all_name_their_derivation() -> None:
    shared = {i for i, r in _records().items() if r["kind"] == "host" and r["basis"] == "derived" and r["usd"] == 77000}
    assert shared == {r["id"] for r in DERIVED}
    assert "dell-xe8640-host" in shared


@pytest.mark.parametrize("rec", DERIVED, ids=[r["id"] for r in DERIVED])
def test_a_derived_host_is_its_quote_less_the_parts_named(rec: dict[str, Any]) -> None:
    records = _records()
    derived = rec["derived_from"]
    quote = records[derived["record"]]
    assert quote["kind"] == "system" and not quote["estimated"]
    assert derived["usd"] == quote["usd"]
    assert quote["source"][0] in rec["source"]  # the quote's own page is the derived record's source
    less = 0
    for part in derived["less"]:
        (card,) = [r for r in records.values() if r["id"] == part["item"]]
        assert card["usd"] == part["usd_each"]
        assert part["quantity"] == quote["gpu_count"] and card["gpu_id"] == quote["gpu_id"]
        less += part["quantity"] * part["usd_each"]
    assert rec["usd"] == derived["usd"] - less
    assert "usd" in rec["unsourced_fields"]  # the figure is no quote for this chassis
    assert any("derivation" in note for note in rec["research_notes"])


def test_a_derived_host_is_cited_as_derived_not_as_unsourced() -> None:
    said = _cite(catalog.purchases()["dell-xe8640-host"])
    assert "not sourced" not in said
    assert (
        "derived from dell-xe9680-hgx-h100-h200-h100-quote $317,000 less 8 x h100-sxm5-80gb-gpu at $30,000: not a quote "
        "for this chassis, and the same whatever its RAM and CPUs" in said
    )


W1 = """\
version: 1
name: chat70b-colo
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 350
      requests_per_second: 20
      slo: {ttft_p95_ms: 1000, tpot_ms: 40}
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb, h200-sxm-141gb]
  rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 32, circuits: 2, redundancy: 2N}
  max_racks: 2
outputs: [terraform, ansible, kubernetes]
"""


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_file(str(path))[1]


def test_a_choice_resting_on_a_derived_host_price_says_by_how_much(tmp_path: Path) -> None:
    plan = _plan(tmp_path, W1)
    (dep,) = plan.deployments
    (said,) = [r for r in dep.reasons if "rests on a derived host price" in r]
    # 3 x XE8640 at $19,879/month against 2 x DGX H100 at $20,566/month: $687 x 36 months / 3 servers = $8,242
    assert "dell-xe8640-host $77,000 (derived from dell-xe9680-hgx-h100-h200-h100-quote" in said
    assert (
        "runner-up 4 x TP4 on 2 x dgx-h100 (8 x h100-sxm5-80gb) ($687/month, 3.5%, above the choice) would win were it "
        "$8,242 (11%) more a server (the least move over the runners-up)" in said
    )


def test_a_quoted_chassis_price_is_no_derived_choice(tmp_path: Path) -> None:
    plan = _plan(tmp_path, W1 + "purchase_prices:\n  dell-xe8640: 197000\n")
    (dep,) = plan.deployments
    assert not [r for r in dep.reasons if "derived host price" in r]


def test_a_chassis_whose_psus_are_unsourced_says_the_feed_loss_check_was_skipped(tmp_path: Path) -> None:
    """Item 9: the XE8640's PSU count and rating are not found (``psu`` null, named in ``unsourced_fields``); on 2N
    feeds the plan says the feed-loss check was skipped for it, not only that the catalog lacks a figure."""
    assert "psu" in catalog.platforms()["dell-xe8640"].unsourced_fields
    plan = _plan(tmp_path, W1)
    (said,) = [f.message for f in plan.findings if f.code == "psu-feeds-unknown"]
    assert "dell-xe8640 (the catalog marks its PSUs unsourced" in said
    assert "the feed-loss check (psu-feed-loss) was skipped for it" in said


def test_a_rate_increase_on_bought_servers_says_how_to_grow_on_them(tmp_path: Path) -> None:
    """Item 7: 20 -> 30 req/s replaced 3 bought XE8640s ($591,000) by 2 new 8-GPU servers ($714,000) with no word of
    keeping them. At the old layout's 7.192 req/s a replica, 30 req/s needs 5 TP4 replicas, 5 XE8640s: keep 3, add 2
    at $197,000 each. The plan of that (the 3 under hardware.inventory, dell-xe8640 allowed) buys exactly those 2."""
    from generator.fleet_diff import diff_plans, load_plan_dict, markdown_diff

    old_path, new_path, grown_path = tmp_path / "old.yaml", tmp_path / "new.yaml", tmp_path / "grown.yaml"
    old_path.write_text(W1, encoding="utf-8")
    new_text = W1.replace("requests_per_second: 20", "requests_per_second: 30")
    new_path.write_text(new_text, encoding="utf-8")
    result = diff_plans(load_plan_dict(str(old_path)), load_plan_dict(str(new_path)))
    (entry,) = result["replacements"]
    # fix133 (review80 item 9): at the 6.832 req/s each of the 3 replicas sustains with the wait for a place
    # (20.497 req/s together) 30 req/s needs ceil(4.39) = 5 too
    assert entry["capex_usd"]["grow"] == {
        "platform": "dell-xe8640",
        "replicas": 5,
        "replicas_least": 5,
        "requests_per_s_per_replica_max": 7.192,
        "requests_per_s_per_replica_sustained": 6.832,
        "servers_kept": 3,
        "servers_added": 2,
        "servers_added_least": 2,
        "usd_added": 394000.0,
        "usd_added_least": 394000.0,
    }
    assert (
        "growing on them instead: at the old layout's 6.832 req/s a replica the new rate needs 5 replicas, so keep the 3 "
        "dell-xe8640 and add 2 ($394,000 at their price)" in markdown_diff(result)
    )
    # the oracle: specgen's own plan of the advice buys the 2 servers the diff names
    inventory = "  platforms: [dell-xe8640]\n  inventory:\n    - platform: dell-xe8640\n      count: 3\n"
    grown_path.write_text(new_text.replace("  rack_circuits:", inventory + "  rack_circuits:"), encoding="utf-8")
    grown = plan_file(str(grown_path))[1]
    assert grown.totals["capex_usd"] == 394_000
    assert sum(p.nodes for p in grown.pools) == 5


def test_a_rate_increase_with_another_input_changed_says_no_growth(tmp_path: Path) -> None:
    from generator.fleet_diff import diff_plans, load_plan_dict

    old_path, new_path = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old_path.write_text(W1, encoding="utf-8")
    changed = W1.replace("requests_per_second: 20", "requests_per_second: 30").replace("tpot_ms: 40", "tpot_ms: 39")
    new_path.write_text(changed, encoding="utf-8")
    result = diff_plans(load_plan_dict(str(old_path)), load_plan_dict(str(new_path)))
    assert all("grow" not in (e.get("capex_usd") or {}) for e in result.get("replacements", []))


def test_the_catalog_listing_names_the_quote_a_host_is_derived_from() -> None:
    from generator.calculator.catalog_listing import purchase_rows

    (row,) = [r for r in purchase_rows() if r["id"] == "dell-xe8640-host"]
    assert row["basis"].startswith("derived; derived from dell-xe9680-hgx-h100-h200-h100-quote $317,000 less 8 x")
