"""Exit codes a CI job can act on (newuser82 items 7 and 8).

Item 7: a Hub out of reach (no connection, a connection closed without an answer, HTTP 429 or 5xx, no answer in time)
exited 1, as a broken workload file does; it now exits 75 (``EX_TEMPFAIL``: retry), while a model the Hub says does
not exist, a gated one without a token, or a plain 403 / 404 stays 1 (fix the file or the token). Each case runs
``specgen`` as a process through the real ``huggingface_hub`` client against a server on 127.0.0.1.

Item 8: ``diff --exit-code`` exits 6 where a file changes the fleet, 0 where none does; without it, 0 either way.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers import VALID
from tests.hub_server import serve
from tests.test_hub import make_hub, specgen

UNREACHABLE = 75
FLEET_CHANGED = 6


def _handler(mode: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            if mode == "close":  # takes the connection and closes it without a word (a crashing proxy, a reset)
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self.send_response(int(mode))
            self.send_header("Retry-After", "0")  # huggingface_hub's retries without its back-off's waits
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_HEAD(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

    return Handler


@contextmanager
def _hub(mode: str) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(mode))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> str:
    """A local URL nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Endpoint:
    def __init__(self, url: str) -> None:
        self.url = url


def _workload(path: Path, model: str, name: str = "hubchat") -> Path:
    path.write_text(
        f"version: 1\nname: {name}\ndeployments:\n  - name: chat\n    model: {model}\n"
        "    inference: {max_context_tokens: 4096, avg_input_tokens: 500, avg_output_tokens: 100, requests_per_second: 1}\n"
        "hardware: {provider: aws}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("mode", "code", "said"),
    [
        pytest.param("503", UNREACHABLE, "answered HTTP 503 for the config.json of 'acme/not-a-model-7b': a failure", id="503"),
        pytest.param("500", UNREACHABLE, "answered HTTP 500 for the config.json of 'acme/not-a-model-7b'", id="500"),
        pytest.param("429", UNREACHABLE, "answered HTTP 429 for the config.json of 'acme/not-a-model-7b': it limits", id="429"),
        pytest.param("close", UNREACHABLE, "for 'acme/not-a-model-7b': RemoteProtocolError: Server disconnected", id="close"),
        pytest.param("404", 1, "answered HTTP 404 for the config.json of 'acme/not-a-model-7b'", id="404"),
        pytest.param("403", 1, "answered HTTP 403 for the config.json of 'acme/not-a-model-7b': set HF_TOKEN", id="403"),
    ],
)
def test_a_hub_out_of_reach_exits_75_and_a_refusal_1(tmp_path: Path, mode: str, code: int, said: str) -> None:
    workload = _workload(tmp_path / "h.yaml", "acme/not-a-model-7b")
    with _hub(mode) as url:
        run = specgen(_Endpoint(url), tmp_path / "home", "validate", str(workload))  # type: ignore[arg-type]
    assert run.returncode == code and "Traceback" not in run.stderr, run.stderr
    assert "h.yaml:5:12: deployments[0].model: unknown model 'acme/not-a-model-7b'" in run.stderr
    assert said in run.stderr and url in run.stderr  # the model and the endpoint


def test_a_hub_refusing_connections_exits_75(tmp_path: Path) -> None:
    url = _closed_port()
    run = specgen(_Endpoint(url), tmp_path, "estimate", "fz/tiny", "--from-hub")  # type: ignore[arg-type]
    assert run.returncode == UNREACHABLE and "Traceback" not in run.stderr, run.stderr
    assert f"cannot read from the Hub ({url}: no answer, or an error after its retries) and 'fz/tiny' is not in" in run.stderr


def test_a_model_the_hub_does_not_have_or_gates_still_exits_1(tmp_path: Path) -> None:
    with serve(make_hub()) as hub:
        missing = specgen(hub, tmp_path, "validate", str(_workload(tmp_path / "m.yaml", "acme/nope-7b")))
        gated = specgen(hub, tmp_path, "validate", str(_workload(tmp_path / "g.yaml", "acme/llama-8b-gated")))
        offline = specgen(hub, tmp_path, "estimate", "acme/qwen-7b-sharded", HF_HUB_OFFLINE="1")
    assert missing.returncode == 1 and "'acme/nope-7b' is neither in the catalog nor on the Hub" in missing.stderr
    assert gated.returncode == 1 and "'acme/llama-8b-gated' is a gated model on the Hub" in gated.stderr
    assert offline.returncode == 1 and "HF_HUB_OFFLINE is set" in offline.stderr  # no retry reads an empty cache


def test_a_file_to_fix_outranks_a_hub_out_of_reach(tmp_path: Path) -> None:
    """Several files: any that is invalid (1) or infeasible (3) gives the exit code, whatever its place; 75 only where
    every failure is a source out of reach (a retry would otherwise fail the same way)."""
    hub_file = _workload(tmp_path / "a.yaml", "acme/not-a-model-7b")
    broken = tmp_path / "b.yaml"
    broken.write_text(VALID.replace("requests_per_second: 2", "requests_per_second: -2"), encoding="utf-8")
    infeasible = tmp_path / "c.yaml"
    infeasible.write_text((REPO / "examples" / "infeasible" / "home-405b.yaml").read_text(), encoding="utf-8")
    with _hub("close") as url:
        both = specgen(_Endpoint(url), tmp_path / "home", "validate", str(hub_file), str(broken))  # type: ignore[arg-type]
        also = specgen(_Endpoint(url), tmp_path / "home", "plan", str(hub_file))  # type: ignore[arg-type]
    assert both.returncode == 1, both.stderr
    assert "a.yaml:5:12" in both.stderr and "b.yaml" in both.stderr  # both said, in path order
    assert also.returncode == UNREACHABLE, also.stderr
    from generator.errors import InfeasibleError, InputError, MultipleInputError, SpecgenError, UnreachableError

    errors: list[SpecgenError] = [UnreachableError("x"), InfeasibleError("y")]
    assert MultipleInputError(errors).exit_code == 3
    errors = [UnreachableError("x"), UnreachableError("y")]
    assert MultipleInputError(errors).exit_code == UNREACHABLE
    errors = [InfeasibleError("y"), InputError("x")]
    assert MultipleInputError(errors).exit_code == 3  # the first's, as before


def test_out_of_reach_by_the_installed_clients_own_errors() -> None:
    """The classes of the huggingface_hub installed and of its HTTP client (httpx2 for 2.x, httpx for 1.x)."""
    import importlib
    import importlib.util

    import huggingface_hub.errors as hub_errors

    from generator.calculator.hub import out_of_reach

    names = [name for name in ("httpx2", "httpx") if importlib.util.find_spec(name) is not None]
    if not names:
        pytest.skip("huggingface_hub 0.x: requests")
    client = importlib.import_module(names[0])
    request = client.Request("GET", "http://127.0.0.1/x")

    def http_error(status: int, kind: Any = hub_errors.HfHubHTTPError) -> bool:
        return out_of_reach(kind(f"{status}", response=client.Response(status, request=request)))

    assert http_error(503) and http_error(500) and http_error(429)
    assert not (http_error(404) or http_error(403) or http_error(401))
    assert not http_error(404, hub_errors.RepositoryNotFoundError)
    assert not out_of_reach(hub_errors.OfflineModeIsEnabled("offline"))  # a ConnectionError, asked for
    assert out_of_reach(ConnectionResetError()) and out_of_reach(TimeoutError())
    assert out_of_reach(client.ConnectError("refused")) and out_of_reach(client.ReadTimeout("slow"))
    assert out_of_reach(client.RemoteProtocolError("Server disconnected without sending a response."))
    assert out_of_reach(client.TooManyRedirects("loop"))  # hostile84 item 3: no answer from the Hub either (75)


# --- diff --base: a file out of reach is `unreachable`, exit 75; `diff --exit-code` (item 8)


def _git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    return repo


def test_diff_base_says_a_file_out_of_reach_and_exits_75(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"w.yaml": VALID})
    _workload(repo / "h.yaml", "acme/not-a-model-7b")  # added by the change
    with _hub("close") as url:
        run = specgen(_Endpoint(url), tmp_path / "home", "diff", "--base", "HEAD", str(repo / "w.yaml"), str(repo / "h.yaml"))  # type: ignore[arg-type]
        as_json = specgen(_Endpoint(url), tmp_path / "home", "diff", "--base", "HEAD", str(repo / "h.yaml"), "--format", "json")  # type: ignore[arg-type]
    assert run.returncode == UNREACHABLE, run.stderr
    assert "### `h.yaml` (unreachable)" in run.stdout
    assert "could not be planned now (a source specgen reads was out of reach: run the check again)" in run.stdout
    assert as_json.returncode == UNREACHABLE
    (entry,) = json.loads(as_json.stdout)["files"]
    assert entry["status"] == "unreachable" and url in entry["errors"][0]


def _rps(rps: int) -> str:
    return VALID.replace("requests_per_second: 2", f"requests_per_second: {rps}")


@pytest.mark.parametrize(
    ("new", "flag", "code"),
    [
        pytest.param(2, "--exit-code", 0, id="unchanged"),
        pytest.param(40, "--exit-code", FLEET_CHANGED, id="changed"),
        pytest.param(40, None, 0, id="changed-without-the-option"),
    ],
)
def test_diff_exit_code_says_whether_the_fleet_changes(tmp_path: Path, new: int, flag: str | None, code: int) -> None:
    repo = _repo(tmp_path, {"w.yaml": _rps(2)})
    (repo / "w.yaml").write_text(_rps(new), encoding="utf-8")
    (tmp_path / "old.yaml").write_text(_rps(2), encoding="utf-8")
    home = tmp_path / "home"
    args = [flag] if flag else []
    base = specgen(_Endpoint(_closed_port()), home, "diff", "--base", "HEAD", str(repo / "w.yaml"), "--format", "json", *args)  # type: ignore[arg-type]
    two = specgen(_Endpoint(_closed_port()), home, "diff", str(tmp_path / "old.yaml"), str(repo / "w.yaml"), *args)  # type: ignore[arg-type]
    assert (base.returncode, two.returncode) == (code, code), base.stderr + two.stderr
    statuses = [f["status"] for f in json.loads(base.stdout)["files"]]
    assert statuses == (["unchanged"] if new == 2 else ["changed"])  # the document is the same with the option


def test_diff_exit_code_leaves_an_invalid_file_its_exit_code(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"w.yaml": _rps(2)})
    (repo / "w.yaml").write_text(_rps(-1), encoding="utf-8")
    run = specgen(_Endpoint(_closed_port()), tmp_path / "home", "diff", "--base", "HEAD", str(repo / "w.yaml"), "--exit-code")  # type: ignore[arg-type]
    assert run.returncode == 1, run.stderr


def test_a_change_of_what_runs_alone_is_no_fleet_change(tmp_path: Path) -> None:
    """The count's "change what runs (fleet unchanged)" exits 0 under --exit-code: the gate is the fleet's."""
    from generator.pr_diff import fleet_changes

    entry: dict[str, Any] = {
        "status": "changed",
        "diff": {"totals": {"gpus": {"old": 8, "new": 8}}, "pools": [], "deployments": [{}]},
    }
    assert not fleet_changes({"files": [entry]})
    entry["diff"]["totals"]["gpus"]["new"] = 16
    assert fleet_changes({"files": [entry]})
    assert not fleet_changes({"files": [{"status": "unreachable", "diff": None}]})
