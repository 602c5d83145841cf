"""The figures a ``spec.json`` may hold, as the diff checks them (:mod:`generator.fleet_diff`, :mod:`generator.circuit_diff`)."""

from __future__ import annotations

from typing import Any

from generator.errors import SpecShapeError
from generator.input_files import short

#: More than any fleet's nodes, GPUs, watts or dollars: a larger figure is not a plan's (a spec.json may come from anyone).
MAX_FIGURE = 10**12


def check_figure(path: str, where: str, value: Any) -> None:
    """Raise SpecShapeError unless ``value`` is a number a plan can hold: finite, not negative, at most :data:`MAX_FIGURE`.

    ``path``: the file; ``where``: the field (``plan.totals.gpus``).
    """
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not 0 <= value <= MAX_FIGURE:
        raise SpecShapeError(path, where, f"must be a number from 0 to 10^12, got {short(value)}")


def check_count(path: str, where: str, value: Any) -> None:
    """:func:`check_figure`, for a count a plan writes as a whole number (GPUs, nodes, replicas).

    hostile86: a deployment's ``gpus`` of 0.5 or -0.0 was said as a change, "GPUs 8 -> 0.50" or "8 -> -0.00", exit 0.
    """
    check_figure(path, where, value)
    if not isinstance(value, int):
        raise SpecShapeError(path, where, f"must be a whole number from 0 to 10^12, got {short(value)}")
