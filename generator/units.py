"""Unit constants. Bytes are integers everywhere; these name the powers used to convert and print them."""

from __future__ import annotations

import decimal
import math

MIB = 2**20
GIB = 2**30
GB = 10**9
TB = 10**12

#: Below this many seconds a duration is printed in milliseconds ("TTFT 46 ms", never "0.0 s").
MS_BELOW_S = 0.05

#: Hours in a (non-leap) year: a training run longer than that is said.
HOURS_PER_YEAR = 8760
#: Hours a month is billed for: 365 x 24 / 12, rounded (the month of every cost and of a job's runs).
HOURS_PER_MONTH = 730


def seconds_text(seconds: float) -> str:
    """A duration as printed everywhere: whole ms below 0.05 s, else seconds to 0.01 s (8.5 s, not 8 s).

    JSON figures are rounded to at least these places (``round(x, 3)`` TTFT, ``round(x, 2)`` cold start),
    so text and JSON agree.
    """
    if seconds < MS_BELOW_S:
        return f"{seconds * 1000:.0f} ms"
    return f"{round(seconds, 2):g} s"


def long_seconds_text(seconds: float) -> str:
    """A request's time or wait: :func:`seconds_text`, and its minutes past two of them (``3,000 s (50.0 min)``)."""
    return seconds_text(seconds) if seconds < 120 else f"{seconds:,.0f} s ({seconds / 60:.1f} min)"


def rough_seconds_text(seconds: float) -> str:
    """A duration said roughly (``~14 s``): whole seconds from one second up, below it :func:`seconds_text`.

    newuser87 item 4: a 2.3 GB checkpoint over a 200 Gb/s NIC read "takes at least ~0 s" (0.09 s rounded away).
    """
    return f"{seconds:,.0f} s" if seconds >= 1 else seconds_text(seconds)


#: Places the hours of a ``run_after`` sequence (a job's start, finish) are kept to in ``spec.json``.
SEQUENCE_HOURS_PLACES = 3


def sequence_hours_text(hours: float) -> str:
    """An hour of a ``run_after`` sequence as every line of a plan says it: the figure ``spec.json`` keeps, to 0.1 h.

    review81 item 8: a start of 4.9496 h read "4.9" in the chosen-by line (formatted from the raw hours) and "5.0" in
    the job's reasons (from the 4.95 kept). Every line now takes the kept figure and rounds it half up to 0.1 h, as a
    reader of ``spec.json`` would (4.95 -> 5.0, 10.25 -> 10.3; a float's ``.1f`` would read 10.25 as 10.2).
    """
    kept = decimal.Decimal(repr(round(hours, SEQUENCE_HOURS_PLACES)))
    return f"{kept.quantize(decimal.Decimal('0.1'), rounding=decimal.ROUND_HALF_UP)}"


def hours_text(hours: float, places: int = 2) -> str:
    """Hours to ``places`` decimals; a run shorter than 0.1 h in minutes (or :func:`seconds_text`), never "0.0 h"."""
    if hours >= 0.1:
        return f"{hours:,.{places}f} h"
    minutes = hours * 60
    return f"{minutes:.1f} min" if minutes >= 1 else seconds_text(hours * 3600)


def money_text(value: float, places: int = 2) -> str:
    """A figure of money (any figure a cell shows) to ``places`` decimals with thousands commas: ``12,699.50``.

    The one format of money: a negative that rounds to zero (``-0.0``, ``-0.004``) reads ``0.00``, never ``-0.00``
    (fix162 item 3: a spec.json's ``-0.0`` total was said "is -0.00" in diff's error, and ``$-0.00``).
    """
    return f"{value:z,.{places}f}"


def dollars_text(value: float, places: int = 0) -> str:
    """Dollars as :func:`money_text` writes them, whole by default: ``$357,000`` (``places`` 2: ``$3.91``)."""
    return f"${money_text(value, places)}"


def shows_zero(text: str) -> bool:
    """Whether a figure as written reads as zero (``0``, ``0.00``): a change that moved nothing gets no sign."""
    return not text.strip("0.,")


def signed_money_text(value: float) -> str:
    """A change of money: ``+$1.50``, ``-$0.25``, or ``$0.00`` where it rounds to no cent (never ``-$0.00``)."""
    shown = money_text(abs(value))
    return f"${shown}" if shows_zero(shown) else f"{'+' if value > 0 else '-'}${shown}"


def usd_text(usd: float) -> str:
    """Dollars to at least three significant figures and at least the cent: $3.82, $0.871, $0.0437, $12.30.

    newuser39 item 11: $0.0437 per million tokens printed as "$0.04", 9% off, and $0.04 against $0.05 could not tell
    layouts apart.
    """
    if usd <= 0 or usd >= 100:
        return dollars_text(usd, 2)
    return dollars_text(usd, max(2, 2 - math.floor(math.log10(usd))))


def figure_text(value: float) -> str:
    """A figure as ``:g`` gives it, with thousands separators and never an exponent: 10,240, 1,000,003, 22.625.

    Six significant figures at most (more left of the point), no trailing zeros: 10,240 (not 1.024e+04), 1,000,003
    (not 1e+06), 147.5, 0.05664.

    fuzz35 item 7: a capacity plan's 1,024 x read "1.024e+04 req/s" beside "10240 req/s need 1803 replica(s)".
    """
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    places = max(0, 5 - math.floor(math.log10(abs(value))))
    text = f"{value:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
