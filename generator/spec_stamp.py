"""The stamp ``spec.json`` carries of the specgen that wrote it, and what ``diff`` says of another one.

hostile85: a ``spec.json`` stamped ``specgen 99.0.0``, ``5`` or nothing was compared without a word, and the fields
this version does not know were skipped. The stamp is the format's version: specgen writes the fields of its own.
"""

from __future__ import annotations

from typing import Any

from generator import __version__
from generator.errors import one_line
from generator.input_files import short

#: The ``generator`` value this specgen writes in ``spec.json``.
SPEC_STAMP = f"specgen {__version__}"


def stamp_note(data: dict[str, Any], path: str) -> str | None:
    """One line saying ``path``'s ``spec.json`` (its document ``data``) was written by another specgen; None if by this.

    A missing stamp, one not a text and another version are named beside this one's; the diff goes on with the fields
    this version writes (a shape it cannot read is refused before this).
    """
    stamp = data.get("generator")
    if stamp == SPEC_STAMP:
        return None
    if "generator" not in data:
        written = f"has no 'generator' stamp (this specgen writes {SPEC_STAMP!r})"
    elif isinstance(stamp, str):
        written = f"was written by {short(stamp, 60)}, not this {SPEC_STAMP}"
    else:
        written = f"has 'generator' {short(stamp, 60)}, not a specgen version (this specgen writes {SPEC_STAMP!r})"
    return one_line(f"specgen: note: {path} {written}: the diff compares the fields this version writes and skips any other")
