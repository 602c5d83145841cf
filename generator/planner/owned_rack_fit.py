"""validate's warning that an owned server fits no rack of the workload's (``owned-server-fits-no-rack``).

newuser98: with ``rack_power_kw: 8`` and two owned 10.2 kW DGX H100, validate said "ok" (other allowed servers fit,
so the early rack check passed), the plan left both free, and a Metal3 render was refused without the reason. The
owned servers' platform is known before any search: its least-drawing node, with no parts added, bounds every node
the plan could form of it, so a rack that holds no such node holds none of these servers.
"""

from __future__ import annotations

from generator.planner.early import racked_counts, smallest_node
from generator.planner.options import Hardware, allowed_hardware
from generator.planner.plan import Finding
from generator.planner.rack_supply import node_rack_problem
from generator.sizing.constants import with_overrides
from generator.words import listed
from generator.workload import LoadedWorkload

CODE = "owned-server-fits-no-rack"


def owned_rack_findings(loaded: LoadedWorkload) -> list[Finding]:
    """A warning at each catalog inventory entry whose servers no rack of the workload holds, even at their least."""
    wl = loaded.workload
    if wl.hardware.provider != "baremetal" or wl.hardware.fixed is not None:
        return []
    consts = with_overrides(dict(wl.constants))
    kinds: dict[str, list[Hardware]] = {}
    for hw in allowed_hardware(wl):
        kinds.setdefault(hw.platform.id, []).append(hw)
    out = []
    for i, group in enumerate(wl.hardware.inventory):
        fitting = [hw for hw in kinds.get(group.platform or "", []) if group.gpu in (None, hw.gpu.id)]
        problems = []
        for hw in fitting:
            counts = racked_counts(wl, hw)
            why = node_rack_problem(wl.hardware, smallest_node(hw, consts, counts)) if counts else None
            if why is None:
                break
            problems.append(why)
        else:
            if problems:
                names = [host.name for host in group.hosts]
                named = f" ({listed(names)})" if names else ""
                out.append(
                    Finding(
                        "warning",
                        CODE,
                        f"owned {group.platform} server(s){named} fit no rack of the workload's: even with its fewest "
                        f"GPUs and no parts added, {problems[0]}; the plan can use none of them: give the racks "
                        f"more power (hardware.{wl.hardware.rack_power_field}), or rack them elsewhere",
                        f"hardware.inventory[{i}]",
                    )
                )
    return out
