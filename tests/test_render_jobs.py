"""How many processes ``render`` plans files on when not told (review32 item 6).

One a core the process may run on, less a container's CPU quota (a CI runner limited to 2 CPUs on a 64-core node sees
64 in its affinity mask), on Linux; one elsewhere, where forking workers is unsafe (macOS) or impossible (Windows).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from generator import batch

AFFINITY = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.mark.parametrize(
    ("cpu_max", "cores"),
    [
        ("max 100000\n", AFFINITY),  # no quota
        ("50000 100000\n", 1),  # half a CPU: one process
        ("150000 100000\n", min(AFFINITY, 2)),  # 1.5 CPUs: two, at most the affinity's
        ("6400000 100000\n", AFFINITY),  # a quota above the affinity's cores takes the affinity's
        ("garbage\n", AFFINITY),
        (None, AFFINITY),  # no cgroup v2 file
    ],
)
def test_the_usable_cores_take_a_containers_cpu_quota(tmp_path: Path, cpu_max: str | None, cores: int) -> None:
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max, encoding="ascii")
    assert batch.usable_cores(str(path)) == cores


@pytest.mark.parametrize(("platform", "linux"), [("linux", True), ("darwin", False), ("win32", False)])
def test_files_are_planned_in_one_process_where_workers_cannot_fork_safely(
    monkeypatch: pytest.MonkeyPatch, platform: str, linux: bool
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    assert batch.default_jobs(6) == (6 if linux else 1)
