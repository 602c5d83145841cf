"""Where a render moves or removes a workload's tree, the files specgen did not write there would stay behind.

A render of one file writes the flat layout (``OUT/terraform/``), a render of several the layout of a cluster's
workloads (``OUT/<workload>/terraform/`` and one root module in ``OUT/terraform/``). Going from one to the other moves
a workload's tree; ``--prune`` removes the trees of workloads no longer rendered. specgen moves and removes only the
files it wrote: the user's own (``terraform.tfstate``, ``.terraform/``, ``hosts.yml``, notes) stay where they were,
beside a module they no longer belong to, and the next ``terraform apply`` at the new place starts with no state and
creates the fleet a second time (fuzz31 item 3). Such a render is refused, naming those files and where they go.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from generator.errors import OutputError
from generator.named_tuple import NamedTuple

#: Files named in one refusal; the rest are counted.
MAX_NAMED = 6


class Move(NamedTuple):
    """What a render does to the tree of ``workload``: from ``old`` to ``new`` (None: removed, ``--prune``).

    Both are directories under the output, "" its root.
    """

    workload: str
    old: str
    new: str | None


def tree_moves(current: Collection[str], flat: str | None, names: Collection[str], single: bool) -> list[Move]:
    """The trees a render of workloads ``names`` moves or removes.

    ``current``: the workload trees of the output now (a cluster's layout); ``flat``: else the workload of its flat
    tree, where its ``spec.json`` names one; ``single``: one file is rendered (the flat layout).
    """
    if current:
        if single:
            return [Move(name, name, "" if name in names else None) for name in sorted(current)]
        return [Move(name, name, None) for name in sorted(set(current) - set(names))]
    if flat is None or (single and flat in names):
        return []
    return [Move(flat, "", flat if flat in names and not single else None)]


def refuse_stranding(
    output: str, listed: Collection[str], moves: list[Move], single: str | None, written: Collection[str]
) -> list[str]:
    """Raise OutputError where ``moves`` would leave files specgen did not write behind (nothing is written then).

    ``listed``: the paths the output's manifest gives specgen; ``single``: the one workload rendered (the flat
    layout), where one file is rendered; ``written``: the paths the render writes. A file of the user's in a directory
    the render still writes into is not left behind (``terraform/`` is the flat tree's module and a cluster's root
    module alike), but Terraform state there holds other addresses now: the notes returned say so.
    """
    from generator.render import SHARED_DIRECTORIES

    owned = set(listed)
    kept = {rel.rpartition("/")[0] for rel in written}
    problems: list[str] = []
    notes: list[str] = []
    tops = {move: [move.old] if move.old else sorted({rel.split("/", 1)[0] for rel in owned if "/" in rel}) for move in moves}
    if single is not None and any(move.old for move in moves):  # a cluster's shared layer becomes a flat tree's
        tops[Move("", "", "")] = list(SHARED_DIRECTORIES)
    for move, under in tops.items():
        found = [entry for top in under for entry in foreign_entries(output, top, owned)]
        left = [entry for entry in found if entry.rstrip("/").rpartition("/")[0] not in kept]
        states = [entry for entry in found if entry not in left and entry.endswith(".tfstate")]
        if states:
            notes.append(
                f"{_named(output, states)} stays beside the Terraform specgen writes there, now {_module(single)}: a "
                "state applied there in the old layout holds other addresses (with or without module.<workload>); "
                "terraform state mv them (or destroy what is no longer rendered) before applying"
            )
        if not left:
            continue
        if move.new is None:
            where = os.path.join(output, move.old) if move.old else output
            problems.append(
                f"--prune removes the tree of workload {move.workload!r} ({where}), where files specgen did not write "
                f"would stay: {_named(output, left)}; if one is Terraform state, destroy the fleet it holds with it "
                "first (or keep the workload's file in the render), then move them out of the tree"
            )
            continue
        new = os.path.join(output, move.new) if move.new else output
        if not move.workload:
            what = f"the shared layer of the tree's workloads, which the flat tree of workload {single!r} does not have"
            moved = "them out of the tree"
        else:
            old = os.path.join(output, move.old) if move.old else output
            why = "one file renders a flat tree" if single else "several files render a tree of each workload"
            what = f"the tree of workload {move.workload!r}, which moves from {old} to {new} ({why})"
            moved = ", ".join(
                f"{os.path.join(output, rel)} to {os.path.join(new, _within(rel, move.old))}" for rel in left[:MAX_NAMED]
            ) + _more(left)
        other = "render every workload file of the tree together" if single else f"render {move.workload!r}'s file alone"
        problems.append(
            f"files specgen did not write would stay behind in {what}: {_named(output, left)}; move {moved} first, or {other}"
        )
    if problems:
        raise OutputError(f"{output}: {'; and '.join(problems)}; nothing was written")
    return notes


def _module(single: str | None) -> str:
    """What ``terraform/`` at the output's root is after the render."""
    if single is not None:
        return f"the flat module of workload {single!r}"
    return "the root module calling each workload's module"


def foreign_entries(output: str, top: str, owned: Collection[str]) -> list[str]:
    """What lies under ``output/top`` that specgen did not write, as relative paths, sorted.

    A directory holding none of specgen's files is named once (with a trailing ``/``); symlinks are not followed.
    """
    found: list[str] = []
    pending = [top]
    while pending:
        rel = pending.pop()
        try:
            entries = sorted(os.scandir(os.path.join(output, *rel.split("/"))), key=lambda e: e.name)
        except OSError:  # gone, or not a directory: nothing of the user's below it
            continue
        for entry in entries:
            sub = f"{rel}/{entry.name}"
            if sub in owned:
                continue
            directory = entry.is_dir(follow_symlinks=False)
            if directory and any(path.startswith(sub + "/") for path in owned):
                pending.append(sub)
            else:
                found.append(sub + ("/" if directory else ""))
    return sorted(found)


def _within(rel: str, old: str) -> str:
    """``rel`` (a path under the output) relative to the tree at ``old`` ("" the output's root)."""
    return rel[len(old) + 1 :] if old else rel


def _named(output: str, entries: list[str]) -> str:
    return ", ".join(os.path.join(output, rel) for rel in entries[:MAX_NAMED]) + _more(entries)


def _more(entries: list[str]) -> str:
    return f" and {len(entries) - MAX_NAMED} more" if len(entries) > MAX_NAMED else ""
