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


#: No first argument given (a call of keywords alone): not cached.
_NONE_GIVEN = object()


def memoized(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` with its results kept, keyed by the first argument's identity and the others' values.

    A call of one argument is keyed by its identity alone, and the other arguments are taken as the call gives them
    (not sliced from one tuple): planning makes some ten thousand of these calls, nearly all hits, and the wrapper's own
    work was a large share of each (speed100).
    """
    cache: dict[Any, tuple[object, Any]] = {}
    get = cache.get

    @functools.wraps(func)
    def wrapper(first: Any = _NONE_GIVEN, /, *rest: Any, **kwargs: Any) -> Any:
        if first is _NONE_GIVEN:
            return func(**kwargs)  # type: ignore[call-arg]
        if kwargs:
            key: Any = (id(first), rest, tuple(sorted(kwargs.items())))
        else:
            key = (id(first), rest) if rest else id(first)
        try:
            hit = get(key)
        except TypeError:  # an unhashable argument: compute without caching
            return func(first, *rest, **kwargs)
        if hit is not None and hit[0] is first:
            return hit[1]
        result = func(first, *rest, **kwargs)
        if len(cache) >= MAX_ENTRIES:
            cache.clear()
        cache[key] = (first, result)
        return result

    return wrapper
