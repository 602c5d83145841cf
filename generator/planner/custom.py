"""Owned servers that are not in the catalog (``hardware.inventory[].custom``), as platforms the planner can use.

A custom server becomes a :class:`PlatformSpec` with ``custom=True`` and exactly the parts the team
listed: one GPU model at one GPU count, its CPU, RAM, NVMe and NICs. The planner places deployments
on it like on a catalog platform but never adds parts to it and never buys more of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator import catalog
from generator.catalog.records import GpuSpec, PlatformSpec
from generator.planner.nodes import NodeNeeds, assemble_node
from generator.planner.plan import Finding
from generator.sizing.constants import Constants
from generator.workload.custom_servers import inferred_board
from generator.workload.models import CustomServer, Hardware, InventoryGroup, Workload


def server_kind(spec: CustomServer) -> str:
    """The form of the server: as given, else an 8- or 4-GPU NVLink SXM (HGX) or 8-GPU OAM baseboard, else a PCIe server.

    Four NVLink SXM GPUs sit on an HGX 4-GPU board (NVLink between them, no NVSwitch), as the catalog's XE8640.
    """
    if spec.kind is not None:
        return spec.kind
    return inferred_board(spec.gpus_per_server, catalog.gpus()[spec.gpu]) or "pcie-server"


def custom_platform(spec: CustomServer) -> PlatformSpec:
    """The platform record of one custom server kind."""
    gpu = catalog.gpus()[spec.gpu]
    nics = {
        "fabric": (spec.fabric_nic, (spec.fabric_nic_count or 0) if spec.fabric_nic else 0),
        "frontend": (spec.frontend_nic, (spec.frontend_nic_count or 0) if spec.frontend_nic else 0),
    }
    table = catalog.nics()
    network = sum(table[nic].port_gbps * table[nic].ports * count for nic, count in nics.values() if nic)
    return PlatformSpec(
        id=spec.platform_id,
        name=f"owned custom server ({spec.gpus_per_server} x {gpu.name})",
        kind=server_kind(spec),
        provider="baremetal",
        instance_type=None,
        gpu_ids=(spec.gpu,),
        gpu_counts=(spec.gpus_per_server,),
        cpu_id=spec.cpu,
        cpu_sockets=spec.cpu_sockets,
        vcpus=spec.cpu_cores,
        ram_gib=float(spec.ram_gib),
        ram_max_gib=float(spec.ram_gib),
        nvme_drive_id=None,
        nvme_count=spec.nvme_drives,
        nvme_total_tb=spec.nvme_tb,
        fabric_nic_id=spec.fabric_nic,
        fabric_nic_count=nics["fabric"][1],
        frontend_nic_id=spec.frontend_nic,
        frontend_nic_count=nics["frontend"][1],
        network_gbps_total=network,
        psu_count=spec.psu_count,  # the team's own, where given (newuser57 item 13)
        psu_rating_w=None if spec.psu_rating_w is None else float(spec.psu_rating_w),
        psu_redundant=spec.psu_redundant,
        max_power_w=None if spec.max_power_w is None else float(spec.max_power_w),
        rack_units=spec.rack_units,
        cooling=spec.cooling or gpu.cooling,
        source=("hardware.inventory (the team's own description)",),
        custom=True,
        gpu_bridge=spec.gpu_bridge,
        gpu_slot_lanes=cpu.gpu_slot_lanes if (cpu := catalog.cpus().get(spec.cpu or "")) else (),
    )


def inventory_platform(group: InventoryGroup) -> PlatformSpec:
    """The platform of an owned group: its catalog record (with the NICs it states), or its custom description."""
    if group.custom is not None:
        return custom_platform(group.custom)
    return owned_catalog_platform(catalog.platforms()[str(group.platform)], group)


def owned_catalog_platform(platform: PlatformSpec, group: InventoryGroup) -> PlatformSpec:
    """A catalog platform with the NICs and RAM an owned group states it has; the record itself otherwise.

    A stated fabric (a NIC and its count, or ``fabric_nic_count: 0``: none) replaces the catalog's and any the
    planner would fit (``nics_as_owned``, newuser42 item 2); a stated front end replaces the catalog's. The aggregate
    network is then the stated NICs' ports, as a custom server's is. Stated RAM (``ram_gib``, newuser43 item 2) is the
    servers' RAM, as built (``ram_as_owned``): a job needing more host RAM is refused on them, not given a bigger build.
    """
    if group.ram_gib is not None:
        stated = float(group.ram_gib)
        platform = platform._replace(ram_gib=stated, ram_max_gib=stated, ram_as_owned=True)
    if not group.nics_stated:
        return platform
    fabric: tuple[str | None, int] = (platform.fabric_nic_id, platform.fabric_nic_count)
    if group.fabric_stated:
        fabric = (group.fabric_nic, group.fabric_nic_count or 0)
    front: tuple[str | None, int] = (platform.frontend_nic_id, platform.frontend_nic_count)
    if group.frontend_nic:
        front = (group.frontend_nic, group.frontend_nic_count or 1)
    table = catalog.nics()
    network = sum(table[nic].port_gbps * table[nic].ports * (count or 1) for nic, count in (fabric, front) if nic)
    return platform._replace(
        fabric_nic_id=fabric[0],
        fabric_nic_count=fabric[1] if fabric[0] else 0,
        frontend_nic_id=front[0],
        frontend_nic_count=front[1] if front[0] else 0,
        network_gbps_total=network or platform.network_gbps_total,
        nics_as_owned=group.fabric_stated or platform.nics_as_owned,
    )


def stated_ram_at(wl: Workload, platform_id: str, gpu_id: str) -> tuple[str | int, ...] | None:
    """The field stating the RAM of owned ``platform_id`` servers with ``gpu_id`` (the first group's); None: unstated.

    Groups of one kind state one figure (refused otherwise), which holds for bought servers of the kind too.
    """
    for j, group in enumerate(wl.hardware.inventory):
        record = catalog.platforms().get(group.platform or "") if group.custom is None else None
        if (
            record is not None
            and group.ram_gib is not None
            and (record.id, group.gpu or record.gpu_ids[0]) == (platform_id, gpu_id)
        ):
            return ("hardware", "inventory", j, "ram_gib")
    return None


def custom_drives_said(wl: Workload, platform_id: str, finding: Finding) -> Finding:
    """An ``nvme-short`` finding of owned custom server ``platform_id`` at the field that states its drives.

    newuser47 item 7: it stood at the deployment, and a server described with no ``nvme_tb`` had 0 TB without a word.
    """
    for j, group in enumerate(wl.hardware.inventory):
        spec = group.custom
        if spec is not None and spec.platform_id == platform_id:
            at = f"hardware.inventory[{j}].custom.nvme_tb"
            unstated = " (left out, nvme_tb is 0: no data drives)" if not spec.nvme_tb else ""
            return finding._replace(message=f"{finding.message}: state its drives at {at}{unstated}", path=at)
    return finding


def stated_platforms(groups: Iterable[InventoryGroup]) -> dict[tuple[str, str], PlatformSpec]:
    """The catalog platforms whose owned groups state their NICs or RAM, by (platform id, GPU id): the build of that kind.

    The stated NICs and RAM hold for every server of the kind in the plan, those bought too, so that owned and bought ones of
    one kind share a pool and one parts list.
    """
    out = {}
    for group in groups:
        if group.custom is None and group.build_stated and group.platform in catalog.platforms():
            record = catalog.platforms()[str(group.platform)]
            out[(record.id, group.gpu or record.gpu_ids[0])] = owned_catalog_platform(record, group)
    return out


def inventory_server(group: InventoryGroup) -> tuple[PlatformSpec, GpuSpec]:
    """The platform of an owned group and the GPU as it holds it (:meth:`PlatformSpec.fitted_gpu`)."""
    platform = inventory_platform(group)
    return platform, platform.fitted_gpu(catalog.gpus()[group.gpu or platform.gpu_ids[0]])


def custom_platforms(hardware: Hardware) -> dict[str, PlatformSpec]:
    """Every custom server kind a workload's hardware section owns, by id."""
    return {g.custom.platform_id: custom_platform(g.custom) for g in hardware.inventory if g.custom is not None}


def custom_power_findings(wl: Workload, consts: Constants) -> list[Finding]:
    """A custom server's ``max_power_w`` below the sum of its parts as the planner sums them: an info finding.

    The plan uses the figure given for power and racks; below the GPUs' TDP alone it is an input error
    (:mod:`generator.workload.custom_servers`). Between that and the parts' sum it is what a wall-power
    measurement usually shows (the parts' TDPs are ceilings that do not all peak at once), so the finding
    only names both figures; it does not fail ``--fail-on warning``.
    """
    out = []
    for j, group in enumerate(wl.hardware.inventory):
        spec = group.custom
        if spec is None or spec.max_power_w is None:
            continue
        platform, gpu = inventory_server(group)
        node = assemble_node(platform, gpu, spec.gpus_per_server, NodeNeeds(0, 0, 0, 0, needs_fabric=False), consts, [])
        summed = node.power_components_w or 0
        if spec.max_power_w < summed:
            out.append(
                Finding(
                    "info",
                    "custom-power-below-components",
                    f"{spec.platform_id}: max_power_w {spec.max_power_w:,} W is below the {summed:,} W its parts draw "
                    f"at full load as the planner sums them ({spec.gpus_per_server} x {spec.gpu}, CPUs, RAM, NICs, "
                    "drives, fans and PSU loss); the plan uses the given figure for power and racks: check it is the "
                    "server's wall power at full load",
                    f"hardware.inventory[{j}].custom.max_power_w",
                )
            )
    return out
