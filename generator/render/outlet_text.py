"""SPEC.md's line on what a workstation pool's machine draws from its wall outlet and heats its room with (newuser112).

A machine in an office or a shop's back office (``hardware.wall_circuit`` given, a ``workstation`` node) has no rack
table to read its power and heat from: the fleet's totals add up machines that stand in different rooms (30 stores'
boxes as one 15.9 kW), and the ``wall-circuit`` warning speaks only past the circuit. This line gives each machine's
draw against its circuit's continuous rating and its heat in BTU/h, the figure an air conditioner is sized in.
"""

from __future__ import annotations

from generator.planner.plan import Plan, Pool


def outlet_text(plan: Plan, pool: Pool) -> str | None:
    """What one node of ``pool`` draws of its outlet and heats its room with; None unless it stands on the given one."""
    circuit = plan.wall_circuit
    if circuit is None or pool.node.kind != "workstation" or pool.rented is not None:
        return None
    node = pool.node
    share = 100 * node.power_w / circuit.continuous_w
    return (
        f"each machine on its outlet: {node.power_w:,} W of the {circuit.continuous_w:,} W the "
        f"{circuit.voltage_v:g} V / {circuit.breaker_a:g} A circuit (hardware.wall_circuit) carries continuously "
        f"({share:.0f}%); {node.heat_btu_per_h:,} BTU/h of heat into its room"
    )
