"""``specgen diff`` of a service's average rate (``average_requests_per_second``): its row and the floor month.

newuser69 item 3: chat's average 5 -> 9 req/s (an autoscaled AKS pool, 6 -> 10 nodes at the average) moved the month
the pools scale down to by +$20,381.60, but ``diff --base`` read "cost (USD/month) 76,698.18 -> 76,698.18, 0.00" in its
headline, its JSON ``totals`` had no ``usd_per_month_floor``, and neither ``diff`` listed a deployment row, where the
README promises no row is left unsaid. The headline now has the floor row wherever a file's pools autoscale, and the
service's row says ``changed: average rate 5.00 -> 9.00 req/s, replicas at the average 6 -> 10``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.fleet_diff import MONTH_FLOOR, diff_plans, markdown_diff
from generator.pr_diff import _count_text, _sum_totals, markdown
from tests.helpers import specgen_in_process as specgen
from tests.test_diff_min_nodes import WORKLOAD


def _service(average: float | None, at_average: int | None) -> dict[str, Any]:
    """A spec.json deployment of 13 replicas at 12 req/s, with its average rate and replicas at it where given."""
    details: dict[str, Any] = {"requests_per_s": 12.0, "requests_per_s_per_replica_max": 1.054, "max_num_seqs": 1024}
    if average is not None:
        details["average_requests_per_s"] = average
    if at_average is not None:
        details["replicas_at_average"] = at_average
    return {"name": "chat", "model_id": "Qwen/Qwen2.5-32B-Instruct", "precision": "fp8", "tp": 1, "pp": 1,
            "replicas": 13, "gpus": 13, "pool": "chat", "details": details}  # fmt: skip


def _fleet(average: float | None, at_average: int | None, floor: float | None) -> dict[str, Any]:
    totals = {"gpus": 13, "nodes": 13, "power_w": 11492, "usd_per_month": 66240.2}
    if floor is not None:
        totals[MONTH_FLOOR] = floor
    pool = {"name": "chat", "nodes": 13, "power_w": 11492, "usd_per_hour": 90.74,
            "node": {"gpu_id": "h100-nvl-94gb", "gpus": 1, "platform_id": "azure-nc40ads-h100-v5"}}  # fmt: skip
    if at_average is not None:
        pool["min_nodes"] = at_average
    return {"provider": "azure", "totals": totals, "pools": [pool], "deployments": [_service(average, at_average)]}


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        pytest.param((5.0, 6, 30572.4), (9.0, 10, 50954.0),
                     "changed: average rate 5.00 → 9.00 req/s, replicas at the average 6 → 10", id="average-raised"),
        pytest.param((5.0, None, 30572.4), (9.0, None, 50954.0), "changed: average rate 5.00 → 9.00 req/s",
                     id="no-replicas-recorded"),
        pytest.param((None, None, None), (5.0, 6, 30572.4),
                     "changed: average rate - → 5.00 req/s, replicas at the average - → 6", id="now-autoscaled"),
    ],
)  # fmt: skip
def test_an_average_rate_change_lists_the_service_saying_why(old: tuple[Any, ...], new: tuple[Any, ...], said: str) -> None:
    result = diff_plans(_fleet(*old), _fleet(*new))
    (row,) = result["deployments"]
    assert row["deployment"] == "chat"
    text = markdown_diff(result)
    assert f"**{said}**" in text
    if new[0] is not None:
        assert f"{new[0]:.2f} req/s on average" in text


def test_the_same_average_lists_no_row() -> None:
    assert diff_plans(_fleet(5.0, 6, 30572.4), _fleet(5.0, 6, 30572.4))["deployments"] == []


def _file(diff: dict[str, Any]) -> dict[str, Any]:
    return {"file": "w.yaml", "status": "changed", "diff": diff, "memory": []}


def test_the_headline_sums_the_floor_over_every_file_one_without_at_its_month() -> None:
    """One file autoscales (floor $41,030.38 -> $61,411.98), one does not ($5,000 a month either side): the floor row
    is 46,030.38 -> 66,411.98; a set of files none of which autoscales has no floor row."""
    scaled = diff_plans(_fleet(5.0, 6, 41030.38), _fleet(9.0, 10, 61411.98))
    fixed = diff_plans(*({"totals": {"gpus": 1, "nodes": 1, "power_w": 700, "usd_per_month": 5000.0},
                          "pools": [], "deployments": []},) * 2)  # fmt: skip
    totals = _sum_totals([_file(scaled), _file(fixed)])
    assert totals[MONTH_FLOOR] == {"old": 46030.38, "new": 66411.98, "delta": 20381.6}
    assert totals["usd_per_month"]["delta"] == 0.0
    assert MONTH_FLOOR not in _sum_totals([_file(fixed)])
    result = {"base": "HEAD", "replacements": [], "totals": totals, "files": [_file(scaled), _file(fixed)]}
    assert "| **cost at the autoscaled floor (USD/month)** | 46,030.38 | 66,411.98 | +20,381.60 |" in markdown(result)


def test_a_floor_change_changes_the_fleet_an_average_alone_what_runs() -> None:
    """A floor that moves is the bill moving (the fleet); an average that keeps the replicas at it is what runs."""
    moved = diff_plans(_fleet(5.0, 6, 30572.4), _fleet(9.0, 10, 50954.0))
    assert _count_text([_file(moved)], []) == "1 workload file(s) change the fleet; 0 unchanged"
    kept = diff_plans(_fleet(5.0, 6, 30572.4), _fleet(5.2, 6, 30572.4))
    assert kept["deployments"] and not kept["pools"]
    assert _count_text([_file(kept)], []) == "1 workload file(s) change what runs (fleet unchanged); 0 unchanged"


def _git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_diff_base_and_diff_of_two_files_say_the_floor_and_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 70B service on AWS, its average 12 -> 34 req/s: the peak's nodes stay, the floor and the row move."""
    (tmp_path / "w.yaml").write_text(WORKLOAD.format(average=12))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "old.yaml").write_text(WORKLOAD.format(average=12))
    (tmp_path / "w.yaml").write_text(WORKLOAD.format(average=34))
    monkeypatch.chdir(tmp_path)
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", "w.yaml", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    floor = result["totals"][MONTH_FLOOR]
    assert floor["delta"] > 0 and result["totals"]["usd_per_month"]["delta"] == 0
    (row,) = result["files"][0]["diff"]["deployments"]
    assert (row["old"]["load"]["average_requests_per_s"], row["new"]["load"]["average_requests_per_s"]) == (12.0, 34.0)
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", "w.yaml")
    assert code == 0, err
    assert f"| **cost at the autoscaled floor (USD/month)** | {floor['old']:,.2f} | {floor['new']:,.2f} |" in out
    assert "**changed: average rate 12.00 → 34.00 req/s, replicas at the average" in out
    assert "1 workload file(s) change the fleet; 0 unchanged." in out
    code, out, err = specgen(capsys, "diff", "old.yaml", "w.yaml", "--format", "json")
    assert code == 0, err
    two = json.loads(out)
    assert two["totals"][MONTH_FLOOR] == floor
    assert [d["deployment"] for d in two["deployments"]] == [row["deployment"]]


def test_a_region_move_priced_elsewhere_leaves_the_floor_change_unknown_as_the_month() -> None:
    """Pools priced at another region's rates on one side: the month's change is not known, nor the floor's."""
    old, new = _fleet(5.0, 6, 30572.4), _fleet(9.0, 10, 50954.0)
    old["region"], new["region"] = "eastus2", "westus3"
    new["findings"] = [{"level": "info", "code": "price-region", "path": "hardware",
                        "message": "pool chat is priced at the eastus2 on-demand rate of its VM size"}]  # fmt: skip
    totals = diff_plans(old, new)["totals"]
    assert totals["usd_per_month"]["delta"] is None
    assert totals[MONTH_FLOOR]["delta"] is None
