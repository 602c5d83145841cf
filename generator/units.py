"""Unit constants. Bytes are integers everywhere; these name the powers used to convert and print them."""

from __future__ import annotations

MIB = 2**20
GIB = 2**30
GB = 10**9
TB = 10**12

#: Below this many seconds a duration is printed in milliseconds ("TTFT 46 ms", never "0.0 s").
MS_BELOW_S = 0.05

#: Hours in a (non-leap) year: a training run longer than that is said.
HOURS_PER_YEAR = 8760


def seconds_text(seconds: float) -> str:
    """A duration as printed everywhere: whole ms below 0.05 s, else seconds to 0.01 s (8.5 s, not 8 s).

    JSON figures are rounded to at least these places (``round(x, 3)`` TTFT, ``round(x, 2)`` cold start),
    so text and JSON agree.
    """
    if seconds < MS_BELOW_S:
        return f"{seconds * 1000:.0f} ms"
    return f"{round(seconds, 2):g} s"


def hours_text(hours: float, places: int = 2) -> str:
    """Hours to ``places`` decimals; a run shorter than 0.1 h in minutes (or :func:`seconds_text`), never "0.0 h"."""
    if hours >= 0.1:
        return f"{hours:,.{places}f} h"
    minutes = hours * 60
    return f"{minutes:.1f} min" if minutes >= 1 else seconds_text(hours * 3600)
