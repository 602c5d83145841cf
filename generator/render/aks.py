"""AKS: Karpenter for Azure, an ``AKSNodeClass`` (karpenter.azure.com/v1beta1) and a ``NodePool`` per GPU pool.

AKS installs the NVIDIA driver on GPU VM sizes (``gpu.mode: Driver``), so the GPU Operator leaves it alone.
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Pool
from generator.render.karpenter_aws import EMPTY_NODE_GRACE
from generator.render.kube_objects import dns_name, gpu_resource, node_taints


def aks_node_class(pool: Pool, workload: str) -> dict[str, Any]:
    """``AKSNodeClass`` of one pool: Ubuntu 22.04 image, AKS-managed GPU driver, pool tags on the VMs."""
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": dns_name(pool)},
        "spec": {
            "imageFamily": "Ubuntu2204",
            "gpu": {"mode": "Driver"},
            "tags": {"specgen-pool": pool.name, "specgen-workload": workload},
        },
    }


def aks_node_pool(pool: Pool) -> dict[str, Any]:
    """Karpenter ``NodePool`` (Azure build) of one pool."""
    node = pool.node
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": dns_name(pool)},
        "spec": {
            "template": {
                "metadata": {"labels": dict(pool.labels)},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": dns_name(pool)},
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [str(node.instance_type)]},
                        {"key": "karpenter.azure.com/sku-gpu-count", "operator": "In", "values": [str(node.gpus)]},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                    ],
                    "taints": node_taints(pool),
                    "expireAfter": "Never",
                },
            },
            "limits": {gpu_resource(pool): str(pool.nodes * node.gpus)},
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": EMPTY_NODE_GRACE, "budgets": [{"nodes": "1"}]},
        },
    }


def aks_objects(pools: list[Pool], workload: str) -> list[dict[str, Any]]:
    """NodePool + AKSNodeClass for each pool."""
    objects: list[dict[str, Any]] = []
    for pool in pools:
        objects += [aks_node_pool(pool), aks_node_class(pool, workload)]
    return objects
