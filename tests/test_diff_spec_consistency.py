"""``diff`` reads a spec.json only where its parts agree, and its values are ones the planner writes (newuser75 items 4,
9, 10).

A hand-edited spec.json whose pools were emptied, totals unchanged, printed a pool "removed" beside totals of "0 change"
and exited 0; ``provider: null`` was printed as Python's ``None``; an integer ``workload``, ``labels: 5``, a pool named
``../../evil`` or 10,000 characters long went through; a truncated file's error had no ``file:line:col``.
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

GOLDEN = REPO / "tests" / "golden"
#: Trees whose spec.json has racks (chat-70b), batch jobs' hours (batch-jobs-gke), a split deployment (fleet-split).
TREES = ("chat-70b", "batch-jobs-gke", "fleet-split", "mixed")


def _plan(tree: str) -> dict[str, Any]:
    return dict(json.loads((GOLDEN / tree / "spec.json").read_text()))


def _no_pools(plan: dict[str, Any]) -> None:
    plan["pools"] = []
    plan.pop("racks", None)


def _no_racks_no_pools(plan: dict[str, Any]) -> None:
    _no_pools(plan)
    plan["deployments"] = []


def _more_gpus(plan: dict[str, Any]) -> None:
    plan["pools"][0]["nodes"] += 1
    plan["pools"][0]["power_w"] += plan["pools"][0]["node"]["power_w"]


def _split_part_elsewhere(plan: dict[str, Any]) -> None:
    next(d for d in plan["deployments"] if "split" in d)["split"][-1]["pool"] = "nowhere"


@pytest.mark.parametrize(
    ("tree", "edit", "said"),
    [
        pytest.param("chat-70b", _no_pools, "'plan.deployments[0].pool' names 'chat_h200_sxm_141gb', which 'plan.pools' "
                     "does not have", id="pools-emptied"),
        pytest.param("chat-70b", lambda plan: plan["pools"].clear(), "'plan.racks[0].pools[0].pool' names "
                     "'chat_h200_sxm_141gb', which 'plan.pools' does not have", id="pools-emptied-racks-kept"),
        pytest.param("chat-70b", _no_racks_no_pools, "'plan.totals.gpus' is 8, but the pools of 'plan.pools' add up to 0",
                     id="everything-emptied-but-the-totals"),
        pytest.param("chat-70b", _more_gpus, "'plan.totals.gpus' is 8, but the pools of 'plan.pools' add up to 16",
                     id="a-pool-grown-totals-kept"),
        pytest.param("chat-70b", lambda plan: plan["totals"].update(power_w=1), "'plan.totals.power_w' is 1, but",
                     id="power"),
        pytest.param("chat-70b", lambda plan: plan["totals"].update(usd_per_month=1.0),
                     "'plan.totals.usd_per_month' is 1.00, but the pools of 'plan.pools' add up to 12,699.50 a month",
                     id="month"),
        pytest.param("chat-70b", lambda plan: plan["totals"].update(usd_per_month=None),
                     "'plan.totals.usd_per_month' is null, but the pools", id="month-null"),
        pytest.param("fleet-split", _split_part_elsewhere, "'plan.deployments[0].split[1].pool' names 'nowhere', which "
                     "'plan.pools' does not have",
                     id="split-part-pool"),
        pytest.param("chat-70b", lambda plan: plan["deployments"][0].update(pool=5),
                     "'plan.deployments[0].pool' must be a pool's name, got 5", id="deployment-pool-number"),
        # item 9
        pytest.param("chat-70b", lambda plan: plan.update(provider=None),
                     "'plan.provider' must be one of aws, azure, baremetal, gcp, got null", id="provider-null"),
        pytest.param("chat-70b", lambda plan: plan.update(workload=5), "'plan.workload' must be a string, got 5",
                     id="workload-number"),
        pytest.param("chat-70b", lambda plan: plan["pools"][0].update(labels=5),
                     "'plan.pools[0].labels' must be a list of [key, value] texts, got 5", id="labels-number"),
        pytest.param("chat-70b", lambda plan: plan["pools"][0].update(labels=[["a", 1]]),
                     "'plan.pools[0].labels' must be a list of [key, value] texts", id="labels-pair-number"),
        pytest.param("chat-70b", lambda plan: plan["pools"][0].update(name="../../evil"),
                     "'plan.pools[0].name' must be 1 to 52 of a-z, 0-9 and _, got '../../evil'", id="pool-name-path"),
        pytest.param("chat-70b", lambda plan: plan["pools"][0].update(name="a" * 10_000),
                     "'plan.pools[0].name' must be 1 to 52 of a-z, 0-9 and _, got 'aaaa", id="pool-name-10000"),
        pytest.param("chat-70b", lambda plan: plan["pools"][0].update(name="a" * 53), "'plan.pools[0].name' must be 1 to 52",
                     id="pool-name-53"),
    ],
)  # fmt: skip
def test_diff_refuses_a_spec_json_whose_parts_disagree_or_hold_what_no_plan_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tree: str, edit: Callable[[dict[str, Any]], None], said: str
) -> None:
    good = _plan(tree)
    (tmp_path / "old.json").write_text(json.dumps(good))
    spec = copy.deepcopy(good)
    edit(spec["plan"])
    (tmp_path / "new.json").write_text(json.dumps(spec))
    for args in (("old.json", "new.json"), ("new.json", "old.json")):
        code, out, err = specgen(capsys, "diff", *(str(tmp_path / name) for name in args))
        assert (code, out) == (1, ""), err
        # hostile84 item 1: at the line and column of the value it names
        assert re.search(rf"new\.json:1:\d+: not a specgen spec\.json: {re.escape(said)}", err), err
        assert "Traceback" not in err and len(err) < 400


@pytest.mark.parametrize("tree", TREES)
def test_every_rendered_spec_json_is_consistent(capsys: pytest.CaptureFixture[str], tree: str) -> None:
    """The checks hold for what the planner writes: each golden spec.json diffs against itself with no change."""
    spec = str(GOLDEN / tree / "spec.json")
    code, _, err = specgen(capsys, "diff", spec, spec)
    assert code == 0, err


def test_every_golden_spec_json_is_read() -> None:
    """All of them, through the reader alone (a rounding the writer uses that the totals check did not allow fails here)."""
    from generator.fleet_diff import plan_from_spec

    specs = sorted(GOLDEN.rglob("spec.json"))
    assert len(specs) > 20
    for spec in specs:
        plan_from_spec(spec.read_text(), str(spec))


def test_a_truncated_spec_json_is_located_file_line_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser75 item 10: the position was inside the parser's quoted message ('... line 83 column 11 (char 2949)')."""
    text = (GOLDEN / "chat-70b" / "spec.json").read_text()
    (tmp_path / "cut.json").write_text(text[: text.index('"name": "chat_h200') + 12])  # cut inside a pool's name
    line = text.count("\n", 0, text.index('"name": "chat_h200')) + 1
    code, out, err = specgen(capsys, "diff", str(tmp_path / "cut.json"), str(tmp_path / "cut.json"))
    assert (code, out) == (1, "")
    assert f"cut.json:{line}:17: cannot read spec.json: unterminated string starting here (the file ends inside it: " in err
    (tmp_path / "bad.json").write_text('{"plan":\n  {"pools": [1,,]}}')
    code, out, err = specgen(capsys, "diff", str(tmp_path / "bad.json"), str(tmp_path / "bad.json"))
    assert code == 1 and err.endswith("bad.json:2:16: cannot read spec.json: expecting value\n"), err
