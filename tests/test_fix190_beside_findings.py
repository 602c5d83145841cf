"""fix190: every finding of a training job planned beside services speaks of the layout and pool it was placed on.

colo-mi300x-rocm's weekly LoRA runs TP1 x DP1 on 1 idle MI300X of the services' pool; its findings still said
"DP8 x micro-batch 1" (global-batch-from-layout) and "pool lora_weekly_mi300x_192gb: its energy, $969.01/month"
(training-energy-assumed), price-dated and amd-device-plugin of that pool: findings of the fleet where it had a server
of its own. ``build_plan`` appended its findings to the search pass's list in place, and the beside fleet made from
that pass (``_beside_passes``) kept them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.test_newuser94_beside_service import LAB, ONE_SERVER

ROOT = Path(__file__).resolve().parent.parent


def _example(tmp_path: Path) -> Plan:
    return plan_workload(load_workload(str(ROOT / "examples" / "colo-mi300x-rocm.yaml")))


def _lab(tmp_path: Path, edits: tuple[tuple[str, str], ...] = ()) -> Plan:
    text = LAB
    for old, new in (*ONE_SERVER, *edits):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    return plan_workload(load_workload(str(path)))


def _rag(tmp_path: Path) -> Plan:
    from tests.test_newuser98_colo_rag import PERSONA

    path = tmp_path / "rag.yaml"
    path.write_text(PERSONA.format(rate=1))
    return plan_workload(load_workload(str(path)))


CASES: dict[str, Callable[[Path], Plan]] = {
    "colo-mi300x-rocm": _example,
    "newuser94-lab": _lab,
    "newuser94-lab-buy-false": lambda tmp: _lab(tmp, (("  buy: false\n", ""),)),
    "newuser98-rag": _rag,
}


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_a_beside_jobs_findings_name_the_placed_pool_and_layout(tmp_path: Path, make: Callable[[Path], Plan]) -> None:
    plan = make(tmp_path)
    beside = [f for f in plan.findings if f.code == "training-beside-service"]
    assert len(beside) == 1
    pools = {p.name for p in plan.pools}
    job = next(d for d in plan.deployments if beside[0].message.startswith(f"deployment {d.name}: "))
    assert len(job.pools) == 1 and job.pools[0] in pools
    # no finding names a pool the plan has not (the job's own pool of the fleet it was not placed in)
    for f in plan.findings:
        named = set(re.findall(r"\bpool `?([a-z0-9][a-z0-9_-]*_[a-z0-9]*\d+gb)\b", f.message))
        assert named <= pools, (f.code, named - pools)
    # the layout the job's findings state is the placed one
    dp = job.details["data_parallel"]
    for f in plan.findings:
        for said in re.findall(r"\bDP(\d+) x micro-batch", f.message):
            assert int(said) == dp, (f.code, f.message)
    # findings are not listed twice
    assert len({(f.code, f.path, f.message) for f in plan.findings}) == len(plan.findings)


def test_colo_loras_findings_are_its_single_gpus(tmp_path: Path) -> None:
    plan = _example(tmp_path)
    codes = {f.code for f in plan.findings if "lora-weekly" in f.message or "lora_weekly_mi300x_192gb:" in f.message}
    # DP1 has no batch the layout sets, and its energy is the services' pool's (no pool of its own to charge)
    assert "global-batch-from-layout" not in codes
    assert "training-energy-assumed" not in codes
    job = next(d for d in plan.deployments if d.name == "lora-weekly")
    assert (job.tp, job.gpus, job.details["data_parallel"]) == (1, 1, 1)
    # its GPU-hours are those of the 1 GPU it takes (11.18 h), not of the 8 of a server of its own (89.4)
    assert job.details["gpu_hours_per_job"] == round(job.details["hours"], 1) == 11.2
    # nothing is bought: no capex line of the server its own layout would have bought ($197,000)
    assert plan.totals["capex_usd"] == 0
    assert not [f for f in plan.findings if f.code == "capex-excludes"]


def test_the_host_ram_line_says_what_it_counts(tmp_path: Path) -> None:
    text = next(f.message for f in _example(tmp_path).findings if f.code == "training-beside-service")
    assert "beside 0.00 GiB of 'chat'" not in text
    assert "counted for 'chat', 'coder' and 'embed' (their LoRA adapters' CPU caches; no more for their engines" in text
