"""Bare metal: servers rented from a provider, rent matched on its GPU, colocation per rack, GeForce in colocation.

newuser39 (a FinOps lead comparing buying into a colo rack with renting):
- item 3: Lambda's hourly GH200 rental (prices.json) was "6 GPUs bought", packed into the user's colo rack, and a LoRA
  on it was "$12 per run" while the fleet billed a month of it ($1,671.70);
- item 4: Lambda's 8 x A100 40GB rent ($10.32/h, "40 GB GPUs only") priced A100 80GB servers too;
- item 5: colocation was billed on the 7.64 kW the servers draw although the workload gave the contract's circuits
  (17.48 kW usable a rack), and the $184/kW-month constant (a 250-500 kW asking rent) was printed without its scope;
- item 8: the cheapest bought fleet had an RTX 5090 while warning its licence excludes the datacenter it pays for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.report import plan_text
from generator.errors import InfeasibleError
from generator.planner import clear_search_caches, plan_workload, tco
from generator.planner.tco import node_cost, purchase_price
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH
from generator.workload import load_workload
from generator.workload.models import Workload

#: Lambda's on-demand rates the catalog holds (prices.json, sources there): gpu_1x_gh200, gpu_8x_a100 (40 GB),
#: gpu_8x_a100_80gb_sxm4.
GH200_USD_PER_HOUR = 2.29
A100_40GB_NODE_USD_PER_HOUR = 10.32
A100_80GB_NODE_USD_PER_HOUR = 14.32

LORA = """\
  - name: lora8b
    model: meta-llama/Llama-3.1-8B
    training: {method: lora, lora_rank: 16, sequence_length: 4096, global_batch_size: 32, dataset_tokens: 200000000,
               epochs: 1, deadline_hours: 24, runs_per_month: 3}
"""
CHAT = """\
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200,
                requests_per_second: 2}
"""


def _plan(tmp_path: Path, deployments: str, hardware: str, constants: str = "") -> tuple[dict, str]:  # type: ignore[type-arg]
    path = tmp_path / "w.yaml"
    path.write_text(f"version: 1\nname: t\ndeployments:\n{deployments}hardware:\n{hardware}{constants}")
    plan = plan_workload(load_workload(str(path)))
    return plan.to_dict(), plan_text(plan)


def _empty() -> Workload:
    return Workload(version=1, name="x", deployments=())


# --- item 4: a rent record prices the GPU it names ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu_id", "usd_per_hour", "three_nodes_usd_per_month"),
    [
        # the report's figures: 3 x $10.32 x 730 = $22,600.80 was charged for 80 GB nodes too; theirs is 3 x $14.32 x 730
        pytest.param("a100-sxm4-40gb", A100_40GB_NODE_USD_PER_HOUR, 22600.80, id="40gb-at-its-own-rent"),
        pytest.param("a100-sxm4-80gb", A100_80GB_NODE_USD_PER_HOUR, 31360.80, id="80gb-at-its-own-rent"),
    ],
)
def test_a_rent_record_prices_only_the_gpu_it_names(gpu_id: str, usd_per_hour: float, three_nodes_usd_per_month: float) -> None:
    platform = catalog.platforms()["hgx-a100-8gpu-oem"]
    cost = node_cost(_empty(), platform, catalog.gpus()[gpu_id], 8, 6500, Constants())
    assert cost.usd_per_hour == pytest.approx(usd_per_hour)
    assert cost.capex_usd is None and cost.rented == "hour"
    assert 3 * (cost.usd_per_month or 0.0) == pytest.approx(three_nodes_usd_per_month)


def test_every_bare_metal_rent_of_a_platform_with_several_gpus_names_its_gpu() -> None:
    platforms = catalog.platforms()
    vague = [
        p.id
        for p in catalog.prices().values()
        if p.unit != "purchase" and platforms[p.platform_id].provider == "baremetal"
        if len(platforms[p.platform_id].gpu_ids) > 1 and p.gpu_id is None
    ]
    assert vague == []


def test_the_dgx_a100_launch_price_is_of_the_40gb_system_alone() -> None:
    rec = catalog.prices()["dgx-a100-list-purchase-2020"]
    assert (rec.gpu_id, rec.gpu_count) == ("a100-sxm4-40gb", 8)
    assert rec.prices("a100-sxm4-40gb", 8) and not rec.prices("a100-sxm4-80gb", 8)
    unpriced = purchase_price(catalog.platforms()["dgx-a100"], catalog.gpus()["a100-sxm4-80gb"], 8)
    assert isinstance(unpriced, str) and "640GB" in unpriced


# --- item 3: a server rented on bare metal ----------------------------------------------------------------------------


def test_a_rented_gh200_is_not_bought_nor_racked_and_its_training_job_pays_its_runs(tmp_path: Path) -> None:
    plan, text = _plan(tmp_path, LORA, "  provider: baremetal\n  gpus: [gh200-96gb]\n")
    (pool,) = plan["pools"]
    assert pool["rented"] == "hour" and pool["per_job"] is True
    assert plan["racks"] == [] and plan["totals"]["racks"] == 0
    (dep,) = plan["deployments"]
    hours = dep["details"]["hours"]
    # a run is its hours at the hourly rent; the month holds runs_per_month of them, not 730 h of the server
    assert dep["details"]["usd_per_job"] == pytest.approx(hours * GH200_USD_PER_HOUR, abs=0.01)
    assert plan["totals"]["training_usd_per_month"] == pytest.approx(3 * dep["details"]["usd_per_job"], abs=0.02)
    assert plan["totals"]["usd_per_month"] != pytest.approx(GH200_USD_PER_HOUR * HOURS_PER_MONTH)
    assert "1 GPU rented" in text and "GPU bought" not in text and "GPUs bought" not in text  # fix165: 1 GPU, not 1 GPUs
    assert "rented by the hour, not bought" in text and "rented, in the provider's datacentre" in text


def test_a_rented_service_leaves_the_bought_servers_alone_in_the_racks(tmp_path: Path) -> None:
    on_gh200 = CHAT.replace("    inference:", "    platform: supermicro-ars-111gl-nhr\n    inference:")
    plan, text = _plan(
        tmp_path,
        on_gh200 + CHAT.replace("name: chat", "name: chat2"),
        "  provider: baremetal\n  gpus: [gh200-96gb, l40s-48gb]\n  max_racks: 1\n",
    )
    rented = {p["name"] for p in plan["pools"] if p.get("rented")}
    racked = {s["pool"] for r in plan["racks"] for s in r["pools"]}
    assert rented and racked and not rented & racked
    assert plan["totals"]["racks"] == len(plan["racks"]) == 1
    assert "1 GPU rented" in text and "1 GPU bought" in text  # fix165: one of each, said "1 GPU"
    bought = [p for p in plan["pools"] if not p.get("rented")]
    assert all("rented" not in p for p in bought)  # left out of spec.json where bought


#: Lambda's GH200 rent as if billed by the month (the catalog holds no month record: review 27 item 5 covers the rule).
GH200_USD_PER_MONTH = round(GH200_USD_PER_HOUR * HOURS_PER_MONTH, 2)  # $1,671.70


def _clear_costs() -> None:
    for cached in (tco._rent_records, tco._catalog_node_cost, tco._catalog_fleet_cost):
        cached.cache_clear()
    clear_search_caches()  # the options formed and ranked at the prices before


@pytest.fixture
def gh200_by_the_month(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    prices = catalog.prices()
    (rent,) = (p for p in prices.values() if p.platform_id == "supermicro-ars-111gl-nhr" and p.unit == "hour")
    monkeypatch.setitem(prices, rent.id, rent._replace(unit="month", usd=GH200_USD_PER_MONTH))
    _clear_costs()
    yield
    monkeypatch.undo()
    _clear_costs()


@pytest.mark.usefixtures("gh200_by_the_month")
def test_a_job_on_a_server_rented_by_the_month_costs_the_month_over_its_runs(tmp_path: Path) -> None:
    # review 27 item 5: as for servers bought (newuser39 item 7), a run is the month paid whatever runs over the job's
    # 3 runs a month ($557.23), not its hours' share of the month read as "per run"
    plan, text = _plan(tmp_path, LORA, "  provider: baremetal\n  gpus: [gh200-96gb]\n")
    (pool,) = plan["pools"]
    assert pool["rented"] == "month" and pool["per_job"] is False and plan["racks"] == []
    (dep,) = plan["deployments"]
    assert dep["details"]["usd_per_job"] == pytest.approx(GH200_USD_PER_MONTH / 3, abs=0.01)
    assert plan["totals"]["usd_per_month"] == pytest.approx(GH200_USD_PER_MONTH)
    assert "$1,672/month of the servers rented by the month, paid whatever runs, over its 3 runs a month" in text
    assert "rented by the month, not bought" in text and "GPUs bought" not in text


def test_a_rented_fleet_is_not_refused_for_the_users_rack(tmp_path: Path) -> None:
    # review 27 item 1: the early checks refused the 1,229 W GH200 node for a 0.5 kW rack the plan never puts it in
    plan, text = _plan(tmp_path, CHAT, "  provider: baremetal\n  gpus: [gh200-96gb]\n  rack_power_kw: 0.5\n")
    (pool,) = plan["pools"]
    assert pool["rented"] == "hour" and pool["node"]["power_w"] > 500
    assert plan["racks"] == [] and "rented, in the provider's datacentre" in text


def test_a_bought_server_beside_a_rented_one_is_still_refused_for_the_rack(tmp_path: Path) -> None:
    # the rack still limits what would stand in it: an L40S server bought is refused at 0.5 kW, so the GH200 is rented
    plan, _ = _plan(tmp_path, CHAT, "  provider: baremetal\n  gpus: [gh200-96gb, l40s-48gb]\n  rack_power_kw: 0.5\n")
    assert [p["node"]["gpu_id"] for p in plan["pools"]] == ["gh200-96gb"]
    with pytest.raises(InfeasibleError, match="no allowed server fits a rack"):
        _plan(tmp_path, CHAT, "  provider: baremetal\n  gpus: [l40s-48gb]\n  rack_power_kw: 0.5\n")


# --- item 5: colocation per rack where the circuits are given ------------------------------------------------------

CIRCUITS = "  rack_circuits: {circuits: 2, breaker_a: 32, phases: 3, voltage_v: 415, redundancy: 2N}\n"


def test_racks_fed_by_circuits_are_billed_at_their_usable_kw(tmp_path: Path) -> None:
    hardware = "  provider: baremetal\n  gpus: [l40s-48gb]\n"
    by_kw, _ = _plan(tmp_path, CHAT, hardware)
    by_rack, text = _plan(tmp_path, CHAT, hardware + CIRCUITS)
    assert by_kw["pools"][0]["node"] == by_rack["pools"][0]["node"] and len(by_rack["racks"]) == 1
    usable_kw = by_rack["racks"][0]["rack_power_kw"]
    drawn_kw = by_rack["totals"]["power_w"] / 1000
    rate = Constants().colocation_usd_per_kw_month
    # 2 x 32 A at 415 V three-phase, 2N: one side's circuit, 80% continuous, power factor 0.95 (the report: 17.481 kW)
    assert usable_kw == pytest.approx(17.481, abs=0.001)
    added = (usable_kw - drawn_kw) * rate
    assert by_rack["totals"]["usd_per_month"] == pytest.approx(by_kw["totals"]["usd_per_month"] + added, abs=0.05)
    assert by_rack["totals"]["opex_usd_per_month"] == pytest.approx(by_kw["totals"]["opex_usd_per_month"] + added, abs=0.05)
    (dep,) = by_rack["deployments"]
    assert dep["details"]["usd_per_month"] == pytest.approx(by_rack["totals"]["usd_per_month"], abs=0.05)
    assert f"1 rack(s) x {usable_kw:g} kW x $184/kW-month (CBRE's average asking rent for 250-500 kW) = " in text
    assert f"${usable_kw * rate:,.2f}/month" in text


#: An owned R760xa priced all-in under prices: (fuzz32 item 2: a priced platform the workload owns is its own, racked).
OWNED_XA = "  inventory:\n    - {platform: dell-r760xa, gpu: l40s-48gb, count: 1}\n"
ALL_IN = "prices: {dell-r760xa: 5}\n"


def _carried_usd(text: str) -> float:
    """The undrawn contract the colocation-per-rack finding says the pools' costs carry."""
    found = re.search(r"the pools' costs carry the \$([\d,.]+) the racks leave undrawn", text)
    assert found, text
    return float(found.group(1).replace(",", ""))


def test_a_rack_of_only_all_in_servers_is_billed_no_undrawn_contract(tmp_path: Path) -> None:
    # review 27 item 2: the finding said the pools carried $2,890.27 the rack left undrawn; its all-in pool carries none
    on_xa = CHAT.replace("    inference:", "    platform: dell-r760xa\n    inference:")
    plan, text = _plan(tmp_path, on_xa, "  provider: baremetal\n  gpus: [l40s-48gb]\n" + OWNED_XA + CIRCUITS, ALL_IN)
    (pool,) = plan["pools"]
    assert plan["totals"]["usd_per_month"] == pytest.approx(5 * HOURS_PER_MONTH) == pool["opex_usd_per_month"]
    assert "leave undrawn" not in text and "no rack holds a server billed here" in text
    assert f"pool(s) {pool['name']}, priced all-in under prices:" in text and "1 rack(s) hold only them" in text


def test_beside_an_all_in_server_the_pools_carry_what_the_finding_says(tmp_path: Path) -> None:
    # a bought L40S server shares the rack with an all-in one: it carries the usable kW less its own draw, not less both
    deployments = CHAT.replace("    inference:", "    platform: dell-r760xa\n    inference:") + CHAT.replace(
        "name: chat\n", "name: chat2\n    platform: dell-r760\n"
    )
    hardware = "  provider: baremetal\n  gpus: [l40s-48gb]\n" + OWNED_XA
    # fuzz33 item 1: at $5/h the owned server costs more than a bought one, so the plan buys one at the catalog price
    # (at the rate, it was "bought" for nothing up front); at $1/h the owned one is used, all-in
    all_in = "prices: {dell-r760xa: 1}\n"
    by_rack, text = _plan(tmp_path, deployments, hardware + CIRCUITS, all_in)
    by_kw, _ = _plan(tmp_path, deployments, hardware + "  rack_power_kw: 17.481\n", all_in)
    assert sorted((p["owned_nodes"], p["capex_usd"] is None) for p in by_rack["pools"]) == [(0, False), (1, True)]
    assert len(by_rack["racks"]) == 1 and len(by_rack["pools"]) == 2
    bought = next(p for p in by_rack["pools"] if p["capex_usd"])
    rate = Constants().colocation_usd_per_kw_month
    carried = _carried_usd(text)
    assert carried == pytest.approx((17.481 - bought["power_w"] / 1000) * rate, abs=0.01)
    # what spec.json's pools and totals carry over the same fleet billed per kW drawn is the finding's figure
    added = {p["name"]: p["opex_usd_per_month"] for p in by_rack["pools"]}
    for pool in by_kw["pools"]:
        added[pool["name"]] -= pool["opex_usd_per_month"]
    assert sum(added.values()) == pytest.approx(carried, abs=0.02)
    assert by_rack["totals"]["usd_per_month"] - by_kw["totals"]["usd_per_month"] == pytest.approx(carried, abs=0.02)
    assert f"draw {bought['power_w'] / 1000:.3f} kW" in text and "priced all-in under prices:" in text


def test_colocation_by_kw_drawn_says_what_a_rack_contract_would_cost(tmp_path: Path) -> None:
    plan, text = _plan(tmp_path, CHAT, "  provider: baremetal\n  gpus: [l40s-48gb]\n")
    drawn_kw = plan["totals"]["power_w"] / 1000
    assert f"colocation is billed per kW the servers draw: {drawn_kw:.3f} kW x $184/kW-month" in text
    assert f"1 rack(s) x 17.3 kW = ${17.3 * 184:,.2f}/month" in text  # $3,183.20
    assert "kW drawn x $184/kW-month (CBRE's average asking rent for 250-500 kW)" in text


def test_an_overridden_colocation_rent_is_not_given_the_defaults_scope(tmp_path: Path) -> None:
    _, text = _plan(
        tmp_path, CHAT, "  provider: baremetal\n  gpus: [l40s-48gb]\n", "constants:\n  colocation_usd_per_kw_month: 250\n"
    )
    assert "kW drawn x $250/kW-month = " in text and "CBRE" not in text


# --- item 8: GeForce cards in colocation ----------------------------------------------------------------------------


def test_geforce_is_not_bought_into_colocation_unless_named(tmp_path: Path) -> None:
    plan, text = _plan(tmp_path, LORA, "  provider: baremetal\n")
    assert not any(catalog.gpus()[p["node"]["gpu_id"]].consumer for p in plan["pools"])
    assert "geforce-left-out" in text and "rtx-5090-32gb" in text
    named, named_text = _plan(tmp_path, LORA, "  provider: baremetal\n  gpus: [rtx-5090-32gb]\n")
    assert named["pools"][0]["node"]["gpu_id"] == "rtx-5090-32gb" and "geforce-left-out" not in named_text


def test_an_office_plan_without_colocation_still_buys_geforce(tmp_path: Path) -> None:
    """m74c item 1 (fix87): at 3 runs a month a GH200 rented by the hour ($11.55 a run, $34.65 a month) beats the RTX 5090
    tower's $177 a month, once both are ranked by their month; at 20 runs ($231) the tower is the cheapest again."""
    nightly = LORA.replace("runs_per_month: 3", "runs_per_month: 20")
    plan, text = _plan(tmp_path, nightly, "  provider: baremetal\n", "constants:\n  colocation_usd_per_kw_month: 0\n  pue: 1\n")
    assert any(catalog.gpus()[p["node"]["gpu_id"]].consumer for p in plan["pools"])
    assert "geforce-left-out" not in text
