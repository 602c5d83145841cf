"""AKS node pools for Azure Service Operator: one ``ManagedClustersAgentPool`` a GPU pool, ``kubernetes/azure-service-operator/``.

A cluster run with Azure Service Operator (ASO v2) manages its AKS node pools as ``containerservice.azure.com``
``ManagedClustersAgentPool`` objects, each owned by the cluster's ``ManagedCluster`` object (newuser83 item 2). Each
pool's object is read off the same arguments as its ``azurerm_kubernetes_cluster_node_pool`` in
``terraform/aks-node-pools.tf`` (:func:`~generator.render.aks_terraform.aks_node_pool`, the one definition of an AKS
node pool, with :func:`~generator.render.aks_terraform.with_priority`), field by field (:data:`ASO_FIELDS`): the same
name (``azureName``), VM size, count or autoscaling bounds, labels, taints (AKS's own Spot label and taint included),
OS disk, OS SKU, MIG profile (``gpuInstanceProfile``) and Spot settings. So the Terraform node pools and these objects
are the same AKS node pools under one name: apply one of them, never both (two managers of one agent pool undo each
other's changes), and, like the Terraform ones, not beside the Karpenter for Azure objects of ``kubernetes/azure/``
(finding ``azure-node-provisioners``). They are a kustomize directory of their own for that reason, not part of
``kubernetes/azure/``.

The API version is ``v1api20250801``, the newest one the pinned CRD serves (ASO v2.16.1 as CAPZ v1.24.2 ships it);
it is the one version of that CRD whose ``gpuProfile`` has ``driver`` (``Install`` or ``None``; v1api20240402preview
has only ``installGPUDriver``, the older stable ones no ``gpuProfile``). The driver choice is the Terraform
``gpu_driver``'s: ``Install`` on NVIDIA pools (AKS installs the driver, as the AKSNodeClass's ``gpu.mode: Driver``, and
the GPU Operator's driver stays off, :mod:`generator.render.gpu_stack`), ``None`` on other vendors' pools.

The owner is the ``ManagedCluster`` object named ``kubernetes.cluster_name`` (else the workload's name, as every
provider's cluster name is read): ASO resolves ``owner.name`` in the agent pool's own namespace, so the objects carry no
namespace and are applied into the ManagedCluster's (``kubectl apply -k kubernetes/azure-service-operator -n <its
namespace>``). ``metadata.name`` is the AKS pool's name, which ASO cannot change on an existing object: a new MIG
profile or a move to Spot is a new object, as it is a new Terraform node pool.

``count`` is set on autoscaled pools too: AKS refuses an autoscaled pool created without it ("Required parameter
properties.count is missing", Azure/azure-service-operator#3220) and takes only a count within ``minCount`` ..
``maxCount`` (kubernetes-sigs/cluster-api-provider-azure#5947), as the azurerm ``node_count`` is "the initial number of
nodes ... in the range min_count - max_count". It is the first count only: each reconcile ASO makes puts the spec's
count back over the cluster autoscaler's, so CAPZ, which manages the same objects, sets ``spec.count`` only until the
pool exists and leaves it out after (``setAgentPoolCount`` in its ``pkg/mutators/azureasomanagedmachinepool.go``:
"to prevent ASO from overwriting the autoscaler's opinion of the replica count"; #4920 took it out of its templates).
A static manifest cannot do that, so the warning ``aso-autoscaled-count`` says to remove it after the first apply
(fix169). ``mode`` is ``User`` (GPU pools run no system pods); ``osType`` Linux.
"""

from __future__ import annotations

import re
from typing import Any

from generator.planner.plan import Finding, Plan, sorted_findings
from generator.render.aks_terraform import ASO_DIRECTORY, aks_node_pools, with_priority
from generator.render.kube_objects import kustomize_directory
from generator.workload.models import Workload

DIRECTORY = ASO_DIRECTORY
API_VERSION = "containerservice.azure.com/v1api20250801"
KIND = "ManagedClustersAgentPool"

#: ``azurerm_kubernetes_cluster_node_pool`` argument -> ``ManagedClustersAgentPool`` spec field, for every argument
#: that has one (``gpu_driver`` is ``gpuProfile.driver``; ``temporary_name_for_rotation`` is Terraform's alone: ASO
#: has no rotation pool, and a VM size or OS disk change is AKS's to refuse or roll).
ASO_FIELDS = {
    "name": "azureName",
    "vm_size": "vmSize",
    "gpu_instance": "gpuInstanceProfile",
    "os_sku": "osSKU",
    "os_disk_size_gb": "osDiskSizeGB",
    "node_count": "count",
    "auto_scaling_enabled": "enableAutoScaling",
    "min_count": "minCount",
    "max_count": "maxCount",
    "node_labels": "nodeLabels",
    "node_taints": "nodeTaints",
    "tags": "tags",
    "priority": "scaleSetPriority",
    "eviction_policy": "scaleSetEvictionPolicy",
    "spot_max_price": "spotMaxPrice",
}


def agent_pool(arguments: dict[str, Any], cluster: str) -> dict[str, Any]:
    """The ``ManagedClustersAgentPool`` of one AKS node pool's Terraform arguments (with their ``priority``)."""
    spec: dict[str, Any] = {
        "owner": {"name": cluster},
        "mode": "User",
        "osType": "Linux",
        "type": "VirtualMachineScaleSets",
        "gpuProfile": {"driver": arguments["gpu_driver"]},
    }
    for argument, field in ASO_FIELDS.items():
        value = arguments.get(argument)
        if value is not None and not (argument == "auto_scaling_enabled" and value is False):
            spec[field] = value
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": arguments["name"]}, "spec": spec}


def aso_agent_pools(plan: Plan, workload: Workload, cluster: str) -> list[dict[str, Any]]:
    """One ``ManagedClustersAgentPool`` per Azure GPU pool of the plan, owned by the ManagedCluster ``cluster``."""
    spot = {pool.name: pool.spot for pool in plan.pools}
    pools = aks_node_pools(plan, workload)
    return [agent_pool(with_priority(arguments, spot[name]), cluster) for name, arguments in pools.items()]


def render_aso(plan: Plan, workload: Workload, cluster: str) -> dict[str, str]:
    """:data:`DIRECTORY`: the agent pools and their ``kustomization.yaml`` (nothing off Azure)."""
    objects = aso_agent_pools(plan, workload, cluster)
    return kustomize_directory(DIRECTORY, objects) if objects else {}


#: A Kubernetes object's name (an RFC 1123 subdomain, at most 253 characters): what ``owner.name`` has to be to name the
#: ``ManagedCluster`` object, https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-subdomain-names.
#: The code of the info where the agent pools' owner defaulted to the workload's name (newuser109).
OWNER_DEFAULT_CODE = "aso-owner-default"

OBJECT_NAME = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?")


def aso_owner_finding(plan: Plan, workload: Workload) -> Finding | None:
    """What the ASO agent pools' owner, ``kubernetes.cluster_name``, tells where no object can own them, or is unset.

    Set (hostile83): AKS names take upper-case letters and ``_`` (``My_AKS``), a Kubernetes object's name neither: the
    agent pools' ``owner.name`` names the ``ManagedCluster`` object in the cluster ASO runs in, never the AKS cluster in
    Azure (its ``azureName``), so an owner of that name is one no object can have, and ASO leaves the agent pools
    unowned: a warning. Unset (newuser109): the owner is the workload's name, said nowhere but in the YAML; a
    ``ManagedCluster`` object of another name (``aks-prod-weu`` beside a workload ``assistant-eu``) owns none of them,
    and ASO creates none: an info naming the owner it defaulted to and the namespace to apply into.
    """
    if plan.provider != "azure" or "kubernetes" not in workload.outputs:
        return None
    name = workload.kubernetes.cluster_name
    if (name is not None and OBJECT_NAME.fullmatch(name)) or not aks_node_pools(plan, workload):
        return None
    if name is None:
        return Finding(
            "info",
            OWNER_DEFAULT_CODE,
            f"the Azure Service Operator agent pools in {DIRECTORY}/ are owned by the ManagedCluster object named "
            f"{workload.name!r}, the workload's name, since kubernetes.cluster_name is unset: ASO looks the owner up "
            "by that metadata.name in the agent pools' own namespace and creates no agent pool whose owner it does "
            "not find; set kubernetes.cluster_name to your ManagedCluster object's metadata.name (not the AKS "
            f"cluster's azureName), and apply them into its namespace (kubectl apply -k {DIRECTORY} -n <its "
            "namespace>); with terraform/aks-node-pools.tf or Karpenter instead, ignore this",
            "kubernetes.cluster_name",
        )
    return Finding(
        "warning",
        "aso-owner-name",
        f"kubernetes.cluster_name {name!r} is the owner.name of the Azure Service Operator agent pools in {DIRECTORY}/, "
        "which names the ManagedCluster object in Kubernetes (its metadata.name), not the AKS cluster in Azure (its "
        f"azureName); no Kubernetes object can be named {name!r} (lower-case letters, digits, '-' and '.'), so ASO "
        "finds no owner for them: apply terraform/aks-node-pools.tf instead, or give the cluster_name a ManagedCluster "
        "object can have",
        "kubernetes.cluster_name",
    )


def aso_count_finding(plan: Plan, workload: Workload) -> Finding | None:
    """A warning where an ASO agent pool is autoscaled: its ``spec.count`` seeds it, and must go once it exists (fix169).

    See the module's docstring: AKS needs the count to create the pool, ASO re-applies it over the autoscaler's after.
    """
    if plan.provider != "azure" or "kubernetes" not in workload.outputs:
        return None
    scaled = sorted(args["name"] for args in aks_node_pools(plan, workload).values() if args["auto_scaling_enabled"])
    if not scaled:
        return None
    return Finding(
        "warning",
        "aso-autoscaled-count",
        f"the Azure Service Operator agent pool(s) {', '.join(scaled)} in {DIRECTORY}/ are autoscaled (enableAutoScaling, "
        "minCount .. maxCount) and carry spec.count, the count each starts at: AKS refuses an autoscaled pool created "
        "without it (Azure/azure-service-operator#3220), but once the pool exists ASO puts spec.count back over the "
        "cluster autoscaler's count on each reconcile (Cluster API's Azure provider leaves it out after creation for "
        "that); after the first apply, delete the spec.count lines from these files and apply again (kubectl apply "
        "then removes the field)",
        "kubernetes",
    )


def with_aso_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with :func:`aso_owner_finding` and :func:`aso_count_finding` where they are made."""
    made = [f for f in (aso_owner_finding(plan, workload), aso_count_finding(plan, workload)) if f is not None]
    return plan._replace(findings=sorted_findings([*plan.findings, *made])) if made else plan
