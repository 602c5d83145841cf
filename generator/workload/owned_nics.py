"""Checks of the NICs and RAM an owned catalog platform's group states (``hardware.inventory[].fabric_nic``, ``ram_gib``).

A group of a catalog platform may say what GPU fabric and front end its servers really have (newuser42 item 2). Every
problem is located at the field that causes it (file:line:col): an unknown NIC id, a count without its NIC or a NIC
without its count, more fabric NICs than the servers take, NIC fields on a custom server (which names them under
``custom``), and two groups of one server kind that state different NICs (the plan builds a kind one way). Stated RAM
(newuser43 item 2) likewise: not on a custom server, at most the platform's most, one figure for a server kind.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import PlatformSpec
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import InventoryGroup, Workload
from generator.workload.nic_pairs import NIC_FIELDS, FabricRoom, Path, nic_pair_errors


def most_fabric_nics(platform: PlatformSpec) -> int:
    """The most GPU fabric NICs one server of ``platform`` is taken to hold: one a GPU (the catalog's, where more).

    GPU servers are built with one scale-out NIC a GPU (the DGX and HGX systems: 8 for 8 GPUs); a workstation tower
    has the PCIe lanes for one at most (the planner fits no more, :func:`generator.planner.nodes.fitted_fabric_nics`).
    """
    if platform.kind == "workstation":
        return max(1, platform.fabric_nic_count)
    return max(*platform.gpu_counts, platform.fabric_nic_count)


def _stated(group: InventoryGroup) -> tuple[object, ...]:
    return tuple(getattr(group, field) for field in NIC_FIELDS)


def _ram_errors(group: InventoryGroup, at: Path) -> list[tuple[Path, str]]:
    """(field path, message) for a group's stated RAM: on a custom server, or past the platform's most (newuser43 item 2).

    The schema takes a positive whole number of GiB; a catalog platform that records its most RAM takes no more.
    """
    if group.ram_gib is None:
        return []
    if group.custom is not None:
        return [((*at, "ram_gib"), "a custom server states its RAM under 'custom.ram_gib'")]
    platform = catalog.platforms().get(group.platform or "")
    if platform is not None and platform.ram_max_gib and group.ram_gib > platform.ram_max_gib:
        return [
            (
                (*at, "ram_gib"),
                f"{group.ram_gib:,} GiB RAM: {platform.id} servers take at most {platform.ram_max_gib:,.0f} GiB (the "
                "catalog's most; describe the server under custom: where yours has more)",
            )
        ]
    return []


def _group_errors(group: InventoryGroup, at: Path) -> list[tuple[Path, str]]:
    """(field path, message) for each problem of one group's stated NICs (the rule a custom server's follow too)."""
    given = [field for field in NIC_FIELDS if getattr(group, field) is not None]
    if group.custom is not None:
        return [((*at, field), f"a custom server names its NICs under 'custom.{field}'") for field in given]
    platform = catalog.platforms().get(group.platform or "")
    room = None if platform is None else FabricRoom(platform.id, most_fabric_nics(platform), platform.kind == "workstation")
    return nic_pair_errors(at, group, room, frontend_default=True)


def owned_nic_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every problem of the NICs owned groups state, located in the document."""
    found: list[tuple[Path, str]] = []
    kinds: dict[tuple[str, str], tuple[int, tuple[object, ...]]] = {}
    rams: dict[tuple[str, str], tuple[int, int | None]] = {}
    for j, group in enumerate(wl.hardware.inventory):
        at: Path = ("hardware", "inventory", j)
        found += _group_errors(group, at) + _ram_errors(group, at)
        platform = catalog.platforms().get(group.platform or "")
        if group.custom is not None or platform is None:
            continue
        kind = (platform.id, group.gpu or platform.gpu_ids[0])
        first, stated = kinds.setdefault(kind, (j, _stated(group)))
        if stated != _stated(group):
            field = next((f for f in NIC_FIELDS if getattr(group, f) is not None), None)
            found.append(
                (
                    (*at, field) if field else at,
                    f"hardware.inventory[{first}] owns {kind[0]} servers with {kind[1]} too and states their NICs "
                    "otherwise: the plan builds one server kind one way, so give both groups the same NIC fields",
                )
            )
        first_ram, ram = rams.setdefault(kind, (j, group.ram_gib))
        if ram != group.ram_gib:
            found.append(
                (
                    (*at, "ram_gib") if group.ram_gib is not None else at,
                    f"hardware.inventory[{first_ram}] owns {kind[0]} servers with {kind[1]} too and states their RAM "
                    "otherwise: the plan builds one server kind one way, so give both groups the same ram_gib (or "
                    "describe one under custom:)",
                )
            )
    return [InputError(message, doc.locate(path)) for path, message in found]
