"""The library face gives what the CLI gives: the deployed plan with its findings, and errors that say where (newuser33).

Item 4: ``api.plan_file`` returned the planner's plan, without the findings deployment adds (``karpenter-api-gpu-count``
among them, a warning ``render --fail-on warning`` fails on), so a bot gating through the library passed what the CLI
failed. Item 10: an infeasible workload's error carried its file, line and field only inside the message text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import api
from generator.errors import InfeasibleError, Location
from tests.conftest import REPO
from tests.helpers import run_specgen

AWS = REPO / "examples" / "chat-70b-fp8-aws.yaml"
INFEASIBLE = REPO / "examples" / "infeasible" / "home-405b.yaml"


def test_plan_as_deployed_is_the_plan_the_cli_prints() -> None:
    result = run_specgen("plan", "--format", "json", str(AWS))
    assert result.returncode == 0, result.stderr
    loaded, plan = api.plan_as_deployed(str(AWS))
    assert plan.to_dict() == json.loads(result.stdout)
    codes = {f.code for f in plan.findings}
    # what deployment adds, which the planner's plan lacks
    assert "karpenter-replacement-slot" in codes
    assert not {"karpenter-replacement-slot"} & {f.code for f in api.plan_file(str(AWS))[1].findings}
    # located as the CLI prints them: file:line:col
    for level, code, message, where in api.locate_findings(loaded, plan.findings):
        assert level in ("info", "warning", "error") and code and message
        assert where.startswith(f"{AWS}:") and where.split(":")[-1].isdigit()


def test_an_infeasible_workload_error_says_where_as_a_location() -> None:
    with pytest.raises(InfeasibleError) as caught:
        api.plan_file(str(INFEASIBLE))
    where = caught.value.location
    assert isinstance(where, Location)
    assert where.file == str(INFEASIBLE) and where.line and where.column and where.path
    assert str(caught.value).startswith(f"{where}: 'meta-llama/Llama-3.1-405B-Instruct' cannot run on hardware.fixed: ")
    # the message is the one the CLI prints (exit 3), location first
    cli = run_specgen("plan", str(INFEASIBLE))
    assert cli.returncode == 3
    assert f"{where.file}:{where.line}:{where.column}: {where.path}: 'meta-llama/Llama-3.1-405B-Instruct' " in cli.stderr


def test_a_fleet_limit_error_says_where_as_a_location(tmp_path: Path) -> None:
    text = AWS.read_text(encoding="utf-8").replace("hardware:\n", "hardware:\n  max_budget_usd_per_month: 1000\n", 1)
    path = tmp_path / "limited.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InfeasibleError) as caught:
        api.plan_file(str(path))
    assert caught.value.location is not None and caught.value.location.path == "hardware.max_budget_usd_per_month"
    assert str(caught.value).startswith(f"{caught.value.location}: ")
