"""newuser26 item 12: a nightly fine-tune rented per run was "$41 per training run" beside a monthly headline that left
its 30 runs out; ``training.runs_per_month`` puts them in the month, the budget and the fleets' ranking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError

NIGHTLY = """\
version: 1
name: nightly
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, requests_per_second: 1}
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: lora, sequence_length: 4096, dataset_tokens: 200000000, deadline_hours: 6RUNS}
hardware: {provider: aws}
"""


def _plan(tmp_path: Path, runs: str = ", runs_per_month: 30", extra: str = "") -> dict[str, Any]:
    path = tmp_path / "w.yaml"
    path.write_text(NIGHTLY.replace("RUNS", runs).replace("hardware: {provider: aws}", f"hardware: {{provider: aws{extra}}}"))
    return plan_file(str(path))[1].to_dict()


def test_the_runs_are_counted_a_month(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    totals, (tune,) = plan["totals"], [d for d in plan["deployments"] if d["name"] == "tune"]
    per_run = tune["details"]["usd_per_job"]
    assert tune["details"]["runs_per_month"] == 30
    assert tune["details"]["usd_per_month_of_runs"] == pytest.approx(30 * per_run, abs=0.01)
    assert totals["training_usd_per_month"] == tune["details"]["usd_per_month_of_runs"]
    assert totals["training_usd_per_job"] == per_run
    assert "training_usd_per_month" not in _plan(tmp_path, runs="")["totals"]  # not said: one run's cost alone


def test_the_budget_holds_the_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    month, runs = plan["totals"]["usd_per_month"], plan["totals"]["training_usd_per_month"]
    # a budget above serving and one run, below serving and thirty: refused now, where one run was all it held
    one_run = month + plan["totals"]["training_usd_per_job"]
    between = round((one_run + month + runs) / 2)
    _plan(tmp_path, runs="", extra=f", max_budget_usd_per_month: {between}")
    with pytest.raises(InfeasibleError, match="above max_budget_usd_per_month"):
        _plan(tmp_path, extra=f", max_budget_usd_per_month: {between}")
