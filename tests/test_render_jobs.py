"""How many processes ``render`` plans files on when not told (review32 item 6).

One a core the process may run on, less a container's CPU quota (a CI runner limited to 2 CPUs on a 64-core node sees
64 in its affinity mask), on Linux; one elsewhere, where forking workers is unsafe (macOS) or impossible (Windows).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from generator import batch
from generator.errors import MultipleInputError, SpecgenError

#: Installs Python's SIGINT handler in a ``python -c`` child whatever it inherited (a test that sends it Ctrl-C).
PYTHON_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"
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


def _fake_work(failing: dict[int, int], slow: int) -> Callable[[str, bool], batch.Rendered | batch._Failure]:
    """A worker's ``_work`` for files ``w<i>.yaml``: ``failing`` {i: exit code} fail, the rest render as workload
    ``n<6 - i>`` (name order the reverse of path order), recording the process; file ``slow`` takes 0.5 s, so that its
    result comes back after the others'."""

    def fake(path: str, alone: bool) -> batch.Rendered | batch._Failure:
        i = int(Path(path).stem.removeprefix("w"))
        if i == slow:
            time.sleep(0.5)
        if i in failing:
            return batch._Failure(failing[i], (f"{Path(path).name}: refused",), (None,))
        return batch.Rendered(path, f"n{6 - i}", {"pid": str(os.getpid())}, ())

    return fake


@pytest.mark.parametrize("failing", [{}, {1: 3, 4: 1, 5: 1}])
def test_a_render_over_workers_keeps_each_files_result_in_path_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: dict[int, int]
) -> None:
    """review76 item 15: the test ran ``_work_batch`` and zipped its own results, never ``render_many``'s reassembly
    (``results[i] = result`` over batches that come back in any order). Now ``render_many(paths, jobs=2)`` runs with
    ``_work`` patched (the forked workers inherit it): every file's result once, by name; failures in path order, the
    first failing file's exit code, though the first (file 1, slowed) comes back last."""
    paths = [_workload(tmp_path, f"w{i}", [f"org/m{i}"]) for i in range(7)]  # a batch a file: they finish apart
    monkeypatch.setattr(batch, "usable_cores", lambda cpu_max=batch.CPU_MAX: 2)
    monkeypatch.setattr(batch, "_work", _fake_work(failing, slow=1))
    if not failing:
        rendered = batch.render_many(list(reversed(paths)), jobs=2)
        assert [(r.file, r.name) for r in rendered] == [(paths[i], f"n{6 - i}") for i in reversed(range(7))]
        pids = {r.files["pid"] for r in rendered}
        assert str(os.getpid()) not in pids  # rendered in the workers, not in this process
        return
    with pytest.raises(SpecgenError) as raised:
        batch.render_many(list(reversed(paths)), jobs=2)
    assert isinstance(raised.value, MultipleInputError)
    assert [str(e) for e in raised.value.errors] == [f"w{i}.yaml: refused" for i in sorted(failing)]
    assert raised.value.exit_code == failing[min(failing)] == 3


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or batch.usable_cores() < 2, reason="needs forked workers on 2 usable cores"
)
def test_ctrl_c_during_a_render_on_two_processes_exits_130_and_keeps_the_old_tree(tmp_path: Path) -> None:
    """review77 item 12: each worker printed a KeyboardInterrupt traceback and the parent hung in ``pool.join()``.

    SIGINT goes to the whole process group, as a terminal's Ctrl-C sends it, once the workers are forked.
    """
    import signal
    import subprocess

    from tests.conftest import REPO

    source = (REPO / "examples" / "capacity-400k.yaml").read_text()
    names = ("\nname: capacity\n", "- name: chat\n", "- name: summarize\n")
    assert all(name in source for name in names)
    files = []
    for k in range(8):
        files.append(tmp_path / f"c{k}.yaml")
        text = source
        for name in names:  # the workloads and their deployments (pools) named apart, to render together
            text = text.replace(name, f"{name[:-1]}-{k}\n")
        files[-1].write_text(text)
    out = tmp_path / "out"
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    # Python's own Ctrl-C handler in the child, as a terminal's specgen has, where this process started with SIGINT
    # ignored (a non-interactive shell's background job): the child inherits SIG_IGN and Python then installs none
    main = [sys.executable, "-c", f"{PYTHON_SIGINT}; from generator.cli import main; main()", "render"]
    first = subprocess.run(
        [*main, *map(str, files[:2]), "--jobs", "1", "-o", str(out)], check=False, env=env, capture_output=True
    )
    assert first.returncode == 0, first.stderr
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    process = subprocess.Popen(
        [*main, *map(str, files), "--jobs", "2", "-o", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(_children(process.pid)) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "finished before the workers were interrupted: give it more files"
        time.sleep(0.3)
        os.killpg(process.pid, signal.SIGINT)
        try:
            _, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("still running 30 s after Ctrl-C")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "Aborted! Interrupted before any output directory was changed." in err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*(f.name for f in files), "out"])


def test_the_batching_hint_does_not_open_a_fifo_or_standard_input(tmp_path: Path) -> None:
    """hostile79 item 2: ``file_batches`` read each file with a plain ``open()`` before any worker started: a FIFO (or
    a symlink to one, or ``/dev/stdin`` on a pipe) with no writer blocked the render for ever. Now it reads as every
    input is read (regular files alone, never blocking), and leaves the FIFO to the worker, which refuses it."""
    import threading

    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    (tmp_path / "link.yaml").symlink_to(fifo)
    paths = [_workload(tmp_path, "a", ["org/x"]), str(fifo), str(tmp_path / "link.yaml")]
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(batch.file_batches(paths, 4)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "file_batches blocked on the FIFO"
    assert found == [[(1, 2), (0,)]]
    assert batch._models_named(str(fifo)) == ()


def test_a_worker_that_cannot_be_forked_is_an_error_saying_so_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hostile79 item 7: under a pids limit ``os.fork()`` raised BlockingIOError out of ``render``. Now the second worker's
    refused fork is a SpecgenError naming the cause and ``--jobs 1``; the first worker is reaped, nothing is rendered."""
    import errno

    paths = [_workload(tmp_path, f"w{i}", [f"org/m{i}"]) for i in range(4)]
    monkeypatch.setattr(batch, "usable_cores", lambda cpu_max=batch.CPU_MAX: 2)
    monkeypatch.setattr(batch, "_work", _fake_work({}, slow=-1))
    real_fork, forks = os.fork, []

    def fork() -> int:
        forks.append(1)
        if len(forks) > 1:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    with pytest.raises(SpecgenError) as raised:
        batch.render_many(paths, jobs=2)
    assert not isinstance(raised.value, (BlockingIOError, OSError))
    assert str(raised.value) == (
        "could not start process 2 of the 2 planning the files (--jobs): Resource temporarily unavailable (a limit on "
        "processes: a container's pids limit, ulimit -u?); nothing was written; render with --jobs 1 to plan every file "
        "in this process"
    )
    assert _children(os.getpid()) == []  # the worker that started was killed and reaped
