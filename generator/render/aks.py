"""AKS: Karpenter for Azure, an ``AKSNodeClass`` (karpenter.azure.com/v1beta1) and a ``NodePool`` per GPU pool.

AKS installs the NVIDIA driver on NVIDIA GPU VM sizes (``gpu.mode: Driver``), so the GPU Operator leaves it alone.
Only NVIDIA sizes have a managed driver, and Karpenter considers no other GPU size in that mode (the CRD's
``gpu.mode``): other vendors' pools get ``gpu.mode: None`` and bring their own driver and device plugin. The
``NodePool`` is the AWS build's (:func:`~generator.render.karpenter_aws.karpenter_node_pool`): its limits keep one
node for a replacement, as AKS's Karpenter also launches replacements before it drains a node.

A Spot pool's NodePool carries AKS's Spot label ``kubernetes.azure.com/scalesetpriority: spot`` among its template
labels, as its AKS node pool (``aks_terraform``, ASO) does: a pod that selects Spot nodes by it (AKS's own convention,
https://learn.microsoft.com/en-us/azure/aks/spot-node-pool) is then provisioned for by either. Karpenter labels the node
``karpenter.sh/capacity-type: spot`` from the requirement in any case; the Azure provider's NodePool CRD allows the AKS
label in template labels (its "label domain kubernetes.azure.com is restricted" rule lists it as an exception), and the
provider names it a well-known label of values ``spot`` / ``regular`` (``AKSLabelScaleSetPriority`` in
https://github.com/Azure/karpenter-provider-azure/blob/main/pkg/apis/v1beta1/labels.go), which a template label on it
makes a requirement of, consistent with the capacity type's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.catalog import gpus
from generator.planner.plan import Pool
from generator.planner.spot import AKS_SPOT_LABEL
from generator.render.gpu_sharing import advertised_per_gpu
from generator.render.karpenter_aws import karpenter_node_pool
from generator.render.kube_objects import dns_name
from generator.render.node_disk import AKS_DEFAULT_OS_DISK_GB, AKS_MAX_OS_DISK_GB, NodeDisk
from generator.render.node_tags import node_tags
from generator.workload.models import GpuSharing

#: The OS of every AKS GPU node, node pool (``os_sku``) and AKSNodeClass (``imageFamily``) alike: the floating Ubuntu
#: SKU, which AKS moves with the Kubernetes version (:mod:`generator.render.aks_terraform` says why).
AKS_OS_SKU = "Ubuntu"


def aks_node_class(pool: Pool, workload: str, disk: NodeDisk) -> dict[str, Any]:
    """``AKSNodeClass`` of one pool: Ubuntu image, AKS-managed GPU driver (NVIDIA), OS disk, pool tags on the VMs.

    ``osDiskSizeGB`` holds the node's model files and engine images (``disk``, :mod:`generator.render.node_disk`):
    kubelet and containerd write to the OS disk, whose default is 128 GiB (the CRD's default; newuser26 item 2: a pool's
    ~250 GB of checkpoints). The class has no field that puts them on the VM's local NVMe; AKS places the OS disk
    itself on the VM's local storage (an ephemeral OS disk) where that size fits it, else on a managed disk
    (https://learn.microsoft.com/en-us/azure/virtual-machines/ephemeral-os-disks-faq), and pods reach the local NVMe
    data disks only through Azure Container Storage volumes (https://learn.microsoft.com/en-us/azure/aks/best-practices-storage-nvme).
    """
    managed = gpus()[pool.node.gpu_id].vendor == "nvidia"
    return {
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": dns_name(pool)},
        "spec": {
            "imageFamily": AKS_OS_SKU,
            "gpu": {"mode": "Driver" if managed else "None"},
            "osDiskSizeGB": min(max(disk.root_gib, AKS_DEFAULT_OS_DISK_GB), AKS_MAX_OS_DISK_GB),
            "tags": node_tags("azure", pool.name, workload),
        },
    }


def aks_objects(
    pools: list[Pool],
    workload: str,
    *,
    shares: Mapping[str, GpuSharing | None],
    serving: frozenset[str],
    disks: Mapping[str, NodeDisk],
) -> list[dict[str, Any]]:
    """NodePool + AKSNodeClass for each pool.

    ``shares``: GPU sharing by pool; ``serving``: pools a service runs in; ``disks``: what each pool's nodes keep on
    their OS disk.
    """
    objects: list[dict[str, Any]] = []
    for pool in pools:
        per_gpu = advertised_per_gpu(pool, shares.get(pool.name))
        azure = ("karpenter.azure.com", "AKSNodeClass")
        # a Spot pool's taints hold AKS's own taint of Spot nodes (the planner's), so a pod tolerates it on either
        # provisioner's nodes
        node_pool = karpenter_node_pool(pool, azure, "karpenter.azure.com/sku-gpu-count", per_gpu, serving=pool.name in serving)
        if pool.spot:  # and its label, as the AKS node pool's (fix151, newuser87)
            node_pool["spec"]["template"]["metadata"]["labels"][AKS_SPOT_LABEL[0]] = AKS_SPOT_LABEL[1]
        objects += [node_pool, aks_node_class(pool, workload, disks[pool.name])]
    return objects
