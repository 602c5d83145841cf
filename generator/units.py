"""Unit constants. Bytes are integers everywhere; these name the powers used to convert and print them."""

from __future__ import annotations

MIB = 2**20
GIB = 2**30
GB = 10**9
TB = 10**12
