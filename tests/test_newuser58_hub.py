"""newuser58 (a developer portal feeding user YAML to specgen, models from a private Hub mirror), items 1-2.

Item 1: the Hub client keeps a resolved revision's commit at ``refs/<revision>`` in its cache, unnormalised: a model id
``org/name@../../x`` wrote a file outside the cache wherever a mirror resolved any revision. Such a revision is refused
at the model field before the Hub is asked. Item 2: a many-GB ``config.json`` was downloaded whole into the cache
before its size was checked; its size is read first (the HEAD the Hub answers) and it is never fetched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hub_server import FakeHub, Repo, VirtualFile, serve
from tests.test_hub import C1, QWEN, single_file_repo, specgen


@pytest.mark.parametrize(
    ("revision", "why"),
    [
        pytest.param("../../../victim", "holds '..'", id="dot-dot"),
        pytest.param("/etc/passwd", "has an empty path segment", id="absolute"),
        pytest.param("a//b", "has an empty path segment", id="doubled-slash"),
        pytest.param(".hidden", "has a segment starting with '.'", id="dot-segment"),
        pytest.param("main.lock", "has a segment starting with '.' or ending in '.lock'", id="lock"),
    ],
)
def test_a_revision_that_is_no_git_ref_is_refused_before_the_hub_is_asked(tmp_path: Path, revision: str, why: str) -> None:
    with serve(FakeHub(repos={"acme/qwen": Repo({"main": C1}, {C1: single_file_repo(QWEN)})})) as hub:
        run = specgen(hub, tmp_path / "home", "estimate", f"acme/qwen@{revision}", "--gpu", "h100-sxm5-80gb")
        assert run.returncode != 0 and "Traceback" not in run.stderr
        assert f"names revision '{revision}', which {why}" in run.stderr
        assert hub.log == []  # nothing asked of the Hub, nothing written
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize("revision", ["main", "refs/pr/1", "v1.0", "release/2025-01"])
def test_a_branch_tag_or_pull_request_ref_is_asked_of_the_hub(tmp_path: Path, revision: str) -> None:
    with serve(FakeHub(repos={"acme/qwen": Repo({revision: C1}, {C1: single_file_repo(QWEN)})})) as hub:
        run = specgen(hub, tmp_path / "home", "estimate", f"acme/qwen@{revision}", "--gpu", "h100-sxm5-80gb")
        assert run.returncode == 0, run.stderr


def test_a_config_larger_than_specgen_reads_is_not_downloaded(tmp_path: Path) -> None:
    big = VirtualFile(b'{"pad": "', 9_000_000)  # within what the test Hub sends whole
    with serve(FakeHub(repos={"acme/huge": Repo({"main": C1}, {C1: {"config.json": big}})})) as hub:
        run = specgen(hub, tmp_path / "home", "estimate", "acme/huge", "--gpu", "h100-sxm5-80gb")
        assert run.returncode != 0 and "Traceback" not in run.stderr
        assert "'acme/huge': config.json on the Hub is 9,000,000 bytes, more than the 4,194,304 specgen reads" in run.stderr
        assert [method for method, *_ in hub.log] == ["HEAD"]
    assert sum(f.stat().st_size for f in (tmp_path / "home").rglob("*") if f.is_file()) < 1_000_000
