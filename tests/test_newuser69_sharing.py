"""newuser69 items 2, 4, 5 and 8: GPU sharing on Azure (AKS) and what the plan says of it.

- item 2: a MIG pool AKS partitions itself is an AKS node pool (Terraform) with no Karpenter NodePool, yet it got the
  ``karpenter-shared-gpus`` warning (``plan --fail-on warning`` exited 5) and its NodePool's limits in
  ``karpenter-replacement-slot``; the warning's path was ``kubernetes.gpu_sharing`` where the deployment asked it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.api import render_file
from tests.helpers import specgen_in_process as specgen

SMALL = """\
version: 1
name: small-nvl
deployments:
  - name: router
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu_sharing: {router}
    inference: {{precision: bf16, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 50,
                requests_per_second: 6, slo: {{ttft_p95_ms: 1500, tpot_ms: 50}}}}
  - name: embed
    model: BAAI/bge-m3
    gpu_sharing: {embed}
    inference: {{task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 40,
                slo: {{ttft_p95_ms: 300}}}}
hardware:
  provider: azure
  gpus: [{gpus}]
objective: cost
kubernetes:
  location: eastus2
outputs: [{outputs}]
"""
MIG_3G = "{strategy: mig, mig_profile: 3g.47gb}"
MIG_1G = "{strategy: mig, mig_profile: 1g.12gb}"
TS_2 = "{strategy: time-slicing, replicas_per_gpu: 2}"


def small(tmp_path: Path, router: str = MIG_3G, embed: str = MIG_3G, gpus: str = "h100-nvl-94gb", **kw: str) -> Path:
    path = tmp_path / "small.yaml"
    outputs = kw.get("outputs", "terraform, kubernetes")
    path.write_text(SMALL.format(router=router, embed=embed, gpus=gpus, outputs=outputs), encoding="utf-8")
    return path


def findings(path: Path) -> dict[str, dict[str, Any]]:
    plan = json.loads(render_file(str(path))["spec.json"])["plan"]
    return {f["code"]: f for f in plan["findings"]}


# ---------------------------------------------------------------- item 2


def test_an_aks_mig_pool_gets_no_karpenter_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's ``small-nvl-mig-same.yaml``: one AKS MIG pool, no NodePool rendered, so nothing of Karpenter said."""
    path = small(tmp_path)
    files = render_file(str(path))
    assert json.loads(files["spec.json"])["plan"]["pools"][0]["gpu_sharing"] == "mig 3g.47gb"
    assert not [p for p in files if p.startswith("kubernetes/azure/nodepool-")]  # AKS node pools only
    said = findings(path)
    assert "gpu-sharing-aks-mig" in said
    assert not [code for code in said if code.startswith("karpenter-")]  # before: karpenter-shared-gpus (a warning)
    code, _, _ = specgen(capsys, "plan", str(path), "--fail-on", "warning")
    assert code == 0  # before: 5


def test_a_time_sliced_azure_pool_keeps_the_karpenter_findings_at_the_deployments_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Karpenter renders a time-sliced pool's NodePool: the findings stay, the warning at the field that asks the sharing."""
    path = small(tmp_path, router=TS_2, embed=TS_2)
    said = findings(path)
    assert said["karpenter-shared-gpus"]["path"] == "deployments[0].gpu_sharing"  # before: kubernetes.gpu_sharing
    assert "router-embed-h100-nvl-94gb" in said["karpenter-replacement-slot"]["message"]
    _, out, err = specgen(capsys, "plan", str(path))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "gpu_sharing" in text)
    located = next(x for x in (out + err).splitlines() if x.endswith("[karpenter-shared-gpus]"))
    assert located.startswith(f"{path}:{line}:")  # before: the kubernetes: block's location line


def test_the_aks_mig_pool_is_left_out_beside_a_karpenter_pool(tmp_path: Path) -> None:
    """MIG on one service and whole GPUs on the other: the replacement slot names the Karpenter pool only."""
    path = small(tmp_path, embed='{strategy: "none"}')
    said = findings(path)
    slot = said["karpenter-replacement-slot"]["message"]
    pools = json.loads(render_file(str(path))["spec.json"])["plan"]["pools"]
    mig = [p["name"].replace("_", "-") for p in pools if p.get("gpu_sharing")]
    whole = [p["name"].replace("_", "-") for p in pools if not p.get("gpu_sharing")]
    assert mig and whole
    assert all(name not in slot for name in mig) and all(name in slot for name in whole)
    assert "karpenter-shared-gpus" not in said
