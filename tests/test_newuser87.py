"""newuser87: a platform engineer's AKS workload (70B FP8 chat, an embedding service, a weekly LoRA of an 8B on Spot).

1. ``hardware.provider: aks`` was offered ``did you mean 'aws'?`` (one letter off, the wrong cloud): a managed
   Kubernetes service's or a cloud maker's name now says the provider that runs it.
2. An fp32 checkpoint (BAAI/bge-m3, ``torch_dtype: float32``) is served in 16 bits, but a node downloads and keeps its
   fp32 files: ``model_files_bytes``, the pool's ``files_bytes`` (its OS disk) and the cold start said half of them.
3. Nothing said the vCPU quota the AKS nodes need in the region (``azure-vcpu-quota``): each VM size's vCPUs on
   demand, Spot's apart, and the totals.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.planner.plan import Finding, Plan
from tests.helpers import ansible_reader, load_errors

WORKLOAD = """\
version: 1
name: ai-platform
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 8
      slo: {ttft_p95_ms: 1500, tpot_ms: 50}
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 512
      requests_per_second: 200
      slo: {ttft_p95_ms: 300}
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    capacity_type: spot
    training: {method: lora, lora_rank: 16, sequence_length: 4096, global_batch_size: 64,
               dataset_tokens: 200000000, epochs: 1, deadline_hours: 12, runs_per_month: 4.35}
hardware:
  provider: PROVIDER
  gpus: [h100-sxm5-80gb, h100-nvl-94gb, a100-pcie-80gb, a10-24gb, t4-16gb]
kubernetes:
  LOCATION
outputs: [terraform, ansible, kubernetes]
"""


def write(tmp_path: Path, provider: str = "azure", location: str = "location: eastus2") -> Path:
    path = tmp_path / "workload.yaml"
    path.write_text(WORKLOAD.replace("PROVIDER", provider).replace("LOCATION", location))
    return path


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    return plan_file(str(write(tmp_path_factory.mktemp("nu87"))))[1]


# ---- 1: a Kubernetes service's name as the provider


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("aks", "AKS is Azure's Kubernetes service: give provider: azure"),
        ("AKS", "AKS is Azure's Kubernetes service: give provider: azure"),
        ("eks", "EKS is AWS's Kubernetes service: give provider: aws"),
        ("gke", "GKE is Google Cloud's Kubernetes service: give provider: gcp"),
        ("google", "Google's cloud is Google Cloud: give provider: gcp"),
        ("microsoft", "Microsoft's cloud is Azure: give provider: azure"),
    ],
)
def test_a_kubernetes_service_name_says_its_cloud(tmp_path: Path, given: str, said: str) -> None:
    errors = load_errors(write(tmp_path, provider=given))
    assert len(errors) == 1, errors
    assert errors[0].endswith(f"hardware.provider: '{given}' is not one of baremetal, aws, gcp, azure; {said}"), errors
    assert "aws'?" not in errors[0]  # 'aks' was offered 'aws', the wrong cloud


def test_a_near_spelling_keeps_its_suggestion(tmp_path: Path) -> None:
    errors = load_errors(write(tmp_path, provider="bare-metal"))
    assert errors[0].endswith("did you mean 'baremetal'?"), errors


# ---- 2: an fp32 checkpoint's files


def test_an_fp32_checkpoints_files_are_its_fp32_bytes(plan: Plan) -> None:
    embed = next(d for d in plan.deployments if d.name == "embed")
    params = 567_754_752  # BAAI/bge-m3 (XLMRobertaModel with its pooler), torch_dtype float32
    assert embed.details["weights_bytes"] == 2 * params  # served in 16 bits
    assert embed.details["model_files_bytes"] == 4 * params  # 2.27 GB downloaded and kept (was 1.14 GB)
    pool = next(p for p in plan.pools if "embed" in p.deployments)
    assert pool.files_bytes == 4 * params
    cold = next(f for f in plan.findings if f.code == "cold-start-time" and "deployment embed" in f.message)
    assert "its 2.3 GB checkpoint" in cold.message, cold.message


def test_a_bf16_checkpoint_quantized_online_keeps_its_bf16_files(plan: Plan) -> None:
    chat = next(d for d in plan.deployments if d.name == "chat")
    assert chat.details["model_files_bytes"] == 141_107_412_992  # the bf16 checkpoint, quantized to fp8 as it loads
    assert chat.details["weights_bytes"] < chat.details["model_files_bytes"]


# ---- 3: the vCPU quota the AKS nodes need


def quota(plan: Plan) -> Finding:
    found = [f for f in plan.findings if f.code == "azure-vcpu-quota"]
    assert len(found) == 1, [f.code for f in plan.findings]
    return found[0]


def test_the_vcpu_quota_is_said_per_vm_size_with_spot_apart(plan: Plan) -> None:
    vcpus = {pid: catalog.platforms()[pid].vcpus for pid in ("azure-standard-nc80adis-h100-v5", "azure-standard-nc4as-t4-v3")}
    assert vcpus == {"azure-standard-nc80adis-h100-v5": 80, "azure-standard-nc4as-t4-v3": 4}
    nodes = {p.name: (p.nodes, p.spot) for p in plan.pools}
    assert nodes == {"chat_h100_nvl_94gb": (4, False), "embed_t4_16gb": (3, False), "tune_h100_nvl_94gb": (1, True)}
    found = quota(plan)
    assert found.level == "info" and found.path == "hardware.provider"
    assert found.message.startswith("the plan's AKS nodes need the subscription's vCPU quota in eastus2")
    assert (
        "on demand, of each VM size's family quota: StandardNCASv3_T4Family 12 (Standard_NC4as_T4_v3 3 node(s) x 4 vCPUs "
        "= 12, pool embed_t4_16gb); StandardNCadsH100v5Family 320 (Standard_NC80adis_H100_v5 4 node(s) x 80 vCPUs = 320, "
        "pool chat_h100_nvl_94gb); 332 of Total Regional vCPUs"  # each family named (fix154)
    ) in found.message
    assert (
        "on Spot, of the region's Spot vCPU quota (one for all sizes, apart from the families'): "
        "Standard_NC80adis_H100_v5 1 node(s) x 80 vCPUs = 80 (pool tune_h100_nvl_94gb); 80 in all"
    ) in found.message
    assert "`az vm list-usage --location eastus2`" in found.message


def test_the_quota_without_a_location_names_no_region(tmp_path: Path) -> None:
    found = quota(plan_file(str(write(tmp_path, location="cluster_name: aks-ml")))[1])
    assert "vCPU quota in the cluster's region" in found.message and "--location <region>" in found.message


def test_other_clouds_say_no_azure_quota(tmp_path: Path) -> None:
    _, aws = plan_file(str(write(tmp_path, provider="aws", location="location: us-east-1")))
    assert not [f for f in aws.findings if f.code == "azure-vcpu-quota"]


# ---- 4: a download under a second


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0.0908, "0.09 s"),
        (0.01, "10 ms"),
        (0.49, "0.49 s"),
        (0.5, "0.5 s"),
        (0.96, "0.96 s"),
        (14.1, "14 s"),
        (1234.0, "1,234 s"),
    ],
)
def test_rough_seconds_never_round_a_short_time_to_zero(seconds: float, said: str) -> None:
    from generator.units import rough_seconds_text

    assert rough_seconds_text(seconds) == said


def gke_plan(tmp_path: Path) -> Plan:
    gke = "location: us-central1\n  zone: us-central1-a\n  gcp_project: acme-ml-prod"
    path = write(tmp_path, provider="gcp", location=gke)
    path.write_text(
        path.read_text().replace("[h100-sxm5-80gb, h100-nvl-94gb, a100-pcie-80gb, a10-24gb, t4-16gb]", "[h100-sxm5-80gb]")
    )
    return plan_file(str(path))[1]


def test_a_sub_second_download_is_not_said_as_zero(tmp_path: Path) -> None:
    plan = gke_plan(tmp_path)
    embed = next(d for d in plan.deployments if d.name == "embed")
    assert embed.details["model_download_s"] == 0.1  # 2.27 GB over the a3-highgpu-8g's 200 Gb/s primary gVNIC
    cold = next(f for f in plan.findings if f.code == "cold-start-time" and "deployment embed" in f.message)
    assert "its 2.3 GB checkpoint from object storage in the region takes at least ~0.1 s over" in cold.message
    assert "~0 s" not in cold.message


# ---- 5: an AKS Spot pool's taint in every output that lists its taints


def test_an_aks_spot_pools_taint_is_in_every_output(tmp_path: Path) -> None:
    import json

    from ruamel.yaml import YAML

    from generator.api import render_file

    spot = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
    gpu = "nvidia.com/gpu=present:NoSchedule"
    files = render_file(str(write(tmp_path)))
    group_vars = ansible_reader().load(files["ansible/group_vars/tune_h100_nvl_94gb.yml"])
    assert group_vars["specgen_kubernetes"]["node_taints"] == [gpu, spot]  # was [gpu] alone
    plan = json.loads(files["spec.json"])["plan"]
    taints = {p["name"]: ["{}={}:{}".format(*t) for t in p["taints"]] for p in plan["pools"]}
    assert taints == {"chat_h100_nvl_94gb": [gpu], "embed_t4_16gb": [gpu], "tune_h100_nvl_94gb": [gpu, spot]}
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert [t["key"] for t in tfvars["gpu_pools"]["tune_h100_nvl_94gb"]["taints"]] == [
        "nvidia.com/gpu",
        "kubernetes.azure.com/scalesetpriority",
    ]
    # the node pool and the Karpenter NodePool carried it before, once each: still once
    assert tfvars["aks_node_pools"]["tune_h100_nvl_94gb"]["node_taints"] == [gpu, spot]
    assert tfvars["aks_node_pools"]["tune_h100_nvl_94gb"]["node_labels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
    node_pool = YAML(typ="safe").load(files["kubernetes/azure/nodepool-tune-h100-nvl-94gb.yaml"])
    assert node_pool["spec"]["template"]["spec"]["taints"] == [
        {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"},
        {"effect": "NoSchedule", "key": "kubernetes.azure.com/scalesetpriority", "value": "spot"},
    ]
    # and its label, as the AKS node pool's (fix151: it was left out, so a pod selecting Spot by it got no NodePool)
    assert node_pool["spec"]["template"]["metadata"]["labels"]["kubernetes.azure.com/scalesetpriority"] == "spot"


def test_a_spot_pool_elsewhere_keeps_the_gpu_taint_alone(tmp_path: Path) -> None:
    _, aws = plan_file(str(write(tmp_path, provider="aws", location="location: us-east-1")))
    tune = next(p for p in aws.pools if "tune" in p.deployments)
    assert tune.spot and tune.taints == (("nvidia.com/gpu", "present", "NoSchedule"),)


# ---- 6: a replica's thousands of requests a second with their separator


def test_a_replicas_thousands_of_requests_are_said_with_a_separator(tmp_path: Path) -> None:
    plan = gke_plan(tmp_path)
    embed = next(d for d in plan.deployments if d.name == "embed")
    assert embed.details["requests_per_s_per_replica_max"] == 1341.552  # bge-m3 on one H100 SXM5, 512-token requests
    assert any(r.startswith("one replica sustains 1,341.55 req/s within the SLOs") for r in embed.reasons), embed.reasons
    down = next(f for f in plan.findings if f.code == "node-down-capacity" and "deployment embed" in f.message)
    assert "(1,341.55 each within the SLOs)" in down.message, down.message


# ---- 3 (GKE): the GPU quota the GKE nodes need


def test_the_gke_gpu_quota_is_said_per_metric_with_spot_preemptible(tmp_path: Path) -> None:
    plan = gke_plan(tmp_path)
    nodes = {p.name: (p.nodes, p.node.gpus, p.spot) for p in plan.pools}
    assert nodes == {"chat_embed_h100_sxm5_80gb": (1, 8, False), "tune_h100_sxm5_80gb": (1, 8, True)}
    found = [f for f in plan.findings if f.code == "gke-gpu-quota"]
    assert len(found) == 1 and found[0].level == "info"
    assert found[0].message.startswith("the plan's GKE nodes need the project's GPU quota in us-central1")
    assert (
        "NVIDIA_H100_GPUS 8 (pool chat_embed_h100_sxm5_80gb 1 node(s) x 8); PREEMPTIBLE_NVIDIA_H100_GPUS 8 (pool "
        "tune_h100_sxm5_80gb 1 node(s) x 8); 16 of GPUS_ALL_REGIONS"
    ) in found[0].message
    # fix154: what Google's pages say of Spot GPUs' quota, sourced, and that they leave GPUS_ALL_REGIONS unsaid
    assert (
        "The Spot nodes' 8 GPU(s) count against the PREEMPTIBLE_ metric only where the project has that preemptible "
        "quota; without it Spot VMs consume the standard quota of their GPUs"
    ) in found[0].message
    assert "https://cloud.google.com/compute/docs/instances/create-use-spot" in found[0].message
    assert (
        "Google's GPU and Spot pages do not say whether Spot GPUs count against GPUS_ALL_REGIONS: the 16 above counts "
        "them, 8 without them"
    ) in found[0].message
    assert not [f for f in plan.findings if f.code == "azure-vcpu-quota"]


@pytest.mark.parametrize(
    ("machine", "metric"), [("a3-megagpu-8g", "NVIDIA_H100_MEGA_GPUS"), ("a2-ultragpu-1g", "NVIDIA_A100_80GB_GPUS")]
)
def test_each_accelerator_has_its_metric(machine: str, metric: str) -> None:
    from generator.catalog.gke_accelerators import accelerator_type
    from generator.planner.vcpu_quota import GPU_QUOTA_METRIC

    assert GPU_QUOTA_METRIC[accelerator_type(machine)] == metric


# ---- 7: where an AKS job's checkpoints are


def test_an_aks_jobs_checkpoints_are_said_on_the_os_disk(plan: Plan, tmp_path: Path) -> None:
    found = next(f for f in plan.findings if f.code == "checkpoints-on-instance-store")
    assert found.message.startswith(
        "deployment tune: its checkpoints are sized on its nodes' OS disk (AKS keeps a pod's files there, not on the "
        "VM's local NVMe) (2 kept, 0.50 GB a checkpoint of the adapters)"
    ), found.message
    tune = next(p for p in plan.pools if "tune" in p.deployments)
    assert tune.node.nvme_drives == 1  # the NC80adis_H100_v5's temp NVMe, which the node's files are not on
    elsewhere = next(f for f in gke_plan(tmp_path).findings if f.code == "checkpoints-on-instance-store")
    assert "its checkpoints are sized on its nodes' local NVMe (" in elsewhere.message
