"""The wall circuit a machine fed from an outlet needs: an owned workstation, a home or office server."""

from __future__ import annotations

from generator.sizing.electrical import DEFAULT_CONTINUOUS_LOAD_FRACTION, DEFAULT_POWER_FACTOR, usable_power_w


def _continuous_w(volts: int, amps: int) -> int:
    """What one single-phase branch circuit carries continuously (three hours or more), as a rack's circuits are counted.

    The NEC's 80% of its breaker (:data:`~generator.sizing.electrical.DEFAULT_CONTINUOUS_LOAD_FRACTION`) at the PSUs'
    power factor (review26 item 5: 12 A x 120 V read 1,440 W here where a rack's circuit read 1,368 W).
    """
    return usable_power_w(volts, 1, amps, 1, "none", DEFAULT_CONTINUOUS_LOAD_FRACTION, DEFAULT_POWER_FACTOR)


#: A 120 V / 15 A circuit, the outlet a machine is plugged into by default.
CIRCUIT_15A_CONTINUOUS_W = _continuous_w(120, 15)
#: Larger circuits at the same 80%: 120 V / 20 A, 240 V / 20 A, 240 V / 30 A.
CIRCUITS_CONTINUOUS_W = tuple((f"{v} V / {a} A", _continuous_w(v, a)) for v, a in ((120, 20), (240, 20), (240, 30)))


def wall_circuit_advice(machine: str, watts: int) -> str | None:
    """What ``machine`` drawing ``watts`` at the wall needs beyond a 120 V / 15 A circuit; None where that carries it."""
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
        f"210.20(A), at the PSUs' power factor {DEFAULT_POWER_FACTOR:g}); give it {circuits} or cap the GPUs' power"
    )
