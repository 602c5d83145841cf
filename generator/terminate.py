"""SIGTERM while a render writes its tree: the staged tree removed, exit 128 + 15 without a traceback (fix168).

hostile87: a CI job cancelled mid-render (SIGTERM, as ``docker stop`` and CI runners send) left the staged tree
(``.specgen-<tag>-new-*``) beside the output; the output itself was whole (old or new), and the next render removed
the leftover. While :func:`generator.writer.write_tree` holds the staging directory, SIGTERM raises
:class:`Terminated` (a ``SystemExit`` of :data:`TERMINATED`) where it arrives, so the writer's clean-up runs as it does
for Ctrl-C; the swap itself holds it off (:func:`generator.swap.interrupts_held`), so the output is old or new, never
half. A handler another program set (specgen used as a library) is left alone.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: Exit code of a render SIGTERM stopped: 128 + SIGTERM, as a shell reports a process SIGTERM ended.
TERMINATED = 128 + signal.SIGTERM
#: Test-only: a path; with it set the writer pauses once its tree is staged, writes ``<path>.staged`` and waits for a
#: signal, so a test can send SIGTERM at that point without timing anything.
PAUSE_ENV = "SPECGEN_TEST_PAUSE_STAGED"


class Terminated(SystemExit):
    """SIGTERM arrived while the output was being written; exits :data:`TERMINATED`."""

    def __init__(self) -> None:
        super().__init__(TERMINATED)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextmanager
def terminate_cleans_up(said: Callable[[], str]) -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` in the block, then say ``said()`` on stderr and exit :data:`TERMINATED`.

    Only on the main thread (only it may set handlers) and where SIGTERM has its default action: a handler set by
    another program stays as it is.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except Terminated:
        print(f"\nTerminated (SIGTERM): {said()}", file=sys.stderr, flush=True)
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def pause_if_asked() -> None:
    """Test-only (:data:`PAUSE_ENV`): say the tree is staged and wait for a signal; nothing where it is not set."""
    path = os.environ.get(PAUSE_ENV)
    if not path:
        return
    with open(f"{path}.staged", "w", encoding="utf-8"):
        pass
    while True:  # a signal's handler raises out of the wait
        time.sleep(0.05)
