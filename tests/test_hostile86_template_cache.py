"""hostile86 item 3: an entry of the compiled-template cache that is not a regular file never stops a render.

The cache lives under ``$XDG_CACHE_HOME/specgen`` (``~/.cache``), which CI restores from a cache another job saved.
A FIFO at an entry's name made Jinja's ``open()`` wait for a writer for ever: ``specgen render`` hung (killed by
``timeout 60``, exit 124). Such an entry is now a miss, compiled anew, and the output is the same to the byte.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

EXAMPLE = "examples/chat-70b.yaml"
#: A guard only (no assertion on time): a render that blocks fails the test instead of hanging the suite.
HANG_GUARD_S = 300


def _render_tree(out: Path, cache_home: Path) -> dict[str, str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(cache_home)}
    cmd = [sys.executable, "-c", "from generator.cli import main; main()", "render", EXAMPLE, "-o", str(out)]
    cmd += ["--target", "markdown", "--target", "terraform"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO, env=env, timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_cache_entry_that_is_no_regular_file_is_a_miss(tmp_path: Path, kind: str) -> None:
    cache = tmp_path / "cache"
    cold = _render_tree(tmp_path / "cold", cache)
    entries = sorted(cache.rglob("*.cache"))
    assert entries, "the compiled templates were not kept"
    for path in entries:
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.mkdir()
    assert _render_tree(tmp_path / "again", cache) == cold
