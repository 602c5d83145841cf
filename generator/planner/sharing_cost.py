"""Where GPU sharing makes the fleet cost more than whole GPUs would (newuser42 item 7).

Each deployment's layouts in shares and on whole GPUs are ranked together, but a pool has one sharing config, so
replicas in shares fill GPUs of their own: beside services on whole GPUs, whose idle GPUs a small model's replica
would otherwise take, the fleet that shares can cost more than the fleet that does not (a research-computing fleet
paid 32% more). Here the workload is planned again with every ``gpu_sharing`` removed, and where the fleet that
shares ranks worse on the objective, a warning gives both figures: the user asked for sharing, so the plan keeps it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from generator.errors import InfeasibleError
from generator.planner.plan import Finding, Plan
from generator.workload.sharing import WHERE, sharing_field

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload
    from generator.workload.models import Workload

CODE = "gpu-sharing-costs-more"


def sharing_cost_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """A warning where the fleet with its GPUs shared ranks worse on the objective than the same fleet on whole GPUs.

    Only where a pool shares its GPUs; ``replan`` plans the workload without any ``gpu_sharing``.
    """
    from generator.planner import _fleet_figure, _fleet_objective  # as the fleet search says a fleet's figure

    shared = [p for p in plan.pools if p.shares_per_gpu]
    if not shared:
        return []
    wl = loaded.workload
    whole_wl = wl._replace(
        kubernetes=wl.kubernetes._replace(gpu_sharing=None),
        deployments=tuple(d._replace(gpu_sharing=None) for d in wl.deployments),
    )
    try:
        whole = replan(loaded._replace(workload=whole_wl), consts)
    except InfeasibleError:
        return []
    objective = _fleet_objective(wl.objective, [plan, whole])
    more = _more(plan, whole, objective, wl)
    if more is None:
        return []
    names = sorted({name for p in shared for name in p.deployments})
    # the sharing deployments' fields in the workload's order; one stated for all (kubernetes.gpu_sharing) where they
    # fall back to it, else the first deployment's own (review28 item 2: no kubernetes.gpu_sharing in the file)
    paths = list(dict.fromkeys(sharing_field(wl, i) for i, d in enumerate(wl.deployments) if d.name in names))
    path = paths[0] if len(paths) == 1 or ".".join(WHERE) not in paths else ".".join(WHERE)
    figures = f"{_fleet_figure(plan, objective)} with GPUs shared against {_fleet_figure(whole, objective)} on whole GPUs"
    message = (
        f"GPU sharing makes this fleet {more[0]}: {figures}{more[1]} (the same deployments planned without gpu_sharing). "
        f"{', '.join(names)} {'runs' if len(names) == 1 else 'run'} in shares of GPUs, which fill GPUs and servers of "
        "their own (a pool has one sharing config) and take no idle GPU of a pool on whole GPUs; to plan "
        f"{'it' if len(names) == 1 else 'them'} on whole GPUs, remove gpu_sharing or give "
        f"{'it' if len(names) == 1 else 'them'} gpu_sharing strategy none"
    )
    return [Finding("warning", CODE, message, path)]


#: How many leading figures of :func:`~generator.planner._fleet_rank` rank a fleet on each objective (cost's: the
#: month, a job's runs, then an unpriced fleet's power bought and in all).
_LEAD = {"gpus": 2, "power": 1, "power-bought": 2}


def _more(plan: Plan, whole: Plan, objective: str, wl: Workload) -> tuple[str, str] | None:
    """How much worse the fleet that shares ranks on the objective, and the figures ranked where they are not shown.

    None where it does not rank worse. The comparison is the fleet search's own (:func:`~generator.planner._fleet_rank`:
    the month with the rented training runs and the rate of owned servers left free; GPUs bought; power of the servers'
    components), so the warning fires exactly where the ranking that chose the plan puts the whole-GPU fleet ahead.
    """
    from generator.planner import _fleet_rank  # as the fleet search ranks a fleet

    n = _LEAD.get(objective, 4)
    mine, theirs = (_fleet_rank(objective, p, wl=wl)[:n] for p in (plan, whole))
    if mine <= theirs:
        return None
    at = next(k for k in range(n) if mine[k] != theirs[k])  # the figure that ranks it worse
    a, b = mine[at], theirs[at]
    if objective == "gpus":
        what, ranked = "use more GPUs", f"{a:,.0f} against {b:,.0f} GPUs" + (" bought" if at == 0 else "")
    elif objective in ("power", "power-bought") or at > 1:
        bought = " of the servers bought" if (at == 0 and objective != "power") or at == 2 else ""
        what, ranked = "draw more power", f"{a / 1000:,.1f} against {b / 1000:,.1f} kW{bought}, each server's components"
    elif at == 0:
        what, ranked = "cost more", f"${a:,.0f} against ${b:,.0f} a month with rented training runs and owned servers left free"
    else:
        what, ranked = "cost more", f"${a:,.0f} against ${b:,.0f} a training run"
    shown = (_shown(plan, objective), _shown(whole, objective)) == (a, b)  # else the figures ranked are said too
    percent = f" (+{(a - b) / b:.0%})" if b and math.isfinite(a) and math.isfinite(b) else ""
    return f"{what}{percent}", "" if shown else f" (as ranked: {ranked})"


def _shown(plan: Plan, objective: str) -> float:
    """The figure :func:`~generator.planner._fleet_figure` shows, unrounded."""
    t = plan.totals
    if objective == "gpus":
        return float(t["gpus"])
    if objective in ("power", "power-bought") or t["usd_per_month"] is None:
        return float(t["power_w"])
    return float(t["usd_per_month"])
