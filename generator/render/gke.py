"""GKE: a Config Connector ``ContainerNodePool`` (container.cnrm.cloud.google.com/v1beta1) per GPU pool.

GKE runs the whole GPU stack of these pools: its driver installer (``gpuDriverInstallationConfig``), its own
device plugin, and GPU sharing / MIG from ``guestAccelerator`` (``gpuSharingConfig``, ``gpuPartitionSize``); so
no GPU Operator is rendered for GKE (:mod:`generator.render.gpu_stack`) and the pools carry no
``nvidia.com/device-plugin.config`` label (no NVIDIA device plugin reads it).

Every pool runs in exactly one zone (``nodeLocations``, :mod:`generator.workload.gke_zone`): the CRD's
``nodeCount`` is per zone (terraform-provider-google ``node_count``: "number of nodes per instance group"), so
one zone makes it the plan's node count, and a COMPACT placement policy, which GKE places within one zone, is
valid. Pools of more than one multi-GPU node get it (one low-latency network domain).

One spec per pool (:func:`node_pool_spec`) feeds both the ContainerNodePool and the Terraform
``google_container_node_pool`` arguments (:mod:`generator.render.gke_terraform`), under one node pool name within
GKE's 40 characters (:func:`gke_node_pool_name`). GKE builds the nodes, so the pool's Ansible group vars describe
them rather than provision them (:func:`gke_driver_vars`, :func:`gke_storage_vars`, :func:`gke_network_vars`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from generator.catalog import platforms
from generator.catalog.gke_accelerators import accelerator_type
from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.planner.plan import Finding, NodeSpec, Plan, Pool, sorted_findings
from generator.planner.spread import drain_grace_text
from generator.render.kube_objects import crosses_nodes, dns_name, namespace_object
from generator.render.node_disk import NodeDisk, gke_boot_disk_gb
from generator.render.node_tags import node_tags
from generator.workload.gke_zone import cluster_region, pool_node_locations, pool_zone, zone_problem
from generator.workload.models import GpuNetwork, GpuSharing, KubernetesSettings, Workload

#: GKE taint effects are spelled as enum names.
TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


class GkePlacement(NamedTuple):
    """Where the node pools go: the cluster (project, location, name) and the one zone of every pool."""

    project: str
    location: str
    cluster: str
    zone: str


def gke_placement(settings: KubernetesSettings) -> GkePlacement:
    """The cluster and the pools' zone, or a clear error naming the setting to change.

    Loading a workload already refuses a bad zone at its line (:func:`generator.workload.gke_zone.gke_zone_errors`);
    this guards callers that build settings themselves.
    """
    missing = [f"kubernetes.{key}" for key in ("gcp_project", "location") if getattr(settings, key) is None]
    if missing:
        raise InputError(
            f"{' and '.join(missing)}: required to render GKE node pools (ContainerNodePool clusterRef and location)"
        )
    problem = zone_problem(settings)
    if problem is not None:
        raise InputError(f"kubernetes.{problem[0]}: {problem[1]}")
    zone = pool_zone(settings)
    assert zone is not None, "a location without a zone problem names the zone"
    return GkePlacement(str(settings.gcp_project), str(settings.location), str(settings.cluster_name), zone)


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


#: How GKE installs the driver on these pools (``gpuDriverInstallationConfig.gpuDriverVersion``): its installer's
#: DEFAULT driver for the node version. GKE offers DEFAULT, LATEST (COS) or INSTALLATION_DISABLED, no version pin
#: (terraform-provider-google ``gpu_driver_installation_config``; https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#install-drivers).
GKE_GPU_DRIVER_VERSION = "DEFAULT"

#: GKE node pool names: a lowercase letter, then at most 39 lowercase letters, digits or hyphens, ending in a
#: letter or digit. GKE refuses longer names (https://gitlab.com/thorchain/devops/cluster-launcher/-/merge_requests/67,
#: "google_container_node_pool.name is limited to 40 symbols by GCP").
GKE_NODE_POOL_NAME_MAX = 40
GKE_NODE_POOL_NAME = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?")
_NAME_HASH_CHARS = 8


def gke_node_pool_name(pool: Pool) -> str:
    """The pool's GKE node pool name (and ContainerNodePool ``metadata.name``): :func:`node_pool_name` of the pool."""
    return node_pool_name(pool.name, pool.gpu_sharing, pool.spot)


def node_pool_name(pool_name: str, sharing: str | None = None, spot: bool = False) -> str:
    """A GKE node pool name: the pool's DNS name, with its GPU sharing (``Pool.gpu_sharing``), at most 40 characters.

    A shared pool's name ends in its sharing (``-mig-1g-10gb``, ``-time-slicing-x4``): GKE cannot change a node pool's
    ``guestAccelerator`` (``gpuPartitionSize``, ``gpuSharingConfig``) in place (Config Connector marks them Immutable;
    Terraform replaces the node pool), so a change of sharing names a new node pool, which can be created beside the
    old one (newuser40 item 4: under the same name Config Connector refused the change, and a replacement under one
    name must delete the old pool, and every model on it, before it creates the new one). A longer name
    keeps its start and ends in a hash of the whole pool name and sharing, so it is the same on every render of the
    same pool and differs between pools; a name within the limit is kept as it is. A ``spot`` pool's name ends in
    ``-spot``: ``nodeConfig.spot`` is immutable too, so a pool moved to or from spot is a new node pool.
    """
    name = pool_name.replace("_", "-")
    hashed = pool_name
    if sharing is not None:
        name = f"{name}-{re.sub(r'[^a-z0-9]+', '-', sharing.lower()).strip('-')}"
        hashed = f"{pool_name}\0{sharing}"
    if spot:
        name, hashed = f"{name}-spot", f"{hashed}\0spot"
    if len(name) <= GKE_NODE_POOL_NAME_MAX:
        return name
    digest = hashlib.sha256(hashed.encode("utf-8")).hexdigest()[:_NAME_HASH_CHARS]
    return f"{name[: GKE_NODE_POOL_NAME_MAX - _NAME_HASH_CHARS - 1].rstrip('-')}-{digest}"


#: The reservation label key a node pool names a specific reservation by (reservationAffinity ``key``;
#: terraform-provider-google ``reservation_affinity``: "To target a SPECIFIC_RESERVATION by name, specify
#: compute.googleapis.com/reservation-name as the key").
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"


def reservation_affinity(reservation: str) -> dict[str, Any]:
    """``nodeConfig.reservationAffinity`` of a pool whose nodes must come from the named reservation (no on-demand)."""
    return {"consumeReservationType": "SPECIFIC_RESERVATION", "key": RESERVATION_NAME_KEY, "values": [reservation]}


def pool_reservation(pool: Pool, settings: KubernetesSettings) -> str | None:
    """The reservation ``kubernetes.reservations`` names for the pool's machine type, or None (a spot pool: none)."""
    if pool.spot:  # Spot VMs take the zone's spare capacity; a reservation is consumed by standard VMs
        return None
    return (settings.reservations or {}).get(pool.node.platform_id)


def node_pool_spec(
    pool: Pool,
    workload: str,
    sharing: GpuSharing | None = None,
    reservation: str | None = None,
    disk: NodeDisk | None = None,
    compact: bool = False,
    networks: tuple[GpuNetwork, ...] = (),
) -> dict[str, Any]:
    """What a pool is on GKE, wherever it goes: its size, upgrades, machine, accelerators, labels, taints, local SSDs.

    ``disk``: where its nodes keep their model files and images; a boot disk larger than GKE's 100 GB default where
    no local SSD holds them (:func:`~generator.render.node_disk.gke_boot_disk_gb`, newuser31 item 2).

    A pool costed per training job or by its batch jobs' runs scales from zero instead: ``autoscaling`` with
    ``initialNodeCount`` 0 and no ``nodeCount``, which the provider says not to set beside autoscaling (Config Connector
    would reconcile it back and could drain a running job; newuser16 M1). A serving pool whose services give an average rate
    (``Pool.min_nodes``) scales between the average's nodes and the peak's the same way, starting at the peak's (the
    cluster autoscaler removes the nodes no pod needs). A pool of several nodes whose GPUs talk across nodes (``compact``:
    a replica or training job wider than a node) gets a COMPACT placement policy, its nodes placed close together;
    one whose replicas each stay in a node does not (newuser31 item 15: it only narrows where GKE finds capacity),
    as on AWS, where only such a node group gets a cluster placement group. A pool on a ``reservation`` takes its nodes from it
    alone (newuser28 item 5: H200 and B200 machine types are not sold on demand, so a pool without one gets no node);
    a spot pool (``capacity_type: spot``) takes Spot VMs (``spot: true``, immutable: a change is a new pool) and no
    reservation. ``networks``: the VPC networks its machine type's GPU NICs attach to (``kubernetes.gpu_networks``),
    as ``networkConfig.additionalNodeNetworkConfigs`` by name (:func:`container_node_pool` refers to them by path).
    """
    node = pool.node
    machine = str(node.instance_type)
    accelerator = {
        "type": accelerator_type(machine),
        "count": node.gpus,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": GKE_GPU_DRIVER_VERSION},
    }
    accelerator.update(gke_sharing(sharing))
    spec: dict[str, Any] = {
        "nodeCount": pool.nodes,
        "management": {"autoRepair": True, "autoUpgrade": True},
        # surge upgrades, GKE's default strategy (newuser63 item 4): a new node before the old one is drained
        "upgradeSettings": dict(UPGRADE_SETTINGS),
        "nodeConfig": {
            "machineType": machine,
            "guestAccelerator": [accelerator],
            "labels": dict(pool.labels),
            "taint": [{"key": k, "value": v, "effect": TAINT_EFFECT[e]} for k, v, e in pool.taints],
            "gvnic": {"enabled": True},
            # GCE labels on the node VMs: the Ansible gcp_compute inventory filters and groups on them
            "resourceLabels": node_tags("gcp", pool.name, workload),
        },
    }
    if pool.runs_only:  # costed per training job or batch run: the cluster autoscaler adds nodes for the job's pods
        del spec["nodeCount"]
        spec["initialNodeCount"] = 0
        spec["autoscaling"] = {"minNodeCount": 0, "maxNodeCount": pool.nodes}
    elif pool.min_nodes is not None:  # serving a varying rate: between the average's nodes and the peak's (newuser40 item 8)
        del spec["nodeCount"]
        spec["initialNodeCount"] = pool.nodes
        spec["autoscaling"] = {"minNodeCount": pool.min_nodes, "maxNodeCount": pool.nodes}
    if pool.spot:  # Spot VMs (capacity_type: spot): GKE labels the nodes cloud.google.com/gke-spot=true
        spec["nodeConfig"]["spot"] = True
    if reservation is not None:
        spec["nodeConfig"]["reservationAffinity"] = reservation_affinity(reservation)
    if node.nvme_drives > 0:  # the machine's bundled local SSDs, as kubelet and containerd ephemeral storage
        spec["nodeConfig"]["ephemeralStorageLocalSsdConfig"] = {"localSsdCount": node.nvme_drives}
    if disk is not None and (boot_gb := gke_boot_disk_gb(disk)) is not None:
        spec["nodeConfig"]["diskSizeGb"] = boot_gb
    if (disk_type := boot_disk_type(node)) is not None:  # newuser79 item 5: Hyperdisk-only machine types
        spec["nodeConfig"]["diskType"] = disk_type
    if compact and pool.nodes > 1:
        spec["placementPolicy"] = {"type": "COMPACT"}
    if networks:
        configs = [{"network": n.network, "subnetwork": n.subnetwork} for n in networks]
        spec["networkConfig"] = {"additionalNodeNetworkConfigs": configs}
    return spec


def boot_disk_type(node: NodeSpec) -> str | None:
    """The boot disk type a node's machine type takes where GKE's pd-balanced default would not do; None where it does.

    A3 Ultra, A4 and G4 take Hyperdisk Balanced alone ("this is the only disk type that is supported for the boot disk",
    https://docs.cloud.google.com/compute/docs/accelerator-optimized-machines#supported_disk_types; the catalog's
    ``boot_disk``), and a GKE node pool's boot disk is pd-balanced unless ``diskType`` says otherwise
    (https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks). Rendered explicitly, the pool does not
    rest on the provider working the default out for the machine type.
    """
    platform = platforms().get(node.platform_id)
    return None if platform is None else platform.boot_disk_type


def pool_gpu_networks(pool: Pool, settings: KubernetesSettings) -> tuple[GpuNetwork, ...]:
    """The networks ``kubernetes.gpu_networks`` names for the GPU NICs of the pool's machine type (none: none named)."""
    return tuple((settings.gpu_networks or {}).get(pool.node.platform_id, ()))


def network_refs(configs: list[dict[str, str]], project: str, location: str) -> list[dict[str, Any]]:
    """Additional node networks by name as Config Connector refers to networks it does not manage: by their paths."""
    region = cluster_region(location)
    return [
        {
            "networkRef": {"external": f"projects/{project}/global/networks/{c['network']}"},
            "subnetworkRef": {"external": f"projects/{project}/regions/{region}/subnetworks/{c['subnetwork']}"},
        }
        for c in configs
    ]


def container_node_pool(
    pool: Pool,
    settings: KubernetesSettings,
    workload: str,
    sharing: GpuSharing | None = None,
    disk: NodeDisk | None = None,
    compact: bool = False,
) -> dict[str, Any]:
    """``ContainerNodePool`` of one pool, in the workload's namespace: :func:`node_pool_spec` in its cluster and zone."""
    project, location, cluster, zone = gke_placement(settings)
    networks = pool_gpu_networks(pool, settings)
    spec = {
        "clusterRef": {"external": f"projects/{project}/locations/{location}/clusters/{cluster}"},
        "location": location,
        "nodeLocations": [zone],
        **node_pool_spec(pool, workload, sharing, pool_reservation(pool, settings), disk, compact, networks),
    }
    if networks:
        configs = spec["networkConfig"]["additionalNodeNetworkConfigs"]
        spec["networkConfig"] = {"additionalNodeNetworkConfigs": network_refs(configs, project, location)}
    return {
        "apiVersion": "container.cnrm.cloud.google.com/v1beta1",
        "kind": "ContainerNodePool",
        "metadata": {"name": gke_node_pool_name(pool), "namespace": workload},
        "spec": spec,
    }


#: The GPUDirect transport of each GPU machine family's GPU NICs on GKE: TCPX (A3 High) and TCPXO (A3 Mega) over
#: gVNIC, RDMA over RoCE (A3 Ultra, A4); https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx
#: and GKE's GPUDirectStrategy enum ("RDMA: GPUDirect-RDMA on A3 Ultra, and A4 machine types",
#: https://docs.cloud.google.com/ruby/docs/reference/google-cloud-container-v1/latest/Google-Cloud-Container-V1-GPUDirectConfig-GPUDirectStrategy).
GPUDIRECT_BY_MACHINE_PREFIX = {
    "a3-highgpu-": "tcpx",
    "a3-megagpu-": "tcpxo",
    "a3-ultragpu-": "rdma",
    "a4-highgpu-": "rdma",
}


def gpudirect(machine_type: str) -> str | None:
    """The GPUDirect transport of a machine type's GPU NICs on GKE; None where it has none (A2, G2)."""
    return next((way for prefix, way in GPUDIRECT_BY_MACHINE_PREFIX.items() if machine_type.startswith(prefix)), None)


def gke_driver_vars() -> dict[str, Any]:
    """A GKE pool's NVIDIA driver as group vars: GKE's installer owns it (version, persistence, fabric manager)."""
    return {"install": False, "managed_by": "gke", "gpu_driver_version": GKE_GPU_DRIVER_VERSION}


def gke_storage_vars(node: NodeSpec) -> dict[str, Any]:
    """A GKE node's local SSDs as group vars: kubelet and containerd ephemeral storage, which GKE formats and mounts.

    Pods keep model files in an ``emptyDir`` (on the local SSDs where the machine has them, else on the boot disk);
    there is no array to build or mount point to make on the host.
    """
    return {
        "capacity_tb": node.nvme_tb,
        "drives": node.nvme_drives,
        "ephemeral_storage_local_ssd": node.nvme_drives > 0,
        "model_cache": "emptyDir",
    }


def gke_network_vars(node: NodeSpec) -> dict[str, Any]:
    """A GKE node's NICs as group vars: gVNIC, and the GPUDirect transport of its GPU NICs (none, TCPX, TCPXO, RDMA).

    A machine type without GPU NICs has no GPUDirect transport, whatever its family's: a3-highgpu-1g/2g/4g have the
    gVNIC alone (one physical NIC, https://docs.cloud.google.com/compute/docs/gpus), a3-highgpu-8g four GPU NICs more.
    """
    gpu_nics = any(n.role == "fabric" for n in node.nics)
    return {
        "nics": [
            {"role": n.role, "model": n.nic_id, "count": n.count, "port_gbps": n.port_gbps, "protocol": n.protocol}
            for n in node.nics
        ],
        "gvnic": True,
        "gpudirect": gpudirect(str(node.instance_type)) if gpu_nics else None,
    }


def driver_version_findings(workload: Workload) -> list[Finding]:
    """``kubernetes.driver_version`` given for GKE pools, whose driver GKE's installer picks (no version pin)."""
    wanted = workload.kubernetes.driver_version
    if wanted is None:
        return []
    return [
        Finding(
            "warning",
            "gke-driver-version",
            f"kubernetes.driver_version {wanted} is not applied: GKE installs the NVIDIA driver of these pools itself "
            f"(gpuDriverVersion {GKE_GPU_DRIVER_VERSION}: the default driver of the node's GKE version), and GKE takes "
            "no version, only DEFAULT, LATEST or INSTALLATION_DISABLED "
            "(https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#install-drivers); remove the field, or pick "
            "a GKE version whose default driver is the one wanted",
            "kubernetes.driver_version",
        )
    ]


#: Pools a ``gke-pool-name`` finding names with their GKE node pool (the rest are counted).
_NAMED_NODE_POOLS = 3


def pool_name_findings(plan: Plan) -> list[Finding]:
    """What the cloud shows as each pool's GKE node pool: the pool's name with ``-`` for ``_`` (fuzz22 item 13).

    The planner shortens a pool's name to GKE's 40 characters on GCP, so the node pool's name is never another; a
    name the renderer had to shorten again (a plan from elsewhere) is said with its pool.
    """
    if not plan.pools:
        return []
    pools = sorted(plan.pools, key=lambda pool: (gke_node_pool_name(pool) == dns_name(pool), pool.name))
    named = ", ".join(f"pool {pool.name} is node pool {gke_node_pool_name(pool)}" for pool in pools[:_NAMED_NODE_POOLS])
    more = f" and {len(pools) - _NAMED_NODE_POOLS} more" if len(pools) > _NAMED_NODE_POOLS else ""
    return [
        Finding(
            "info",
            "gke-pool-name",
            f"GKE node pools are named as the pools, with - for _ ({named}{more}): `gcloud container node-pools list` "
            f"shows these names; a pool name has at most the {GKE_NODE_POOL_NAME_MAX} characters GKE allows, a longer "
            "one keeps its start and ends in a hash of the whole (the same on every render)"
            + (
                "; a pool with shared GPUs adds its sharing (kubernetes.gpu_sharing): GKE cannot change a node pool's "
                "gpuPartitionSize or gpuSharingConfig in place, so a change of sharing is a new node pool, created "
                "beside the old one, which goes with its nodes (specgen diff lists it as replaced)"
                if any(pool.gpu_sharing is not None for pool in plan.pools)
                else ""
            ),
            "deployments",
        )
    ]


GPU_STACK_FINDING = (
    "GKE runs the GPU stack of these node pools (its driver installer, device plugin, GPU sharing and MIG from the "
    "node pool), so no GPU Operator is rendered (no cluster/gpu-operator/); GPU metrics come from GKE's managed DCGM "
    "metrics (https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics)"
)


def with_gke_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with what GKE provides and how its node pools are named, priced and given their driver.

    What GKE runs instead of a rendered GPU Operator, where its prices come from, the node pool names shortened to
    GKE's limit, and a driver version GKE does not apply.
    """
    if plan.provider != "gcp":
        return plan
    findings = [*driver_version_findings(workload), *unused_reservation_findings(plan, workload)]
    if "kubernetes" in workload.outputs or "terraform" in workload.outputs:  # both render the GKE node pools
        findings += [*pool_name_findings(plan), *gpu_network_findings(plan, workload.kubernetes)]
    if "terraform" in workload.outputs:
        findings += regional_pool_findings(plan, workload)
    if "kubernetes" in workload.outputs:
        findings += [
            Finding("info", "gke-gpu-stack", GPU_STACK_FINDING, "kubernetes"),
            *surge_upgrade_findings(plan, workload),
            *training_upgrade_findings(plan, workload),
        ]
    return plan._replace(findings=sorted_findings([*plan.findings, *findings]))


def regional_pool_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """A warning per Terraform GKE pool of a regional cluster with no zone set: its node count runs in each zone.

    terraform-provider-google's ``node_count`` is "the number of nodes per instance group" (one a zone), and a pool's
    ``node_locations`` are the zones of the region that offer its type (:func:`pool_node_locations`, fix169), or the
    cluster's where none is known; more than one zone multiplies the plan's nodes (and its cost).
    """
    settings = workload.kubernetes
    if pool_zone(settings) is not None or settings.location is None:
        return []
    out = []
    for pool in plan.pools:
        zones = pool_node_locations(pool.node.platform_id, settings)
        if zones is not None and len(zones) == 1:
            continue
        where = (
            f"the {len(zones)} zones of {settings.location} that offer {pool.node.platform_id} ({', '.join(zones)})"
            if zones
            else f"the cluster's zones (no zone list is known for {pool.node.platform_id})"
        )
        out.append(
            Finding(
                "warning",
                "gke-regional-node-count",
                f"pool {pool.name}: kubernetes.location {settings.location} is a region and no kubernetes.zone is set, "
                f"so terraform/gke-node-pools.tf gives the pool {where} as node_locations, and GKE's node_count is per "
                f"zone: {pool.nodes} node(s) in each, not {pool.nodes} in all; set kubernetes.zone (or the gke_zone "
                "variable) to one zone that offers the type",
                "kubernetes.location",
            )
        )
    return out


def unused_reservation_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """Reservations ``kubernetes.reservations`` names for machine types no pool runs on: paid for, used by nothing."""
    used = {pool.node.platform_id for pool in plan.pools}
    return [
        Finding(
            "warning",
            "reservation-unused",
            f"kubernetes.reservations names {name} for {platform_id}, on which no pool runs (the plan chose "
            f"{', '.join(sorted(used)) or 'no pool'}): a reservation bills its whole term, and its cost is not in "
            "this plan; give the reservation's USD per node-hour under 'prices:' (an unpriced type ranks after priced "
            "ones), allow its GPU in hardware.gpus, or remove the entry",
            f"kubernetes.reservations.{platform_id}",
        )
        for platform_id, name in sorted((workload.kubernetes.reservations or {}).items())
        if platform_id not in used
    ]


#: The upgrade settings of every rendered node pool: surge upgrades, one new node before one is drained (newuser63
#: item 4). "Surge upgrades are the default upgrade strategy" of a Standard node pool
#: (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies); maxSurge "controls the number
#: of additional nodes that can be added to the node pool temporarily for the time of the upgrade" (UpgradeSettings,
#: https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/UpgradeSettings, which adds: "upgrades inevitably
#: introduce some disruption since workloads need to be moved from old nodes to new, upgraded ones. Even if
#: maxUnavailable=0, this holds true": the drained node's replicas restart). specgen rendered maxSurge 0 /
#: maxUnavailable 1 until then, which takes a node away before its replacement.
UPGRADE_SETTINGS = {"maxSurge": 1, "maxUnavailable": 0}
UPGRADE_SETTINGS_TEXT = "upgradeSettings maxSurge 1, maxUnavailable 0: a new node of the type first"
#: What a surge node needs: the upgrade strategies page asks for "enough quota, resource availability, or reservation
#: capacity to upgrade your nodes using that strategy".
SURGE_NEEDS = (
    "GKE gets that node: quota and capacity for one more node of the type in the zone, and a pool on a reservation "
    "room for one more node in it (https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies)"
)


def surge_upgrade_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """What GKE's surge upgrades of the serving pools need, and where what a drained node leaves is said.

    newuser63 items 3 and 4: every node GKE upgrades is drained once its surge node runs, and its replicas start again
    there (the model's download and load: cold-start-time); what a service keeps meanwhile is the planner's
    ``node-down-capacity`` (one check on every provider), whose ``nodes_down_tolerated`` keeps the rate. Here only what
    the surge node needs, once for the serving pools that GKE upgrades.
    """
    serving = sorted({p for d in plan.deployments if d.kind == "inference" for p in d.pools})
    if not serving:
        return []
    return [
        Finding(
            "info",
            "gke-upgrade-surge",
            f"GKE upgrades the nodes of {', '.join(serving)} one at a time (autoUpgrade on) with {UPGRADE_SETTINGS_TEXT}, "
            "then the old one drained, whose replicas start again on the new one (cold-start-time; node-down-capacity "
            f"says what each service keeps meanwhile): an upgrade waits until {SURGE_NEEDS}; without it, a maintenance "
            "window or exclusion on the cluster holds upgrades off"
            + drain_grace_text(d for d in plan.deployments if d.kind == "inference"),
            "kubernetes",
        )
    ]


def training_upgrade_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """Training jobs on GKE node pools that GKE upgrades one node at a time while they may be running.

    newuser28 item 11: a nightly ZeRO-3 run over three nodes loses every rank when one node is drained for an upgrade
    (autoUpgrade on), and the goodput planned does not cover rerunning hours of it. GKE
    keeps node auto-upgrade on for clusters in a release channel, so the finding names what holds it off: a
    maintenance window outside the runs' hours, or an exclusion (https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
    """
    index_of = {dep.name: index for index, dep in enumerate(workload.deployments)}
    out = []
    for dep in plan.deployments:
        if dep.kind != "training":
            continue
        hours = dep.details.get("hours")
        run = f" a {hours:,.1f} h run" if isinstance(hours, int | float) else " a run"
        out.append(
            Finding(
                "warning",
                "gke-training-upgrade",
                f"{dep.name} runs on pool {dep.pool}, whose nodes GKE upgrades one at a time (autoUpgrade on, "
                f"{UPGRADE_SETTINGS_TEXT}, then the old one drained): a node drained during{run} stops every rank "
                "of the job, which restarts from its "
                "last checkpoint; set a maintenance window outside the runs' hours, or a maintenance exclusion over "
                "them, on the cluster",
                f"deployments[{index_of[dep.name]}]",
            )
        )
    return out


def gpu_network_findings(plan: Plan, settings: KubernetesSettings) -> list[Finding]:
    """Pools of machines whose GPU NICs carry traffic only on networks attached to the node pool.

    A3 machines reach their GPU-to-GPU bandwidth over extra NICs, each in its own VPC subnet, attached as
    ``networkConfig.additionalNodeNetworkConfigs`` of the pool (GKE multi-networking) and driven by NCCL's
    GPUDirect-TCPX / TCPXO plugin; without them a node has its primary NIC only (newuser16 M2), which is what the
    planner then times the traffic between nodes over (newuser45 item 8): a pool whose nodes talk is warned. Every
    pool that attaches the networks ``kubernetes.gpu_networks`` names is told what the cluster and the job must add
    (review32 item 2: a pool whose nodes do not talk gets them too).
    """
    from generator import catalog
    from generator.catalog.gke_gpu_nics import primary_nic_gbps, takes_gpu_networks

    out = []
    for pool in plan.pools:
        fabric = [n for n in pool.node.nics if n.role == "fabric"]
        networks = pool_gpu_networks(pool, settings)
        talks = crosses_nodes(plan, pool)
        if not fabric or not (talks or networks):
            continue
        count = sum(n.count for n in fabric)
        gpu_nics = sum(n.count * catalog.nics()[n.nic_id].port_gbps * catalog.nics()[n.nic_id].ports for n in fabric)
        platform = catalog.platforms()[pool.node.platform_id]
        if networks:
            use = "which the plan times their traffic over" if talks else "though no replica or job of it crosses nodes"
            text = (
                f"pool {pool.name}'s nodes attach their {count} GPU NICs ({gpu_nics:g} Gb/s) to "
                f"{', '.join(n.network for n in networks)} (kubernetes.gpu_networks), {use}; the cluster needs "
                "multi-networking and GKE Dataplane V2, each network a GKENetworkParamSet and a Network object, and "
                "the job NCCL's GPUDirect plugin and its pods' network annotations "
                "(https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx): not rendered"
            )
            out.append(Finding("info", "gke-gpu-networks", text, f"kubernetes.gpu_networks.{platform.id}"))
            continue
        primary = primary_nic_gbps(platform, gpu_nics)
        faster = f" would carry it {gpu_nics / primary:.3g} times as fast" if primary > 0 else " would carry it"
        attach = (
            f"once attached to a VPC network each: name them under kubernetes.gpu_networks.{platform.id} (GKE's "
            "GPUDirect guide creates them, https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx)"
            if takes_gpu_networks(platform)
            else "once attached as RDMA networks (a second gVNIC's network and the subnets of a RoCE VPC, "
            "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth), which specgen does not render"
        )
        text = (
            f"pool {pool.name}'s nodes talk over {platform.id}'s primary NIC ({primary:g} Gb/s), which the plan times "
            f"their traffic over; its {count} GPU NICs ({gpu_nics:g} Gb/s){faster} {attach}"
        )
        out.append(Finding("warning", "gke-gpu-networks", text, "kubernetes"))
    return out


def config_connector_namespace(name: str, project: str) -> dict[str, Any]:
    """The Namespace the node pools live in, annotated with the project Config Connector manages them in."""
    return namespace_object(name, {"cnrm.cloud.google.com/project-id": project})


def gke_objects(
    pools: list[Pool],
    settings: KubernetesSettings,
    workload: str,
    *,
    shares: Mapping[str, GpuSharing | None],
    disks: Mapping[str, NodeDisk],
    compact: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The workload's Namespace and one ContainerNodePool per pool.

    ``shares``, ``disks``: each pool's GPU sharing and node disk, by pool name; ``compact``: the pools whose GPUs
    talk across nodes (:func:`~generator.render.kube_objects.crosses_nodes`).
    """
    project = gke_placement(settings).project
    pools_out = [
        container_node_pool(p, settings, workload, shares.get(p.name), disks.get(p.name), p.name in compact) for p in pools
    ]
    return [config_connector_namespace(workload, project), *pools_out]
