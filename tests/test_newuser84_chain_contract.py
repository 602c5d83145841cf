"""newuser84 item 1: a training chain (``run_after``) on racks billed at their circuits' contracted kW carries its pool's
share of the kW the racks leave undrawn, as a job alone in its pool does (newuser74 item 7): the chain jobs' months add
up to the fleet's, each job's run is its hours' share of that month, and each says so.

Before: nightly-tune's lora-70b and full-8b said $9,955.44 + $855.17 = $10,810.61 a month against the fleet's
$12,150.31 (the $1,339.70 the rack's 17.481 kW contract leaves undrawn was in the pool and the totals only), and a run
of the sequence $73.57 + $6.32 without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.units import HOURS_PER_MONTH
from generator.workload import load_workload

DATA = Path(__file__).parent / "data" / "newuser84"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_workload(load_workload(str(DATA / "nightly-tune.yaml")))


def test_the_chain_jobs_months_add_up_to_the_pool_that_carries_the_undrawn_contract(plan: Plan) -> None:
    (pool,) = plan.pools
    assert pool.usd_per_hour is not None and pool.price_basis is not None
    assert "+$1,340/month, this pool's share of the contracted kW" in pool.price_basis
    jobs = [d for d in plan.deployments if d.name in ("lora-70b", "full-8b")]
    assert len(jobs) == 2
    month = sum(d.details["usd_per_month"] for d in jobs)
    assert month == pytest.approx(pool.usd_per_hour * HOURS_PER_MONTH, abs=0.02)
    assert month == pytest.approx(12_150.31, abs=0.02)
    opex = sum(d.details["opex_usd_per_month"] for d in jobs)
    assert opex == pytest.approx(pool.opex_usd_per_month, abs=0.02)
    assert sum(d.details["capex_usd"] for d in jobs) == 289_000


def test_each_chain_jobs_run_is_its_hours_share_of_the_month_with_the_contract(plan: Plan) -> None:
    for job in (d for d in plan.deployments if d.name in ("lora-70b", "full-8b")):
        hours = job.details["hours"]
        # usd_per_job is its own run's hours at the pool's rate, the undrawn contract included (hours to the hundredth)
        assert job.details["usd_per_job"] == pytest.approx(hours / HOURS_PER_MONTH * 12_150.31 * 1, rel=0.01)
    said = {d.name: [r for r in d.reasons if r.startswith("its racks' contract")] for d in plan.deployments}
    assert said == {
        "lora-70b": [
            "its racks' contract (hardware.rack_circuits) adds $1,232/month, its hours' share of its pool's share of "
            "the contracted kW their racks leave undrawn: $11,178/month with it, and a run $82 as its 4.9 h's share of "
            "that month ($73 without it); the choice and runners-up below were compared before the racks were packed, "
            "at the kW their servers draw, without it"
        ],
        "full-8b": [
            "its racks' contract (hardware.rack_circuits) adds $107/month, its hours' share of its pool's share of "
            "the contracted kW their racks leave undrawn: $973/month with it, and a run $7 as its 0.4 h's share of "
            "that month ($6 without it); the choice and runners-up below were compared before the racks were packed, "
            "at the kW their servers draw, without it"
        ],
    }


def test_owned_servers_month_says_it_counts_one_run_where_the_job_gives_no_runs(tmp_path: Path) -> None:
    """newuser84 item 3: tune-owned's nightly chain on an owned DGX H100 read "$1,894/month" (its colocation and one
    run's energy, $17) with nothing saying one run: 30 runs are $2,391. The charge now says it, and goes when given."""
    source = (DATA / "tune-then-serve.yaml").read_text(encoding="utf-8")
    alone = plan_workload(load_workload(str(DATA / "tune-then-serve.yaml")))
    note = "x PUE 1.56 x $0.13/kWh, one run a month: training.runs_per_month not given)"
    assert alone.totals["usd_per_month"] == pytest.approx(1_893.95, abs=0.01)
    for dep in alone.deployments:
        assert any(note in r for r in dep.reasons), dep.reasons
    nightly = tmp_path / "nightly.yaml"
    nightly.write_text(source.replace("deadline_hours: 10\n", "deadline_hours: 10\n      runs_per_month: 30\n"), encoding="utf-8")
    given = plan_workload(load_workload(str(nightly)))
    assert given.totals["usd_per_month"] == pytest.approx(2_391.25, abs=0.01)
    text = " ".join(r for dep in given.deployments for r in dep.reasons)
    assert "x PUE 1.56 x $0.13/kWh x 30 runs a month)" in text and "runs_per_month not given" not in text


def test_an_owned_server_left_free_says_the_colocation_it_costs_anyway() -> None:
    """newuser84 item 4: with buy: false, day-serve used one of its two owned XE9680 and read "$2,783/month" beside
    "left free: gpu-b02", the free server's colocation (10.2 kW x $184/kW-month = $1,877) paid but unsaid."""
    plan = plan_workload(load_workload(str(DATA / "day-serve.yaml")))
    assert plan.totals["usd_per_month"] == pytest.approx(2_782.83, abs=0.01)
    (free,) = [f for f in plan.findings if f.code == "inventory-free"]
    assert free.message == (
        "1 of 2 owned dell-xe9680-hgx-h100-h200 server(s) (8 x h100-sxm5-80gb) left free: gpu-b02 "
        "(Ansible group free_nodes); the free ones' colocation, $1,877 a month, is paid whether they run or not and the "
        "plan's monthly figure leaves it out"
    )
    assert not [f for f in plan.findings if f.code == "owned-idle-while-bought"]
