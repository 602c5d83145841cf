"""The part of an output path that stands in the way of writing it: a file where a directory must be.

hostile90: ``render -o afile/sub/out`` and ``calibrate -o afile/x`` were refused in the OS's words ("Not a
directory"), naming no part of the path.
"""

from __future__ import annotations

import os


def file_on_the_way(path: str) -> str:
    """The first part of ``path`` (as given) that exists and is not a directory; ``path``'s parent where none does."""
    parts = path.split(os.sep)
    for end in range(1, len(parts)):
        head = os.sep.join(parts[:end])
        if head and os.path.lexists(head) and not os.path.isdir(head):
            return head
    return os.path.dirname(path)
