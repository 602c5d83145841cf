"""newuser83 item 2: AKS node pools as Azure Service Operator ``ManagedClustersAgentPool`` objects.

A cluster run with ASO got no manifests: specgen rendered the pools only as ``azurerm_kubernetes_cluster_node_pool``
arguments and Karpenter for Azure objects. Now ``kubernetes/azure-service-operator/`` holds one agent pool per GPU
pool, read off the Terraform node pool's arguments. Oracles: the pinned ASO CRD (``../shared/crds``; skipped with the
reason where it is absent) and the Terraform node pool of the same pool, field by field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.render.aks_terraform import ASO_DIRECTORY
from tests import test_oracles
from tests.conftest import require_shared
from tests.test_aks_node_pools import aks_pools, render
from tests.test_spot_capacity import BASE, KUBE

#: Terraform argument -> agent pool field, written out here rather than read off the renderer's own table.
SAME_VALUE = [
    ("name", "azureName"),
    ("vm_size", "vmSize"),
    ("gpu_instance", "gpuInstanceProfile"),
    ("os_sku", "osSKU"),
    ("os_disk_size_gb", "osDiskSizeGB"),
    ("node_count", "count"),
    ("min_count", "minCount"),
    ("max_count", "maxCount"),
    ("node_labels", "nodeLabels"),
    ("node_taints", "nodeTaints"),
    ("tags", "tags"),
]


def agent_pools(files: dict[str, str]) -> list[dict[str, Any]]:
    """The rendered agent pools, each checked against the ASO CRD (skipped without ``../shared``)."""
    docs = [
        YAML(typ="safe", pure=True).load(text)
        for path, text in sorted(files.items())
        if path.startswith(f"{ASO_DIRECTORY}/managedclustersagentpool-")
    ]
    require_shared(test_oracles.CRD_DIR)
    test_oracles.CURRENT_PROVIDER[0] = "azure"
    for doc in docs:
        assert test_oracles.crd_errors(doc) == [], doc["metadata"]["name"]
    return docs


def spot_files(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "spot.yaml"
    path.write_text(BASE.replace("PROVIDER", "azure").replace("KUBE", KUBE["azure"]))
    return render_file(str(path))


@pytest.mark.parametrize("stem", ["example", "scaling", "mixed", "amd", "spot"])
def test_every_pool_is_an_agent_pool_with_the_terraform_pools_values(tmp_path: Path, stem: str) -> None:
    """One agent pool per Terraform node pool, valid against the CRD, each field equal to the node pool's argument."""
    files = spot_files(tmp_path) if stem == "spot" else render(tmp_path, stem)
    terraform = {args["name"]: args for args in aks_pools(files).values()}
    pools = agent_pools(files)
    assert sorted(p["metadata"]["name"] for p in pools) == sorted(terraform)
    kustomization = YAML(typ="safe", pure=True).load(files[f"{ASO_DIRECTORY}/kustomization.yaml"])
    assert kustomization["resources"] == sorted(f"managedclustersagentpool-{name}.yaml" for name in terraform)
    for pool in pools:
        spec = pool["spec"]
        args = terraform[spec["azureName"]]
        for argument, field in SAME_VALUE:
            assert spec.get(field) == args[argument], (argument, field)
        assert spec.get("enableAutoScaling", False) == args["auto_scaling_enabled"]
        assert spec["gpuProfile"] == {"driver": args["gpu_driver"]}
        assert spec["scaleSetPriority"] == args.get("priority", "Regular")
        assert spec.get("scaleSetEvictionPolicy") == args.get("eviction_policy")
        assert spec.get("spotMaxPrice") == args.get("spot_max_price")
        assert (spec["mode"], spec["osType"], spec["owner"]) == (
            "User",
            "Linux",
            {"name": json.loads(files["spec.json"])["plan"]["workload"]},
        )
        assert "namespace" not in pool["metadata"]  # applied into the ManagedCluster's namespace


# (workload, pool in spec.json, priority, eviction, max price, autoscaled, count, min, max, MIG profile, driver)
EXPECTED = [
    ("example", "chat_h200_sxm_141gb", "Regular", None, None, False, 2, None, None, None, "Install"),
    ("scaling", "chat70_h100_sxm5_80gb", "Regular", None, None, True, 3, 2, 3, None, "Install"),
    ("scaling", "lora_a100_pcie_80gb", "Regular", None, None, True, 0, 0, 1, None, "Install"),
    ("mixed", "small_h100_sxm5_80gb", "Regular", None, None, False, 1, None, None, "MIG3g", "Install"),
    ("amd", "chat_mi300x_192gb", "Regular", None, None, False, 1, None, None, None, "None"),
    ("spot", "batch_a100_pcie_80gb", "Spot", "Delete", -1, False, 1, None, None, None, "Install"),
    ("spot", "lora_mi300x_192gb", "Spot", "Delete", -1, True, 0, 0, 1, None, "None"),
    ("spot", "chat_a100_pcie_80gb", "Regular", None, None, False, 1, None, None, None, "Install"),
]


@pytest.mark.parametrize(
    ("stem", "pool", "priority", "eviction", "price", "scales", "count", "low", "high", "mig", "driver"),
    [pytest.param(*row, id=f"{row[0]}-{row[1]}") for row in EXPECTED],
)
def test_spot_autoscaled_and_mig_pools(
    tmp_path: Path,
    stem: str,
    pool: str,
    priority: str,
    eviction: str | None,
    price: int | None,
    scales: bool,
    count: int,
    low: int | None,
    high: int | None,
    mig: str | None,
    driver: str,
) -> None:
    """A Spot pool is Spot / Delete / -1 with AKS's Spot label and taint; an autoscaled one has its bounds."""
    files = spot_files(tmp_path) if stem == "spot" else render(tmp_path, stem)
    name = aks_pools(files)[pool]["name"]
    (spec,) = [p["spec"] for p in agent_pools(files) if p["metadata"]["name"] == name]
    got = (
        spec["scaleSetPriority"],
        spec.get("scaleSetEvictionPolicy"),
        spec.get("spotMaxPrice"),
        spec.get("enableAutoScaling", False),
        spec["count"],
        spec.get("minCount"),
        spec.get("maxCount"),
        spec.get("gpuInstanceProfile"),
        spec["gpuProfile"]["driver"],
    )
    assert got == (priority, eviction, price, scales, count, low, high, mig, driver)
    spot = priority == "Spot"
    assert (spec["nodeLabels"].get("kubernetes.azure.com/scalesetpriority") == "spot") == spot
    assert ("kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in spec["nodeTaints"]) == spot


def test_no_agent_pools_without_the_kubernetes_output(tmp_path: Path) -> None:
    files = render(tmp_path, "scaling", "terraform")
    assert not [path for path in files if path.startswith(ASO_DIRECTORY)]


def test_kubernetes_alone_says_the_agent_pools_and_karpenter_are_alternatives(tmp_path: Path) -> None:
    """With Kubernetes alone the ASO agent pools and Karpenter's NodePools both provision every pool: said.

    With both outputs: test_aks_node_pools.test_the_two_provisioners_are_said."""
    files = render(tmp_path, "scaling", "kubernetes")
    (finding,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == "azure-node-provisioners"]
    assert finding["message"].startswith(
        f"{ASO_DIRECTORY}/ (AKS node pools as Azure Service Operator ManagedClustersAgentPools) and kubernetes/azure/ "
    )
