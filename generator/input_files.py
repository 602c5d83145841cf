"""Read input files that a pull request may control: regular files only, size-limited, inside the repository.

``open()`` on a device (``/dev/zero``) reads forever and on a FIFO blocks forever; a committed
symlink can point at either, or at a file outside the checkout whose content an error would echo
into the CI log. So every input is ``stat``-ed first, opened with ``O_NONBLOCK`` (a FIFO that
appears between the two calls cannot block), checked again on the open descriptor, and read up to
a size limit. Paths a workload names are resolved (symlinks followed) and must stay inside the
repository holding the workload (its git root, else its own directory) unless
:data:`allow_outside_paths` is set (``specgen --allow-outside-paths``).
"""

from __future__ import annotations

import os
import re
import stat
from contextvars import ContextVar

from generator.errors import InputError, Location

#: Largest workload YAML file read, in bytes.
MAX_WORKLOAD_BYTES = 1 << 20
#: Largest model ``config.json`` read, in bytes (real ones are a few KB; a VLM's nested one under 100 KB).
MAX_CONFIG_BYTES = 4 << 20
#: Largest ``spec.json`` given to ``specgen diff``, in bytes.
MAX_SPEC_BYTES = 64 << 20
#: Largest run log given to ``specgen calibrate --log``, in bytes (a vLLM server's whole log, not only its start-up).
MAX_LOG_BYTES = 64 << 20
#: Whether paths a workload names may lie outside its repository.
allow_outside_paths: ContextVar[bool] = ContextVar("allow_outside_paths", default=False)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def refuse_nul(path: str, what: str, location: Location | None = None) -> None:
    """An InputError for a path holding NUL, which ``os`` calls refuse with a ValueError (fuzz31 item 13).

    And for one holding a character this process cannot give the OS (:func:`refuse_unencodable`).
    """
    if "\0" in path:
        shown = path.replace("\0", "\\0")
        raise InputError(f"the {what} path holds a NUL character, which no file name may hold", location or Location(shown))
    refuse_unencodable(path, what, location)


def dash_output(what: str) -> str:
    """Why an output path ``-`` is refused: it wrote a file (a render: a directory) named ``-`` (hostile92)."""
    return (
        f"is '-', which names no file here (specgen writes no output to standard output this way): name {what} "
        "(./- for one named '-')"
    )


def refuse_unencodable(path: str, what: str, location: Location | None = None) -> None:
    """An InputError for a path holding a character the file-name encoding of this process lacks.

    hostile86: in a locale that is not UTF-8 (``LC_ALL=C`` with ``PYTHONUTF8=0``, a Latin-1 one) a workload's
    ``model: ./modèle`` ended in a traceback (``UnicodeEncodeError: 'ascii' codec can't encode character``) at the
    first ``os`` call on the path. A path from the command line always encodes (Python decodes it with
    ``surrogateescape``); one read from a file may not.
    """
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        import sys

        char = path[exc.start]
        if 0xD800 <= ord(char) <= 0xDFFF:  # hostile92: no locale helps; it told a UTF-8 one to use UTF-8
            why = "an unpaired surrogate (a \\ud800-\\udfff escape alone), which is no character: no file name holds it"
        else:
            why = (
                f"which this process's file names, in the locale's encoding ({sys.getfilesystemencoding()}), cannot "
                "hold: run specgen in a UTF-8 locale (LC_ALL=C.UTF-8, or PYTHONUTF8=1)"
            )
        raise InputError(
            f"the {what} path {short(path)} holds {char!r} (U+{ord(char):04X}), {why}",
            location or Location(ascii(path)[1:-1]),
        ) from None


def read_limited(path: str, limit_bytes: int, what: str, location: Location | None = None) -> bytes:
    """The bytes of the regular file ``path``; an InputError for anything else or anything larger than the limit."""
    refuse_nul(path, what, location)
    where = location or Location(path)
    try:
        before = os.stat(path)
    except FileNotFoundError:
        dash = " ('-' is no file: specgen reads no input from standard input; write it to a file)" if path == "-" else ""
        raise InputError(f"{what} {_dangling(path) or 'not found'}{dash}", where) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", where) from None
    if not stat.S_ISREG(before.st_mode):
        stdin = path in ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0")
        piped = " (standard input is not read: write it to a file)" if stdin else ""
        raise InputError(f"{what} is {_kind(before.st_mode)}; only regular files are read{piped}", where)
    if before.st_size > limit_bytes:
        raise InputError(f"{what} is {before.st_size:,} bytes, more than the {limit_bytes:,} specgen reads", where)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", where) from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):
            raise InputError(f"{what} is {_kind(now.st_mode)}; only regular files are read", where)
        chunks: list[bytes] = []
        left = limit_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", where) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit_bytes:
        raise InputError(f"{what} is more than the {limit_bytes:,} bytes specgen reads", where)
    return data


def _dangling(path: str) -> str | None:
    """``is a symbolic link to 'X', which does not exist`` where ``path`` is such a link, else None.

    hostile90: a dangling link was said "not found", though ``ls`` lists it (hostile89 said so of ``-o`` alone).
    """
    try:
        target = os.readlink(path)
    except (OSError, ValueError):
        return None
    return f"is a symbolic link to {short(target, 200)}, which does not exist"


def read_text_limited(path: str, limit_bytes: int, what: str, location: Location | None = None) -> str:
    """:func:`read_limited`, decoded as UTF-8."""
    return utf8_text(read_limited(path, limit_bytes, what, location), what, path, location)


def utf8_text(data: bytes, what: str, path: str, location: Location | None = None) -> str:
    """``data`` (the bytes of ``path``, or of a download it names) decoded as UTF-8, or refused at its line and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # where, by line and column, as every other input error (fuzz21 item 12); a UTF-16 file says so
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        utf16 = " (a UTF-16 file: save it as UTF-8)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        where = location or Location(path, line, column)
        raise InputError(f"{what} is not UTF-8 text (byte {exc.start}){utf16}", where) from None


#: Byte-order marks a text file may begin with, and the encoding each says (UTF-32 before UTF-16: FF FE 00 00).
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_RESAVE = "save it as UTF-8 (PowerShell: '| Out-File -Encoding utf8' instead of '>')"


def decode_log(data: bytes, path: str) -> str:
    """A run log's text: UTF-8 (a byte that is not read as U+FFFD), or UTF-16/32 with a byte-order mark.

    PowerShell 5's ``>`` writes UTF-16 with a byte-order mark: read as UTF-8, its figures were found nowhere (fuzz31
    item 5). Text with NUL bytes between its characters and no mark is UTF-16 too: refused, saying so.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding, errors="strict" if encoding != "utf-8" else "replace")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"log begins with a {encoding.upper()} byte-order mark but does not decode as {encoding.upper()} "
                    f"(byte {exc.start + len(bom)}): {_RESAVE}",
                    Location(path),
                ) from None
    head = data[:4096]
    if len(head) >= 4 and head.count(b"\x00") * 4 >= len(head):
        raise InputError(
            f"log is not UTF-8 text: NUL bytes between its characters (UTF-16 without a byte-order mark?): {_RESAVE}",
            Location(path),
        )
    return data.decode("utf-8", errors="replace")


def git_work_tree(directory: str) -> str | None:
    """The git work tree holding the real path ``directory`` (the nearest parent with a ``.git`` entry of any kind)."""
    probe = directory
    while True:
        if os.path.lexists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def repository_root(start_dir: str) -> str:
    """The git work tree holding ``start_dir``, else ``start_dir`` itself (real paths)."""
    here = os.path.realpath(start_dir)
    return git_work_tree(here) or here


def inside_root(path: str, root: str, shown: str, location: Location | None) -> str:
    """``path`` with symlinks resolved; an InputError when it leaves ``root`` (unless allowed)."""
    real = os.path.realpath(path)
    if allow_outside_paths.get():
        return real
    if os.path.commonpath([real, root]) != root:
        raise InputError(
            f"model path {short(shown)} resolves outside the repository ({root}); "
            "paths in a workload must stay inside it (specgen --allow-outside-paths allows more)",
            location,
        )
    return real


def linked_inside(path: str) -> None:
    """Refuse an input file reached through a symlink that leaves the repository holding its path (unless allowed).

    fuzz25 M3: a pull request can commit ``workloads/x.yaml`` as a link to a file of the CI runner, whose values the
    errors then quote into the job's log. The rule is the model paths' (:func:`inside_root`); a file outside any
    repository, or reached without a symlink, is read as given.
    """
    refuse_nul(path, "file")
    lexical = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(path)
    if real == lexical or allow_outside_paths.get():
        return
    root = git_work_tree(os.path.dirname(lexical))
    if root is not None and os.path.commonpath([real, os.path.realpath(root)]) != os.path.realpath(root):
        raise InputError(
            f"a symlink that resolves outside the repository ({root}); input files must stay inside it (specgen "
            "--allow-outside-paths allows more)",
            Location(path),
        )


def short(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, so a huge bad value is never echoed in full."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value):,} characters)"
    if isinstance(value, (list, dict)) and len(value) > 8:
        return f"a {type(value).__name__} of {len(value):,} items"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def ascii_count(text: str, digits: int = 12) -> int | None:
    """A count written in at most ``digits`` ASCII digits, else None.

    ``int`` alone also takes other scripts' digits, underscores and signs (and ``str.isdigit`` passes ``²``).
    """
    return int(text) if re.fullmatch(f"[0-9]{{1,{digits}}}", text.strip()) else None


def check_distinct_files(paths: list[str]) -> None:
    """Refuse a file given twice under any name (a symlink, ``./``, a hard link): a tree or a diff would count it twice."""
    given: dict[object, str] = {}
    for path in paths:
        try:  # the file itself, whatever names it
            found = os.stat(path)
            same: object = (found.st_dev, found.st_ino)
        except (OSError, ValueError):  # ValueError: a NUL in the name
            same = path  # reading it will say what is wrong
        if same in given:
            what = "spec.json" if path.endswith(".json") else "workload"  # hostile84: a spec.json is no workload
            raise InputError(f"{given[same]} and {path} are the same file; give each {what} once")
        given[same] = path


class DuplicateKeyError(ValueError):
    """A JSON object names ``key`` twice (Python's json keeps the last silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``json.loads``'s ``object_pairs_hook``: an object whose keys are distinct, else :class:`DuplicateKeyError`."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out
