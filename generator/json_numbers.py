"""The first number of a JSON text that Python reads as no finite number, placed at its field, line and column.

``json.loads`` reads ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON), reads a literal past a float's range
(``1e400``) as infinity without a word, and raises a ``ValueError`` naming no place for an integer of more digits than
Python converts (``sys.get_int_max_str_digits``). A model's ``config.json`` is sized from its numbers, so each such
number is refused where it stands (hostile85 item 1: ``'Infinity is not a finite number'`` named no field, and
``"rope_theta": 1e400`` was read as infinity). Runs only on a text already refused, never on a good file.
"""

from __future__ import annotations

import json
import math
import sys

from generator.json_positions import joined_field, locate


def finite_float(literal: str) -> float:
    """``json.loads``' ``parse_float``: the float ``literal`` is, refusing one past a float's range.

    One hook for every JSON specgen reads (a model's ``config.json``, a ``spec.json``: fix160 item 3, where
    ``fleet_diff`` had its own with other words); the refusal is placed by :func:`unreadable_number`.
    """
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(_too_large(literal))
    return value


def finite_int(digits: str) -> int:
    """``json.loads``' ``parse_int`` for a model's config.json: the integer ``digits`` is, refusing one past a float's range.

    hostile92: ``"vocab_size": 1e400`` written in digits (401 of them) was read, then stopped a float conversion with
    ``OverflowError: int too large to convert to float`` naming no field; the refusal is placed by
    :func:`unreadable_number`.
    """
    value = int(digits)
    if _past_float(value):
        raise ValueError(_too_long(digits))
    return value


def _past_float(value: int) -> bool:
    return value.bit_length() >= _FLOAT_BITS and abs(value) > sys.float_info.max


#: Bits of the largest float's integer part: an integer of fewer is within a float's range.
_FLOAT_BITS = sys.float_info.max_exp


def _too_long(digits: str) -> str:
    return f"a number of {len(digits.lstrip('-')):,} digits is past a float's range (at most about 1.8e308)"


def refuse_constant(name: str) -> object:
    """``json.loads``' ``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are refused (JSON has none)."""
    raise ValueError(_not_finite(name))


def _too_large(literal: str) -> str:
    return f"{literal[:40]} is too large for a number (it reads as infinity)"


def _not_finite(name: str) -> str:
    return f"{name} is not a finite number (JSON has no NaN or Infinity)"


class _Unread:
    """A number read as none: what to say of it."""

    def __init__(self, said: str) -> None:
        self.said = said


class _Members:
    """An object's members in the text's order, a key given twice kept twice (the first may hold the number)."""

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        self.pairs = pairs


def unreadable_number(text: str) -> tuple[str, str, int, int] | None:
    """(field, what is wrong, line, column) of the first number in ``text`` read as no finite one; None where none is.

    ``field`` is written as the spec.json checks write theirs (``rope_scaling.factor``, ``layer_types[3]``); a text
    that is not JSON for another reason gives None.
    """
    limit = sys.get_int_max_str_digits()

    def constant(name: str) -> _Unread:
        return _Unread(_not_finite(name))

    def integer(digits: str) -> int | _Unread:
        if len(digits.lstrip("-")) <= limit:
            value = int(digits)
            return _Unread(_too_long(digits)) if _past_float(value) else value
        return _Unread(f"a number of {len(digits.lstrip('-')):,} digits is longer than the {limit:,} digits a number may have")

    def real(literal: str) -> float | _Unread:
        value = float(literal)
        return value if math.isfinite(value) else _Unread(_too_large(literal))

    try:
        document = json.loads(text, parse_constant=constant, parse_int=integer, parse_float=real, object_pairs_hook=_Members)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[str, object]] = [("", document)]
    while stack:  # depth first, in the text's order: the first such number is the one an error names
        field, value = stack.pop()
        if isinstance(value, _Unread):
            line, column = locate(text, field)
            return field, value.said, line, column
        if isinstance(value, _Members):
            stack += reversed([(joined_field(field, key), item) for key, item in value.pairs])
        elif isinstance(value, list):
            stack += reversed([(joined_field(field, index), item) for index, item in enumerate(value)])
    return None
