"""fix154 item 5: a chain's jobs' months add up to their pool's to the cent once the pool is charged its runs' energy.

fix150's known gaps. nightly-tune (two jobs, ``run_after``, on one H200 server bought into a colo rack) at 100 runs a
month is busy 533.0 h, more than 0.6 x 730 h: the pool is charged its runs' energy, +$197/month (charge_runs_energy),
$12,346.82/month, while its jobs' months stayed at the layout's $11,177.66 + $972.65 = $12,150.31 and a run of the
sequence read $111.78 + $9.72 = $121.50 against $12,346.82 / 100 = $123.47. An owned DGX holding a chain of mixed
cadences was charged its runs' energy at the jobs' hours as planned while its jobs' months split the layout's charge:
1 to 11 cents apart. One rule now (chain_runs.resplit_pool_months): the jobs holding such a pool take its new month and
opex, split as their months were, to the cent: lora-70b $11,358.44 + full-8b $988.38 = $12,346.82.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.chain_runs import rounded_steps
from generator.planner.plan import Plan

DATA = Path(__file__).parent / "data" / "newuser84"


def _plan(tmp_path: Path, name: str, edits: list[tuple[str, str]]) -> Plan:
    text = (DATA / name).read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_file(str(path))[1]


def _nightly(tmp_path: Path, runs: int) -> Plan:
    each = f"      runs_per_month: {runs}\n"
    return _plan(
        tmp_path,
        "nightly-tune.yaml",
        [("deadline_hours: 8\n", f"deadline_hours: 8\n{each}"), ("deadline_hours: 10\n", f"deadline_hours: 10\n{each}")],
    )


def _cents(figures: list[float]) -> int:
    return round(math.fsum(figures) * 100)


def test_a_bought_chain_pools_extra_energy_is_in_its_jobs_months(tmp_path: Path) -> None:
    plan = _nightly(tmp_path, 100)
    (pool,) = plan.pools
    assert "+$197/month" in (pool.price_basis or ""), pool.price_basis  # the runs draw more than the month's figure
    jobs = {d.name: d.details for d in plan.deployments}
    month = plan.totals["usd_per_month"]
    assert month == 12_346.82 and pool.opex_usd_per_month == 4_319.04
    assert (jobs["lora-70b"]["usd_per_month"], jobs["full-8b"]["usd_per_month"]) == (11_358.44, 988.38)  # 11,177.66 + 972.65
    assert _cents([d["usd_per_month"] for d in jobs.values()]) == round(month * 100)
    assert _cents([d["opex_usd_per_month"] for d in jobs.values()]) == round(pool.opex_usd_per_month * 100)
    # a run of the sequence is the pool's month over its 100 runs, to the cent (was $111.78 + $9.72 = $121.50)
    assert (jobs["lora-70b"]["usd_per_job"], jobs["full-8b"]["usd_per_job"]) == (113.58, 9.89)
    assert _cents([d["usd_per_job"] for d in jobs.values()]) == round(month / 100 * 100) == 12_347


def test_below_the_months_figure_the_jobs_months_are_as_before(tmp_path: Path) -> None:
    plan = _nightly(tmp_path, 30)  # busy 159.9 h: the month's figure stands, nothing re-split
    jobs = {d.name: d.details for d in plan.deployments}
    assert (jobs["lora-70b"]["usd_per_month"], jobs["full-8b"]["usd_per_month"]) == (11_177.66, 972.65)
    assert _cents([d["usd_per_month"] for d in jobs.values()]) == round(plan.totals["usd_per_month"] * 100)


@pytest.mark.parametrize(("full", "lora"), [(1, 30), (30, 30), (2, 60)])
def test_an_owned_chain_pools_months_are_its_jobs_to_the_cent(tmp_path: Path, full: int, lora: int) -> None:
    edits = [
        ("      epochs: 2\n", f"      epochs: 2\n      runs_per_month: {full}\n"),
        ("      run_after: full-8b\n", f"      run_after: full-8b\n      runs_per_month: {lora}\n"),
    ]
    if full != lora:
        edits.append(("      deadline_hours: 10\n  - name: lora-70b", "  - name: lora-70b"))  # sliced: due later
    plan = _plan(tmp_path, "tune-then-serve.yaml", edits)
    (pool,) = [p for p in plan.pools if any(p.name in d.pools for d in plan.deployments if d.kind == "training")]
    jobs = [d.details for d in plan.deployments if d.kind == "training"]
    assert all("cost_share" in d for d in jobs)
    assert _cents([d["opex_usd_per_month"] for d in jobs]) == round(pool.opex_usd_per_month * 100)  # type: ignore[operator]
    assert _cents([d["usd_per_month"] for d in jobs]) == round(pool.opex_usd_per_month * 100)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("whole", "weights"),
    [(12_346.82, [11_177.66, 972.65]), (0.05, [1.0, 1.0, 1.0]), (2_073.43, [2_000.0, 73.32]), (100.0, [1.0, 2.0, 3.0, 4.0])],
)
def test_rounded_steps_add_up_to_the_whole_to_the_cent(whole: float, weights: list[float]) -> None:
    parts = rounded_steps(whole, weights)
    assert _cents(parts) == round(whole * 100)
    for part, weight in zip(parts, weights, strict=True):
        assert part == pytest.approx(whole * weight / math.fsum(weights), abs=0.01)
