"""review68 item 3: ``diff`` read a hand-edited ``spec.json`` without complaint.

A pool listed twice read as "No change to the fleet", a provider of "mars" as a change of provider, and a batch job's
``hours_per_run`` of "x" was echoed as a run of "x h". Each is refused naming the file and the field, exit 1.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers import specgen_in_process as specgen

GOOD = json.loads((REPO / "tests" / "golden" / "batch-jobs-gke" / "spec.json").read_text())


def _pool_twice(plan: dict[str, Any]) -> None:
    plan["pools"].append(copy.deepcopy(plan["pools"][0]))


def _deployment_twice(plan: dict[str, Any]) -> None:
    plan["deployments"].append(copy.deepcopy(plan["deployments"][0]))


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (_pool_twice, "'plan.pools[2].name' 'summarize_h100_sxm5_80gb' is given twice"),
        (_deployment_twice, "'plan.deployments[2].name' 'synth' is given twice"),
        (lambda plan: plan.update(provider="mars"), "'plan.provider' must be one of aws, azure, baremetal, gcp, got 'mars'"),
        (
            lambda plan: plan["deployments"][0]["details"].update(hours_per_run="x"),
            "'plan.deployments[0].details.hours_per_run' must be a number from 0 to 10^12, got 'x'",
        ),
        (
            lambda plan: plan["pools"][0].update(busy_hours_per_month="x"),
            "'plan.pools[0].busy_hours_per_month' must be a number from 0 to 10^12, got 'x'",
        ),
        (lambda plan: plan["pools"][0].update(per_job="yes"), "'plan.pools[0].per_job' must be true or false, got 'yes'"),
        # hostile79 item 3: a traceback for "abc", [1], {}; -3, 1.5, "4", true and more than the pool's nodes taken
        *(
            (
                lambda plan, bad=bad: plan["pools"][0].update(owned_nodes=bad),
                f"'plan.pools[0].owned_nodes' must be a whole number from 0 to the pool's 'nodes' (1), got {shown}",
            )
            for bad, shown in [
                ("abc", "'abc'"),
                ([1], "[1]"),
                ({"a": 1}, "{'a': 1}"),
                (-3, "-3"),
                (1.5, "1.5"),
                ("4", "'4'"),
                (True, "True"),
                (2, "2"),
                (10**300, "1" + "0" * 59 + "..."),
            ]
        ),
        # hostile81 item 1: tp 0 / pp 2.5 passed as figures and were echoed as a layout "TP0xPP1"
        (
            lambda plan: plan["deployments"][1].update(tp=0),
            "'plan.deployments[1].tp' must be a whole number of at least 1, got 0",
        ),
        (
            lambda plan: plan["deployments"][1].update(pp=2.5),
            "'plan.deployments[1].pp' must be a whole number of at least 1, got 2.5",
        ),
        (
            lambda plan: plan["deployments"][0]["split"].append({"pool": None, "tp": 0, "pp": 1, "replicas": 1}),
            "'plan.deployments[0].split[0].tp' must be a whole number of at least 1, got 0",
        ),
        # hostile81 item 2: owned_hosts read unchecked: a 3 MB name echoed whole, a dict's repr, a text taken as none
        (
            lambda plan: plan["pools"][0].update(owned_hosts=["h" * 3_000_000]),
            "'plan.pools[0].owned_hosts[0]' must be a host name of 1 to 200 characters, got '" + "h" * 60 + "'...",
        ),
        (
            lambda plan: plan["pools"][0].update(owned_hosts=[{"a": 1}]),
            "'plan.pools[0].owned_hosts[0]' must be a host name of 1 to 200 characters, got {'a': 1}",
        ),
        (
            lambda plan: plan["pools"][0].update(owned_hosts=["gpu-01", 7]),
            "'plan.pools[0].owned_hosts[1]' must be a host name of 1 to 200 characters, got 7",
        ),
        (
            lambda plan: plan["pools"][0].update(owned_hosts="gpu-01"),
            "'plan.pools[0].owned_hosts' must be a list of host names, got 'gpu-01'",
        ),
    ],
    ids=[
        "pool-twice",
        "deployment-twice",
        "provider-unknown",
        "hours-text",
        "busy-hours-text",
        "per-job-text",
        *(f"owned-nodes-{k}" for k in ("text", "list", "dict", "negative", "fraction", "digits", "bool", "above", "huge")),
        "tp-zero",
        "pp-fraction",
        "split-tp-zero",
        "owned-hosts-long",
        "owned-hosts-dict",
        "owned-hosts-number",
        "owned-hosts-text",
    ],
)
def test_diff_refuses_a_spec_json_value_no_plan_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[dict[str, Any]], None], said: str
) -> None:
    (tmp_path / "old.json").write_text(json.dumps(GOOD))
    spec = copy.deepcopy(GOOD)
    edit(spec["plan"])
    (tmp_path / "new.json").write_text(json.dumps(spec))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert code == 1 and out == "", err
    # hostile84 item 1: at the line and column of the value it names
    assert re.search(rf"new\.json:1:\d+: not a specgen spec\.json: {re.escape(said)}", err), err
    assert specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "old.json"))[0] == 0


def _key_twice(text: str, key: str, value: str) -> str:
    """``text`` with ``"key": value,`` written at the start of the first object that names ``key`` (a hand edit)."""
    at = text.index(f'"{key}":')
    return text[:at] + f'"{key}": {value},\n' + text[at:]


@pytest.mark.parametrize(
    ("key", "value", "located"),
    [
        # hostile82 item 2: the top-level "plan" written twice; Python's json kept the second, the edit was dropped
        ("plan", "1", "new.json:4:1:"),  # the insert leaves the original key at column 1
        # a pool's nodes given twice: the diff read whichever came last
        ("nodes", "99", None),
    ],
    ids=["plan-twice", "pool-nodes-twice"],
)
def test_diff_refuses_a_key_given_twice_in_a_spec_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str, located: str | None
) -> None:
    text = json.dumps(GOOD, indent=2)
    (tmp_path / "old.json").write_text(text)
    edited = _key_twice(text, key, value)
    (tmp_path / "new.json").write_text(edited)
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert code == 1 and out == "", err
    assert f"cannot read spec.json: key '{key}' is given twice in one object" in err
    repeat = edited.index(f'"{key}":', edited.index(f'"{key}": {value},') + 1)  # the second of the two, located
    line = edited[:repeat].count("\n") + 1
    assert f"new.json:{line}:" in err and (located is None or located in err), err
    assert specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "old.json"))[0] == 0
