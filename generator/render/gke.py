"""GKE: a Config Connector ``ContainerNodePool`` (container.cnrm.cloud.google.com/v1beta1) per GPU pool.

GKE installs the driver (``gpuDriverInstallationConfig``), so the GPU Operator leaves it alone; pools of
more than one multi-GPU node get a COMPACT placement policy (one low-latency network domain).
"""

from __future__ import annotations

from typing import Any

from generator.errors import InputError
from generator.planner.plan import Pool
from generator.render.kube_objects import dns_name, namespace_object
from generator.workload.models import GpuSharing, KubernetesSettings

#: Accelerator type of each GPU machine family (machine types carry a fixed GPU model);
#: https://cloud.google.com/compute/docs/gpus and https://cloud.google.com/compute/docs/accelerator-optimized-machines
ACCELERATOR_BY_MACHINE_PREFIX = {
    "a2-highgpu-": "nvidia-tesla-a100",
    "a2-megagpu-": "nvidia-tesla-a100",
    "a2-ultragpu-": "nvidia-a100-80gb",
    "a3-highgpu-": "nvidia-h100-80gb",
    "a3-megagpu-": "nvidia-h100-mega-80gb",
    "a3-ultragpu-": "nvidia-h200-141gb",
    "a4-highgpu-": "nvidia-b200",
    "g2-standard-": "nvidia-l4",
}

#: GKE taint effects are spelled as enum names.
TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


def accelerator_type(machine_type: str) -> str:
    """The GKE accelerator type a machine type carries."""
    for prefix, accelerator in ACCELERATOR_BY_MACHINE_PREFIX.items():
        if machine_type.startswith(prefix):
            return accelerator
    raise InputError(f"no GKE accelerator type is known for machine type {machine_type!r}")


def gke_placement(settings: KubernetesSettings) -> tuple[str, str, str]:
    """Project, location and cluster of the GKE cluster, or a clear error naming the missing setting."""
    missing = [f"kubernetes.{key}" for key in ("gcp_project", "location") if getattr(settings, key) is None]
    if missing:
        raise InputError(
            f"{' and '.join(missing)}: required to render GKE node pools (ContainerNodePool clusterRef and location)"
        )
    return str(settings.gcp_project), str(settings.location), str(settings.cluster_name)


#: GKE's GPU sharing strategies (container/v1 GPUSharingConfig.gpuSharingStrategy).
GKE_SHARING_STRATEGY = {"time-slicing": "TIME_SHARING", "mps": "MPS"}


def gke_sharing(sharing: GpuSharing | None) -> dict[str, Any]:
    """The ``guestAccelerator`` fields of a sharing request: ``gpuPartitionSize`` (MIG) or ``gpuSharingConfig``."""
    if sharing is None:
        return {}
    if sharing.strategy == "mig":
        return {"gpuPartitionSize": str(sharing.mig_profile)}
    return {
        "gpuSharingConfig": {
            "gpuSharingStrategy": GKE_SHARING_STRATEGY[sharing.strategy],
            "maxSharedClientsPerGpu": sharing.replicas_per_gpu,
        }
    }


def container_node_pool(pool: Pool, settings: KubernetesSettings, namespace: str) -> dict[str, Any]:
    """``ContainerNodePool`` of one pool."""
    project, location, cluster = gke_placement(settings)
    node = pool.node
    machine = str(node.instance_type)
    accelerator = {
        "type": accelerator_type(machine),
        "count": node.gpus,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
    }
    accelerator.update(gke_sharing(settings.gpu_sharing))
    spec: dict[str, Any] = {
        "clusterRef": {"external": f"projects/{project}/locations/{location}/clusters/{cluster}"},
        "location": location,
        "nodeCount": pool.nodes,
        "management": {"autoRepair": True, "autoUpgrade": True},
        "upgradeSettings": {"maxSurge": 0, "maxUnavailable": 1},
        "nodeConfig": {
            "machineType": machine,
            "guestAccelerator": [accelerator],
            "labels": dict(pool.labels),
            "taint": [{"key": k, "value": v, "effect": TAINT_EFFECT[e]} for k, v, e in pool.taints],
            "gvnic": {"enabled": True},
            "resourceLabels": {"specgen-pool": pool.name},
        },
    }
    if node.nvme_drives > 0:
        spec["nodeConfig"]["ephemeralStorageLocalSsdConfig"] = {"localSsdCount": node.nvme_drives}
    if pool.nodes > 1:
        spec["placementPolicy"] = {"type": "COMPACT"}
    return {
        "apiVersion": "container.cnrm.cloud.google.com/v1beta1",
        "kind": "ContainerNodePool",
        "metadata": {"name": dns_name(pool), "namespace": namespace},
        "spec": spec,
    }


def config_connector_namespace(name: str, project: str) -> dict[str, Any]:
    """The Namespace the node pools live in, annotated with the project Config Connector manages them in."""
    return namespace_object(name, {"cnrm.cloud.google.com/project-id": project})


def gke_objects(pools: list[Pool], settings: KubernetesSettings, namespace: str) -> list[dict[str, Any]]:
    """The Namespace and one ContainerNodePool per pool."""
    project = gke_placement(settings)[0]
    return [config_connector_namespace(namespace, project), *(container_node_pool(p, settings, namespace) for p in pools)]
