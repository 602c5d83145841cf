"""AKS node pools for Terraform: ``azurerm_kubernetes_cluster_node_pool`` arguments, in ``terraform/aks-node-pools.tf``.

Every GPU pool of an Azure plan is an AKS node pool there (``aks_node_pools``), as every pool is a GKE node pool
(``gke_node_pools``) and an EKS managed node group on the other clouds (newuser44 item 8: without Node
Auto-Provisioning an AKS cluster had nothing to apply but for MIG pools). The Karpenter for Azure objects in
``kubernetes/azure/`` provision the same pools: apply one, not both (finding ``azure-node-provisioners``). The same
arguments are the pools' Azure Service Operator ``ManagedClustersAgentPool`` objects (:mod:`generator.render.aso`).

A pool whose GPUs the workload shares with MIG on Azure (:func:`~generator.render.gpu_sharing.aks_mig_pools`) is an
AKS node pool alone, with AKS's own MIG setting, ``gpu_instance`` (:mod:`generator.workload.aks_mig`): Karpenter for
Azure has no MIG field, and AKS partitions the GPUs of such a pool itself at each node's boot. Its nodes carry the
pool's labels (the serving pods' node selector, its device-plugin config key, whose ``migStrategy: single`` advertises
each instance as ``nvidia.com/gpu``, and the label that keeps the GPU Operator's MIG manager off them) and its GPU
taint. AKS installs an NVIDIA pool's driver (``gpu_driver = "Install"``, as the AKSNodeClass's ``gpu.mode: Driver``;
another vendor's ``None``, as ``gpu.mode: None``), on Ubuntu (``os_sku = "Ubuntu"``, the AKSNodeClass's image family;
MIG node pools do not run Azure Linux, https://learn.microsoft.com/en-us/azure/aks/gpu-multi-instance), with the
AKSNodeClass's OS disk. The floating SKU, not a versioned one: AKS moves it with the Kubernetes version (Ubuntu 22.04
to 1.34, 24.04 from 1.35), and a versioned Ubuntu2204 is supported only to 1.36, blocking the cluster's upgrades past
it until every pool is migrated, which recreates its nodes (newuser69 item 7; "Upgrade the OS version",
https://learn.microsoft.com/en-us/azure/aks/upgrade-os-version, which recommends ``--os-sku Ubuntu``). A
serving pool with an average rate scales between the average's nodes and the peak's (``min_count`` / ``max_count``);
a pool costed per training job scales from 0 (AKS's cluster autoscaler adds nodes for the job's pods).

The provider's rules, from its ``kubernetes_cluster_node_pool`` page: ``gpu_instance`` is one of MIG1g, MIG2g, MIG3g,
MIG4g, MIG7g and forces a new resource; a Linux pool's name is 1 to 12 lowercase letters and digits, starting with a
letter (AKS's agent pool name rule); a change of ``vm_size`` or ``os_disk_size_gb`` (a model swap resizes the OS disk)
needs ``temporary_name_for_rotation``. A MIG pool's name holds the profile (``mig3g`` + a digest of the specgen pool's
name), so that another profile is a new pool: created beside the old one before it is deleted (create_before_destroy);
a pool on whole GPUs is ``gpu`` + a digest.
"""

from __future__ import annotations

import hashlib
from typing import Any

from generator.catalog import gpus
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.planner.spot import AKS_SPOT_LABEL
from generator.render.aks import AKS_OS_SKU
from generator.render.env import render_template
from generator.render.gpu_sharing import aks_mig_pools, pool_shares
from generator.render.kube_objects import crosses_nodes
from generator.render.node_disk import AKS_DEFAULT_OS_DISK_GB, AKS_MAX_OS_DISK_GB, NodeDisk, node_disks
from generator.render.node_provisioners import node_provisioners_finding
from generator.render.node_tags import node_tags
from generator.workload.aks_mig import aks_gpu_instance
from generator.workload.models import GpuSharing, Workload

PATH = "terraform/aks-node-pools.tf"
#: The same AKS node pools as Azure Service Operator objects (:mod:`generator.render.aso`), with the Kubernetes output.
ASO_DIRECTORY = "kubernetes/azure-service-operator"
#: Characters of an AKS node pool's name (AKS's limit for a Linux pool).
_NAME_CHARS = 12
#: Digest characters after the profile in a MIG node pool's name.
_DIGEST_CHARS = 7
#: The prefix of a node pool's name on whole GPUs, and of its temporary pool while AKS rotates it.
_WHOLE_PREFIX = "gpu"
_ROTATION_PREFIX = "tmp"


def _digest(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:chars]


def aks_node_pool_name(pool_name: str, gpu_instance: str | None, spot: bool = False) -> str:
    """A pool's AKS name, 12 lowercase letters and digits: its MIG profile (``mig3g``) or ``gpu``, and a digest.

    A Spot pool's digest also hashes ``spot`` (review30 item 3): azurerm replaces a pool whose ``priority`` changes, and
    ``create_before_destroy`` would create the new pool under the old one's name; on-demand names stay as they were.
    """
    keyed = pool_name + ("\nspot" if spot else "")
    if gpu_instance is None:
        return f"{_WHOLE_PREFIX}{_digest(keyed, _NAME_CHARS - len(_WHOLE_PREFIX))}"
    return gpu_instance.lower() + _digest(pool_name + "\n" + gpu_instance + ("\nspot" if spot else ""), _DIGEST_CHARS)


def rotation_name(name: str) -> str:
    """The temporary node pool AKS cycles ``name``'s nodes through when its VM size or OS disk changes."""
    return _ROTATION_PREFIX + _digest(name + "\nrotation", _NAME_CHARS - len(_ROTATION_PREFIX))


def aks_node_pool(pool: Pool, workload: str, profile: str | None, disk: NodeDisk) -> dict[str, Any]:
    """One pool's ``azurerm_kubernetes_cluster_node_pool`` arguments but its cluster (``profile``: its MIG profile)."""
    gpu_instance = None if profile is None else aks_gpu_instance(pool.node.gpu_id, profile)
    if profile is not None and gpu_instance is None:  # refused at load (kubernetes.gpu_sharing.mig_profile): a defect
        raise AssertionError(f"no AKS GPU instance profile for {profile} on {pool.node.gpu_id}")
    name = aks_node_pool_name(pool.name, gpu_instance, pool.spot)
    scales = pool.runs_only or pool.min_nodes is not None
    labels, taints = dict(pool.labels), [f"{key}={value}:{effect}" for key, value, effect in pool.taints]
    if pool.spot:  # the label AKS gives Spot nodes, which the provider asks for (else a plan shows drift); its taint is
        labels[AKS_SPOT_LABEL[0]] = AKS_SPOT_LABEL[1]  # among the pool's taints (the planner's, newuser87 item 5)
    return {
        "name": name,
        "temporary_name_for_rotation": rotation_name(name),
        "vm_size": str(pool.node.instance_type),
        "gpu_instance": gpu_instance,
        "gpu_driver": "Install" if gpus()[pool.node.gpu_id].vendor == "nvidia" else "None",
        "os_sku": AKS_OS_SKU,
        "os_disk_size_gb": min(max(disk.root_gib, AKS_DEFAULT_OS_DISK_GB), AKS_MAX_OS_DISK_GB),
        # a pool costed per training job rests at 0 nodes (the autoscaler adds the job's); a serving one starts at the peak's
        "node_count": 0 if pool.runs_only else pool.nodes,
        "auto_scaling_enabled": scales,
        "min_count": (0 if pool.runs_only else pool.min_nodes) if scales else None,
        "max_count": pool.nodes if scales else None,
        "node_labels": labels,
        "node_taints": taints,
        "tags": node_tags("azure", pool.name, workload),
    }


def with_priority(pool: dict[str, Any], spot: bool) -> dict[str, Any]:
    """A pool's arguments with its VMs' ``priority``, for a plan with a spot pool (every pool's object one shape).

    A Spot pool's VMs are deleted when Azure evicts them (``eviction_policy`` Delete, the provider's default: a
    deallocated VM still bills its disks) at any price up to the on-demand one (``spot_max_price`` -1: evicted for
    capacity, never for price); a Regular pool's are null. AKS takes no ``upgrade_settings`` surge for a Spot pool,
    and none is rendered for any pool.
    """
    return {
        **pool,
        "priority": "Spot" if spot else "Regular",
        "eviction_policy": "Delete" if spot else None,
        "spot_max_price": -1 if spot else None,
    }


def aks_node_pools(plan: Plan, workload: Workload) -> dict[str, dict[str, Any]]:
    """Every Azure pool's arguments, keyed by specgen pool name (MIG pools with their ``gpu_instance``)."""
    if plan.provider != "azure":
        return {}
    disks = node_disks(plan)
    shares = pool_shares(plan, workload)
    mig = {pool.name for pool in aks_mig_pools(plan)}
    azure = [pool for pool in plan.pools if pool.node.provider == "azure"]
    pools = {
        pool.name: aks_node_pool(
            pool, plan.workload, _mig_profile(shares[pool.name]) if pool.name in mig else None, disks[pool.name]
        )
        for pool in azure
    }
    if not any(pool.spot for pool in azure):  # a plan on demand alone: the file as before spot pools could be asked for
        return pools
    return {pool.name: with_priority(pools[pool.name], pool.spot) for pool in azure}


def _mig_profile(sharing: GpuSharing | None) -> str:
    """The MIG profile of an AKS MIG pool's sharing (one it has: the pool is one because it shares by MIG)."""
    assert sharing is not None, "an AKS MIG pool shares its GPUs by MIG"
    return str(sharing.mig_profile)


#: How AKS pods reach a GPU VM's InfiniBand: none of it is rendered.
AKS_INFINIBAND_DOCS = "https://azure.github.io/aks-rdma-infiniband/"


def aks_infiniband_finding(plan: Plan, workload: Workload) -> Finding | None:
    """A warning where GPUs on different AKS nodes talk over the VMs' InfiniBand, which pods reach only when configured.

    newuser51 item 4: a 4-node job on ND H100 v5 was timed over 8 x 400 Gb/s InfiniBand, and nothing rendered or said
    sets it up for pods (GKE says what its GPU networks need, AWS its placement group); NCCL then runs over TCP on the
    VM's front-end network.
    """
    if plan.provider != "azure" or not {"kubernetes", "terraform"} & set(workload.outputs):
        return None  # the AKS node pools are Terraform's and Kubernetes' (review35 item 4)
    pools = [p for p in plan.pools if any(nic.role == "fabric" for nic in p.node.nics) and crosses_nodes(plan, p)]
    if not pools:
        return None
    # the collective library the pools' GPUs run: RCCL on AMD's (newuser77 item 8: an MI300X job read "NCCL")
    vendors = {gpus()[p.node.gpu_id].vendor for p in pools}
    library = "RCCL" if vendors == {"amd"} else "NCCL" if "amd" not in vendors else "NCCL (RCCL on the AMD pools)"
    return Finding(
        "warning",
        "aks-infiniband",
        f"GPUs on different nodes of pool(s) {', '.join(p.name for p in pools)} talk over the VMs' InfiniBand, which the "
        "plan times them over; AKS pods reach it only with the node pool on one InfiniBand network (the "
        "AKSInfinibandSupport feature), the NVIDIA Network Operator with its OFED driver and an RDMA device plugin that "
        f"gives pods /dev/infiniband ({AKS_INFINIBAND_DOCS}), none of which specgen renders: without them {library} falls "
        "back to TCP over the VM's front-end network, far slower than the step is timed at",
        "kubernetes",
    )


def with_aks_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with ``azure-node-provisioners``: the AKS node pools and Karpenter's NodePools are alternatives.

    With the Kubernetes output the AKS node pools are also rendered for Azure Service Operator (:mod:`generator.render.aso`),
    so the finding is made with Kubernetes alone too, and with Terraform it says that those are the same node pools.

    Both size every pool on whole GPUs in full; Karpenter's ``limits`` count only the nodes it launched, so with both
    applied a pending GPU pod (a rollout's surge, a second job) gets a Karpenter node beside the node pool's, as on
    AWS (``aws-node-provisioners``). A MIG pool is an AKS node pool alone (Karpenter for Azure has no MIG field).
    """
    if (infiniband := aks_infiniband_finding(plan, workload)) is not None:
        plan = plan._replace(findings=sorted_findings([*plan.findings, infiniband]))
    if plan.provider != "azure" or "kubernetes" not in workload.outputs:
        return plan
    mig = {pool.name for pool in aks_mig_pools(plan)}
    both = [p.name for p in plan.pools if p.node.provider == "azure" and p.name not in mig]
    if not both:
        return plan
    alone = sorted(mig)
    aso = "AKS node pools as Azure Service Operator ManagedClustersAgentPools"
    if "terraform" in workload.outputs:  # the same node pools twice: Terraform's or ASO's, never both
        same = f"{ASO_DIRECTORY}/ holds the same ones as ASO ManagedClustersAgentPools: apply one of those two"
        node_pools = f"{PATH} (AKS node pools; {same})"
    else:
        node_pools = f"{ASO_DIRECTORY}/ ({aso})"
    finding = node_provisioners_finding(
        "azure-node-provisioners",
        node_pools,
        "kubernetes/azure/ (Karpenter NodePools, AKS Node Auto-Provisioning)",
        f"pool(s) {', '.join(both)}",
        "node pool",
        f"; the MIG pool(s) {', '.join(alone)} are AKS node pools only (Karpenter for Azure has no MIG field)" if alone else "",
    )
    return plan._replace(findings=sorted_findings([*plan.findings, finding]))


def render_aks_terraform(pools: dict[str, dict[str, Any]], workload: str) -> str:
    """:data:`PATH`: the ``aks_cluster_id`` and ``aks_node_pools`` variables and the ``aks_node_pools`` output."""
    spot = any("priority" in pool for pool in pools.values())
    return render_template("terraform/aks-node-pools.tf.j2", workload=workload, pools=pools, spot=spot)
