"""newuser39 (a FinOps lead, buy into a colo rack against rent over 36 months): what the money figures say.

Item 1: a break-even past the bought side's amortisation read as a win for buying. The report's figures: $236,212 up
front and $2,084.94 a month to run, against $6,935 a month of p5.48xlarge at a given $9.50/h + $6.07 of LoRA runs:
236,212 / (6,941.07 - 2,084.94) = 48.64 months, past the 36 months the servers are costed over; over those 36 months
buying costs 236,212 + 36 x 2,084.94 = $311,269.84 and renting 36 x 6,941.07 = $249,878.52, $61,391 less.
Item 2: the rent was called "on-demand list prices" when it was the workload's own rate (prices:).
Item 6: capex is the servers alone, and nothing said so.
Item 7: one LoRA run a month on a $372.92/month tower read "$12 per run" (its 23.6 h's share of the month).
Item 10: a diff of constants alone named none of them.
Item 11: SPEC.md's pool cost column is the pool's, and $0.0437 per million tokens printed as $0.04.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.api import plan_file
from generator.calculator.report import plan_text
from generator.errors import InputError
from generator.fleet_diff import diff_plans, markdown_diff, plan_from_spec
from generator.planner.capex_scope import CAPEX_EXCLUDES, capex_excludes_finding
from generator.render.markdown import render_markdown
from generator.units import usd_text

# ---------------------------------------------------------------- items 1 and 2: buy against rent over the amortisation

_P5_GIVEN = "workload prices (USD per node-hour, all-in)"
#: the catalog's record for p5.48xlarge in us-east-1: $55.04 an hour on demand (generator/catalog/prices.json)
_P5_LISTED = "catalog aws-p5-48xlarge-on-demand-us-east-1 (hour)"


def _bought(**constants: Any) -> dict[str, Any]:
    """The report's bare-metal fleet (baremetal.yaml): its totals, and its constants as the plan records them."""
    totals = {"capex_usd": 236212.0, "opex_usd_per_month": 2084.94, "usd_per_month": 8646.38, "training_usd_per_job": None,
              "gpus": 7, "nodes": 4, "racks": 1, "power_w": 7642}  # fmt: skip
    return {"provider": "baremetal", "totals": totals, "pools": [], "deployments": [], "constants": constants}


def _pool(name: str, usd_per_hour: float, basis: str, nodes: int = 1) -> dict[str, Any]:
    node = {"gpu_id": "h100-sxm5-80gb", "gpus": 8, "platform_id": "aws-p5-48xlarge"}
    return {
        "name": name,
        "nodes": nodes,
        "power_w": 8361 * nodes,
        "usd_per_hour": usd_per_hour,
        "price_basis": basis,
        "node": node,
    }


def _rented(rate: float, basis: str, runs: float) -> dict[str, Any]:
    """The report's AWS fleet at ``rate`` a node-hour: one p5.48xlarge for the services, one rented per LoRA run."""
    services = round(rate * 730, 2)
    totals = {"capex_usd": None, "opex_usd_per_month": services, "usd_per_month": services}
    totals |= {"training_usd_per_job": runs, "training_usd_per_month": runs}
    pools = [_pool("chat70_moe_h100_sxm5_80gb", rate, basis), {**_pool("lora8b_h100_sxm5_80gb", rate, basis), "per_job": True}]
    return {"provider": "aws", "totals": totals, "pools": pools, "deployments": [], "constants": {}}


def test_a_break_even_past_the_amortisation_says_renting_costs_less_over_it() -> None:
    result = diff_plans(_bought(), _rented(9.5, _P5_GIVEN, 6.07))
    payback = result["buy_vs_rent"]
    assert payback["break_even_months"] == 48.6  # 236,212 / (6,935 + 6.07 - 2,084.94) = 48.64
    assert payback["amortization_months"] == 36 and payback["within_amortization"] is False
    assert payback["total_usd_over_amortization"] == {"old": 311269.84, "new": 249878.52}
    text = markdown_diff(result)
    assert "buying has cost less" not in text
    assert (
        "buying does not pay back within the 36-month amortisation (it would after 48.6 months, past the 36 months its "
        "servers are costed over): renting costs $61,391 less over 36 months ($249,879 rented against $311,270 bought)"
    ) in text
    json.dumps(result, allow_nan=False)


def test_a_break_even_within_the_amortisation_gives_both_totals() -> None:
    # prices: {aws-p5-48xlarge: 30.0}: 30 x 730 = $21,900 + $19.18 of runs; 236,212 / (21,919.18 - 2,084.94) = 11.91
    result = diff_plans(_bought(), _rented(30.0, _P5_GIVEN, 19.18))
    payback = result["buy_vs_rent"]
    assert (payback["break_even_months"], payback["within_amortization"]) == (11.9, True)
    # 36 x 21,919.18 = 789,090.48
    assert payback["total_usd_over_amortization"] == {"old": 311269.84, "new": 789090.48}
    assert (
        "buying has cost less after 11.9 months, within the 36-month amortisation: over 36 months buying costs "
        "$311,270 and renting $789,090"
    ) in markdown_diff(result)


def test_the_bought_sides_own_amortisation_is_the_horizon() -> None:
    # amortization_months: 60 on the bought side: 48.6 months pays back within it; 236,212 + 60 x 2,084.94 = 361,308.40
    # against 60 x 6,941.07 = 416,464.20
    result = diff_plans(_rented(9.5, _P5_GIVEN, 6.07), _bought(amortization_months=60))
    payback = result["buy_vs_rent"]
    assert (payback["bought"], payback["amortization_months"], payback["within_amortization"]) == ("new", 60, True)
    assert payback["total_usd_over_amortization"] == {"new": 361308.4, "old": 416464.2}


def test_the_rent_says_which_rate_each_rented_pool_is_at() -> None:
    given = diff_plans(_bought(), _rented(9.5, _P5_GIVEN, 6.07))
    basis = given["buy_vs_rent"]["rent_basis"]
    assert [(b["pool"], b["basis"], b["usd_per_node_hour"]) for b in basis] == [
        ("chat70_moe_h100_sxm5_80gb", "prices", 9.5),
        ("lora8b_h100_sxm5_80gb", "prices", 9.5),
    ]
    text = markdown_diff(given)
    assert (
        "the rent of chat70_moe_h100_sxm5_80gb and lora8b_h100_sxm5_80gb is the rate given under prices: "
        "(aws-p5-48xlarge $9.50/h)"
    ) in text
    assert "on-demand" not in text and "commitments lower" not in text  # item 2: it is the user's own rate

    listed = _rented(55.04, _P5_LISTED, 32.0)
    listed["pools"][1]["price_basis"] = _P5_GIVEN  # one pool at the list price, one at a given rate
    result = diff_plans(_bought(), listed)
    assert [(b["basis"], b.get("region")) for b in result["buy_vs_rent"]["rent_basis"]] == [
        ("list", "us-east-1"),
        ("prices", None),
    ]
    text = markdown_diff(result)
    assert "the rent of chat70_moe_h100_sxm5_80gb is the on-demand list price of us-east-1 (aws-p5-48xlarge $55.04/h)" in text
    assert "the rent of lora8b_h100_sxm5_80gb is the rate given under prices: (aws-p5-48xlarge $55.04/h)" in text
    assert "on-demand list prices are what 1-3-year commitments lower" in text


def test_a_pool_of_several_nodes_is_at_its_node_hour_rate() -> None:
    rented = _rented(9.5, _P5_GIVEN, 6.07)
    rented["pools"][0] |= {"nodes": 3, "usd_per_hour": 28.5}
    (first, _) = diff_plans(_bought(), rented)["buy_vs_rent"]["rent_basis"]
    assert first["usd_per_node_hour"] == 9.5


# ---------------------------------------------------------------- item 6: what capex leaves out


def test_the_diff_says_what_the_bought_sides_capex_leaves_out() -> None:
    result = diff_plans(_bought(), _rented(9.5, _P5_GIVEN, 6.07))
    text = markdown_diff(result)
    for left_out in ("top-of-rack", "optics", "PDUs", "installation", "support or warranty", "spares", "no discount rate"):
        assert left_out in result["buy_vs_rent"]["capex_excludes"] and left_out in text


# ---------------------------------------------------------------- item 10: constants changed


def test_a_diff_of_constants_names_them_and_what_the_amortisation_moved() -> None:
    """bm2.yaml: energy $0.20, PUE 1.3, colocation $250, 60 months; the same $236,212 of capex over 60 months instead
    of 36: 236,212 / 60 - 236,212 / 36 = 3,936.87 - 6,561.44 = -$2,624.58 a month."""
    new = _bought(energy_usd_per_kwh=0.2, pue=1.3, colocation_usd_per_kw_month=250.0, amortization_months=60.0)
    new["totals"] = {**new["totals"], "opex_usd_per_month": 2780.78, "usd_per_month": 6717.64}
    result = diff_plans(_bought(), new)
    assert result["constants_changed"] == [
        {"name": "amortization_months", "old": 36, "new": 60.0},
        {"name": "colocation_usd_per_kw_month", "old": 184.0, "new": 250.0},
        {"name": "energy_usd_per_kwh", "old": 0.13, "new": 0.2},
        {"name": "pue", "old": 1.56, "new": 1.3},
    ]
    text = markdown_diff(result)
    line = (
        "Constants changed (the workload's constants:): amortization_months 36 → 60, colocation_usd_per_kw_month "
        "184 → 250, energy_usd_per_kwh 0.13 → 0.2, pue 1.56 → 1.3. The same $236,212 of capex spread over 60 months "
        "instead of 36: -$2,624.58/month of the change."
    )
    assert line in text and text.index(line) < text.index("| usd_per_month |")  # above the totals


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param({"pue": 1.56}, {}, id="a-default-given-is-no-change"),
        pytest.param({"no_such_constant": 3}, {}, id="an-unknown-name-is-not-echoed"),
    ],
)
def test_constants_that_do_not_change_are_not_listed(old: dict[str, Any], new: dict[str, Any]) -> None:
    result = diff_plans(_bought(**old), _bought(**new))
    assert "constants_changed" not in result and "Constants changed" not in markdown_diff(result)


def test_a_side_without_constants_compares_none() -> None:
    """An empty plan (a workload added in a pull request) or an older spec.json records no constants."""
    bare = _bought()
    del bare["constants"]
    assert "constants_changed" not in diff_plans(bare, _bought(pue=1.3))


def test_a_cloud_side_compares_no_constant_of_servers_bought_or_owned() -> None:
    """newuser61 item 9: bm60.yaml (amortization_months: 60) against a cloud plan read "amortization_months 60 → 36",
    the 36 a default the cloud plan never reads; the payback itself ran over the bought side's 60 months."""
    result = diff_plans(_bought(amortization_months=60, pue=1.3), _rented(9.5, _P5_GIVEN, 6.07))
    assert "constants_changed" not in result and "Constants changed" not in markdown_diff(result)
    assert result["buy_vs_rent"]["amortization_months"] == 60
    # a constant both sides read still is (the cloud side sizes with its engine constants too)
    both = diff_plans(
        _bought(amortization_months=60), {**_rented(9.5, _P5_GIVEN, 6.07), "constants": {"pue": 1.2, "training_mfu": 0.3}}
    )
    assert [c["name"] for c in both["constants_changed"]] == ["training_mfu"]


def test_owned_servers_alone_compare_their_running_constants_not_the_amortisation() -> None:
    """A bare-metal fleet of owned servers buys nothing: energy and colocation are read, amortization_months is not."""
    owned = _bought(amortization_months=60, pue=1.3)
    owned["totals"] = {**owned["totals"], "capex_usd": 0.0}
    owned["pools"] = [{**_pool("chat", 0.4, "owned"), "owned_nodes": 1, "capex_usd": 0.0}]
    result = diff_plans(owned, _bought())
    assert result["constants_changed"] == [{"name": "pue", "old": 1.3, "new": 1.56}]


def test_a_spec_json_constant_that_is_no_figure_is_refused() -> None:
    plan = {**_bought(), "constants": {"pue": "high"}}
    with pytest.raises(InputError, match=r"plan\.constants\.pue"):
        plan_from_spec(json.dumps({"plan": plan}), "spec.json")
    with pytest.raises(InputError, match=r"'plan\.constants' must be an object"):
        plan_from_spec(json.dumps({"plan": {**_bought(), "constants": [1]}}), "spec.json")


# ---------------------------------------------------------------- item 11: dollars to three significant figures


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (0.0437, "$0.0437"),  # newuser39's moe: printed $0.04, 9% off
        (0.8712, "$0.871"),
        (3.8217, "$3.82"),
        (12.3, "$12.30"),
        (0.001234, "$0.00123"),
        (1234.5, "$1,234.50"),
        (0.0, "$0.00"),
    ],
)
def test_usd_text_keeps_three_significant_figures_and_the_cent(usd: float, text: str) -> None:
    assert usd_text(usd) == text


# ---------------------------------------------------------------- items 6, 7, 11 on a planned bare-metal fleet

# lora8b pinned to the workstation it was planned on: these tests are of a job on servers bought for it. m74c item 1
# (fix87): ranked by its month, the job rents a GH200 at $11.55 a run (2 runs: $23.10/month) rather than buy an RTX 6000
# Ada workstation at $886/month, which it kept only because a rented run's cost was compared with a bought month / 730 h.
_SMALL = """\
version: 1
name: small
deployments:
  - {name: moe, model: Qwen/Qwen3-30B-A3B, inference: {precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1000,
     avg_output_tokens: 400, requests_per_second: 30, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}}
  - {name: lora8b, model: meta-llama/Llama-3.1-8B, platform: wrx90-workstation,
     training: {method: lora, lora_rank: 16, sequence_length: 4096, global_batch_size: 32, dataset_tokens: 200000000,
     epochs: 1, deadline_hours: 24, runs_per_month: 2}}
hardware: {provider: baremetal}
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("nu39") / "small.yaml"
    path.write_text(_SMALL, encoding="utf-8")
    return plan_file(str(path))[1]


def test_a_run_on_servers_bought_for_it_is_the_month_over_its_runs(small: Any) -> None:
    (job,) = [d for d in small.deployments if d.kind == "training"]
    (pool,) = [p for p in small.pools if p.name == job.pool]
    month, hours = pool.usd_per_hour * 730, job.details["hours"]
    assert job.details["runs_per_month"] == 2
    assert job.details["usd_per_month"] == round(month, 2)
    # the month is paid whatever runs: two runs share it (newuser39: $372.92 / 1 a run, not $12)
    assert job.details["usd_per_job"] == round(job.details["usd_per_month"] / 2, 2)
    # kept, named; the hours are rounded to 0.01 h in the details
    assert job.details["usd_per_job_hours_share"] == pytest.approx(pool.usd_per_hour * hours, abs=0.01)
    (chosen,) = [r for r in job.reasons if r.startswith("chosen by cost")]
    assert (
        f"${month / 2:,.0f} per run: ${month:,.0f}/month of the servers bought, paid whatever runs, over its 2 runs a "
        f"month, ${pool.usd_per_hour * hours:,.0f} as its {hours:,.1f} h's share"
    ) in chosen
    spec = render_markdown(small)["SPEC.md"]
    assert f"- usd_per_job: {job.details['usd_per_job']:.4g}" in spec
    assert f"- usd_per_job_hours_share: {job.details['usd_per_job_hours_share']:.4g}" in spec


def test_the_energy_of_a_pool_busy_part_of_the_month_says_what_it_assumes(small: Any) -> None:
    (job,) = [d for d in small.deployments if d.kind == "training"]
    (pool,) = [p for p in small.pools if p.name == job.pool]
    (found,) = [f for f in small.findings if f.code == "training-energy-assumed"]
    kw, busy = pool.node.power_w / 1000, 2 * job.details["hours"]
    # defaults: power_utilization 0.6, PUE 1.56, $0.13/kWh (generator/sizing/constants.py), a month of 730 h
    charged = pool.nodes * kw * 0.6 * 1.56 * 0.13 * 730
    runs = pool.nodes * kw * busy * 1.56 * 0.13
    assert f"its energy, ${charged:,.2f}/month, is 0.6 (power_utilization)" in found.message
    assert f"lora8b runs {busy:,.1f} h of it" in found.message and f"other {730 - busy:,.1f} h" in found.message
    assert f"= ${runs:,.2f}/month" in found.message
    assert "idle power" in found.message  # the catalog has none: said, not invented
    assert found.path == "deployments[1].training.runs_per_month"
    assert not [f for f in small.findings if f.code == "training-energy-assumed" and "moe" in f.message]


def test_a_bought_fleet_says_what_its_capex_leaves_out(small: Any) -> None:
    (found,) = [f for f in small.findings if f.code == "capex-excludes"]
    capex = sum(p.capex_usd or 0 for p in small.pools)
    assert found.level == "info" and f"capex ${capex:,.0f} is the price of the 2 server(s) bought" in found.message
    assert all(item in found.message for item in CAPEX_EXCLUDES)
    # nothing bought (rented, or servers already owned): nothing to say
    assert capex_excludes_finding([p._replace(capex_usd=None) for p in small.pools]) is None
    assert capex_excludes_finding([p._replace(capex_usd=0.0) for p in small.pools]) is None


def test_spec_md_names_the_pool_cost_and_its_capex_and_tokens_to_three_figures(small: Any) -> None:
    spec = render_markdown(small)["SPEC.md"]
    assert "| power per node | cost (pool) | capex (pool) |" in spec
    for pool in small.pools:
        row = next(line for line in spec.splitlines() if line.startswith(f"| `{pool.name}` |"))
        assert row.endswith(f"| ${pool.usd_per_hour:.2f}/h | ${pool.capex_usd:,.0f} |")
    (moe,) = [d for d in small.deployments if d.name == "moe"]
    # 30 req/s x 400 tokens x 3,600 s x 730 h = 31,536 M tokens a month
    at_rate = moe.details["usd_per_month"] / 31536
    assert at_rate < 0.1 and f"costs {usd_text(at_rate)} per million output tokens" in plan_text(small)
    assert len(usd_text(at_rate).split(".")[1].lstrip("0")) >= 3  # three significant figures


def test_spec_md_says_a_pool_of_several_nodes_costs_them_all(small: Any) -> None:
    pool = small.pools[0]
    three = pool._replace(nodes=3, usd_per_hour=pool.usd_per_hour * 3, capex_usd=pool.capex_usd * 3)
    spec = render_markdown(small._replace(pools=(three, *small.pools[1:])))["SPEC.md"]
    assert f"| ${three.usd_per_hour:.2f}/h (3 nodes) | ${three.capex_usd:,.0f} |" in spec
