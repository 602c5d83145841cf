"""Lists written out in a message: ``a``, ``a and b``, ``a, b and c``."""

from __future__ import annotations

from collections.abc import Sequence


def listed(words: Sequence[str], conjunction: str = "and") -> str:
    """``words`` joined as a sentence joins them, the last two by ``conjunction`` (``and``, ``or``)."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"
