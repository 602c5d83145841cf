"""``diff --base REV FILE...`` over the whole file set (newuser33 items 7, 8, 12, 13, 14, 17).

Each test builds a git repository under ``tmp_path``: the workloads committed at the base, then changed in the
working tree as a pull request changes them.
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


def _workload(name: str, rps: int = 2, deployment: str | None = None) -> str:
    """VALID as workload ``name`` (its deployment ``deployment``, by default the name) at ``rps`` requests a second."""
    text = VALID.replace("name: demo", f"name: {name}").replace("- name: chat", f"- name: {deployment or name}")
    return text.replace("requests_per_second: 2", f"requests_per_second: {rps}")


def _commit(repo: Path, files: dict[str, str]) -> None:
    """A repository at ``repo`` whose one commit holds ``files`` (path -> text)."""
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", *args, "--format", "json")
    assert code == 0, err
    return dict(json.loads(out))


def test_a_pool_whose_server_build_changes_is_replaced_and_its_bought_servers_are_not_saved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 7b: 20 -> 40 requests/s takes the pool from a 4-L40S dell-xe7740 to an 8-L40S one, same name and
    platform: MAAS allocates by the ``gpus-4`` / ``gpus-8`` tag (ForceNew), so the node is replaced. The diff said
    "changed, -$X capex" with no replacement, as if the 4-GPU server's price were saved."""
    _commit(tmp_path, {"w.yaml": _workload("w", rps=20)})
    (tmp_path / "w.yaml").write_text(_workload("w", rps=40))
    monkeypatch.chdir(tmp_path)
    data = _diff(capsys, "w.yaml")
    (entry,) = data["replacements"]
    assert (entry["platform"], entry["gpus_per_node"], entry["was"]["platform"], entry["was"]["gpus_per_node"]) == (
        "dell-xe7740",
        8,
        "dell-xe7740",
        4,
    )
    assert [p["pool"] for p in entry["removed"]] == [p["pool"] for p in entry["added"]] == ["w_l40s_48gb"]
    # the catalog's prices: a 4-L40S xe7740 $51,271, an 8-L40S one $85,271 (generator/catalog, purchase estimates)
    # fix129 adds "grow" (the bought servers grown on rather than replaced): 40 req/s at the old layout's 5.68 a TP1
    # replica at most need ceil(7.04) = 8 replicas, and at the 5.438 each of its 4 sustain with the wait for a place
    # (21.751 req/s: fix133, review80 item 9) ceil(7.36) = 8 too; 2 servers of 4 L40S: the 1 kept and 1 added at $51,271
    # acc120 (the L40S at its sibling L40's GDDR6 stream share): 5.872 at most, ceil(6.81) = 7, and 5.628 sustained
    # (22.514 req/s), ceil(7.11) = 8; 7 or 8 replicas both take 2 servers of 4: still the 1 kept and 1 added
    grow = {
        "platform": "dell-xe7740",
        "replicas": 8,
        "replicas_least": 7,
        "requests_per_s_per_replica_max": 5.872,
        "requests_per_s_per_replica_sustained": 5.628,
        "servers_added": 1,
        "servers_added_least": 1,
        "servers_kept": 1,
        "usd_added": 51271.0,
        "usd_added_least": 51271.0,
    }
    assert entry["capex_usd"] == {"taken_out": 51271.0, "put_in": 85271.0, "grow": grow}
    assert data["totals"]["capex_usd"] == {"old": 51271.0, "new": 85271.0, "delta": 34000.0}
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", "w.yaml")
    assert code == 0
    assert "**Node pools replaced, not resized: 1 node(s) deleted and 1 created.**" in md
    assert "8 x l40s-48gb on dell-xe7740 (was 4 x l40s-48gb on dell-xe7740;" in md
    assert "the servers taken out were bought ($51,271)" in md and "the new ones are $85,271 to buy" in md


def test_a_pool_of_the_same_build_resized_is_no_replacement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 -> 80 requests/s: one 8-L40S server -> two of them, the same build: resized, not replaced."""
    _commit(tmp_path, {"w.yaml": _workload("w", rps=40)})
    (tmp_path / "w.yaml").write_text(_workload("w", rps=80))
    monkeypatch.chdir(tmp_path)
    data = _diff(capsys, "w.yaml")
    assert data["replacements"] == [] and data["totals"]["nodes"] == {"old": 1, "new": 2, "delta": 1}


def test_a_workload_renamed_with_its_file_across_files_is_a_replacement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 7a: chat-eu.yaml -> chat-europe.yaml with its name and deployment: pool chat_eu_l40s_48gb 1 -> 0
    in one file, chat_europe_l40s_48gb 0 -> 1 in the other, and no replacement (the same rename within one file had
    the bold line): the server is released from one pool and joins the other either way."""
    _commit(tmp_path, {"w/chat-eu.yaml": _workload("chat-eu"), "w/main.yaml": _workload("main")})
    _git(tmp_path, "mv", "w/chat-eu.yaml", "w/chat-europe.yaml")
    (tmp_path / "w" / "chat-europe.yaml").write_text(_workload("chat-europe"))
    monkeypatch.chdir(tmp_path)
    data = _diff(capsys, "w/chat-eu.yaml", "w/chat-europe.yaml", "w/main.yaml")
    assert {f["file"]: f["status"] for f in data["files"]} == {
        "w/chat-eu.yaml": "removed", "w/chat-europe.yaml": "added", "w/main.yaml": "unchanged"
    }  # fmt: skip
    (entry,) = data["replacements"]
    assert entry["files"] == ["w/chat-eu.yaml", "w/chat-europe.yaml"] and entry["file"] == "w/chat-eu.yaml"
    assert ([p["pool"] for p in entry["removed"]], [p["pool"] for p in entry["added"]]) == (
        ["chat_eu_l40s_48gb"],
        ["chat_europe_l40s_48gb"],
    )
    assert (entry["nodes_deleted"], entry["nodes_created"]) == (1, 1)
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", "w/chat-eu.yaml", "w/chat-europe.yaml", "w/main.yaml")
    assert code == 0
    assert "**Node pools replaced, not resized: 1 node(s) deleted and 1 created.**" in md
    assert "- `w/chat-eu.yaml`, `w/chat-europe.yaml`: `chat_eu_l40s_48gb` (1 node) replaced by" in md


def test_a_pool_of_other_hardware_added_in_another_file_replaces_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool removed in one file and one on other servers (another GPU) added in another: no replacement."""
    _commit(tmp_path, {"a.yaml": _workload("a"), "b.yaml": _workload("b")})
    (tmp_path / "a.yaml").unlink()
    (tmp_path / "c.yaml").write_text(_workload("c").replace("gpus: [l40s-48gb]", "gpus: [h100-sxm5-80gb]"))
    monkeypatch.chdir(tmp_path)
    assert _diff(capsys, "a.yaml", "b.yaml", "c.yaml")["replacements"] == []


def test_a_file_renamed_with_its_workload_name_kept_is_renamed_not_removed_and_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 7c: `git mv chat-small.yaml chat-mini.yaml` (name kept; render --check: current) read
    "2 workload file(s) change the fleet": one pool 0 -> 1 and the same pool 1 -> 0."""
    _commit(tmp_path, {"chat-small.yaml": _workload("small"), "main.yaml": _workload("main")})
    _git(tmp_path, "mv", "chat-small.yaml", "chat-mini.yaml")
    monkeypatch.chdir(tmp_path)
    files = ("chat-small.yaml", "chat-mini.yaml", "main.yaml")
    data = _diff(capsys, *files)
    assert [(f["file"], f["status"], f.get("renamed_from")) for f in data["files"]] == [
        ("chat-mini.yaml", "renamed", "chat-small.yaml"), ("main.yaml", "unchanged", None)
    ]  # fmt: skip
    assert data["replacements"] == [] and data["totals"]["gpus"] == {"old": 2, "new": 2, "delta": 0}
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", *files)
    assert code == 0 and "0 workload file(s) change the fleet; 2 unchanged." in md
    assert "Renamed, no change to the fleet (the same workload `name`): `chat-small.yaml` → `chat-mini.yaml`." in md
    # renamed and changed: one section, the file's own diff against its old name's
    (tmp_path / "chat-mini.yaml").write_text(_workload("small", rps=10))
    data = _diff(capsys, *files)
    (mini,) = [f for f in data["files"] if f["file"] == "chat-mini.yaml"]
    assert (mini["status"], mini["renamed_from"]) == ("changed", "chat-small.yaml")
    assert [p["status"] for p in mini["diff"]["pools"]] == ["changed"]
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", *files)
    assert "### `chat-mini.yaml` (changed; renamed from `chat-small.yaml`)" in md


def test_git_runs_in_the_files_repository_not_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 12: from /tmp, `diff --base HEAD /repo/w.yaml` said "'HEAD' is not a commit of the git
    repository here" while render and validate of the same path worked."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _commit(repo, {"w/w.yaml": _workload("w")})
    (repo / "w" / "w.yaml").write_text(_workload("w", rps=10))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    data = _diff(capsys, str(repo / "w" / "w.yaml"))
    assert [f["status"] for f in data["files"]] == ["changed"]
    code, _, err = specgen(capsys, "diff", "--base", "no-such-rev", str(repo / "w" / "w.yaml"))
    assert code == 1 and f"--base 'no-such-rev' is not a commit of the git repository '{repo}'" in err
    (elsewhere / "x.yaml").write_text(_workload("x"))
    code, _, err = specgen(capsys, "diff", "--base", "HEAD", "x.yaml")
    assert code == 1 and f"specgen: error: '{elsewhere}' is not in a git repository" in err


def test_a_shallow_clone_is_said_with_how_to_fetch_the_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 17: GitHub's checkout fetches one commit; `--base HEAD~1` said only "not a commit"."""
    origin = tmp_path / "origin"
    origin.mkdir()
    _commit(origin, {"w.yaml": _workload("w")})
    (origin / "w.yaml").write_text(_workload("w", rps=10))
    _git(origin, "commit", "-qam", "second")
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", "clone")
    monkeypatch.chdir(tmp_path / "clone")
    code, _, err = specgen(capsys, "diff", "--base", "HEAD~1", "w.yaml")
    assert code == 1
    assert "is not a commit of the git repository" in err and "the clone is shallow" in err
    assert "`fetch-depth: 0`" in err and "`GIT_DEPTH: 0`" in err
    monkeypatch.chdir(origin)  # a full clone: no word of shallowness
    code, _, err = specgen(capsys, "diff", "--base", "HEAD~5", "w.yaml")
    assert code == 1 and "is not a commit" in err and "the clone is shallow" not in err


def test_files_of_two_clusters_are_refused_as_render_refuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 13: a bare-metal file and an AWS file summed into one headline (colo capex + EKS rent)."""
    aws = _workload("burst").replace("gpus: [l40s-48gb]", "gpus: [l40s-48gb]\n  provider: aws") + (
        "outputs: [terraform, kubernetes]\nkubernetes:\n  cluster_name: burst\n  location: us-east-1\n"
    )
    colo = _workload("colo") + "outputs: [terraform, kubernetes]\n"
    _commit(tmp_path, {"colo.yaml": colo, "aws.yaml": aws})
    monkeypatch.chdir(tmp_path)
    code, _, render_err = specgen(capsys, "render", "colo.yaml", "aws.yaml", "-o", str(tmp_path / "out"))
    assert code == 1 and "render each provider's workloads into a tree of its own" in render_err
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", "colo.yaml", "aws.yaml")
    assert code == 1 and out == "" and err == render_err


def test_the_summed_totals_are_rounded_as_each_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 14: "capex_usd": {"new": 828929.2400000001, ...}: a sum of the files' rounded figures."""
    from generator.pr_diff import _sum_totals

    rows = [{"diff": {"totals": {"capex_usd": {"old": o, "new": n, "delta": n - o}}}} for o, n in ((0.1, 0.2), (0.2, 0.4))]
    assert 0.1 + 0.2 == 0.30000000000000004  # the noise a plain sum carries
    assert _sum_totals(rows)["capex_usd"] == {"old": 0.3, "new": 0.6, "delta": 0.3}


def test_a_deleted_workload_beside_the_files_given_is_named_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser33 item 8: `git rm ft-lora.yaml; diff --base HEAD workloads/colo/*.yaml` (README's command) read "0
    workload file(s) change the fleet": the glob lists no deleted file. The comment names it; given, it is removed."""
    _commit(
        tmp_path,
        {"w/a.yaml": _workload("a"), "w/gone.yaml": _workload("gone"), "w/notes.yaml": "x: 1\n", "w/gone.txt": "t\n",
         "other/far.yaml": _workload("far")},
    )  # fmt: skip
    for path in ("w/gone.yaml", "w/notes.yaml", "w/gone.txt", "other/far.yaml"):
        _git(tmp_path, "rm", "-q", path)
    monkeypatch.chdir(tmp_path)
    data = _diff(capsys, "w/a.yaml")
    assert data["deleted_not_given"] == ["w/gone.yaml"]  # not a file of another suffix, directory, or no workload
    code, md, _ = specgen(capsys, "diff", "--base", "HEAD", "w/a.yaml")
    assert code == 0 and md.startswith(
        "## specgen: fleet change against `HEAD`\n\n**Not compared: `w/gone.yaml` was a workload at `HEAD` beside the "
        "files given and is deleted; the totals leave the removal out."
    )
    data = _diff(capsys, "w/a.yaml", "w/gone.yaml")  # given, as README's "In CI" and examples/ci give it
    assert "deleted_not_given" not in data and data["totals"]["gpus"] == {"old": 2, "new": 1, "delta": -1}
    (tmp_path / "other").mkdir()
    # named by its repository path, as `git diff --name-only` gives it and the comment names every file, whichever
    # directory the job runs in (newuser53 item 8)
    monkeypatch.chdir(tmp_path / "other")
    assert _diff(capsys, "../w/a.yaml")["deleted_not_given"] == ["w/gone.yaml"]


def test_readme_in_ci_gives_the_deleted_files_as_the_examples_do() -> None:
    """newuser33 item 8: README's "In CI" command lost a deleted workload that examples/ci keep."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("## In CI", 1)[1]
    assert "--diff-filter=D origin/main -- 'workloads/*.yaml'" in section and "specgen diff --base origin/main $files" in section
