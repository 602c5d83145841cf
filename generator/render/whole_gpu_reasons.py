"""Why a pool keeps whole GPUs under ``kubernetes.gpu_sharing``: the reason of each deployment in it, and only those.

fuzz33 item 5: the finding ``gpu-sharing-whole-gpus`` listed every reason a pool may keep whole GPUs ("takes several
GPUs, runs a training job, or does not fit its share") where the one deployment there fitted its MIG instance and
whole GPUs simply cost less. Each deployment's reason is read from the plan:

- a training job plans whole GPUs with their links;
- a replica of several GPUs (TP x PP) cannot run in shares: MIG instances have no P2P, and shared GPUs could hand
  one pod slices of one GPU;
- the GPU is not NVIDIA's, or has no such MIG profile: there is no share to run in;
- no layout fits the share (the plan's ``gpu-share-too-small`` finding for the deployment);
- else the objective ranked whole GPUs ahead of the layouts in shares, with both figures where a runner-up in shares
  is listed.
"""

from __future__ import annotations

from generator import catalog
from generator.planner.plan import Candidate, DeploymentPlan, Plan, Pool
from generator.planner.tco import HOURS_PER_MONTH
from generator.workload.models import GpuSharing
from generator.workload.sharing import mig_problem

#: The planner's finding for a service whose replicas fit no share (:func:`~generator.planner.assemble._kept_off_shares`).
SHARE_TOO_SMALL_CODE = "gpu-share-too-small"


def whole_gpu_reasons(plan: Plan, pool: Pool, sharing: GpuSharing, names: frozenset[str] | None = None) -> list[str]:
    """One reason per deployment with replicas in ``pool``, which the planner did not share: why it keeps whole GPUs.

    ``names``: the deployments asking ``sharing`` where others ask another or none (the only ones said); None: all.
    """
    gpu = catalog.gpus()[pool.node.gpu_id]
    if gpu.vendor != "nvidia":
        return [f"its {gpu.id} GPUs are not NVIDIA's (MIG, time-slicing and MPS share NVIDIA GPUs)"]
    if sharing.strategy == "mig" and mig_problem(gpu.id, str(sharing.mig_profile)) is not None:
        return [f"{gpu.id} has no {sharing.mig_profile} MIG instance"]
    too_small = {f.path for f in plan.findings if f.code == SHARE_TOO_SMALL_CODE}
    reasons = []
    for index, d in enumerate(plan.deployments):
        layout = d.in_pool(pool.name)
        if layout is None or (names is not None and d.name not in names):
            continue
        tp, pp, _, _ = layout
        if d.kind == "training":
            why = "a training job, planned on whole GPUs with their links"
        elif tp * pp > 1:
            split = f"TP{tp}" + (f" x PP{pp}" if pp > 1 else "")
            why = f"its replica takes {tp * pp} GPUs ({split}), and shares could hand one pod slices of one GPU"
        elif f"deployments[{index}]" in too_small:
            why = f"no layout of it fits its share ({SHARE_TOO_SMALL_CODE})"
        else:
            why = _ranked_ahead(plan, d, sharing)
        reasons.append(f"{d.name}: {why}")
    return reasons


def _ranked_ahead(plan: Plan, d: DeploymentPlan, sharing: GpuSharing) -> str:
    """Whole GPUs chosen by the objective over the layouts in shares, with both figures where one is listed."""
    objective = str(d.details.get("objective_used") or plan.objective)
    shared = next((c for c in d.runners_up if c.shares_per_gpu), None)
    if shared is None:
        return f"whole GPUs rank ahead of its layouts in {_shares(sharing)} by {objective}"
    chosen = _figures(objective, d.details.get("usd_per_month"), d.details.get("gpus_bought"))
    other = _figures(objective, _month_usd(shared), shared.gpus_bought)
    verb = {"cost": "cost less", "gpus": "take fewer GPUs"}.get(objective, f"rank ahead by {objective}")
    return f"whole GPUs {verb} ({chosen}, against {other} in its best layout with shares, {shared.summary})"


def _shares(sharing: GpuSharing) -> str:
    return f"{sharing.mig_profile} shares" if sharing.strategy == "mig" else f"{sharing.strategy} shares"


def _month_usd(candidate: Candidate) -> float | None:
    return None if candidate.usd_per_hour is None else candidate.usd_per_hour * HOURS_PER_MONTH


def _figures(objective: str, usd_per_month: object, gpus: object) -> str:
    """A layout's month and GPUs, the objective's figure first."""
    cost = f"${usd_per_month:,.0f}/month" if isinstance(usd_per_month, int | float) else "unpriced"
    if not isinstance(gpus, int):
        return cost
    return f"{gpus} GPUs at {cost}" if objective == "gpus" else f"{cost} for {gpus} GPUs"
