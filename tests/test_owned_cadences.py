"""An owned pool of training jobs of different cadences, or jobs giving no runs_per_month: its charge says each job's.

fix150 (review84's edge case of newuser84 item 2): ``owned_pool_runs`` charged a pool whose jobs ran at different
cadences, one giving no runs_per_month, nothing for their runs (``busy_hours`` was None, taken as 0 h) while its cost
line said "one run a month: training.runs_per_month not given" of the whole pool; a chain of mixed cadences read
"its runs' energy (95.1 h x ...)", the month's busy hours said as one run's. Each job's runs a month x its hours a run
are now said and summed, the job(s) charged one run because they give none named, and the charge is that sum.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.plan import Plan
from generator.planner.training_energy import owned_pool_runs
from generator.sizing.constants import Constants
from generator.workload.models import Workload

REPO = Path(__file__).resolve().parent.parent
OWNED = (REPO / "tests/data/newuser84/tune-then-serve.yaml").read_text()


def _plan(tmp_path: Path, full: int | None, lora: int | None) -> tuple[Workload, Plan]:
    """tune-then-serve (one owned DGX H100: full-8b then lora-70b, run_after) with the jobs' runs_per_month."""
    text = OWNED
    if full is not None:
        text = text.replace("      epochs: 2\n", f"      epochs: 2\n      runs_per_month: {full}\n", 1)
        text = text.replace("      deadline_hours: 10\n  - name: lora-70b", "  - name: lora-70b", 1)  # sliced: due later
    if lora is not None:
        text = text.replace("      run_after: full-8b\n", f"      run_after: full-8b\n      runs_per_month: {lora}\n")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    loaded, plan = plan_file(str(path))
    return loaded.workload, plan


def _energy_per_hour(plan: Plan) -> float:
    """The DGX's full power x PUE x $/kWh, from its pool (racked: the catalog's PUE)."""
    (pool,) = plan.pools
    consts = Constants()
    return pool.node.power_w / 1000 * consts.pue * consts.energy_usd_per_kwh


def _busy(plan: Plan, runs: dict[str, float]) -> float:
    """Each job's runs x (its hours + its slices' checkpoint writes and reads), summed: the pool's busy hours."""
    total = 0.0
    for d in plan.deployments:
        pauses = d.details.get("slice_checkpoint_hours_per_run") or 0.0
        total += runs[d.name] * (d.details["hours"] + pauses)
    return total


def test_mixed_cadences_say_each_jobs_runs_and_charge_their_sum(tmp_path: Path) -> None:
    _, plan = _plan(tmp_path, 1, 30)
    (pool,) = plan.pools
    busy = _busy(plan, {"full-8b": 1, "lora-70b": 30})
    hours = {d.name: d.details["hours"] + (d.details.get("slice_checkpoint_hours_per_run") or 0.0) for d in plan.deployments}
    said = f"(1 x {hours['full-8b']:,.2f} h full-8b + 30 x {hours['lora-70b']:,.2f} h lora-70b = {busy:,.1f} h) x 10.20 kW"
    assert said in (pool.price_basis or ""), pool.price_basis  # was "its runs' energy (95.1 h x 10.20 kW ..."
    assert busy == pytest.approx(95.1, abs=0.05)
    colocation = float(re.search(r"colocation \$([\d,]+)/month", pool.price_basis or "").group(1).replace(",", ""))  # type: ignore[union-attr]
    assert pool.opex_usd_per_month == pytest.approx(busy * _energy_per_hour(plan) + colocation, abs=1.0)
    # each job's run is the energy its own hours add, and the months add up to the pool's to the cent: the pool's charge
    # re-split as the jobs' months were (fix154: $116.92 + $1,956.40 = $2,073.32 against the pool's $2,073.43 before)
    for d in plan.deployments:
        assert d.details["usd_per_job"] == pytest.approx(hours[d.name] * _energy_per_hour(plan), abs=0.02), d.name
    assert pool.opex_usd_per_month is not None
    assert round(math.fsum(d.details["usd_per_month"] for d in plan.deployments) * 100) == round(pool.opex_usd_per_month * 100)


def test_a_job_giving_no_runs_among_others_is_named_and_charged_one_run(tmp_path: Path) -> None:
    wl, plan = _plan(tmp_path, 1, 30)
    (pool,) = plan.pools
    # the planner refuses a chain with runs_per_month on one job and not another (workload.chains); the pool's charge
    # is asked of such jobs here: full-8b gives none
    deps = [
        d._replace(details={k: v for k, v in d.details.items() if k != "runs_per_month"}) if d.name == "full-8b" else d
        for d in plan.deployments
    ]
    owned = owned_pool_runs(wl, pool, deps, Constants())
    assert owned is not None
    busy = _busy(plan, {"full-8b": 1, "lora-70b": 30})
    # before: busy_hours was None, the runs charged $0 beside "one run a month: training.runs_per_month not given"
    assert owned.energy_usd_per_month == pytest.approx(busy * _energy_per_hour(plan), rel=1e-9)
    text = owned.text()
    assert " h full-8b (one run assumed) + 30 x " in text
    assert "one run a month assumed for full-8b: training.runs_per_month not given" in text
    assert "lora-70b (one run assumed)" not in text


def test_a_chain_giving_no_runs_names_its_jobs(tmp_path: Path) -> None:
    _, plan = _plan(tmp_path, None, None)
    (pool,) = plan.pools
    hours = sum(d.details["hours"] for d in plan.deployments)
    basis = pool.price_basis or ""
    energy = f"its runs' energy ({hours:,.1f} h x 10.20 kW x PUE 1.56 x $0.13/kWh"
    assert f"{energy}, one run a month assumed for full-8b " in basis
    assert "and lora-70b: training.runs_per_month not given)" in basis


def test_one_cadence_reads_as_before(tmp_path: Path) -> None:
    text = OWNED.replace("      epochs: 2\n", "      epochs: 2\n      runs_per_month: 30\n", 1)
    text = text.replace("      run_after: full-8b\n", "      run_after: full-8b\n      runs_per_month: 30\n")
    path = tmp_path / "w30.yaml"
    path.write_text(text)
    (pool,) = plan_file(str(path))[1].pools
    assert re.search(
        r"its runs' energy \([\d.]+ h x 10\.20 kW x PUE 1\.56 x \$0\.13/kWh x 30 runs a month\)", pool.price_basis or ""
    )
    assert "assumed" not in (pool.price_basis or "")
