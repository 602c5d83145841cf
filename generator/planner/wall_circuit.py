"""The wall circuit a machine fed from an outlet needs: an owned workstation, a home or office server."""

from __future__ import annotations

#: What a 120 V / 15 A branch circuit carries continuously (three hours or more): 80% of the breaker, as conductors and
#: breakers are sized at 125% of a continuous load (NEC 210.19(A)(1), 210.20(A); quoted at
#: https://forums.mikeholt.com/threads/coffee-pot-question.103218/page-2): 12 A x 120 V.
CIRCUIT_15A_CONTINUOUS_W = 1440
#: Larger circuits at the same 80%: 120 V / 20 A, 240 V / 20 A, 240 V / 30 A.
CIRCUITS_CONTINUOUS_W = (("120 V / 20 A", 1920), ("240 V / 20 A", 3840), ("240 V / 30 A", 5760))


def wall_circuit_advice(machine: str, watts: int) -> str | None:
    """What ``machine`` drawing ``watts`` at the wall needs beyond a 120 V / 15 A circuit; None where that carries it."""
    if watts <= CIRCUIT_15A_CONTINUOUS_W:
        return None
    enough = [f"{name}: {carried:,} W" for name, carried in CIRCUITS_CONTINUOUS_W if carried >= watts]
    circuits = (
        f"a circuit that carries it ({', '.join(enough)} at that 80%; elsewhere as the local rule allows)"
        if enough
        else "a supply beyond a 240 V / 30 A circuit"
    )
    return (
        f"{machine} draws up to {watts:,} W at the wall, more than a 120 V / 15 A circuit carries continuously "
        f"({CIRCUIT_15A_CONTINUOUS_W:,} W: a continuous load is held to 80% of the breaker, NEC 210.19(A)(1) and "
        f"210.20(A)); give it {circuits} or cap the GPUs' power"
    )
