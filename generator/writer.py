"""Write a rendered tree atomically, or compare it with what is on disk (``--check``).

The tree is written to a temporary sibling directory and swapped in with renames, so an
interrupted run leaves the previous output intact and readers never see half a tree.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile

from generator.errors import InputError, OutputError


def read_tree(directory: str) -> dict[str, str]:
    """Every file under ``directory``, keyed by its relative path (``/``-separated)."""
    found: dict[str, str] = {}
    if not os.path.isdir(directory):
        return found
    for root, _dirs, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, directory).replace(os.sep, "/")
            try:
                with open(path, encoding="utf-8", newline="") as fh:
                    found[rel] = fh.read()
            except UnicodeDecodeError:
                found[rel] = "<binary file>\n"
    return found


def diff_trees(current: dict[str, str], files: dict[str, str]) -> str:
    """A unified diff from ``current`` to ``files`` (empty when identical)."""
    chunks: list[str] = []
    for rel in sorted(set(current) | set(files)):
        old, new = current.get(rel), files.get(rel)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{rel}" if old is not None else "/dev/null",
                tofile=f"b/{rel}" if new is not None else "/dev/null",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def write_tree(files: dict[str, str], directory: str) -> None:
    """Replace ``directory`` with exactly ``files`` (paths relative to it)."""
    target = os.path.abspath(directory)
    parent = os.path.dirname(target)
    if os.path.exists(target) and not os.path.isdir(target):
        raise InputError(f"output path {directory} exists and is not a directory")
    try:
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".specgen-", dir=parent)
    except OSError as exc:
        raise OutputError(f"cannot write {directory}: {exc.strerror or exc}") from None
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)
    try:
        for rel, text in files.items():
            path = os.path.join(staging, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        if os.path.isdir(target):
            retired = tempfile.mkdtemp(prefix=".specgen-old-", dir=parent)
            os.rename(target, os.path.join(retired, "tree"))
            os.rename(staging, target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.rename(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"cannot write {directory}: {exc.strerror or exc}; the previous output is unchanged") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
