"""The stamp ``spec.json`` carries of the specgen that wrote it, and what ``diff`` and ``render --check`` say of another.

hostile85: a ``spec.json`` stamped ``specgen 99.0.0``, ``5`` or nothing was compared without a word, and the fields
this version does not know were skipped. The stamp is the format's version: specgen writes the fields of its own.
"""

from __future__ import annotations

import json
import os
from typing import Any

from generator import __version__
from generator.errors import one_line
from generator.input_files import short

#: The ``generator`` value this specgen writes in ``spec.json``.
SPEC_STAMP = f"specgen {__version__}"

#: What ``diff`` does with a ``spec.json`` of another stamp (:func:`stamp_note`'s ``then``).
DIFF_READS = "the diff compares the fields this version writes and skips any other"
#: What ``render --check``'s drift may be where the committed tree's ``spec.json`` is of another stamp (fix160 item 2).
DRIFT_CAUSE = "its tree's drift may come from the specgen that wrote it, not from a change to the workload"


def stamp_note(data: dict[str, Any], path: str, then: str = DIFF_READS) -> str | None:
    """One line saying ``path``'s ``spec.json`` (its document ``data``) was written by another specgen; None if by this.

    A missing stamp, one not a text and another version are named beside this one's; ``then`` says what follows of it
    (:data:`DIFF_READS`: the diff goes on with the fields this version writes, a shape it cannot read refused before
    this; :data:`DRIFT_CAUSE`: ``render --check``).
    """
    stamp = data.get("generator")
    if stamp == SPEC_STAMP:
        return None
    if "generator" not in data:
        written = f"has no 'generator' stamp (this specgen writes {SPEC_STAMP!r})"
    elif isinstance(stamp, str):
        written = f"was written by {short(stamp, 60)}, not this {SPEC_STAMP}"
    else:  # hostile90: in JSON's words (null, true, {"a": 1}), not Python's (None, True, {'a': 1})
        try:
            shown = json.dumps(stamp, ensure_ascii=False)
        except RecursionError:  # nested as deep as json.loads reads: said by its kind
            shown = "a list" if isinstance(stamp, list) else "an object"
        shown = shown if len(shown) <= 60 else f"{shown[:60]}... ({len(shown):,} characters)"
        written = f"has 'generator' {shown}, not a specgen version (this specgen writes {SPEC_STAMP!r})"
    return one_line(f"specgen: note: {path} {written}: {then}")


def drift_stamp_notes(committed: dict[str, str], rendered: dict[str, str], output: str) -> list[str]:
    """``render --check`` on drift: a note per committed ``spec.json`` (in ``output``) another specgen (or none) wrote.

    ``committed`` and ``rendered`` map the trees' relative paths to their text; each ``spec.json`` (``spec.json`` or
    ``<workload>/spec.json``) the render writes too is read. One that is not a JSON object adds no note (the patch
    shows it). The tree's other files were written by that specgen as well, so the note is said of the whole tree.
    """
    notes = []
    for rel in sorted(set(committed) & set(rendered)):
        if rel.rsplit("/", 1)[-1] != "spec.json":
            continue
        try:
            data = json.loads(committed[rel])
        except (ValueError, RecursionError):
            continue
        path = os.path.join(output, rel)
        if isinstance(data, dict) and (note := stamp_note(data, path, DRIFT_CAUSE)) is not None:
            notes.append(note)
    return notes
