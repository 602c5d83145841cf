"""One read of the Hugging Face Hub given up after a time, and what the Hub answered meanwhile (hostile94, hostile95).

huggingface_hub retries a failed request with back-off and sleeps as long as a ``Retry-After`` asks: a Hub or mirror
that takes the connection and never answers held a run about 6.5 minutes a model (fuzz27 H4), a 429 asking an hour
held it an hour (hostile94). :func:`bounded` runs the read in a daemon thread and waits its time; a response hook on
the library's HTTP client reads each answer's status and asked wait, so a wait asked past the time left ends it at
once, and :class:`StalledError` says what the Hub answered. Split from :mod:`generator.calculator.hub` (review100).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from typing import Any

T = TypeVar("T")


class StalledError(Exception):
    """A read of the Hub did not finish within its time (:func:`bounded`); ``why``: what the Hub answered meanwhile."""

    def __init__(self, why: str = "") -> None:
        super().__init__(why)
        self.why = why


#: The statuses huggingface_hub retries (``_DEFAULT_RETRY_ON_STATUS_CODES``: 429 and the 5xx ones it names; all 5xx
#: counted here): an answer of one is a retry to come, where the client has tries left.
_RETRIED = frozenset({429, *range(500, 600)})
#: The IETF RateLimit header's remaining requests (``r``) and seconds to its reset (``t``),
#: https://www.ietf.org/archive/id/draft-ietf-httpapi-ratelimit-headers-09.html (the Hub sends ``"api";r=0;t=55``).
_RATELIMIT_PART = re.compile(r"(?:^|;)\s*([rt])\s*=\s*(\d+)")


def asked_wait_s(headers: Any, status: int) -> float | None:
    """The seconds an answer asks the client to wait before its next request (None: it asks none).

    ``Retry-After`` (delay-seconds or an HTTP date, RFC 9110 10.2.3), else on a 429 the RateLimit header's reset
    where no request remains: read from the HTTP answer itself, as the client reads it.
    """
    from email.utils import parsedate_to_datetime

    after = str(headers.get("Retry-After") or "").strip()
    if after.isdecimal():  # review100: isdigit takes '²' (a header byte 0xB2), which float refuses in the client's hook
        return float(after)
    if after:
        try:
            return max(0.0, parsedate_to_datetime(after).timestamp() - time.time())
        except (TypeError, ValueError, OverflowError):  # not a date: no wait asked
            pass
    if status == 429:
        parts = dict(_RATELIMIT_PART.findall(str(headers.get("RateLimit") or "")))
        if parts.get("r") == "0" and "t" in parts:
            return float(parts["t"])
    return None


class _Retries(logging.Handler):
    """What the Hub answered while one read runs: the last status the client retries on, how often, the wait asked.

    Read from each HTTP answer by a response hook on huggingface_hub's HTTP client (httpx's ``event_hooks``,
    requests' ``hooks``): its status code and ``Retry-After`` / ``RateLimit`` headers, never the client's words
    (hostile95: hostile94 read its warnings' text, "HTTP Error 429 thrown ...", which another release may word
    otherwise). A client the library makes anew (after a connection error it closes its own) gets the hook at its
    next log record, whatever that says. hostile94: a 429 with ``Retry-After: 3600`` had the client sleep an hour, and
    specgen said after its minute that the Hub "did not finish answering"; a wait asked past the time left ends the
    wait at once.
    """

    def __init__(self, deadline_s: float, over: threading.Event) -> None:
        super().__init__(logging.DEBUG)
        self.deadline_s, self.over = deadline_s, over
        self.status: int | None = None
        self.tries = 0
        self.asked_s: float | None = None
        self.clients: list[Any] = []

    def response(self, response: Any, *args: Any, **kwargs: Any) -> None:
        """The hook: httpx calls it with the response, requests with the response and keyword arguments."""
        status = getattr(response, "status_code", None)
        if not isinstance(status, int) or status not in _RETRIED or self.asked_s is not None:
            return  # a wait asked past the deadline ended it: what the client asks after is not what was said
        self.status, self.tries = status, self.tries + 1
        waits_s = asked_wait_s(getattr(response, "headers", {}), status)
        if waits_s is not None and time.monotonic() + waits_s > self.deadline_s:
            self.asked_s = waits_s
            self.over.set()

    def hook(self) -> None:
        """Put :meth:`response` on the library's HTTP client of now (once per client)."""
        try:
            import huggingface_hub.utils

            client: Any = getattr(huggingface_hub.utils, "get_session")()  # noqa: B009 (lazily exported)
        except Exception:  # a library without it: the wait is only timed
            return
        if any(client is known for known in self.clients):
            return
        if isinstance(getattr(client, "event_hooks", None), dict):  # httpx (huggingface_hub 1.x, 2.x)
            hooks = dict(client.event_hooks)
            hooks["response"] = [*hooks.get("response", ()), self.response]
            client.event_hooks = hooks
        elif isinstance(getattr(client, "hooks", None), dict):  # requests (huggingface_hub 0.x)
            client.hooks.setdefault("response", []).append(self.response)
        else:
            return
        self.clients.append(client)

    def unhook(self) -> None:
        """Take :meth:`response` off every client it was put on."""
        for client in self.clients:
            if isinstance(getattr(client, "event_hooks", None), dict):
                hooks = dict(client.event_hooks)
                hooks["response"] = [h for h in hooks.get("response", ()) if h != self.response]
                client.event_hooks = hooks
            else:
                client.hooks["response"] = [h for h in client.hooks.get("response", ()) if h != self.response]
        self.clients.clear()

    def emit(self, record: logging.LogRecord) -> None:
        self.hook()

    def why(self) -> str:
        """The answer the Hub gave before the wait ran out ("" where none was said)."""
        if self.status is None:
            return ""
        said = f"HTTP {self.status}" + (" (too many requests)" if self.status == 429 else "")
        said += " once" if self.tries == 1 else f" {self.tries} times"
        if self.asked_s is not None:
            return f"answered {said} and asks to wait {wait_text(self.asked_s)} before the next request"
        return f"answered {said}"


#: The longest asked wait said in seconds; one past it reads "more than a day" (fix197: a ``Retry-After`` of 400
#: digits read "asks to wait inf s", one of 12 digits "999,999,999,999 s").
SAID_WAIT_MAX_S = 86_400.0


def wait_text(seconds: float) -> str:
    """An asked wait in words: ``3,600 s``, or ``more than a day`` past :data:`SAID_WAIT_MAX_S` (infinite too)."""
    if not seconds <= SAID_WAIT_MAX_S:  # also NaN, which no header yields
        return "more than a day"
    return f"{seconds:,.0f} s"


def bounded(call: Callable[[], T], seconds: float) -> T:
    """``call()``, given up after ``seconds`` (:class:`StalledError`): it runs in a daemon thread, left behind if it hangs."""
    done: list[tuple[bool, Any]] = []

    over = threading.Event()  # the call finished, or the client announced a sleep past the time left
    retries = _Retries(time.monotonic() + seconds, over)

    def run() -> None:
        retries.hook()  # in this thread: huggingface_hub 0.x keeps a client per thread
        try:
            done.append((True, call()))
        except BaseException as exc:  # handed to the caller's thread as it is
            done.append((False, exc))
        over.set()

    logger = logging.getLogger("huggingface_hub.utils._http")
    kept = logger.level, logger.propagate
    # the CLI quiets the library (HF_HUB_VERBOSITY=error): its warnings (of a retry, after which the client may be a new
    # one) reach this handler, and print only where asked
    logger.propagate = logger.isEnabledFor(logging.WARNING)
    logger.setLevel(logging.WARNING)
    logger.addHandler(retries)
    worker = threading.Thread(target=run, name="specgen-hub", daemon=True)
    try:
        worker.start()
        over.wait(seconds)
    finally:
        logger.removeHandler(retries)
        retries.unhook()
        logger.setLevel(kept[0])
        logger.propagate = kept[1]
    if not done or retries.asked_s is not None:
        # fix197: a wait asked past the time left ends the wait, whatever the client does next: huggingface_hub turns
        # a RateLimit reset of 400 digits into a float and raises OverflowError at once, which won the race now and then
        raise StalledError(retries.why())
    ok, value = done[0]
    if not ok:
        raise value
    result: T = value
    return result
