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
