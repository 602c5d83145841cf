"""``render --check``'s one-line verdict on drift: which entries of the output drifted, and the render that fixes it.

fix146 item 1: the verdict said "stale; run `specgen render`", naming neither the tree nor the files to render, so a
CI log's reader had to rebuild the command (and the ``-o`` it needs) from the job's script.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Mapping, Sequence

from generator.words import listed

#: Most entries of the output the verdict names (the patch on stdout has them all).
MAX_NAMED = 6
#: Most workload files the verdict's command names; with more, the command is written ``FILE...`` and the files given
#: are counted (hostile84 item 4: a check of 300 workloads wrote all 300 into one line).
MAX_FILES_NAMED = 6
#: The note where the render removes workload trees, which it does with ``--prune`` only (newuser53 item 3).
PRUNE_NOTE = " (it removes the trees of workloads no file renders)"


def drifted_entries(current: Mapping[str, str], rendered: Mapping[str, str], unlisted: Collection[str]) -> list[str]:
    """The top entries of the output (``b/``, ``cluster/``, ``spec.json``) whose owned files differ, sorted.

    ``unlisted``: specgen trees the root's manifest does not list. The root's manifest is named only where nothing else
    drifted (it lists the files; it changes with them).
    """
    from generator.writer import MANIFEST

    changed = {rel for rel in {*current, *rendered} if current.get(rel) != rendered.get(rel)}
    heads = {rel.split("/", 1)[0] + "/" if "/" in rel else rel for rel in changed} | {f"{name}/" for name in unlisted}
    return sorted(heads - {MANIFEST} or heads)


def render_command(files: Sequence[str], output: str, targets: Sequence[str], prune: bool) -> str:
    """The ``specgen render`` that brings ``output`` up to date, its words quoted for a POSIX shell.

    ``--prune`` renders every output: ``--target`` with it is refused (fuzz28 H1), so ``targets`` are left out there.
    """
    words = ["specgen", "render", *files, "-o", output]
    words += [word for target in ([] if prune else targets) for word in ("--target", target)]
    return shlex.join(words + (["--prune"] if prune else []))


def stale_verdict(files: Sequence[str], output: str, targets: Sequence[str], prune: bool, drifted: Sequence[str]) -> str:
    """The verdict: the output and its ``drifted`` entries, and the render (``prune``: with ``--prune``) to commit."""
    shown = list(drifted[:MAX_NAMED])
    if len(drifted) > MAX_NAMED:
        shown.append(f"{len(drifted) - MAX_NAMED} more")
    what = f" ({listed(shown)})" if shown else ""
    note = PRUNE_NOTE if prune else ""
    if len(files) <= MAX_FILES_NAMED:
        run = f"run `{render_command(files, output, targets, prune)}`"
    else:  # the first few in the order given, as the command gave them (a shell glob's order)
        named = [shlex.quote(file) for file in files[:MAX_FILES_NAMED]] + [f"{len(files) - MAX_FILES_NAMED:,} more"]
        run = f"run `{render_command(['FILE...'], output, targets, prune)}` with the {len(files):,} files given ({listed(named)})"
    return f"rendered output is stale in {output}{what}; {run}{note} and commit the result"
