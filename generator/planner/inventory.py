"""Servers the team already owns (``hardware.inventory``): what they are and how many are still free.

An owned server is a node of its platform (a catalog record, or a custom server described in the
workload) with the GPUs its group states (``gpus_per_server``), else the platform's largest GPU count. The planner places
deployments on free owned servers first and buys only the shortfall; an owned server costs its
running costs (energy, colocation), not its purchase price.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from generator.catalog.records import GpuSpec, PlatformSpec
from generator.named_tuple import NamedTuple
from generator.planner.custom import inventory_server
from generator.planner.gpu_power_limit import limited_gpu
from generator.workload.models import InventoryGroup, Workload

if TYPE_CHECKING:
    from generator.planner.plan import Candidate
    from generator.sizing.constants import Constants

#: (platform id, GPU id, GPUs per server) of a group of identical servers.
ServerKey = tuple[str, str, int]


class OwnedGroup(NamedTuple):
    """Identical owned servers."""

    platform: PlatformSpec
    gpu: GpuSpec
    gpus_per_node: int
    count: int  # type: ignore[assignment]  # the field shadows tuple.count
    hosts: tuple[str, ...]

    @property
    def key(self) -> ServerKey:
        """The server kind these are."""
        return (self.platform.id, self.gpu.id, self.gpus_per_node)


#: The last inventory :func:`owned_groups` read and its kinds (hostile93: every fleet ranked asked again, and each time
#: every owned kind's platform record was built anew: 100 custom kinds ran ``plan`` past 5 minutes). Kept by
#: identity: the inventory is a tuple of tuples, read only, held here so that its id is not reused.
#: Beside them, each kind's bare node power as :func:`owned_idle_usd` works it out, by the constants it was worked with.
_LAST_OWNED: list[tuple[tuple[object, ...], dict[ServerKey, OwnedGroup], dict[ServerKey, tuple[object, float]]]] = []


def owned_groups(wl: Workload) -> list[OwnedGroup]:
    """The inventory as server kinds (groups of the same kind merged, host names in file order)."""
    if wl.hardware.provider != "baremetal":
        return []
    return list(_owned(wl.hardware.inventory)[0].values())


def _owned(
    inventory: tuple[InventoryGroup, ...],
) -> tuple[dict[ServerKey, OwnedGroup], dict[ServerKey, tuple[object, float]]]:
    """The inventory's kinds by key (in key order) and its cache of bare node power, built once an inventory."""
    if not _LAST_OWNED or _LAST_OWNED[0][0] is not inventory:
        _LAST_OWNED[:] = [(inventory, _owned_groups(inventory), {})]
    return _LAST_OWNED[0][1], _LAST_OWNED[0][2]


def _owned_groups(inventory: Iterable[InventoryGroup]) -> dict[ServerKey, OwnedGroup]:
    """:func:`owned_groups` of one inventory, built, by key in key order."""
    merged: dict[ServerKey, OwnedGroup] = {}
    for group in inventory:
        platform, gpu = inventory_server(group)
        gpus = group.gpus_per_server or max(platform.gpu_counts)
        owned = OwnedGroup(platform, gpu, gpus, group.count, tuple(h.name for h in group.hosts))
        if owned.key in merged:
            before = merged[owned.key]
            owned = OwnedGroup(platform, gpu, owned.gpus_per_node, before.count + owned.count, before.hosts + owned.hosts)
        merged[owned.key] = owned
    return {k: merged[k] for k in sorted(merged)}


def owned_idle_usd(wl: Workload, key: ServerKey, free: int, consts: Callable[[], Constants]) -> float | None:
    """What ``free`` owned servers of kind ``key`` left free cost a month (:func:`~generator.planner.tco.idle_owned_usd`).

    A server's colocation is its node's power as built bare (its platform's RAM, no data drives or fabric NICs added): a
    published maximum where the platform has one, else its parts summed. ``consts``: the workload's constants, asked
    for only where a colocation is worked out. None where the kind is not owned or costs nothing free.
    """
    from generator.planner.nodes import node_power_w
    from generator.planner.tco import idle_owned_usd, in_colocation, owned_colocation_usd

    if key[0] in wl.prices:
        return idle_owned_usd(wl, key[0], free)
    kinds, powers = _owned(wl.hardware.inventory) if wl.hardware.provider == "baremetal" else ({}, {})
    group = kinds.get(key)
    if group is None:
        return None
    racked = in_colocation(group.platform, owned=True)
    if not racked:
        return idle_owned_usd(wl, key[0], free)
    c = consts()
    known = powers.get(key)
    if known is not None and known[0] is c:
        watts = known[1]
    else:
        platform = group.platform
        gpu = limited_gpu(group.gpu, wl.hardware.gpu_power_limit_w(group.gpu.id))  # drawn at its limit (newuser115)
        watts = node_power_w(platform, gpu, group.gpus_per_node, int(platform.ram_gib or 0), 0, (), c).watts
        powers[key] = (c, watts)
    return idle_owned_usd(wl, key[0], free, owned_colocation_usd(watts, racked, c))


def free_cost_clause(wl: Workload, key: ServerKey, idle: float | None) -> str:
    """What owned servers of kind ``key`` left free cost a month (``idle``, :func:`owned_idle_usd`).

    The plan's monthly figure leaves it out: their ``prices:`` rate, else their colocation; "" where they cost nothing.
    """
    if idle is None:
        return ""
    if key[0] in wl.prices:  # the fleets were compared with it (idle_owned_usd_per_month)
        return (
            f": at prices: {key[0]} ${wl.prices[key[0]]:,.2f}/node-hour the free ones cost ${idle:,.0f} a month that the "
            "plan's monthly figure leaves out (an all-in rate of servers you own is paid whether they run or not)"
        )
    # fix89: their colocation, paid whether they run or not
    return (
        f": the free ones' colocation, ${idle:,.0f} a month, is paid whether they run or not and the plan's monthly "
        "figure leaves it out"
    )


def free_servers(wl: Workload) -> dict[ServerKey, int]:
    """Owned servers by kind, all free before any deployment is placed."""
    return {g.key: g.count for g in owned_groups(wl)}


def take_owned(free: dict[ServerKey, int], candidates: Iterable[Candidate]) -> None:
    """Mark the owned servers a chosen layout (each part of a split) runs on as no longer free."""
    for c in candidates:
        if c.owned_nodes:
            key = (c.platform_id, c.gpu_id, c.gpus_per_node)
            free[key] = free.get(key, 0) - c.owned_nodes
