"""The circuits each rack is fed with (``hardware.rack_circuits``): what a rack may draw, each rack's load on them.

The physics is :mod:`generator.sizing.electrical`'s; this turns the workload's circuits into the plan's records
(``Plan.rack_supply``, ``RackSpec.circuit_load``) and says which servers a lost feed stops: with 2N feeds a server's
PSUs are split over the A and B sides, and on one side only its half of them powers it.
"""

from __future__ import annotations

from generator import catalog
from generator.planner.nodes import believed_psu_fields, wall_to_dc_w
from generator.planner.plan import Finding, Pool, RackCircuitLoad, RackSpec, RackSupply
from generator.planner.racks import racked_nodes
from generator.sizing.constants import Constants
from generator.sizing.electrical import (
    SPLIT_FEEDS,
    apparent_power_va,
    continuous_current_a,
    load_current_a,
    serving_circuits,
    usable_power_w,
)
from generator.workload.models import RackCircuits

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
    usable_va = apparent_power_va(c.voltage_v, c.phases, limit_a) * serving
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
        circuit_kva=round(apparent_power_va(c.voltage_v, c.phases, c.breaker_a) / 1000, 3),
        circuit_usable_kva=round(apparent_power_va(c.voltage_v, c.phases, limit_a) / 1000, 3),
        usable_kva=round(usable_va / 1000, 3),
        usable_kw=usable_power_w(
            c.voltage_v, c.phases, c.breaker_a, c.circuits, c.redundancy, c.continuous_load_fraction, c.power_factor
        )
        / 1000,
    )


def circuit_load(supply: RackSupply, power_w: int) -> RackCircuitLoad:
    """What a rack drawing ``power_w`` puts on its circuits: kVA, and the current on each phase, shared and at failover.

    Shared: every circuit carries an equal part. Failover (2N): one side's circuits carry the whole rack.
    """
    v, phases, pf = supply.voltage_v, supply.phases, supply.power_factor
    shared = load_current_a(power_w, pf, v, phases, supply.circuits)
    failover = load_current_a(power_w, pf, v, phases, supply.serving_circuits) if supply.redundancy in SPLIT_FEEDS else None
    return RackCircuitLoad(
        apparent_power_kva=round(power_w / pf / 1000, 3),
        phase_current_a=round(shared, 2),
        breaker_percent=round(100 * shared / supply.breaker_a, 1),
        failover_phase_current_a=None if failover is None else round(failover, 2),
        failover_breaker_percent=None if failover is None else round(100 * failover / supply.breaker_a, 1),
    )


def with_circuit_loads(racks: tuple[RackSpec, ...], supply: RackSupply | None) -> tuple[RackSpec, ...]:
    """``racks`` each with its :func:`circuit_load`; as they are where the workload gives no circuits."""
    if supply is None:
        return racks
    return tuple(rack._replace(circuit_load=circuit_load(supply, rack.power_w)) for rack in racks)


def feed_loss_findings(pools: list[Pool], supply: RackSupply, consts: Constants) -> list[Finding]:
    """With 2N feeds, one finding per racked pool whose server one side's PSUs cannot keep running, or cannot be checked.

    A server's PSUs are split over the A and B sides (the larger half on one): losing a side leaves it the smaller
    half, ``count // 2``, which must deliver its DC load (its wall draw after the PSU loss, as ``psu_overload``
    compares). A single PSU stands on one side and goes down with it; fault-tolerant PSUs (Dell's FTR) cap the GPUs'
    power instead of shutting down. A chassis whose PSUs the catalog lacks (a custom server, most catalog platforms) is
    an info: nothing checks it.
    """
    if supply.redundancy not in SPLIT_FEEDS:
        return []
    out = []
    for pool in pools:
        if not racked_nodes(pool):
            continue
        node = pool.node
        platform = catalog.platforms().get(node.platform_id)
        dc_w = wall_to_dc_w(node.power_w, consts)
        count = platform.psu_count if platform is not None else None
        rating = platform.psu_rating_w if platform is not None else None
        if platform is None or not count or not rating:
            out.append(
                Finding(
                    "info",
                    "psu-feeds-unknown",
                    f"{pool.name}: the catalog gives no PSU count and rating for {node.platform_id}, so nothing checks "
                    f"that it keeps running on one side of the {supply.redundancy} feeds: check that its PSUs are split "
                    f"over the A and B sides and that one side's deliver its {dc_w:,} W DC load ({node.power_w:,} W at "
                    "the wall)",
                    FIELD,
                )
            )
            continue
        believed = f"; {', '.join(fields)} believed, not sourced" if (fields := believed_psu_fields(platform)) else ""
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
        if dc_w <= capacity_w:
            continue
        split = (
            f"{node.platform_id}'s {count} x {rating:,.0f} W PSUs split {count - one_side} + {one_side} over the A and B sides"
        )
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
    """A note where a three-phase voltage is a wye supply's line-to-neutral one: the figures take it line-to-line."""
    line_v = _LINE_TO_NEUTRAL_V.get(supply.voltage_v) if supply.phases == 3 else None
    if line_v is None:
        return []
    return [
        Finding(
            "info",
            "rack-voltage-line-to-line",
            f"three-phase voltage_v {supply.voltage_v:g} V is taken line-to-line (a {supply.voltage_v:g} V delta "
            f"supply); where it is the line-to-neutral voltage of a {supply.voltage_v:g}/{line_v} V supply, give "
            f"{line_v}: its circuits then carry sqrt(3) times the power planned here",
            f"{FIELD}.voltage_v",
        )
    ]
