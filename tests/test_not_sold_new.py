"""A product no longer sold new is not bought (an owned one is used), and the plan says what it bought instead.

newuser30 item 11 / newuser29 item 12: a lab's embedding box was an RTX 3090 tower, the card priced at its September
2020 launch price ($1,499, "vendor list"), though the card is sold only used since (NVIDIA took the Founders Edition off
its store in March 2023; 2026 buying guides price it used only). The RTX 4090 left production in October 2024
(reported) and sells above its $1,599 launch price: it is priced from a 2026 figure ($2,200, low end of $2,200-$2,800).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from generator import catalog
from generator.calculator.catalog_listing import purchase_rows
from generator.catalog.records import PurchaseRecord
from generator.errors import CatalogError, InfeasibleError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.conftest import REPO, catalog_json
from tests.helpers import run_specgen

DATE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?$")


def _with_availability() -> list[dict[str, object]]:
    return [r for r in catalog_json("purchases")["purchases"] if "availability" in r]


@pytest.mark.parametrize("rec", _with_availability(), ids=lambda r: str(r["id"]))
def test_every_availability_is_sourced_and_dated(rec: dict[str, object]) -> None:
    availability = rec["availability"]
    assert isinstance(availability, dict)
    sources = availability["source"]
    assert sources and all(str(s).startswith("https://") for s in sources), rec["id"]
    assert DATE.match(str(availability["as_of"])), rec["id"]
    assert availability["says"], rec["id"]
    ended = availability.get("production_ended")
    if ended is not None:
        assert DATE.match(str(ended)), rec["id"]
    if availability["sold_new"] and ended is not None:
        # a product still sold after its production ended is priced from a figure dated after the end
        assert str(rec["as_of"])[: len(str(ended))] >= str(ended), rec["id"]


@pytest.mark.parametrize(
    ("record_id", "sold_new", "ended", "usd", "as_of", "source"),
    [
        # launch price: dreampc.com.au (01 September 2020) and The Indian Express (2 September 2020), "$1,499"
        pytest.param(
            "rtx-3090-24gb-gpu",
            False,
            None,
            1499,
            "2020-09-01",
            "https://dreampc.com.au/2020/09/02/nvidia-geforce-rtx-3090-announced-the-most-powerful-gaming-gpu-ever/",
            id="rtx-3090-sold-used-only",
        ),
        # insiderllm.com: new RTX 4090 $2,200-$2,800 (Feb 2026), the low end; production ended October 2024 (reported)
        pytest.param(
            "rtx-4090-24gb-gpu",
            True,
            "2024-10",
            2200,
            "2026-02-01",
            "https://insiderllm.com/guides/rtx-4090-vs-used-rtx-3090-local-ai",
            id="rtx-4090-priced-after-production-ended",
        ),
    ],
)
def test_consumer_card_records(record_id: str, sold_new: bool, ended: str | None, usd: float, as_of: str, source: str) -> None:
    rec = catalog.purchases()[record_id]
    assert rec.availability is not None
    assert (rec.sold_new, rec.availability.production_ended, rec.usd, rec.as_of) == (sold_new, ended, usd, as_of)
    assert rec.source[0] == source
    # the record's former source was a page about AMD's RX 6000 release date, which states no RTX 3090 price
    assert not any("talkesport" in s for s in rec.source)


def test_the_schema_holds_availability() -> None:
    validator = Draft202012Validator(json.loads((REPO / "schemas" / "catalog" / "purchases.schema.json").read_text()))
    data = catalog_json("purchases")
    assert not list(validator.iter_errors(data))
    record = next(r for r in data["purchases"] if r["id"] == "rtx-3090-24gb-gpu")
    data["purchases"] = [record | {"availability": {k: v for k, v in record["availability"].items() if k != "source"}}]
    assert [e.message for e in validator.iter_errors(data)] == ["'source' is a required property"]


def test_a_launch_price_of_a_product_out_of_production_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sold new after its production ended, a product must be priced from a figure dated after the end."""
    raw = next(r for r in catalog_json("purchases")["purchases"] if r["id"] == "rtx-4090-24gb-gpu")
    launch = raw | {"as_of": "2022-10-12", "usd": 1599}
    with pytest.raises(ValueError, match=r"the price is dated 2022-10-12, before production ended \(2024-10\)"):
        PurchaseRecord.from_record(launch)
    monkeypatch.setattr(catalog, "_records", lambda kind: (launch,))
    with pytest.raises(CatalogError, match=r"purchases.json: rtx-4090-24gb-gpu: bad or missing field: as_of: the price"):
        catalog._build("purchases", PurchaseRecord.from_record)
    # not sold new, its launch price may stay (it is never bought)
    assert not PurchaseRecord.from_record(launch | {"availability": raw["availability"] | {"sold_new": False}}).sold_new


EMBED = """\
version: 1
name: lab
deployments:
  - name: embed
    model: BAAI/bge-m3
    inference: {{task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 50,
                slo: {{ttft_p95_ms: 500}}}}
hardware:
  provider: baremetal
{hardware}objective: cost
"""


def _plan(tmp_path: Path, hardware: str = "") -> Plan:
    path = tmp_path / "lab.yaml"
    path.write_text(EMBED.format(hardware=hardware))
    return plan_workload(load_workload(str(path)))


def test_the_embedding_box_is_not_a_3090_bought_at_its_launch_price(tmp_path: Path) -> None:
    """newuser30's embed service: 1 x RTX 3090 tower, $287.01/month (capex $2,400 + $1,499) -> an RTX 4090 tower.

    Its GeForce cards are named: colocation is charged, where GeForce is otherwise left out (newuser39 item 8).
    """
    plan = _plan(tmp_path, "  gpus: [rtx-3090-24gb, rtx-4090-24gb]\n")
    (pool,) = plan.pools
    assert (pool.name, pool.nodes, pool.node.platform_id, pool.node.gpu_id, pool.owned_nodes) == (
        "embed_rtx_4090_24gb",
        1,
        "am5-desktop-tower",
        "rtx-4090-24gb",
        0,
    )
    # host am5-desktop-tower-host $2,400 + rtx-4090-24gb-gpu $2,200; a month: $4,600 / 36 + energy 0.825 kW x 0.6
    # x PUE 1.56 x $0.13/kWh x 730 h ($73.29) + colocation 0.825 kW x $184 ($151.80); the LGA1700 tower's i9 is counted
    # at its 253 W Maximum Turbo Power, which puts it above the AM5 tower (review34 item 10)
    assert pool.capex_usd == 4600
    assert pool.opex_usd_per_month == pytest.approx(225.08, abs=0.005)
    assert plan.totals["usd_per_month"] == pytest.approx(352.86, abs=0.005)
    (finding,) = [f for f in plan.findings if f.code == "not-sold-new"]
    assert (finding.level, finding.path) == ("info", "deployments[0]")
    assert finding.message.startswith(
        "deployment embed: 1 x TP1 on 1 x am5-desktop-tower (1 x rtx-3090-24gb) at $301/month is not bought: it is"
        " priced with rtx-3090-24gb-gpu $1,499 (vendor list, 2020-09-01), and the NVIDIA GeForce RTX 3090 24GB is not"
        " sold new (NVIDIA took the RTX 3090 Founders Edition off its store in March 2023;"
    )
    assert (
        "https://www.phonandroid.com/nvidia-arrete-deja-de-vendre-ses-rtx-3000-pour-se-concentrer-sur-la-nouvelle-generation"
        ".html, 2026-03-03); planned instead: embed_rtx_4090_24gb, 1 x am5-desktop-tower (1 x rtx-4090-24gb) at"
        " $353/month; one you own is used"
    ) in finding.message
    # no runner-up buys one either
    (dep,) = plan.deployments
    assert all(c.gpu_id != "rtx-3090-24gb" for c in dep.runners_up)


def test_an_owned_3090_is_still_planned(tmp_path: Path) -> None:
    owned = "  inventory:\n    - {platform: lga1700-desktop-tower, gpu: rtx-3090-24gb, count: 1}\n"
    plan = _plan(tmp_path, owned)
    (pool,) = plan.pools
    assert (pool.node.gpu_id, pool.nodes, pool.owned_nodes, pool.capex_usd) == ("rtx-3090-24gb", 1, 1, 0.0)
    assert not [f for f in plan.findings if f.code == "not-sold-new"]
    (said,) = [f for f in plan.findings if f.code == "inventory-not-bought"]
    assert "owned servers are always usable, but rtx-3090-24gb is not sold new (" in said.message
    assert said.message.endswith("so no more are bought")


FIXED = """\
version: 1
name: home
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: q4_k_m, max_context_tokens: 8192, requests_per_second: 0.1}
hardware:
  provider: baremetal
  fixed: {gpu: rtx-3090-24gb, gpu_count: 1, ram_gib: 64}
"""


def test_a_fixed_machine_with_a_3090_is_still_planned(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(FIXED)
    plan = plan_workload(load_workload(str(path)))
    assert [p.node.gpu_id for p in plan.pools] == ["rtx-3090-24gb"]
    assert not [f for f in plan.findings if f.code == "not-sold-new"]


def test_a_3090_alone_is_refused_with_why(tmp_path: Path) -> None:
    with pytest.raises(InfeasibleError, match=r"rtx-3090-24gb is not sold new \(NVIDIA took .*, so it is not bought"):
        _plan(tmp_path, "  gpus: [rtx-3090-24gb]\n")
    plan = _plan(tmp_path, "  gpus: [rtx-3090-24gb, rtx-4090-24gb]\n")
    (listed,) = [f for f in plan.findings if f.code == "gpu-no-layout"]
    assert listed.message.startswith("deployment embed: no layout on rtx-3090-24gb: rtx-3090-24gb is not sold new (")


def test_a_server_priced_per_hour_under_prices_is_rented_whatever_its_availability(tmp_path: Path) -> None:
    """fuzz26 M2: a 3090 box the workload rents by the hour (prices:, nothing bought) was refused as not sold new."""
    path = tmp_path / "lab.yaml"
    path.write_text(EMBED.format(hardware="  gpus: [rtx-3090-24gb]\n") + "prices: {am5-desktop-tower: 0.5}\n")
    plan = plan_workload(load_workload(str(path)))
    assert {p.node.platform_id for p in plan.pools} == {"am5-desktop-tower"}
    assert {p.node.gpu_id for p in plan.pools} == {"rtx-3090-24gb"}
    # the towers it does not price are still not bought: the info names the one that would rank first, not the one rented
    (unsold,) = [f.message for f in plan.findings if f.code == "not-sold-new"]
    assert unsold.startswith("deployment embed: 1 x TP1 on 1 x lga1700-desktop-tower (1 x rtx-3090-24gb)")
    assert "planned instead: embed_rtx_3090_24gb, 1 x am5-desktop-tower (1 x rtx-3090-24gb) at $365/month" in unsold


def test_the_catalog_listing_says_whether_sold_new() -> None:
    rows = {r["id"]: r for r in purchase_rows()}
    assert rows["rtx-3090-24gb-gpu"]["available"].startswith("not sold new (as of 2026-03-03; https://www.phonandroid.com/")
    assert rows["rtx-4090-24gb-gpu"]["available"].startswith("sold new, production ended 2024-10 (as of 2026-02; ")
    assert rows["h100-sxm5-80gb-gpu"]["available"] == ""
    text = run_specgen("catalog", "purchases").stdout
    header = text.splitlines()[0].split()
    assert header == ["id", "kind", "for", "usd", "basis", "as_of", "available"]
    assert re.search(r"^rtx-3090-24gb-gpu .* 2020-09-01 +not sold new \(as of 2026-03-03; ", text, re.M)
