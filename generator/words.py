"""Lists written out in a message: ``a``, ``a and b``, ``a, b and c``; counts with their noun: ``1 token``, ``2 tokens``."""

from __future__ import annotations

from collections.abc import Sequence


def listed(words: Sequence[str], conjunction: str = "and") -> str:
    """``words`` joined as a sentence joins them, the last two by ``conjunction`` (``and``, ``or``); "" for none."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def counted(count: int, noun: str) -> str:
    """``count`` with thousands commas and ``noun``, plural but for one: ``1 token``, ``4,096 tokens`` (fix152)."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
