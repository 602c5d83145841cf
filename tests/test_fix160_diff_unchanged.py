"""``specgen diff`` where no pool or deployment changes: no table without rows, and one line saying what changed.

newuser91 item 9: a change of the constants alone closed the comment on pool and deployment tables that named
nothing. A diff that changes no pool or deployment now ends on one line: the totals that moved (old -> new), the
constants that moved none, or "No change to the fleet.", and the exit code of ``--exit-code`` follows the totals.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from generator.fleet_diff import diff_plans, markdown_diff
from generator.pr_diff import two_files_change_fleet
from tests.helpers import specgen_in_process as specgen

GOLDEN_SPEC = Path(__file__).parent / "golden" / "chat-70b" / "spec.json"


def _plan(**totals: Any) -> dict[str, Any]:
    pool = {"name": "chat", "nodes": 1, "power_w": 8000, "usd_per_hour": 55.04,
            "node": {"gpu_id": "h100-sxm5-80gb", "gpus": 8, "platform_id": "aws-p5-48xlarge"}}  # fmt: skip
    dep = {"name": "chat", "model_id": "meta-llama/Llama-3.3-70B-Instruct", "precision": "fp8", "tp": 8, "pp": 1,
           "replicas": 1, "gpus": 8, "pool": "chat", "details": {}}  # fmt: skip
    return {"provider": "aws", "constants": {}, "totals": totals, "pools": [pool], "deployments": [dep]}


def _tables_without_rows(text: str) -> list[str]:
    """Each Markdown table header of ``text`` that no row follows (a header, its rule, then a line not of the table)."""
    lines = [*text.split("\n"), ""]
    return [
        line
        for at, line in enumerate(lines[:-2])
        if line.startswith("|") and lines[at + 1].startswith("|---") and not lines[at + 2].startswith("|")
    ]


def test_the_helper_finds_a_header_without_rows() -> None:
    """The oracle itself: a header and rule with nothing under them is found; one with a row is not."""
    assert _tables_without_rows("| pool | old |\n|---|---|\n\nNo change.\n") == ["| pool | old |"]
    assert _tables_without_rows("| pool | old |\n|---|---|\n| `a` | 1 |\n") == []


def test_totals_alone_moved_are_named_in_one_line() -> None:
    """A month's cost that moves with every pool and deployment the same: the line names it, old -> new."""
    old, new = _plan(usd_per_month=12699.5, gpus=8), _plan(usd_per_month=8732.83, gpus=8)
    text = markdown_diff(diff_plans(old, new))
    assert text.endswith("\nNo pool or deployment changed; the totals that moved: usd_per_month 12,699.50 → 8,732.83.\n")
    assert "| pool |" not in text and "| deployment |" not in text and "No change to the fleet." not in text
    assert _tables_without_rows(text) == []
    assert two_files_change_fleet(diff_plans(old, new))  # --exit-code: 6, a cost figure moved (README's diff row)


def test_totals_moved_by_constants_say_so() -> None:
    old, new = _plan(usd_per_month=12699.5), _plan(usd_per_month=8732.83)
    new["constants"] = {"checkpoints_kept": 5}
    text = markdown_diff(diff_plans(old, new))
    assert "Constants changed (the workload's constants:): checkpoints_kept 2 → 5." in text
    assert text.endswith("the totals that moved (the constants above): usd_per_month 12,699.50 → 8,732.83.\n")


def test_constants_that_move_nothing_say_so() -> None:
    """Before: "Constants changed ..." over "No change to the fleet.", which read as two contradicting lines."""
    old, new = _plan(usd_per_month=100.0), _plan(usd_per_month=100.0)
    new["constants"] = {"checkpoints_kept": 5}
    text = markdown_diff(diff_plans(old, new))
    assert text.endswith(
        "\nNo pool or deployment changed, and no total: the constants above move no figure this diff compares.\n"
    )
    assert not two_files_change_fleet(diff_plans(old, new))  # --exit-code: 0


def test_nothing_moved_is_still_no_change() -> None:
    text = markdown_diff(diff_plans(_plan(usd_per_month=100.0), _plan(usd_per_month=100.0)))
    assert text.endswith("\nNo change to the fleet.\n") and _tables_without_rows(text) == []


def _specs(tmp_path: Path, **constants: Any) -> tuple[str, str]:
    data = json.loads(GOLDEN_SPEC.read_text(encoding="utf-8"))
    new = copy.deepcopy(data)
    new["plan"]["constants"] = constants
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(json.dumps(data), encoding="utf-8")
    new_path.write_text(json.dumps(new), encoding="utf-8")
    return str(old_path), str(new_path)


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_two_spec_json_a_constant_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """Two committed spec.json a constant apart that moves no figure: exit 0 under --exit-code, no empty table.

    The JSON keeps its shape (``pools`` and ``deployments`` empty lists, the constant under ``constants_changed``).
    """
    old, new = _specs(tmp_path, checkpoints_kept=5)
    code, out, err = specgen(capsys, "diff", old, new, "--format", fmt, "--exit-code")
    assert (code, err) == (0, "")
    if fmt == "json":
        result = json.loads(out)
        assert result["pools"] == [] and result["deployments"] == []
        assert result["constants_changed"] == [{"name": "checkpoints_kept", "new": 5, "old": 2}]
    else:
        assert _tables_without_rows(out) == [] and "| pool |" not in out
        assert out.endswith("the constants above move no figure this diff compares.\n")
