"""AKS: Karpenter for Azure, an ``AKSNodeClass`` (karpenter.azure.com/v1beta1) and a ``NodePool`` per GPU pool.

AKS installs the NVIDIA driver on GPU VM sizes (``gpu.mode: Driver``), so the GPU Operator leaves it alone.
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Pool
from generator.render.karpenter_aws import karpenter_node_pool
from generator.render.kube_objects import dns_name
from generator.render.node_tags import node_tags


def aks_node_class(pool: Pool, workload: str) -> dict[str, Any]:
    """``AKSNodeClass`` of one pool: Ubuntu 22.04 image, AKS-managed GPU driver, pool tags on the VMs."""
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": dns_name(pool)},
        "spec": {
            "imageFamily": "Ubuntu2204",
            "gpu": {"mode": "Driver"},
            "tags": node_tags("azure", pool.name, workload),
        },
    }


def aks_objects(pools: list[Pool], workload: str) -> list[dict[str, Any]]:
    """NodePool + AKSNodeClass for each pool."""
    objects: list[dict[str, Any]] = []
    for pool in pools:
        objects += [
            karpenter_node_pool(pool, ("karpenter.azure.com", "AKSNodeClass"), "karpenter.azure.com/sku-gpu-count"),
            aks_node_class(pool, workload),
        ]
    return objects
