"""Cloud node pools as the cloud reads them: GKE pools in one zone, GKE's own GPU stack, every node tagged with
its pool and workload, and each dynamic Ansible inventory keeping exactly the nodes those tags mark."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.errors import InputError
from generator.planner import plan_workload
from generator.render import deployed, render_plan
from generator.render.eks import PATH as EKS_PATH
from generator.render.gke import gke_placement
from generator.workload import load_workload
from generator.workload.models import KubernetesSettings
from tests.conftest import REPO, SHARED, require_shared

GCP = REPO / "examples" / "chat-70b-fp8-gcp.yaml"


def load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


@functools.cache
def tree(stem: str) -> dict[str, str]:
    return render_file(str(REPO / "examples" / f"{stem}.yaml"))


def documents(files: dict[str, str], prefix: str) -> list[Any]:
    return [load(text) for path, text in sorted(files.items()) if path.startswith(prefix)]


def gcp_variant(tmp_path: Path, kubernetes: str, rate: int = 20) -> Path:
    """The GKE example with its ``kubernetes:`` block (lines 22 on) replaced and another request rate."""
    head = GCP.read_text().split("kubernetes:\n")[0].replace("requests_per_second: 20", f"requests_per_second: {rate}")
    path = tmp_path / "gke.yaml"
    path.write_text(head + "kubernetes:\n" + kubernetes, encoding="utf-8")
    return path


# ---------------------------------------------------------------- GKE: one zone per pool


@pytest.mark.parametrize(
    ("kubernetes", "zone"),
    [
        ("  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-b\n", "us-central1-b"),
        ("  gcp_project: acme-inference\n  location: us-central1-c\n", "us-central1-c"),  # a zonal cluster
        ("  gcp_project: acme-inference\n  location: us-central1-c\n  zone: us-central1-a\n", "us-central1-a"),  # multi-zonal
    ],
    ids=["region-and-zone", "zonal-location", "zonal-cluster-other-zone"],
)
@pytest.mark.parametrize("rate", [10, 80], ids=["one-node", "two-nodes"])  # one a3-highgpu-8g serves 11.96 req/s
def test_gke_pool_runs_its_planned_nodes_in_exactly_one_zone(tmp_path: Path, kubernetes: str, zone: str, rate: int) -> None:
    files = render_file(str(gcp_variant(tmp_path, kubernetes, rate)))
    (pool,) = json.loads(files["spec.json"])["plan"]["pools"]
    (node_pool,) = documents(files, "kubernetes/gcp/containernodepool-")
    spec = node_pool["spec"]
    assert spec["nodeLocations"] == [zone]
    assert spec["nodeCount"] == pool["nodes"]  # per zone, and there is one zone
    assert spec["location"] == load(kubernetes)["location"]
    # newuser31 item 15: replicas that each stay in one node need no COMPACT placement (it narrows where GKE finds
    # capacity); only a pool whose GPUs talk across nodes gets it (test_a_gke_pool_whose_replica_spans_nodes_is_compact)
    assert (pool["nodes"] == 1) == (rate == 10)
    assert "placementPolicy" not in spec


def test_a_gke_pool_whose_replica_spans_nodes_is_compact(tmp_path: Path) -> None:
    kubernetes = "  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-b\n"
    path = gcp_variant(tmp_path, kubernetes)
    path.write_text(path.read_text().replace("    inference:\n", "    parallelism: {tp: 8, pp: 2}\n    inference:\n", 1))
    files = render_file(str(path))
    (node_pool,) = documents(files, "kubernetes/gcp/containernodepool-")
    assert node_pool["spec"]["placementPolicy"] == {"type": "COMPACT"}
    (arguments,) = json.loads(files["terraform/specgen.auto.tfvars.json"])["gke_node_pools"].values()
    assert arguments["placement_policy"] == {"type": "COMPACT"}


def test_the_gke_examples_name_one_zone_for_every_pool() -> None:
    for stem in ("chat-70b-fp8-gcp", "small-models-gke-sharing"):
        for node_pool in documents(tree(stem), "kubernetes/gcp/containernodepool-"):
            assert len(node_pool["spec"]["nodeLocations"]) == 1, stem


# (kubernetes block, expected "file:line:col: field: message" start); the block starts on line 22
REFUSED = [
    (
        "  gcp_project: acme-inference\n  location: us-central1\n",
        "gke.yaml:24:13: kubernetes.location: 'us-central1' is a region: GKE's nodeCount is per zone",
    ),
    (
        "  gcp_project: acme-inference\n  location: us-central1\n  zone: us-east1-b\n",
        "gke.yaml:25:9: kubernetes.zone: 'us-east1-b' is not in the cluster's region 'us-central1'",
    ),
    (
        "  gcp_project: acme-inference\n  location: us-central1-a\n  zone: europe-west4-b\n",
        "gke.yaml:25:9: kubernetes.zone: 'europe-west4-b' is not in the cluster's region 'us-central1' "
        "(kubernetes.location us-central1-a)",
    ),
]


@pytest.mark.parametrize(("kubernetes", "expected"), REFUSED, ids=["region-without-zone", "zone-elsewhere", "zonal-elsewhere"])
def test_gke_zone_problems_are_located_when_the_workload_loads(tmp_path: Path, kubernetes: str, expected: str) -> None:
    path = gcp_variant(tmp_path, kubernetes)
    with pytest.raises(InputError) as caught:
        load_workload(str(path))
    assert str(caught.value).startswith(f"{tmp_path}/{expected}")


def test_a_region_without_zone_is_refused_only_where_gke_pools_are_rendered(tmp_path: Path) -> None:
    path = gcp_variant(tmp_path, "  gcp_project: acme-inference\n  location: us-central1\n")
    path.write_text(path.read_text().replace("outputs: [terraform, ansible, kubernetes]", "outputs: [terraform, ansible]"))
    load_workload(str(path))  # no node pools, no zone needed


def test_gke_placement_refuses_a_region_without_zone_for_settings_built_in_code() -> None:
    settings = KubernetesSettings(gcp_project="acme-inference", location="us-central1", cluster_name="c")
    with pytest.raises(InputError, match=r"^kubernetes\.location: 'us-central1' is a region"):
        gke_placement(settings)
    assert gke_placement(settings._replace(zone="us-central1-f")).zone == "us-central1-f"


# ---------------------------------------------------------------- GKE: its own GPU stack, no operator


@pytest.mark.parametrize("stem", ["chat-70b-fp8-gcp", "small-models-gke-sharing"])
def test_gke_gets_no_gpu_operator_and_no_labels_for_an_nvidia_device_plugin(stem: str) -> None:
    files = tree(stem)
    assert not [p for p in files if p.startswith("cluster/")]
    findings = {f["code"]: f for f in json.loads(files["spec.json"])["plan"]["findings"]}
    assert findings["gke-gpu-stack"]["level"] == "info"
    for node_pool in documents(files, "kubernetes/gcp/containernodepool-"):
        config = node_pool["spec"]["nodeConfig"]
        assert not [k for k in config["labels"] if k.startswith("nvidia.com/")]
        (accelerator,) = config["guestAccelerator"]
        assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}


@pytest.mark.parametrize(
    ("kubernetes", "says"),
    [
        ("  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-b\n", None),
        ("  gcp_project: acme-inference\n  location: us-central1-c\n", None),
        (
            "  gcp_project: acme-inference\n  location: europe-west1\n  zone: europe-west1-b\n",
            "is priced at the us-central1 on-demand rate of gcp-a3-highgpu-8g; the cluster is in europe-west1",
        ),
        ("  gcp_project: acme-inference\n  location: europe-west1-b\n", "the cluster is in europe-west1,"),
        ("  gcp_project: acme-inference\n  location: europe-west4-b\nprices:\n  gcp-a3-highgpu-8g: 20.0\n", None),
    ],
    ids=["priced-region", "priced-region-zonal", "other-region", "other-region-zonal", "other-region-own-price"],
)
def test_a_gke_pool_outside_the_priced_region_says_its_price_is_another_regions(
    tmp_path: Path, kubernetes: str, says: str | None
) -> None:
    path = gcp_variant(tmp_path, kubernetes)
    path.write_text(path.read_text().replace("  provider: gcp\n", "  provider: gcp\n  gpus: [h100-sxm5-80gb]\n"))
    spec = json.loads(render_file(str(path))["spec.json"])
    assert {pool["node"]["platform_id"] for pool in spec["plan"]["pools"]} == {"gcp-a3-highgpu-8g"}
    found = [f for f in spec["plan"]["findings"] if f["code"] == "price-region"]
    if says is None:
        assert found == []
    else:
        (finding,) = found
        assert finding["level"] == "warning"  # newuser74 item 9: another region's dollars, not an info
        assert finding["path"] == "kubernetes.location"
        assert says in finding["message"]


@pytest.mark.parametrize(
    ("example", "location"),
    [("chat-70b-fp8-aws", "us-east-1"), ("chat-70b-fp8-azure", "eastus2"), ("chat-70b", "us-central1")],
)
def test_gke_settings_on_another_provider_are_warned_at_each_field(tmp_path: Path, example: str, location: str) -> None:
    """newuser6 item 9: a GKE workload copied to AWS kept its project, location and zone, and nothing said so. The
    location is every cloud's region (newuser26 item 5): on bare metal it has no effect either."""
    path = tmp_path / "copied.yaml"
    text = (REPO / "examples" / f"{example}.yaml").read_text().split("kubernetes:\n")[0]
    path.write_text(text + f"kubernetes:\n  gcp_project: acme-ml\n  location: {location}\n  zone: us-central1-a\n")
    spec = json.loads(render_file(str(path))["spec.json"])
    unused = [f for f in spec["plan"]["findings"] if f["code"] == "setting-unused"]
    assert [(f["level"], f["path"]) for f in unused] == [
        ("warning", "kubernetes.gcp_project"),
        *([("warning", "kubernetes.location")] if example == "chat-70b" else []),
        ("warning", "kubernetes.zone"),
    ]
    assert all("has no effect" in f["message"] for f in unused)
    assert spec["plan"]["region"] == (None if example == "chat-70b" else location)
    assert not [f for f in json.loads(tree("chat-70b-fp8-gcp")["spec.json"])["plan"]["findings"] if f["code"] == "setting-unused"]


# ---------------------------------------------------------------- tags on every node, inventories filter on them


def aws_node_tags(files: dict[str, str]) -> list[dict[str, str]]:
    """The tags of every way an AWS node can come up: EKS managed node groups and Karpenter EC2NodeClasses."""
    groups = json.loads(files["terraform/eks-managed-node-groups.tfvars.json"])["eks_managed_node_groups"]
    classes = [d for d in documents(files, "kubernetes/aws/") if d["kind"] == "EC2NodeClass"]
    assert groups and classes
    return [g["tags"] for g in groups.values()] + [c["spec"]["tags"] for c in classes]


def gcp_node_labels(files: dict[str, str]) -> list[dict[str, str]]:
    return [d["spec"]["nodeConfig"]["resourceLabels"] for d in documents(files, "kubernetes/gcp/containernodepool-")]


def azure_node_tags(files: dict[str, str]) -> list[dict[str, str]]:
    return [d["spec"]["tags"] for d in documents(files, "kubernetes/azure/") if d["kind"] == "AKSNodeClass"]


NODE_TAGS = {
    "chat-70b-fp8-aws": ("aws_ec2", aws_node_tags, "specgen.dev/pool", "specgen.dev/workload"),
    "mixed": ("aws_ec2", aws_node_tags, "specgen.dev/pool", "specgen.dev/workload"),
    "chat-70b-fp8-gcp": ("gcp_compute", gcp_node_labels, "specgen-pool", "specgen-workload"),
    "small-models-gke-sharing": ("gcp_compute", gcp_node_labels, "specgen-pool", "specgen-workload"),
    "chat-70b-fp8-azure": ("azure_rm", azure_node_tags, "specgen-pool", "specgen-workload"),
}


def kept(provider: str, inventory: dict[str, Any], tags: dict[str, str] | None, location: str | None = None) -> bool:
    """Whether the inventory plugin keeps a node carrying ``tags`` in ``location``, reading its filter as the plugin does."""
    if provider == "aws_ec2":  # EC2 DescribeInstances filters: tag:<key> equals the value
        return all(
            (tags or {}).get(key.removeprefix("tag:")) == value
            for key, value in inventory["filters"].items()
            if key.startswith("tag:")
        )
    if provider == "gcp_compute":  # Compute API list filters, AND-ed: here only "labels.<key> = <value>"
        for expression in inventory["filters"]:
            field, op, value = expression.split(" ")
            assert op == "=" and field.startswith("labels."), expression
            if (tags or {}).get(field.removeprefix("labels.")) != value:
                return False
        return True
    environment = jinja2.Environment()  # azure_rm: a host is dropped when any exclude_host_filters condition is true
    filters = inventory["exclude_host_filters"]
    return not any(environment.compile_expression(c)(tags=tags, location=location) for c in filters)


@pytest.mark.parametrize("stem", sorted(NODE_TAGS))
def test_every_cloud_inventory_keeps_exactly_this_workloads_tagged_nodes(stem: str) -> None:
    files = tree(stem)
    provider, node_tags, pool_key, workload_key = NODE_TAGS[stem]
    inventory = load(files[f"ansible/inventory.{provider}.yml"])
    workload = json.loads(files["spec.json"])["plan"]["workload"]
    pools = {p["name"] for p in json.loads(files["spec.json"])["plan"]["pools"]}
    tags = node_tags(files)
    assert {t[workload_key] for t in tags} == {workload}
    assert {t[pool_key] for t in tags} == pools
    region = json.loads(files["spec.json"])["plan"]["region"]  # the example names its cluster's region
    for node in tags:
        assert kept(provider, inventory, node, region), (stem, node)
        assert not kept(provider, inventory, {**node, workload_key: "another-workload"}, region), (stem, node)
        assert not kept(provider, inventory, {k: v for k, v in node.items() if k != workload_key}, region), (stem, node)
        if provider == "azure_rm":  # the same workload's node in another region (aws_ec2 lists only ``regions``)
            assert not kept(provider, inventory, node, "westus3"), (stem, node)
        elif provider == "aws_ec2":
            assert inventory.get("regions") == ([region] if region else None)
        (keyed,) = inventory["keyed_groups"]  # one group per pool, named after the pool (the static inventory's groups)
        variable = "labels" if provider == "gcp_compute" else "tags"
        group = jinja2.Environment().compile_expression(keyed["key"])(**{variable: node})
        assert group == node[pool_key] and group in load(files["ansible/inventory.yml"])["all"]["children"]
    assert not kept(provider, inventory, None)  # an untagged VM of the account/project/subscription


AKS_MI300X = """\
version: 1
name: az-amd
deployments:
  - name: qwen
    model: Qwen/Qwen3-30B-A3B
    inference: {precision: bf16, max_context_tokens: 32768, avg_input_tokens: 2000, avg_output_tokens: 800,
                requests_per_second: 10, slo: {ttft_p95_ms: 1500, tpot_ms: 25}}
hardware:
  provider: azure
  gpus: [mi300x-192gb]
outputs: [terraform, kubernetes]
"""


def test_an_amd_pool_on_aks_asks_for_no_managed_driver(tmp_path: Path) -> None:
    # Karpenter for Azure considers only SKUs with an AKS-managed driver (NVIDIA) in gpu.mode Driver (its CRD): an
    # MI300X NodeClass in that mode never gets a node
    path = tmp_path / "az.yaml"
    path.write_text(AKS_MI300X)
    files = render_file(str(path))
    (node_class,) = [YAML(typ="safe").load(t) for p, t in files.items() if p.startswith("kubernetes/azure/aksnodeclass-")]
    assert node_class["spec"]["gpu"] == {"mode": "None"}
    (node_pool,) = [YAML(typ="safe").load(t) for p, t in files.items() if p.startswith("kubernetes/azure/nodepool-")]
    assert set(node_pool["spec"]["limits"]) == {"amd.com/gpu"}
    # nothing rendered advertises amd.com/gpu: the plan says so
    assert (
        "device-plugin-not-rendered" in files["SPEC.md"]
        and "by the AMD GPU device plugin, which specgen does not render" in files["SPEC.md"]
    )


def test_validate_plan_and_render_ask_for_the_gke_cluster_alike(tmp_path: Path) -> None:
    # a pipeline that gates on validate must not pass a workload whose render cannot name the GKE cluster; plan refuses
    # it too (fuzz35 item 6: plan exited 0, or 3 with another error, where validate exited 1)
    from generator.api import plan_file
    from generator.cli import validate_files

    path = tmp_path / "g.yaml"
    text = AKS_MI300X.replace("provider: azure", "provider: gcp").replace("gpus: [mi300x-192gb]", "gpus: [h100-sxm5-80gb]")
    path.write_text(text)
    hint = (
        "required to render GKE node pools (ContainerNodePool clusterRef and location); set them under kubernetes:, or "
        "leave kubernetes out of outputs"
    )
    checks = (lambda: validate_files((str(path),), print), lambda: plan_file(str(path)), lambda: render_file(str(path)))
    for check in checks:  # no kubernetes block: at the provider, which asks for them
        with pytest.raises(InputError) as err:
            check()
        assert str(err.value) == f"{path}:9:13: hardware.provider: kubernetes.gcp_project and kubernetes.location: {hint}"
    path.write_text(text + "kubernetes: {gcp_project: acme-ml}\n")
    for check in checks:
        with pytest.raises(InputError) as err:
            check()
        assert str(err.value) == f"{path}:12:13: kubernetes: kubernetes.location: {hint}"
    # without kubernetes in outputs nothing asks for the cluster: planned (terraform leaves it to variables)
    path.write_text(text.replace("outputs: [terraform, kubernetes]", "outputs: [terraform]"))
    assert plan_file(str(path))[1].pools


# ---------------------------------------------------------------- pools costed per training job


def test_a_pool_costed_per_training_job_scales_from_zero_on_every_cloud(tmp_path: Path) -> None:
    """newuser10 item 1: the LoRA job was costed per run ($246) but its EKS node group kept 6 nodes up all month
    (about $8,151), and the GKE pool 5 nodes (about $14,606)."""
    aws = tree("mixed")
    groups = json.loads(aws["terraform/eks-managed-node-groups.tfvars.json"])["eks_managed_node_groups"]
    # one p6-b200.48xlarge since its checkpointing is searched (newuser35 item 6: none, 1.91 h, $218 a run)
    job = groups["assistant_lora_b200_sxm_180gb"]
    assert (job["min_size"], job["desired_size"], job["max_size"]) == (0, 0, 1)
    assert all(g["min_size"] == g["desired_size"] == g["max_size"] > 0 for name, g in groups.items() if "lora" not in name)
    text = (REPO / "examples" / "mixed.yaml").read_text().replace("provider: aws", "provider: gcp")
    text = text.split("kubernetes:\n")[0] + "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1-a\n"
    path = tmp_path / "mixed-gcp.yaml"
    path.write_text(text)
    gcp = render_file(str(path))
    pools = {d["metadata"]["name"]: d["spec"] for d in documents(gcp, "kubernetes/gcp/containernodepool-")}
    (job_pool,) = [spec for name, spec in pools.items() if "lora" in name]
    # no nodeCount beside autoscaling (Config Connector would reconcile it back and drain a running job: newuser16 M1)
    assert "nodeCount" not in job_pool and (job_pool["initialNodeCount"], job_pool["autoscaling"]["minNodeCount"]) == (0, 0)
    assert job_pool["autoscaling"]["maxNodeCount"] >= 1
    assert all("autoscaling" not in spec and spec["nodeCount"] > 0 for name, spec in pools.items() if "lora" not in name)


# ---------------------------------------------------------------- nodes whose GPUs talk: one network domain

BIG = """version: 1
name: big
deployments:
  - name: big
    model: meta-llama/Llama-3.1-405B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1}
hardware:
  provider: PROVIDER
  gpus: [h100-sxm5-80gb]
"""


def test_a_pipeline_across_one_gpu_instances_names_their_network_not_nvlink(tmp_path: Path) -> None:
    """newuser61 item 14: TP1 x PP2 on two one-GPU p5.4xlarge instances read "370.8 GB/s per direction over NVLink";
    no GPU link carries anything there (no TP group, no two stages on one host): every hop crosses the 100 Gb/s EFA
    card (platforms.json aws-p5-4xlarge: one 100 Gb/s EFA device)."""
    path = tmp_path / "p5.yaml"
    path.write_text(
        BIG.replace("PROVIDER", "aws")
        .replace("405B-Instruct", "70B-Instruct")
        .replace("precision: bf16", "precision: fp8, kv_cache_precision: fp8")
        + "  platforms: [aws-p5-4xlarge]\n"
    )
    loaded = load_workload(str(path))
    case = deployed(plan_workload(loaded), loaded.workload).deployments[0].reasons[0]
    assert case == (
        "split over 2 GPUs (TP1 x PP2); one stage on each of its 2 aws-p5-4xlarge instances: every hop between stages "
        "crosses their network, 100 Gb/s (1 x 100 Gb/s GPU NICs of the instance), not NVLink; the model times no hop: one "
        "carries 32,768 bytes a token (vLLM sends the hidden state and the residual, 16-bit), 2.6 us a token at that rate"
    )


def test_a_replica_across_aws_nodes_gets_a_placement_group_and_the_two_provisioners_are_said(tmp_path: Path) -> None:
    """newuser16 M2 / M3: a TP8 x PP2 replica on 2 p5 nodes had no placement group, and the EKS node groups and the
    Karpenter NodePools, each sized to every pool, read as if both were to be applied."""
    path = tmp_path / "big.yaml"
    path.write_text(BIG.replace("PROVIDER", "aws"))
    loaded = load_workload(str(path))
    plan = deployed(plan_workload(loaded), loaded.workload)
    (group,) = json.loads(render_plan(plan, loaded.workload)[EKS_PATH])["eks_managed_node_groups"].values()
    assert (group["desired_size"], group["create_placement_group"], group["enable_efa_support"]) == (2, True, True)
    codes = {f.code: f.message for f in plan.findings}
    assert "apply one of them, not both" in codes["aws-node-provisioners"]
    # newuser16 L2: the TP8 x PP2 split read "over NVLink" while its stage hop crosses the instances' network
    # newuser61 item 14: and at the instances' network rate, which the model does not time
    assert (
        plan.deployments[0]
        .reasons[0]
        .endswith(
            "one stage on each of its 2 aws-p5-48xlarge instances: every hop between stages crosses their network, 3,200 Gb/s "
            "(32 x 100 Gb/s GPU NICs of the instance), not NVLink; the model times no hop: one carries 65,536 bytes a token "
            "(vLLM sends the hidden state and the residual, 16-bit), 0.16 us a token at that rate"
        )
    )
    assert "big_h100_sxm5_80gb" in codes["aws-placement-group"] and "placementGroupSelector" in codes["aws-placement-group"]
    assert "give each of them subnet_ids of one AZ" in codes["aws-placement-group"]  # v21 takes the cluster's subnets
    assert "aws-per-job-node-groups" not in codes
    # terraform alone: the node groups still need their subnets; there is no Karpenter to choose between
    path.write_text(BIG.replace("PROVIDER", "aws") + "outputs: [terraform]\n")
    alone = load_workload(str(path))
    codes = {f.code: f.message for f in deployed(plan_workload(alone), alone.workload).findings}
    assert "aws-node-provisioners" not in codes and "Karpenter" not in codes["aws-placement-group"]
    # pools whose replicas each sit in one node, or that talk over the instance network only (the LoRA job on
    # g6e.xlarge), get none: a placement group would only narrow where capacity is found
    groups = json.loads(tree("mixed")[EKS_PATH])["eks_managed_node_groups"]
    assert not [name for name, g in groups.items() if g.get("create_placement_group")]


def test_a_replica_across_gke_nodes_says_which_networks_its_gpu_nics_need(tmp_path: Path) -> None:
    """newuser16 M2: an a3-highgpu-8g pair was planned over GPUDirect-TCPX's NICs that no rendered pool attaches."""
    path = tmp_path / "big.yaml"
    path.write_text(BIG.replace("PROVIDER", "gcp") + "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1-a\n")
    loaded = load_workload(str(path))
    plan = deployed(plan_workload(loaded), loaded.workload)
    (finding,) = [f for f in plan.findings if f.code == "gke-gpu-networks"]
    # newuser28 item 7, newuser45 item 8: timed over the primary NIC the rendered pool has (a3-highgpu-8g: 1,000 Gb/s
    # in all, 4 x 200 of GPU NICs), how much faster the GPU NICs would be, and the setting that attaches them
    assert finding.level == "warning"
    assert finding.message.startswith(
        "pool big_h100_sxm5_80gb's nodes talk over gcp-a3-highgpu-8g's primary NIC (200 Gb/s), which the plan times "
        "their traffic over; its 4 GPU NICs (800 Gb/s) would carry it 4 times as fast once attached to a VPC network "
        "each: name them under kubernetes.gpu_networks.gcp-a3-highgpu-8g"
    )
    gcp = load_workload(str(gcp_variant(tmp_path, "  gcp_project: acme-inference\n  location: us-central1-c\n", 80)))
    assert not [f for f in deployed(plan_workload(gcp), gcp.workload).findings if f.code == "gke-gpu-networks"]


def test_a_price_of_another_providers_platform_is_warned_at_its_key(tmp_path: Path) -> None:
    """newuser18 item 6: a price pasted from the GCP copy of a workload into the AWS one was accepted and unused."""
    path = tmp_path / "aws.yaml"
    path.write_text((REPO / "examples" / "chat-70b-fp8-aws.yaml").read_text() + "prices:\n  gcp-a3-highgpu-8g: 1.0\n")
    loaded = load_workload(str(path))
    (unused,) = [f for f in plan_workload(loaded).findings if f.code == "setting-unused"]
    assert (unused.level, unused.path) == ("warning", "prices.gcp-a3-highgpu-8g")
    assert unused.message.startswith("prices.gcp-a3-highgpu-8g prices a platform of provider gcp; with provider: aws")


def test_a_price_of_a_platform_the_workload_leaves_out_is_warned_at_its_key(tmp_path: Path) -> None:
    """fuzz17 item 13: with hardware.platforms naming one instance, prices of the provider's other instances were unused
    and passed silently, where another provider's were flagged."""
    path = tmp_path / "aws.yaml"
    text = (REPO / "examples" / "chat-70b-fp8-aws.yaml").read_text()
    path.write_text(
        text.replace("  provider: aws\n", "  provider: aws\n  platforms: [aws-p5-48xlarge]\n", 1)
        + "prices:\n  aws-p4d-24xlarge: 1.0\n"
    )
    (unused,) = [f for f in plan_workload(load_workload(str(path))).findings if f.code == "setting-unused"]
    assert (unused.level, unused.path) == ("warning", "prices.aws-p4d-24xlarge")
    assert (
        unused.message == "prices.aws-p4d-24xlarge prices a platform hardware.platforms leaves out: no plan can use it: remove it"
    )


def test_a_service_on_one_gke_node_is_warned_that_upgrades_take_it_down(tmp_path: Path) -> None:
    """newuser18 item 8: one node: each GKE node upgrade stops the only replica (newuser63 item 4: from the drain until
    it starts again on the surge node)."""
    kubernetes = "  gcp_project: acme-inference\n  location: us-central1-c\n"
    one = json.loads(render_file(str(gcp_variant(tmp_path, kubernetes, 10)))["spec.json"])["plan"]
    (pool,) = one["pools"]
    (finding,) = [f for f in one["findings"] if f["code"] == "node-down-capacity"]
    assert pool["nodes"] == 1 and finding["level"] == "warning"
    assert finding["message"].startswith("deployment chat: both of its replicas run on one node: that node down (a failure")
    two = tree("chat-70b-fp8-gcp")  # 20 req/s: two a3-highgpu-8g
    assert json.loads(two["spec.json"])["plan"]["pools"][0]["nodes"] == 2
    assert "runs on one node" not in two["SPEC.md"]


def test_a_gke_node_upgrade_that_leaves_less_than_the_rate_is_warned_of() -> None:
    """newuser31 item 3: two 8-GPU nodes, one TP8 replica each at 11.96 req/s for 20 asked: an upgrade drained one node
    and left 11.96 req/s. Now two TP4 replicas a node at 7.19 req/s (newuser46 item 2: the rate needs 3, the nodes hold
    4): a node down leaves 2. newuser63: the check every provider has, a warning on GKE whose upgrades drain each node."""
    plan = json.loads(tree("chat-70b-fp8-gcp")["spec.json"])["plan"]
    (finding,) = [f for f in plan["findings"] if f["code"] == "node-down-capacity"]
    assert finding["level"] == "warning" and finding["path"] == "deployments[0].inference"
    # fix86 (m74a item 4): the 2 left give 2 x 101 places, a request holding one 14.04 s, the wait for one within a
    # 1.66 s slack: 13.43 req/s (2 x 7.19 = 14.38 would take every place, the wait unbounded); fix90's rule: 13.66, 19/20
    # of 14.38 (the last rung edge where a lower rung's places keep P(TTFT + wait > 2 s) within 5%)
    assert finding["message"].startswith(
        "deployment chat: with the node holding the most of its replicas down (a failure, a repair, a drain: GKE's "
        "auto-upgrades drain every node in turn, and its replicas start again on the surge node), 2 of its 4 replicas "
        "serve 13.66 req/s of the 20 asked"
    )


#: newuser44 item 1: a 70B chat service and a bge-m3 embedder (1,343.6 req/s a replica) sharing GKE H100 nodes.
GKE_SHARED = """version: 1
name: gke-up
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1500,
                avg_output_tokens: 350, requests_per_second: CHAT_RATE, min_replicas: 2,
                slo: {ttft_p95_ms: 2000, tpot_ms: 40}}
  - name: embed
    model: BAAI/bge-m3
    inference: {EMBED_MIN task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 50,
                slo: {ttft_p95_ms: 500}}
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    inference: {MOE_MIN precision: fp8, max_context_tokens: 32768, avg_input_tokens: 4000, avg_output_tokens: 500,
                requests_per_second: 3, slo: {ttft_p95_ms: 3000, tpot_ms: 50}}
hardware: {provider: gcp, gpus: [h100-sxm5-80gb]}
kubernetes: {gcp_project: acme-inference, location: us-central1, zone: us-central1-a}
"""


def gke_shared(tmp_path: Path, chat_rate: int, with_moe: bool, **fields: str) -> Path:
    """:data:`GKE_SHARED` at a chat rate, with or without ``moe``, and an inference field by deployment."""
    text = GKE_SHARED.replace("CHAT_RATE", str(chat_rate))
    if not with_moe:
        text = text.split("  - name: moe\n")[0] + "hardware:" + text.split("hardware:")[1]
    for name in ("embed", "moe"):
        text = text.replace(f"{name.upper()}_MIN ", f"{fields[name]}, " if name in fields else "")
    path = tmp_path / f"gke-{chat_rate}-{with_moe}-{'-'.join(sorted(fields.values())).replace(': ', '')}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def node_down(path: Path) -> dict[str, str]:
    """The node-down message (capacity, or N+k not kept) of each deployment the plan of ``path`` warns, by deployment."""
    loaded = load_workload(str(path))
    plan = deployed(plan_workload(loaded), loaded.workload)
    names = [d.name for d in loaded.workload.deployments]
    codes = ("node-down-capacity", "node-down-not-kept")
    return {names[int(f.path.split("[")[1].split("]")[0])]: f.message for f in plan.findings if f.code in codes}


def test_min_replicas_2_spread_over_two_nodes_keeps_an_embedder_up_through_a_gke_upgrade(tmp_path: Path) -> None:
    """newuser44 item 1: two 1-GPU embed replicas the plan spreads over the pool's two nodes (beside a TP4 replica
    on each) lose one to a node's upgrade, and one serves 1,343.6 req/s of the 50 asked: no warning, where "a node's
    worth" (8 replicas) + 1 = 9 was advised, which bought a third a3-highgpu-8g (+$64,598/month). The chat service's
    replicas (5 of 3.13 req/s, 14 asked) lose three."""
    warned = node_down(gke_shared(tmp_path, 14, False, embed="min_replicas: 2"))
    assert list(warned) == ["chat"]
    # two TP4 of 7.19 req/s took 14 at 97% of their places; the wait for a place takes more since newuser72 item 6
    # fix86 (m74a item 4): the 2 left give 2 x 44 places, 14.03 s a request, the wait within a 1.55 s slack: 5.51 req/s
    # (2 x 3.13 = 6.27 would take every place); fix90's rule: 5.96, 19/20 of 6.27 (the rung edge, as above)
    assert "2 of its 5 replicas serve 5.96 req/s of the 14 asked (3.13 each within the SLOs, less the wait" in warned["chat"]


@pytest.mark.parametrize(
    ("chat_rate", "with_moe", "name"),
    [(14, True, "embed"), (14, True, "moe"), (20, True, "moe"), (14, False, "chat")],
    ids=["embed-1-replica", "moe-1-replica", "moe-crowded", "chat-spread"],
)
def test_the_field_a_gke_upgrade_warning_advises_clears_it_at_once(
    tmp_path: Path, chat_rate: int, with_moe: bool, name: str
) -> None:
    """newuser44 item 1 / newuser63 item 3: the advice, followed, keeps the rate with a node upgrading (the warning
    goes) in one step: min_replicas advised 5, then 11, 12, 13 as each plan chose another layout."""
    before = node_down(gke_shared(tmp_path, chat_rate, with_moe))
    assert "set inference.nodes_down_tolerated: 1" in before[name]
    if name == "chat":  # the chat service's text carries min_replicas 2 already: a field beside it
        text = (
            gke_shared(tmp_path, chat_rate, with_moe)
            .read_text()
            .replace("min_replicas: 2,", "min_replicas: 2, nodes_down_tolerated: 1,")
        )
        path = tmp_path / "chat-n1.yaml"
        path.write_text(text, encoding="utf-8")
    else:
        path = gke_shared(tmp_path, chat_rate, with_moe, **{name: "nodes_down_tolerated: 1"})
    assert name not in node_down(path)


#: terraform-aws-modules/eks v21's managed node group module: its ``aws_eks_node_group`` has
#: ``lifecycle { create_before_destroy = true }`` and, with ``use_name_prefix`` (default true), ``node_group_name_prefix
#: = "${var.name}-"`` (modules/eks-managed-node-group/main.tf,
#: https://github.com/terraform-aws-modules/terraform-aws-eks/blob/master/modules/eks-managed-node-group/main.tf).
EKS_NODE_GROUP_VARIABLES = SHARED / "iac-reference/terraform/terraform-aws-eks/modules/eks-managed-node-group/variables.tf"


def test_eks_node_groups_keep_unique_names_so_a_replacement_is_created_first() -> None:
    """A node group replaced (another instance type) is created before the old one is deleted only under a name of its
    own: the rendered groups leave use_name_prefix at the module's default, true (a fixed name cannot be created twice)."""
    require_shared(EKS_NODE_GROUP_VARIABLES)
    block = EKS_NODE_GROUP_VARIABLES.read_text().split('variable "use_name_prefix" {')[1].split("}")[0]
    assert re.search(r"default\s*=\s*true", block)
    groups = json.loads(tree("chat-70b-fp8-aws")[EKS_PATH])["eks_managed_node_groups"]
    assert groups and all("use_name_prefix" not in group for group in groups.values())


def test_a_spread_embedder_is_not_crowded_beside_three_tp4_replicas(tmp_path: Path) -> None:
    """Both replicas of a min_replicas 2 embedder went beside the TP4 one on the node two TP4 replicas leave 4 GPUs
    of, one node's upgrade took both, and the warning advised 5; a fleet that keeps them on two nodes comes first
    (newuser48 item 1), and no warning is left for the embedder."""
    path = gke_shared(tmp_path, 20, False, embed="min_replicas: 2")
    plan = plan_workload(load_workload(str(path)))
    assert not [f for f in plan.findings if f.code == "replicas-not-spread"]
    assert [(p.deployments, p.nodes) for p in plan.pools] == [(("chat",), 2), (("embed",), 2)]
    assert "embed" not in node_down(path)
