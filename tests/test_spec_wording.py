"""SPEC.md in words a reviewer reads without tripping (newuser24 item 12)."""

from __future__ import annotations

import functools
import re

import pytest

from generator.api import render_file
from generator.planner.plan import Candidate
from generator.render.markdown import candidate_cost, detail_label
from generator.units import HOURS_PER_MONTH
from tests.conftest import REPO


@functools.cache
def spec_md(stem: str) -> str:
    return render_file(str(REPO / "examples" / f"{stem}.yaml"))["SPEC.md"]


@pytest.mark.parametrize(
    ("key", "provider", "label"),
    [
        ("gpus_bought", "aws", "gpus_rented"),
        ("gpus_bought", "gcp", "gpus_rented"),
        ("gpus_bought", "baremetal", "gpus_bought"),
        ("idle_gpus", "aws", "idle_gpus"),
    ],
)
def test_gpus_on_a_cloud_are_rented(key: str, provider: str, label: str) -> None:
    assert detail_label(key, provider) == label


def _candidate(usd_per_hour: float | None, run_hours: float | None = None) -> Candidate:
    return Candidate("h100-sxm5-80gb", "aws-p5-48xlarge", 8, 8, 1, 1, 8, 1, usd_per_hour, 8400, "s", run_hours=run_hours)


def test_a_runner_up_costs_in_the_chosen_layouts_unit_with_its_rate_beside() -> None:
    assert candidate_cost(_candidate(63.3)) == f"${63.3 * HOURS_PER_MONTH:,.0f}/month ($63.30/h)"
    assert candidate_cost(_candidate(113.93, run_hours=0.8)) == f"${113.93 * 0.8:,.0f} per run ($113.93/h)"
    assert candidate_cost(_candidate(None)) == "unpriced"
    # a run on servers bought: its hours' share, as the chosen layout's "per run" (buying them for it alone: the reasons)
    bought = _candidate(9.08, run_hours=42.1)._replace(capex_usd=190_000.0, opex_usd_per_month=1_000.0)
    assert candidate_cost(bought) == f"${9.08 * 42.1:,.0f} per run ($9.08/h)"


@pytest.mark.parametrize(("stem", "had"), [("chat-70b-fp8-aws", "rented"), ("chat-70b", "bought")])
def test_spec_md_says_yes_no_rented_bought_and_one_cost_unit(stem: str, had: str) -> None:
    text = spec_md(stem)
    assert not re.search(r": (True|False)$", text, re.MULTILINE)  # Python's repr of a bool
    assert "- co_located: no" in text
    assert f"- gpus_{had}: " in text and f"- gpus_{'bought' if had == 'rented' else 'rented'}: " not in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and " on " in line and " kW | " in line]
    assert rows and all(re.search(r"\| \$[\d,]+/month \(\$[\d,]+\.\d\d/h\) \|$", row) for row in rows)
