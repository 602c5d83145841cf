"""fix143: a Hub failing only on the safetensors headers does not read as drift in ``render --check``.

fix139 left it a note: the weights were sized from the config, so a CI ``render --check`` against output rendered
with the headers could report drift (exit 4) where the cause was a transient outage. ``render --check`` and
``diff --base`` now exit 75 (try again later) for a connection, timeout, 429 or 5xx on the headers; a plain
``render`` / ``plan`` keeps the fallback and its note. Through the real ``huggingface_hub`` client against a local Hub.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.hub_server import FakeHub, _handler, serve
from tests.test_hub import make_hub, specgen
from tests.test_newuser82_exit_codes import _workload

UNREACHABLE, DRIFT = 75, 4


@contextmanager
def _headers_fail(hub: FakeHub, status: int) -> Iterator[FakeHub]:
    """``hub`` answering every read of a ``.safetensors`` file with ``status``; its config and the rest as usual."""
    base = _handler(hub)

    class Failing(base):  # type: ignore[misc, valid-type]
        def _serve(self, body: bool) -> None:
            if self.path.split("?")[0].endswith(".safetensors"):
                self.send_response(status)
                self.send_header("Retry-After", "0")  # huggingface_hub's retries without its back-off's waits
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super()._serve(body)

    with serve(hub, Failing) as served:
        yield served


def test_a_503_on_the_safetensors_headers_makes_render_check_exit_75_not_drift(tmp_path: Path) -> None:
    workload = _workload(tmp_path / "h.yaml", "acme/qwen-7b-chat")
    out = tmp_path / "out"
    with serve(make_hub()) as hub:
        done = specgen(hub, tmp_path / "home-ok", "render", str(workload), "-o", str(out))
        current = specgen(hub, tmp_path / "home-ok2", "render", str(workload), "-o", str(out), "--check")
    assert done.returncode == 0, done.stderr
    assert current.returncode == 0, current.stderr  # the same Hub answering: no drift
    with _headers_fail(make_hub(), 503) as hub:
        checked = specgen(hub, tmp_path / "home-503", "render", str(workload), "-o", str(out), "--check")
        plain = specgen(hub, tmp_path / "home-503b", "render", str(workload), "-o", str(tmp_path / "plain"))
        planned = specgen(hub, tmp_path / "home-503c", "plan", str(workload))
    assert checked.returncode == UNREACHABLE and "Traceback" not in checked.stderr, (checked.returncode, checked.stderr)
    assert "while reading the safetensors headers of acme/qwen-7b-chat@" in checked.stderr
    assert "the check could not be made" in checked.stderr and "503" in checked.stderr
    assert "unknown model" not in checked.stderr and "did you mean" not in checked.stderr  # the Hub gave its config
    assert not checked.stdout.strip()  # no drift patch
    # a plain render and plan keep the fallback: the config sizes the weights, with the note
    assert plain.returncode == 0, plain.stderr
    assert planned.returncode == 0, planned.stderr
    assert "weights sized from the config" in planned.stdout + planned.stderr


def test_diff_base_says_a_file_whose_headers_the_hub_failed_is_unreachable_and_exits_75(tmp_path: Path) -> None:
    from tests.test_newuser82_exit_codes import _repo

    repo = _repo(tmp_path, {"README": "base\n"})  # h.yaml is added by the change
    _workload(repo / "h.yaml", "acme/qwen-7b-chat")
    with _headers_fail(make_hub(), 503) as hub:
        run = specgen(hub, tmp_path / "home", "diff", "--base", "HEAD", str(repo / "h.yaml"), "--format", "json")
    assert run.returncode == UNREACHABLE, (run.returncode, run.stderr)
    (entry,) = json.loads(run.stdout)["files"]
    assert entry["status"] == "unreachable"
    assert "while reading the safetensors headers of acme/qwen-7b-chat@" in entry["errors"][0]
