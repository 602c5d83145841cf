"""Where GPU sharing makes the fleet cost more than whole GPUs would (newuser42 item 7).

Each deployment's layouts in shares and on whole GPUs are ranked together, but a pool has one sharing config, so
replicas in shares fill GPUs of their own: beside services on whole GPUs, whose idle GPUs a small model's replica
would otherwise take, the fleet that shares can cost more than the fleet that does not (a research-computing fleet
paid 32% more). Here the workload is planned again with every ``gpu_sharing`` removed, and where the fleet that
shares ranks worse on the objective, a warning gives both figures: the user asked for sharing, so the plan keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.errors import InfeasibleError
from generator.planner.plan import Finding, Plan
from generator.workload.sharing import WHERE, sharing_field

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

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
    more = _more(plan, whole, objective)
    if more is None:
        return []
    names = sorted({name for p in shared for name in p.deployments})
    paths = {sharing_field(wl, i) for i, d in enumerate(wl.deployments) if d.name in names}
    path = min(paths) if len(paths) == 1 else ".".join(WHERE)
    figures = f"{_fleet_figure(plan, objective)} with GPUs shared against {_fleet_figure(whole, objective)} on whole GPUs"
    message = (
        f"GPU sharing makes this fleet {more}: {figures} (the same deployments planned without gpu_sharing). "
        f"{', '.join(names)} {'runs' if len(names) == 1 else 'run'} in shares of GPUs, which fill GPUs and servers of "
        "their own (a pool has one sharing config) and take no idle GPU of a pool on whole GPUs; to plan "
        f"{'it' if len(names) == 1 else 'them'} on whole GPUs, remove gpu_sharing or give "
        f"{'it' if len(names) == 1 else 'them'} gpu_sharing strategy none"
    )
    return [Finding("warning", CODE, message, path)]


def _more(plan: Plan, whole: Plan, objective: str) -> str | None:
    """How much worse the fleet that shares is on the objective's figure, in percent; None where it is not worse."""
    a, b = plan.totals, whole.totals
    if objective == "gpus":
        mine, theirs, what = a["gpus"], b["gpus"], "use more GPUs"
    elif objective in ("power", "power-bought") or a["usd_per_month"] is None or b["usd_per_month"] is None:
        mine, theirs, what = a["power_w"], b["power_w"], "draw more power"
    else:
        mine, theirs, what = a["usd_per_month"], b["usd_per_month"], "cost more"
    if mine <= theirs:
        return None
    return f"{what} (+{(mine - theirs) / theirs:.0%})" if theirs else what
