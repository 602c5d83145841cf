"""The racks'-contract reason gives the run ``usd_per_job`` holds where it is the month over the job's runs (fix150).

nightly-tune (tests/data/newuser84) with ``runs_per_month: 30`` on both jobs, on a Supermicro H200 server bought into a
rack billed at its circuits' contracted kW: lora-70b's reason read "a run $82 as its 4.9 h's share of that month ($73
without it)" while its ``usd_per_job`` is 372.59 (its month over the sequence's 30 runs, fix148), and the choice's
"$360 per run of the sequence" stood beside the sequence's 405.01 a run with the contract. The reason now says the run
``usd_per_job`` holds, that it is the month with the contract over the runs, the sequence's run, and the hours' share
beside; the choice below it is compared without the contract, as the reason says.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.plan import Plan
from generator.planner.run_reasons import ContractReason, contract_reason

NIGHTLY = (Path(__file__).resolve().parent / "data/newuser84/nightly-tune.yaml").read_text()


def _plan(tmp_path: Path, chained: bool = True) -> Plan:
    text = re.sub(r"(\n      deadline_hours: \d+\n)", r"\1      runs_per_month: 30\n", NIGHTLY)
    text = text if chained else text.replace("      run_after: lora-70b\n", "")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return plan_file(str(path))[1]


def _contract(plan: Plan, name: str) -> str:
    dep = next(d for d in plan.deployments if d.name == name)
    return next(r for r in dep.reasons if r.startswith("its racks' contract"))


def test_a_sequence_jobs_contract_reason_gives_its_run_as_usd_per_job_holds(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    deps = {d.name: d.details for d in plan.deployments}
    sequence_run = math.fsum(d["usd_per_job"] for d in deps.values())
    assert sequence_run == pytest.approx(plan.totals["usd_per_month"] / 30, abs=0.01)  # 405.01: the fleet's month / 30
    for name, details in deps.items():
        reason = _contract(plan, name)
        assert details["usd_per_job"] == pytest.approx(details["usd_per_month"] / 30, abs=0.01)
        said = (
            f"and a run ${details['usd_per_job']:,.0f} with it, that month over the sequence's 30 runs a month (a run of "
            f"the sequence ${sequence_run:,.0f} with it, its jobs' runs summed); as its {details['hours']:,.1f} h's share "
            f"of that month a run is ${details['usd_per_job_hours_share']:,.0f} ("
        )
        assert said in reason, reason  # was "and a run $82 as its 4.9 h's share of that month ($73 without it)"
        assert "compared before the racks were packed, at the kW their servers draw, without it" in reason
    assert "a run $373 with it" in _contract(plan, "lora-70b") and "(a run of the sequence $405 with it" in _contract(
        plan, "full-8b"
    )


def test_a_job_alones_contract_reason_gives_its_month_over_its_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, chained=False)
    for dep in plan.deployments:
        details = dep.details
        assert details["usd_per_job"] == pytest.approx(details["usd_per_month"] / 30, abs=0.01)
        reason = _contract(plan, dep.name)
        assert f"and a run ${details['usd_per_job']:,.0f} with it, that month over its 30 runs a month; as its " in reason
        assert "sequence" not in reason


_FIGURES = ContractReason(50.0, 500.0, 82.68, 73.57, 4.9, "its pools' share", owned=False)
_MONTH = {"runs_per_month": 30, "usd_per_job": 372.59, "usd_per_job_hours_share": 82.68}


@pytest.mark.parametrize(
    ("figures", "details", "sequence_usd", "clause"),
    [
        (_FIGURES, {}, None, ", and a run $83 as its 4.9 h's share of that month ($74 without it); the choice"),
        (_FIGURES, {**_MONTH, "runs_per_month": 0}, None, "$83 as its 4.9 h's share of that month ($74 without it);"),
        (
            _FIGURES,
            _MONTH,
            None,
            ", and a run $373 with it, that month over its 30 runs a month; as its 4.9 h's share of that month a run is "
            "$83 ($74 without it); the choice",
        ),
        (
            _FIGURES,
            _MONTH,
            405.01,
            ", and a run $373 with it, that month over the sequence's 30 runs a month (a run of the sequence $405 with "
            "it, its jobs' runs summed); as its 4.9 h's share of that month a run is $83 ($74 without it); the choice",
        ),
        (_FIGURES._replace(owned=True, run_usd=21.5), _MONTH, None, ", and a run $21.50 with it or without, the energy"),
        (_FIGURES._replace(run_hours=None), _MONTH, None, "undrawn: $500/month with it; the choice"),
        (_FIGURES._replace(month_usd=None, run_without_usd=None), _MONTH, None, "leave undrawn; the choice"),
    ],
)
def test_the_contract_reason_gives_the_run_its_details_hold(
    figures: ContractReason, details: dict[str, float], sequence_usd: float | None, clause: str
) -> None:
    reason = contract_reason(figures, details, sequence_usd)
    assert reason.startswith("its racks' contract (hardware.rack_circuits) adds $50/month, its pools' share of the")
    assert clause in reason, reason
