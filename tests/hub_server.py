"""A local stand-in for the Hugging Face Hub's file API, for tests (127.0.0.1 only, no internet).

It answers what ``huggingface_hub`` asks of ``{HF_ENDPOINT}/{repo}/resolve/{revision}/{file}``:
HEAD and GET with the ``X-Repo-Commit``, ``ETag`` and ``Content-Length`` headers, HTTP range
requests (``Range: bytes=a-b`` -> 206), and the Hub's error convention (``X-Error-Code``
``RepoNotFound`` / ``GatedRepo`` with 401, ``RevisionNotFound`` / ``EntryNotFound`` with 404), as
documented in huggingface_hub's ``hf_raise_for_status``. A file may be "virtual": a real prefix
(a safetensors header) followed by zeros up to a declared size, so a test can prove that only the
header was read.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "hf_test_token"
#: A GET of a whole file larger than this fails the request: only headers may be read.
MAX_WHOLE_FILE_BYTES = 10_000_000


@dataclass
class VirtualFile:
    """``prefix`` followed by zeros up to ``size`` bytes."""

    prefix: bytes
    size: int

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` inclusive."""
        end = min(end, self.size - 1)
        head = self.prefix[start : end + 1]
        return head + b"\0" * (end + 1 - start - len(head))


@dataclass
class Repo:
    """One model repository: revisions (name -> commit) and files per commit."""

    revisions: dict[str, str]
    files: dict[str, dict[str, VirtualFile]]
    gated: bool = False


@dataclass
class FakeHub:
    """The repositories served and a log of every request (method, path, range, bytes sent)."""

    repos: dict[str, Repo] = field(default_factory=dict)
    log: list[tuple[str, str, str | None, int]] = field(default_factory=list)
    url: str = ""


def safetensors_bytes(tensors: dict[str, tuple[str, list[int], int]]) -> tuple[bytes, int]:
    """A safetensors header for ``name -> (dtype, shape, nbytes)``, and the whole file's size."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape, nbytes) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, 8 + len(text) + offset


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _error(self, status: int, code: str, message: str) -> None:
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("X-Error-Message", message)
            self.send_header("Content-Length", "0")
            self.end_headers()
            hub.log.append((self.command, self.path, self.headers.get("Range"), 0))

        def _serve(self, body: bool) -> None:
            match = _RESOLVE.match(self.path.split("?")[0])
            if match is None:
                self._error(404, "EntryNotFound", "unknown route")
                return
            repo = hub.repos.get(match["repo"])
            if repo is None:
                self._error(401, "RepoNotFound", "Repository not found")
                return
            if repo.gated and self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._error(401, "GatedRepo", "Access to this model is restricted: you must be authenticated")
                return
            rev = match["rev"].replace("%2F", "/")
            commit = repo.revisions.get(rev, rev if rev in repo.files else None)
            if commit is None:
                self._error(404, "RevisionNotFound", "Invalid rev id")
                return
            file = repo.files[commit].get(match["file"])
            if file is None:
                self._error(404, "EntryNotFound", "Entry not found")
                return
            start, end, status = 0, file.size - 1, 200
            ranged = self.headers.get("Range")
            if body and not ranged and file.size > MAX_WHOLE_FILE_BYTES:
                self._error(500, "TestRefusal", "the test Hub does not send weights")
                return
            if ranged:
                a, b = ranged.removeprefix("bytes=").split("-")
                start, end, status = int(a), min(int(b) if b else file.size - 1, file.size - 1), 206
            data = file.read(start, end) if body else b""
            self.send_response(status)
            self.send_header("X-Repo-Commit", commit)
            self.send_header("ETag", '"' + hashlib.sha256(file.prefix + str(file.size).encode()).hexdigest() + '"')
            self.send_header("Content-Length", str(end + 1 - start))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{file.size}")
            self.end_headers()
            sent = 0
            if body:
                self.wfile.write(data)
                sent = len(data)
            hub.log.append((self.command, self.path, ranged, sent))

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

    return Handler


@contextmanager
def serve(hub: FakeHub, handler: type | None = None) -> Iterator[FakeHub]:
    """Run ``hub`` on 127.0.0.1 (a free port) for the duration of the block (``handler``: a subclass of its own)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler or _handler(hub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
