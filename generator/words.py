"""Lists written out in a message: ``a``, ``a and b``, ``a, b and c``."""

from __future__ import annotations

from collections.abc import Sequence


def listed(words: Sequence[str], conjunction: str = "and") -> str:
    """``words`` joined as a sentence joins them, the last two by ``conjunction`` (``and``, ``or``); "" for none."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"
