"""GKE node pools for Terraform: ``google_container_node_pool`` arguments per pool, in ``terraform/gke-node-pools.tf``.

The values are the ContainerNodePool's (:func:`generator.render.gke.node_pool_spec`) with the provider's argument
names (terraform-provider-google names each argument as the snake_case of the Config Connector field), so the
Terraform and the Kubernetes rendering of a pool cannot disagree. The cluster's project, location and name and the
pools' zone are variables (defaults from ``kubernetes.*`` where the workload sets them, else Terraform asks);
the output ``gke_node_pools`` merges them into each pool, ready for a ``for_each`` over the resource.
"""

from __future__ import annotations

import re
from typing import Any

from generator.planner.plan import Plan
from generator.render.env import render_template
from generator.render.gke import gke_node_pool_name, node_pool_spec, pool_gpu_networks, pool_reservation
from generator.render.gpu_sharing import pool_shares
from generator.render.kube_objects import crosses_nodes
from generator.render.node_disk import node_disks
from generator.workload.gke_zone import pool_node_locations, pool_zone
from generator.workload.models import Workload

PATH = "terraform/gke-node-pools.tf"

#: Maps whose keys are data (Kubernetes and GCE label keys), not argument names: kept as they are.
_DATA_MAPS = frozenset({"labels", "resourceLabels"})

#: Arguments every pool object has (null where the pool has none), so the variable's object type is one shape.
_OPTIONAL_POOL = ("node_count", "initial_node_count", "autoscaling", "placement_policy", "network_config")
_OPTIONAL_NODE_CONFIG = ("disk_size_gb", "disk_type", "ephemeral_storage_local_ssd_config", "reservation_affinity")
_OPTIONAL_ACCELERATOR = ("gpu_partition_size", "gpu_sharing_config")


def snake_case(name: str) -> str:
    """A Config Connector field name as the provider's argument name (``gpuDriverVersion`` -> ``gpu_driver_version``)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def terraform_arguments(value: Any) -> Any:
    """``value`` (a ContainerNodePool spec part) with every field renamed as the provider names it, recursively."""
    if isinstance(value, dict):
        return {snake_case(key): (dict(item) if key in _DATA_MAPS else terraform_arguments(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [terraform_arguments(item) for item in value]
    return value


def _with_nulls(value: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {**dict.fromkeys(keys), **value}


def node_pool_arguments(spec: dict[str, Any], name: str, spot: bool = False) -> dict[str, Any]:
    """One pool's ``google_container_node_pool`` arguments but its cluster and zone, from its ContainerNodePool spec.

    ``spot``: the plan has a spot pool, so every pool's ``node_config`` has ``spot`` (null on demand).
    """
    pool = _with_nulls({"name": name, **terraform_arguments(spec)}, _OPTIONAL_POOL)
    node_config = _with_nulls(pool["node_config"], _OPTIONAL_NODE_CONFIG + (("spot",) if spot else ()))
    node_config["guest_accelerator"] = [_with_nulls(a, _OPTIONAL_ACCELERATOR) for a in node_config["guest_accelerator"]]
    pool["node_config"] = node_config
    return pool


def gke_node_pools(plan: Plan, workload: Workload) -> dict[str, dict[str, Any]]:
    """The arguments of every pool, keyed by pool name; GPU sharing as the Kubernetes rendering applies it."""
    shares = pool_shares(plan, workload)
    disks = node_disks(plan)
    spot = any(pool.spot for pool in plan.pools)
    return {
        pool.name: node_pool_arguments(
            node_pool_spec(
                pool,
                plan.workload,
                shares[pool.name],
                pool_reservation(pool, workload.kubernetes),
                disks[pool.name],
                crosses_nodes(plan, pool),
                pool_gpu_networks(pool, workload.kubernetes),
            ),
            gke_node_pool_name(pool),
            spot,
        )
        # fix169: a regional cluster's pool lists the region's zones that offer its type (the zone where one is set)
        | {"node_locations": pool_node_locations(pool.node.platform_id, workload.kubernetes)}
        for pool in plan.pools
    }


def gke_cluster_values(workload: Workload) -> dict[str, str]:
    """The cluster variables the workload gives a value for: project, location, cluster name, the pools' zone."""
    settings = workload.kubernetes
    known = {
        "gcp_project": settings.gcp_project,
        "gke_location": settings.location,
        "gke_cluster": settings.cluster_name or workload.name,
        "gke_zone": pool_zone(settings),
    }
    return {key: str(value) for key, value in known.items() if value is not None}


def gke_terraform_values(plan: Plan, workload: Workload) -> dict[str, Any]:
    """What ``specgen.auto.tfvars.json`` gives the variables of :data:`PATH`."""
    return {**gke_cluster_values(workload), "gke_node_pools": gke_node_pools(plan, workload)}


def render_gke_terraform(values: dict[str, Any], workload: str) -> str:
    """:data:`PATH`: the variables (defaults: ``values``) and the ``gke_node_pools`` output."""
    spot = any("spot" in pool["node_config"] for pool in values["gke_node_pools"].values())
    return render_template("terraform/gke-node-pools.tf.j2", workload=workload, values=values, spot=spot)
