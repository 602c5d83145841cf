"""Where each value of a JSON text begins, by its field path, so that a shape error names its line and column.

A workload YAML's values carry their marks from the parser (:mod:`generator.workload.loader`); Python's ``json`` keeps
none. :func:`locate` reads a text ``json.loads`` has already accepted once more, down the path of one value, written
as the ``spec.json`` checks name fields (``plan.pools[0].node.gpus``; the whole document is ``""``), to the line and
column its first character has. It runs only where an error is reported, never on a good file.
:func:`value_offsets` maps every value's path so (the tests' oracle of the walk).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

#: Whitespace between JSON tokens.
_SPACE = re.compile(r"[ \t\n\r]*")
#: Reads one value from an offset at C speed: a key, or a value skipped whole.
_DECODER = json.JSONDecoder()

Step = str | int


def _members(text: str, at: int) -> Iterator[tuple[Step, int]]:
    """Each member of the object or array at ``at``: its key (an object's, decoded) or index, and its value's offset.

    A member's value is skipped (decoded whole, by the C decoder) only when the caller asks for the next member.
    """
    close = "}" if text[at] == "{" else "]"
    at = _skip(text, at + 1)
    index = 0
    while text[at : at + 1] != close:
        if close == "}":
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            yield str(key), at
        else:
            yield index, at
            index += 1
        at = _skip(text, _DECODER.raw_decode(text, at)[1])
        if text[at : at + 1] == ",":
            at = _skip(text, at + 1)


def joined_field(path: str, step: Step) -> str:
    """``path`` and one step more, as the spec.json checks write fields: ``plan.pools[0].name``."""
    if isinstance(step, int):
        return f"{path}[{step}]"
    return f"{path}.{step}" if path else step


def value_offsets(text: str) -> dict[str, int]:
    """Each value's path in ``text`` (valid JSON) -> the offset of its first character (the whole document: ``""``)."""
    offsets: dict[str, int] = {}
    stack = [("", _skip(text, 0))]
    while stack:
        path, at = stack.pop()
        offsets[path] = at
        if text[at : at + 1] in ("{", "["):
            stack += [(joined_field(path, step), child) for step, child in _members(text, at)]
    return dict(sorted(offsets.items(), key=lambda item: item[1]))


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - text.rfind("\n", 0, offset)


def locate(text: str, field: str) -> tuple[int, int]:
    """Line and column of ``field``'s value in ``text`` (valid JSON), or of the nearest enclosing value it has.

    A key an object lacks is placed at that object. The text is walked down ``field`` alone, every other member
    skipped by the C decoder: a 64 MB spec.json is placed in about the time ``json.loads`` reads it.
    """
    return line_column(text, _walk(text, field)[1])


def field_offset(text: str, field: str) -> int | None:
    """The offset of ``field``'s value in ``text`` (valid JSON), None where the text holds no such value.

    Walked down ``field`` alone, as :func:`locate` is (hostile93: a config.json's refused ``layer_types`` of 200,000
    entries was placed through :func:`value_offsets`' map of every value, 3.6 s and 94 MB).
    """
    path, at = _walk(text, field)
    return at if path == field else None


def _walk(text: str, field: str) -> tuple[str, int]:
    """The deepest value on the way to ``field`` in ``text``: its path (``field`` or the start of it) and offset."""
    path, at = "", _skip(text, 0)
    while path != field and text[at : at + 1] in ("{", "["):
        found = None
        for step, child in _members(text, at):
            joined = joined_field(path, step)
            if joined == field or (field.startswith(joined) and field[len(joined)] in ".["):
                found = joined, child
                break
        if found is None:
            break
        path, at = found
    return path, at


#: A JSON escape of a surrogate: where the text has none, no string it holds has one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def unpaired_surrogate(text: str, document: object) -> str | None:
    r"""The field of the first key or text of ``document`` (read from ``text``) holding an unpaired surrogate, else None.

    A lone ``\ud800`` escape is valid JSON, and Python reads it as a string no UTF-8 text can hold: echoed, it stopped
    the command with a UnicodeEncodeError traceback as it was printed or written (hostile84: a spec.json in the diff;
    hostile92: a config.json's ``model_type`` in the estimate, the plan and a render). A key holding one names its
    object. A stack, not recursion: the document may be nested as deep as ``json`` reads.
    """
    if not _SURROGATE_ESCAPE.search(text):
        return None
    stack: list[tuple[str, object]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str) and _SURROGATE.search(value):
            return path
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in reversed(list(items)):
            if isinstance(key, str) and _SURROGATE.search(key):
                return path
            stack.append((joined_field(path, key), item))
    return None


def _skip(text: str, at: int) -> int:
    """The offset past the whitespace at ``at``."""
    found = _SPACE.match(text, at)
    return found.end() if found else at
