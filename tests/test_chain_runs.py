"""newuser84 item 3: a ``run_after`` sequence whose jobs all run ``runs_per_month`` times on servers bought costs, a run,
the servers' month over those runs, as a job alone does (newuser39 item 7), split between its jobs by their months.

nightly-tune with ``runs_per_month: 30`` on both jobs: the fleet is $12,150.31/month (the jobs' $11,177.66 + $972.65,
the racks' undrawn contract included), so a night is $12,150.31 / 30 = $405.01: lora-70b $11,177.66 / 30 = $372.59 and
full-8b $405.01 - $372.59 = $32.42 (before: $81.62 + $7.10, their 4.9 h and 0.4 h shares of the month). The choice text,
compared before the racks were packed, reads $10,811 / 30 = $360 per run of the sequence (before: "$80 ... as its hours'
share").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.chain_runs import common_runs_per_month
from generator.planner.plan import Plan
from generator.planner.tco import job_runs_per_month
from generator.workload import load_workload

DATA = Path(__file__).parent / "data" / "newuser84"


def _nightly(tmp_path: Path, first: str, second: str) -> Plan:
    text = (DATA / "nightly-tune.yaml").read_text(encoding="utf-8")
    text = text.replace("deadline_hours: 8\n", f"deadline_hours: 8\n{first}", 1)
    text = text.replace("deadline_hours: 10\n", f"deadline_hours: 10\n{second}", 1)
    path = tmp_path / "nightly.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_workload(load_workload(str(path)))


def _jobs(plan: Plan) -> dict[str, dict[str, object]]:
    return {d.name: d.details for d in plan.deployments}


def test_a_run_of_a_nightly_sequence_on_servers_bought_is_their_month_over_its_runs(tmp_path: Path) -> None:
    runs = "      runs_per_month: 30\n"
    plan = _nightly(tmp_path, runs, runs)
    jobs = _jobs(plan)
    month = plan.totals["usd_per_month"]
    assert month == pytest.approx(12_150.31, abs=0.01)
    assert (jobs["lora-70b"]["usd_per_job"], jobs["full-8b"]["usd_per_job"]) == (372.59, 32.42)
    assert jobs["lora-70b"]["usd_per_job"] == round(jobs["lora-70b"]["usd_per_month"] / 30, 2)  # type: ignore[operator]
    # the jobs' runs add up to the sequence's to the cent
    assert round(372.59 + 32.42, 2) == round(month / 30, 2) == 405.01
    # the hours' share stays beside, as a job alone's does
    assert (jobs["lora-70b"]["usd_per_job_hours_share"], jobs["full-8b"]["usd_per_job_hours_share"]) == (81.62, 7.10)
    # its runners-up in SPEC.md and the calculator's report are read at the same runs (job_runs_per_month)
    assert [job_runs_per_month(d) for d in jobs.values()] == [30.0, 30.0]
    chosen = next(r for r in plan.deployments[0].reasons if r.startswith("chosen by"))
    assert (
        "$360 per run of the sequence: $10,811/month of the servers bought, paid whatever runs, over its 30 runs a month, "
        "$79 as its 5.3 h's share" in chosen
    ), chosen


@pytest.mark.parametrize(
    ("first", "second"),
    [("      runs_per_month: 30\n", "      runs_per_month: 15\n"), ("", "")],
    ids=["mixed-cadence", "none-given"],  # one given, the other not, is an input error (chain_errors)
)
def test_a_sequence_whose_jobs_differ_in_runs_keeps_its_hours_share(tmp_path: Path, first: str, second: str) -> None:
    plan = _nightly(tmp_path, first, second)
    for details in _jobs(plan).values():
        assert "usd_per_job_hours_share" not in details and job_runs_per_month(details) is None
    chosen = next(r for r in plan.deployments[0].reasons if r.startswith("chosen by"))
    assert "per run of the sequence as its hours' share of" in chosen and "paid whatever runs" not in chosen


@pytest.mark.parametrize(
    ("runs", "common"),
    [([30.0, 30.0], 30.0), ([30.0, 15.0], None), ([30.0, None], None), ([None, None], None), ([0.0, 0.0], None)],
)
def test_common_runs_per_month(runs: list[float | None], common: float | None) -> None:
    assert common_runs_per_month(runs) == common
