"""Where each value of a JSON text begins, by its field path, so that a shape error names its line and column.

A workload YAML's values carry their marks from the parser (:mod:`generator.workload.loader`); Python's ``json`` keeps
none. :func:`value_offsets` reads a text ``json.loads`` has already accepted once more, and maps each value's path,
written as the ``spec.json`` checks name fields (``plan.pools[0].node.gpus``; the whole document is ``""``), to the
offset its first character has. It runs only where an error is reported, never on a good file.
"""

from __future__ import annotations

import json
import re

#: Whitespace between JSON tokens, a string (its escapes read whole), and any other scalar (number, true, false, null).
_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")
#: The last step of a field path: ``.key`` or ``[index]``.
_LAST_STEP = re.compile(r"(?:\.[^.\[\]]*|\[\d+\])$")


def value_offsets(text: str) -> dict[str, int]:
    """Each value's path in ``text`` (valid JSON) -> the offset of its first character.

    One pass with a stack of the open objects and arrays (no recursion: ``json.loads`` took the text, however deep).
    A key is read as JSON reads it (escapes decoded); a repeated key (refused before this runs) keeps its last place.
    """
    offsets: dict[str, int] = {}
    stack: list[list[str | int]] = []  # per open container: its path, and its next index (-1: an object)
    at = _skip(text, 0)
    path = ""
    while True:
        offsets[path] = at
        char = text[at : at + 1]
        closed = False
        if char and char in "{[":
            at = _skip(text, at + 1)
            if text[at : at + 1] in ("}", "]"):
                at += 1
                closed = True
            elif char == "{":
                stack.append([path, -1])
                path, at = _key(text, at, path)
            else:
                stack.append([path, 0])
                path = f"{path}[0]"
        else:
            found = (_STRING if char == '"' else _SCALAR).match(text, at)
            at = found.end() if found else len(text)
            closed = True
        while closed:
            if not stack:
                return offsets
            at = _skip(text, at)
            parent, index = stack[-1]
            if text[at : at + 1] != ",":  # the container ends here
                stack.pop()
                at += 1
                continue
            at = _skip(text, at + 1)
            if index == -1:
                path, at = _key(text, at, str(parent))
            else:
                stack[-1][1] = int(index) + 1
                path = f"{parent}[{int(index) + 1}]"
            closed = False


def _key(text: str, at: int, parent: str) -> tuple[str, int]:
    """The path of the value whose key begins at ``at``, and the offset of that value (past the colon and spaces)."""
    found = _STRING.match(text, at)
    end = found.end() if found else len(text)
    name = str(json.loads(text[at:end])) if found else ""
    at = _skip(text, _skip(text, end) + 1)  # past the colon
    return (f"{parent}.{name}" if parent else name), at


def _skip(text: str, at: int) -> int:
    """The offset past the whitespace at ``at``."""
    found = _SPACE.match(text, at)
    return found.end() if found else at


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - text.rfind("\n", 0, offset)


def locate(text: str, field: str) -> tuple[int, int] | None:
    """Line and column of ``field``'s value in ``text`` (valid JSON), or of the nearest enclosing value it has.

    A key an object lacks is placed at that object; None where not even the document is found.
    """
    offsets = value_offsets(text)
    while True:
        if field in offsets:
            return line_column(text, offsets[field])
        if not field:
            return None
        field = _LAST_STEP.sub("", field) if _LAST_STEP.search(field) else ""
