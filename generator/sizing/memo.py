"""Memoization of the pure sizing functions: each distinct input is sized once per process.

Planning tries many layouts of the same model, and ``render`` of many files in one process meets the
same models again and again; the sizing functions are pure, so their results are kept. The first
argument (an :class:`~generator.sizing.architecture.Architecture`, large and costly to hash) is keyed
by identity and held by the cache, so its id cannot be reused while its entries live; the other
arguments are keyed by value. A call whose arguments cannot be hashed is simply not cached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any, ParamSpec, TypeVar

    P = ParamSpec("P")
    R = TypeVar("R")

#: Entries per function before its cache starts over (bounds memory on very long runs).
MAX_ENTRIES = 200_000


def memoized(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` with its results kept, keyed by the first argument's identity and the others' values."""
    cache: dict[Any, tuple[object, Any]] = {}

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        first = args[0] if args else None
        key = (id(first), args[1:], tuple(sorted(kwargs.items()))) if kwargs else (id(first), args[1:])
        try:
            hit = cache.get(key)
        except TypeError:  # an unhashable argument: compute without caching
            return func(*args, **kwargs)
        if hit is not None and hit[0] is first:
            result: R = hit[1]
            return result
        result = func(*args, **kwargs)
        if len(cache) >= MAX_ENTRIES:
            cache.clear()
        cache[key] = (first, result)
        return result

    return wrapper
