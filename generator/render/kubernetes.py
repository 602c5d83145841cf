"""Kubernetes node pools, native to where they run, as one kustomize directory per flavor.

* aws: Karpenter NodePool + EC2NodeClass; gcp: Config Connector ContainerNodePool (+ its Namespace);
  azure: Karpenter for Azure NodePool + AKSNodeClass (``kubernetes/<provider>/``), and apart from them the same pools
  as Azure Service Operator ManagedClustersAgentPools (``kubernetes/azure-service-operator/``, :mod:`generator.render.aso`);
* baremetal: kubeadm JoinConfiguration per pool, outside the kustomize tree (``kubeadm/``); a single
  host (a desktop or home server) has nothing to join and gets none, unless its workload joins a cluster (one it
  names, or the site's by Cluster API).

The cluster-wide GPU stack is not rendered here: :func:`gpu_stacks` returns what each pool needs and
:mod:`generator.render.gpu_stack` renders it once for every workload in the tree.
"""

from __future__ import annotations

from typing import Any

from generator.planner.assemble import own_cluster
from generator.planner.plan import Plan
from generator.render.aks import aks_objects
from generator.render.aso import render_aso
from generator.render.gke import gke_objects
from generator.render.gpu_sharing import aks_mig_pools, pool_shares
from generator.render.gpu_stack import GpuPoolStack, pool_stacks
from generator.render.karpenter_aws import karpenter_aws_objects, serving_pools
from generator.render.kube_objects import crosses_nodes, kustomize_directory
from generator.render.kubeadm import render_kubeadm
from generator.render.mirrors import cluster_mirror
from generator.render.node_disk import node_disks
from generator.workload.models import Workload


def cluster_name(workload: Workload) -> str:
    """The cluster the pools join: ``kubernetes.cluster_name``, else the workload name."""
    return workload.kubernetes.cluster_name or workload.name


def is_single_host(plan: Plan, workload: Workload) -> bool:
    """One bare-metal machine in all that joins no cluster: it is its own cluster, nothing joins it (the planner's rule)."""
    return plan.provider == "baremetal" and own_cluster(workload, plan.pools)


def render_node_pools(plan: Plan, workload: Workload, *, alone: bool = True) -> dict[str, str]:
    """The workload's node-pool files (kustomize directory or kubeadm join files).

    ``alone``: the workload is the whole tree; rendered with others into one cluster, even a single host joins it.
    """
    pools = list(plan.pools)
    settings = workload.kubernetes._replace(cluster_name=cluster_name(workload))
    shares = pool_shares(plan, workload)
    objects: list[dict[str, Any]]
    if plan.provider == "aws":
        objects = karpenter_aws_objects(
            pools,
            str(settings.cluster_name),
            plan.workload,
            shares=shares,
            serving=serving_pools(plan),
            disks=node_disks(plan),
            role=settings.karpenter_node_role,
            crossing=frozenset(p.name for p in pools if crosses_nodes(plan, p)),
        )
    elif plan.provider == "gcp":
        compact = frozenset(p.name for p in pools if crosses_nodes(plan, p))
        objects = gke_objects(pools, settings, plan.workload, shares=shares, disks=node_disks(plan), compact=compact)
    elif plan.provider == "azure":  # the pools AKS partitions with MIG are AKS node pools, in Terraform
        native = {pool.name for pool in aks_mig_pools(plan)}
        karpenter = [pool for pool in pools if pool.name not in native]
        objects = aks_objects(karpenter, plan.workload, shares=shares, serving=serving_pools(plan), disks=node_disks(plan))
    elif alone and is_single_host(plan, workload):
        return {}
    else:
        return render_kubeadm(pools, settings.bootstrap_kubeconfig_path, plan.racks)
    files = kustomize_directory(f"kubernetes/{plan.provider}", objects)
    if plan.provider == "azure":  # the AKS node pools for a cluster run with Azure Service Operator, a directory apart
        files.update(render_aso(plan, workload, str(settings.cluster_name)))
    return files


def gpu_stacks(plan: Plan, workload: Workload, *, alone: bool = True) -> list[GpuPoolStack]:
    """What this workload's pools need from the shared GPU stack (nothing for a single host on its own)."""
    if alone and is_single_host(plan, workload):  # nothing joins it and it runs no operator: the planner's finding says so
        return []
    return pool_stacks(
        plan,
        ansible_owns_driver="ansible" in workload.outputs,
        driver_override=workload.kubernetes.driver_version,
        shares=pool_shares(plan, workload),
        mirror=cluster_mirror(workload.mirrors),
    )
