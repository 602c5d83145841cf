"""What a fleet diff says of the circuits racks are fed with (``plan.rack_supply``) and each rack's load on them.

fuzz30 item 10: ``specgen diff`` between workloads that differed only in their circuits (2N -> none: the racks lose
their A+B redundancy; or half the breaker with the same packing) said "No change to the fleet.". A spec.json may come
from anyone: every field read here is checked first (:func:`check_circuits`), as :mod:`generator.fleet_diff` checks
the rest.
"""

from __future__ import annotations

from typing import Any

from generator.errors import SpecShapeError
from generator.input_files import short
from generator.spec_figures import check_figure

#: What the diff reads of ``plan.rack_supply``: the circuits and what a rack may draw from them.
SUPPLY_FIELDS = (
    "voltage_v",
    "phases",
    "breaker_a",
    "circuits",
    "redundancy",
    "continuous_load_fraction",
    "power_factor",
    "usable_kw",
)
#: What the diff reads of a rack's ``circuit_load``: its most loaded line, shared and with one side lost.
LOAD_FIELDS = ("phase_current_a", "failover_phase_current_a")
_REDUNDANCIES = ("2N", "N+N", "none")


def check_circuits(path: str, plan: dict[str, Any]) -> None:
    """Raise InputError naming the file and field where ``plan``'s circuits are not what a plan writes."""
    supply = plan.get("rack_supply")
    if supply is not None:
        if not isinstance(supply, dict):
            raise SpecShapeError(path, "plan.rack_supply", f"must be an object, got {short(supply)}")
        for key in SUPPLY_FIELDS:
            if key not in supply:
                raise SpecShapeError(path, "plan.rack_supply", f"has no '{key}'")
            if key == "redundancy":
                if supply[key] not in _REDUNDANCIES:
                    raise SpecShapeError(
                        path,
                        "plan.rack_supply.redundancy",
                        f"must be one of {', '.join(_REDUNDANCIES)}, got {short(supply[key])}",
                    )
            else:
                check_figure(path, f"plan.rack_supply.{key}", supply[key])
    for i, rack in enumerate(plan.get("racks") or ()):
        load = rack.get("circuit_load") if isinstance(rack, dict) else None
        if load is None:
            continue
        if not isinstance(load, dict):
            raise SpecShapeError(path, f"plan.racks[{i}].circuit_load", "must be an object")
        for key in LOAD_FIELDS:
            if key not in load:
                raise SpecShapeError(path, f"plan.racks[{i}].circuit_load", f"has no '{key}'")
            if not (key.startswith("failover") and load[key] is None):  # the failover figure may be null, as a plan writes it
                check_figure(path, f"plan.racks[{i}].circuit_load.{key}", load[key])


def _supply(plan: dict[str, Any]) -> dict[str, Any] | None:
    supply = plan.get("rack_supply")
    return None if supply is None else {key: supply[key] for key in SUPPLY_FIELDS}


def supply_change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The circuits before and after where either side gives circuits and they differ (None: no circuits, or the same).

    A side that gives rack_power_kw instead is None, with the kW its racks were packed to (``rack_power_kw``) beside.
    """
    a, b = _supply(old), _supply(new)
    if a == b:
        return None
    return {"old": a, "new": b, "old_rack_power_kw": _rack_kw(old), "new_rack_power_kw": _rack_kw(new)}


def _rack_kw(plan: dict[str, Any]) -> float | None:
    racks = plan.get("racks") or ()
    value = racks[0].get("rack_power_kw") if racks and isinstance(racks[0], dict) else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def rack_load(rack: dict[str, Any]) -> dict[str, Any]:
    """A rack's load on its circuits as the racks table compares it: its most loaded line's amperes ({} without)."""
    load = rack.get("circuit_load")
    return {} if load is None else {key: load[key] for key in LOAD_FIELDS}


def load_text(held: dict[str, Any]) -> str:
    """A rack's currents in the racks table ("" where it has no circuits)."""
    if "phase_current_a" not in held:
        return ""
    failover = held["failover_phase_current_a"]
    lost = "" if failover is None else f", {failover:,.1f} A with one side lost"
    return f"; {held['phase_current_a']:,.1f} A on its most loaded line{lost}"


def _circuits_text(supply: dict[str, Any] | None, rack_kw: float | None) -> str:
    if supply is None:
        return f"rack_power_kw {rack_kw:g} kW (no circuits given)" if rack_kw is not None else "no circuits given"
    phase = "three" if supply["phases"] == 3 else "single"
    redundancy = "no redundancy" if supply["redundancy"] == "none" else supply["redundancy"]
    return (
        f"{supply['circuits']:g} x {supply['breaker_a']:g} A {phase}-phase {supply['voltage_v']:g} V, {redundancy}, at "
        f"{supply['continuous_load_fraction'] * 100:g}% continuous and power factor {supply['power_factor']:g}: "
        f"{supply['usable_kw']:g} kW a rack"
    )


def supply_lines(change: dict[str, Any]) -> list[str]:
    """The diff's paragraph on a change of circuits: before and after, and what a side of redundancy lost or gained."""
    old, new = change["old"], change["new"]
    text = (
        f"**Rack circuits: {_circuits_text(old, change['old_rack_power_kw'])} → "
        f"{_circuits_text(new, change['new_rack_power_kw'])}.**"
    )
    split = [None if s is None else s["redundancy"] != "none" for s in (old, new)]
    if split == [True, False]:
        text += (
            " The racks lose their A+B feeds: no side carries a rack alone any more, and losing a circuit drops the "
            "servers it feeds."
        )
    elif split == [False, True]:
        text += " The racks gain A+B feeds: either side alone carries each rack, and the racks are packed to one side's power."
    return [text, ""]
