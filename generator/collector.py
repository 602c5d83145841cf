"""Python's cyclic garbage collector paced for planning: fewer full collections while the sizing caches grow.

Planning keeps its sizing results for the process (:mod:`generator.sizing.memo`, the options formed and ranked): over a
render of many files, hundreds of thousands of objects that live to its end. A full collection walks every one of
them, and at Python's default pacing (one each ten collections of the middle generation, where the objects added
since the last are a quarter of those it kept) the 12 of a 40-file render took 2.2 s of its 16.8 s CPU (speed102).
The young generations are collected as before; only cyclic garbage that reached the oldest generation waits longer.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: The collector's third threshold while planning runs (Python's default is 10): a full collection at most every this
#: many collections of the middle generation.
FULL_COLLECTION_EVERY = 100


@contextlib.contextmanager
def fewer_full_collections() -> Iterator[None]:
    """Run the block with full collections at most every :data:`FULL_COLLECTION_EVERY` middle ones, then as before.

    Nested blocks keep the outer one's pacing; forked workers inherit it. Nothing planned depends on when the
    collector runs: it frees only objects nothing refers to.
    """
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)
