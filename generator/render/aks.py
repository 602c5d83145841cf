"""AKS: Karpenter for Azure, an ``AKSNodeClass`` (karpenter.azure.com/v1beta1) and a ``NodePool`` per GPU pool.

AKS installs the NVIDIA driver on NVIDIA GPU VM sizes (``gpu.mode: Driver``), so the GPU Operator leaves it alone.
Only NVIDIA sizes have a managed driver, and Karpenter considers no other GPU size in that mode (the CRD's
``gpu.mode``): other vendors' pools get ``gpu.mode: None`` and bring their own driver and device plugin. The
``NodePool`` is the AWS build's (:func:`~generator.render.karpenter_aws.karpenter_node_pool`): its limits keep one
node for a replacement, as AKS's Karpenter also launches replacements before it drains a node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.catalog import gpus
from generator.planner.plan import Pool
from generator.render.gpu_sharing import advertised_per_gpu
from generator.render.karpenter_aws import karpenter_node_pool
from generator.render.kube_objects import dns_name
from generator.render.node_tags import node_tags
from generator.workload.models import GpuSharing


def aks_node_class(pool: Pool, workload: str) -> dict[str, Any]:
    """``AKSNodeClass`` of one pool: Ubuntu 22.04 image, AKS-managed GPU driver (NVIDIA), pool tags on the VMs."""
    managed = gpus()[pool.node.gpu_id].vendor == "nvidia"
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": dns_name(pool)},
        "spec": {
            "imageFamily": "Ubuntu2204",
            "gpu": {"mode": "Driver" if managed else "None"},
            "tags": node_tags("azure", pool.name, workload),
        },
    }


def aks_objects(
    pools: list[Pool], workload: str, *, shares: Mapping[str, GpuSharing | None], serving: frozenset[str]
) -> list[dict[str, Any]]:
    """NodePool + AKSNodeClass for each pool (``shares``: GPU sharing by pool; ``serving``: pools a service runs in)."""
    objects: list[dict[str, Any]] = []
    for pool in pools:
        per_gpu = advertised_per_gpu(pool, shares.get(pool.name))
        azure = ("karpenter.azure.com", "AKSNodeClass")
        objects += [
            karpenter_node_pool(pool, azure, "karpenter.azure.com/sku-gpu-count", per_gpu, serving=pool.name in serving),
            aks_node_class(pool, workload),
        ]
    return objects
