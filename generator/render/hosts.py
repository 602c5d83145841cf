"""A pool's Linux hosts and their names: the team's own (``hardware.inventory[].hosts``) where given, else placeholders.

The planner's node is what is bought, racked and powered as one: a server, or a whole rack-scale system (an
NVIDIA GB200 NVL72 is one node of 18 compute trays). What is provisioned, joined to Kubernetes and configured
by Ansible is a Linux host: each compute tray runs its own OS with its own CPUs, memory, drives and NICs.
:func:`host_node` is the one place that turns a node into one of its hosts.
"""

from __future__ import annotations

from generator.planner.placeholder_hosts import placeholder_names
from generator.planner.plan import NodeSpec, Plan, Pool
from generator.workload.models import InventoryHost, Workload

#: Where a host's drives are mounted (``specgen_nvme.mount_point``) and the folder under it that keeps the model files
#: its engines load (``specgen_nvme.model_cache_dir``; a llama.cpp service's ``model_file`` is in it).
DATA_MOUNT_POINT = "/var/lib/specgen"
MODEL_CACHE_DIR = f"{DATA_MOUNT_POINT}/models"


def host_node(node: NodeSpec) -> NodeSpec:
    """One host of ``node``: its GPUs, CPUs, RAM, drives and NICs split evenly over its hosts.

    Power, heat and cooling stay the node's (a rack-scale system's power shelves feed all its trays; no
    per-tray figure is published): :func:`host_power_w` and :func:`host_heat_btu_per_h` give a host's.
    """
    hosts = node.hosts
    if hosts == 1:
        return node
    return node._replace(
        gpus=node.gpus // hosts,
        cpu=node.host_cpu or node.cpu,
        cpu_cores=node.cpu_cores // hosts,
        ram_gib=None if node.ram_gib is None else node.ram_gib // hosts,
        nvme_tb=None if node.nvme_tb is None else round(node.nvme_tb / hosts, 2),
        nvme_drives=node.nvme_drives // hosts,
        nvme_read_gb_per_s=round(node.nvme_read_gb_per_s / hosts, 2),
        nvme_write_gb_per_s=round(node.nvme_write_gb_per_s / hosts, 2),
        nics=tuple(n._replace(count=n.count // hosts) for n in node.nics),
    )


def host_power_w(node: NodeSpec) -> int | None:
    """One host's power: the node's; None for a tray of a rack-scale system (no per-tray figure is published)."""
    return node.power_w if node.hosts == 1 else None


def host_heat_btu_per_h(node: NodeSpec) -> int | None:
    """One host's heat, on :func:`host_power_w`'s rule."""
    return node.heat_btu_per_h if node.hosts == 1 else None


def rented_hosts(pool: Pool, workload: Workload) -> list[str]:
    """The pool's hosts rented from a provider on bare metal (:attr:`Pool.rented`): its placeholders, none owned.

    They are the provider's servers in its datacentre (newuser39 item 3): no MAAS, Ironic or Tinkerbell of the site
    knows or can boot them, so no provisioning object is rendered for them (:mod:`generator.render.rented`).
    """
    return placeholder_names(pool, workload) if pool.rented else []


def site_hosts(pool: Pool) -> int:
    """Hosts of the pool the site's own provisioning boots: all but the ones it rents from a provider."""
    return len(pool.owned_hosts) if pool.rented else pool.hosts


def named_hosts(workload: Workload) -> dict[str, InventoryHost]:
    """The hosts the workload names, by name: its inventory's and a ``hardware.fixed`` machine's (fix192).

    The fixed machine's host is described by its name alone (no BMC, boot NIC or disk: nothing provisions it); its
    ``address`` is the Ansible inventory's ``ansible_host``, as an inventory host's ``ip_address`` (:func:`ansible_hosts`).
    """
    described = {host.name: host for group in workload.hardware.inventory for host in group.hosts}
    fixed = workload.hardware.fixed
    if fixed is not None and fixed.host_name is not None:
        described[fixed.host_name] = InventoryHost(fixed.host_name)
    return described


def ansible_hosts(workload: Workload) -> dict[str, str]:
    """Each named host's address Ansible connects to (its ``ansible_host``), where the workload gives one.

    An owned server's ``ip_address`` (Tinkerbell's DHCP hands it out: Ansible connects to it, not to a name the site's
    DNS may not resolve); a ``hardware.fixed`` machine's ``address`` (an IP address or a DNS name).
    """
    addresses = {h.name: h.ip_address for group in workload.hardware.inventory for h in group.hosts if h.ip_address}
    fixed = workload.hardware.fixed
    if fixed is not None and fixed.host_name is not None and fixed.address is not None:
        addresses[fixed.host_name] = fixed.address
    return addresses


def owned_hosts(pool: Pool, workload: Workload) -> list[InventoryHost]:
    """The named hosts the plan put on ``pool`` (its ``owned_hosts``: the planner's one allocation), as described."""
    described = named_hosts(workload)
    return [described[name] for name in pool.owned_hosts]


def host_racks(plan: Plan, workload: Workload) -> dict[str, str]:
    """The rack (``Plan.racks`` id) each host of a bare-metal plan stands in, by host name: named and placeholder hosts.

    A pool's hosts are its owned ones then its placeholders (:func:`placeholder_names`), the order the planner racks
    its nodes in (owned first; an owned workstation stays in the office, in no rack); each rack takes the hosts of the
    nodes it holds of the pool, in rack order. A cloud plan (no racks) gives none.
    """
    out: dict[str, str] = {}
    for pool in plan.pools:
        names = [*pool.owned_hosts, *placeholder_names(pool, workload)]
        if pool.node.kind == "workstation":  # its owned hosts (named or not) come first and are in no rack
            names = names[pool.owned_nodes * pool.node.hosts :]
        for rack in plan.racks:
            for share in rack.pools:
                if share.pool == pool.name:
                    taken = share.nodes * pool.node.hosts
                    out.update(dict.fromkeys(names[:taken], rack.id))
                    names = names[taken:]
    return out


def cluster_hosts(plan: Plan, workload: Workload) -> tuple[str, ...]:
    """The machines ``plan`` names, each one machine of the cluster a tree describes.

    Its owned hosts and, on bare metal, the placeholders of the hosts it buys (hosts.yml.example, MAAS) or rents from a
    provider (hosts.yml.example alone).
    """
    placeholders = [h for p in plan.pools for h in placeholder_names(p, workload)] if plan.provider == "baremetal" else []
    return (*(h for p in plan.pools for h in p.owned_hosts), *placeholders)


def fixed_example_lines(plan: Plan, missing: dict[str, list[str]]) -> list[str]:
    """``hosts.yml.example``'s comment lines on a ``hardware.fixed`` machine's placeholder (fix192's left-out).

    ``missing``: each pool's placeholder names. A fixed machine is named in the workload, not under
    ``hardware.inventory[].hosts`` (the header's first line): its ``host_name`` and ``address`` put it in
    ``inventory.yml`` by that name, with ``ansible_host``, and leave no placeholder here.
    """
    lines: list[str] = []
    for pool in plan.pools:
        if pool.node.kind == "fixed" and missing.get(pool.name):
            lines += [
                f"# {pool.name}: the hardware.fixed machine; or name it in the workload:",
                "#   hardware.fixed.host_name (and address, its ansible_host): then",
                "#   inventory.yml lists it by that name and this file is not needed",
            ]
    return lines
