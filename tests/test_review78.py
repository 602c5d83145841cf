"""review78 items 1-4 (bugs/review78.md).

Items 1-2: ``render --jobs`` on specgen's own worker processes (a pipe each), not ``multiprocessing.Pool``. A Pool worker
killed while it waited for a task held the pool's task-queue lock: the render, then Ctrl-C, waited for ever. Each worker
now has a pipe of its own, and the parent waits on the busy workers' pipes and sentinels together.
Item 3: a bind mount on its parent's filesystem (``os.path.ismount`` False) is refused as a mount point.
Item 4: ``calibrate`` kept a llama-bench row of another model whose params matched an MoE's active parameters.
"""

from __future__ import annotations

import contextlib
import errno
import io
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from generator import batch, writer
from generator.calculator.calibrate import main as calibrate_main
from generator.errors import OutputError, SpecgenError
from generator.swap import ExchangeUnsupportedError
from tests.conftest import REPO

LINUX = sys.platform.startswith("linux")
forked = pytest.mark.skipif(not LINUX, reason="workers are forked on Linux only")


def _files(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / f"w{i}.yaml"
        path.write_text(f"version: 1\nname: w{i}\n", "utf-8")  # never read: ``_work`` is patched
        paths.append(str(path))
    return paths


def _children() -> set[int]:
    """This process's children, forked from any of its threads (``task/<tid>/children`` lists each thread's own)."""
    me = os.getpid()
    return {int(pid) for task in Path(f"/proc/{me}/task").iterdir() for pid in _read(task / "children").split()}


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _wait_idle(pid: int) -> None:
    """Until process ``pid`` blocks reading its socket (its kernel wait channel); 0.5 s where that cannot be read."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        channel = _read(Path(f"/proc/{pid}/wchan"))
        if channel in ("", "0"):  # no wait channel shown (a kernel without kallsyms): give it time
            time.sleep(0.5)
            return
        if channel.startswith("unix_stream_read"):
            return
        time.sleep(0.01)


def _render_in_thread(paths: list[str], within: float) -> tuple[object, float]:
    """``render_many(paths, jobs=2)``'s result or error, and the seconds it took; fails if it is not back ``within``."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(batch.render_many(paths, jobs=2))
        except BaseException as exc:
            outcome.append(exc)

    start = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=within)
    assert not thread.is_alive(), f"render_many still waits {within} s on"
    return outcome[0], time.monotonic() - start


def _patch(monkeypatch: pytest.MonkeyPatch, work: Callable[[str, bool], batch.Rendered | batch._Failure]) -> None:
    monkeypatch.setattr(batch, "usable_cores", lambda cpu_max=batch.CPU_MAX: 2)
    monkeypatch.setattr(batch, "_work", work)  # the forked workers inherit it


@forked
def test_a_worker_killed_idle_after_the_last_batch_was_handed_out_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1: w1's worker returns and waits for a task; w0's worker then kills it (as the OOM killer would) and
    returns. On the Pool, close()/join() then waited for ever on the lock the killed worker held."""
    paths = _files(tmp_path, 2)
    before = _children()
    done = tmp_path / "w1.done"

    def work(path: str, alone: bool) -> batch.Rendered:
        if path.endswith("w1.yaml"):
            done.touch()
        else:
            deadline = time.monotonic() + 30
            while not done.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            siblings = [
                sibling
                for children in Path(f"/proc/{os.getppid()}/task").glob("*/children")
                for sibling in map(int, _read(children).split())
                if sibling != os.getpid() and sibling not in before
            ]
            for sibling in siblings:
                _wait_idle(sibling)  # it has sent its result and waits for the next batch
                os.kill(sibling, signal.SIGKILL)
        return batch.Rendered(path, Path(path).stem, {}, ())

    _patch(monkeypatch, work)
    threads = set(threading.enumerate())
    rendered, _ = _render_in_thread(paths, within=60)
    assert [r.file for r in rendered] == paths  # type: ignore[attr-defined]
    assert multiprocessing.active_children() == []
    assert _children() <= before  # each worker reaped
    assert set(threading.enumerate()) <= threads  # no thread left behind (the Pool left its result handler)


@forked
def test_a_worker_that_dies_holding_a_batch_is_seen_at_once_while_another_still_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The death is seen when it happens (its sentinel), not when the other worker's 30 s batch is done (no polling);
    the busy worker is then killed, and the exit status is told."""
    paths = _files(tmp_path, 2)

    def work(path: str, alone: bool) -> batch.Rendered:
        if path.endswith("w0.yaml"):
            time.sleep(30)
        else:
            time.sleep(0.3)
            os._exit(3)
        return batch.Rendered(path, Path(path).stem, {}, ())

    _patch(monkeypatch, work)
    error, seconds = _render_in_thread(paths, within=60)
    assert isinstance(error, SpecgenError), error
    assert str(error) == (
        "a process planning the files (--jobs) ended before it finished (exit status 3: the out-of-memory killer?); "
        "nothing was written; render again, or with --jobs 1 to plan every file in this process"
    )
    assert error.exit_code == 1
    assert seconds < 15
    assert multiprocessing.active_children() == []


@forked
def test_a_planner_bug_in_a_worker_is_raised_as_with_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error other than a refusal (``_work`` returns those) is raised in the parent with its type (the CLI reports an
    ArithmeticError as it does with --jobs 1), its worker's traceback as a note."""
    paths = _files(tmp_path, 3)

    def work(path: str, alone: bool) -> batch.Rendered:
        if path.endswith("w1.yaml"):
            return batch.Rendered(path, str(1 / len(path[:0])), {}, ())
        return batch.Rendered(path, Path(path).stem, {}, ())

    _patch(monkeypatch, work)
    error, _ = _render_in_thread(paths, within=60)
    assert isinstance(error, ZeroDivisionError), error
    assert any("raised in a --jobs worker process" in note and "in work" in note for note in error.__notes__)
    assert multiprocessing.active_children() == []


SCRIPT = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's process has, whatever this one inherited
from pathlib import Path
from generator import batch
from tests.test_review78 import _wait_idle

tmp = Path(sys.argv[1])
paths = [str(tmp / f"w{i}.yaml") for i in range(2)]
for path in paths:
    Path(path).write_text("x")

def work(path, alone):
    if path.endswith("w1.yaml"):
        (tmp / "w1.done").touch()
        return batch.Rendered(path, "w1", {}, ())
    while not (tmp / "w1.done").exists():
        time.sleep(0.02)
    for children in Path(f"/proc/{os.getppid()}/task").glob("*/children"):
        for pid in map(int, children.read_text().split()):
            if pid != os.getpid():
                _wait_idle(pid)  # w1's worker has sent its result and waits for a task
                os.kill(pid, 9)
    (tmp / "killed").touch()
    time.sleep(60)
    return batch.Rendered(path, "w0", {}, ())

batch.usable_cores = lambda cpu_max=batch.CPU_MAX: 2
batch._work = work
try:
    batch.render_many(paths, jobs=2)
except KeyboardInterrupt:
    children = [c.read_text().split() for c in Path(f"/proc/{os.getpid()}/task").glob("*/children")]
    print("interrupted; children left:", sum(map(len, children)), flush=True)
    sys.exit(130)
"""


@forked
def test_ctrl_c_after_a_worker_was_killed_idle_ends_the_render(tmp_path: Path) -> None:
    """Item 1: the KeyboardInterrupt left render_many, and the Pool's finalizer at exit waited for ever on the killed
    worker's lock: only SIGKILL ended the process."""
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path)],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "killed").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("still running 30 s after Ctrl-C")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert out == "interrupted; children left: 0\n", (out, err)  # every worker killed and reaped
    assert "Traceback" not in err, err


def _tree(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    writer.write_tree({"a.txt": "one\n", "sub/b.txt": "two\n"}, str(out))
    return out


def _busy(*args: object) -> None:
    raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(args[0]))


def _unsupported(*args: object) -> None:
    raise ExchangeUnsupportedError("renameat2 is not available")


MOUNT_POINT = "it is a mount point, and specgen replaces its output directory whole"


@pytest.mark.parametrize("exchange", ["renameat2", "renames"])
def test_an_output_the_rename_finds_busy_is_refused_as_a_mount_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: str
) -> None:
    """Item 3: a bind mount within one filesystem has its parent's device, so ``os.path.ismount`` says False, and the
    rename's EBUSY came out as "Device or resource busy; the previous output is unchanged". rename(2) returns EBUSY for a
    mount point (https://man7.org/linux/man-pages/man2/rename.2.html); its error is taken as the oracle."""
    out = _tree(tmp_path)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    if exchange == "renameat2":
        monkeypatch.setattr(writer, "exchange", _busy)
    else:  # no renameat2 (an old kernel, a filesystem without it): the output is renamed away first
        monkeypatch.setattr(writer, "exchange", _unsupported)
        rename = os.rename
        monkeypatch.setattr(os, "rename", lambda a, b: _busy(a, b) if Path(a) == out else rename(a, b))
    with pytest.raises(OutputError) as raised:
        writer.write_tree({"a.txt": "three\n"}, str(out))
    assert MOUNT_POINT in str(raised.value)
    assert f"render into a directory inside it ({out / 'specgen'}, say)" in str(raised.value)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the staged tree removed


def test_another_rename_error_is_told_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _tree(tmp_path)

    def denied(*args: object) -> None:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(args[0]))

    monkeypatch.setattr(writer, "exchange", denied)
    with pytest.raises(OutputError) as raised:
        writer.write_tree({"a.txt": "three\n"}, str(out))
    assert str(raised.value) == f"cannot write {out}: Permission denied; the previous output is unchanged"


def _bind(source: Path, target: Path) -> bool:
    """Whether ``source`` could be bind-mounted on ``target`` (root, a mount namespace that allows it)."""
    if not LINUX or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, check=False)
    return done.returncode == 0


def test_a_real_bind_mount_on_the_same_filesystem_is_refused_as_a_mount_point(tmp_path: Path) -> None:
    """Item 3 on a real bind mount, where this test may mount one (as root); ``os.path.ismount`` misses it."""
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    if not _bind(source, out):
        pytest.skip("cannot bind-mount here (needs root)")
    try:
        assert not os.path.ismount(out)  # what hostile78's early check relies on, and misses
        with pytest.raises(OutputError) as raised:
            writer.write_tree({"a.txt": "three\n"}, str(out))
        assert MOUNT_POINT in str(raised.value)
        assert list(out.iterdir()) == []
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]
    finally:
        subprocess.run(["umount", str(out)], check=True)


def _bench(tmp_path: Path, params: str) -> str:
    """A llama-bench table (the suite's llama-bench.md header) of one row of ``params``, every layer on the GPU."""
    lines = (REPO / "tests" / "data" / "calibrate" / "llama-bench.md").read_text(encoding="utf-8").splitlines()[:2]
    lines.append(f"| qwen3moe 30B.A3B Q4_K - Medium | 17.28 GiB | {params} | CUDA | 99 | tg128 | 150.00 ± 0.50 |")
    path = tmp_path / "bench.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _calibrate(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = calibrate_main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("model", "params", "refused"),
    [
        # llama-bench's params is every tensor's elements (llama_model_n_params): an MoE's total, every expert's
        pytest.param("Qwen/Qwen3-30B-A3B", "3.21 B", True, id="moe-dense-3b-row-at-the-active-count"),
        pytest.param("Qwen/Qwen3-30B-A3B", "3.35 B", True, id="moe-its-active-count-exactly"),
        pytest.param("Qwen/Qwen3-30B-A3B", "30.53 B", False, id="moe-its-gguf"),
        # a vision-language model's GGUF is its text model (the projector is a file of its own): 27.01 B of 27.43 B
        pytest.param("google/gemma-3-27b-it", "27.01 B", False, id="vlm-its-text-model"),
        pytest.param("google/gemma-3-27b-it", "12.77 B", True, id="vlm-another-model"),
    ],
)
def test_a_llama_bench_row_is_compared_with_the_ggufs_parameter_count(
    tmp_path: Path, model: str, params: str, refused: bool
) -> None:
    """Item 4: a dense 3.21 B row was kept for Qwen3-30B-A3B (3.35 B active) and fitted to its decode bandwidth."""
    setup = (model, "--precision", "q4_k_m", "--gpu", "h100-sxm5-80gb", "--input-tokens", "512", "--output-tokens", "128")
    code, out, err = _calibrate(*setup, "--log", _bench(tmp_path, params))
    if refused:
        assert code == 1 and "constants:" not in out
        assert f"a llama-bench row of a model of {params.removesuffix(' B')} B parameters" in err, err
        text = {"Qwen/Qwen3-30B-A3B": "30.53", "google/gemma-3-27b-it": "27.01"}[model]
        assert f"not this model's {text} B" in err
    else:
        assert code == 0, err
        assert "decode_tokens_per_s" in out


def test_the_estimate_gives_the_text_models_parameters() -> None:
    """``params.text``: the total less the vision tower (what a GGUF holds); an MoE's every expert counted."""
    from generator.calculator.estimate import EstimateRequest, estimate

    for model, text in (("Qwen/Qwen3-30B-A3B", 30_532_122_624), ("google/gemma-3-27b-it", 27_009_346_304)):
        params = estimate(EstimateRequest(model=model, gpu="h100-sxm5-80gb", precision="bf16"))["params"]
        assert params["text"] == text
        assert params["text"] <= params["total"]
