"""newuser79 (a GKE platform engineer: inference and weekly fine-tunes on spot and on demand, under a budget).

Item 1: a spot 8B service was planned on the 8-GPU a3-highgpu-8g at its on-demand price, the 1-GPU a3-highgpu-1g, sold
through Spot, ranked after it as "not on demand". Item 2: a budget held at us-central1 list prices for a europe-west4
cluster passed in silence. Item 3: ``gpu-no-layout`` named the slices' multi-node network where the budget dropped
the H100's layouts. Item 8: runners-up no one would buy (TP8 PP2 to PP4 on 16 to 32 H100 for an 8B). Item 9: ``plan``
and ``diff`` told two capacities. Item 11: a GKE refusal offered a bare-metal server. Item 12: the headline priced
spot pools at on-demand rates without saying so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.calculator.report import plan_text
from generator.errors import InfeasibleError
from generator.fleet_diff import _load
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render.markdown import render_markdown
from generator.workload import load_workload

GKE = "kubernetes: {gcp_project: acme-ml-prod, location: LOCATION, zone: ZONE}\n"

SPOT_8B = """\
version: 1
name: spot8b
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    CAPACITY
    inference: {max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200, requests_per_second: 3}
hardware: {provider: gcp, gpus: [h100-sxm5-80gb]}
objective: cost
"""

ASSISTANT = """\
version: 1
name: platform
deployments:
  - name: assistant
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 300, requests_per_second: 20,
                slo: {ttft_p95_ms: 1000, tpot_ms: 40}}
hardware:
  provider: gcp
  gpus: [h100-sxm5-80gb, l4-24gb]
  max_budget_usd_per_month: BUDGET
objective: cost
"""


def _gke(location: str, zone: str) -> str:
    return GKE.replace("LOCATION", location).replace("ZONE", zone)


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return plan_workload(load_workload(str(path)))


def _spot(capacity: str = "capacity_type: spot", prices: str = "") -> str:
    return SPOT_8B.replace("CAPACITY", capacity) + prices + _gke("us-central1", "us-central1-a")


def _said(plan: Plan, code: str) -> str:
    (message,) = [f.message for f in plan.findings if f.code == code]
    return message


def test_a_spot_service_rents_the_one_gpu_spot_vm_not_the_priced_eight_gpu_one(tmp_path: Path) -> None:
    """Item 1: before, 1 x a3-highgpu-8g (8 H100) at its on-demand $64,598/month; the 1-GPU Spot VM ranked after it.

    Then (newuser79) the 1-GPU VM, unpriced, was taken by power-bought; since review80 item 14 the catalog holds GCP's
    sourced spot rates (Cyclenerd pricing.yml's hour_spot): a3-highgpu-1g $4.42446871232877/h in us-central1 against
    a3-highgpu-8g's $35.3957496986301 (8 x it), so cost ranks them and the 1-GPU Spot VM is the cheaper, $3,230/month.
    """
    plan = _plan(tmp_path, _spot())
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes, pool.spot) == ("gcp-a3-highgpu-1g", 1, True)
    assert plan.deployments[0].details["objective_used"] == "cost"
    assert pool.price_basis == "catalog gcp-a3-highgpu-1g-spot-us-central1 (hour), its spot rate"
    assert plan.totals["usd_per_month"] == pytest.approx(4.42446871232877 * 730)
    codes = {f.code for f in plan.findings}
    assert not codes & {"not-on-demand-ranked", "objective-fallback", "spot-priced-on-demand", "no-price"}
    # on demand the slices are not sold: the 8-GPU VM is the plan, as before
    on_demand = _plan(tmp_path, _spot(capacity=""))
    assert on_demand.pools[0].node.platform_id == "gcp-a3-highgpu-8g"
    assert "not on demand" in _said(on_demand, "not-on-demand-ranked")
    # spot rates given rank both by cost, before the catalog's: the 1-GPU VM at $3/h, 730 h
    priced = _plan(tmp_path, _spot(prices="prices: {gcp-a3-highgpu-1g@spot: 3.0, gcp-a3-highgpu-8g@spot: 24.0}\n"))
    assert (priced.pools[0].node.platform_id, priced.totals["usd_per_month"]) == ("gcp-a3-highgpu-1g", pytest.approx(2190.0))


def test_a_spot_type_of_another_gpu_than_the_cheapest_priced_still_ranks_after_it(tmp_path: Path) -> None:
    """Item 1's limit: a B200 VM with no spot rate says nothing of its price against the cheapest priced layout, so
    that layout stays the plan; the finding no longer calls a type sold through Spot "not on demand".

    Before review80 item 14 the cheapest priced layout was 3 x g4-standard-192 (RTX PRO 6000) at its on-demand
    $39,421/month; the catalog's GCP spot rates price 3 x a2-highgpu-8g (24 x A100 40GB) at $10.34684/h each, $22,660
    a month, a spot rate and no on-demand stand-in (g4 has no spot rate in the catalog: its on-demand rate ranks it).
    acc131: 44 req/s (40 before; then 5 x a2-highgpu-4g at $5.17342/h each, $18,883 a month): at 40, with Hopper's
    MXFP4 experts at dequant_expert_gemm_efficiency_ratio 0.35, the B200 layout is dominated by a priced one and no
    longer ranked after it (test_newuser56 moved alike).
    """
    text = (
        "version: 1\nname: oss\ndeployments:\n  - name: oss\n    model: openai/gpt-oss-120b\n    capacity_type: spot\n"
        "    inference: {max_context_tokens: 32768, avg_input_tokens: 2000, avg_output_tokens: 500, requests_per_second: 44}\n"
        "hardware: {provider: gcp}\n" + _gke("us-central1", "us-central1-b")
    )
    plan = _plan(tmp_path, text)
    assert (plan.pools[0].node.platform_id, plan.pools[0].nodes) == ("gcp-a2-highgpu-8g", 3)
    assert plan.pools[0].price_basis == "catalog gcp-a2-highgpu-8g-spot-us-central1 (hour), its spot rate"
    assert plan.deployments[0].details["objective_used"] == "cost"
    ranked = _said(plan, "not-on-demand-ranked")
    assert "gcp-a4-highgpu-8g is sold through reservations (calendar-mode future reservations included), Flex-start " in ranked
    assert "and Spot, with no spot rate in the catalog, so no price ranks it" in ranked
    assert "not on demand" not in ranked
    # the priced layouts are at a spot rate: no "(those at the on-demand rate, ...)" beside them
    assert "at the on-demand rate" not in ranked


def test_the_budget_is_said_with_the_region_whose_prices_held_it(tmp_path: Path) -> None:
    """Item 2: a europe-west4 cluster's budget was held at us-central1 list prices, and nothing said it passed."""
    text = ASSISTANT.replace("BUDGET", "60000") + _gke("europe-west4", "europe-west4-b")
    plan = _plan(tmp_path, text)
    month = plan.totals["usd_per_month"]
    checked = [f for f in plan.findings if f.code == "budget-checked"]
    assert [f.path for f in checked] == ["hardware.max_budget_usd_per_month"]
    assert checked[0].message == (
        f"the deployments together cost ${month:,.0f} a month at us-central1 on-demand list prices (the cluster is in "
        "europe-west4, whose GPU VM prices the catalog does not hold: give them under prices: to hold the budget "
        f"against them), within max_budget_usd_per_month $60,000 (${60000 - month:,.0f} to spare, "
        f"{(60000 - month) / 60000:.1%} of it)"
    )
    # in the cluster's own region the catalog's prices are the region's: no region said
    home = _plan(tmp_path, ASSISTANT.replace("BUDGET", "60000") + _gke("us-central1", "us-central1-a"))
    assert "us-central1 on-demand list prices" not in _said(home, "budget-checked")
    # a refusal's cheapest priced layout names the region too
    with pytest.raises(InfeasibleError) as caught:
        _plan(tmp_path, ASSISTANT.replace("BUDGET", "1000") + _gke("europe-west4", "europe-west4-b"))
    assert "a month at us-central1 on-demand list prices (the cluster is in europe-west4" in str(caught.value)


def test_gpu_no_layout_names_the_budget_before_the_slices_network(tmp_path: Path) -> None:
    """Item 3: the 8-GPU A3 over the budget alone ($64,598 > $60,000) and the slices unpriced, said after the 25 and
    50 Gb/s between slices, which rule out only layouts spanning servers (and before, said alone)."""
    plan = _plan(tmp_path, ASSISTANT.replace("BUDGET", "60000") + _gke("us-central1", "us-central1-a"))
    assert {pool.node.gpu_id for pool in plan.pools} == {"l4-24gb"}
    said = _said(plan, "gpu-no-layout")
    assert said.startswith("deployment assistant: no layout on h100-sxm5-80gb: on gcp-a3-highgpu-1g, ")
    budget = said.index("on gcp-a3-highgpu-8g: exceeds hardware.max_budget_usd_per_month ($60,000: the cheapest, ")
    assert "costs $64,598/month alone)" in said
    assert budget < said.index("has 25 Gb/s between nodes")
    # a cloud's unpriced type points at the catalog's prices, not its purchases
    assert "(unpriced: specgen catalog prices)" in said


def test_runners_up_no_one_would_buy_are_said_so(tmp_path: Path) -> None:
    """Item 8: an 8B service's runners-up were 1 x TP8 PP2..PP4 on 2 to 4 a3-highgpu-8g, more GPUs, months and power
    than 8 x TP1 on one for fewer requests a second, with no word of it; and the slice named was '1 x TP1 PP2' for a
    model fitting one GPU."""
    plan = _plan(tmp_path, _spot(capacity=""))
    (chosen,) = plan.pools
    runners = plan.deployments[0].runners_up
    assert runners and all(c.no_better is not None for c in runners if c.gpus_bought > chosen.nodes * 8)
    (pp2,) = [c for c in runners if c.summary.startswith("1 x TP8 PP2 on 2 x gcp-a3-highgpu-8g")]
    assert pp2.no_better is not None
    assert pp2.no_better.startswith("no better than the choice: more GPUs, a month and power at least its, for ")
    text = plan_text(plan)
    assert f"$129,195/month; {pp2.no_better})" in text
    assert f"({pp2.no_better})" in render_markdown(plan)["SPEC.md"]
    assert " PP2 on " not in _said(plan, "not-on-demand-ranked")


def test_diff_capacity_is_the_plans(tmp_path: Path) -> None:
    """Item 9: the plan's capacity is its replicas' rate less the wait for a place in the batch, and diff took
    replicas x the most a replica sustains (61% against the plan's 64%); a spec.json without the figure keeps that."""
    details = {"requests_per_s": 12.0, "requests_per_s_per_replica_max": 4.92, "requests_per_s_sustained": 18.75}
    load = _load({"replicas": 4}, details)
    assert load is not None and load["capacity_share"] == pytest.approx(0.64)
    before = _load({"replicas": 4}, {k: v for k, v in details.items() if k != "requests_per_s_sustained"})
    assert before is not None and before["capacity_share"] == pytest.approx(0.6098, abs=1e-4)
    plan = _plan(tmp_path, _spot(capacity=""))
    d = plan.deployments[0].details
    assert 0 < d["requests_per_s_sustained"] <= d["requests_per_s_per_replica_max"] * plan.deployments[0].replicas


def test_a_gke_refusal_offers_only_fixes_gke_takes(tmp_path: Path) -> None:
    """Item 11: 'describe a server you own or buy under hardware.inventory[].custom' was offered on GCP."""
    text = SPOT_8B.replace("CAPACITY", "").replace("h100-sxm5-80gb", "l40s-48gb") + _gke("us-central1", "us-central1-a")
    with pytest.raises(InfeasibleError) as caught:
        _plan(tmp_path, text)
    message = str(caught.value)
    assert "inventory" not in message
    assert "to unblock: allow a GPU the catalog's gcp platforms hold (a100-sxm4-40gb, " in message
    assert "h100-sxm5-80gb, " in message and "l4-24gb" in message


def test_the_headline_says_spot_pools_are_at_on_demand_rates(tmp_path: Path) -> None:
    """Item 12: the month of a spot pool priced at the on-demand rate read as the plan's cost, unqualified."""
    # on AWS, whose spot rates the catalog does not hold (GCP's g2 types have theirs since review80 item 14)
    text = SPOT_8B.replace("CAPACITY", "capacity_type: spot").replace(
        "provider: gcp, gpus: [h100-sxm5-80gb]", "provider: aws, gpus: [l4-24gb]"
    )
    plan = _plan(tmp_path, text)
    (pool,) = plan.pools
    qualifier = f"(with spot pool {pool.name} at the on-demand rate, above what spot bills: info spot-priced-on-demand)"
    assert plan_text(plan).splitlines()[0].endswith(f"/month {qualifier}")
    assert f"/month {qualifier} |" in render_markdown(plan)["SPEC.md"]
    # a spot rate given prices the pool at it: nothing to qualify
    priced = _plan(tmp_path, text + f"prices: {{{pool.node.platform_id}@spot: 0.3}}\n")  # 5 x $0.30 x 730 h: $1,095
    assert priced.pools[0].node.platform_id == pool.node.platform_id
    assert "at the on-demand rate" not in plan_text(priced).splitlines()[0]
