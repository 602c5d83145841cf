"""SIGTERM while a render writes its tree: the staged tree removed, exit 128 + 15 without a traceback (fix168).

hostile87: a CI job cancelled mid-render (SIGTERM, as ``docker stop`` and CI runners send) left the staged tree
(``.specgen-<tag>-new-*``) beside the output; the output itself was whole (old or new), and the next render removed
the leftover. While :func:`generator.writer.write_tree` holds the staging directory, SIGTERM raises
:class:`Terminated` (a ``SystemExit`` of :data:`TERMINATED`) where it arrives, so the writer's clean-up runs as it does
for Ctrl-C; the swap itself holds it off (:func:`generator.swap.interrupts_held`), so the output is old or new, never
half. A handler another program set (specgen used as a library) is left alone.

hostile92: SIGHUP (the terminal closed, an ssh session dropped) ended a render by the signal with the staged tree left
beside the output, as SIGTERM had; it is taken the same way (:data:`STOPPING`), exit 128 + 1.
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
#: The signals a render stops at with its staged tree removed (each exits 128 + its number), and the word a shell says
#: of each: SIGTERM (a CI cancel, ``docker stop``) and, where the system has it, SIGHUP (a closed terminal).
STOPPING = {
    getattr(signal, name): word for name, word in (("SIGTERM", "Terminated"), ("SIGHUP", "Hangup")) if hasattr(signal, name)
}
#: Test-only: a path; with it set the writer pauses once its tree is staged, writes ``<path>.staged`` and waits for a
#: signal, so a test can send SIGTERM at that point without timing anything.
PAUSE_ENV = "SPECGEN_TEST_PAUSE_STAGED"


class Terminated(SystemExit):
    """SIGTERM (or another of :data:`STOPPING`) arrived while the output was being written; exits 128 + its number."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextmanager
def terminate_cleans_up(said: Callable[[], str]) -> Iterator[None]:
    """Turn SIGTERM / SIGHUP into :class:`Terminated` in the block, then say ``said()`` on stderr and exit 128 + it.

    Only on the main thread (only it may set handlers) and for a signal that has its default action: a handler set by
    another program stays as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [signum for signum in STOPPING if signal.getsignal(signum) == signal.SIG_DFL]
    for signum in taken:
        signal.signal(signum, _raise_terminated)
    try:
        yield
    except Terminated as stopped:
        name = signal.Signals(stopped.signum).name
        print(f"\n{STOPPING.get(stopped.signum, 'Terminated')} ({name}): {said()}", file=sys.stderr, flush=True)
        raise
    finally:
        for signum in taken:
            signal.signal(signum, signal.SIG_DFL)


def pause_if_asked() -> None:
    """Test-only (:data:`PAUSE_ENV`): say the tree is staged and wait for a signal; nothing where it is not set."""
    path = os.environ.get(PAUSE_ENV)
    if not path:
        return
    with open(f"{path}.staged", "w", encoding="utf-8"):
        pass
    while True:  # a signal's handler raises out of the wait
        time.sleep(0.05)
