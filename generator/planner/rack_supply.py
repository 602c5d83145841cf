"""The circuits each rack is fed with (``hardware.rack_circuits``): what a rack may draw, each rack's load on them.

The physics is :mod:`generator.sizing.electrical`'s and :mod:`generator.sizing.psu_feeds`'s; this turns the
workload's circuits into the plan's records (``Plan.rack_supply``, ``RackSpec.circuit_load``), says which node no rack
of them carries (its PSUs on too few outlets), and which servers a lost feed stops: with 2N feeds a server's PSUs are
split over the A and B sides, and on one side only its half of them powers it.
"""

from __future__ import annotations

import math

from generator import catalog
from generator.planner.custom import custom_platforms
from generator.planner.nodes import believed_psu_fields, psu_count, wall_to_dc_w
from generator.planner.plan import Finding, NodeSpec, Pool, RackCircuitLoad, RackSpec, RackSupply
from generator.planner.racks import Rack, racked_nodes
from generator.sizing.constants import Constants
from generator.sizing.electrical import (
    HIGHEST_PSU_INPUT_V,
    SPLIT_FEEDS,
    apparent_power_va,
    continuous_current_a,
    line_to_neutral_outlets,
    outlet_voltage_v,
    serving_circuits,
    usable_apparent_va,
    usable_power_w,
)
from generator.sizing.psu_feeds import (
    FeedLoads,
    Feeds,
    carried,
    no_load,
    side_split,
    with_server,
    worst_carrying_a,
    worst_failover_a,
    worst_shared_a,
)
from generator.workload.models import Hardware, RackCircuits

#: Where the default continuous-load fraction and power factor come from, as the plan states them.
CONTINUOUS_LOAD_RULE = (
    "the default: NEC 210.19(A)(1) and 210.20(A) hold a North American continuous load to 80% of the breaker; IEC "
    "60364 sets no such rule, and a contract allowing the full rating (Equinix's in EMEA: "
    "https://docs.equinix.com/en-us/Content/Colocation-Products/Power/colo-power.htm) sets continuous_load_fraction 1.0"
)
POWER_FACTOR_SOURCE = (
    "the default: the floor 80 PLUS Platinum sets for server PSUs "
    "(https://ipfs.io/ipfs/QmXoypizjW3WknFiJnKLwHCnL72vedxjQkDDP1mXWo6uco/wiki/80_Plus.html), below what PSUs at load "
    "run; a PDU's measured figure goes in power_factor"
)
#: Line-to-neutral voltages of the common wye supplies and their line-to-line voltage (120/208, 127/220, 230/400,
#: 277/480 V): given for a three-phase circuit, they are likely line-to-neutral, which the figures take line-to-line.
_LINE_TO_NEUTRAL_V = {120.0: 208, 127.0: 220, 230.0: 400, 277.0: 480}
#: The workload path of the circuits, as findings name it.
FIELD = "hardware.rack_circuits"


def rack_supply(circuits: RackCircuits, fraction_given: bool, factor_given: bool) -> RackSupply:
    """The plan's record of ``circuits``: what one circuit and a rack may carry (``usable_kw``: what racks are packed to).

    ``usable_kw`` is the loader's ``hardware.rack_power_kw`` (whole watts, rounded down); ``*_given``: whether the
    workload gives the continuous-load fraction and the power factor (else their basis is the default's source).
    """
    c = circuits
    limit_a = continuous_current_a(c.breaker_a, c.continuous_load_fraction)
    serving = serving_circuits(c.circuits, c.redundancy)
    usable_va = usable_apparent_va(c.voltage_v, c.phases, c.breaker_a, c.circuits, c.redundancy, c.continuous_load_fraction)
    return RackSupply(
        voltage_v=c.voltage_v,
        phases=c.phases,
        breaker_a=c.breaker_a,
        circuits=c.circuits,
        redundancy=c.redundancy,
        serving_circuits=serving,
        continuous_load_fraction=c.continuous_load_fraction,
        continuous_load_basis=f"as given ({FIELD}.continuous_load_fraction)" if fraction_given else CONTINUOUS_LOAD_RULE,
        power_factor=c.power_factor,
        power_factor_basis=f"as given ({FIELD}.power_factor)" if factor_given else POWER_FACTOR_SOURCE,
        continuous_limit_a=round(limit_a, 3),
        outlet_connection=(
            "single-phase"
            if c.phases == 1
            else "line-to-neutral"
            if line_to_neutral_outlets(c.voltage_v, c.phases)
            else "line-to-line"
        ),
        outlet_voltage_v=round(outlet_voltage_v(c.voltage_v, c.phases), 1),
        circuit_kva=round(apparent_power_va(c.voltage_v, c.phases, c.breaker_a) / 1000, 3),
        circuit_usable_kva=_whole_va(apparent_power_va(c.voltage_v, c.phases, limit_a)) / 1000,
        usable_kva=_whole_va(usable_va) / 1000,
        usable_kw=usable_power_w(
            c.voltage_v, c.phases, c.breaker_a, c.circuits, c.redundancy, c.continuous_load_fraction, c.power_factor
        )
        / 1000,
    )


def _whole_va(va: float) -> int:
    """Volt-amperes a rack may draw in whole VA, rounded down as its watts are.

    fuzz30 L4: rounded to the nearest VA, at power factor 1 the kW read 1 W under the kVA.
    """
    return int(va + 1e-6)


def rack_feeds(circuits: RackCircuits) -> Feeds:
    """The circuits of one rack as its servers' PSUs plug into them (:class:`generator.sizing.psu_feeds.Feeds`)."""
    split = circuits.redundancy in SPLIT_FEEDS
    return Feeds(
        voltage_v=circuits.voltage_v,
        phases=circuits.phases,
        sides=2 if split else 1,
        circuits_per_side=serving_circuits(circuits.circuits, circuits.redundancy),
        limit_a=continuous_current_a(circuits.breaker_a, circuits.continuous_load_fraction),
        power_factor=circuits.power_factor,
    )


def circuit_load(supply: RackSupply, feeds: Feeds, loads: FeedLoads, power_w: int) -> RackCircuitLoad:
    """What a rack drawing ``power_w`` through PSUs plugged in as ``loads`` puts on its circuits.

    Its kVA, and the current on the most loaded line of any circuit, shared and at failover (2N: the worse side left
    alone).
    """
    shared = worst_shared_a(feeds, loads)
    failover = worst_failover_a(feeds, loads)
    return RackCircuitLoad(
        apparent_power_kva=round(power_w / supply.power_factor / 1000, 3),
        phase_current_a=round(shared, 2),
        breaker_percent=round(100 * shared / supply.breaker_a, 1),
        failover_phase_current_a=None if failover is None else round(failover, 2),
        failover_breaker_percent=None if failover is None else round(100 * failover / supply.breaker_a, 1),
    )


def with_circuit_loads(
    specs: tuple[RackSpec, ...], racks: list[Rack], supply: RackSupply | None, feeds: Feeds | None
) -> tuple[RackSpec, ...]:
    """``specs`` each with its :func:`circuit_load` (from the rack packed into it); as they are without circuits."""
    if supply is None or feeds is None:
        return specs
    return tuple(
        spec._replace(circuit_load=circuit_load(supply, feeds, rack.feed_loads or no_load(feeds), spec.power_w))
        for spec, rack in zip(specs, racks, strict=True)
    )


def _psus_text(count: int, feeds: Feeds, redundancy: str) -> str:
    """How a node's ``count`` PSUs stand on the circuits, as a refusal says it."""
    plural = "" if count == 1 else "s"
    if feeds.sides == 1:
        return f"its {count} PSU{plural} on {min(count, feeds.outlets_per_side)} outlet(s)"
    if count == 1:
        return f"its one PSU on one side of the {redundancy} feeds"
    larger, smaller = side_split(count, 2)[0]
    return f"its {count} PSUs split {larger} + {smaller} over the A and B sides, with a side lost {smaller} carrying it alone"


def node_rack_problem(hardware: Hardware, node: NodeSpec) -> str | None:
    """Why no rack of ``hardware``'s can hold ``node`` alone, or None.

    Its power above the rack's (in whole watts), or, with circuits, its PSUs putting more than a line's continuous limit
    on one.
    The racks are packed so that no line exceeds it (:func:`generator.planner.racks.pack_racks`); a node no empty rack
    carries is refused here, before any layout holds it (fuzz30 item 1: a 2-PSU server put 11 A on a 10 A breaker).
    """
    field = f"hardware.{hardware.rack_power_field}"
    if node.power_w > hardware.rack_power_w:
        return f"a {node.power_w:,} W node exceeds the {hardware.rack_power_kw:g} kW rack power ({field})"
    circuits = hardware.rack_circuits
    if circuits is None:
        return None
    feeds = rack_feeds(circuits)
    psus = psu_count(node, hardware)
    loads = with_server(feeds, no_load(feeds), node.power_w, psus)
    if carried(feeds, loads):
        return None
    amps = worst_carrying_a(feeds, loads)
    placed = "spread evenly over its outlets" if not psus else _psus_text(psus, feeds, circuits.redundancy)
    platform = catalog.platforms().get(node.platform_id)
    believed = "psu.count" in (platform.unsourced_fields if platform is not None else ())
    return (
        f"a {node.power_w:,} W node ({node.platform_id}, {placed}{'; psu.count believed, not sourced' if believed else ''}) "
        f"puts {amps:,.1f} A on one line of a {circuits.breaker_a:g} A circuit, above the {feeds.limit_a:g} A it carries "
        f"continuously ({field})"
    )


def feed_loss_findings(
    pools: list[Pool], supply: RackSupply, consts: Constants, hardware: Hardware | None = None
) -> list[Finding]:
    """One finding per racked pool whose server one side's PSUs cannot keep running (2N), or whose PSUs are unknown.

    A server's PSUs are split over the A and B sides (the larger half on one): losing a side leaves it the smaller
    half, ``count // 2``, which must deliver its DC load (its wall draw after the PSU loss, as ``psu_overload``
    compares). A single PSU stands on one side and goes down with it; fault-tolerant PSUs (Dell's FTR) cap the GPUs'
    power instead of shutting down. A chassis whose PSUs the catalog lacks (a custom server, most catalog platforms) is
    an info, with or without redundancy: its load is taken as spread evenly over the rack's outlets, and nothing checks
    one side's PSUs. ``hardware``: the workload's, whose custom servers may give their PSUs (newuser57 item 13).
    """
    two_sides = supply.redundancy in SPLIT_FEEDS
    custom = custom_platforms(hardware) if hardware is not None else {}
    custom_at = {g.custom.platform_id: k for k, g in enumerate(hardware.inventory if hardware else ()) if g.custom}
    out = []
    for pool in pools:
        if not racked_nodes(pool):
            continue
        node = pool.node
        platform = catalog.platforms().get(node.platform_id) or custom.get(node.platform_id)
        dc_w = wall_to_dc_w(node.power_w, consts)
        count = platform.psu_count if platform is not None else None
        rating = platform.psu_rating_w if platform is not None else None
        if platform is None or not count or (two_sides and not rating):
            lacks = "PSU rating" if count else ("PSU count and rating" if two_sides else "PSU count")
            said, at = f"{pool.name}: the catalog gives no {lacks} for {node.platform_id}", FIELD
            if (k := custom_at.get(node.platform_id)) is not None:  # the user's own server (review39 item 12)
                at = f"hardware.inventory[{k}].custom"
                missing = "psu_rating_w" if count else ("psu_count and psu_rating_w" if two_sides else "psu_count")
                said = f"{pool.name}: {at} gives no {missing} for {node.platform_id} (give them and its feeds are checked)"
            if platform is not None and "psu" in platform.unsourced_fields:  # newuser80 item 9: searched, not found
                said += " (the catalog marks its PSUs unsourced: no source for their count and rating was found)"
            if not count:
                said += (
                    f": its {node.power_w:,} W are taken as spread evenly over every circuit and phase of its rack (the "
                    "currents planned)"
                )
            if two_sides:
                said += (
                    f"{', and' if not count else ', so'} the feed-loss check (psu-feed-loss) was skipped for it, the "
                    f"check that it keeps running on one side of the {supply.redundancy} feeds: check that its PSUs are "
                    "split over the A and B sides"
                    f"{' and spread so' if not count else ''}, and that one side's deliver its {dc_w:,} W DC load "
                    f"({node.power_w:,} W at the wall)"
                )
            else:
                said += "; check that its PSUs spread so"
            out.append(Finding("info", "psu-feeds-unknown", said, at))
            continue
        if not two_sides or not rating:
            continue
        # the watts a side delivers read the PSUs' count and rating (fuzz30 L1); the vendor's N+M is read apart below
        fields = [f for f in believed_psu_fields(platform) if f != "psu.redundant"]
        believed = f"; {', '.join(fields)} believed, not sourced" if fields else ""
        if count == 1:
            out.append(
                Finding(
                    "warning",
                    "psu-single-feed",
                    f"{pool.name}: {node.platform_id} has one PSU, so it stands on one side of the {supply.redundancy} feeds and "
                    "goes "
                    "down with that side: the other side keeps the rack's circuits up, not this server; feed it "
                    f"through an automatic transfer switch from both sides, or accept losing it with a feed{believed}",
                    FIELD,
                )
            )
            continue
        one_side = count // 2
        capacity_w = one_side * rating
        split = (
            f"{node.platform_id}'s {count} x {rating:,.0f} W PSUs split {count - one_side} + {one_side} over the A and B sides"
        )
        running = count - (platform.psu_redundant or 0)  # the vendor's N of N+M: the PSUs that must run
        if dc_w <= capacity_w and platform.psu_redundant and one_side < running and not platform.psu_fault_tolerant:
            # newuser57 item 8: a DGX H100 (4+2) on a 3 + 3 split passed on 3 x 3,300 W against its 9,588 W DC load
            rated = "psu.redundant believed, not sourced" if "psu.redundant" in platform.unsourced_fields else "the vendor's"
            out.append(
                Finding(
                    "warning",
                    "psu-feed-loss",
                    f"{pool.name}: {split}; it is rated {running}+{platform.psu_redundant} ({rated}: {running} of its PSUs "
                    f"must run), so one side's {one_side} are fewer than it needs, though their {capacity_w:,.0f} W cover "
                    f"its {dc_w:,} W DC load: losing a feed may take it down or cap its power although the rack's circuits "
                    f"carry it; check with the vendor how it runs on one side, or accept losing it with a feed{believed}",
                    FIELD,
                )
            )
            continue
        if dc_w <= capacity_w:
            continue
        short = (
            f"{pool.name}: {split}; one side's {one_side} x {rating:,.0f} W = {capacity_w:,.0f} W deliver less than its "
            f"{dc_w:,} W DC load ({node.power_w:,} W at the wall)"
        )
        wall_cap_w = int(capacity_w / consts.psu_efficiency)
        if platform.psu_fault_tolerant:
            out.append(
                Finding(
                    "warning",
                    "psu-feed-loss-capped",
                    f"{short}: losing a feed caps its GPUs' power (the vendor's power brake, fault-tolerant "
                    f"redundancy) and serving slows until the feed is back{believed}",
                    FIELD,
                )
            )
            continue
        out.append(
            Finding(
                "warning",
                "psu-feed-loss",
                f"{short}: losing a feed overloads them, and the server shuts down or throttles although the rack's "
                f"circuits carry it; cap the GPUs' power (nvidia-smi -pl) so it draws at most {wall_cap_w:,} W at the "
                f"wall, or accept losing it with a feed{believed}",
                FIELD,
            )
        )
    return out


def voltage_findings(supply: RackSupply) -> list[Finding]:
    """Notes on a voltage the figures may misread.

    A three-phase one that is a wye supply's line-to-neutral (taken line-to-line), and one whose outlets feed PSUs more
    than any server PSU takes (fuzz30 L2: single-phase 415 V).
    """
    out = []
    line_v = _LINE_TO_NEUTRAL_V.get(supply.voltage_v) if supply.phases == 3 else None
    if line_v is not None:
        out.append(
            Finding(
                "info",
                "rack-voltage-line-to-line",
                f"three-phase voltage_v {supply.voltage_v:g} V is taken line-to-line (a {supply.voltage_v:g} V delta "
                f"supply); where it is the line-to-neutral voltage of a {supply.voltage_v:g}/{line_v} V supply, give "
                f"{line_v}: its circuits then carry sqrt(3) times the power planned here",
                f"{FIELD}.voltage_v",
            )
        )
    outlet_v = outlet_voltage_v(supply.voltage_v, supply.phases)
    if round(outlet_v) > HIGHEST_PSU_INPUT_V:  # 480 V's 277.1 V line-to-neutral is the nominal 277 V
        fed = " line-to-neutral" if line_to_neutral_outlets(supply.voltage_v, supply.phases) else ""
        phase_v = supply.voltage_v / math.sqrt(3)
        fix = (
            f"where {supply.voltage_v:g} V is the line-to-line voltage of a three-phase supply, give phases: 3 (its PSUs "
            f"then get {phase_v:.0f} V line-to-neutral)"
            if supply.phases == 1 and phase_v <= HIGHEST_PSU_INPUT_V
            else "give the voltage of the circuits the rack's PDUs are fed with, after any transformer"
        )
        out.append(
            Finding(
                "warning",
                "rack-voltage-above-psus",
                f"{'three' if supply.phases == 3 else 'single'}-phase voltage_v {supply.voltage_v:g} V feeds each PSU "
                f"{outlet_v:.0f} V{fed}, more than the {HIGHEST_PSU_INPUT_V:g} V any server PSU takes (they are rated "
                f"100-127 V or 200-240 V, some 277 V): {fix}",
                f"{FIELD}.voltage_v",
            )
        )
    return out
