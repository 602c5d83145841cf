"""What the plan says of the racks it packed: air-cooling limits, liquid cooling, what a rack's kW leave out.

Split from :mod:`generator.planner.racks` (the packing) for newuser64: the racks' kW are the servers' alone (item 3),
a liquid-cooled rack's air side is not counted (item 7), the default rack power cites no source (item 8), and the air
limit's warning says how many racks spreading takes (item 9).
"""

from __future__ import annotations

from generator.planner.plan import Finding, Pool
from generator.planner.racks import (
    AIR_COOLED_RACK_LIMIT_KW,
    RACK_UNITS_RESERVED,
    Rack,
    pack_racks,
    rack_id,
    racked_nodes,
)
from generator.sizing.psu_feeds import Feeds
from generator.words import listed
from generator.workload.models import Hardware

#: Where NVIDIA says a liquid-cooled system's networking and storage stay air cooled (with no share of its heat).
LIQUID_AIR_SIDE_SOURCE = "https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html"


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
