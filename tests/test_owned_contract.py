"""Owned servers of training jobs in racks billed at their circuits' contracted kW: the pools carry what they leave undrawn.

fix150: tune-then-serve (tests/data/newuser84: one owned DGX H100, full-8b then lora-70b, run_after) with
``rack_circuits`` instead of ``rack_power_kw``. The colocation finding said "the pools' costs carry the $1,339.70 the
racks leave undrawn", and the chain's jobs' months held it ($2,068 + $1,165 = $3,234), but the owned pool's charge
(its runs' energy and colocation, fix89) replaced its running cost without it: the fleet read $1,894/month. And each
job's run read "a run $21 as its 5.3 h's share of that month ($11 without it)": its energy plus the contract's hours
(a 5.3 h share of $2,068 is $15), where an owned server's run is the energy it adds (fix89). The pool now carries its
share, the jobs' months add up to it, and a run stays its energy, said so.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.plan import Plan
from generator.sizing.constants import Constants

OWNED = (Path(__file__).resolve().parent / "data/newuser84/tune-then-serve.yaml").read_text()
CIRCUITS = "  rack_circuits: {circuits: 2, breaker_a: 32, voltage_v: 415, phases: 3, redundancy: 2N}"


def _plan(tmp_path: Path, chained: bool) -> Plan:
    text = OWNED.replace("  rack_power_kw: 30", CIRCUITS)
    if not chained:  # each job on an owned DGX of its own
        text = text.replace("      run_after: full-8b\n", "").replace("count: 1", "count: 2")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return plan_file(str(path))[1]


def _finding(plan: Plan) -> tuple[float, float, float]:
    """The colocation finding's contract, the servers' draw and the undrawn kW the pools carry, USD a month."""
    message = next(f.message for f in plan.findings if f.code == "colocation-per-rack")
    found = re.search(r"= \$([\d,.]+)/month; the servers billed here draw [\d.]+ kW \(\$([\d,.]+)\), and the pools' costs carry "
                      r"the \$([\d,.]+) the racks leave undrawn", message)  # fmt: skip
    assert found is not None, message
    contract, drawn, undrawn = (float(g.replace(",", "")) for g in found.groups())
    assert contract == pytest.approx(drawn + undrawn, abs=0.01)
    return contract, drawn, undrawn


def _energy_per_hour(plan: Plan) -> float:
    pool = plan.pools[0]
    return pool.node.power_w / 1000 * Constants().pue * Constants().energy_usd_per_kwh


@pytest.mark.parametrize("chained", [True, False])
def test_owned_pools_carry_the_undrawn_contract_the_finding_says(tmp_path: Path, chained: bool) -> None:
    plan = _plan(tmp_path, chained)
    contract, _, undrawn = _finding(plan)
    runs = math.fsum(d.details["hours"] for d in plan.deployments) * _energy_per_hour(plan)  # one run each (none given)
    # the fleet: its racks' whole contract and its runs' energy (was the contract less the undrawn kW: $1,894 chained)
    assert plan.totals["usd_per_month"] == pytest.approx(contract + runs, abs=0.1)
    assert math.fsum(p.opex_usd_per_month or 0.0 for p in plan.pools) == pytest.approx(plan.totals["usd_per_month"], abs=0.02)
    # the jobs' months add up to the pools'
    months = math.fsum(d.details["usd_per_month"] for d in plan.deployments)
    assert months == pytest.approx(plan.totals["usd_per_month"], abs=0.02)
    share = undrawn / len(plan.pools)
    for pool in plan.pools:
        assert f"(hardware.rack_circuits): +${share:,.0f}/month, this pool's share" in (pool.price_basis or "")


def test_an_owned_chain_jobs_run_stays_the_energy_it_adds(tmp_path: Path) -> None:
    plan = _plan(tmp_path, chained=True)
    for dep in plan.deployments:
        energy = dep.details["hours"] * _energy_per_hour(plan)
        assert dep.details["usd_per_job"] == pytest.approx(energy, abs=0.02), dep.name  # was $20.91 for full-8b
        reason = next(r for r in dep.reasons if r.startswith("its racks' contract"))
        assert f"and a run ${dep.details['usd_per_job']:,.2f} with it or without, the energy it adds" in reason
        assert "h's share of that month" not in reason
