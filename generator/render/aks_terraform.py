"""AKS MIG node pools for Terraform: ``azurerm_kubernetes_cluster_node_pool`` arguments, in ``terraform/aks-node-pools.tf``.

A pool whose GPUs the workload shares with MIG on Azure (:func:`~generator.render.gpu_sharing.aks_mig_pools`) is an
AKS node pool with AKS's own MIG setting, ``gpu_instance`` (:mod:`generator.workload.aks_mig`): Karpenter for Azure
has no MIG field, and AKS partitions the GPUs of such a pool itself at each node's boot. Its nodes carry the pool's
labels (the serving pods' node selector, its device-plugin config key, whose ``migStrategy: single`` advertises each
instance as ``nvidia.com/gpu``, and the label that keeps the GPU Operator's MIG manager off them) and its GPU taint;
AKS installs the driver (``gpu_driver = "Install"``, as the AKSNodeClass's ``gpu.mode: Driver``), on Ubuntu 22.04
(MIG node pools do not run Azure Linux, https://learn.microsoft.com/en-us/azure/aks/gpu-multi-instance). A serving
pool with an average rate scales between the average's nodes and the peak's (``min_count`` / ``max_count``).

The provider's rules, from its ``kubernetes_cluster_node_pool`` page: ``gpu_instance`` is one of MIG1g, MIG2g, MIG3g,
MIG4g, MIG7g and forces a new resource; a Linux pool's name is 1 to 12 lowercase letters and digits, starting with a
letter (AKS's agent pool name rule). The name holds the profile (``mig3g`` + a digest of the specgen pool's name), so
that another profile is a new pool: created beside the old one before it is deleted (create_before_destroy).
"""

from __future__ import annotations

import hashlib
from typing import Any

from generator.planner.plan import Plan, Pool
from generator.render.env import render_template
from generator.render.gpu_sharing import aks_mig_pools, pool_shares
from generator.render.node_disk import AKS_DEFAULT_OS_DISK_GB, AKS_MAX_OS_DISK_GB, NodeDisk, node_disks
from generator.render.node_tags import node_tags
from generator.workload.aks_mig import aks_gpu_instance
from generator.workload.models import GpuSharing, Workload

PATH = "terraform/aks-node-pools.tf"
#: Digest characters after the profile in a node pool's name (12 in all, AKS's limit for a Linux pool).
_DIGEST_CHARS = 7


def aks_node_pool_name(pool_name: str, gpu_instance: str) -> str:
    """A pool's AKS name: its profile (``mig3g``) and a digest of its specgen name, 12 lowercase letters and digits."""
    digest = hashlib.sha256(f"{pool_name}\n{gpu_instance}".encode()).hexdigest()[:_DIGEST_CHARS]
    return f"{gpu_instance.lower()}{digest}"


def aks_node_pool(pool: Pool, workload: str, profile: str, disk: NodeDisk) -> dict[str, Any]:
    """One pool's ``azurerm_kubernetes_cluster_node_pool`` arguments but its cluster."""
    gpu_instance = aks_gpu_instance(pool.node.gpu_id, profile)
    if gpu_instance is None:  # refused at load (kubernetes.gpu_sharing.mig_profile): a defect if it gets here
        raise AssertionError(f"no AKS GPU instance profile for {profile} on {pool.node.gpu_id}")
    scales = pool.min_nodes is not None
    return {
        "name": aks_node_pool_name(pool.name, gpu_instance),
        "vm_size": str(pool.node.instance_type),
        "gpu_instance": gpu_instance,
        "gpu_driver": "Install",
        "os_sku": "Ubuntu2204",
        "os_disk_size_gb": min(max(disk.root_gib, AKS_DEFAULT_OS_DISK_GB), AKS_MAX_OS_DISK_GB),
        "node_count": pool.nodes,
        "auto_scaling_enabled": scales,
        "min_count": pool.min_nodes if scales else None,
        "max_count": pool.nodes if scales else None,
        "node_labels": dict(pool.labels),
        "node_taints": [f"{key}={value}:{effect}" for key, value, effect in pool.taints],
        "tags": node_tags("azure", pool.name, workload),
    }


def aks_node_pools(plan: Plan, workload: Workload) -> dict[str, dict[str, Any]]:
    """The MIG pools' arguments, keyed by specgen pool name (none where the plan has no AKS MIG pool)."""
    pools = aks_mig_pools(plan)
    if not pools:
        return {}
    disks = node_disks(plan)
    shares = pool_shares(plan, workload)
    return {pool.name: aks_node_pool(pool, plan.workload, _mig_profile(shares[pool.name]), disks[pool.name]) for pool in pools}


def _mig_profile(sharing: GpuSharing | None) -> str:
    """The MIG profile of an AKS MIG pool's sharing (one it has: the pool is one because it shares by MIG)."""
    assert sharing is not None, "an AKS MIG pool shares its GPUs by MIG"
    return str(sharing.mig_profile)


def render_aks_terraform(pools: dict[str, dict[str, Any]], workload: str) -> str:
    """:data:`PATH`: the ``aks_cluster_id`` and ``aks_node_pools`` variables and the ``aks_node_pools`` output."""
    return render_template("terraform/aks-node-pools.tf.j2", workload=workload, pools=pools)
