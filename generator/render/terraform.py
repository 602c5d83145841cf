"""Terraform: typed, validated variables for the GPU pools and their values as ``*.auto.tfvars.json``.

``gpu_pools`` is what the site provisions (a ``for_each`` over it allocates machines): on bare metal, a pool's servers
rented from a provider (:mod:`generator.render.rented`) are not in its ``node_count``, and a pool rented whole is not
in it at all. They are in ``rented_gpu_pools`` instead, with who provisions them and how they are billed, so a
calling module still sees them (a firewall rule or VPN route for their join to the control plane, the GPU count).
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Plan, Pool, RackSpec
from generator.render.aks_terraform import PATH as AKS_PATH
from generator.render.aks_terraform import aks_node_pools, render_aks_terraform
from generator.render.eks import PATH as EKS_PATH
from generator.render.eks import eks_managed_node_groups
from generator.render.env import render_template, to_json
from generator.render.gke_terraform import PATH as GKE_PATH
from generator.render.gke_terraform import gke_terraform_values, render_gke_terraform
from generator.render.hosts import host_node, host_power_w, rented_hosts, site_hosts
from generator.render.rented import rented_pools, rented_vars
from generator.workload.models import Workload


def pool_variables(pool: Pool, plan: Plan) -> dict[str, Any]:
    """One pool as the ``gpu_pools`` object type declares it: ``node_count`` is the hosts the site provisions.

    Nodes are Linux hosts, as they are provisioned: a rack-scale system's compute trays, each with its share of
    GPUs, cores, RAM and drives; its power (no per-tray figure is published) and NVLink domain are in
    ``rack_scale``, and ``power_w_per_node`` is null.
    """
    node = host_node(pool.node)
    rates = {d.name: d.requests_per_s_in(pool.name) for d in plan.deployments if d.name in pool.deployments}
    system = (
        {
            "rack_scale": {
                "systems": pool.nodes,
                "hosts_per_system": node.hosts,
                "nvlink_domain_gpus": pool.node.gpus,
                "power_w_per_system": node.power_w,
            }
        }
        if node.hosts > 1
        else {}
    )
    return {
        "provider": node.provider,
        "platform": node.platform_id,
        "instance_type": node.instance_type,
        "gpu_model": node.gpu_id,
        "gpus_per_node": node.gpus,
        "node_count": site_hosts(pool) if plan.provider == "baremetal" else pool.hosts,
        "cpu_cores": node.cpu_cores or None,  # null: no CPU given (fix149: 0 for a hardware.fixed one), as ram_gib's
        "ram_gib": node.ram_gib,
        "nvme_tb": node.nvme_tb,
        "power_w_per_node": host_power_w(node),
        **system,
        "cooling": node.cooling,
        "racks_spanned": pool.racks,  # racks holding some of its nodes, shared with other pools: var.racks lists them
        "deployments": list(pool.deployments),
        "requests_per_s": {name: rate for name, rate in rates.items() if rate is not None},
        "labels": dict(pool.labels),
        "taints": [{"key": k, "value": v, "effect": e} for k, v, e in pool.taints],
    }


def rented_variables(pool: Pool, workload: Workload) -> dict[str, Any]:
    """One bare-metal pool's servers rented from a provider, as the ``rented_gpu_pools`` object type declares it."""
    rented = rented_vars(pool, workload)["specgen_rented"]
    hosts = rented_hosts(pool, workload)
    node = host_node(pool.node)
    return {
        "rented_from": rented["from"],
        "billed_by_the": rented["billed_by_the"],
        "price": rented["price"],
        "source": rented["source"],
        "platform": node.platform_id,
        "gpu_model": node.gpu_id,
        "gpus_per_node": node.gpus,
        "node_count": len(hosts),
        "hosts": hosts,
        "deployments": list(pool.deployments),
        "labels": dict(pool.labels),
        "taints": [{"key": k, "value": v, "effect": e} for k, v, e in pool.taints],
    }


def rack_variables(rack: RackSpec) -> dict[str, Any]:
    """One rack of the plan as the ``racks`` object type declares it: each pool's nodes in it, the named hosts.

    With ``hardware.rack_circuits``, also what the rack puts on its circuits (``circuit_load``, newuser64 item 11: for
    the DCIM / PDU side); null otherwise, as Terraform reads the type's optional attribute back.
    """
    load = {"circuit_load": None if rack.circuit_load is None else rack.circuit_load._asdict()}
    return {
        "id": rack.id,
        "nodes": {share.pool: share.nodes for share in rack.pools},
        "hosts": [host for share in rack.pools for host in share.hosts],
        "units": rack.units,
        "usable_units": rack.usable_units,
        "power_w": rack.power_w,
        "heat_btu_per_h": rack.heat_btu_per_h,
        "cooling": rack.cooling,
        **load,
    }


#: The circuit figures of ``plan.rack_supply`` the Terraform values carry (its two basis texts stay in spec.json).
RACK_SUPPLY_FIELDS = (
    "voltage_v",
    "phases",
    "breaker_a",
    "circuits",
    "redundancy",
    "serving_circuits",
    "continuous_load_fraction",
    "continuous_limit_a",
    "power_factor",
    "outlet_connection",
    "outlet_voltage_v",
    "circuit_kva",
    "circuit_usable_kva",
    "usable_kva",
    "usable_kw",
)


def render_terraform(plan: Plan, workload: Workload) -> dict[str, str]:
    """``terraform/variables.tf`` and ``.auto.tfvars.json``, plus EKS node groups, GKE node pools or AKS node pools."""
    rented = rented_pools(plan)
    values: dict[str, Any] = {
        "gpu_pools": {
            pool.name: pool_variables(pool, plan)
            for pool in plan.pools
            if plan.provider != "baremetal" or site_hosts(pool) > 0  # a pool rented whole: the provider's alone
        },
        "workload": plan.workload,
    }
    if rented:
        values["rented_gpu_pools"] = {pool.name: rented_variables(pool, workload) for pool in rented}
    # a cloud instance stands in the provider's racks; a machine of hardware.fixed (a home workstation) stands in none,
    # nor does a fleet rented whole: no rack_power_kw (the schema's default, not the user's), no var.racks (fix151)
    if plan.provider == "baremetal" and plan.racks:
        values["rack_power_kw"] = workload.hardware.rack_power_kw
        values["racks"] = [rack_variables(rack) for rack in plan.racks]
        if plan.rack_supply is not None:
            values["rack_supply"] = {field: getattr(plan.rack_supply, field) for field in RACK_SUPPLY_FIELDS}
    elif plan.region is not None and plan.provider != "gcp":  # GKE's is gke_location
        values["region"] = plan.region
    gke = gke_terraform_values(plan, workload) if plan.provider == "gcp" else None
    if gke is not None:  # the google_container_node_pool arguments, declared in terraform/gke-node-pools.tf
        values.update(gke)
    eks = eks_managed_node_groups(plan) if plan.provider == "aws" else None
    aks = aks_node_pools(plan, workload)
    if aks:  # every Azure pool as an AKS node pool (MIG ones with gpu_instance), declared in terraform/aks-node-pools.tf
        values["aks_node_pools"] = aks
    files = {
        "terraform/variables.tf": render_template("terraform/variables.tf.j2", workload=plan.workload, values=values),
        "terraform/outputs.tf": render_template(
            "terraform/outputs.tf.j2",
            workload=plan.workload,
            eks=eks and eks["eks_managed_node_groups"],
            region=values.get("region"),
            rented=bool(rented),
        ),
        "terraform/specgen.auto.tfvars.json": to_json(values) + "\n",
    }
    if eks is not None:
        files[EKS_PATH] = to_json(eks) + "\n"
    if gke is not None:
        files[GKE_PATH] = render_gke_terraform(gke, plan.workload)
    if aks:
        files[AKS_PATH] = render_aks_terraform(aks, plan.workload)
    return files
