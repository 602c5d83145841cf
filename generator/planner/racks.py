"""Racks across the whole fleet: every pool's servers packed together by power and rack units.

First-fit decreasing over nodes (largest power first, then height, pools holding owned servers, pool name): a node goes
into the first rack with room for its power and height, and, where the workload gives the rack's circuits, whose
circuits carry it with its PSUs plugged in (:mod:`generator.sizing.psu_feeds`). Cloud plans have no racks.
"""

from __future__ import annotations

import re

from generator.planner.heat import heat_btu_per_h
from generator.planner.nodes import psu_count
from generator.planner.plan import Finding, NodeSpec, Plan, Pool, RackPool, RackSpec, sorted_findings
from generator.sizing.electrical import whole_watts
from generator.sizing.psu_feeds import FeedLoads, Feeds, carried, no_load, with_server
from generator.workload.models import Hardware

#: Rack units of a standard 42U rack.
RACK_UNITS = 42
#: Rack units held back in every rack for what is not a GPU server (``hardware.rack_units_reserved`` overrides it):
#: two 1U management top-of-rack switches, as NVIDIA equips a GPU rack ("2x TOR Switches for management" per rack,
#: https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html; "2 SN2201 OOB switches" in the GB300 NVL72 rack,
#: https://docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/components.html; the SN2201 is
#: a 1U switch of NVIDIA's SN2000 series, https://nvdam.widen.net/s/llbvwv5rfx/br-sn2000-series). PDUs mounted in
#: rack units, or GPU-fabric leaf switches kept in the server racks rather than in network racks, need more.
RACK_UNITS_RESERVED = 2
#: Rack power above which air cooling stops being enough: operators start needing liquid (rear-door
#: heat exchangers or direct-to-chip) as racks approach 30 kW (Chatsworth Products, "When do you need
#: liquid cooling for AI infrastructure?", 2026:
#: https://www.chatsworth.com/en-us/resources/blogs/2026/when-do-you-need-liquid-cooling-for-ai-infrastructure/;
#: "works well up to roughly 30 kilowatts per rack": https://aiofthecoast.dcxps.com/p/warning-the-cooling-threshold-your).
AIR_COOLED_RACK_LIMIT_KW = 30.0
#: Height assumed for a server whose record gives no published height (a 4U GPU server; workstations are
#: towers on a shelf): an assumption, which the plan states for every pool it applies to.
DEFAULT_NODE_RACK_UNITS = 4


class Rack:
    """One rack: its power, height used and the nodes of each pool in it (filled in as servers are placed)."""

    __slots__ = ("air_power_w", "feed_loads", "liquid", "pools", "power_w", "units")

    def __init__(self, feeds: Feeds | None = None) -> None:
        self.power_w = 0
        self.units = 0
        self.liquid = False
        #: Power of the rack's air-cooled servers: what the room's air must remove (liquid-cooled servers
        #: reject most of their heat to their coolant loop).
        self.air_power_w = 0
        self.pools: dict[str, int] = {}
        #: What its servers' PSUs put on each outlet of its circuits, where the workload gives them.
        self.feed_loads: FeedLoads | None = None if feeds is None else no_load(feeds)


def node_units(pool: Pool) -> int:
    """Rack units one node of the pool takes (:func:`node_height`)."""
    return node_height(pool.node)


def node_height(node: NodeSpec) -> int:
    """Rack units one node takes (:func:`system_units` of its platform's kind and height)."""
    return system_units(node.kind, node.rack_units)


def system_units(kind: str, rack_units: int | None) -> int:
    """Rack units one system of ``kind`` with a published height of ``rack_units`` (None: unpublished) takes.

    Its published height; a whole rack for a rack-scale system (the system is the rack: NVIDIA DGX
    GB200 user guide, https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html); else the
    assumed height, which the plan states (:func:`assumed_height_findings`).
    """
    if kind == "rack-scale":
        return RACK_UNITS
    return rack_units or DEFAULT_NODE_RACK_UNITS


def usable_units(reserved_units: int | None = None) -> int:
    """Rack units of a 42U rack left for servers once ``reserved_units`` (default :data:`RACK_UNITS_RESERVED`) are kept."""
    return RACK_UNITS - (RACK_UNITS_RESERVED if reserved_units is None else reserved_units)


def taller_than_space(kind: str, rack_units: int | None, reserved_units: int | None = None) -> int | None:
    """The height of a system that does not fit a rack once ``reserved_units`` are kept free, or None when it fits.

    A rack-scale system fills a rack alone with its own switches and is not measured against it.
    """
    units = system_units(kind, rack_units)
    return None if kind == "rack-scale" or units <= usable_units(reserved_units) else units


def height_blocked(node: NodeSpec, reserved_units: int | None = None) -> str | None:
    """Why one node cannot go in a rack once ``reserved_units`` are kept free, or None when it fits."""
    units = taller_than_space(node.kind, node.rack_units, reserved_units)
    if units is None:
        return None
    usable = usable_units(reserved_units)
    return (
        f"a {units}U {node.platform_id} is taller than the {usable}U a {RACK_UNITS}U rack leaves with "
        f"{RACK_UNITS - usable}U reserved"
    )


def too_tall(pools: list[Pool], reserved_units: int | None = None) -> str | None:
    """Why a pool's node cannot go in a rack once ``reserved_units`` are kept free, or None when every node fits.

    The search drops such layouts (:func:`height_blocked`); this holds servers placed without it (owned ones). A pool
    whose nodes go in no rack of the plan (:func:`racked_nodes`: rented from a provider) is not held (fuzz33 item 6).
    """
    usable = usable_units(reserved_units)
    for pool in (p for p in pools if racked_nodes(p)):
        units = taller_than_space(pool.node.kind, pool.node.rack_units, reserved_units)
        if units is not None:
            return (
                f"{RACK_UNITS - usable}U reserved leaves {usable}U per {RACK_UNITS}U rack, but pool {pool.name}'s "
                f"{pool.node.platform_id} is {units}U tall: reserve at most {RACK_UNITS - units}U"
            )
    return None


def racked_nodes(pool: Pool) -> int:
    """The nodes of a bare-metal pool that stand in colocation racks: all but the workstations already owned.

    An owned workstation stays at home or in the office, where its costs place it (``tco.in_colocation``): it is
    packed into no rack (newuser25 item 10: an office workstation counted "in 1 rack(s)"). A server rented from a
    provider (``Pool.rented``) stands in the provider's datacentre: in no rack of the plan (newuser39 item 3).
    """
    if pool.rented:
        return 0
    return pool.nodes - pool.owned_nodes if pool.node.kind == "workstation" else pool.nodes


def pack_racks(
    pools: list[Pool],
    rack_power_kw: float,
    reserved_units: int | None = None,
    feeds: Feeds | None = None,
    hardware: Hardware | None = None,
) -> list[Rack]:
    """Pack every racked node (:func:`racked_nodes`) of the bare-metal pools into racks of ``rack_power_kw``.

    The budget is compared in whole watts (:func:`whole_watts`: 2.002 kW holds two 1,001 W nodes, fuzz30 item 3).

    A rack holds 42U less ``reserved_units``.

    ``reserved_units`` (default :data:`RACK_UNITS_RESERVED`) stay free in every rack for its switches; a rack-scale
    system brings its own and fills a rack alone. With ``feeds`` (the rack's circuits), a node goes into a rack only
    where its PSUs, plugged in beside those already there, leave every line within its continuous limit (``hardware``:
    the workload's, whose custom servers may state their PSUs).
    """
    budget_w = whole_watts(rack_power_kw)
    usable = usable_units(reserved_units)
    # each pool's node once with its racked nodes (alike: its height and PSUs are the pool's), in the order a stable
    # sort of the nodes one by one puts them (a pool's nodes together); among nodes of one power and height, a pool
    # holding owned servers first: they stand in their racks already, and a bought pool whose name sorts first
    # (newuser98: a chat_h200 pool added beside the owned DGX H100's embed_... pool, 10.2 kW and 8U alike) would
    # otherwise take their racks and move them, de-racked and re-cabled, for a change that only adds servers
    owned = {p.name: p.owned_nodes > 0 for p in pools}
    runs = sorted(
        (((p.node.power_w, node_units(p), p.name, p.node.cooling == "liquid", psu_count(p.node, hardware)), racked_nodes(p))
         for p in pools),
        key=lambda run: (-run[0][0], -run[0][1], not owned[run[0][2]], run[0][2]),
    )  # fmt: skip
    racks: list[Rack] = []
    # by a node's (power, height): the first rack that may hold one. A rack's power and height only grow, so a rack
    # too full for a node of that power and height stays so: the scan for the next such node starts past those
    # before it (the same rack is found as scanning from the first; a 16,777,216 USD capacity plan packed ~600 nodes
    # into every rack before each, 2,964 times)
    first_with_room: dict[tuple[int, int], int] = {}
    for (power, units, name, liquid, psus), racked in runs:
        count = racked
        while count > 0:
            target, loads = None, None
            start = first_with_room.get((power, units), 0)
            skipped = True  # every rack from ``start`` so far too full for this power and height
            for at in range(start, len(racks)):
                rack = racks[at]
                if rack.power_w + power > budget_w or rack.units + units > usable:
                    if skipped:
                        start = at + 1
                    continue
                skipped = False
                loads = _plugged_in(rack, feeds, power, psus)
                if loads is None or (feeds is not None and carried(feeds, loads)):
                    target = rack
                    break
            first_with_room[power, units] = start
            # a node over a rack's budget, circuits or height is refused earlier (a rack-scale system is its rack)
            if target is None:
                target = Rack(feeds)
                racks.append(target)
                loads = _plugged_in(target, feeds, power, psus)
            # the run's next nodes go where this one went while it has room (the racks before it have none for them):
            # without circuits, as many at once as its power and height hold (one where it holds none: a new rack)
            taken = 1 if feeds is not None else max(1, min(count, _room_for(target, power, units, budget_w, usable)))
            target.feed_loads = loads
            target.power_w += power * taken
            target.units += units * taken
            target.liquid = target.liquid or liquid
            target.air_power_w += 0 if liquid else power * taken
            target.pools[name] = target.pools.get(name, 0) + taken
            count -= taken
    return racks


def _room_for(rack: Rack, power_w: int, units: int, budget_w: int, usable: int) -> int:
    """How many more nodes of ``power_w`` and ``units`` go in ``rack`` within ``budget_w`` and ``usable``.

    The count the node-by-node checks (``power_w + power <= budget``, ``units + units <= usable``) let in, in whole
    numbers; 1 (the node-by-node placing) where a figure is not a positive whole number.
    """
    if any(type(n) is not int for n in (power_w, units, rack.power_w, rack.units)) or power_w <= 0 or units <= 0:
        return 1
    return max(0, min((budget_w - rack.power_w) // power_w, (usable - rack.units) // units))


def _plugged_in(rack: Rack, feeds: Feeds | None, power_w: int, psus: int | None) -> FeedLoads | None:
    """``rack``'s outlets with a node of ``power_w`` and ``psus`` PSUs plugged in; None where no circuits are given."""
    if feeds is None or rack.feed_loads is None:
        return None
    return with_server(feeds, rack.feed_loads, power_w, psus)


def rack_id(index: int, count: int) -> str:
    """The name of the fleet's rack ``index`` (from 0) of ``count``: ``rack-01``, numbered in packing order."""
    return f"rack-{index + 1:0{max(2, len(str(count)))}d}"


#: The findings whose message opens with racks' ids (:func:`rack_findings`).
_NAMING_A_RACK = ("rack-exceeds-air-cooling", "liquid-cooled-rack")


def racks_named_for_workload(plan: Plan) -> Plan:
    """``plan`` with its racks named after its workload (``<workload>-rack-01``), for a tree of several workloads.

    Each workload file is planned as a fleet of its own, its servers packed into racks of its own; rendered together,
    every workload's first rack was ``rack-01`` (newuser33 item 1: ten workloads' hosts all carried ``specgen_rack:
    rack-01``, 41.5 kW in what read as one 40 kW rack). The findings that name a rack name it so too.
    """
    if not plan.racks:
        return plan
    named = {rack.id: f"{plan.workload}-{rack.id}" for rack in plan.racks}

    def renamed(f: Finding) -> Finding:
        if f.code == "rack-power-servers-only":  # names the racks packed to their full power mid-sentence
            return f._replace(message=re.sub(r"rack-[0-9]+", lambda m: named.get(m.group(0), m.group(0)), f.message))
        if f.code not in _NAMING_A_RACK:
            return f
        head, verb, rest = f.message.partition(" draw" if f.code == "rack-exceeds-air-cooling" else " hold")
        racks = re.sub(r"rack-[0-9]+", lambda m: named.get(m.group(0), m.group(0)), head)
        return f._replace(message=f"{racks}{verb}{rest}")

    return plan._replace(
        racks=tuple(rack._replace(id=named[rack.id]) for rack in plan.racks),
        findings=sorted_findings([renamed(f) for f in plan.findings]),
    )


def racked_host_names(pool: Pool) -> tuple[str, ...]:
    """The named hosts of ``pool`` that stand in racks, in the order its racked nodes are placed.

    The owned servers come first (their names in ``owned_hosts``, a rack-scale system's trays in system order); an
    owned workstation stays in the office (:func:`racked_nodes`), so its names are in no rack.
    """
    return () if pool.node.kind == "workstation" else pool.owned_hosts


def rack_specs(
    racks: list[Rack], pools: list[Pool], rack_power_kw: float, reserved_units: int | None = None
) -> tuple[RackSpec, ...]:
    """The racks :func:`pack_racks` filled, as the plan carries them: what each holds, its units, power and heat.

    A pool's named hosts (:func:`racked_host_names`) go to its first racked nodes, in rack order; its pools are
    listed by name. Power and heat are the nodes' own planned figures, the basis of the fleet's totals. A rack-scale
    system's rack is all its own (:func:`system_units`): its usable units are the whole 42U.
    """
    by_name = {p.name: p for p in pools}
    names = {p.name: list(racked_host_names(p)) for p in pools}
    out = []
    for index, rack in enumerate(racks):
        shares = []
        for name in sorted(rack.pools):
            count, node = rack.pools[name], by_name[name].node
            taken = names[name][: count * node.hosts]
            del names[name][: count * node.hosts]
            shares.append(RackPool(pool=name, nodes=count, hosts=tuple(taken)))
        liquid = rack.liquid
        whole = any(by_name[s.pool].node.kind == "rack-scale" for s in shares)  # the system is the rack, switches and all
        out.append(
            RackSpec(
                id=rack_id(index, len(racks)),
                pools=tuple(shares),
                nodes=sum(rack.pools.values()),
                units=rack.units,
                usable_units=RACK_UNITS if whole else usable_units(reserved_units),
                power_w=rack.power_w,
                heat_btu_per_h=heat_btu_per_h(rack.power_w),
                rack_power_kw=float(rack_power_kw),
                cooling=("air+liquid" if rack.air_power_w else "liquid") if liquid else "air",
            )
        )
    return tuple(out)


def assumed_height_findings(pools: list[Pool]) -> list[Finding]:
    """One note per pool packed at the assumed height because its platform publishes none."""
    return [
        Finding(
            "info",
            "rack-units-assumed",
            f"{p.name}: {p.node.platform_id} has no published height; packed as {DEFAULT_NODE_RACK_UNITS}U "
            f"({'a tower on a rack shelf' if p.node.kind == 'workstation' else 'a typical GPU server height'})",
            "hardware",
        )
        for p in pools
        if p.node.rack_units is None and p.node.kind != "rack-scale" and racked_nodes(p)
    ]
