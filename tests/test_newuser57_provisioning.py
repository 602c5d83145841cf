"""newuser57 items 2, 3 and 4: bare-metal provisioning that joins, provisions and owns what it says.

* Item 2: one host whose pool joins a Cluster API cluster (``capi``), or whose workload names the cluster it joins
  (``kubernetes.cluster_name``), was "its own cluster" (``kubernetes-single-host``): no GPU Operator values and no
  kubeadm join file, although the MachineDeployment joins it to the site's Cluster; a 2 -> 1 shrink deleted
  ``cluster/`` and ``kubeadm/``, and the same file rendered with another got both.
* Item 3: ``tools: [maas, metal3, ...]`` (the shipped chat-70b-maas example) had MAAS and Ironic drive the same BMCs
  and answer PXE/DHCP for the same MACs; ``[maas, capi]`` named a Metal3MachineTemplate with no BareMetalHost.
* Item 4: ``provisioning/cluster-api`` (or ``provisioning/metal3``) created the namespace that holds the site's
  Cluster: ``kubectl delete -k`` deleted the Cluster and every Machine, and two workloads rendered together both
  owned it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file, render_files
from generator.errors import InputError
from generator.render.provisioning import SHARED_NAMESPACE, SITE_NAMESPACE
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import edited_copy, specgen_in_process

SINGLE_HOST = "kubernetes-single-host"
METAL3_EXAMPLE = REPO / "examples" / "chat-70b-metal3.yaml"

#: The report's one-a.yaml: one owned R760xa joining the site's cluster ``colo`` by Cluster API on Tinkerbell.
ONE_HOST = """\
version: 1
name: team-{team}
deployments:
  - name: chat{team}
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 5}}
{kubernetes}hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dell-r760xa
      gpu: l40s-48gb
      gpus_per_server: 4
      count: 1
      hosts:
        - {{name: r760-{team}, boot_mac_address: "aa:bb:cc:00:00:0{mac}", ip_address: 10.9.0.1{mac}, netmask: 255.255.255.0,
            gateway: 10.9.0.1, boot_disk: /dev/sda}}
{provisioning}"""
CLUSTER = "kubernetes: {cluster_name: colo}\n"
CAPI = "provisioning: {tools: [tinkerbell, capi], namespace: colo}\n"


def _one_host(folder: Path, team: str = "a", *, kubernetes: str = CLUSTER, provisioning: str = CAPI) -> Path:
    path = folder / f"one-{team}.yaml"
    mac = {"a": 1, "b": 2}[team]
    path.write_text(ONE_HOST.format(team=team, mac=mac, kubernetes=kubernetes, provisioning=provisioning))
    return path


def _codes(files: dict[str, str]) -> list[str]:
    return [f["code"] for f in json.loads(files["spec.json"])["plan"]["findings"]]


def _joined(files: dict[str, str], prefix: str = "") -> bool:
    """A join file and the cluster's GPU stack are rendered (under ``prefix`` for the workload's own files)."""
    return any(p.startswith(f"{prefix}kubeadm/join-") for p in files) and "cluster/gpu-operator/values.yaml" in files


# --- item 2: one host that joins a cluster is no cluster of its own ---------------------------------------------------


@pytest.mark.parametrize(
    ("kubernetes", "provisioning", "joins"),
    [
        pytest.param(CLUSTER, CAPI, True, id="capi-and-cluster-name"),
        pytest.param("", CAPI, True, id="capi"),  # the MachineDeployment joins the site's Cluster (the workload's name)
        pytest.param(CLUSTER, "", True, id="cluster-name"),  # "the Kubernetes cluster the node pools join"
        pytest.param("", "provisioning: {tools: [tinkerbell]}\n", False, id="neither"),  # a desktop: its own cluster
    ],
)
def test_one_host_that_joins_a_cluster_gets_the_join_file_and_the_gpu_operator(
    tmp_path: Path, kubernetes: str, provisioning: str, joins: bool
) -> None:
    files = render_file(str(_one_host(tmp_path, kubernetes=kubernetes, provisioning=provisioning)))
    assert _joined(files) is joins
    assert (SINGLE_HOST in _codes(files)) is not joins
    if joins:
        join = YAML(typ="safe", pure=True).load(files["kubeadm/join-chata_l40s_48gb.yaml"])
        assert join["kind"] == "JoinConfiguration"


def test_a_pool_shrinking_to_one_node_keeps_the_gpu_operator_and_its_join_file(tmp_path: Path) -> None:
    """The report's maas-shrink.yaml on Cluster API: 12 -> 5 req/s takes the pool from 2 servers to 1; cluster/ and
    kubeadm/ vanished, and a GitOps prune uninstalled the operator from a cluster still running the GPU node."""
    two = render_file(str(METAL3_EXAMPLE))
    one = render_file(str(edited_copy(METAL3_EXAMPLE, tmp_path, ("requests_per_second: 12", "requests_per_second: 5"))))
    deployment = YAML(typ="safe", pure=True).load(one["provisioning/cluster-api/machinedeployment-chat-h100-sxm5-80gb.yaml"])
    assert deployment["spec"]["replicas"] == 1  # the figure that made it "its own cluster"
    assert _joined(two) and _joined(one)
    assert sorted(p for p in two if p.startswith(("cluster/", "kubeadm/"))) == sorted(
        p for p in one if p.startswith(("cluster/", "kubeadm/"))
    )
    assert SINGLE_HOST not in _codes(one)


def test_a_joining_host_renders_the_same_alone_and_with_another_workload(tmp_path: Path) -> None:
    """Alone, one-a.yaml got no join file; rendered with one-b.yaml it did (and the cluster's GPU stack)."""
    alone = render_file(str(_one_host(tmp_path, "a")))
    together = render_files([str(_one_host(tmp_path, "a")), str(_one_host(tmp_path, "b"))])
    assert _joined(alone) and _joined(together, "team-a/")
    own = {p for p in alone if p.startswith(("kubeadm/", "provisioning/"))}
    assert own == {p.removeprefix("team-a/") for p in together if p.startswith(("team-a/kubeadm/", "team-a/provisioning/"))}
    for path in own:
        # newuser63 item 9: a join file names its pool's rack, which a tree of several workloads names after the
        # workload (team-a-rack-01), as the hosts' specgen_rack (newuser33 item 1); the rest is the same
        joined = together[f"team-a/{path}"].replace("specgen.dev/rack=team-a-rack-", "specgen.dev/rack=rack-")
        assert alone[path] == joined, path


# --- item 3: two provisioners of the same hosts, and Cluster API with none it renders ------------------------------


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        pytest.param(
            "[maas, metal3, capi]",
            "maas and metal3 would both provision the owned hosts (MAAS boots the machines it commissions and deploys "
            "over the network from its own DHCP server, powers them through their BMCs and writes their OS, "
            "https://discourse.maas.io/t/managing-dhcp/2909; Metal3's Ironic powers each BareMetalHost through the same "
            "BMC, answers DHCP for its boot MAC and writes its own image to the disk): pick one",
            id="maas-metal3",
        ),
        pytest.param(
            "[maas, capi]",
            "capi with maas: the rendered MachineDeployments name Metal3MachineTemplates, whose BareMetalHosts Ironic "
            "provisions, on the hosts MAAS deploys; Cluster API on MAAS needs the MAAS infrastructure provider "
            "(MaasMachineTemplate), which specgen does not render: drop capi (MAAS deploys the hosts and the kubeadm join "
            "files join them to the cluster), or provision with metal3 or tinkerbell and capi instead of maas",
            id="maas-capi",
        ),
    ],
)
def test_maas_beside_metal3_or_cluster_api_is_refused_at_the_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tools: str, said: str
) -> None:
    path = edited_copy(METAL3_EXAMPLE, tmp_path, ("tools: [metal3, capi]", f"tools: {tools}"))
    line = path.read_text().splitlines().index(f"  tools: {tools}") + 1
    expected = f"{path}:{line}:10: provisioning.tools: {said}"
    with pytest.raises(InputError) as refused:
        load_workload(str(path))
    assert str(refused.value) == expected
    for args in (("validate", str(path)), ("render", str(path), "-o", str(tmp_path / "out"))):
        code, _, err = specgen_in_process(capsys, *args)
        assert (code, err) == (1, f"specgen: error: {expected}\n"), args
    assert not (tmp_path / "out").exists()


def test_the_maas_example_is_maas_alone_and_metal3_has_its_own() -> None:
    """The shipped example listed [maas, metal3, capi]: MAAS now deploys its hosts and kubeadm joins them."""
    maas = render_file(str(REPO / "examples" / "chat-70b-maas.yaml"))
    assert load_workload(str(REPO / "examples" / "chat-70b-maas.yaml")).workload.provisioning.tools == ("maas",)
    assert sorted(p for p in maas if p.startswith("provisioning/")) == [
        "provisioning/maas/maas.auto.tfvars.json",
        "provisioning/maas/variables.tf",
    ]
    assert _joined(maas)
    metal3 = render_file(str(METAL3_EXAMPLE))
    assert [p for p in metal3 if "/baremetalhost-" in p] == [
        "provisioning/metal3/baremetalhost-gpu-a01.yaml",
        "provisioning/metal3/baremetalhost-gpu-a02.yaml",
    ]
    assert not [p for p in metal3 if p.startswith("provisioning/maas/")]


def test_cluster_api_alone_still_takes_hosts_the_site_registers(tmp_path: Path) -> None:
    """``[capi]`` is Cluster API on Metal3 hosts the site registers itself (cluster-api-templates says so): kept."""
    path = edited_copy(METAL3_EXAMPLE, tmp_path, ("tools: [metal3, capi]", "tools: [capi]"))
    files = render_file(str(path))
    assert [p for p in files if p.startswith("provisioning/")] == [
        "provisioning/cluster-api/kustomization.yaml",
        "provisioning/cluster-api/machinedeployment-chat-h100-sxm5-80gb.yaml",
    ]


# --- item 4: no Namespace for the namespace that holds the site's Cluster ---------------------------------------------


def _objects(files: dict[str, str], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every Kubernetes object of the tree's kustomize directories, with the workload (first path part) owning it."""
    reader = YAML(typ="safe", pure=True)
    found = []
    for path, text in sorted(files.items()):
        if path.endswith(".yaml") and "kustomization" not in path and "/" in path and path.startswith(prefix):
            doc = reader.load(text.split("---\n", 1)[1])
            if isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc and "metadata" in doc:
                found.append((path.split("/")[0], doc))
    return found


@pytest.mark.parametrize(
    ("example", "directories"),
    [
        pytest.param("colo-tinkerbell", "provisioning/cluster-api renders", id="tinkerbell-capi"),
        pytest.param("chat-70b-metal3", "provisioning/metal3 and provisioning/cluster-api render", id="metal3-capi"),
    ],
)
def test_no_kustomization_creates_the_namespace_of_the_sites_cluster(example: str, directories: str) -> None:
    files = render_file(str(REPO / "examples" / f"{example}.yaml"))
    namespace = load_workload(str(REPO / "examples" / f"{example}.yaml")).workload.provisioning.namespace
    kinds = [(doc["kind"], doc["metadata"]["name"]) for _, doc in _objects(files, "provisioning/")]
    assert ("Namespace", namespace) not in kinds and ("MachineDeployment", "chat-h100-sxm5-80gb") in kinds
    assert not [p for p in files if p.startswith("provisioning/") and "/namespace-" in p]
    (found,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == SITE_NAMESPACE]
    assert found["level"] == "info" and found["path"] == "provisioning.namespace"
    assert f"provisioning.namespace {namespace} holds the site's own objects" in found["message"]
    assert f"{directories} no Namespace object for it" in found["message"]
    assert f"create {namespace} before applying" in found["message"]
    assert f"`{SITE_NAMESPACE}`" in files["SPEC.md"]


def test_metal3_alone_leaves_the_namespace_of_the_bmc_secrets_to_the_site(tmp_path: Path) -> None:
    """Without capi the BareMetalHosts' namespace still holds the BMC credentials Secrets the site created."""
    path = edited_copy(METAL3_EXAMPLE, tmp_path, ("tools: [metal3, capi]", "tools: [metal3]"))
    files = render_file(str(path))
    assert sorted(p for p in files if p.startswith("provisioning/")) == [
        "provisioning/metal3/baremetalhost-gpu-a01.yaml",
        "provisioning/metal3/baremetalhost-gpu-a02.yaml",
        "provisioning/metal3/kustomization.yaml",
    ]
    (found,) = [f["message"] for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == SITE_NAMESPACE]
    assert "(the BMC credentials Secrets the BareMetalHosts name): provisioning/metal3 renders no Namespace" in found
    assert "Cluster" not in found.split(":")[0]


def test_the_tinkerbell_install_namespace_keeps_its_own_finding(tmp_path: Path) -> None:
    path = edited_copy(REPO / "examples" / "colo-tinkerbell.yaml", tmp_path, ("namespace: colo-chat", "namespace: tinkerbell"))
    codes = _codes(render_file(str(path)))
    assert SHARED_NAMESPACE in codes and SITE_NAMESPACE not in codes


def test_two_workloads_in_one_tree_own_no_object_together(tmp_path: Path) -> None:
    """one-a.yaml and one-b.yaml in cluster colo, namespace colo: each rendered namespace-colo.yaml, and deleting
    team-a's kustomization deleted team-b's MachineDeployments and the Cluster."""
    files = render_files([str(_one_host(tmp_path, "a")), str(_one_host(tmp_path, "b"))])
    objects = _objects(files)
    keys = Counter(
        (doc["apiVersion"], doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"]) for _, doc in objects
    )
    assert [key for key, count in keys.items() if count > 1] == []
    owners: dict[str, list[str]] = {}
    for owner, doc in objects:
        owners.setdefault(doc["kind"], []).append(owner)
    assert sorted(owners["MachineDeployment"]) == ["team-a", "team-b"] and sorted(owners["Hardware"]) == ["team-a", "team-b"]
    assert not [doc for owner, doc in objects if doc["kind"] == "Namespace" and owner != "cluster"]
    for team in ("team-a", "team-b"):
        deployment = YAML(typ="safe", pure=True).load(
            files[f"{team}/provisioning/cluster-api/machinedeployment-chat{team[-1]}-l40s-48gb.yaml"]
        )
        assert (deployment["metadata"]["namespace"], deployment["spec"]["clusterName"]) == ("colo", "colo")
