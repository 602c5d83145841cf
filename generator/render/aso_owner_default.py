"""Say which ``ManagedCluster`` object owns the ASO agent pools where ``kubernetes.cluster_name`` is unset (newuser109).

The agent pools of ``kubernetes/azure-service-operator/`` name their owner by ``owner.name``; without
``kubernetes.cluster_name`` that is the workload's name, said nowhere but in the YAML. An AKS cluster whose
``ManagedCluster`` object has another name (``aks-prod-weu`` beside a workload ``assistant-eu``) got agent pools ASO
finds no owner for, in the agent pools' own namespace, where it resolves ``owner.name``: none is created, and the plan
said nothing. One info names the owner it defaulted to and the namespace to apply into.
"""

from __future__ import annotations

from generator.planner.plan import Finding, Plan
from generator.render.aks_terraform import ASO_DIRECTORY, aks_node_pools
from generator.workload.models import Workload

CODE = "aso-owner-default"


def aso_owner_default_finding(plan: Plan, workload: Workload) -> Finding | None:
    """An info where the ASO agent pools' owner is the workload's name, ``kubernetes.cluster_name`` being unset."""
    if plan.provider != "azure" or "kubernetes" not in workload.outputs or workload.kubernetes.cluster_name is not None:
        return None
    if not aks_node_pools(plan, workload):
        return None
    return Finding(
        "info",
        CODE,
        f"the Azure Service Operator agent pools in {ASO_DIRECTORY}/ are owned by the ManagedCluster object named "
        f"{workload.name!r}, the workload's name, since kubernetes.cluster_name is unset: ASO looks the owner up by "
        "that metadata.name in the agent pools' own namespace and creates no agent pool whose owner it does not find; "
        "set kubernetes.cluster_name to your ManagedCluster object's metadata.name (not the AKS cluster's azureName), "
        f"and apply them into its namespace (kubectl apply -k {ASO_DIRECTORY} -n <its namespace>); with "
        "terraform/aks-node-pools.tf or Karpenter instead, ignore this",
        "kubernetes.cluster_name",
    )
