"""``kubernetes.cluster_name`` held to its provider's naming rule (newuser81 item 2).

Every provider was held to GKE's rule (lower case, digits and '-'), so a platform team's existing EKS cluster named
``ml_prod`` or ``MlProd`` could not be targeted: EKS CreateCluster takes ``^[0-9A-Za-z][A-Za-z0-9\\-_]*``, 1 to 100
characters (https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html); AKS 1 to 63 alphanumerics,
``_`` and ``-``, starting and ending with an alphanumeric
(https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/resource-name-rules). The default node role
``KarpenterNodeRole-<name>`` must fit IAM's 64 characters
(https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from generator.api import render_file
from generator.errors import InputError
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: names
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200,
                requests_per_second: 2}}
hardware:
  provider: {provider}
outputs: [{outputs}]
kubernetes:
  cluster_name: {name}
{extra}"""

EKS_47 = "a" * 47  # KarpenterNodeRole- (18) + 47 = 65 characters


def _load(tmp_path: Path, provider: str, name: str, outputs: str = "terraform", extra: str = "") -> str | None:
    """The error naming kubernetes.cluster_name, or None where the workload loads."""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider=provider, name=name, outputs=outputs, extra=extra))
    try:
        load_workload(str(path))
    except InputError as exc:
        message = str(exc)
    else:
        return None
    assert "w.yaml:12:17: kubernetes.cluster_name: " in message, message
    return message


@pytest.mark.parametrize(
    ("provider", "name", "refused"),
    [
        pytest.param("aws", "ml_prod", None, id="eks-underscore"),
        pytest.param("aws", "MlProd", None, id="eks-upper-case"),
        pytest.param("aws", "9prod-", None, id="eks-digit-first-dash-last"),
        pytest.param("aws", "a" * 100, None, id="eks-100"),
        pytest.param("aws", "a" * 101, "does not match", id="eks-101"),
        pytest.param("aws", "_prod", "does not match", id="eks-underscore-first"),
        pytest.param("azure", "Ml_Prod", None, id="aks-underscore"),
        pytest.param("azure", "ml-prod-", "is no name of an AKS cluster", id="aks-dash-last"),
        pytest.param("azure", "a" * 64, "is no name of an AKS cluster", id="aks-64"),
        pytest.param("gcp", "ml-prod", None, id="gke"),
        pytest.param("gcp", "ml_prod", "is no name of a GKE cluster: lower-case letters", id="gke-underscore"),
        pytest.param("gcp", "MlProd", "is no name of a GKE cluster", id="gke-upper-case"),
        pytest.param("gcp", "9prod", "is no name of a GKE cluster", id="gke-digit-first"),
    ],
)
def test_cluster_name_rule_by_provider(tmp_path: Path, provider: str, name: str, refused: str | None) -> None:
    error = _load(tmp_path, provider, name)
    if refused is None:
        assert error is None
    else:
        assert error is not None and refused in error


@pytest.mark.parametrize(
    ("outputs", "extra", "refused"),
    [
        pytest.param("terraform, kubernetes", "", True, id="default-role-65-characters"),
        pytest.param("terraform, kubernetes", "  karpenter_node_role: ml-node-role\n", False, id="role-given"),
        pytest.param("terraform", "", False, id="no-ec2-node-class"),
    ],
)
def test_eks_name_too_long_for_the_default_node_role(tmp_path: Path, outputs: str, extra: str, refused: bool) -> None:
    error = _load(tmp_path, "aws", EKS_47, outputs, extra)
    assert (error is not None) is refused
    if error:
        assert f"KarpenterNodeRole-{EKS_47} is 65 characters, over the 64" in error
        assert "kubernetes.karpenter_node_role" in error
    assert _load(tmp_path, "aws", EKS_47[:-1], outputs) is None  # 64 characters fit


def test_eks_cluster_name_reaches_the_node_classes(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider="aws", name="ML_Prod", outputs="kubernetes", extra=""))
    files = render_file(str(path))
    classes = [yaml.safe_load(text) for name, text in files.items() if "/ec2nodeclass-" in name]
    assert classes
    for spec in (c["spec"] for c in classes):
        assert spec["role"] == "KarpenterNodeRole-ML_Prod"
        assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "ML_Prod"}}]
