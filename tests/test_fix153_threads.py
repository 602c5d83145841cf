"""fix153 item 1: ``estimate --threads N`` with ``--cpu``, a llama.cpp run on fewer threads than the part's cores.

The calibration rows on the Xeon Gold 6138 (20 threads on two 20-core sockets) and the EPYC 7773X (32 threads on 64
cores) ran fewer threads than the part has; ``--cpu`` counted every core, so the estimate stayed bound by the DIMMs
(+50% and +78% over the 6138's measured decodes). The calibration report counts a row's threads over its sockets
(``_offload_setup``: ``threads / sockets`` cores a socket); ``--threads`` gives the estimate the same, so its figure is
the report's prediction of the row as run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import catalog
from tests.conftest import REPO, calibration_report
from tests.helpers import run_estimate

CALIBRATION = REPO / "tests" / "data" / "calibration.json"
#: the rows' CPUs that ran fewer threads than their cores -> catalog id
CPU_IDS = {"Xeon Gold 6138": "xeon-gold-6138", "EPYC 7773X": "epyc-7773x"}


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(CALIBRATION.read_text())["offload_decode"]
    out = []
    for row in rows:
        cpu = next((cid for name, cid in CPU_IDS.items() if name in row["cpu_as_reported"]), None)
        if row["placement"] == "cpu-only" and cpu and row["threads"] < catalog.cpus()[cpu].cores * row["sockets"]:
            out.append({**row, "cpu": cpu})
    return out


ROWS = _rows()


def _args(row: dict[str, Any], *extra: str) -> list[str]:
    context = row["context_tokens"]
    args = [row["model"], "--precision", row["precision"], "--ram-gib", str(128 * row["memory_channels"])]
    args += ["--cpu", row["cpu"], "--cpu-sockets", str(row["sockets"]), "--ddr-mt-per-s", str(row["ddr_mt_per_s"])]
    args += ["--context", str(max(4096, context + 16)), "--input-tokens", str(max(1, context)), "--output-tokens", "1"]
    return [*args, "--offload-engine", row["engine"], *extra, "--json"]


def _decode(row: dict[str, Any], *extra: str) -> float:
    code, text = run_estimate(*_args(row, *extra))
    assert code == 0, text
    return float(json.loads(text)["cpu_only"]["decode_tokens_per_s"])


def test_the_rows_that_ran_fewer_threads_are_the_6138s_and_the_7773xs() -> None:
    """The three rows this item is about (two 6138, one 7773X): if the data changes, the test says so."""
    assert sorted((row["cpu"], row["threads"]) for row in ROWS) == [
        ("epyc-7773x", 32),
        ("xeon-gold-6138", 20),
        ("xeon-gold-6138", 20),
    ]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row['cpu']}-{row['model'].split('/')[1]}")
def test_threads_give_the_reports_prediction_of_the_row_as_run(row: dict[str, Any]) -> None:
    """With the row's ``--threads`` the estimate is the report's prediction with the row's threads (current llama.cpp's
    MLA cache); without it, every core's, which is faster on these compute-bound runs."""
    as_run = {**row, "int8_vnni": catalog.cpus()[row["cpu"]].int8_vnni, "pre_mla_build": False}
    predicted = calibration_report().predict_offload_decode(as_run)
    with_threads = _decode(row, "--threads", str(row["threads"]))
    assert with_threads == pytest.approx(predicted, rel=0.005)
    assert _decode(row) > 1.2 * with_threads  # every core: the DIMMs bound it, 1.4-1.5x these


def test_the_6138_rows_come_within_the_reports_error() -> None:
    """Measured 2.41 and 12.90 tokens/s: +50% / +78% at every core, -7% / +15% at the rows' 20 threads."""
    errors = {row["model"]: _decode(row, "--threads", str(row["threads"])) / row["tokens_per_s"] - 1 for row in ROWS}
    assert errors["Qwen/Qwen3-235B-A22B"] == pytest.approx(-0.07, abs=0.01)
    assert errors["Qwen/Qwen3-30B-A3B"] == pytest.approx(0.15, abs=0.01)


def test_threads_past_the_cores_count_the_cores() -> None:
    """An SMT sibling adds no multiply rate (common.cpp ``cpu_get_num_math``): 80 threads on two 40-thread 6138s are
    timed as every core, the figure without ``--threads``; 40 threads over two sockets are 20 cores a socket too."""
    row = next(row for row in ROWS if row["cpu"] == "xeon-gold-6138")
    every_core = _decode(row)
    assert _decode(row, "--threads", "80") == every_core
    assert _decode(row, "--threads", "40") == every_core
    assert _decode(row, "--threads", "30") < every_core


def test_fewer_threads_are_never_faster() -> None:
    """Monotone in the threads: each more thread gives the same or a faster decode."""
    row = next(row for row in ROWS if row["model"] == "Qwen/Qwen3-30B-A3B")
    speeds = [_decode(row, "--threads", str(n)) for n in (2, 8, 16, 20, 30, 40)]
    assert speeds == sorted(speeds)
    assert speeds[0] < speeds[-1]


def test_the_machine_line_says_the_threads_cores() -> None:
    row = next(row for row in ROWS if row["model"] == "Qwen/Qwen3-30B-A3B")
    code, text = run_estimate(*_args(row, "--threads", "20")[:-1])
    assert code == 0, text
    assert "10 of its 20 cores a socket for llama.cpp's 20 threads (--threads over 2 sockets)" in text


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--cpu", "xeon-gold-6138", "--cpu-sockets", "2", "--threads", "81"), "--threads must be at most 80"),
        (("--cpu", "epyc-7773x", "--threads", "129"), "--threads must be at most 128"),
        (("--cpu", "epyc-7773x", "--threads", "0"), "--threads must be a whole number of at least 1"),
        (("--cpu", "epyc-7773x", "--threads", "-3"), "--threads must be a whole number of at least 1"),
        (("--cpu", "epyc-7773x", "--threads", "2.5"), "argument --threads: expected a whole number"),
        (("--threads", "8"), "--threads needs --cpu"),
        (("--memory-channels", "8", "--ddr-mt-per-s", "3200", "--cpu-cores", "16", "--threads", "8"), "--threads needs --cpu"),
    ],
)
def test_bad_threads_are_a_usage_error(extra: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code, text = run_estimate("Qwen/Qwen3-30B-A3B", "--precision", "q8_0", "--ram-gib", "512", *extra)
    except SystemExit as exit_:  # argparse's own refusal of a type
        code, text = int(str(exit_.code)), ""
    err = capsys.readouterr().err
    assert code == 2, text
    assert message in err
    assert "Traceback" not in err and not text
