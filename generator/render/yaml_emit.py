"""A block-YAML emitter for the plain data the renderers write, byte for byte what ruamel.yaml writes for it.

ruamel's pure-Python emitter takes most of a large ``render`` (every value passes representer,
serializer, resolver and emitter). The data rendered here is narrow: mappings with string keys,
lists, strings (plain, quoted, ``!unsafe`` or literal blocks), integers, floats, booleans and null.
:func:`emit` writes exactly those with ruamel's layout (mapping indent 2, sequence indent 4 with
offset 2, width 72 with its folding rules) and raises :class:`NotEmittedError` for anything else (other
types, control or non-printable characters, line breaks outside literal blocks, long keys), so the
caller falls back to ruamel for that document. The tests hold the two to the same bytes.

Implicit typing (whether a plain scalar would read back as a string) is decided as ruamel's resolvers
decide it, by :mod:`generator.render.yaml_implicit` (ruamel itself is not imported); strings Go's YAML
readers would take for numbers are quoted too, by both emitters.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from generator.render.yaml_implicit import STR_TAG, implicit_tags, needs_quotes

#: Folding width, as ``to_yaml`` sets it on ruamel.
WIDTH = 72
#: Longest key written as a simple key here (ruamel's limit is 128; long keys are left to it).
MAX_KEY_CHARS = 60


class NotEmittedError(Exception):
    """A value this emitter does not write exactly like ruamel; the caller uses ruamel for the document."""


class Unsafe(str):
    """A string Ansible must take as data, never as a template: the YAML emitter writes it as ``!unsafe``."""

    __slots__ = ()


class Block(str):
    """A multi-line string the YAML emitter writes as a literal block (``|``): embedded files stay readable and short-lined.

    Its lines must not end in blanks (``to_yaml`` strips blanks before line breaks).
    """

    __slots__ = ()


def _printable(text: str) -> bool:
    """Printable ASCII, or the Unicode ranges ruamel writes unescaped (no line breaks, no BOM)."""
    for ch in text:
        if "\x20" <= ch <= "\x7e":
            continue
        if ("\xa0" <= ch <= "\ud7ff" or "\ue000" <= ch <= "\ufffd") and ch not in "\u2028\u2029\ufeff":
            continue
        raise NotEmittedError(f"character {ch!r}")
    return True


@functools.lru_cache(maxsize=65_536)
def _plain_allowed(text: str) -> bool:
    """Whether ruamel's scalar analysis allows ``text`` as a block plain scalar (printable, no line breaks)."""
    if not text or text[0] == " " or text[-1] == " ":
        return False
    if text.startswith(("---", "...")):
        return False
    if text[0] in "#,[]{}&*!|>'\"%@`":
        return False
    follows_blank = len(text) == 1 or text[1] == " "
    if text[0] in "?:-" and follows_blank:
        return False
    for i in range(1, len(text)):
        ch = text[i]
        if ch == ":" and (i + 1 >= len(text) or text[i + 1] == " "):
            return False
        if ch == "#" and text[i - 1] == " ":
            return False
    return True


def _float_text(value: float) -> str:
    if value != value:  # noqa: PLR0124 (NaN)
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(value).lower()


class _Writer:
    """Writes one document; ``col`` is the column after the last character written."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.col = 0
        self.line_start = True

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.col += len(text)
        self.line_start = False

    def indent(self, column: int) -> None:
        """As ruamel's ``write_indent``: a line break (unless one was just written), then blanks up to ``column``."""
        if not self.line_start:
            self.parts.append("\n")
        self.parts.append(" " * column)
        self.col = column
        self.line_start = column == 0

    # scalars ----------------------------------------------------------------------------------

    def plain(self, text: str, indent: int, split: bool) -> None:
        """As ruamel's ``write_plain`` for a scalar without line breaks, after an indicator."""
        self.write(" ")
        spaces = False
        start = end = 0
        n = len(text)
        while end <= n:
            ch = text[end] if end < n else None
            if spaces:
                if ch != " ":
                    if start + 1 == end and self.col >= WIDTH and split:
                        self.indent(indent)
                    else:
                        self.write(text[start:end])
                    start = end
            elif ch is None or ch == " ":
                data = text[start:end]
                if len(data) + self.col > WIDTH and self.col > indent:
                    self.indent(indent)  # words longer than the line get a line of their own
                self.write(data)
                start = end
            if ch is not None:
                spaces = ch == " "
            end += 1

    def single_quoted(self, text: str, indent: int, split: bool) -> None:
        """As ruamel's ``write_single_quoted`` for a scalar without line breaks, after an indicator."""
        self.write(" '")
        spaces = False
        start = end = 0
        n = len(text)
        while end <= n:
            ch = text[end] if end < n else None
            if spaces:
                if ch is None or ch != " ":
                    if start + 1 == end and self.col > WIDTH and split and start != 0 and end != n:
                        self.indent(indent)
                    else:
                        self.write(text[start:end])
                    start = end
            elif (ch is None or ch in " '") and start < end:
                self.write(text[start:end])
                start = end
            if ch == "'":
                self.write("''")
                start = end + 1
            if ch is not None:
                spaces = ch == " "
            end += 1
        self.write("'")

    def literal(self, text: str, indent: int) -> None:
        """As ruamel's ``write_literal`` for text that starts with a visible character and ends in at most one break."""
        if not text or text[0] in " \n" or text.endswith("\n\n") or text == "\n":
            raise NotEmittedError("literal block needing an indentation or keep indicator")
        for line in text.split("\n"):
            _printable(line)
        self.write(" |" if text.endswith("\n") else " |-")
        body = text[:-1] if text.endswith("\n") else text
        for line in body.split("\n"):
            if line:
                self.parts.append("\n")
                self.parts.append(" " * indent + line)
            else:
                self.parts.append("\n")
        if text.endswith("\n"):
            self.parts.append("\n")
            self.col = 0
            self.line_start = True
        else:
            self.col = indent + len(body.rsplit("\n", 1)[-1])
            self.line_start = False

    def scalar(self, value: Any, indent: int) -> None:
        """A scalar value after ``key:`` or ``-``; continuation lines at ``indent``."""
        kind = type(value)
        if value is None:
            self.plain("null", indent, True)
        elif kind is bool:
            self.plain("true" if value else "false", indent, True)
        elif kind is int:
            self.plain(str(value), indent, True)
        elif kind is float:
            text = _float_text(value)
            if implicit_tags(text)[1] != "tag:yaml.org,2002:float":
                raise NotEmittedError(f"float {value!r}")
            self.plain(text, indent, True)
        elif kind is Block:
            self.literal(str(value), indent)
        elif kind is Unsafe:
            text = str(value)
            _printable(text)
            if implicit_tags(text)[0] != STR_TAG:  # read as a bool or number by YAML 1.1: only quoted
                self.string(text, indent, quoted=True)
            else:
                self.write(" !unsafe")
                self.single_quoted(text, indent, True)
        elif kind is str:
            _printable(value)
            self.string(value, indent, quoted=needs_quotes(value))
        else:
            raise NotEmittedError(f"type {kind.__name__}")

    def string(self, text: str, indent: int, quoted: bool, split: bool = True) -> None:
        """A string, plain where ruamel would write it plain, else single-quoted."""
        if not quoted and implicit_tags(text)[1] == STR_TAG and _plain_allowed(text):
            self.plain(text, indent, split)
        elif "'" in text and not quoted:
            raise NotEmittedError("ruamel double-quotes this string")
        else:
            self.single_quoted(text, indent, split)

    def key(self, key: Any, column: int, after_dash: bool) -> None:
        """A simple mapping key at ``column`` (on a fresh line, or right after a sequence dash)."""
        if type(key) is not str or not key or len(key) > MAX_KEY_CHARS or column + len(key) > WIDTH - 4:
            raise NotEmittedError("key")
        _printable(key)
        if not after_dash:
            self.indent(column)
            quoted = needs_quotes(key)
            if not quoted and implicit_tags(key)[1] == STR_TAG and _plain_allowed(key):
                self.write(key)
            elif "'" in key and not quoted:
                raise NotEmittedError("ruamel double-quotes this key")
            else:
                self.write("'" + key.replace("'", "''") + "'")
        else:
            self.string(key, column + 2, quoted=needs_quotes(key), split=False)
        self.write(":")

    # collections ------------------------------------------------------------------------------

    def mapping(self, value: dict[Any, Any], column: int, after_dash: bool) -> None:
        """A non-empty mapping whose keys sit at ``column``; the first one right after a dash when ``after_dash``."""
        for i, key in enumerate(sorted(value)):
            self.key(key, column, after_dash and i == 0)
            self.node(value[key], column, column + 2)

    def sequence(self, value: list[Any], parent: int, after_dash: bool) -> None:
        """A non-empty sequence under a node at ``parent``: dashes at ``parent + 2``, items at ``parent + 4``."""
        for i, item in enumerate(value):
            if i == 0 and after_dash:
                self.write(" " * (parent + 2 - self.col) + "-")
            else:
                self.indent(parent + 2)
                self.write("-")
            self.node(item, parent + 4, parent + 4, in_sequence=True)

    def node(self, value: Any, column: int, indent: int, in_sequence: bool = False) -> None:
        """The value after ``key:`` (``column`` is the key's) or after ``-`` (``column`` is the item's)."""
        if isinstance(value, dict) and type(value) is dict:
            if not value:
                self.write(" {}")
            elif in_sequence:
                self.mapping(value, column, after_dash=True)
            else:
                self.mapping(value, column + 2, after_dash=False)
        elif type(value) is list:
            if not value:
                self.write(" []")
            elif in_sequence:
                self.sequence(value, column, after_dash=True)
            else:
                self.sequence(value, column, after_dash=False)
        else:
            self.scalar(value, indent)


def emit(value: Any) -> str:
    """Block YAML of a non-empty mapping or list, exactly as ruamel writes it (see the module docstring)."""
    writer = _Writer()
    if type(value) is dict and value:
        writer.mapping(value, 0, after_dash=False)
    elif type(value) is list and value:
        for item in value:
            writer.indent(2)
            writer.write("-")
            writer.node(item, 4, 4, in_sequence=True)
    else:
        raise NotEmittedError("document root")
    if not writer.line_start:
        writer.parts.append("\n")
    return "".join(writer.parts)
