"""A Hub that rate-limits for an hour, streams a config of unstated size, or lies in a safetensors header (hostile94).

Each case runs a fresh ``specgen`` process through the real ``huggingface_hub`` client against a local server on
127.0.0.1 (tests/hub_server.py's, or a handler of this file's that answers one way).
"""

from __future__ import annotations

import json
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from generator.calculator.safetensors_header import directory_weight_files
from tests.hub_server import FakeHub, Repo, VirtualFile, safetensors_bytes, serve
from tests.test_hub import C1, QWEN, hf_tensors, sharded_repo, specgen

COMMIT = "3" * 40
#: What the unstated config streams: more than the 4 MiB specgen reads.
STREAMED_BYTES = 64 << 20


def _handler(mode: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self, body: bool) -> None:
            if mode == "rate-limit-hour":
                self.send_response(429)
                self.send_header("Retry-After", "3600")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{COMMIT}-etag"')
            if not body:  # no Content-Length: the size is not said before the file
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b" " * (1 << 20)
            try:
                for _ in range(STREAMED_BYTES // len(chunk)):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the client stopped reading
                pass

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

    return Handler


@contextmanager
def _hub(mode: str) -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(mode))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield _Endpoint(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


class _Endpoint:
    """What :func:`tests.test_hub.specgen` reads of a hub: its URL."""

    def __init__(self, url: str) -> None:
        self.url = url


def test_a_rate_limit_asking_for_an_hour_is_said_at_once(tmp_path: Path) -> None:
    """A 429 with ``Retry-After: 3600`` had huggingface_hub sleep an hour; specgen said after its wait that the Hub
    "did not finish answering", the 429 unsaid. The wait asked past specgen's ends it at once, in words."""
    with _hub("rate-limit-hour") as hub:
        began = time.monotonic()
        run = specgen(hub, tmp_path, "estimate", "fz/tiny", "--from-hub", SPECGEN_HUB_TIMEOUT_S="40")
        took = time.monotonic() - began
    assert run.returncode == 75 and "Traceback" not in run.stderr, run.stderr
    assert (
        f"the Hub ({hub.url}) answered HTTP 429 (too many requests) once and asks to wait 3,600 s before the next request "
        "for 'fz/tiny', past the 40 s specgen waits (SPECGEN_HUB_TIMEOUT_S sets it); try again later, or set HF_TOKEN"
    ) in run.stderr
    assert took < 30  # not the 40 s wait: a cold start on a busy machine


def test_a_config_of_unstated_size_is_refused_and_not_left_in_the_cache(tmp_path: Path) -> None:
    """A Hub that says no size before the file streamed 64 MiB into the Hub cache, kept there after the refusal."""
    with _hub("unstated-size") as hub:
        run = specgen(hub, tmp_path, "estimate", "fz/tiny", "--from-hub")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"'fz/tiny': config.json on the Hub is {STREAMED_BYTES:,} bytes, more than the 4,194,304" in run.stderr
    kept = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink())
    assert kept < 1 << 20, sorted(str(p) for p in tmp_path.rglob("*"))


def _lying_repo(move: str) -> dict[str, VirtualFile]:
    """A Qwen checkpoint whose header moves tensor ``move`` past the others (a hole where it was)."""
    header, size = safetensors_bytes(hf_tensors(json.loads(QWEN)))
    table = json.loads(header[8:])
    begin, end = table[move]["data_offsets"]
    table[move]["data_offsets"] = [2 * size, 2 * size + end - begin]
    text = json.dumps(table).encode()
    text += b" " * (-len(text) % 8)
    return {
        "config.json": VirtualFile(QWEN, len(QWEN)),
        # as large as the header says (hostile95 checks the file's size first): the hole is what is wrong
        "model.safetensors": VirtualFile(struct.pack("<Q", len(text)) + text, 8 + len(text) + 2 * size + end - begin),
    }


def test_a_safetensors_header_claiming_bytes_past_the_others_is_refused(tmp_path: Path) -> None:
    """Its tensors were counted as the header said; the safetensors readers refuse a header with a hole (InvalidOffset)."""
    with serve(FakeHub(repos={"fz/tiny": Repo({"main": C1}, {C1: _lying_repo("model.norm.weight")})})) as hub:
        run = specgen(hub, tmp_path, "estimate", "fz/tiny", "--json")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"fz/tiny@{C1}/model.safetensors: tensor 'lm_head.weight' begins at byte " in run.stderr
    assert "unclaimed: the safetensors readers refuse such a header" in run.stderr


def test_an_endpoint_whose_host_holds_a_space_is_refused_not_out_of_reach(tmp_path: Path) -> None:
    """'http://a b' read as a host that does not resolve: exit 75, "try again later", for a setting that never works."""
    run = specgen(_Endpoint("http://hf mirror"), tmp_path, "estimate", "fz/tiny", "--from-hub")  # type: ignore[arg-type]
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "HF_ENDPOINT 'http://hf mirror' is not an http(s) URL of a Hub" in run.stderr


def test_a_safetensors_index_larger_than_specgen_reads_is_not_downloaded(tmp_path: Path) -> None:
    """A 300 MB index was downloaded into the Hub cache, kept there, and parsed whole (657 MB of memory)."""
    files = sharded_repo(QWEN)
    files["model.safetensors.index.json"] = VirtualFile(b'{"metadata": {"pad": "', 70 << 20)
    with serve(FakeHub(repos={"fz/sharded": Repo({"main": C1}, {C1: files})})) as hub:
        run = specgen(hub, tmp_path, "estimate", "fz/sharded", "--json")
        fetched = [entry for entry in hub.log if entry[0] == "GET" and entry[1].endswith("index.json")]
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"fz/sharded@{C1}: its model.safetensors.index.json on the Hub is 73,400,320 bytes, more than the " in run.stderr
    assert not fetched


def test_a_local_index_of_deepseek_v3_size_is_read(tmp_path: Path) -> None:
    """DeepSeek-V3's index names 91,982 tensors in about 8.9 MB: the 4 MiB a config.json is read to refused it."""
    shard = "model-00001-of-00001.safetensors"
    weight_map = {f"model.layers.{i // 1536}.mlp.experts.{i % 256}.w{i}.weight_scale_inv": shard for i in range(91_982)}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}, indent=2))
    (tmp_path / shard).write_bytes(b"")
    assert (tmp_path / "model.safetensors.index.json").stat().st_size > 8 << 20
    assert directory_weight_files(str(tmp_path)) == [str(tmp_path / shard)]


def test_a_token_holding_a_character_no_header_carries_is_named_as_the_token(tmp_path: Path) -> None:
    """A token pasted with an accented letter read "UnicodeEncodeError: 'ascii' codec can't encode character ..."."""
    with serve(FakeHub(repos={"fz/tiny": Repo({"main": C1}, {C1: _lying_repo("model.norm.weight")})})) as hub:
        run = specgen(hub, tmp_path, "estimate", "fz/tiny", "--from-hub", HF_TOKEN="hf_tökén")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert (
        "cannot read 'fz/tiny' from the Hub: the token sent (HF_TOKEN, or the one `hf auth login` stored) holds a "
        "character other than ASCII at its place 5, which no HTTP header carries" in run.stderr
    )
    assert "tökén" not in run.stderr and "codec" not in run.stderr
