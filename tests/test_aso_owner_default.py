"""newuser109: the ASO agent pools' owner defaulted to the workload's name in silence (kubernetes.cluster_name unset)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from generator.api import plan_as_deployed, render_file
from generator.render.aso import OWNER_DEFAULT_CODE as CODE

WORKLOAD = """\
version: 1
name: assistant-eu
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: {provider}
  gpus: [{gpu}]
objective: cost
kubernetes:
  location: {location}
{extra}outputs: [{outputs}]
"""


def write(tmp_path: Path, **fields: str) -> Path:
    values = {"provider": "azure", "gpu": "h100-sxm5-80gb", "location": "westeurope", "extra": ""}
    values |= {"outputs": "terraform, kubernetes"} | fields
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(**values), encoding="utf-8")
    return path


def coded(path: Path) -> list[dict[str, Any]]:
    plan = plan_as_deployed(str(path))[1].to_dict()
    return [f for f in plan["findings"] if f["code"] == CODE]


def test_an_unset_cluster_name_says_the_owner_it_defaulted_to(tmp_path: Path) -> None:
    path = write(tmp_path)
    (info,) = coded(path)
    assert info["level"] == "info"
    assert info["path"] == "kubernetes.cluster_name"
    assert "owned by the ManagedCluster object named 'assistant-eu', the workload's name" in info["message"]
    assert "kubectl apply -k kubernetes/azure-service-operator -n <its namespace>" in info["message"]
    files = render_file(str(path))
    (pool,) = [t for p, t in files.items() if p.startswith("kubernetes/azure-service-operator/managed")]
    owner = next(d for d in yaml.safe_load_all(pool) if d)["spec"]["owner"]
    assert owner == {"name": "assistant-eu"}  # what the info names


def test_a_given_cluster_name_needs_no_word(tmp_path: Path) -> None:
    assert coded(write(tmp_path, extra="  cluster_name: aks-prod-weu\n")) == []


def test_no_kubernetes_output_no_aso_objects_no_word(tmp_path: Path) -> None:
    assert coded(write(tmp_path, outputs="terraform")) == []


def test_other_clouds_have_no_aso(tmp_path: Path) -> None:
    assert coded(write(tmp_path, provider="aws", location="eu-west-2")) == []
