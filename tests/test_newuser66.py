"""newuser66 (a team owning GPU servers in a colo): items 1, 2, 5 and 6, and review67 item 2.

Item 1: services sharing a partly owned pool counted more owned servers than the workload owns: a chat service with
``min_replicas: 2`` on the two owned DGX H100 and a batch service beside it in one pool of five counted 3 owned and 2
bought (capex $540,000) where 2 are owned and 3 bought ($810,000 at the catalog's $270,000 a DGX H100). Item 2: a
batch job split over owned servers and servers rented by the hour paid the rented part for 730 h. Item 5: a training
job's runner-up on a bought server read "on the same servers". Item 6: ``diff``'s buy-or-rent named a spot rate given
under ``prices:`` by its platform alone, as an on-demand rate reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_as_deployed
from generator.units import HOURS_PER_MONTH

TWO_SERVICES = """\
version: 1
name: acme-ml
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1200
      avg_output_tokens: 350
      requests_per_second: 4
      average_requests_per_second: 1.5
      min_replicas: 2
      slo: {ttft_p95_ms: 1500, tpot_ms: 50}
  - name: nightly-eval
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      service_class: batch
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 400
      requests_per_second: 92.6
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
  rack_power_kw: 20
  inventory:
    - platform: dgx-h100
      count: 2
      hosts: [{name: dgx-01}, {name: dgx-02}]
"""


def test_a_shared_pool_counts_no_more_owned_servers_than_are_owned(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(TWO_SERVICES)
    plan = plan_as_deployed(str(path))[1]
    owned = [p for p in plan.pools if p.owned_nodes]
    assert sum(p.owned_nodes for p in owned) == 2
    bought = sum(p.nodes - p.owned_nodes for p in plan.pools if p.node.platform_id == "dgx-h100")
    assert plan.totals["capex_usd"] == bought * 270_000
    assert all(f"{p.owned_nodes} owned server(s)" in (p.price_basis or "") for p in owned)


EVAL = """\
version: 1
name: minbuy
deployments:
  - name: eval
    model: meta-llama/Llama-3.1-70B-Instruct
SPOT    inference:
      precision: fp8
      kv_cache_precision: fp8
      service_class: batch
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 400
      requests_per_run: 2000000
      deadline_hours: 6
      runs_per_month: 30
hardware:
  provider: PROVIDER
  gpus: [h100-sxm5-80gb]
MORE"""


def test_diff_names_a_spot_rate_by_its_spot_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser66 item 6: buy-or-rent read a spot rate as "prices: (gcp-a3-highgpu-8g $20.00/h)", an on-demand one."""
    from tests.helpers import specgen_in_process as specgen

    bought, spot = tmp_path / "bought.yaml", tmp_path / "spot.yaml"
    bought.write_text(EVAL.replace("SPOT", "").replace("PROVIDER", "baremetal").replace("MORE", "  rack_power_kw: 20\n"))
    rented = "kubernetes: {gcp_project: acme-ml, location: us-central1-a}\nprices: {gcp-a3-highgpu-8g@spot: 20}\n"
    spot.write_text(EVAL.replace("SPOT", "    capacity_type: spot\n").replace("PROVIDER", "gcp").replace("MORE", rented))
    code, out, err = specgen(capsys, "diff", str(bought), str(spot))
    assert code == 0, err
    assert "the rate given under prices: (gcp-a3-highgpu-8g@spot $20.00/h)" in out


def test_a_given_spot_rate_keeps_cost_the_objective(tmp_path: Path) -> None:
    """pinB: fix122's spot fallback read a3-highgpu-8g at its given @spot rate as an on-demand stand-in.

    The eval job then went to 9 x a3-highgpu-4g, unpriced (power-bought: "the cheapest priced layout is ... at the
    on-demand rate (spot bills less; the catalog holds no spot rate)"), where the workload priced the 8-GPU VM's spot
    capacity itself: that price is no stand-in above what spot bills, so the unpriced slices rank after it, by cost.
    """
    path = tmp_path / "spot.yaml"
    rented = "kubernetes: {gcp_project: acme-ml, location: us-central1-a}\nprices: {gcp-a3-highgpu-8g@spot: 20}\n"
    path.write_text(EVAL.replace("SPOT", "    capacity_type: spot\n").replace("PROVIDER", "gcp").replace("MORE", rented))
    plan = plan_as_deployed(str(path))[1]
    # 0 to 5 nodes at the given $20 a node-hour: the pool's $100 an hour
    assert [(p.node.platform_id, p.spot, p.usd_per_hour) for p in plan.pools] == [("gcp-a3-highgpu-8g", True, 100.0)]
    assert not [f for f in plan.findings if f.code == "objective-fallback"]


#: newuser66's owned.yaml: the LoRA job on one of four owned R760s, the other services beside it.
OWNED = (Path(__file__).parent / "data" / "newuser66_owned.yaml").read_text()


def test_a_runner_up_layout_not_on_the_owned_servers_says_it_is_bought(tmp_path: Path) -> None:
    """newuser66 item 5: a bought R760's layout read "on the same servers" beside the owned one ($307 against $111)."""
    path = tmp_path / "owned.yaml"
    path.write_text(OWNED)
    job = next(d for d in plan_as_deployed(str(path))[1].deployments if d.name == "lora-weekly")
    (said,) = [r for r in job.reasons if r.startswith("runner-up layout")]
    assert job.details.get("gpus_bought") == 0, said
    # since acc102 (the L40S's PCIe collectives through host memory, the services' fleet re-planned) the runner-up
    # TP2 ZeRO-0 x DP1 fits the owned R760 itself, and says so; a layout "on the same servers" is charged as the owned
    # one is, its runs' energy (dollars a run), never a bought server's month ($306.88 a run before, ", bought:")
    runner_usd, chosen_usd = (float(x) for x in re.findall(r"\$([\d.,]+) against \$([\d.,]+) per run", said)[0])
    if "on the same servers" in said:
        assert ", bought:" not in said and runner_usd < 10 and chosen_usd < 10, said
    else:
        assert ", bought:" in said and runner_usd > 100, said


def test_pools_of_one_owned_kind_count_no_more_owned_servers_together_than_are_owned(tmp_path: Path) -> None:
    """review67 item 2: 3 owned DGX counted 3 in the services' pool and 1 more in the LoRA job's ($540,000 capex)."""
    path = tmp_path / "owned3.yaml"
    path.write_text((Path(__file__).parent / "data" / "review67_owned_three.yaml").read_text())
    plan = plan_as_deployed(str(path))[1]
    assert sum(p.owned_nodes for p in plan.pools) == 3
    bought = sum(p.nodes - p.owned_nodes for p in plan.pools)
    assert plan.totals["capex_usd"] == bought * 270_000


#: Item 2: the eval beside two owned DGX H100, the rest on servers rented by the hour (prices:).
BURST = """\
  platforms: [dgx-h100, dell-xe9680-hgx-h100-h200]
  rack_power_kw: 20
  inventory:
    - platform: dgx-h100
      count: 2
      hosts: [{name: dgx-01}, {name: dgx-02}]
prices:
  dell-xe9680-hgx-h100-h200: 23.92
"""


def test_a_job_split_over_owned_servers_and_rented_ones_pays_the_rented_part_for_its_runs(tmp_path: Path) -> None:
    """Item 2: the rented part was priced for 730 h: renting all five servers ($18,606) beat the owned DGX + three rented."""
    path = tmp_path / "burst.yaml"
    path.write_text(EVAL.replace("SPOT", "").replace("PROVIDER", "baremetal").replace("MORE", BURST))
    plan = plan_as_deployed(str(path))[1]
    owned = next(p for p in plan.pools if p.owned_nodes)
    rented = next(p for p in plan.pools if p.rented == "hour")
    job = plan.deployments[0]
    assert owned.busy_hours_per_month is None and owned.nodes == 2  # the owned DGX run, paid all month
    assert rented.busy_hours_per_month == pytest.approx(job.details["hours_per_run"] * 30, abs=1e-3)
    assert rented.usd_per_hour is not None and owned.usd_per_hour is not None
    month = owned.usd_per_hour * HOURS_PER_MONTH + rented.usd_per_hour * (rented.busy_hours_per_month or 0)
    assert plan.totals["usd_per_month"] == pytest.approx(month, abs=0.05) and month < 18_000
    assert job.details["usd_per_month"] == pytest.approx(month, abs=1.0)


def test_owned_hosts_stay_with_their_pool_when_a_pool_is_added(tmp_path: Path) -> None:
    """Item 7: the eval grown tenfold moved the re-index job onto an R760 pool, which took r760-01 from the LoRA job."""
    hosts = {}
    for size in ("200000", "2000000"):
        path = tmp_path / f"owned-{size}.yaml"
        path.write_text(OWNED.replace("requests_per_run: 200000", f"requests_per_run: {size}"))
        plan = plan_as_deployed(str(path))[1]
        hosts[size] = {p.name: p.owned_hosts for p in plan.pools if p.owned_hosts}
    lora = "lora_weekly_l40s_48gb"
    assert "reindex_l40s_48gb" in hosts["2000000"] and "reindex_l40s_48gb" not in hosts["200000"]
    assert hosts["2000000"][lora] == hosts["200000"][lora] == ("r760-01",)
