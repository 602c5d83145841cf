"""newuser100: a platform team on GKE (Qwen3-30B-A3B FP8 chat, an embedding service, a weekly QLoRA job).

- ``gpu-no-layout`` said an H100 had "no allowed platform of this provider offers it" where GCP offers five A3 types of
  it and the GKE pools' zone (europe-west4-a) lacks them all: it now names the zone, as ``gpu-not-in-zone`` does.
- ``kubernetes.cluster_name`` of 41 to 63 characters passed on GCP, where the GKE API's ``Cluster.name`` is at most 40
  (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters); a workload name of
  41 characters, the GKE cluster's name where none is given, too.
- ``cloud-block-storage`` said "the 0.00 TB of files" of a 2.3 GB embedding model on a g2-standard-4.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InputError
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: {name}
deployments:
  - name: chat
    model: Qwen/Qwen3-30B-A3B
    inference:
      precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 20
      slo: {{ttft_p95_ms: 1500, tpot_ms: 50}}
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 512
      requests_per_second: 50
      slo: {{ttft_p95_ms: 300}}
hardware:
  provider: gcp
  gpus: [l4-24gb, a100-sxm4-80gb, h100-sxm5-80gb]
outputs: [terraform, kubernetes]
kubernetes:
  gcp_project: acme-prod
  location: europe-west4
  zone: europe-west4-a
{extra}"""


def _write(tmp_path: Path, name: str = "qwen-chat", extra: str = "") -> str:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(name=name, extra=extra))
    return str(path)


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    _, plan = plan_file(_write(tmp_path_factory.mktemp("gke")))
    return [(f.code, f.message, f.path) for f in plan.findings]


def test_gpu_no_layout_names_the_zone_not_the_provider(findings: list[tuple[str, str, str]]) -> None:
    no_layout = [
        m for code, m, field in findings if code == "gpu-no-layout" and field == "hardware.gpus[=h100-sxm5-80gb]"
    ]  # by value (fix191)
    assert no_layout, findings
    for message in no_layout:
        assert "no layout on h100-sxm5-80gb: zone europe-west4-a does not offer its machine types" in message
        assert "no allowed platform of this provider offers it" not in message
    assert any(code == "gpu-not-in-zone" and "h100-sxm5-80gb" in m for code, m, _ in findings)


def test_small_files_on_block_storage_in_gigabytes(findings: list[tuple[str, str, str]]) -> None:
    block = [m for code, m, _ in findings if code == "cloud-block-storage" and "g2-standard" in m]
    assert block, findings
    assert "the 2.3 GB of files go on the boot disk" in block[0]
    assert "0.00 TB" not in block[0]


@pytest.mark.parametrize(
    ("cluster_name", "refused"),
    [
        pytest.param("a" * 40, False, id="40"),
        pytest.param("a" * 41, True, id="41"),
        pytest.param("a" * 63, True, id="63"),
    ],
)
def test_gke_cluster_name_at_most_40(tmp_path: Path, cluster_name: str, refused: bool) -> None:
    path = _write(tmp_path, extra=f"  cluster_name: {cluster_name}\n")
    if not refused:
        load_workload(path)
        return
    with pytest.raises(InputError) as info:
        load_workload(path)
    assert "w.yaml:29:17: kubernetes.cluster_name: " in str(info.value)
    assert "is no name of a GKE cluster" in str(info.value) and "at most 40 characters" in str(info.value)


def test_workload_name_as_default_gke_cluster_name(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_workload(_write(tmp_path, name="a" * 41))
    assert "w.yaml:2:7: name: " in str(info.value)
    assert "(41 characters) names the GKE cluster" in str(info.value) and "give kubernetes.cluster_name" in str(info.value)
    load_workload(_write(tmp_path, name="a" * 41, extra="  cluster_name: prod-gke\n"))
    load_workload(_write(tmp_path, name="a" * 40))


def _estimate_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    import json

    from generator.calculator.cli import main

    code = main(["BAAI/bge-m3", "--task", "embed", "--gpu", "l4-24gb", "--input-tokens", "512", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_embed_estimate_in_a_gpu_share(capsys: pytest.CaptureFixture[str]) -> None:
    """A plan sizes an embedding replica in a time-sliced quarter of an L4; ``estimate --share 4`` refused it (exit 2)."""
    code, whole = _estimate_json(capsys)
    assert code == 0 and "gpu_share" not in whole
    code, quarter = _estimate_json(capsys, "--share", "4")
    assert code == 0
    share = quarter["gpu_share"]
    assert isinstance(share, dict) and share["per_gpu"] == 4 and share["pod_gpu_memory_utilization"] == 0.225
    rate_whole = whole["pooling"]["requests_per_s"]  # type: ignore[index]
    rate_quarter = quarter["pooling"]["requests_per_s"]  # type: ignore[index]
    assert rate_whole / 5 < rate_quarter < rate_whole / 3  # a quarter of the SMs and of the bandwidth
    code, tiny = _estimate_json(capsys, "--share", "16")  # 1.2 GiB usable: bge-m3 needs 2.4
    assert code == 3 and tiny["capacity"]["fits"] is False  # type: ignore[index]


def test_python_dash_m_generator_cli_runs_the_command_line() -> None:
    """``python -m generator.cli --help`` printed nothing and exited 0 (the module had no ``__main__`` guard)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "generator.cli", "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: specgen")
