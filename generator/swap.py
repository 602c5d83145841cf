"""The file-system steps that make a render all-or-nothing: an exclusive lock, an atomic exchange, recovery.

* :func:`output_lock` holds ``flock`` on the output's parent directory (its inode survives the swap,
  unlike the output directory's own), so two renders into one place run one after the other.
* :func:`exchange` swaps the staged tree and the output directory in one ``renameat2(RENAME_EXCHANGE)``
  call (Linux 3.15+): at every instant the output path holds the old tree or the new one.
  Where the kernel or file system lacks it, :class:`ExchangeUnsupportedError` sends the caller to a
  two-rename swap whose gap :func:`recover` closes on the next run.
* Working directories are siblings named ``.specgen-<tag>-new-*`` (a staged tree, or after an
  exchange the retired one) and ``.specgen-<tag>-old-*`` (a tree renamed away by the two-rename
  swap), ``<tag>`` a hash of the output's name. :func:`recover` puts an ``old`` tree back when the
  output path is empty (so the user's Terraform state is never stranded) and deletes the rest.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from generator.errors import OutputError

#: Seconds a render waits for another render into the same place before giving up.
LOCK_WAIT_S = 120.0
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) off the block: one that arrives in it interrupts the process just after it, not inside.

    newuser75 item 5: the swap of the staged tree and what records it are one step; Ctrl-C between the two exited as
    if nothing was written. Python runs a signal's handler on the main thread, whichever thread the kernel gave the
    signal to, so the handler is swapped for one that notes it (blocking the signal in the main thread's mask alone
    let another thread take it); only the main thread may set handlers, and elsewhere the block runs as it is.
    SIGTERM and SIGHUP are held off too where a handler set from Python takes them (the writer's,
    :mod:`generator.terminate`): a default action stays as it is (fix168, hostile92).
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    stopping = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]  # hostile92: SIGHUP
    held = [signal.SIGINT, *(signum for signum in stopping if callable(signal.getsignal(signum)))]
    arrived: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: arrived.append(signum)) for signum in held}
    try:
        yield
    finally:
        # delivered whether the block returned or raised (review77 item 6: one that arrived while it raised, an
        # OutputError of the swap, was dropped, and the user's Ctrl-C exited 1 "cannot write", not 130)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for got in dict.fromkeys(arrived):
            handler = previous[signal.Signals(got)]
            if handler == signal.SIG_IGN:
                continue
            if callable(handler):
                # KeyboardInterrupt from Python's own SIGINT handler, Terminated from the writer's SIGTERM one
                handler(got, None)
            else:
                os.kill(os.getpid(), got)  # SIG_DFL (or a handler not set from Python): as it would have been


class ExchangeUnsupportedError(Exception):
    """The kernel or file system cannot exchange two paths atomically."""


def work_prefix(target: str, kind: str) -> str:
    """Name prefix of the working directories of ``target`` (``kind``: new or old)."""
    tag = hashlib.sha256(os.path.basename(target).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f".specgen-{tag}-{kind}-"


@contextmanager
def output_lock(parent: str, shown: str, wait_s: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``parent`` (the output's parent directory) for one render."""
    wait_s = LOCK_WAIT_S if wait_s is None else wait_s
    try:
        fd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror or exc}") from None
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise OutputError(
                        f"cannot write {shown}: another specgen render into {parent} has held its lock for {wait_s:g} s"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _renameat2() -> Callable[..., int] | None:
    import ctypes  # only a render that replaces an existing tree calls it (a fresh tree or --check does not)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return getattr(libc, "renameat2", None)


def exchange(a: str, b: str) -> None:
    """Swap the directories ``a`` and ``b`` atomically; ExchangeUnsupportedError where that is impossible."""
    call = _renameat2()
    if call is None:
        raise ExchangeUnsupportedError("renameat2 is not available")
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        import ctypes

        code = ctypes.get_errno()
        if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise ExchangeUnsupportedError(os.strerror(code))
        raise OSError(code, os.strerror(code), a)


def recover(target: str, parent: str, remove: Callable[[str], str | None]) -> list[str]:
    """Finish or undo an interrupted render of ``target``; returns what was done, for the user.

    ``remove`` deletes a working directory and returns None, or what it could not delete (hostile79 item 6: a file of
    another user's in the old tree stayed, and every render said it "removed" the directory): that is said instead.
    """
    done: list[str] = []
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return done
    new, old = work_prefix(target, "new"), work_prefix(target, "old")
    for name in names:
        path = os.path.join(parent, name)
        if name.startswith(old):
            tree = os.path.join(path, "tree")
            if not os.path.lexists(target) and os.path.isdir(tree):
                os.rename(tree, target)
                done.append(f"restored the previous output from the interrupted render in {path}")
            left = remove(path)
            if left is not None:
                done.append(_not_removed(path, left))
        elif name.startswith(new):
            left = remove(path)
            done.append(f"removed {path}, left by an interrupted render" if left is None else _not_removed(path, left))
    return done


def _not_removed(path: str, left: str) -> str:
    """What :func:`recover` says of a working directory it could not delete (``left``: the first thing that stayed)."""
    return (
        f"warning: could not remove {path}, left by an earlier render ({left}); it is no part of the output: remove it "
        "by hand (as the user that owns what stays)"
    )
