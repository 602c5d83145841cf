"""How the reasons write a size in GiB and a share in percent."""

from __future__ import annotations

import math

from generator.units import GIB


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def _percent(share: float) -> str:
    """A share as the reasons say it: one decimal under 10%; whole, but never 100% for a share under 1 (review74)."""
    if share < 0.1:
        return f"{share:.1%}"
    if share < 1 and round(share * 100) >= 100:  # 99.71% busy is a stable queue, not a saturated one
        return f"{math.floor(share * 1000) / 10:.1f}%"
    return f"{share:.0%}"
