"""``validate``'s word on an owned workstation whose stated draw its wall outlet cannot carry (newuser112).

``plan`` says it per pool (``wall-circuit``, :mod:`generator.planner.inventory_place`); where a custom server states
its draw (``hardware.inventory[].custom.max_power_w``) and is a ``workstation``, the figure needs no plan: ``validate``
said "ok" to 30 back-office boxes of 3,000 W each on a 16 A / 230 V outlet. Said at the stated figure, as plan says
it; a catalog workstation's draw comes of the build the plan fits and is left to ``plan``.
"""

from __future__ import annotations

from generator.planner.plan import Finding
from generator.planner.wall_circuit import wall_circuit_advice
from generator.workload.models import Workload


def owned_outlet_findings(wl: Workload) -> list[Finding]:
    """A ``wall-circuit`` warning at each custom workstation's ``max_power_w`` that its outlet cannot carry."""
    hw = wl.hardware
    if hw.provider != "baremetal" or hw.fixed is not None:
        return []
    out = []
    for j, group in enumerate(hw.inventory):
        custom = group.custom
        if custom is None or custom.kind != "workstation" or custom.max_power_w is None:
            continue
        advice = wall_circuit_advice(f"the owned {group.platform_id}", custom.max_power_w, hw.wall_circuit)
        if advice is not None:
            out.append(Finding("warning", "wall-circuit", advice, f"hardware.inventory[{j}].custom.max_power_w"))
    return out
