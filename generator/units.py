"""Unit constants. Bytes are integers everywhere; these name the powers used to print them."""

from __future__ import annotations

KIB = 2**10
MIB = 2**20
GIB = 2**30
GB = 10**9
TB = 10**12
#: One hour in seconds.
HOUR_S = 3600


def gib(n_bytes: float) -> float:
    """Bytes as binary gibibytes (2**30)."""
    return n_bytes / GIB


def gb(n_bytes: float) -> float:
    """Bytes as decimal gigabytes (10**9)."""
    return n_bytes / GB
