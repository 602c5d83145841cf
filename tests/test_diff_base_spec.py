"""``diff --base REV TREE/spec.json...``: the committed render trees compared, not their workloads (newuser82 item 2).

A pull request that upgrades specgen (its catalog's prices, its engine) leaves every workload file as it was:
``diff --base REV workloads/*.yaml`` plans both sides with the specgen running and reads "0 workload file(s) change
the fleet", while the committed tree the change carries replaces node pools. The spec.json of each tree, read at
``REV`` and in the working tree as written, says what applying the change does; trees of several clusters (a
monorepo's) go into one comment, which workload files of two clusters cannot.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import VALID
from tests.helpers import specgen_in_process as specgen


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env, text=True).stdout


def _workload(name: str, rps: int = 2) -> str:
    text = VALID.replace("name: demo", f"name: {name}").replace("- name: chat", f"- name: {name}")
    return text.replace("requests_per_second: 2", f"requests_per_second: {rps}")


def _render(capsys: pytest.CaptureFixture[str], workload: Path, out: str) -> None:
    code, _, err = specgen(capsys, "render", str(workload), "-o", out)
    assert code == 0, err


def _json(capsys: pytest.CaptureFixture[str], *paths: str) -> dict[str, Any]:
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", *paths, "--format", "json")
    assert code == 0, err
    return dict(json.loads(out))


def test_a_tree_rendered_anew_from_an_unchanged_workload_is_compared_as_committed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workload unchanged and its committed tree rendered anew (as a specgen upgrade does): the workload's diff
    says nothing moved, the spec.json's the nodes and GPUs the tree's change adds."""
    monkeypatch.chdir(tmp_path)
    workload = tmp_path / "w.yaml"
    workload.write_text(_workload("w", rps=2))
    _render(capsys, workload, "infra")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    # the tree as a later specgen renders it; here a rate moved and back, so that no catalog edit is needed
    workload.write_text(_workload("w", rps=40))
    _render(capsys, workload, "infra")
    workload.write_text(_workload("w", rps=2))

    (by_workload,) = _json(capsys, "w.yaml")["files"]
    assert by_workload["status"] == "unchanged"
    data = _json(capsys, "infra/spec.json")
    (entry,) = data["files"]
    assert (entry["file"], entry["status"]) == ("infra/spec.json", "changed")
    old = json.loads(_git(tmp_path, "show", "HEAD:infra/spec.json"))["plan"]["totals"]
    new = json.loads((tmp_path / "infra" / "spec.json").read_text())["plan"]["totals"]
    assert old["gpus"] < new["gpus"]  # the plan at 40 req/s needs more than the one at 2
    assert data["totals"]["gpus"] == {"old": old["gpus"], "new": new["gpus"], "delta": new["gpus"] - old["gpus"]}
    assert data["totals"]["nodes"] == {"old": old["nodes"], "new": new["nodes"], "delta": new["nodes"] - old["nodes"]}
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", "infra/spec.json")
    assert code == 0 and "### `infra/spec.json` (changed)" in md
    # the tree's directory given: its spec.json offered (newuser82 item 5), not its *.yaml (none are workloads)
    code, _, err = specgen(capsys, "diff", "--base", "HEAD", "infra")
    assert code == 1 and err.strip().endswith("give them (for example infra/spec.json)")


def test_trees_of_two_clusters_share_one_comment_and_a_removed_tree_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A monorepo's trees of a bare-metal and an AWS cluster: their workload files are refused together (one cluster a
    render), their spec.json compared in one comment; a tree deleted since the base, given, is removed."""
    monkeypatch.chdir(tmp_path)
    aws = _workload("burst").replace("gpus: [l40s-48gb]", "gpus: [l40s-48gb]\n  provider: aws") + (
        "kubernetes:\n  location: us-east-1\n"
    )
    (tmp_path / "aws.yaml").write_text(aws)
    (tmp_path / "colo.yaml").write_text(_workload("colo"))
    _render(capsys, tmp_path / "aws.yaml", "infra/aws")
    _render(capsys, tmp_path / "colo.yaml", "infra/colo")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    gpus = {
        tree: json.loads((tmp_path / "infra" / tree / "spec.json").read_text())["plan"]["totals"]["gpus"]
        for tree in ("aws", "colo")
    }
    code, _, err = specgen(capsys, "diff", "--base", "HEAD", "aws.yaml", "colo.yaml")
    assert code == 1 and "render each provider's workloads into a tree of its own" in err
    data = _json(capsys, "infra/aws/spec.json", "infra/colo/spec.json")
    assert [(f["file"], f["status"]) for f in data["files"]] == [
        ("infra/aws/spec.json", "unchanged"),
        ("infra/colo/spec.json", "unchanged"),
    ]
    assert data["totals"]["gpus"]["old"] == gpus["aws"] + gpus["colo"]
    _git(tmp_path, "rm", "-q", "-r", "infra/colo")
    data = _json(capsys, "infra/aws/spec.json", "infra/colo/spec.json")
    assert [f["status"] for f in data["files"]] == ["unchanged", "removed"]
    assert data["totals"]["gpus"] == {"old": gpus["aws"] + gpus["colo"], "new": gpus["aws"], "delta": -gpus["colo"]}


def test_a_spec_json_that_is_no_plan_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a spec.json was read as a workload: "missing required field 'deployments'", "unknown field 'plan'"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(_workload("w"))
    _render(capsys, tmp_path / "w.yaml", "infra")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "infra" / "spec.json").write_text('{"generator": "x"}\n')
    code, md, err = specgen(capsys, "diff", "--base", "HEAD", "infra/spec.json")
    assert code == 1 and "not a specgen spec.json (no 'plan')" in err
    assert "deployments" not in err and "(invalid)" in md


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(b"\xff\xfe{\x00", "infra/spec.json:1:1: spec.json is not UTF-8 text (byte 0) (a UTF-16 file", id="utf16"),
        pytest.param(b"caf\xe9", "infra/spec.json:1:4: spec.json is not UTF-8 text (byte 3)", id="latin1"),
        pytest.param(b'{\n  "plan": {\n    "x"', "infra/spec.json:3:8: cannot read spec.json: expecting ':' delimiter", id="cut"),
        pytest.param(b"", "infra/spec.json:1:1: cannot read spec.json: expecting value", id="empty"),
    ],
)  # fmt: skip
def test_a_spec_json_that_cannot_be_read_is_said_so_not_unplanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, content: bytes, reason: str
) -> None:
    """fix146 item 3: a spec.json not UTF-8 or not JSON read "cannot be planned as changed" (invalid); it could not be
    read, and the comment says so with the reason ``diff OLD NEW`` gives (file:line:column); still exit 1."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(_workload("w"))
    _render(capsys, tmp_path / "w.yaml", "infra")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "infra" / "spec.json").write_bytes(content)
    code, md, err = specgen(capsys, "diff", "--base", "HEAD", "infra/spec.json")
    assert code == 1 and f"specgen: error: {reason}" in err
    assert "**1 spec.json file(s) could not be read as changed: `infra/spec.json` (unreadable).** This check fails on them" in md
    assert "1 could not be read." in md and "As changed, this file could not be read; specgen says:" in md
    assert f"- {reason}" in md and "planned" not in md
    assert set(specgen(capsys, "diff", "infra/spec.json", "infra/spec.json")[2].splitlines()) == {err.strip()}  # as is
    code, out, _ = specgen(capsys, "diff", "--base", "HEAD", "infra/spec.json", "--format", "json")
    assert code == 1 and json.loads(out)["files"][0]["status"] == "unreadable"


def test_a_rate_given_that_moves_the_choice_is_said_as_the_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser82 item 3: ``prices: {aws-p5-48xlarge: 98.32}`` (its list price before AWS's 2025 cut) moved the 70B
    service off its two p5 nodes, and the diff said "changed: TP 4 -> 1, ..., pool ..." and nothing of why. The
    layout it ran is now priced at the rate given (a node-hour x its nodes, from the new plan's runners-up)."""
    from generator.choice_moves import choice_moves

    monkeypatch.chdir(tmp_path)
    source = (Path(__file__).parents[1] / "examples" / "chat-70b-fp8-aws.yaml").read_text()
    (tmp_path / "w.yaml").write_text(source)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    code, out, _ = specgen(capsys, "plan", "w.yaml", "--format", "json")
    assert code == 0
    base = json.loads(out)
    (pool,) = base["pools"]
    assert pool["node"]["platform_id"] == "aws-p5-48xlarge"  # the example's choice at the catalog's rates
    (tmp_path / "w.yaml").write_text(source + "prices:\n  aws-p5-48xlarge: 98.32\n")
    (entry,) = _json(capsys, "w.yaml")["files"]
    (move,) = entry["choice_moves"]
    assert move["deployment"] == "chat"
    assert move["was"]["summary"].endswith(f"on {pool['nodes']} x aws-p5-48xlarge (h100-sxm5-80gb)")
    assert move["was"]["usd_per_hour"] == {"old": pool["usd_per_hour"], "new": pytest.approx(98.32 * pool["nodes"])}
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", "w.yaml")
    assert code == 0 and "- `chat` moves as the rent moved: the layout it ran, `" in md
    assert f"${98.32 * pool['nodes']:,.2f}/h ($98.32 a node-hour) now" in md
    assert choice_moves(base, base) == []  # nothing moved, nothing said


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({}, False),  # the same layout both sides
        ({"tp": 2, "replicas": 8, "rate": 110.0, "old_runner": 110.0}, False),  # moved, no rate moved
        ({"tp": 2, "replicas": 8, "rate": 90.0, "old_runner": 130.0}, True),  # moved, its rate fell
        ({"tp": 2, "replicas": 8, "rate": 90.0, "old_runner": 130.0, "shared": True}, False),  # a pool of two
    ],
)
def test_choice_moves_table(change: dict[str, Any], said: bool) -> None:
    from generator.choice_moves import choice_moves

    def plan(tp: int, replicas: int, rate: float, runners: list[dict[str, Any]], shared: bool = False) -> dict[str, Any]:
        node = {"platform_id": f"p-tp{tp}", "gpu_id": "g"}
        names = ["a", "b"] if shared else ["a"]
        return {
            "pools": [{"name": f"a_tp{tp}", "deployments": names, "node": node, "nodes": 2, "usd_per_hour": rate}],
            "deployments": [{"name": "a", "pool": f"a_tp{tp}", "tp": tp, "pp": 1, "replicas": replicas, "runners_up": runners}],
        }

    def runner(tp: int, replicas: int, rate: float) -> dict[str, Any]:
        return {
            "platform_id": f"p-tp{tp}",
            "gpu_id": "g",
            "tp": tp,
            "pp": 1,
            "replicas": replicas,
            "nodes": 2,
            "usd_per_hour": rate,
        }

    tp, replicas = change.get("tp", 4), change.get("replicas", 4)
    old = plan(4, 4, 100.0, [runner(tp, replicas, change.get("old_runner", 120.0))], change.get("shared", False))
    new = plan(tp, replicas, change.get("rate", 100.0), [runner(4, 4, 100.0)], change.get("shared", False))
    assert bool(choice_moves(old, new)) is said


def test_diff_of_two_files_says_the_rent_that_moved_the_choice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser82 item 3 for ``diff OLD NEW``: the same line, the old side named OLD, and ``choice_moves`` in its JSON."""
    source = (Path(__file__).parents[1] / "examples" / "chat-70b-fp8-aws.yaml").read_text()
    (tmp_path / "old.yaml").write_text(source)
    (tmp_path / "new.yaml").write_text(source + "prices:\n  aws-p5-48xlarge: 98.32\n")
    old, new = str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml")
    code, out, _ = specgen(capsys, "diff", old, new, "--format", "json")
    assert code == 0
    (move,) = json.loads(out)["choice_moves"]
    nodes = move["was"]["nodes"]
    assert move["was"]["usd_per_hour"]["new"] == pytest.approx(98.32 * nodes)
    code, md, _ = specgen(capsys, "diff", old, new)
    assert code == 0 and "- `chat` moves as the rent moved: the layout it ran, `" in md
    assert f"${98.32 * nodes:,.2f}/h ($98.32 a node-hour) now" in md and " in OLD, " in md
    code, md, _ = specgen(capsys, "diff", old, old)
    assert code == 0 and "moves as the rent moved" not in md
