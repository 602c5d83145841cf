"""hostile78: a render whose planning worker dies, llama-bench rows of another setup, output directories a render
cannot swap, and a stdout that cannot encode the output (bugs/hostile78.md items 1-5, 7, 8)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from generator import batch, writer
from generator.calculator.calibrate import main as calibrate_main
from generator.errors import OutputError, SpecgenError
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "calibrate"
LINUX = sys.platform.startswith("linux")
ENV = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
MAIN = [sys.executable, "-c", "from generator.cli import main; main()"]


def _workload(tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"version: 1\nname: {name}\ndeployments:\n  - name: d\n    model: org/{name}\n"
        "    inference: {requests_per_second: 1}\nhardware:\n  provider: baremetal\n",
        "utf-8",
    )
    return str(path)


@pytest.mark.skipif(not LINUX, reason="workers are forked on Linux only")
def test_a_planning_worker_killed_fails_the_render_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 1: a multiprocessing.Pool worker the OOM killer ends loses its task, and the render waited for it for ever."""
    paths = [_workload(tmp_path, f"w{i}") for i in range(4)]

    def work(path: str, alone: bool) -> batch.Rendered | batch._Failure:
        if path.endswith("w2.yaml"):
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer ends a worker
        return batch.Rendered(path, Path(path).stem, {}, ())

    monkeypatch.setattr(batch, "usable_cores", lambda cpu_max=batch.CPU_MAX: 2)
    monkeypatch.setattr(batch, "_work", work)  # the forked workers inherit it
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            batch.render_many(paths, jobs=2)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "render_many still waits 60 s after a worker was killed"
    assert isinstance(outcome[0], SpecgenError), outcome
    assert "ended before it finished" in str(outcome[0]) and "--jobs 1" in str(outcome[0])
    assert outcome[0].exit_code == 1
    import multiprocessing

    assert multiprocessing.active_children() == []  # every worker ended, none started in place of the killed one


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@pytest.mark.skipif(not LINUX, reason="workers are forked on Linux only")
def test_workers_end_with_a_render_killed_alone_and_print_no_traceback(tmp_path: Path) -> None:
    """Item 5: ``docker stop`` signals the parent alone; its orphaned workers printed BrokenPipeError tracebacks."""
    source = (REPO / "examples" / "capacity-400k.yaml").read_text()
    names = ("\nname: capacity\n", "- name: chat\n", "- name: summarize\n")
    files = []
    for k in range(8):
        text = source
        for name in names:
            text = text.replace(name, f"{name[:-1]}-{k}\n")
        files.append(tmp_path / f"c{k}.yaml")
        files[-1].write_text(text)
    process = subprocess.Popen(
        [*MAIN, "render", *map(str, files), "--jobs", "2", "-o", str(tmp_path / "out")],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(_children(process.pid)) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "finished before the workers were forked: give it more files"
        workers = _children(process.pid)
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)  # the parent alone
        try:
            _, err = process.communicate(timeout=60)  # the pipe closes once the workers are gone too
        except subprocess.TimeoutExpired:
            pytest.fail("the workers still hold stderr 60 s after the render was killed")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == -signal.SIGTERM
    assert "Traceback" not in err, err
    deadline = time.monotonic() + 10  # each worker ends (its stderr closed, it may still be tearing down)
    while any(_running(worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_running(worker) for worker in workers)


def _running(pid: str) -> bool:
    """Whether process ``pid`` still runs (not gone, not a zombie its new parent has yet to reap)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state and "State:\tX" not in state


BENCH_8B = ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--input-tokens", "512",
            "--output-tokens", "128")  # fmt: skip


def _bench(tmp_path: Path, name: str, rows: list[tuple[str, str, str]]) -> str:
    """A llama-bench table (the suite's llama-bench.md header) of ``rows`` (params, ngl, tg t/s)."""
    lines = (DATA / "llama-bench.md").read_text(encoding="utf-8").splitlines()[:2]
    for params, ngl, speed in rows:
        lines.append(f"| llama Q4_K - Medium | 4.58 GiB | {params} | CUDA | {ngl} | tg128 | {speed} ± 0.10 |")
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _calibrate(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = calibrate_main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_a_llama_bench_row_of_another_model_is_refused(tmp_path: Path) -> None:
    """Item 2: a 70B model's table fitted an 8B model's decode_bandwidth_efficiency at 0.037 (exit 0)."""
    log = _bench(tmp_path, "b70.md", [("70.55 B", "99", "25.00")])
    code, out, err = _calibrate(*BENCH_8B, "--log", log)
    assert code == 1 and "constants:" not in out
    assert f"{log}:3: a llama-bench row of a model of 70.55 B parameters" in err
    assert "not this model's 8.03 B" in err


def test_a_llama_bench_row_run_on_the_cpu_is_not_fitted_as_the_gpus(tmp_path: Path) -> None:
    """Item 2: ``-ngl 0`` (every layer on the CPU) fitted the GPU's decode_bandwidth_efficiency at 0.072 (exit 0)."""
    cpu = _bench(tmp_path, "cpu.md", [("8.03 B", "0", "15.00")])
    code, out, err = _calibrate(*BENCH_8B, "--log", cpu)
    assert code == 1 and "constants:" not in out
    assert "ran 0 of the model's 32 layers on the GPU (-ngl 0), the prediction 32" in err
    # a sweep: the row of the setup predicted is compared, the other left out with a note
    sweep = _bench(tmp_path, "sweep.md", [("8.03 B", "0", "15.00"), ("8.03 B", "99", "130.00")])
    code, out, _ = _calibrate(*BENCH_8B, "--log", sweep)
    assert code == 0
    assert f"note: {sweep}:3: left out: the llama-bench row ran 0 of the model's 32 layers" in out
    assert "decode_bandwidth_efficiency: 0.82" in out  # the suite's own row's fit (test_calibrate)


def test_a_llama_bench_row_of_the_predicted_offload_split_is_compared(tmp_path: Path) -> None:
    """70B Q4_K_M on one RTX 4090 with 128 GiB of RAM: the estimate holds 46 of 80 layers on the GPU (44 until review80
    items 1-2 left the 5% margin off the offloaded layers)."""
    setup = ("meta-llama/Llama-3.1-70B-Instruct", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--ram-gib", "128",
             "--cpu", "core-i9-14900k", "--input-tokens", "512", "--output-tokens", "128")  # fmt: skip
    code, out, _ = _calibrate(*setup, "--log", _bench(tmp_path, "split.md", [("70.55 B", "46", "3.00")]))
    assert code == 0 and "ddr_bandwidth_efficiency" in out
    code, _, err = _calibrate(*setup, "--log", _bench(tmp_path, "all.md", [("70.55 B", "99", "3.00")]))
    assert code == 1 and "ran 80 of the model's 80 layers on the GPU (-ngl 99), the prediction 46" in err


def _tree(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    writer.write_tree({"a.txt": "one\n", "sub/b.txt": "two\n"}, str(out))
    return out


def test_a_read_only_output_directory_is_filled_before_it_is_made_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 4: the staged tree took the old output's 555 before it was filled: as non-root nothing could be written."""
    out = _tree(tmp_path)
    out.chmod(0o555)
    staged_modes = []
    stage = writer._stage

    def checked(staging: str, *args: object) -> None:
        staged_modes.append(stat.S_IMODE(os.stat(staging).st_mode))
        stage(staging, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(writer, "_stage", checked)
    try:
        writer.write_tree({"a.txt": "three\n", "sub/b.txt": "two\n"}, str(out))
        assert all(mode & stat.S_IWUSR for mode in staged_modes), [oct(m) for m in staged_modes]
        assert stat.S_IMODE(out.stat().st_mode) == 0o555  # the user's mode, once filled
        assert (out / "a.txt").read_text() == "three\n"
    finally:
        out.chmod(0o755)


def test_an_output_directory_that_is_a_mount_point_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 3: ``-o /out`` on a bind mount failed with "Device or resource busy" (a mount point cannot be renamed)."""
    out = _tree(tmp_path)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr(os.path, "ismount", lambda path: os.path.realpath(path) == os.path.realpath(out))
    with pytest.raises(OutputError) as raised:
        writer.write_tree({"a.txt": "three\n"}, str(out))
    assert "it is a mount point" in str(raised.value)
    assert f"render into a directory inside it ({out / 'specgen'}, say)" in str(raised.value)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_an_unwritable_parent_is_named_as_what_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 8: the output itself writable, its parent not (as a non-root user): the error named the output."""
    out = _tree(tmp_path)

    def denied(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", denied)
    with pytest.raises(OutputError) as raised:
        writer.write_tree({"a.txt": "three\n"}, str(out))
    assert f"its parent directory {tmp_path} is not writable (Permission denied)" in str(raised.value)


@pytest.mark.parametrize("command", [["plan", "examples/chat-70b.yaml", "--format", "markdown"],
                                     ["diff", "examples/chat-70b.yaml", "examples/chat-70b-fp8-aws.yaml"]])  # fmt: skip
def test_a_stdout_that_cannot_encode_the_output_gets_escapes_not_a_traceback(command: list[str]) -> None:
    """Item 7: under PYTHONIOENCODING=latin-1 the first arrow or dash crashed with UnicodeEncodeError."""
    done = subprocess.run(
        [*MAIN, *command], env={**ENV, "PYTHONIOENCODING": "latin-1"}, cwd=REPO, capture_output=True, check=False
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode("latin-1")
    assert done.returncode == 0
    assert b"\\u2014" in done.stdout or b"\\u2192" in done.stdout  # what latin-1 lacks, escaped


@pytest.mark.parametrize("speed", ["-130.00", "nan", "inf", "1e308", "1,300.00"])
def test_a_llama_bench_speed_that_is_no_figure_is_refused_at_its_line(tmp_path: Path, speed: str) -> None:
    """Item 9: the row was dropped unsaid ("no ... figure found"), where a vLLM line's malformed figure is refused."""
    log = _bench(tmp_path, "bad.md", [("8.03 B", "99", speed)])
    code, _, err = _calibrate(*BENCH_8B, "--log", log)
    assert code == 1
    assert f"{log}:3: cannot read a figure from" in err and speed in err


def test_diff_of_a_several_workload_trees_root_names_the_spec_jsons_in_it(tmp_path: Path) -> None:
    """Item 11: "file is a directory; only regular files are read" (the root of such a tree holds no spec.json)."""
    from generator.errors import InputError
    from generator.fleet_diff import load_plan_dict

    root = tmp_path / "tree"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
        (root / name / "spec.json").write_text("{}")
    (root / ".specgen-manifest").write_text("a/spec.json\nb/spec.json\n")
    for given in (root, root / "spec.json"):
        with pytest.raises(InputError) as raised:
            load_plan_dict(str(given))
        assert f"{root} is the render tree of several workloads" in str(raised.value)
        assert f"give one workload's ({root / 'a' / 'spec.json'}, {root / 'b' / 'spec.json'})" in str(raised.value)
    (tmp_path / "other").mkdir()  # a folder that is no render tree keeps its own error
    with pytest.raises(InputError) as raised:
        load_plan_dict(str(tmp_path / "other"))
    assert "render tree" not in str(raised.value)


def test_a_spec_json_deployment_without_its_details_is_refused(tmp_path: Path) -> None:
    """Item 12: diff read a deployment without ``details`` as every setting changed to nothing ("KV fp8 → none")."""
    import json

    spec = json.loads((REPO / "tests" / "golden" / "chat-70b" / "spec.json").read_text())
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(spec))
    del spec["plan"]["deployments"][0]["details"]
    new.write_text(json.dumps(spec))
    done = subprocess.run([*MAIN, "diff", str(old), str(new)], env=ENV, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    # hostile84 item 1: at the deployment that lacks it
    assert re.search(
        rf"{re.escape(str(new))}:1:\d+: not a specgen spec\.json: 'plan\.deployments\[0\]' has no 'details'", done.stderr
    )
