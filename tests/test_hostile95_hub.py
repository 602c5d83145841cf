"""Hostile Hub answers (hostile95), through the real ``huggingface_hub`` client against a local server on 127.0.0.1.

- A safetensors file whose header is consistent but whose tensors end past the file's size (or short of it) was
  sized as the header said: only the header is read, by range requests.
- A download the wait gave up on left huggingface_hub's ``.incomplete`` file in the Hub cache.
- The 429 / Retry-After reading relied on the client's warning text; it now reads the HTTP answers.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from generator.calculator import hub_wait
from tests.hub_server import FakeHub, Repo, VirtualFile, safetensors_bytes, serve
from tests.test_hub import C1, QWEN, hf_tensors, sharded_repo, specgen

COMMIT = "5" * 40


def _single(delta_bytes: int) -> dict[str, VirtualFile]:
    """A Qwen checkpoint in one file whose size on the Hub is ``delta_bytes`` off what its header says."""
    header, size = safetensors_bytes(hf_tensors(json.loads(QWEN)))
    return {"config.json": VirtualFile(QWEN, len(QWEN)), "model.safetensors": VirtualFile(header, size + delta_bytes)}


def _sharded(delta_bytes: int) -> dict[str, VirtualFile]:
    """The sharded Qwen checkpoint, its second shard ``delta_bytes`` off."""
    files = sharded_repo(QWEN)
    shard = files["model-00002-of-00002.safetensors"]
    files["model-00002-of-00002.safetensors"] = VirtualFile(shard.prefix, shard.size + delta_bytes)
    return files


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (_single(-4096), "/model.safetensors: tensor 'model.layers.27.self_attn.q_proj.bias' ends at byte "),
        (_single(-1), "-byte data section"),
        (_single(+512), "/model.safetensors: its data section is "),
        (_sharded(-2), "/model-00002-of-00002.safetensors: tensor "),
        (_sharded(+8), "/model-00002-of-00002.safetensors: its data section is "),
    ],
)
def test_a_hub_file_shorter_or_longer_than_its_header_says_is_refused(
    tmp_path: Path, files: dict[str, VirtualFile], message: str
) -> None:
    with serve(FakeHub(repos={"fz/m": Repo({"main": C1}, {C1: files})})) as hub:
        run = specgen(hub, tmp_path, "estimate", "fz/m", "--json")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"fz/m@{C1}" in run.stderr and message in run.stderr, run.stderr
    assert not run.stdout


def test_a_hub_file_of_the_size_its_header_says_is_sized(tmp_path: Path) -> None:
    for files in (_single(0), _sharded(0)):
        with serve(FakeHub(repos={"fz/m": Repo({"main": C1}, {C1: files})})) as hub:
            run = specgen(hub, tmp_path / str(len(files)), "estimate", "fz/m", "--json")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["weights_from"] == f"safetensors headers of fz/m@{C1}"


def _stalling_handler() -> type[BaseHTTPRequestHandler]:
    """A Hub whose config.json says 10,000 bytes, sends 100 of them and then nothing."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self, body: bool) -> None:
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", '"stalled-etag"')
            self.send_header("Content-Length", "10000")
            self.end_headers()
            if body:
                self.wfile.write(b"{" + b" " * 99)
                self.wfile.flush()
                time.sleep(30)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

    return Handler


@contextmanager
def _server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Url:
    def __init__(self, url: str) -> None:
        self.url = url


def test_a_download_cut_by_the_wait_leaves_no_incomplete_file(tmp_path: Path) -> None:
    with _server(_stalling_handler()) as url:
        run = specgen(_Url(url), tmp_path, "estimate", "fz/slow", "--from-hub", SPECGEN_HUB_TIMEOUT_S="3")  # type: ignore[arg-type]
    assert run.returncode == 75 and "Traceback" not in run.stderr, run.stderr
    assert "did not finish answering for 'fz/slow' within 3 s" in run.stderr
    assert not list(tmp_path.rglob("*.incomplete")), sorted(str(p) for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("offline", [False, True])
def test_a_partial_download_in_the_cache_is_not_read_as_the_file(tmp_path: Path, offline: bool) -> None:
    """An ``<etag>.incomplete`` (as older clients name it, and resume) holding half a config is never the config."""
    files = _single(0)
    with serve(FakeHub(repos={"fz/m": Repo({"main": C1}, {C1: files})})) as hub:
        if offline:  # a first run's cache holds the model's snapshot folder but no whole config
            blobs = tmp_path / "hub" / "models--fz--m" / "blobs"
        else:
            assert specgen(hub, tmp_path / "first", "estimate", "fz/m", "--json").returncode == 0
            blobs = next((tmp_path / "first").rglob("blobs"))
            tmp_path = tmp_path / "first"
            for blob in blobs.iterdir():  # the whole config gone, its partial download left
                blob.unlink()
        blobs.mkdir(parents=True, exist_ok=True)
        config = files["config.json"]
        etag = hashlib.sha256(config.prefix + str(config.size).encode()).hexdigest()  # the test Hub's ETag
        (blobs / f"{etag}.incomplete").write_bytes(QWEN[: len(QWEN) // 2])
        env = {"HF_HUB_OFFLINE": "1"} if offline else {}
        run = specgen(hub, tmp_path, "estimate", "fz/m", "--json", **env)
    if offline:
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
        assert "HF_HUB_OFFLINE is set and 'fz/m' is not in the Hub cache" in run.stderr
    else:
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["weights_from"] == f"safetensors headers of fz/m@{C1}"


def _rate_limit_handler(header: str, value: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(429)
            self.send_header(header, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


class _Reworded(logging.Filter):
    """The client's warnings as another release might word them."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = "the server asked us to slow down; sleeping", ()
        return True


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Retry-After", "3600"),
        ("Retry-After", "an hour from now"),  # formed at run time: a collection-time date differs between xdist workers
        ("RateLimit", '"api";r=0;t=3600'),
    ],
)
def test_a_rate_limit_is_read_from_the_answer_not_the_clients_words(
    header: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # tests/conftest.py sets it
    if value == "an hour from now":
        value = email.utils.formatdate(time.time() + 3600, usegmt=True)
    logger = logging.getLogger("huggingface_hub.utils._http")
    reworded = _Reworded()
    logger.addFilter(reworded)
    try:
        with _server(_rate_limit_handler(header, value)) as url:
            began = time.monotonic()
            with pytest.raises(hub_wait.StalledError) as caught:
                hub_wait.bounded(
                    lambda: huggingface_hub.get_hf_file_metadata(f"{url}/fz/m/resolve/main/config.json", retry_on_errors=True), 8
                )
            took = time.monotonic() - began
    finally:
        logger.removeFilter(reworded)
    assert caught.value.why.startswith("answered HTTP 429 (too many requests) once and asks to wait 3,")
    assert caught.value.why.endswith(" s before the next request")
    assert took < 6  # at once, not after the 8 s wait
