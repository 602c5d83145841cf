"""newuser58 (a developer portal feeding user YAML to specgen, models from a private Hub mirror), items 1-2.

Item 1: the Hub client keeps a resolved revision's commit at ``refs/<revision>`` in its cache, unnormalised: a model id
``org/name@../../x`` wrote a file outside the cache wherever a mirror resolved any revision. Such a revision is refused
at the model field before the Hub is asked. Item 2: a many-GB ``config.json`` was downloaded whole into the cache
before its size was checked; its size is read first (the HEAD the Hub answers) and it is never fetched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hub_server import FakeHub, Repo, VirtualFile, safetensors_bytes, serve
from tests.test_hub import C1, QWEN, hf_tensors, single_file_repo, specgen


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


def _checkpoint(tmp_path: Path, tensors: dict[str, tuple[str, list[int], int]], repo: str) -> tuple[dict[str, VirtualFile], Path]:
    """A repository of QWEN's config and ``tensors``' header, and a workload serving it pinned at ``C1``."""
    header, size = safetensors_bytes(tensors)
    files = {"config.json": VirtualFile(QWEN, len(QWEN)), "model.safetensors": VirtualFile(header, size)}
    workload = tmp_path / "w.yaml"
    workload.write_text(
        f"version: 1\nname: hub\ndeployments:\n  - name: chat\n    model: hf:{repo}@{C1}\n"
        "    inference: {max_context_tokens: 4096, avg_input_tokens: 500, avg_output_tokens: 100, requests_per_second: 1}\n"
        "hardware: {provider: aws}\n",
        encoding="utf-8",
    )
    return files, workload


def test_a_malformed_safetensors_header_is_an_error_at_the_model_field(tmp_path: Path) -> None:
    """Item 3: a tensor whose bytes disagree with its shape was an error with no file, line or field, and estimate
    said the model was "not read from the Hub either"."""
    tensors = hf_tensors(json.loads(QWEN))
    name = "model.norm.weight"
    tensors[name] = (tensors[name][0], tensors[name][1], 10)
    files, workload = _checkpoint(tmp_path, tensors, "acme/bad")
    with serve(FakeHub(repos={"acme/bad": Repo({"main": C1}, {C1: files})})) as hub:
        run = specgen(hub, tmp_path / "home", "validate", str(workload))
        assert run.returncode == 1 and "Traceback" not in run.stderr
        assert f"w.yaml:5:12: deployments[0].model: acme/bad@{C1}/model.safetensors: tensor '{name}' takes 10 bytes" in run.stderr
        run = specgen(hub, tmp_path / "home2", "estimate", "acme/bad", "--gpu", "h100-sxm5-80gb")
        assert run.returncode != 0 and "not read from the Hub either" not in run.stderr
        assert f"acme/bad@{C1}/model.safetensors: tensor '{name}' takes 10 bytes" in run.stderr


def test_a_plan_says_what_reading_the_model_noted(tmp_path: Path) -> None:
    """Item 4: a checkpoint holding half its config's layers was planned at its files' bytes without a finding.

    hostile91: one without a whole layer is refused (vLLM: weights not initialized from checkpoint), so half the layers
    here lack their MLP: still read, with the note.
    """
    config = json.loads(QWEN)
    tensors = {n: t for n, t in hf_tensors(config).items() if not any(f".layers.{k}.mlp." in n for k in range(14, 28))}
    files, workload = _checkpoint(tmp_path, tensors, "acme/half")
    with serve(FakeHub(repos={"acme/half": Repo({"main": C1}, {C1: files})})) as hub:
        run = specgen(hub, tmp_path / "home", "plan", str(workload), "--format", "json")
    assert run.returncode == 0, run.stderr
    (said,) = [f for f in json.loads(run.stdout)["findings"] if f["code"] == "model-source-note"]
    assert said["path"] == "deployments[0].model", said
    assert "in the checkpoint's files" in said["message"] or "sized from the config" in said["message"]


def test_a_model_in_the_cache_is_read_when_the_hub_fails(tmp_path: Path) -> None:
    """review38 item 1: the size read before the download failed on a Hub answering 500 where the cache holds the
    model, which the Hub client falls back to."""
    from tests.test_hub_hostile import _Endpoint, _hub

    pinned = f"acme/qwen@{C1}"
    with serve(FakeHub(repos={"acme/qwen": Repo({"main": C1}, {C1: single_file_repo(QWEN)})})) as hub:
        first = specgen(hub, tmp_path / "home", "estimate", pinned, "--gpu", "h100-sxm5-80gb")
    assert first.returncode == 0, first.stderr
    with _hub("500") as url:
        again = specgen(_Endpoint(url), tmp_path / "home", "estimate", pinned, "--gpu", "h100-sxm5-80gb")  # type: ignore[arg-type]
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
