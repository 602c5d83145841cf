"""The planner: enumerate feasible hardware per deployment, pick the best by the objective, build pools.

``plan_workload`` is pure over the loaded workload and the catalog; it returns a frozen
:class:`Plan` or raises :class:`InfeasibleError` saying which limit blocked what and what would unblock it.
"""

from __future__ import annotations

from generator.errors import InfeasibleError
from generator.planner.assemble import build_plan
from generator.planner.candidates import inference_options, training_options, within_limits
from generator.planner.early import early_checks
from generator.planner.fixed import plan_fixed
from generator.planner.option import Option
from generator.planner.options import rank
from generator.planner.plan import Finding, Plan
from generator.sizing.constants import with_overrides
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, TrainingDeployment


def _unblock_hint(dep: InferenceDeployment | TrainingDeployment) -> str:
    if isinstance(dep, InferenceDeployment):
        return (
            "to unblock: allow a GPU with more memory, a lower precision (fp8 halves and int4 quarters the weights), "
            "a shorter max_context_tokens, looser SLOs, or more rack power / max_nodes"
        )
    return (
        "to unblock: allow a GPU with more memory, ZeRO-3 or LoRA/QLoRA, a shorter sequence_length, "
        "or more rack power / max_nodes"
    )


def plan_workload(loaded: LoadedWorkload) -> Plan:
    """Plan every deployment of a validated workload."""
    wl = loaded.workload
    consts = with_overrides(dict(wl.constants))
    early_checks(loaded, consts)
    if wl.hardware.fixed is not None:
        return plan_fixed(loaded, consts)
    findings: list[Finding] = []
    chosen: list[tuple[int, Option, list[Option]]] = []
    for i, dep in enumerate(wl.deployments):
        model = loaded.models[dep.name]
        blocked: list[str] = []
        if isinstance(dep, InferenceDeployment):
            options = inference_options(wl, dep, model, consts, blocked)
        else:
            options = training_options(wl, dep, model, consts, blocked)
        feasible = sorted(
            (o for o in options if within_limits(wl, o)), key=lambda o: (rank(wl.objective, o.candidate), o.candidate.summary)
        )
        if not feasible:
            where = loaded.document.locate(("deployments", i, "model"))
            detail = "; ".join(sorted(set(blocked))[:6]) or "no platform of this provider offers an allowed GPU"
            if options:
                smallest = min(o.candidate.nodes for o in options)
                detail = f"every layout exceeds max_nodes or max_budget_usd_per_month (the smallest needs {smallest} nodes)"
            raise InfeasibleError(
                f"{where}: deployment '{dep.name}' ({model.id}) has no feasible plan: {detail}; {_unblock_hint(dep)}"
            )
        chosen.append((i, feasible[0], feasible[1:]))
    return build_plan(loaded, consts, chosen, findings)
