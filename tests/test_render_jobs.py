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


def _workload(tmp_path: Path, name: str, models: list[str], quote: str = "") -> str:
    deployments = "".join(
        f"  - name: d{k}\n    model: {quote}{model}{quote}\n    inference: {{requests_per_second: 1}}\n"
        for k, model in enumerate(models)
    )
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: 1\nname: {name}\ndeployments:\n{deployments}hardware:\n  provider: baremetal\n", "utf-8")
    return str(path)


def test_files_naming_the_same_models_are_planned_in_one_worker_batch(tmp_path: Path) -> None:
    """A worker sizes a model's layouts once: files of the same models go to it together (at most ``most`` a batch)."""
    paths = [
        _workload(tmp_path, "a", ["org/x", "org/y"]),
        _workload(tmp_path, "b", ["org/z"]),
        _workload(tmp_path, "c", ["org/y", "org/x"]),  # the same models in another order
        _workload(tmp_path, "d", ["org/x", "org/y", "org/x"], quote='"'),  # quoted, one twice
        _workload(tmp_path, "e", ["org/z"]),
        str(tmp_path / "missing.yaml"),  # unreadable: planned (and refused) in a batch of its own
        _workload(tmp_path, "f", ["org/x", "org/y"]),
    ]
    assert batch._models_named(paths[3]) == ("org/x", "org/y")
    assert batch._models_named(paths[5]) == ()
    # the largest batches first, then in path order; ``org/x, org/y``'s four files in batches of at most three
    assert batch.file_batches(paths, 3) == [(0, 2, 3), (1, 4), (5,), (6,)]
    assert batch.file_batches(paths, 1) == [(0,), (1,), (2,), (3,), (4,), (5,), (6,)]
    assert sorted(i for b in batch.file_batches(paths, 2) for i in b) == list(range(len(paths)))


def test_a_render_over_workers_keeps_each_files_result_in_path_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batches come back in any order: each file's result (and failure) stays the one of its path."""
    paths = [_workload(tmp_path, f"w{i}", [f"org/m{i % 3}"]) for i in range(7)]
    seen: list[str] = []

    def fake(path: str, alone: bool) -> batch._Failure:
        seen.append(path)
        return batch._Failure(3, (f"{Path(path).name}: refused",), (None,))

    monkeypatch.setattr(batch, "_work", fake)
    at = batch.file_batches(paths, 2)
    done = [batch._work_batch(paths, b, alone=False) for b in reversed(at)]
    assert [i for b, _ in done for i in b] == [i for b in reversed(at) for i in b]
    for b, rs in done:
        for i, r in zip(b, rs, strict=True):
            assert isinstance(r, batch._Failure) and r.lines == (f"{Path(paths[i]).name}: refused",)
