"""hostile79: llama-bench rows calibrate cannot attribute or that disagree, an old output tree specgen cannot delete,
an AMD tool's endless output, and what errors echo of a file that is no workload (bugs/hostile79.md items 5, 6, 8-14)."""

from __future__ import annotations

import contextlib
import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest

from generator import swap, writer
from generator.calculator.calibrate import main as calibrate_main
from generator.errors import OutputError
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "calibrate"
BENCH_8B = ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--input-tokens", "512",
            "--output-tokens", "128")  # fmt: skip
HEADER = (DATA / "llama-bench.md").read_text(encoding="utf-8").splitlines()[:2]


def _row(speed: str, params: str = "8.03 B", test: str = "tg128") -> str:
    return f"| llama 8B Q4_K - Medium | 4.58 GiB | {params} | CUDA | 99 | {test} | {speed} ± 0.50 |"


def _calibrate(tmp_path: Path, lines: list[str]) -> tuple[int, str, str, str]:
    log = tmp_path / "bench.md"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = calibrate_main([*BENCH_8B, "--log", str(log)])
    return code, out.getvalue(), err.getvalue(), str(log)


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        pytest.param([_row("25.00", "70.55 B")], "no header line above it", id="no-header"),
        pytest.param(
            [*HEADER, "| llama 8B | 8.03 B | CUDA | 99 | tg128 | 130.00 ± 0.50 |"],
            "6 cells where its header has 7",
            id="cells-short",
        ),
        pytest.param(
            ["| model | size | backend | ngl | test | t/s |", "| llama 8B | 4.58 GiB | CUDA | 99 | tg128 | 130.00 ± 0.50 |"],
            "its header has no params column",
            id="no-params-column",
        ),
    ],
)
def test_a_llama_bench_row_whose_model_cannot_be_told_is_refused(tmp_path: Path, lines: list[str], why: str) -> None:
    """Item 5a: a 70B model's rows pasted without the table's header recommended decode_bandwidth_efficiency 0.1225 for
    an 8B model (exit 0): the row's params cell, which hostile78 item 2 checks, was read as "nothing to check"."""
    code, out, err, log = _calibrate(tmp_path, lines)
    assert code == 1 and "constants:" not in out
    assert f"{log}:{len(lines)}: a llama-bench row whose model cannot be told ({why}): " in err
    assert "give the table with its header line" in err


def test_two_llama_bench_runs_of_one_setup_that_disagree_are_refused_naming_both_lines(tmp_path: Path) -> None:
    """Item 5b: tg128 130 then 60 t/s recommended 0.3177 (the last row's fit), swapped 0.82."""
    for first, second in (("130.00", "60.00"), ("60.00", "130.00")):
        code, out, err, log = _calibrate(tmp_path, [*HEADER, _row(first), _row(second)])
        assert code == 1 and "constants:" not in out
        assert (
            f"{log}:4: two llama-bench runs of tg128 with one setup disagree: {first} t/s at line 3 and {second} t/s at "
            "line 4, 117% apart; give one run's table" in err
        )


def test_a_llama_bench_run_repeated_alike_is_compared_once_and_other_setups_each(tmp_path: Path) -> None:
    """Item 5c: a table pasted twice listed each row twice (300,000 rows: 300,005 lines); runs within 10% are both
    compared, as are two tests of one model (tg128, tg256)."""
    code, out, _, _ = _calibrate(tmp_path, [*HEADER, _row("130.00"), _row("130.00"), _row("130.00")])
    assert code == 0 and out.count("decode_tokens_per_s") == 1, out
    assert "decode_bandwidth_efficiency: 0.82" in out  # the suite's own row's fit (test_calibrate)
    code, out, _, _ = _calibrate(tmp_path, [*HEADER, _row("130.00"), _row("125.00"), _row("120.00", test="tg256")])
    assert code == 0 and out.count("decode_tokens_per_s") == 3, out


def test_an_old_tree_holding_a_file_that_cannot_be_deleted_is_said_and_never_claimed_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 6: a file of the old tree specgen cannot delete (a root container's ``terraform/.terraform``) left the
    previous tree in a hidden ``.specgen-*-new-*`` beside the output, exit 0 and unsaid; every later render said it
    "removed" it, and it stayed. (Deleting is refused here by ``os.unlink``, as a root-owned file refuses a user.)"""
    out = tmp_path / "out"
    writer.write_tree({"a.txt": "one\n"}, str(out))
    (out / "state").mkdir()
    (out / "state" / "locked").write_text("x\n")
    real_unlink, locked = os.unlink, [True]

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if locked[0] and os.path.basename(os.fsdecode(path)) == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", path)
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(OutputError) as raised:
        writer.write_tree({"a.txt": "two\n"}, str(out))
    (left,) = [p for p in tmp_path.iterdir() if p.name.startswith(".specgen-")]
    assert str(raised.value) == (
        f"wrote the new render to {out} in full, but could not remove the previous tree, left in {left} (state/locked: "
        "Permission denied); it is no part of the output: remove it by hand (as the user that owns what stays)"
    )
    assert (out / "a.txt").read_text() == "two\n" and (out / "state" / "locked").read_text() == "x\n"
    # the next run's recovery says it could not, and does not claim it removed it
    said = swap.recover(str(out), str(tmp_path), writer._remove_tree)
    assert said == [
        f"warning: could not remove {left}, left by an earlier render (state/locked: Permission denied); it is no part "
        "of the output: remove it by hand (as the user that owns what stays)"
    ]
    assert left.exists()
    locked[0] = False  # once it can be deleted, it is, and said so
    assert writer.write_tree({"a.txt": "three\n"}, str(out)) == [f"removed {left}, left by an interrupted render"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def test_detect_reads_at_most_a_bound_of_a_commands_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 8: an AMD tool printing 300 MB was kept whole (3.2 GB of memory within the 20 s timeout). Now detect stops
    reading at :data:`MAX_COMMAND_OUTPUT_BYTES` on either stream, kills the tool and says so; output under it is read
    as before (exit status, stderr's first line)."""
    from generator.calculator import detect

    monkeypatch.setattr(detect, "MAX_COMMAND_OUTPUT_BYTES", 1 << 20)
    failures: dict[tuple[str, ...], str] = {}
    for stream in ("", " 1>&2"):
        endless = (_script(tmp_path, f"endless{len(stream)}", f"yes aaaaaaaaaaaaaaaaaaaaaaa{stream}"),)
        assert detect.run_command(endless, failures) is None
        assert failures[endless] == f"{endless[0]} printed more than 1 MiB, which detect does not read"
    ok = (_script(tmp_path, "ok", "head -c 1048575 /dev/zero | tr '\\0' a; echo"),)  # at the bound: read whole
    assert detect.run_command(ok, failures) == "a" * ((1 << 20) - 1) + "\n" and ok not in failures
    failing = (_script(tmp_path, "failing", "echo out; echo 'no GPU found' >&2; exit 3"),)
    assert detect.run_command(failing, failures) is None
    assert failures[failing] == f'{failing[0]} exited 3: "no GPU found"'


def test_estimate_detect_finding_no_gpu_says_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 11: ``estimate --detect`` on a machine without a GPU it knows printed 43 lines of usage before its error."""
    from generator.calculator import detect
    from generator.calculator.cli import main as estimate_main

    monkeypatch.setattr(detect, "this_machine", lambda: detect.Sources(str(tmp_path), detect.recorded({})))
    monkeypatch.setattr(detect, "parse_meminfo", lambda text: {"MemTotal": 64 * 2**30, "MemAvailable": 60 * 2**30})
    # newuser86 item 2: a machine without a GPU tool is planned for llama.cpp on its CPU, and says so (it was exit 2,
    # "--detect found no GPU it knows ...; give --gpu")
    assert estimate_main(["meta-llama/Llama-3.1-8B-Instruct", "--detect", "--precision", "q4_k_m"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "note: --detect found no GPU (nvidia-smi, amd-smi and rocm-smi missing): planned for llama.cpp on the CPU" in (
        captured.out
    )
    assert "placement    RAM " in captured.out and "no GPU" in captured.out


def test_an_unknown_key_no_field_name_could_be_is_located_not_echoed(tmp_path: Path) -> None:
    """Item 14: a workload path linked to ``/etc/shadow`` echoed each account's line (its password hash with it) as an
    unknown field's name, twice a line; a key that looks like a field name is still shown, with its suggestion."""
    from generator.errors import SpecgenError
    from generator.workload import load_workload

    secret = "root:$6$rounds=5000$saltsalt$hashhashhash:20228:0:99999:7::"
    path = tmp_path / "w.yaml"
    path.write_text(f"{secret}:\ndeployments:\n  - nmae: x\n", encoding="utf-8")
    with pytest.raises(SpecgenError) as raised:
        load_workload(str(path))
    said = str(raised.value)
    assert "hashhash" not in said and "rounds" not in said, said
    assert (
        f"{path}:1:1: unknown field (a key of {len(secret)} characters, not shown: it holds ':', which no field name does)"
        in said.splitlines()
    )
    assert f"{path}:3:5: deployments[0].nmae: unknown field 'nmae'" in said


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        pytest.param(
            ["model_type,model_n_params,n_gpu_layers,n_gen,avg_ts,stddev_ts", '"llama 8B",8030261248,99,128,130.0,0.5'],
            "bench.md: llama-bench's CSV (-o csv) output is not read: calibrate reads llama-bench's markdown table (-o md, "
            "its default), rows of tg tests",
            id="csv",
        ),
        pytest.param(
            ['[{"model_n_params": 8030261248, "n_gpu_layers": 99, "n_gen": 128, "avg_ts": 130.0}]'],
            "bench.md: llama-bench's JSON (-o json / jsonl) output is not read: calibrate reads",
            id="json",
        ),
        pytest.param(
            [*HEADER, _row("90.00", test="tg128 @ d4096")],
            "bench.md:3: a llama-bench row at a KV depth (tg128 @ d4096) is not compared: the prediction's decode starts "
            "from the prompt alone; give a run without -d (a tg128 row)",
            id="depth",
        ),
    ],
)
def test_llama_bench_output_calibrate_does_not_read_is_named(tmp_path: Path, lines: list[str], said: str) -> None:
    """Item 9: llama-bench's -o csv, -o json and its rows at a depth read "no vLLM, llama.cpp, nvidia-smi or torch
    memory-summary figure found", as if llama-bench were not read at all."""
    code, out, err, _ = _calibrate(tmp_path, lines)
    assert (code, out) == (1, "")
    assert said in err, err
