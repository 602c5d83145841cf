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

from generator.cli import main
from tests.helpers import VALID


def specgen(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in this process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    code = done.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), out, err


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
    assert entry["capex_usd"] == {"taken_out": 51271.0, "put_in": 85271.0}
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
