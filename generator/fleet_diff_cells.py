"""The diff's figures read from a spec.json and written as Markdown cells (shared by every fleet_diff module)."""

from __future__ import annotations

from typing import Any

from generator.render.md_escape import md_text
from generator.spec_figures import MAX_FIGURE
from generator.units import money_text, shows_zero


def _plan_figure(value: Any) -> float | None:
    """``value`` where it is a figure a plan holds (a number from 0 to :data:`~generator.spec_figures.MAX_FIGURE`), else None."""
    number = _number(value)
    return number if number is not None and 0 <= number <= MAX_FIGURE else None


def _number(value: Any) -> float | None:
    """``value`` where it is a number (not a bool); None for anything else a spec.json may hold there."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def two_places(value: Any) -> Any:
    """A float figure to two decimal places (cents, tenths of a kW), as the Markdown prints it; else unchanged.

    Differences of floats carry binary noise (``20565.660000000003``); rounding keeps the JSON exact to the byte.
    """
    if isinstance(value, float):
        return round(value, 2) + 0.0  # + 0.0: never a "-0.0"
    return value


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def fmt_cell(value: Any) -> str:
    """A cell value as inert Markdown text (a spec.json given to ``diff`` may hold anything)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return money_text(value)
    return f"{value:,}" if isinstance(value, int) else md_text(str(value))


def signed_cell(value: Any) -> str:
    """A change as a cell: ``+`` before a rise, ``-`` when there is none to show."""
    if value is None:
        return "-"
    text = fmt_cell(value)
    return text if text.startswith("-") or shows_zero(text) else f"+{text}"  # 0.00: no sign (-0.004 moved none)
