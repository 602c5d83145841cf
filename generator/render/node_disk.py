"""The disk a cloud node's kubelet and containerd write to, sized for the files its pool's plan puts on the node.

A node of a pool keeps its deployments' model files (a checkpoint quantized as the engine loads it in its own,
larger format), a training job's dataset and checkpoints (``Pool.files_bytes``, what the planner sizes local NVMe
for), and the engines' container images. Where the instance's local NVMe (instance store) holds them, the node
class puts kubelet and containerd on it (Karpenter's ``instanceStorePolicy: RAID0``, nodeadm's ``localStorage``
RAID0); otherwise the root / OS disk is sized to hold them: the providers' defaults (an EKS AL2023 node's 20 GiB
root volume, an AKS node's 128 GiB OS disk, a GKE node's 100 GB boot disk) do not hold a 70B checkpoint (newuser26 item
2, newuser31 item 2).
"""

from __future__ import annotations

import math

from generator.named_tuple import NamedTuple
from generator.planner.node_storage import ENGINE_IMAGE_BYTES, store_holds
from generator.planner.plan import Plan, Pool
from generator.units import GIB

#: The OS and its agents on the root disk: the EKS AL2023 AMI's own root volume, 20 GiB ("Disk size in GiB for
#: nodes. Defaults to `20`", terraform-aws-eks modules/eks-managed-node-group/variables.tf ``disk_size``); an AKS
#: node's OS disk is at least 30 GiB (``osDiskSizeGB`` minimum, karpenter.azure.com_aksnodeclasses.yaml); a GKE node's
#: boot disk at least 10 GB ("The smallest allowed disk size is 10GB", ContainerNodePool ``nodeConfig.diskSizeGb``).
OS_BYTES = {"aws": 20 * GIB, "azure": 30 * GIB, "gcp": 10 * GIB}
#: The share of its disk a node fills before kubelet deletes images to free it (``imageGCHighThresholdPercent``,
#: default 85, https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/): sized so the files and
#: images stay under it, the engines' images are not collected while their pods restart.
IMAGE_GC_HIGH_PERCENT = 85
#: Azure's disk sizes named "GB" (azurerm ``os_disk_size_gb`` "The Agent Operating System disk size in GB", AKS's
#: ``osDiskSizeGB``, a managed disk's ``diskSizeGB``) count GiB, 2^30 bytes: Azure's own tables give the same limits
#: and tiers in GiB (a managed disk at most "32,767 GiB", the most ``diskSizeGB`` takes, and a P10 disk 128 GiB,
#: https://learn.microsoft.com/en-us/azure/virtual-machines/disks-types; Azure's rule on ``diskSizeGB`` names its
#: billing sizes 32, 64, ... 32768 GiB, https://azure.github.io/PSRule.Rules.Azure/en/rules/Azure.VM.DiskSizeAlignment/).
#: So an AKS pool's figure is :func:`root_disk_gib`'s GiB, rounded up, and is said in GiB (fix115 item 2: SPEC.md and
#: ``diff`` said "GB" of it).
AZURE_DISK_UNIT = "GiB"
#: The largest AKS OS disk (``osDiskSizeGB`` maximum 2048, karpenter.azure.com_aksnodeclasses.yaml; an ephemeral
#: OS disk is at most 2 TiB too, https://learn.microsoft.com/en-us/azure/virtual-machines/ephemeral-os-disks-faq).
AKS_MAX_OS_DISK_GB = 2048
#: An AKS node's OS disk where none is named (``osDiskSizeGB`` default 128): a class never asks for less.
AKS_DEFAULT_OS_DISK_GB = 128
#: A GKE node's boot disk where none is named ("disk_size_gb ... Defaults to 100GB", terraform-provider-google
#: container_cluster ``node_config``): a pool whose files fit it keeps the default.
GKE_DEFAULT_BOOT_DISK_GB = 100


def node_images(plan: Plan, pool: Pool) -> int:
    """Container images a node of ``pool`` pulls: one an engine its services run, one for training jobs."""
    kinds = {
        d.details.get("serving_engine", "vllm") if d.kind == "inference" else "training"
        for d in plan.deployments
        if d.in_pool(pool.name)
    }
    return len(kinds)


def node_disk_bytes(plan: Plan, pool: Pool) -> int:
    """Bytes a node of ``pool`` writes under kubelet and containerd: its files and its engines' images."""
    return pool.files_bytes + node_images(plan, pool) * ENGINE_IMAGE_BYTES


def instance_store_holds(plan: Plan, pool: Pool) -> bool:
    """Whether the node's local NVMe (instance store), striped as one array, holds what :func:`node_disk_bytes` counts."""
    return store_holds(pool.node, node_disk_bytes(plan, pool))


def root_disk_gib(plan: Plan, pool: Pool) -> int:
    """GiB of a root / OS disk holding the OS and :func:`node_disk_bytes` below kubelet's image-collection threshold."""
    used = OS_BYTES[pool.node.provider] + node_disk_bytes(plan, pool)
    return math.ceil(used * 100 / IMAGE_GC_HIGH_PERCENT / GIB)


class NodeDisk(NamedTuple):
    """Where a pool's nodes keep their files: on the instance store (``local``), else on a root disk of ``root_gib``."""

    local: bool
    root_gib: int


def node_disks(plan: Plan) -> dict[str, NodeDisk]:
    """:class:`NodeDisk` of each pool of ``plan`` by name."""
    return {
        pool.name: NodeDisk(instance_store_holds(plan, pool), root_disk_gib(plan, pool))
        for pool in plan.pools
        if pool.node.provider in OS_BYTES
    }


def gke_boot_disk_gb(disk: NodeDisk) -> int | None:
    """A GKE pool's ``diskSizeGb`` where the default boot disk does not hold its files; None where it does.

    Counted in GB of 10^9 bytes from :func:`root_disk_gib`'s GiB, the larger figure whichever unit GKE's "GB" means.
    """
    if disk.local:
        return None
    gb = math.ceil(disk.root_gib * GIB / 10**9)
    return gb if gb > GKE_DEFAULT_BOOT_DISK_GB else None


#: An EKS AL2023 node's root volume where none is mapped (the instance store holds its files): the AMI's own, 20 GiB.
EKS_AMI_ROOT_GIB = 20


def root_disk_size(provider: str, disk: NodeDisk) -> int:
    """The root / OS disk a node of ``disk`` asks for, as the provider's rendered objects size it (its unit).

    AKS: ``os_disk_size_gb`` / ``osDiskSizeGB`` (GiB, :data:`AZURE_DISK_UNIT`; at least the default, at most the
    maximum); EKS: the root EBS
    volume (GiB), the AMI's where the instance store holds the files; GKE: the boot disk (GB), its default where that
    holds them.
    """
    if provider == "azure":
        return min(max(disk.root_gib, AKS_DEFAULT_OS_DISK_GB), AKS_MAX_OS_DISK_GB)
    if provider == "aws":
        return EKS_AMI_ROOT_GIB if disk.local else disk.root_gib
    return gke_boot_disk_gb(disk) or GKE_DEFAULT_BOOT_DISK_GB


def with_root_disks(plan: Plan) -> Plan:
    """``plan`` with each cloud pool's :attr:`~generator.planner.plan.Pool.root_disk_size` (``spec.json`` records it).

    newuser74 item 12: a model swap resized every AKS node's OS disk (223 -> 140 GB), which cycles every node through a
    temporary pool, while ``diff`` said only "what runs on it"; the diff compares this figure.
    """
    disks = node_disks(plan)
    pools = tuple(
        pool._replace(root_disk_size=root_disk_size(pool.node.provider, disks[pool.name])) if pool.name in disks else pool
        for pool in plan.pools
    )
    return plan._replace(pools=pools)


#: What each provider calls a node's root disk in what specgen renders, before the figure of :func:`root_disk_size`, and
#: that figure's unit (AKS's: its fields' "GB" is GiB, :data:`AZURE_DISK_UNIT`).
ROOT_DISK_NAMES = {
    "azure": ("OS disk, AKS node pool os_disk_size_gb / AKSNodeClass osDiskSizeGB", f" {AZURE_DISK_UNIT}"),
    "aws": ("root volume (EBS)", " GiB"),
    "gcp": ("boot disk (diskSizeGb)", " GB"),
}


def root_disk_text(plan: Plan, pool: Pool) -> str:
    """What a cloud pool's node root / OS disk is and what it is sized from, as SPEC.md says it ('' off a cloud).

    newuser74 item 15: ``os_disk_size_gb`` 223 / 136 / 140 stood in the AKS Terraform and AKSNodeClass with no word on
    what sets it, the pool's model files, which is why a model swap resizes it (and replaces every node: item 12).
    """
    provider = pool.node.provider
    if provider not in OS_BYTES:
        return ""
    disk = NodeDisk(instance_store_holds(plan, pool), root_disk_gib(plan, pool))
    name, unit = ROOT_DISK_NAMES[provider]
    said = f"{name} {root_disk_size(provider, disk):,}{unit}"
    files = (
        f"the pool's files, {pool.files_bytes / 1e9:,.1f} GB (its models' checkpoint files, a training job's dataset and "
        f"checkpoints: files_bytes), and {node_images(plan, pool)} engine image(s) of {ENGINE_IMAGE_BYTES / 1e9:.0f} GB"
    )
    sized = (
        f"{files}, with the OS's {OS_BYTES[provider] / GIB:.0f} GiB, below kubelet's {IMAGE_GC_HIGH_PERCENT}% "
        f"image-collection threshold: {disk.root_gib:,} GiB"
    )
    if disk.local and provider != "azure":  # AKS has no field that puts them on the VM's local NVMe
        store = "the instance store (RAID0)" if provider == "aws" else "the local SSDs (ephemeral storage)"
        default = "the AMI's" if provider == "aws" else "GKE's default"
        return f"{said}, {default}: kubelet and containerd keep {files} on {store}"
    if provider == "gcp" and gke_boot_disk_gb(disk) is None:
        return f"{said}, GKE's default, which holds {sized}"
    if provider == "azure" and disk.root_gib < AKS_DEFAULT_OS_DISK_GB:
        return f"{said}, AKS's default, which holds {sized}"
    if provider == "azure" and disk.root_gib > AKS_MAX_OS_DISK_GB:
        return f"{said}, AKS's most, short of {sized} (aks-os-disk-short)"
    return f"{said}, sized to hold {sized}; another model or dataset resizes it, which replaces every node of the pool"
