"""What a fleet diff says of the wall circuit a machine at home or in an office stands on (``plan.wall_circuit``).

fix168: ``specgen diff`` between workloads that differed only in ``hardware.wall_circuit`` (a 230 V / 16 A socket
circuit against the US 120 V / 15 A assumed) said "No change to the fleet." while one plan warned that the machine
draws more than its outlet carries and the other did not. The diff now says the circuit before and after and the
wall-circuit advice each side gives. A spec.json may come from anyone: every field read here is checked first
(:func:`check_wall_circuit`), as :mod:`generator.fleet_diff` checks the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.errors import SpecShapeError
from generator.input_files import short
from generator.sizing.electrical import DEFAULT_POWER_FACTOR, usable_power_w
from generator.spec_figures import check_figure

#: What the diff reads of ``plan.wall_circuit``.
FIELDS = ("voltage_v", "breaker_a", "continuous_load_fraction", "continuous_w")
#: The ranges a workload's ``hardware.wall_circuit`` takes (schemas/workload.schema.json; a test compares them):
#: (least, most, whether the least is excluded).
RANGES = {
    "voltage_v": (100.0, 1000.0, False),
    "breaker_a": (1.0, 1000.0, False),  # fix199: at least 1 A, NEC 240.6(A)'s smallest standard rating
    "continuous_load_fraction": (0.0, 1.0, True),
}
#: The finding that carries the wall-circuit advice.
ADVICE_CODE = "wall-circuit"


def check_wall_circuit(path: str, plan: dict[str, Any]) -> None:
    """Raise InputError naming the file and field where ``plan.wall_circuit`` is not what a plan writes."""
    circuit = plan.get("wall_circuit")
    if circuit is None:
        return
    if not isinstance(circuit, dict):
        raise SpecShapeError(path, "plan.wall_circuit", f"must be an object, got {short(circuit)}")
    for key in FIELDS:
        if key not in circuit:
            raise SpecShapeError(path, "plan.wall_circuit", f"has no '{key}'")
        check_figure(path, f"plan.wall_circuit.{key}", circuit[key])
    # hostile89: a breaker of 0 A, a fraction of 200% or a continuous_w of 99,999 W beside 230 V / 16 A was said as it
    # stood ("230 V / 0 A at 80% continuous: 2,796 W"); each is what a workload refuses, or what no plan writes
    for key, (least, most, open_least) in RANGES.items():
        value = circuit[key]
        if value > most or value < least or (open_least and value == least):
            shown = f"more than {least:g} and at most" if open_least else f"from {least:g} to"
            raise SpecShapeError(path, f"plan.wall_circuit.{key}", f"must be {shown} {most:g}, got {short(value)}")
    carried = usable_power_w(
        circuit["voltage_v"], 1, circuit["breaker_a"], 1, "none", circuit["continuous_load_fraction"], DEFAULT_POWER_FACTOR
    )
    if circuit["continuous_w"] != carried or not isinstance(circuit["continuous_w"], int):
        raise SpecShapeError(
            path,
            "plan.wall_circuit.continuous_w",
            f"is {short(circuit['continuous_w'])}, but the circuit it is written beside carries {carried:,} W "
            f"({circuit['voltage_v']:g} V x {circuit['breaker_a']:g} A x {circuit['continuous_load_fraction']:g} x "
            f"power factor {DEFAULT_POWER_FACTOR:g}, whole watts)",
        )


def _advice(plan: dict[str, Any]) -> list[str]:
    """The wall-circuit advice ``plan`` gives (its well-formed ``wall-circuit`` findings' messages), in order."""
    items = plan.get("findings")
    return [
        f["message"]
        for f in (items if isinstance(items, list) else [])
        if isinstance(f, dict) and f.get("code") == ADVICE_CODE and isinstance(f.get("message"), str)
    ]


def wall_circuit_change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The circuit and its advice before and after, where the circuit given differs (None: the same, or none given)."""
    a, b = (None if (c := plan.get("wall_circuit")) is None else {k: c[k] for k in FIELDS} for plan in (old, new))
    if a == b:
        return None
    return {"old": a, "new": b, "old_advice": _advice(old), "new_advice": _advice(new)}


def _circuit_text(circuit: dict[str, Any] | None) -> str:
    if circuit is None:
        return "none given (a US 120 V / 15 A circuit assumed)"
    return (
        f"{circuit['voltage_v']:g} V / {circuit['breaker_a']:g} A at {circuit['continuous_load_fraction'] * 100:g}% "
        f"continuous: {circuit['continuous_w']:,.0f} W"
    )


def wall_circuit_lines(change: dict[str, Any], said: set[str], quote: Callable[[str], str] = str) -> list[str]:
    """The diff's paragraph on a changed wall circuit: before and after, and how its advice changes.

    ``said``: the messages the diff lists already (its new findings), not repeated; ``quote``: how an advice's text is
    escaped for the page (Markdown's, from the caller).
    """
    text = f"**Wall circuit (hardware.wall_circuit): {_circuit_text(change['old'])} → {_circuit_text(change['new'])}.**"
    old, new = change["old_advice"], change["new_advice"]
    listed = [m for m in new if m not in said and m not in old]
    if old and not new:
        text += " The machine's draw now fits its outlet: the wall-circuit warning OLD's plan gives is gone."
    elif new and new == old:
        text += " The wall-circuit warning stays as OLD's plan gives it."
    elif new:
        lead = " The wall-circuit warning stays, now" if old else " The machine now draws more than its outlet carries"
        text += f"{lead}{':' if listed else ' (the warning above).'}"
    else:
        text += " Either circuit carries the machine's draw: no wall-circuit warning on either side."
    return [text, *([""] + [f"- {quote(m)}" for m in listed] if listed else []), ""]
