"""The IAM role the Karpenter EC2NodeClasses give their nodes: ``kubernetes.karpenter_node_role`` (newuser81 item 3).

Every EC2NodeClass named ``KarpenterNodeRole-<cluster>``, the role Karpenter's getting-started CloudFormation creates
(https://karpenter.sh/v1.14/getting-started/getting-started-with-karpenter/), with no field to name another and no word
of it in the plan. A Karpenter installed with terraform-aws-modules/eks's karpenter module has
``coalesce(var.node_iam_role_name, "Karpenter-${var.cluster_name}")`` with a name-prefix suffix, and an EC2NodeClass
whose ``spec.role`` names no role of the account never becomes Ready, so its NodePool launches nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from generator.api import render_file
from generator.errors import InputError
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: roles
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: 2
hardware:
  provider: {provider}
  gpus: [{gpu}]
outputs: [{outputs}]
kubernetes:
  cluster_name: prod-eks
{kubernetes}"""


def _write(tmp_path: Path, provider: str = "aws", outputs: str = "terraform, kubernetes", kubernetes: str = "") -> Path:
    path = tmp_path / "w.yaml"
    gpu = "a100-pcie-80gb" if provider == "azure" else "l40s-48gb"
    path.write_text(WORKLOAD.format(provider=provider, gpu=gpu, outputs=outputs, kubernetes=kubernetes))
    return path


def _findings(files: dict[str, str]) -> dict[str, dict[str, str]]:
    return {f["code"]: f for f in json.loads(files["spec.json"])["plan"]["findings"]}


def _roles(files: dict[str, str]) -> set[str]:
    classes = [yaml.safe_load(text) for path, text in files.items() if "/ec2nodeclass-" in path]
    assert classes
    return {c["spec"]["role"] for c in classes}


@pytest.mark.parametrize(
    ("kubernetes", "role", "said"),
    [
        pytest.param("", "KarpenterNodeRole-prod-eks", True, id="getting-started-default"),
        pytest.param(
            "  karpenter_node_role: Karpenter-prod-eks-2026120108\n",
            "Karpenter-prod-eks-2026120108",
            False,
            id="terraform-aws-eks-karpenter-module-role",
        ),
    ],
)
def test_ec2_node_class_role(tmp_path: Path, kubernetes: str, role: str, said: bool) -> None:
    files = render_file(str(_write(tmp_path, kubernetes=kubernetes)))
    assert _roles(files) == {role}
    found = _findings(files)
    assert ("karpenter-node-role" in found) is said
    if said:
        message = found["karpenter-node-role"]["message"]
        assert found["karpenter-node-role"]["level"] == "info"
        assert "the IAM role KarpenterNodeRole-prod-eks" in message
        assert "set kubernetes.karpenter_node_role" in message


@pytest.mark.parametrize(
    ("provider", "outputs", "why"),
    [
        pytest.param("azure", "terraform", "with provider: azure it has no effect", id="azure"),
        pytest.param("aws", "terraform", "outputs has no kubernetes", id="aws-without-node-pools"),
    ],
)
def test_role_nothing_reads_is_said_unused(tmp_path: Path, provider: str, outputs: str, why: str) -> None:
    path = _write(tmp_path, provider, outputs, "  karpenter_node_role: my-node-role\n")
    unused = _findings(render_file(str(path)))["setting-unused"]
    assert unused["path"] == "kubernetes.karpenter_node_role"
    assert why in unused["message"]


def test_role_arn_refused_at_the_field(tmp_path: Path) -> None:
    # spec.role takes the role's name; an ARN goes nowhere Karpenter reads it (the IAM name is at most 64 of [\w+=,.@-])
    path = _write(tmp_path, kubernetes="  karpenter_node_role: arn:aws:iam::123456789012:role/KarpenterNode\n")
    with pytest.raises(InputError) as info:
        load_workload(str(path))
    assert "kubernetes.karpenter_node_role" in str(info.value)
    assert ":18:" in str(info.value)  # file:line of the field


@pytest.mark.parametrize(("capacity", "said"), [("spot", True), ("on-demand", False)])
def test_spot_node_pool_says_karpenter_needs_its_interruption_queue(tmp_path: Path, capacity: str, said: bool) -> None:
    # newuser81 item 4: serving-on-spot says AWS gives 2 minutes of notice; Karpenter reads it only from the SQS queue
    # its settings.interruptionQueue names (https://karpenter.sh/v1.14/concepts/disruption/#interruption)
    path = _write(tmp_path)
    path.write_text(path.read_text().replace("    model: meta-llama", f"    capacity_type: {capacity}\n    model: meta-llama"))
    files = render_file(str(path))
    found = _findings(files).get("karpenter-spot-interruption")
    assert (found is not None) is said
    if found:
        assert found["level"] == "info"
        assert found["message"].startswith("the Karpenter NodePool(s) chat-l40s-48gb launch spot capacity")
        assert "settings.interruptionQueue" in found["message"]
