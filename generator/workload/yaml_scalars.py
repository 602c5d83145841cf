"""Typing of plain YAML scalars on the fast reading paths: the forms read as ruamel reads them, the rest declined."""

from __future__ import annotations

import math
import re
from typing import Any

#: Plain scalars read here (anything else goes to ruamel): YAML 1.2 core-schema forms without ambiguity.
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")  # a leading zero reads differently in YAML 1.1: left to ruamel
_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]+")
_NONZERO = re.compile(r"[1-9]")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULL = frozenset({"null", "Null", "NULL", "~"})
_STRING_START = re.compile(r"[A-Za-z_/]")
#: Numbers joined by two or more dots (an IPv4 address, a netmask, a version): a string in YAML 1.1 and 1.2 alike.
_DOTTED = re.compile(r"[0-9]+(?:\.[0-9]+){2,}")

Path = tuple[str | int, ...]
Positions = dict[Path, tuple[int, int]]

#: Most levels of mappings and lists a workload may nest (the top-level mapping is the first). Far above any
#: workload's, and far below the depth at which ruamel's composer (about 4 Python frames a level) runs out of stack.
MAX_NESTING = 100


def nesting_allowed(path: Path) -> None:
    """Raises :class:`Declined` for a mapping or list at ``path`` past :data:`MAX_NESTING` (ruamel's path refuses it)."""
    if len(path) >= MAX_NESTING:
        raise Declined


class Declined(Exception):  # noqa: N818 (control flow inside the readers, never raised out of them)
    """The document is not one this fast path reads exactly like ruamel."""


def plain_scalar(value: str) -> Any:
    """A one-line, non-empty plain scalar as ruamel types it; raises :class:`Declined` for forms left to ruamel."""
    if value in _BOOL:
        return _BOOL[value]
    if value in _NULL:
        return None
    if _INT.fullmatch(value):
        try:
            return int(value)
        except ValueError:  # more digits than Python converts: ruamel's reading refuses it with the place
            raise Declined from None
    if _FLOAT.fullmatch(value):
        number = float(value)
        if not math.isfinite(number) or (number == 0 and _NONZERO.search(value)):  # out of range: ruamel refuses it
            raise Declined
        return number
    if _DOTTED.fullmatch(value):
        return value
    if _STRING_START.match(value) and value.lower() not in ("true", "false", "null"):
        return value
    raise Declined
