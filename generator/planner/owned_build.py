"""What the plan assumes of owned catalog servers: the parts it chose as for a purchase, not read off the servers.

An owned server of a catalog platform (``hardware.inventory[].platform``) is planned with the build specgen would
buy: its CPU, RAM, NVMe, PSUs and NICs, unless the platform is a vendor's complete system (a DGX), whose parts the
catalog records, or the inventory states them (its NICs: ``fabric_nic`` / ``fabric_nic_count``, ``frontend_nic``; its
RAM: ``ram_gib``).
The pool records which of its group vars are so assumed (``Pool.build_assumed``), so that a role can fail closed
rather than size RAID, hugepages or NCCL from invented hardware (newuser42 item 10), and a job or replica that spans
owned servers over a GPU fabric they were only assumed to have is a warning naming the field to state the real one
(newuser42 item 2).
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import GpuSpec, PlatformSpec
from generator.planner.custom import stated_platforms
from generator.planner.host_minimums import minimum_ram_gib
from generator.planner.nodes import SMALLEST_BUILD_GIB, fixed_system
from generator.planner.plan import DeploymentPlan, Finding, NodeSpec, Pool, nvme_drives_text
from generator.sizing.constants import Constants
from generator.units import GIB
from generator.words import listed
from generator.workload.models import InventoryGroup, Workload
from generator.workload.nic_pairs import slow_fabric

#: The parts a build may assume, in the order the group vars list them (``specgen_build_assumed``): the CPU
#: (``specgen_cpu``), RAM (``specgen_ram_gib``), NVMe data drives (``specgen_nvme``), PSUs (``specgen_power.psu``) and
#: the NICs of each role (``specgen_network.nics``).
BUILD_PARTS = ("gpus", "cpu", "ram", "nvme", "psu", "fabric", "frontend")


def _owned_catalog_platform(wl: Workload, pool: Pool) -> PlatformSpec | None:
    """The catalog record of a pool's owned bare-metal servers; None where it has none (bought, custom, cloud)."""
    platform = catalog.platforms().get(pool.node.platform_id)
    if not pool.owned_nodes or platform is None or platform.provider != "baremetal" or wl.hardware.provider != "baremetal":
        return None
    return platform


def _group_of(wl: Workload, node: NodeSpec) -> tuple[int, InventoryGroup] | None:
    """The first inventory group (its index) of the node's catalog platform, GPU and GPU count."""
    for j, group in enumerate(wl.hardware.inventory):
        record = catalog.platforms().get(group.platform or "")
        if (
            group.custom is None
            and record is not None
            and (record.id, group.gpu or record.gpu_ids[0], group.gpus_per_server or max(record.gpu_counts))
            == (node.platform_id, node.gpu_id, node.gpus)
        ):
            return j, group
    return None


def build_assumed(wl: Workload, pool: Pool) -> tuple[str, ...] | None:
    """The parts of a pool's owned catalog servers the plan assumed (:data:`BUILD_PARTS`); None: no owned catalog server.

    A configurable server's parts are all chosen; a vendor's complete system's only where the catalog lacks them. A
    part the node does not state (no RAM figure, no PSU, no NIC of a role) is not assumed; NICs the inventory states
    are not.
    """
    platform = _owned_catalog_platform(wl, pool)
    if platform is None:
        return None
    node = pool.node
    found = _group_of(wl, node)
    group = found[1] if found is not None else None
    fixed = fixed_system(platform)
    roles = {n.role for n in node.nics}
    stated = {
        "gpus": group is not None and group.gpus_per_server is not None,
        "fabric": group is not None and group.fabric_stated,
        "frontend": group is not None and bool(group.frontend_nic),
        "ram": group is not None and group.ram_gib is not None,
    }
    listed_by_catalog = {
        "gpus": len(platform.gpu_counts) == 1,
        "cpu": platform.cpu_id is not None,
        "ram": platform.ram_gib is not None,
        "nvme": bool(platform.nvme_count or platform.nvme_total_tb),
        "psu": platform.psu_count is not None,
        "fabric": platform.fabric_nic_id is not None,
        "frontend": platform.frontend_nic_id is not None,
    }
    stated_by_node = {
        "gpus": len(platform.gpu_counts) > 1,  # a platform of one GPU count has no other to assume
        "cpu": bool(node.cpu),
        "ram": node.ram_gib is not None,
        "nvme": True,
        "psu": node.psu is not None,
        "fabric": "fabric" in roles,
        "frontend": "frontend" in roles,
    }
    return tuple(
        part for part in BUILD_PARTS if stated_by_node[part] and not stated.get(part) and not (fixed and listed_by_catalog[part])
    )


def owned_ram_finding(
    wl: Workload, platform: PlatformSpec, gpu: GpuSpec, node: NodeSpec, host_ram_bytes: int, consts: Constants, pool: str
) -> Finding | None:
    """An ``owned-ram-assumed`` warning: owned RAM not stated, and the work needs more than the default build.

    newuser43 item 2; None where the RAM is stated, or the work fits the platform's default build. The build specgen
    would buy is sized from the workload up to the platform's most RAM: the same owned desktop was 64 GiB in one plan
    and 192 GiB in another, so a 113 GiB optimizer offload "fitted" it. The default is the catalog's build
    (``ram_gib``; 64 GiB, the smallest build the planner rounds to, where it has none) or the published per-GPU minimum
    where higher. A vendor's complete system whose RAM the catalog lists is not assumed.
    """
    if platform.provider != "baremetal" or platform.custom or platform.ram_as_owned or wl.hardware.provider != "baremetal":
        return None
    if fixed_system(platform) and platform.ram_gib is not None:
        return None
    needed = consts.host_os_ram_bytes + host_ram_bytes
    default = max(int(platform.ram_gib or SMALLEST_BUILD_GIB), minimum_ram_gib(platform, gpu, node.gpus))
    if needed <= default * GIB:
        return None
    found = _group_of(wl, node)
    at = f"hardware.inventory[{found[0]}]" if found is not None else "hardware.inventory"
    return Finding(
        "warning",
        "owned-ram-assumed",
        f"pool {pool}: its work needs {needed / GIB:.1f} GiB of host RAM a server ({consts.host_os_ram_bytes / GIB:g} GiB "
        f"kept for the OS and its processes and {host_ram_bytes / GIB:.2f} GiB the deployments hold in host memory), more "
        f"than the {default} GiB of {platform.id}'s default build; the {node.ram_gib} GiB planned is the build specgen "
        f"would buy, not read from the servers you own: state their RAM under {at}.ram_gib, and the plan refuses the work "
        "where it does not fit",
        f"{at}.ram_gib",
    )


def _parts_text(pool: Pool, parts: tuple[str, ...]) -> str:
    """The assumed parts of a pool's node as the finding names them."""
    node = pool.node
    counts = sorted(catalog.platforms()[node.platform_id].gpu_counts) if "gpus" in parts else []
    words = {
        "gpus": f"{node.gpus} GPUs ({node.platform_id} takes {', '.join(map(str, counts))})",
        "cpu": f"CPU ({node.cpu})",
        "ram": f"{node.ram_gib} GiB RAM",
        "nvme": nvme_drives_text(node) + (f" beside {node.boot_drives}" if node.boot_drives else ""),
        "psu": f"PSUs ({node.psu})",
        "fabric": ", ".join(f"{n.count} x {n.nic_id} fabric NICs" for n in node.nics if n.role == "fabric"),
        "frontend": ", ".join(f"{n.count} x {n.nic_id} front-end NICs" for n in node.nics if n.role == "frontend"),
    }
    return ", ".join(words[part] for part in parts)


def owned_build_findings(wl: Workload, pools: list[Pool]) -> list[Finding]:
    """An ``owned-build-assumed`` info finding for each pool of owned catalog servers with assumed parts.

    newuser27 item 7: the parts were chosen as for a purchase, not read off the server owned.
    """
    out = []
    for pool in pools:
        parts = pool.build_assumed
        if not parts:
            continue
        found = _group_of(wl, pool.node)
        at = f"hardware.inventory[{found[0]}]" if found is not None else "hardware.inventory"
        out.append(
            Finding(
                "info",
                "owned-build-assumed",
                f"pool {pool.name}: the owned {pool.node.platform_id}'s {_parts_text(pool, parts)} are the build specgen "
                "would buy for the workload, not read from the server you own; SPEC.md states them and the Ansible group "
                f"vars list them under specgen_build_assumed ({', '.join(parts)}): check them, state the RAM and NICs under "
                f"{at} (gpus_per_server, ram_gib, fabric_nic / fabric_nic_count, frontend_nic), or describe the server "
                "under custom: with its real parts",
                "hardware.inventory",
            )
        )
    return out


def _spanning(pool: Pool, deployments: list[DeploymentPlan]) -> list[DeploymentPlan]:
    """The deployments with a replica (a service) or a job (training) wider than one of the pool's servers."""
    return [
        d
        for d in deployments
        if (share := d.in_pool(pool.name)) is not None
        and (share[0] * share[1] if d.kind == "inference" else share[3]) > pool.node.gpus
    ]


def _timed_fabric_gbps(pool: Pool) -> float:
    """The pool's fabric NICs' Gb/s as its step is timed over them (newuser111: a NIC past its GPU's PCIe is capped)."""
    from generator import catalog
    from generator.planner.nic_host_link import timed_nic_gbps, vendor_nic_id

    nics, gpu = catalog.nics(), catalog.gpus().get(pool.node.gpu_id)
    vendor = vendor_nic_id(pool.node.platform_id, pool.node.platform_id not in catalog.platforms())
    return sum(
        (timed_nic_gbps(nics[n.nic_id], gpu, vendor) if gpu is not None and n.nic_id in nics else n.port_gbps) * n.count
        for n in pool.node.nics
        if n.role == "fabric"
    )


def _over_fabric_text(d: DeploymentPlan, pool: Pool) -> str:
    """What a spanning deployment's plan takes from the fabric: a training step's time between nodes, or a replica's span."""
    details = d.details
    if d.kind == "training" and details.get("comm_between_nodes_s_per_step") is not None:
        hours = f", {details['hours']:.1f} h a run" if details.get("hours") is not None else ""
        fabric_gbps = _timed_fabric_gbps(pool)
        front_gbps = sum(n.port_gbps * n.count for n in pool.node.nics if n.role == "frontend")
        alone = ""
        if fabric_gbps and front_gbps:
            # the same bytes over the front end: the bandwidth term scales, the per-collective latency does not
            alone = (
                f" (over the front end alone, {front_gbps:g} Gb/s, about "
                f"{details['comm_between_nodes_s_per_step'] * fabric_gbps / front_gbps:.0f} s)"
            )
        return (
            f"{d.name} (training) is timed at {details['comm_between_nodes_s_per_step']:.3f} s between nodes a step over "
            f"{details.get('inter_node_link')}{alone}, against {details.get('compute_s_per_step'):.3f} s of compute{hours}"
        )
    tp, pp, _, _ = d.in_pool(pool.name) or (d.tp, d.pp, 0, 0)
    gpus = max(tp, d.expert_parallel_in(pool.name)) * pp
    return f"{d.name} runs TP{tp} x PP{pp} replicas of {gpus} GPUs across {pool.node.gpus}-GPU servers over it"


def owned_fabric_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan]) -> list[Finding]:
    """A ``owned-fabric-assumed`` warning where work spans owned catalog servers over a GPU fabric only assumed.

    newuser42 item 2: a two-node fine-tune on owned Dell R760xa was timed over 4 x 400 Gb/s InfiniBand they do not
    have (one 25 GbE port) at capex $0, with two info lines; with the real link it misses its deadline.
    """
    out = []
    for pool in pools:
        if pool.nodes < 2 or not (spanning := _spanning(pool, deployments)):
            continue
        found = _group_of(wl, pool.node)
        at = f"hardware.inventory[{found[0]}]" if found is not None else "hardware.inventory"
        front = [n for n in pool.node.nics if n.role == "frontend"]
        if (
            _owned_catalog_platform(wl, pool) is not None
            and found is not None
            and found[1].fabric_stated
            and not any(n.role == "fabric" for n in pool.node.nics)
            and found[1].frontend_nic is None
            and front
        ):
            # fuzz34 item 8: no fabric stated (fabric_nic_count: 0), so the work crosses the front end, not stated
            nics = ", ".join(f"{n.count} x {n.name} ({n.port_gbps:g} Gb/s)" for n in front)
            whose = (
                "the build specgen would buy"
                if "frontend" in (pool.build_assumed or ())
                else f"the catalog's {pool.node.platform_id} record"
            )
            out.append(
                Finding(
                    "warning",
                    "owned-frontend-assumed",
                    f"pool {pool.name}: its {pool.owned_nodes} owned {pool.node.platform_id} server(s) have no GPU "
                    "fabric (fabric_nic_count: 0), so work between them crosses their front end, which is assumed "
                    f"({nics} each, {whose}), not read from the servers you own: "
                    f"{listed([_over_fabric_text(d, pool) for d in spanning])}, and the plan holds only over it; state "
                    f"their real front end under {at}: frontend_nic and frontend_nic_count",
                    f"{at}.frontend_nic",
                )
            )
        if "fabric" not in (pool.build_assumed or ()):
            continue
        fabric = [n for n in pool.node.nics if n.role == "fabric"]
        nics = ", ".join(f"{n.count} x {n.name}" for n in fabric)
        out.append(
            Finding(
                "warning",
                "owned-fabric-assumed",
                f"pool {pool.name}: {listed([_over_fabric_text(d, pool) for d in spanning])}: the GPU fabric of its "
                f"{pool.owned_nodes} owned {pool.node.platform_id} server(s) is assumed ({nics} each, the build specgen "
                "would buy), not read from the servers you own, and the plan holds only over it; state their real "
                f"fabric under {at}: fabric_nic and fabric_nic_count, or fabric_nic_count: 0 where they have only "
                "front-end Ethernet (frontend_nic gives its NICs)",
                f"{at}.fabric_nic",
            )
        )
    return out


def _stated_at(wl: Workload, node: NodeSpec) -> str:
    """Where the inventory states a node's NICs: its catalog group's fields, or its custom server's."""
    for j, group in enumerate(wl.hardware.inventory):
        if group.custom is not None and group.custom.platform_id == node.platform_id:
            return f"hardware.inventory[{j}].custom"
    found = _group_of(wl, node)
    return f"hardware.inventory[{found[0]}]" if found is not None else "hardware.inventory"


def slow_fabric_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan]) -> list[Finding]:
    """A ``fabric-without-rdma`` warning for each pool of owned servers whose stated GPU fabric NIC lacks GPUDirect RDMA.

    fuzz34 item 6: a front-end 25 GbE NIC stated as an owned server's fabric (catalog or custom, the one rule of
    :func:`~generator.workload.nic_pairs.slow_fabric`) was taken without a word. Work between the servers is timed at
    the NICs' line rate; without GPUDirect RDMA each transfer is staged through host memory, so it runs slower.
    """
    out = []
    for pool in pools:
        slow = [n for n in pool.node.nics if n.role == "fabric" and slow_fabric(n.nic_id)]
        if not pool.owned_nodes or not slow:
            continue
        at = _stated_at(wl, pool.node)
        gbps = sum(n.port_gbps * n.count for n in slow)
        nics = ", ".join(f"{n.count} x {n.nic_id} ({n.protocol}, {n.port_gbps:g} Gb/s)" for n in slow)
        spanning = _spanning(pool, deployments)
        timed = (
            f"{listed([_over_fabric_text(d, pool) for d in spanning])}, planned at its line rate"
            if spanning
            else "no replica or job spans its servers now; one that did would be planned at its line rate"
        )
        out.append(
            Finding(
                "warning",
                "fabric-without-rdma",
                f"pool {pool.name}: the GPU fabric stated for its {pool.owned_nodes} owned {pool.node.platform_id} "
                f"server(s) is {nics} each, {gbps:g} Gb/s a server without GPUDirect RDMA: {timed}, but without RDMA "
                "each transfer between servers is staged through host memory and runs slower than timed; state an RDMA "
                f"NIC (InfiniBand or RoCE) in {at}.fabric_nic where the servers have one, or fabric_nic_count: 0 where "
                "they have only front-end Ethernet",
                f"{at}.fabric_nic",
            )
        )
    return out


def stated_kind(wl: Workload, platform_id: str, gpu_id: str) -> bool:
    """Whether the inventory states the NICs of owned ``platform_id`` servers with ``gpu_id`` (not their RAM alone)."""
    stated = stated_platforms(group for group in wl.hardware.inventory if group.nics_stated)
    return wl.hardware.provider == "baremetal" and (platform_id, gpu_id) in stated
