"""The writer under kills and concurrency (issue 13; symlinks: tests/test_output_symlinks.py).

A kill is injected at every file-system call of a render in turn: from that call on, nothing more
happens (no cleanup handler runs, as after SIGKILL). At that instant the output path must hold the
old tree or the new one, with the user's Terraform state and other files in place; the next render
must then succeed, recover what the killed one left, and leave nothing but the output directory.
"""

from __future__ import annotations

import builtins
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from generator import swap, writer
from generator.errors import OutputError

OLD = {"a.txt": "old a\n", "d/b.txt": "old b\n", "terraform/variables.tf": "old tf\n"}
NEW = {"a.txt": "new a\n", "c.txt": "new c\n", "e/f.txt": "new f\n", "terraform/variables.tf": "new tf\n"}
STATE = b'{"version": 4, "serial": 7}\n'


class Killed(BaseException):
    """The simulated SIGKILL."""


#: (module, attribute) of every call that changes the file system during a render.
MUTATORS: list[tuple[Any, str]] = [
    (os, "rename"),
    (os, "replace"),
    (os, "link"),
    (os, "symlink"),
    (os, "mkdir"),
    (os, "makedirs"),
    (os, "chmod"),
    (os, "unlink"),
    (os, "remove"),
    (os, "rmdir"),
    (builtins, "open"),
    (shutil, "copy2"),
    (tempfile, "mkdtemp"),
    (writer, "exchange"),
]


@contextmanager
def kill_at(call: int | None, counter: list[int]) -> Iterator[None]:
    """Count mutating calls; at number ``call`` raise Killed, and from then on refuse every call."""
    dead = [False]
    originals = [(mod, name, getattr(mod, name)) for mod, name in MUTATORS]

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def inner(*args: Any, **kwargs: Any) -> Any:
            if dead[0]:
                raise Killed
            counter[0] += 1
            if call is not None and counter[0] == call:
                dead[0] = True
                raise Killed
            return real(*args, **kwargs)

        return inner

    for mod, name, real in originals:
        setattr(mod, name, wrap(real))
    try:
        yield
    finally:
        for mod, name, real in originals:
            setattr(mod, name, real)


def _user_files(target: Path) -> None:
    (target / "terraform" / "terraform.tfstate").write_bytes(STATE)
    (target / ".terraform" / "providers").mkdir(parents=True)
    (target / ".terraform" / "providers" / "lock").write_text("x\n")
    (target / "NOTES.md").write_text("mine\n")


def _assert_whole(target: Path, allowed: list[dict[str, str]]) -> None:
    assert target.is_dir(), "the output path is missing"
    owned = writer.read_tree(str(target))
    assert owned in [writer.with_manifest(tree) for tree in allowed], sorted(owned)
    assert (target / "terraform" / "terraform.tfstate").read_bytes() == STATE
    assert (target / ".terraform" / "providers" / "lock").read_text() == "x\n"
    assert (target / "NOTES.md").read_text() == "mine\n"


def _count_calls(tmp_path: Path) -> int:
    target = tmp_path / "count" / "infra"
    target.parent.mkdir()
    writer.write_tree(OLD, str(target))
    _user_files(target)
    counter = [0]
    with kill_at(None, counter):
        writer.write_tree(NEW, str(target))
    return counter[0]


def test_a_kill_at_any_file_system_call_keeps_a_whole_tree_and_the_state(tmp_path: Path) -> None:
    total = _count_calls(tmp_path)
    assert total > 10
    for call in range(1, total + 1):
        root = tmp_path / f"kill-{call}"
        root.mkdir()
        target = root / "infra"
        writer.write_tree(OLD, str(target))
        _user_files(target)
        with pytest.raises(Killed), kill_at(call, [0]):
            writer.write_tree(NEW, str(target))
        _assert_whole(target, [OLD, NEW])
        writer.write_tree(NEW, str(target))  # the next render recovers
        _assert_whole(target, [NEW])
        assert [p.name for p in root.iterdir()] == ["infra"], f"leftovers after a kill at call {call}"


def test_a_kill_during_recovery_is_recovered_too(tmp_path: Path) -> None:
    total = _count_calls(tmp_path)
    for first in range(1, total + 1, 4):
        for second in range(1, total + 1, 5):
            root = tmp_path / f"kill-{first}-{second}"
            root.mkdir()
            target = root / "infra"
            writer.write_tree(OLD, str(target))
            _user_files(target)
            with pytest.raises(Killed), kill_at(first, [0]):
                writer.write_tree(NEW, str(target))
            try:
                with kill_at(second, [0]):
                    writer.write_tree(OLD, str(target))
            except Killed:
                pass
            _assert_whole(target, [OLD, NEW])
            writer.write_tree(NEW, str(target))
            _assert_whole(target, [NEW])
            assert [p.name for p in root.iterdir()] == ["infra"]


def test_the_two_rename_fallback_is_recovered_after_a_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an atomic exchange, a kill between the two renames leaves no output; the next run restores it."""

    def unsupported(a: str, b: str) -> None:
        raise swap.ExchangeUnsupportedError("test")

    monkeypatch.setattr(writer, "exchange", unsupported)
    target = tmp_path / "infra"
    writer.write_tree(OLD, str(target))
    _user_files(target)
    renames = [0]
    real_rename = os.rename

    def rename(src: Any, dst: Any) -> None:
        renames[0] += 1
        if renames[0] == 2:  # the first moved the old tree away; die before the new one moves in
            raise Killed
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(Killed):
        writer.write_tree(NEW, str(target))
    monkeypatch.setattr(os, "rename", real_rename)
    assert not target.exists()
    notes = writer.write_tree(NEW, str(target))
    assert any(note.startswith("restored the previous output") for note in notes), notes
    _assert_whole(target, [NEW])
    assert [p.name for p in tmp_path.iterdir()] == ["infra"]


def test_concurrent_renders_are_serialised(tmp_path: Path) -> None:
    target = tmp_path / "infra"
    writer.write_tree(OLD, str(target))
    _user_files(target)
    errors: list[BaseException] = []

    def render(files: dict[str, str]) -> None:
        try:
            for _ in range(15):
                writer.write_tree(files, str(target))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=render, args=(tree,)) for tree in (OLD, NEW, OLD, NEW)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    _assert_whole(target, [OLD, NEW])
    assert [p.name for p in tmp_path.iterdir()] == ["infra"]


def test_a_held_lock_makes_the_second_render_fail_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "infra"
    monkeypatch.setattr(swap, "LOCK_WAIT_S", 0.2)
    with swap.output_lock(str(tmp_path), str(target)), pytest.raises(OutputError, match="another specgen render"):
        writer.write_tree(NEW, str(target))
    assert not target.exists()


def test_an_overlong_file_name_is_refused_before_writing(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="longer than 255 bytes"):
        writer.write_tree({"a" * 256 + ".yml": "x\n"}, str(tmp_path / "infra"))
    assert not (tmp_path / "infra").exists()
