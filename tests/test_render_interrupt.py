"""Ctrl-C during ``render`` exits 130 and says whether the new tree was swapped in (newuser75 item 5).

It exited 1 with click's "Aborted!", the code of invalid input, also where the new tree had replaced the old one. The
swap is held off from Ctrl-C until it is recorded, so the line said is always true: the old tree, whole, or the new.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator import swap, writer
from tests.helpers import VALID
from tests.helpers import specgen_in_process as specgen

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="Ctrl-C is sent to this process: a signal handler is set on the main thread alone",
)


@pytest.fixture(autouse=True)
def python_sigint_handler() -> Iterator[None]:
    """Python's own Ctrl-C handler while a test runs, as a terminal's specgen has: a process started with SIGINT ignored
    (a non-interactive shell's background job) has none, and the Ctrl-C the test sends would do nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


#: ``render`` as CI runs it (read without click), and a form click reads.
FORMS = [pytest.param((), id="plain"), pytest.param(("--allow-outside-paths",), id="click")]


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def _rate(out: Path) -> Any:
    spec = json.loads((out / "spec.json").read_text())
    return spec["plan"]["deployments"][0]["details"]["requests_per_s"]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A workload rendered once at 2 req/s, then changed to 3 req/s; nothing recorded as replaced yet."""
    work, out = tmp_path / "w.yaml", tmp_path / "out"
    work.write_text(VALID)
    assert specgen(capsys, "render", str(work), "-o", str(out))[0] == 0
    work.write_text(VALID.replace("requests_per_second: 2", "requests_per_second: 3"))
    monkeypatch.setattr(writer, "REPLACED", [], raising=False)
    return work, out


@pytest.mark.parametrize("head", FORMS)
def test_ctrl_c_as_the_tree_is_swapped_exits_130_with_the_new_tree_said(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], head: tuple[str, ...]
) -> None:
    work, out = tree
    exchange = swap.exchange

    def exchange_then_ctrl_c(a: str, b: str) -> None:
        exchange(a, b)
        _ctrl_c()  # between the swap and its record: held off until the swap is recorded

    monkeypatch.setattr(writer, "exchange", exchange_then_ctrl_c)
    code, _, err = specgen(capsys, *head, "render", str(work), "-o", str(out))
    assert code == 130, err
    assert f"Aborted! Interrupted after the new render was written in full to {out}." in err
    assert _rate(out) == 3.0
    assert sorted(p.name for p in out.parent.iterdir()) == ["out", "w.yaml"]  # the retired tree is gone


@pytest.mark.parametrize("head", FORMS)
def test_ctrl_c_while_staging_exits_130_with_the_old_tree_said_and_kept(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], head: tuple[str, ...]
) -> None:
    work, out = tree
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    stage = writer._stage

    def stage_then_ctrl_c(*args: Any) -> None:
        stage(*args)
        _ctrl_c()

    monkeypatch.setattr(writer, "_stage", stage_then_ctrl_c)
    code, _, err = specgen(capsys, *head, "render", str(work), "-o", str(out))
    assert code == 130, err
    assert "Aborted! Interrupted before any output directory was changed." in err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["out", "w.yaml"]  # no staged tree left


def test_ctrl_c_during_estimate_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, a traceback (estimate is dispatched before click)."""
    from generator.calculator import cli as estimate_cli

    def interrupted(argv: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(estimate_cli, "main", interrupted)
    code, _, err = specgen(capsys, "estimate", "llama-3.1-8b")
    assert code == 130 and "Aborted!" in err and "Traceback" not in err


def test_an_interrupt_names_only_its_own_renders_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """review77 item 5: ``writer.REPLACED`` was never cleared, so a second render in one process, interrupted before its
    swap, said the first render's directory had been written."""
    work, first, second = tmp_path / "w.yaml", tmp_path / "first", tmp_path / "second"
    work.write_text(VALID)
    monkeypatch.setattr(writer, "REPLACED", [], raising=False)
    assert specgen(capsys, "render", str(work), "-o", str(first))[0] == 0
    stage = writer._stage

    def stage_then_ctrl_c(*args: Any) -> None:
        stage(*args)
        _ctrl_c()

    monkeypatch.setattr(writer, "_stage", stage_then_ctrl_c)
    code, _, err = specgen(capsys, "render", str(work), "-o", str(second))
    assert code == 130, err
    assert "Aborted! Interrupted before any output directory was changed." in err
    assert str(first) not in err
    assert not second.exists()


def test_a_ctrl_c_held_while_the_block_raises_is_still_delivered() -> None:
    """review77 item 6: the noted SIGINT was re-delivered after the ``try/finally`` only, so a block that raised lost it."""
    from generator.errors import OutputError

    def held_block_raising() -> None:
        with swap.interrupts_held():
            _ctrl_c()
            raise OutputError("cannot write out")

    with pytest.raises(KeyboardInterrupt):
        held_block_raising()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_as_the_swap_fails_exits_130_with_the_old_tree_said_and_kept(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """review77 item 6: the user's Ctrl-C, held through a swap that failed, exited 1 "cannot write ..." instead."""
    work, out = tree
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def ctrl_c_then_fail(a: str, b: str) -> None:
        _ctrl_c()
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer, "exchange", ctrl_c_then_fail)
    code, _, err = specgen(capsys, "render", str(work), "-o", str(out))
    assert code == 130, err
    assert "Aborted! Interrupted before any output directory was changed." in err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
