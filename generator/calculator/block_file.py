"""The block files ``detect -o`` and ``calibrate -o`` write, and how one is told from any other file.

``-o`` writes over a file only when it is such a block: its first line is one of the header lines these commands
write (:data:`BLOCK_HEADERS`), and the rest holds only comments and the one top-level key its command writes
(``hardware:`` or ``constants:``). A workload starting with a comment such as ``# specgen workload for the chat
team`` has ``version:`` and ``name:`` at its top level, so it is refused (fuzz27 M5, fuzz31 item 2: a check of the
first 10 bytes replaced such a workload).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Collection

#: The first line ``specgen detect`` writes.
DETECT_HEADER = "# specgen detect: this machine as hardware.fixed; each value says whether it was measured or assumed"
#: The first lines ``specgen calibrate`` writes: constants fitted, none recommended, none fitting.
CALIBRATE_HEADER = "# specgen calibrate: engine constants fitted to the measured run; commit at the workload's top level"
CALIBRATE_NONE_HEADER = "# specgen calibrate: no constant is recommended"
CALIBRATE_NO_FIT_HEADER = (
    "# specgen calibrate: none of these figures fits an engine constant (only KV tokens and decode speed do)"
)
#: Each header, with the one top-level key a block beginning with it may hold.
BLOCK_HEADERS = {
    DETECT_HEADER: "hardware",
    CALIBRATE_HEADER: "constants",
    CALIBRATE_NONE_HEADER: "constants",
    CALIBRATE_NO_FIT_HEADER: "constants",
}
#: Largest file read to tell whether it is a block (a detect block is about 1 KB).
_MAX_BLOCK_BYTES = 64 * 1024
_TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*:")


def is_written_block(text: str) -> bool:
    """Whether ``text`` is a block ``detect`` or ``calibrate`` writes (see the module's docstring)."""
    first, _, rest = text.partition("\n")
    key = BLOCK_HEADERS.get(first.rstrip("\r"))
    if key is None:
        return False
    keys = []
    for line in rest.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or line[0] in " \t":
            continue  # blank, a comment, or inside the block's one mapping
        found = _TOP_KEY.match(line)
        if found is None:
            return False
        keys.append(found.group(1))
    return keys in ([], [key])


def _written_block(path: str) -> bool:
    """Whether the file at ``path`` is a block specgen wrote (:func:`is_written_block`)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_BLOCK_BYTES + 1)
    except OSError:
        return False
    if len(data) > _MAX_BLOCK_BYTES:
        return False
    try:
        return is_written_block(data.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def write_block(path: str, text: str, inputs: Collection[str] = ()) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file renamed over it).

    Only a new path or a regular file specgen wrote is written: a symlink, device, FIFO or directory there is refused,
    and so is one of the ``inputs`` read (a log the constants come from) and a file of other text (a workload).
    """
    from generator.errors import OutputError

    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        raise OutputError(f"cannot write {path}: it exists and is not a regular file (a symlink, directory or device)")
    if any(os.path.exists(given) and os.path.samefile(given, path) for given in inputs if os.path.lexists(path)):
        raise OutputError(f"cannot write {path}: it is an input read (give the output a path of its own)")
    if os.path.lexists(path) and not _written_block(path):
        raise OutputError(
            f"cannot write {path}: it exists and is not a block specgen wrote (its first line is not the header "
            "'# specgen detect: ...' or '# specgen calibrate: ...' these commands write, or it holds more than a "
            "hardware: or constants: block); give a new path: the block goes into the workload by hand"
        )
    tmp = f"{path}.specgen-tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o666)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, NotADirectoryError):  # hostile90: "Not a directory" named no part of the path
            from generator.path_parts import file_on_the_way

            raise OutputError(f"cannot write {path}: {file_on_the_way(path)} is not a directory") from None
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
