"""hostile83: hostile input against the features of session 43 (ASO agent pools, diff --base of spec.json, exit codes).

Each case is a finding of the hostile run (``/work/wt/bugs/hostile83.md``), held here so that it stays fixed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_as_deployed, render_file

AKS = """\
version: 1
name: aks-chat
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 4}
hardware:
  provider: azure
  gpus: [a100-sxm4-80gb]
kubernetes:
  location: eastus2
CLUSTER
outputs: OUTPUTS
"""


def _aks(tmp_path: Path, cluster: str | None, outputs: str = "[terraform, kubernetes]") -> Path:
    path = tmp_path / "w.yaml"
    line = f"  cluster_name: {cluster}" if cluster is not None else ""
    path.write_text(AKS.replace("CLUSTER", line).replace("OUTPUTS", outputs))
    return path


# An AKS cluster may be named with upper-case letters and '_' (Azure's rule), a Kubernetes object may not (RFC 1123):
# the ASO agent pools' owner.name names the ManagedCluster *object*, so such a name can own nothing.
@pytest.mark.parametrize(
    ("cluster", "outputs", "warned"),
    [
        ("my-aks", "[terraform, kubernetes]", False),
        ("a", "[kubernetes]", False),
        ("prod1", "[kubernetes]", False),
        ("My_AKS", "[terraform, kubernetes]", True),
        ("My_AKS", "[kubernetes]", True),
        ("A-B", "[kubernetes]", True),
        ("a_b", "[kubernetes]", True),
        ("My_AKS", "[terraform]", False),  # no ASO objects rendered: Terraform takes the AKS name
        (None, "[kubernetes]", False),  # the workload's name, a Kubernetes name by its schema
    ],
)
def test_aso_owner_that_no_object_can_be_named_is_warned(
    tmp_path: Path, cluster: str | None, outputs: str, warned: bool
) -> None:
    path = _aks(tmp_path, cluster, outputs)
    _loaded, plan = plan_as_deployed(str(path))
    found = [f for f in plan.findings if f.code == "aso-owner-name"]
    assert bool(found) is warned
    if warned:
        (finding,) = found
        assert finding.level == "warning" and finding.path == "kubernetes.cluster_name"
        assert f"{cluster!r}" in finding.message and "ManagedCluster object" in finding.message
        files = render_file(str(path))
        owners = {
            m.group(1)
            for name, text in files.items()
            if name.startswith("kubernetes/azure-service-operator/managedclustersagentpool-")
            for m in [re.search(r"owner:\n    name: (\S+)", text)]
            if m
        }
        assert owners == {cluster}  # the warning names what the objects hold
