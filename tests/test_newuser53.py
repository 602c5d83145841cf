"""newuser53 (a GitOps platform engineer: ``render --check``, ``diff --base`` comments, ``--gitlab-report``).

Each test names the item of the finding it holds to. Diffs against a base build a git repository under ``tmp_path``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers import VALID
from tests.helpers import specgen_in_process as specgen

CHAT = REPO / "examples" / "chat-70b.yaml"
RAG = REPO / "examples" / "rag-embed.yaml"


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env, text=True).stdout


def _commit(repo: Path, files: dict[str, str]) -> None:
    """A repository at ``repo`` whose one commit holds ``files`` (path -> text)."""
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")


def _named(name: str, deployment: str) -> str:
    """VALID as workload ``name`` whose deployment is ``deployment`` (one tree needs a pool name each)."""
    return VALID.replace("name: demo", f"name: {name}").replace("- name: chat", f"- name: {deployment}")


# ---------------------------------------------------------------- item 1


def test_a_current_check_leaves_stdout_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 1: ``render --check > drift.patch`` wrote "rendered output is current" into the patch; ``test -s`` fired."""
    files = [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    files[0].write_text(_named("a", "chat-a"))
    files[1].write_text(_named("b", "chat-b"))
    out_dir = str(tmp_path / "infra")
    assert specgen(capsys, "render", *map(str, files), "-o", out_dir)[0] == 0
    code, out, err = specgen(capsys, "render", *map(str, files), "-o", out_dir, "--check")
    assert (code, out) == (0, "")
    assert err.splitlines()[-1] == "specgen: rendered output is current"
    files[1].write_text(_named("b", "chat-b").replace("requests_per_second: 2", "requests_per_second: 3"))
    code, out, err = specgen(capsys, "render", *map(str, files), "-o", out_dir, "--check")
    assert code == 4 and out.startswith("--- a/b/") and err.splitlines()[-1].startswith("specgen: rendered output is stale")
