"""The fastest path for reading a workload: plain block YAML read line by line, without a YAML library.

Importing PyYAML (for libyaml, see :mod:`generator.workload.fast_yaml`) costs about 10 ms of every cold
start. Most workload files use a small part of YAML: block mappings with simple keys, block sequences, one-line
flow sequences and mappings of scalars, one-line scalars and comments. This module reads exactly those, in
ASCII, and builds the same data and positions (1-based line and column of every value and key) as the
other paths; anything else returns None and the caller goes on to libyaml, then ruamel, which keep every
error and refusal. The tests hold this path to ruamel's results on the shipped files and generated ones.
"""

from __future__ import annotations

import re
from typing import Any

from generator.workload.yaml_scalars import Declined, Path, Positions, nesting_allowed, plain_scalar

#: A key read here: a plain word that is a string (typed as the other paths type it).
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
#: Characters of a plain scalar read here; anything else (indicators, quotes, ``#``) goes to libyaml.
_PLAIN = re.compile(r"[A-Za-z0-9_./+~=()-][A-Za-z0-9_./+~=() :,-]*")
#: A plain scalar inside a flow collection: no blanks, commas or colons.
_FLOW_PLAIN = re.compile(r"[A-Za-z0-9_./+~=()-]+")
#: A single-quoted scalar on one line (a doubled quote is one quote).
_SINGLE = re.compile(r"'((?:[^']|'')*)'")
#: A double-quoted scalar on one line without escapes.
_DOUBLE = re.compile(r'"([^"\\]*)"')
#: Characters outside printable ASCII and line feeds (control characters): left to the other paths.
_CONTROL = re.compile(r"[^\n\x20-\x7e]")
#: What may follow a value on its line: blanks, then a comment after at least one blank.
_REST = re.compile(r"(?: +#.*| *)$")


class _Line:
    """One line with content: its 1-based number, the column of its first character (0-based) and its text."""

    __slots__ = ("indent", "number", "text")

    def __init__(self, number: int, indent: int, text: str) -> None:
        self.number = number
        self.indent = indent
        self.text = text


def read_simple_document(text: str, max_nodes: int) -> tuple[dict[str, Any], Positions, Positions] | None:
    """(data, value positions, key positions) of a plain block document, 1-based; None when another path must read it."""
    if not text.isascii() or _CONTROL.search(text):
        return None
    lines = []
    for number, raw in enumerate(text.split("\n"), 1):
        stripped = raw.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if raw.startswith(("---", "...", "%")):
            return None
        lines.append(_Line(number, len(raw) - len(stripped), raw))
    if not lines or lines[0].indent != 0:
        return None
    reader = _Reader(lines, max_nodes)
    try:
        data = reader.mapping(0, ())
        if reader.at < len(lines):
            raise Declined
    except (Declined, RecursionError):
        return None
    return data, reader.positions, reader.keys


class _Reader:
    def __init__(self, lines: list[_Line], max_nodes: int) -> None:
        self.lines = lines
        self.at = 0
        self.left = max_nodes - 1  # the root counts, as on the libyaml path
        self.positions: Positions = {(): (1, 1)}
        self.keys: Positions = {}

    def _count(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise Declined

    def _next_indent(self) -> int:
        return self.lines[self.at].indent if self.at < len(self.lines) else -1

    def mapping(self, indent: int, path: Path) -> dict[str, Any]:
        """A block mapping whose keys sit at column ``indent`` (the first one may follow a sequence's dash)."""
        nesting_allowed(path)
        out: dict[str, Any] = {}
        while True:
            line = self.lines[self.at]
            self._entry(line, indent, path, out)
            next_indent = self._next_indent()
            if next_indent < indent:
                return out
            if next_indent > indent or self.lines[self.at].text[indent] == "-":
                raise Declined  # a continuation line, or a sequence where a key belongs

    def _entry(self, line: _Line, indent: int, path: Path, out: dict[str, Any]) -> None:
        """One ``key: value`` (or ``key:`` and a nested block) whose key starts at column ``indent`` of ``line``."""
        text = line.text
        key, key_end = _new_key(text, indent, ":", out)
        child = (*path, key)
        self.keys[child] = (line.number, indent + 1)
        after = key_end + 1
        self.at += 1
        self._count()
        if _REST.match(text, after):  # nothing after the colon: a nested block
            nested = self._next_indent()
            if nested <= indent:
                raise Declined  # an empty value, or a sequence at the key's own indent
            first = self.lines[self.at]
            self.positions[child] = (first.number, nested + 1)
            out[key] = self._block(nested, child)
            return
        if text[after] != " ":
            raise Declined
        start = len(text) - len(text[after:].lstrip(" "))
        self.positions[child] = (line.number, start + 1)
        out[key] = self._inline(text, start, line.number, child)

    def _block(self, indent: int, path: Path) -> Any:
        line = self.lines[self.at]
        if line.text.startswith("- ", indent) or line.text[indent:] == "-":
            return self._sequence(indent, path)
        return self.mapping(indent, path)

    def _sequence(self, indent: int, path: Path) -> list[Any]:
        """A block sequence whose dashes sit at ``indent``."""
        nesting_allowed(path)
        items: list[Any] = []
        while True:
            line = self.lines[self.at]
            text = line.text
            if not text.startswith("- ", indent):
                raise Declined
            start = len(text) - len(text[indent + 1 :].lstrip(" "))
            if start >= len(text) or text[start] == "#" or text.startswith("- ", start):
                raise Declined  # an empty item, or a sequence in a sequence
            child = (*path, len(items))
            self.positions[child] = (line.number, start + 1)
            self._count()
            key_match = _KEY.match(text, start)
            if key_match and text.startswith(":", key_match.end()):
                items.append(self.mapping(start, child))  # "- key: value" (or a nested block), more keys below
            else:
                items.append(self._inline(text, start, line.number, child))
                self.at += 1
            next_indent = self._next_indent()
            if next_indent < indent:
                return items
            if next_indent > indent:
                raise Declined

    def _inline(self, text: str, start: int, number: int, path: Path) -> Any:
        """The value that starts at ``start`` of ``text`` and ends the line (before a comment)."""
        opener = text[start]
        if opener in "[{":
            value, end = self._flow(text, start, number, path)
        else:
            value, end = _scalar_at(text, start, _PLAIN, block=True)
        if _REST.match(text, end) is None:
            raise Declined
        return value

    def _flow(self, text: str, start: int, number: int, path: Path) -> tuple[Any, int]:
        """A one-line flow sequence or mapping of scalars; (value, index after its closing bracket)."""
        nesting_allowed(path)
        closer = "]" if text[start] == "[" else "}"
        items: list[Any] = []
        mapping: dict[str, Any] = {}
        at = _skip_blanks(text, start + 1)
        if text.startswith(closer, at):
            return ([] if closer == "]" else {}), at + 1
        while True:
            if closer == "]":
                child = (*path, len(items))
                self.positions[child] = (number, at + 1)
                value, at = _scalar_at(text, at, _FLOW_PLAIN, block=False)
                items.append(value)
            else:
                key, key_end = _new_key(text, at, ": ", mapping)
                child = (*path, key)
                self.keys[child] = (number, at + 1)
                at = _skip_blanks(text, key_end + 1)
                self.positions[child] = (number, at + 1)
                mapping[key], at = _scalar_at(text, at, _FLOW_PLAIN, block=False)
            self._count()
            at = _skip_blanks(text, at)
            if text.startswith(closer, at):
                return (items if closer == "]" else mapping), at + 1
            if not text.startswith(", ", at):
                raise Declined
            at = _skip_blanks(text, at + 1)
            if text.startswith(closer, at):
                raise Declined  # a trailing comma


def _skip_blanks(text: str, at: int) -> int:
    while text.startswith(" ", at):
        at += 1
    return at


def _scalar_at(text: str, start: int, plain: re.Pattern[str], block: bool) -> tuple[Any, int]:
    """The scalar at ``start`` (quoted, or plain as ``plain`` allows) and the index after it."""
    opener = text[start : start + 1]
    if opener == "'":
        quoted = _SINGLE.match(text, start)
        if quoted is None:
            raise Declined
        return quoted.group(1).replace("''", "'"), quoted.end()
    if opener == '"':
        quoted = _DOUBLE.match(text, start)
        if quoted is None:
            raise Declined
        return quoted.group(1), quoted.end()
    found = plain.match(text, start)
    if found is None:
        raise Declined
    word = found.group()
    if block:
        # a comment ends a plain scalar at " #", which the pattern leaves out; blanks before it are not part of it
        word = word.rstrip(" ")
        if ": " in word or word.endswith(":"):
            raise Declined  # a mapping inside a plain scalar: left to libyaml (it refuses it)
    return plain_scalar(word), start + len(word)


def _new_key(text: str, at: int, colon: str, mapping: dict[str, Any]) -> tuple[str, int]:
    """The plain string key at ``at`` followed by ``colon``, not yet in ``mapping``, and where it ends; else Declined."""
    key_match = _KEY.match(text, at)
    if key_match is None or not text.startswith(colon, key_match.end()):
        raise Declined
    key = plain_scalar(key_match.group())
    if not isinstance(key, str) or key in mapping:
        raise Declined
    return key, key_match.end()
