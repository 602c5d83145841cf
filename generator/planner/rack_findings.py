"""What the plan says of the racks it packed: air-cooling limits, liquid cooling, what a rack's kW leave out.

Split from :mod:`generator.planner.racks` (the packing) for newuser64: the racks' kW are the servers' alone (item 3),
a liquid-cooled rack's air side is not counted (item 7), the default rack power cites no source (item 8), and the air
limit's warning says how many racks spreading takes (item 9).
"""

from __future__ import annotations

import math

from generator.planner.plan import Finding, Pool, RackSupply
from generator.planner.racks import (
    AIR_COOLED_RACK_LIMIT_KW,
    RACK_UNITS_RESERVED,
    Rack,
    node_units,
    pack_racks,
    rack_id,
    racked_nodes,
    usable_units,
)
from generator.sizing.electrical import whole_watts
from generator.sizing.psu_feeds import Feeds
from generator.words import listed
from generator.workload.models import Hardware

#: Where NVIDIA says a liquid-cooled system's networking and storage stay air cooled (with no share of its heat).
LIQUID_AIR_SIDE_SOURCE = "https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html"


def redundancy_said(redundancy: str) -> str:
    """``2N`` / ``N+N`` as the contract names them; ``none`` as words (newuser111: "2 circuit(s) none, 2 serving")."""
    return "without redundancy" if redundancy == "none" else redundancy


def racks_under_air_limit(
    pools: list[Pool], rack_power_kw: float, reserved_units: int | None, feeds: Feeds | None, hardware: Hardware | None
) -> int | None:
    """Racks the same servers take packed to :data:`AIR_COOLED_RACK_LIMIT_KW` at most (newuser64 item 9).

    None where the racks' limit is already no more than that, or a racked server is liquid cooled or draws more alone.
    """
    racked = [p for p in pools if racked_nodes(p)]
    if rack_power_kw <= AIR_COOLED_RACK_LIMIT_KW or not racked:
        return None
    if any(p.node.cooling == "liquid" or p.node.power_w > AIR_COOLED_RACK_LIMIT_KW * 1000 for p in racked):
        return None
    return len(pack_racks(pools, AIR_COOLED_RACK_LIMIT_KW, reserved_units, feeds, hardware))


def spread_under_air_limit(
    racks: list[Rack],
    pools: list[Pool],
    rack_power_kw: float,
    reserved_units: int | None,
    feeds: Feeds | None,
    hardware: Hardware | None,
) -> list[Rack]:
    """The racks packed to :data:`AIR_COOLED_RACK_LIMIT_KW` where that takes no more of them, else ``racks``.

    newuser90: four 10.2 kW DGX H200 in racks of 35 kW (max_racks 2) were packed 3 + 1, one rack at 30.6 kW of
    air-cooled servers and a warning to spread them, when 2 + 2 at 20.4 kW fits the same two racks under air cooling's
    limit. Only where a rack is over that limit (no other packing is moved) and every server is air cooled.
    """
    if not any(rack.air_power_w > AIR_COOLED_RACK_LIMIT_KW * 1000 for rack in racks):
        return racks
    if racks_under_air_limit(pools, rack_power_kw, reserved_units, feeds, hardware) is None:
        return racks
    spread = pack_racks(pools, AIR_COOLED_RACK_LIMIT_KW, reserved_units, feeds, hardware)
    return spread if len(spread) <= len(racks) else racks


def rack_findings(
    racks: list[Rack], power_field: str = "rack_power_kw", under_air_limit: int | None = None, max_racks: int | None = None
) -> list[Finding]:
    """Warnings for racks whose air-cooled servers draw more than air cooling removes; liquid-cooled racks flagged.

    A rack that also holds liquid-cooled servers is judged by its air-cooled servers alone. ``power_field``: the
    hardware field that sets the rack's power (``rack_circuits`` where the workload gives its circuits). Racks alike
    (the same air-cooled draw, or liquid-cooled) are said in one finding (newuser57 item 12: 51 lines of one warning
    for a thousand servers packed alike).
    """
    spread = "lower rack_power_kw" if power_field == "rack_power_kw" else f"feed racks with smaller {power_field}"
    if under_air_limit is not None:  # newuser64 item 9: what spreading them costs in racks
        held = (
            ""
            if max_racks is None
            else f", within max_racks {max_racks}"
            if under_air_limit <= max_racks
            else f", more than max_racks {max_racks}"
        )
        spread_racks = (
            f" (packed to {AIR_COOLED_RACK_LIMIT_KW:g} kW a rack they take {under_air_limit} racks against {len(racks)}{held})"
        )
    else:
        spread_racks = ""
    hot: dict[str, list[str]] = {}
    for i, rack in enumerate(racks):
        if rack.air_power_w > AIR_COOLED_RACK_LIMIT_KW * 1000:
            hot.setdefault(f"{rack.air_power_w / 1000:.1f}", []).append(rack_id(i, len(racks)))
    out = [
        Finding(
            "warning",
            "rack-exceeds-air-cooling",
            f"{_racks_text(names)} {'draws' if len(names) == 1 else 'each draw'} {kw} kW of air-cooled servers, above the "
            f"{AIR_COOLED_RACK_LIMIT_KW:g} kW air cooling removes in practice: plan rear-door heat exchangers or "
            f"liquid cooling, or {spread} to spread the servers{spread_racks}",
            f"hardware.{power_field}",
        )
        for kw, names in hot.items()
    ]
    liquid = [rack_id(i, len(racks)) for i, rack in enumerate(racks) if rack.liquid]
    if liquid:
        # newuser64 item 7: NVIDIA says a GB200 tray's networking and storage stay air cooled, but gives no share of the
        # heat: none is invented, and the plan says what it leaves out
        said = (
            f"{_racks_text(liquid)} {'holds' if len(liquid) == 1 else 'hold'} liquid-cooled servers: they need a coolant loop "
            "(a coolant distribution unit), and their whole draw is counted as heat to the coolant loop; "
            "the part their air-cooled components (networking, storage, fans: "
            f"{LIQUID_AIR_SIDE_SOURCE}) put into the room's air has no sourced figure in the catalog and is not counted "
            "in any rack's air load, nor are the loop's flow and CDU capacity: get both from the vendor; their energy "
            "uses the fleet's PUE (constants.pue) as air-cooled servers' does"
        )
        out.append(Finding("info", "liquid-cooled-rack", said, "hardware.cooling"))
    return out


def rack_headroom_findings(
    racks: list[Rack], pools: list[Pool], rack_power_kw: float, reserved_units: int | None, power_field: str
) -> list[Finding]:
    """What each rack's kW leaves out: the switches in the units it reserves, which the catalog gives no watts.

    newuser64 item 3: racks packed to 20.4 kW of 20.4 kW kept 2U for two management switches that drew nothing in the
    plan. The catalog has no sourced power figure for them (nor for PDUs or GPU-fabric switches kept in the racks), so
    none is invented: the plan says the racks' kW are the servers' alone and how much headroom the fullest rack keeps;
    a rack at its limit, which any switch in it tips over, is a warning. A rack-scale system's rack is its own, switches
    and all, and is not counted here.
    """
    reserved = RACK_UNITS_RESERVED if reserved_units is None else reserved_units
    kind_of = {p.name: p.node.kind for p in pools}
    server_racks = [
        (rack_id(i, len(racks)), rack)
        for i, rack in enumerate(racks)
        if rack.pools and not any(kind_of.get(name) == "rack-scale" for name in rack.pools)
    ]
    if not reserved or not server_racks:
        return []
    limit_w = rack_power_kw * 1000
    least = min(limit_w - rack.power_w for _, rack in server_racks)
    full = [name for name, rack in server_racks if rack.power_w >= limit_w]
    what = (
        f"each rack's kW counts its servers alone: the {reserved}U each keeps for its two management top-of-rack "
        "switches (hardware.rack_units_reserved), and any PDUs or GPU-fabric switches placed in the racks, draw power "
        "the catalog has no sourced figure for, so none is counted"
    )
    if full:
        said = (
            f"{what}; {_racks_text(full)} {'is' if len(full) == 1 else 'are'} packed to the full {rack_power_kw:g} kW "
            f"with servers alone, so the switches put {'it' if len(full) == 1 else 'them'} over: take their draw off "
            f"the rack's power ({power_field}) or leave a server out of the rack"
        )
        return [Finding("warning", "rack-power-servers-only", said, f"hardware.{power_field}")]
    said = f"{what}; the fullest rack leaves {least / 1000:,.2f} kW of its {rack_power_kw:g} kW for them"
    return [Finding("info", "rack-power-servers-only", said, f"hardware.{power_field}")]


def default_rack_power_findings(racks: list[Rack], rack_power_kw: float, given: bool) -> list[Finding]:
    """Racks packed against the default ``rack_power_kw``, which cites no source: said, with the fields that set it.

    newuser64 item 8: the default 17.3 kW had no source in the code, the README or the schema. A plan whose racks use it
    says so (``given``: the workload gives ``rack_power_kw`` or ``rack_circuits``; no racks: nothing to say).
    """
    if given or not racks:
        return []
    said = (
        f"racks are packed against the default rack_power_kw of {rack_power_kw:g} kW, which cites no source: give the "
        "site's figure (hardware.rack_power_kw) or its circuits (hardware.rack_circuits, from which specgen derives "
        "it) before racking servers"
    )
    return [Finding("info", "rack-power-default", said, "hardware")]


#: Racks a finding names before it counts the rest.
_MAX_RACKS_NAMED = 4


def _racks_text(names: list[str]) -> str:
    """``rack-01``; ``rack-01 and rack-02``; ``rack-01, rack-02, rack-03, rack-04 and 47 more racks``."""
    if len(names) <= _MAX_RACKS_NAMED:
        return listed(names)
    return f"{', '.join(names[:_MAX_RACKS_NAMED])} and {len(names) - _MAX_RACKS_NAMED} more racks"


def max_racks_refusal(
    racks: list[Rack],
    pools: list[Pool],
    hardware: Hardware,
    feeds: Feeds | None = None,
    supply: RackSupply | None = None,
) -> str:
    """The refusal of a fleet that needs more racks than ``hardware.max_racks``, and why its servers do not pack.

    newuser80 item 6: "the fleet needs 3 racks of 16.428 kW" said nothing of why 31.35 kW did not fit 2 x 16.428 kW:
    whole servers pack, and a rack holds 3 XE8640 of 4,230 W (4 draw 16.92 kW). Each racked server kind of which one
    rack holds fewer than the fleet has is named with its draw and how many of it a rack holds (packed alone, by power,
    height and circuits as the fleet is) and what one more would take; so is what sets the rack's kW (its circuits and
    their derating, or ``rack_power_kw``). The search held every deployment to the racks before refusing (newuser80
    item 1), so the way forward is more or larger racks, or other hardware: the advice names the least of those
    kinds' one-more draws whose racks hold the fleet in ``max_racks`` (packed by power and height alone).
    """
    most = hardware.max_racks or 0
    kw = hardware.rack_power_kw
    budget_w = whole_watts(kw)
    drawn_w = sum(r.power_w for r in racks)
    head = f"the fleet needs {len(racks)} racks of {kw:g} kW but hardware.max_racks is {most}"
    if supply is not None:
        head += (
            f" (a rack's {supply.circuits} circuit(s) {redundancy_said(supply.redundancy)}, {supply.serving_circuits} "
            f"serving, of "
            f"{supply.voltage_v:g} V {supply.breaker_a:g} A {supply.phases}-phase: {supply.circuit_kva:g} kVA each x "
            f"{supply.continuous_load_fraction:g} continuous load x {supply.power_factor:g} power factor = "
            f"{supply.usable_kw:g} kW)"
        )
    kinds: dict[tuple[str, int, int], list[Pool]] = {}
    for pool in sorted((p for p in pools if racked_nodes(p)), key=lambda p: (-p.node.power_w, p.name)):
        kinds.setdefault((pool.node.platform_id, pool.node.power_w, node_units(pool)), []).append(pool)
    each = []
    more: list[int] = []  # a rack's watts that hold one more of each kind named
    usable = usable_units(hardware.rack_units_reserved)
    for (platform, power, units), alike in kinds.items():
        count = sum(racked_nodes(p) for p in alike)
        alone = Pool(alike[0].name, alike[0].node, count + 1, (), 0, 0, None, None, (), ())
        fit = pack_racks([alone], kw, hardware.rack_units_reserved, feeds, hardware)[0].pools[alone.name]
        if fit > count:
            continue  # all of them fit one rack: not what splits the fleet
        more_w = (fit + 1) * power
        why = (
            f"{fit + 1} draw {math.ceil(more_w / 10) / 100:,.2f} kW"
            if more_w > budget_w
            else f"{fit + 1} take {(fit + 1) * units}U of {usable}U"
            if (fit + 1) * units > usable
            else f"{fit + 1} overload a line of its circuits"
        )
        each.append(f"{fit} x {platform} at {power:,} W ({why})")
        if more_w > budget_w:
            more.append(more_w)
    # the least of those rack powers that packs the fleet into max_racks (by power and height: larger circuits change
    # the lines a PSU is on too)
    wider, packs = 0, 0
    for w in sorted(set(more)):
        packs = len(pack_racks(pools, w / 1000, hardware.rack_units_reserved, None, hardware))
        if packs <= most:
            wider = w
            break
    servers = sum(racked_nodes(p) for p in pools)
    packed = (
        f"; its {servers} servers draw {drawn_w / 1000:,.2f} kW, within {most} x {kw:g} kW, but whole servers do not "
        f"pack into {most}"
        if drawn_w <= most * budget_w
        else f"; its {servers} servers draw {drawn_w / 1000:,.2f} kW, more than {most} x {kw:g} kW"
    )
    holds = f": a rack holds {listed(each, 'and')}" if each else ""
    at = f"{math.ceil(wider / 10) / 100:,.2f} kW" if wider else ""
    raise_it = (
        "raise max_racks or rack_power_kw" + (f" (to {at}: the fleet then packs into {packs} racks)" if wider else "")
        if hardware.rack_circuits is None
        else "raise max_racks, feed racks with more or larger circuits (rack_circuits"  # fuzz30 L3
        + (f": {at} usable a rack packs the fleet into {packs} racks by power and height)" if wider else ")")
    )
    return (
        f"{head}{packed}{holds}; the search found no fleet of the GPUs and servers allowed that packs into {most} "
        f"rack(s); to unblock: {raise_it}, or allow other GPUs or servers (hardware.gpus, hardware.platforms) that "
        "draw less a server"
    )
