"""The wall circuit a machine fed from an outlet needs: an owned workstation, a home or office server.

The circuit is the workload's ``hardware.wall_circuit`` where given; else a US 120 V / 15 A branch circuit, a
continuous load (three hours or more) held to 80% of its breaker (NEC 210.19(A)(1) and 210.20(A), 80% the inverse
of their 125%: https://forums.mikeholt.com/threads/210-20-a-maximum-load-is-it-80.46907/post-742191). A European home's
socket circuit is 230 V / 16 A (Schuko sockets and plugs are rated 16 A, 3,680 W at 230 V:
https://schuko-wzv.de/technology-safety/), and a Schuko plug is not made to carry its full 16 A for hours
(https://www.emobility.energy/glossar/schuko-stecker), so the 80% is kept unless ``continuous_load_fraction``
gives the local rule.
"""

from __future__ import annotations

import math

from generator.planner.plan import OutletCircuit
from generator.sizing.electrical import DEFAULT_CONTINUOUS_LOAD_FRACTION, DEFAULT_POWER_FACTOR, usable_power_w
from generator.workload.models import WallCircuit

#: How a workload states another circuit, said in the advice (a European socket circuit as the example).
STATE_ANOTHER = "hardware.wall_circuit: {voltage_v: 230, breaker_a: 16} for a European 230 V / 16 A socket circuit"


def _continuous_w(volts: float, amps: float, fraction: float = DEFAULT_CONTINUOUS_LOAD_FRACTION) -> int:
    """What one single-phase branch circuit carries continuously (three hours or more), as a rack's circuits are counted.

    ``fraction`` of its breaker (the NEC's 80% by default) at the PSUs' power factor (review26 item 5: 12 A x 120 V
    read 1,440 W here where a rack's circuit read 1,368 W).
    """
    return usable_power_w(volts, 1, amps, 1, "none", fraction, DEFAULT_POWER_FACTOR)


#: A 120 V / 15 A circuit, the outlet a machine is plugged into by default.
CIRCUIT_15A_CONTINUOUS_W = _continuous_w(120, 15)
#: Larger circuits at the same 80%: 120 V / 20 A, 240 V / 20 A, 240 V / 30 A.
CIRCUITS_CONTINUOUS_W = tuple((f"{v} V / {a} A", _continuous_w(v, a)) for v, a in ((120, 20), (240, 20), (240, 30)))


def _named(circuit: WallCircuit) -> str:
    """``230 V / 16 A``."""
    return f"{circuit.voltage_v:g} V / {circuit.breaker_a:g} A"


def _default_advice(machine: str, watts: int) -> str | None:
    """The advice against the assumed US 120 V / 15 A circuit, naming how to state another."""
    if watts <= CIRCUIT_15A_CONTINUOUS_W:
        return None
    enough = [f"{name}: {carried:,} W" for name, carried in CIRCUITS_CONTINUOUS_W if carried >= watts]
    circuits = (
        f"a circuit that carries it ({', '.join(enough)} at that 80% and power factor {DEFAULT_POWER_FACTOR:g}; "
        "elsewhere as the local rule allows)"
        if enough
        else "a supply beyond a 240 V / 30 A circuit"
    )
    return (
        f"{machine} draws up to {watts:,} W at the wall, more than a 120 V / 15 A circuit carries continuously "
        f"({CIRCUIT_15A_CONTINUOUS_W:,} W: a continuous load is held to 80% of the breaker, NEC 210.19(A)(1) and "
        f"210.20(A), at the PSUs' power factor {DEFAULT_POWER_FACTOR:g}); give it {circuits} or cap the GPUs' power. "
        f"That is the US circuit assumed where the workload names none: elsewhere state it ({STATE_ANOTHER})"
    )


def wall_circuit_advice(machine: str, watts: int, circuit: WallCircuit | None = None) -> str | None:
    """What ``machine`` drawing ``watts`` at the wall needs beyond ``circuit`` (a US 120 V / 15 A one where None).

    None where the circuit carries it continuously.
    """
    if circuit is None:
        return _default_advice(machine, watts)
    fraction = circuit.continuous_load_fraction
    carried = _continuous_w(circuit.voltage_v, circuit.breaker_a, fraction)
    if watts <= carried:
        return None
    # the breaker at that voltage, fraction and power factor that carries the draw
    amps_needed = math.ceil(watts / (circuit.voltage_v * fraction * DEFAULT_POWER_FACTOR))
    return (
        f"{machine} draws up to {watts:,} W at the wall, more than the {_named(circuit)} circuit hardware.wall_circuit "
        f"gives carries continuously ({carried:,} W: {fraction:g} of the breaker, its continuous_load_fraction, at "
        f"the PSUs' power factor {DEFAULT_POWER_FACTOR:g}); give it a circuit of at least {amps_needed} A at "
        f"{circuit.voltage_v:g} V or cap the GPUs' power"
    )


def bought_on_outlet(wall_circuit_given: bool, colocation_usd_per_kw_month: float) -> str | None:
    """Why a bought workstation is taken to stand at home or in an office, fed by an outlet; None: racked in colocation.

    newuser95 left-over 3: a bought tower planned with the README's at-home recipe (``colocation_usd_per_kw_month: 0``)
    got no outlet advice while an owned one did. ``hardware.wall_circuit`` given says it outright.
    """
    if wall_circuit_given:
        return "bought to stand on the outlet hardware.wall_circuit names"
    if colocation_usd_per_kw_month == 0:
        return "bought to stand at home or in an office, as colocation_usd_per_kw_month 0 says"
    return None


def outlet_circuit(circuit: WallCircuit | None) -> OutletCircuit | None:
    """The plan's record of ``hardware.wall_circuit`` (None where not given) with what it carries continuously."""
    if circuit is None:
        return None
    fraction = circuit.continuous_load_fraction
    carried = _continuous_w(circuit.voltage_v, circuit.breaker_a, fraction)
    return OutletCircuit(circuit.voltage_v, circuit.breaker_a, fraction, carried)
