"""Models on the Hugging Face Hub: ``config.json`` and the safetensors headers, never the weights.

Everything goes through ``huggingface_hub`` (imported only when a Hub id is resolved), so its
cache, ``HF_TOKEN`` (gated and private models), ``HF_HUB_OFFLINE``, ``HF_ENDPOINT`` and
``HF_HOME`` behave as they do for transformers. ``config.json`` is downloaded into the Hub cache;
the safetensors headers are read with HTTP range requests
(``HfApi.get_safetensors_metadata``) and the tensor table is kept in the cache's assets folder
(``huggingface_hub.cached_assets_path``) keyed by commit, so an offline run sizes exactly as the
online one did. The resolved commit and the SHA-256 of the config are recorded in the model's
source, so spec.json changes (drift) when the upstream config does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from typing import TYPE_CHECKING

from generator.calculator.hub_file_sizes import data_section_bytes, file_sizes
from generator.calculator.hub_wait import StalledError, bounded
from generator.calculator.model_source import COMMIT, config_from_text, hub_config_name
from generator.calculator.safetensors_header import (
    DTYPE_BITS,
    INDEX_FILE,
    MAX_INDEX_BYTES,
    Tensor,
    check_end_to_end,
    checked_tensor,
)
from generator.errors import InputError, Location, UnreachableError, one_line
from generator.input_files import MAX_CONFIG_BYTES, short, utf8_text
from generator.named_tuple import NamedTuple

if TYPE_CHECKING:
    from typing import Any

_TENSOR_TABLE = "safetensors-tensors.json"

#: Seconds specgen waits for each read of a model from the Hub (its config, its safetensors headers) before it gives
#: up (``SPECGEN_HUB_TIMEOUT_S`` sets another): a Hub or mirror that takes the connection and never answers held a run
#: about 6.5 minutes a model in huggingface_hub's retries (fuzz27 H4).
HUB_TIMEOUT_S = 60.0


class HubRepoError(InputError):
    """The Hub has the repository but will not give a model from it (gated, no such revision, no usable config)."""


#: Whether a Hub out of reach while its safetensors headers are read is :class:`UnreachableError` (exit 75) rather than
#: a note with the weights sized from the config: set by ``render --check`` and ``diff --base`` (fix143), where a plan
#: sized so would read as drift (exit 4) or a fleet change although the cause is a transient outage. A plain ``plan`` /
#: ``render`` keeps the fallback and its note. Module state, set before the render's worker processes fork.
_OUTAGE_FAILS = [False]


def outage_fails(on: bool = True) -> None:
    """Make a transient failure reading the safetensors headers exit 75 (``on``) or fall back to the config (fix143)."""
    _OUTAGE_FAILS[0] = on


class HeadersUnreachableError(UnreachableError):
    """The Hub gave the model's config but was out of reach for its safetensors headers, under :func:`outage_fails`.

    Said as it is (exit 75): the model exists, so no catalog id is suggested for it (fix143).
    """


class HubModel(NamedTuple):
    """What was read from the Hub for one model."""

    repo_id: str
    #: The revision asked for (a branch, tag or commit; ``main`` when none was given).
    revision: str
    #: The commit it resolved to.
    commit: str
    config: dict[str, Any]
    #: The text ``config`` was read from, which places a refused field at its line and column.
    config_text: str
    config_sha256: str
    #: Every tensor of the checkpoint (``None``: no safetensors headers could be read).
    tensors: list[Tensor] | None
    notes: tuple[str, ...]

    @property
    def source(self) -> str:
        """Where the model came from, reproducibly: repository, commit and config hash."""
        asked = "" if self.revision in ("main", self.commit) else f" (revision {self.revision})"
        return f"hf: {self.repo_id}@{self.commit}{asked}; config.json sha256:{self.config_sha256}"


def fetch_hub_model(repo_id: str, revision: str | None, location: Location | None = None) -> HubModel:
    """Download ``config.json`` (through the Hub cache) and read the safetensors headers of ``repo_id``."""
    given = os.environ.get("HF_ENDPOINT")
    offline_asked = os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")  # the library's reading
    if given is not None and not offline_asked:  # before huggingface_hub, which parses it as it loads (a bad port: a traceback)
        _check_endpoint(given.rstrip("/"), location)
    try:
        import huggingface_hub
        from huggingface_hub import errors as hub_errors

        download = huggingface_hub.hf_hub_download
    except ValueError:  # offline, the endpoint is not read but still parsed as the library loads (review24 M2)
        raise InputError(f"HF_ENDPOINT {shown_endpoint(given or '')!r} cannot be parsed as a URL; unset it", location) from None
    except ImportError:
        raise InputError(
            f"reading '{repo_id}' from the Hub needs huggingface_hub (pip install huggingface_hub)", location
        ) from None
    asked = revision or "main"
    where = f"'{repo_id}'" + (f" at revision {short(revision)}" if revision else "")
    offline = huggingface_hub.constants.HF_HUB_OFFLINE
    endpoint = huggingface_hub.constants.ENDPOINT
    unresolved = None if offline else _unresolvable_host(endpoint)
    seconds = _timeout_s(location)

    refused = (
        hub_errors.GatedRepoError,
        hub_errors.RepositoryNotFoundError,
        hub_errors.RevisionNotFoundError,
        hub_errors.EntryNotFoundError,
    )

    def config_path() -> str:
        if not offline and unresolved is None:  # its size before the file (newuser58 item 2: a 2 GB one was kept whole)
            url = huggingface_hub.hf_hub_url(repo_id, "config.json", revision=revision)
            try:
                size = huggingface_hub.get_hf_file_metadata(url).size
            except refused:
                raise
            except Exception:  # out of reach, a 5xx, no Hub: the download says so, or reads the cache (review38 item 1)
                size = None
            if size is not None and size > MAX_CONFIG_BYTES:
                raise _TooLargeError(size)
        return download(repo_id, "config.json", revision=revision, local_files_only=unresolved is not None)

    began_s = time.time()  # a config downloaded from here on is this run's to remove when refused
    try:
        path = bounded(config_path, seconds)
    except StalledError as exc:
        _forget_incomplete(huggingface_hub, repo_id, began_s)
        raise UnreachableError(_stalled_message(where, endpoint, seconds, exc.why), location) from None
    except _TooLargeError as exc:
        raise HubRepoError(_too_large(where, exc.size), location) from None
    except hub_errors.GatedRepoError:
        raise HubRepoError(
            f"{where} is a gated model on the Hub: accept its license on the model page, then set HF_TOKEN "
            "to a read token of that account (or run `hf auth login`)",
            location,
        ) from None
    except hub_errors.RepositoryNotFoundError:
        raise InputError(
            f"{where} is neither in the catalog nor on the Hub ({shown_endpoint(endpoint)}); "
            "check the id, or set HF_TOKEN if it is a private model (see 'specgen catalog models')",
            location,
        ) from None
    except hub_errors.RevisionNotFoundError:
        raise HubRepoError(f"revision {short(asked)} of '{repo_id}' does not exist on the Hub", location) from None
    except hub_errors.LocalEntryNotFoundError as exc:  # before EntryNotFoundError, its base class
        said = _refusal(exc.__cause__, hub_errors, where, endpoint) or _offline_message(where, huggingface_hub, unresolved)
        # out of reach (exit 75) where a request was tried and failed in transit or on a 429 / 5xx, or the Hub's name
        # does not resolve; HF_HUB_OFFLINE with the model not cached, or an answer that refuses it, is the input's (1)
        transient = not offline and (unresolved is not None or (exc.__cause__ is not None and out_of_reach(exc.__cause__)))
        raise (UnreachableError if transient else InputError)(said, location) from None
    except hub_errors.EntryNotFoundError:
        raise HubRepoError(f"{where} has no config.json on the Hub: not a transformers model", location) from None
    except Exception as exc:  # the HTTP client's own (too many redirects, a refused path): said, never a traceback
        if out_of_reach(exc):  # a connection closed or reset in the middle of an answer (newuser82 item 7)
            said = _refusal(exc, hub_errors, where, endpoint) or (
                f"cannot reach the Hub ({shown_endpoint(endpoint)}) for {where}: {_said(exc)}{_loop_hint(exc)}"
            )
            raise UnreachableError(said, location) from None
        said = _refusal(exc, hub_errors, where, endpoint) or f"cannot read {where} from the Hub: {_said(exc)}"
        if isinstance(exc, OSError) and exc.filename and exc.strerror:  # hostile91: HOME a file, a cache not writable
            said = (
                f"cannot read {where} from the Hub: its client cannot use {short(str(exc.filename), 200)}: "
                f"{exc.strerror} (it keeps its cache and token under HF_HOME, by default ~/.cache/huggingface: set "
                "HF_HOME to a folder this user may write)"
            )
        if isinstance(exc, UnicodeEncodeError) and "authorization" in str(exc).lower():  # hostile94: 'ascii' codec ...
            said = (
                f"cannot read {where} from the Hub: the token sent (HF_TOKEN, or the one `hf auth login` stored) holds "
                f"a character other than ASCII at its place {max(1, exc.start - len('Bearer ') + 1):,}, which no HTTP header "
                "carries: set it to the token as the Hub shows it (hf_ and letters and digits)"
            )
        raise InputError(said, location) from None
    commit = os.path.basename(os.path.dirname(path))
    if not COMMIT.fullmatch(commit):  # the server's X-Repo-Commit names the cache folder and goes into spec.json
        raise HubRepoError(f"cannot read {where} from the Hub: its commit id {commit[:80]!r} is not a commit", location)
    if revision is not None and COMMIT.fullmatch(revision) and commit != revision:  # fuzz28 M3: sized another commit
        raise HubRepoError(f"cannot read {where} from the Hub: it answered commit {commit}, not the one pinned", location)
    size = os.path.getsize(path)
    if size > MAX_CONFIG_BYTES:  # fuzz27 M4: read whole, a 300 MB config took 958 MB; a local one is capped so
        if not offline:
            _forget_download(path, began_s)
        raise HubRepoError(_too_large(where, size), location)
    with open(path, "rb") as fh:
        raw = fh.read()
    name = hub_config_name(repo_id, commit)
    try:  # read as a local config.json is (fix162 item 1: NaN passed, a refusal had no line)
        text = utf8_text(raw, "model config", name)
        config = config_from_text(text, name, None)
    except InputError as exc:  # the file's place in the message, after the workload's
        raise HubRepoError(str(exc), location) from None
    tensors, notes = _tensor_table(huggingface_hub, hub_errors, repo_id, commit, (unresolved, seconds), location)
    return HubModel(repo_id, asked, commit, config, text, hashlib.sha256(raw).hexdigest(), tensors, notes)


def _written_since(mtime_s: float, began_s: float) -> bool:
    """Whether a file of the Hub cache modified at ``mtime_s`` was written by this run, begun at ``began_s``.

    The file systems' mtime may round down to the second: one from before then is another run's or another tool's.
    """
    return mtime_s >= began_s - 1


def _forget_download(path: str, began_s: float) -> None:
    """Remove a refused ``config.json`` this run downloaded into the Hub cache (its snapshot link and its blob).

    hostile94: a Hub that gives no size before the file (no Content-Length) had 300 MB written to the cache, kept there
    after the refusal. A file in the cache from before ``began_s`` is another run's or another tool's: kept.
    """
    blob = os.path.realpath(path)
    with contextlib.suppress(OSError):
        if _written_since(os.path.getmtime(blob), began_s):
            os.remove(blob)
            if os.path.islink(path):
                os.remove(path)


#: The suffix huggingface_hub gives a blob while it downloads it (``<etag>.incomplete``; 1.x and later
#: ``<etag>.<8 hex>.incomplete``), renamed to the blob once whole.
_INCOMPLETE = ".incomplete"


def _forget_incomplete(hub: Any, repo_id: str, began_s: float) -> None:
    """Remove the partial downloads of ``repo_id`` this run began in the Hub cache, after the wait for them ran out.

    hostile95: the client writes a download to ``blobs/<etag>...incomplete`` and removes it when the download fails,
    but a read specgen gives up on is left running in a thread the exit ends, and the partial file stayed (older
    clients resume a ``<etag>.incomplete`` they find, which a Hub that changed the file since would splice). One from
    before ``began_s`` is another run's, maybe still writing it: kept. The abandoned read, if it writes on, writes to
    the removed file (POSIX) and its final rename fails inside the client.
    """
    blobs = os.path.join(hub.constants.HF_HUB_CACHE, "models--" + repo_id.replace("/", "--"), "blobs")
    with contextlib.suppress(OSError), os.scandir(blobs) as entries:  # closed: no ResourceWarning
        for entry in entries:
            if entry.name.endswith(_INCOMPLETE) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if _written_since(entry.stat(follow_symlinks=False).st_mtime, began_s):
                        os.remove(entry.path)


class _TooLargeError(Exception):
    """A ``config.json`` the Hub says is larger than :data:`MAX_CONFIG_BYTES`, not downloaded."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _too_large(where: str, size: int) -> str:
    return f"{where}: config.json on the Hub is {size:,} bytes, more than the {MAX_CONFIG_BYTES:,} specgen reads"


def _timeout_s(location: Location | None) -> float:
    """:data:`HUB_TIMEOUT_S`, or ``SPECGEN_HUB_TIMEOUT_S`` where set (a positive number of seconds)."""
    given = os.environ.get("SPECGEN_HUB_TIMEOUT_S")
    if given is None:
        return HUB_TIMEOUT_S
    try:
        seconds = float(given)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= threading.TIMEOUT_MAX:  # fuzz28 L2: 1e10 overflowed the wait ("timestamp out of range")
        raise InputError(
            f"SPECGEN_HUB_TIMEOUT_S {given[:40]!r} is not a number of seconds from 0 to {threading.TIMEOUT_MAX:,.0f}",
            location,
        )
    return seconds


def _stalled_message(where: str, endpoint: str, seconds: float, why: str = "") -> str:
    if why:  # hostile94: a rate limit or a failing server, retried past the wait: said, with what to do
        advice = "try again later, or set HF_TOKEN (a higher limit)" if "HTTP 429" in why else "try again later"
        within = "past" if "asks to wait" in why else "not giving it within"
        return (
            f"the Hub ({shown_endpoint(endpoint)}) {why} for {where}, {within} the {seconds:g} s specgen waits "
            f"(SPECGEN_HUB_TIMEOUT_S sets it); {advice}"
        )
    return (
        f"the Hub ({shown_endpoint(endpoint)}) did not finish answering for {where} within {seconds:g} s (SPECGEN_HUB_TIMEOUT_S "
        "sets the wait); on a runner without network set HF_HUB_OFFLINE=1 to read the Hub cache only"
    )


#: Names of the HTTP clients' errors for a request that got no whole answer (huggingface_hub 1.x and 2.x use httpx or
#: its fork httpx2, 0.x requests): matched by name in the class's ancestry, whichever of them the installed hub uses.
_TRANSIT_ERRORS = frozenset(
    {
        "TimeoutException",  # httpx: ConnectTimeout, ReadTimeout, WriteTimeout, PoolTimeout
        "NetworkError",  # httpx: ConnectError, ReadError, WriteError, CloseError
        "RemoteProtocolError",  # httpx: the server closed the connection without (a whole) answer
        "ProxyError",  # httpx and requests: the proxy did not carry the request
        "Timeout",  # requests: ConnectTimeout, ReadTimeout
        "ConnectionError",  # requests' and Python's own (refused, reset, aborted)
        "TimeoutError",  # Python's
    }
)


def out_of_reach(exc: BaseException) -> bool:
    """Whether ``exc`` says the Hub could not be reached now, where it may answer later (exit 75, newuser82 item 7).

    No connection, a connection closed or reset before a whole answer, no answer in time (the HTTP client's errors),
    or an answer of HTTP 429 (too many requests) or 5xx (the server failed), after huggingface_hub's retries, or
    redirects that never end in an answer (hostile84 item 3: a CDN, proxy or captive portal sending a request round in
    a loop is no answer from the Hub either; it exited 1 as a server that is no Hub). Not: ``HF_HUB_OFFLINE``
    (huggingface_hub's ``OfflineModeIsEnabled`` is a ``ConnectionError``), a 4xx that refuses the model or the token,
    or a server that is no Hub.
    """
    if type(exc).__name__ == "OfflineModeIsEnabled":
        return False
    if _redirect_loop(exc):
        return True
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int):
        return status == 429 or 500 <= status <= 599
    return any(kind.__name__ in _TRANSIT_ERRORS for kind in type(exc).__mro__)


def _redirect_loop(exc: BaseException) -> bool:
    """Whether ``exc`` is the HTTP client's redirects that never end in an answer (httpx's and requests' alike)."""
    return any(kind.__name__ == "TooManyRedirects" for kind in type(exc).__mro__)


def _loop_hint(exc: BaseException) -> str:
    """What a redirect loop means, after the HTTP client's words (which name no cause)."""
    if not _redirect_loop(exc):
        return ""
    return (
        " (its answers redirect in a loop: a proxy, mirror or captive portal in the way; try again later, or check "
        "HF_ENDPOINT and the proxy settings)"
    )


def _said(exc: BaseException) -> str:
    """An HTTP client's error as one line: its first line, after its type where that says more (TooManyRedirects)."""
    text = one_line(str(exc).splitlines()[0]) if str(exc).strip() else ""  # the server's words, escapes shown
    kind = type(exc).__name__
    return f"{kind}: {text}" if text and kind not in ("OSError", "HfHubHTTPError") else text or kind


def _check_endpoint(endpoint: str, location: Location | None) -> None:
    """Refuse an ``HF_ENDPOINT`` that is no http(s) URL (empty, as a CI template leaves it; ``file://``; a bad port)."""
    from urllib.parse import urlsplit

    try:
        if not endpoint.isprintable() or endpoint != endpoint.strip():  # fuzz28 L2: a space or newline pasted with it
            raise ValueError(endpoint)
        parts = urlsplit(endpoint)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        valid = valid and (parts.port is None or parts.port > 0)  # reading the port checks its range
        # hostile94: 'http://a b' read as a host that does not resolve, exit 75 ("try again later") for a typo
        valid = valid and not any(c.isspace() or c in '<>"{}|\\^`' for c in parts.hostname or "")
    except ValueError:
        valid = False
    if not valid:
        raise InputError(
            f"HF_ENDPOINT {shown_endpoint(endpoint)[:200]!r} is not an http(s) URL of a Hub (such as "
            "https://huggingface.co); unset it, or set HF_HUB_OFFLINE=1 to read the Hub cache only",
            location,
        )


#: Environment variables that send requests through a proxy, which resolves the Hub's name itself.
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _unresolvable_host(endpoint: str) -> str | None:
    """The Hub's host name when it does not resolve here and no proxy resolves it instead; else None.

    A runner without network (air-gapped CI) then reads the Hub cache at once: huggingface_hub retries a failed
    request five times with back-off, 23 s per model (newuser24 item 11), for an answer a name lookup gives in
    milliseconds.
    """
    import socket
    from urllib.parse import urlsplit

    host = urlsplit(endpoint).hostname
    if not host or any(os.environ.get(name) for name in _PROXY_VARIABLES):
        return None
    try:
        socket.getaddrinfo(host, None)
    except OSError:  # socket.gaierror: the name does not resolve
        return host
    return None


def _refusal(cause: BaseException | None, hub_errors: Any, where: str, endpoint: str) -> str | None:
    """What a server that answered said, where the Hub client reports it as no answer (``cause``: what it caught).

    newuser58 item 5: a mirror's plain 403 / 404 / 429, or a server that is no Hub (no ``X-Repo-Commit``), read as "no
    answer" with advice to go offline.
    """
    shown = shown_endpoint(endpoint)
    if isinstance(cause, hub_errors.FileMetadataError):
        return (
            f"{shown} does not answer as a Hub for {where} (no X-Repo-Commit header, which a Hub gives every file): "
            "check that HF_ENDPOINT points at the mirror's Hub API"
        )
    response = getattr(cause, "response", None) if isinstance(cause, hub_errors.HfHubHTTPError) else None
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    said = f"the Hub ({shown}) answered HTTP {status} for the config.json of {where}"
    if status in (401, 403):
        from huggingface_hub import get_token  # the environment's, else the one `hf auth login` stored (review38 item 9)

        token = get_token()
        return said + (
            ": the token sent (HF_TOKEN, or the one `hf auth login` stored) was refused; check that it may read the repository"
            if token
            else ": set HF_TOKEN to a token that may read the repository"
        )
    if status == 429:
        return said + ": it limits the rate of requests; try again later, or set HF_TOKEN (a higher limit)"
    if 500 <= status <= 599:
        return said + ": a failure of the server's, after huggingface_hub's retries; try again later"
    return said


def _offline_message(where: str, hub: Any, unresolved: str | None) -> str:
    cache = f"{where} is not in the Hub cache ({hub.constants.HF_HUB_CACHE})"
    if hub.constants.HF_HUB_OFFLINE:
        return f"HF_HUB_OFFLINE is set and {cache}; run once online"
    shown = shown_endpoint(hub.constants.ENDPOINT)
    if unresolved:
        failed = f"cannot reach the Hub ({shown}: its name {unresolved} does not resolve)"
    else:  # fuzz27 L5: a Hub answering 500 to every request was "cannot reach"
        failed = f"cannot read from the Hub ({shown}: no answer, or an error after its retries)"
    return f"{failed} and {cache}; on a runner without network set HF_HUB_OFFLINE=1 so that no request is tried"


def shown_endpoint(endpoint: str) -> str:
    """``endpoint`` as a message shows it: without a user name and password (fuzz27 L5: printed into CI logs)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(endpoint)
        host = parts.hostname or ""
        netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    except ValueError:  # not a URL: as given, unless it may hold a password
        return "(a URL with a user name)" if "@" in endpoint else endpoint
    return urlunsplit(parts._replace(netloc=netloc)) if "@" in parts.netloc else endpoint


#: The most bytes one cached tensor may take (2^50, a petabyte): more is a damaged or planted entry.
_MAX_TENSOR_BYTES = 1 << 50


def _headers_unread(repo_id: str, commit: str, failed: str) -> str:
    """Why a check cannot be made: the Hub out of reach for the safetensors headers (fix143)."""
    import huggingface_hub

    return (
        f"the Hub ({shown_endpoint(huggingface_hub.constants.ENDPOINT)}) {failed} while reading the safetensors headers "
        f"of {repo_id}@{commit}: the check could not be made (sized from the config instead, the plan may differ from "
        "the committed one for the outage alone); try again later"
    )


def _cached_tensors(table: Any) -> list[Tensor] | None:
    """The tensors of a cached table, or None where it is damaged: every row a name, a safetensors dtype and bytes.

    fuzz27 M2: the rows were taken as read, so a planted entry on a shared ``HF_HOME`` sized a model at 10^23 bytes.
    """
    try:
        rows = json.loads(table.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(rows, list):
        return None
    tensors = []
    names: set[str] = set()
    for row in rows:
        if not (isinstance(row, list) and len(row) == 3):
            return None
        name, dtype, size = row
        valid_size = isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= _MAX_TENSOR_BYTES
        if not (isinstance(name, str) and dtype in DTYPE_BITS and valid_size) or name in names:  # fuzz28 L3: twice
            return None
        names.add(name)
        tensors.append(Tensor(name, dtype, size))
    return tensors


def _index_bytes(hub: Any, repo_id: str, commit: str) -> int | None:
    """The size the Hub gives for the checkpoint's safetensors index, before the client downloads it (None: none said).

    The client downloads the index whole (into the Hub cache) and reads it whole.

    hostile94: a 300 MB index was downloaded into the Hub cache, left there, and parsed whole (657 MB of memory), the
    model then sized; a local index is refused past :data:`MAX_INDEX_BYTES`.
    """
    try:
        size = hub.get_hf_file_metadata(hub.hf_hub_url(repo_id, INDEX_FILE, revision=commit)).size
    except Exception:  # no index (one file, or no safetensors), or no answer: get_safetensors_metadata says which
        return None
    return size if isinstance(size, int) else None


def _tensor_table(
    hub: Any, hub_errors: Any, repo_id: str, commit: str, reach: tuple[str | None, float], location: Location | None = None
) -> tuple[list[Tensor] | None, tuple[str, ...]]:
    """The checkpoint's tensors: from the assets cache, else from the safetensors headers on the Hub.

    ``reach``: the Hub's host where its name does not resolve (else None), and the seconds a read may take. Headers
    the Hub gives that are malformed are an error at ``location`` (the workload's ``model``), whether the Hub client
    or specgen's check finds it; one the Hub does not give is a note, the config sizing the weights (newuser58
    item 3: the one had no location, the other a note quoting an AttributeError).
    """
    unresolved, seconds = reach
    cache = hub.cached_assets_path(library_name="specgen", namespace=repo_id.replace("/", "--"), subfolder=commit)
    table = cache / _TENSOR_TABLE
    damaged = False
    if table.is_file():
        cached = _cached_tensors(table)
        if cached is not None:
            return cached, ()
        damaged = True  # read again from the Hub where it answers
    if hub.constants.HF_HUB_OFFLINE or unresolved:
        why = "HF_HUB_OFFLINE" if hub.constants.HF_HUB_OFFLINE else f"{unresolved} does not resolve"
        if damaged:  # fuzz27 M2: it was read online once; the cache entry is what is wrong
            return None, (f"{why}: the cached tensor table {table} is damaged (delete it, or run online once); weights "
                          "sized from the config",)  # fmt: skip
        return None, (f"{why}: the safetensors headers were never read online; weights sized from the config",)

    def read_headers() -> Any:
        index_bytes = _index_bytes(hub, repo_id, commit)
        if index_bytes is not None and index_bytes > MAX_INDEX_BYTES:  # the cap a local index is read under
            raise _TooLargeError(index_bytes)
        meta = hub.HfApi().get_safetensors_metadata(repo_id, revision=commit)
        return meta, file_sizes(hub, repo_id, commit, sorted(meta.files_metadata))

    began_s = time.time()  # an index download cut by the wait from here on is this run's to remove
    try:
        meta, sizes = bounded(read_headers, seconds)
    except _TooLargeError as exc:
        raise HubRepoError(
            f"{repo_id}@{commit}: its {INDEX_FILE} on the Hub is {exc.size:,} bytes, more than the {MAX_INDEX_BYTES:,} "
            "specgen reads (DeepSeek-V3's is about 9 MB)",
            location,
        ) from None
    except StalledError as exc:
        _forget_incomplete(hub, repo_id, began_s)
        failed = f"{exc.why}, past the {seconds:g} s specgen waits," if exc.why else f"did not answer within {seconds:g} s"
        if _OUTAGE_FAILS[0]:
            raise HeadersUnreachableError(_headers_unread(repo_id, commit, failed), location) from None
        if exc.why:
            said = f"the Hub {exc.why} for the safetensors headers, past the {seconds:g} s specgen waits"
        else:
            said = f"the Hub did not give the safetensors headers within {seconds:g} s"
        return None, (f"{said}; weights sized from the config",)
    except hub_errors.NotASafetensorsRepoError:
        return None, ("the Hub repository has no safetensors weights; weights sized from the config",)
    except (hub_errors.SafetensorsParsingError, json.JSONDecodeError, AttributeError, TypeError, KeyError) as exc:
        raise HubRepoError(f"{repo_id}@{commit}: its safetensors headers are malformed ({_said(exc)})", location) from None
    except Exception as exc:  # the HTTP client's own too (too many redirects): a note, the config still sizes it
        if _OUTAGE_FAILS[0] and out_of_reach(exc):  # a connection, a timeout, a 429 / 5xx (fix143)
            raise HeadersUnreachableError(_headers_unread(repo_id, commit, f"failed ({_said(exc)})"), location) from None
        return None, (f"safetensors headers could not be read ({_said(exc)}); weights sized from the config",)
    try:
        tensors = []
        for file, file_meta in sorted(meta.files_metadata.items()):
            label = f"{repo_id}@{commit}/{file}"
            data_bytes = data_section_bytes(label, sizes.get(file))
            for name, info in file_meta.tensors.items():
                offsets = list(info.data_offsets)
                tensors.append(checked_tensor(label, name, str(info.dtype), list(info.shape), offsets, data_bytes))
            spans = [(*info.data_offsets, name) for name, info in file_meta.tensors.items()]
            check_end_to_end(label, spans, data_bytes)
        tensors.sort()
    except InputError as exc:
        raise HubRepoError(exc.message, location) from None
    with contextlib.suppress(OSError):  # a read-only cache only costs the next run a few range requests
        table.write_text(json.dumps([list(t) for t in tensors]), encoding="utf-8")
    return tensors, ()
