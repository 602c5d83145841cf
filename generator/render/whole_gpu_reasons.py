"""Why a pool keeps whole GPUs under ``kubernetes.gpu_sharing``: the reason of each deployment in it, and only those.

fuzz33 item 5: the finding ``gpu-sharing-whole-gpus`` listed every reason a pool may keep whole GPUs ("takes several
GPUs, runs a training job, or does not fit its share") where the one deployment there fitted its MIG instance and
whole GPUs simply cost less. Each deployment's reason is read from the plan:

- a training job plans whole GPUs with their links;
- a replica of several GPUs (max(TP, EP) x PP) cannot run in shares: MIG instances have no P2P, and shared GPUs could hand
  one pod slices of one GPU;
- the GPU is not NVIDIA's, or has no such MIG profile: there is no share to run in;
- no layout fits the share (the plan's ``gpu-share-too-small`` finding for the deployment);
- else the objective ranked whole GPUs ahead of the layouts in shares: what its whole GPUs add to the fleet against
  what its best layout in shares adds as a pool of its own, and the fleet's month either way, where one is listed;
  where those figures do not favour whole GPUs, that the planner ranked the layouts each as a pool of its own.
"""

from __future__ import annotations

import math

from generator import catalog
from generator.planner.batch_job import pool_month_usd
from generator.planner.placement import pool_placement
from generator.planner.plan import DeploymentPlan, Plan, Pool, layout_name
from generator.planner.spread import SPREAD_NODES, packed_nodes
from generator.workload.models import GpuSharing
from generator.workload.sharing import mig_problem

#: The planner's finding for a service whose replicas fit no share (:func:`~generator.planner.share_findings._kept_off_shares`).
SHARE_TOO_SMALL_CODE = "gpu-share-too-small"


def whole_gpu_reasons(
    plan: Plan, pool: Pool, sharing: GpuSharing, names: frozenset[str] | None = None, spread: frozenset[str] = frozenset()
) -> list[str]:
    """One reason per deployment with replicas in ``pool``, which the planner did not share: why it keeps whole GPUs.

    ``names``: the deployments asking ``sharing`` where others ask another or none (the only ones said); None: all.
    ``spread``: the services ``min_replicas`` spreads over nodes (:func:`~generator.planner.spread.spread_services`).
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
        elif (width := max(tp, ep := d.expert_parallel_in(pool.name))) * pp > 1:
            # an attention-DP layout named as plans name it (review72 item 2): TP1 EP2 (attention DP 2)
            split = layout_name(tp, pp, ep) if ep > tp else f"TP{tp}" + (f" x PP{pp}" if pp > 1 else "")
            why = f"its replica takes {width * pp} GPUs ({split}), and shares could hand one pod slices of one GPU"
        elif f"deployments[{index}]" in too_small:
            why = f"no layout of it fits its share ({SHARE_TOO_SMALL_CODE})"
        else:
            why = _ranked_ahead(plan, d, pool, sharing, spread)
        reasons.append(f"{d.name}: {why}")
    return reasons


def _ranked_ahead(plan: Plan, d: DeploymentPlan, pool: Pool, sharing: GpuSharing, spread: frozenset[str]) -> str:
    """Whole GPUs chosen by the objective over the layouts in shares, with what each adds to the fleet's month.

    newuser44 item 6: the deployment's cost share of a pool of 16 GPUs ($5,357) was set against a server of its own in
    shares ($5,022) as "whole GPUs cost less". Like is compared with like: what its whole GPUs add to the fleet (the
    servers its pool would not need without it) against what its best layout in shares adds as a pool of its own,
    and the fleet's month either way.
    """
    objective = str(d.details.get("objective_used") or plan.objective)
    shared = next((c for c in d.runners_up if c.shares_per_gpu), None)
    freed = None if shared is None else _nodes_freed(plan, d, pool, spread)
    if shared is None or freed is None:
        return f"whole GPUs rank ahead of its layouts in {_shares(sharing)} by {objective}"
    month = pool_month_usd(pool)
    usd = None if month is None else month * freed / pool.nodes
    gpus = freed * pool.node.gpus
    other_usd = shared.usd_per_month
    if objective == "cost" and usd is not None and other_usd is not None and usd < other_usd:
        verb = "cost less"
    elif objective == "gpus" and gpus < shared.gpus_bought:
        verb = "take fewer GPUs"
    else:
        # review29 item 7: the fleet figures below may favour the shares; the planner ranked the service's layouts each
        # as a pool of its own before it packed services into pools, so they are not what chose whole GPUs
        verb = (
            f"rank ahead by {objective} where the planner ranks a service's layouts, each as a pool of its own, before "
            "it packs services into pools (these fleet figures did not decide it)"
        )
    kept = ", on GPUs its pool has without it" if not freed else ""
    whole = f"it adds {_figures(objective, usd, gpus)} to the fleet{kept}"
    other = f"{_figures(objective, other_usd, shared.gpus_bought)} added by its best layout with shares, a pool of its own"
    fleet = plan.totals.get("usd_per_month")
    if not isinstance(fleet, int | float) or usd is None or other_usd is None:
        return f"whole GPUs {verb}: {whole}, against {other}: {shared.summary}"
    return (
        f"whole GPUs {verb}: {whole} (fleet ${fleet:,.0f}/month), against {other}: {shared.summary} "
        f"(fleet ${fleet - usd + other_usd:,.0f}/month)"
    )


def _nodes_freed(plan: Plan, d: DeploymentPlan, pool: Pool, spread: frozenset[str]) -> int | None:
    """The nodes ``pool`` would not need without ``d``'s replicas; None where that is not known here.

    Not known: a split deployment (its runners-up are the whole service's), a pool with owned servers (they cost their
    upkeep, not the pool's average) or a training job. The others' replicas are packed as the plan packs them
    (:func:`~generator.planner.placement.pool_placement`), a service spread by ``min_replicas`` (``spread``) on two
    nodes at least.
    """
    if d.split or pool.owned_nodes or not pool.nodes:
        return None
    others = [o for o in plan.deployments if o.name != d.name and o.in_pool(pool.name) is not None]
    if not others:
        return pool.nodes
    if any(o.kind != "inference" for o in others):
        return None
    per_node = pool.node.gpus
    layouts = [(o.in_pool(pool.name) or (1, 1, 0, 0), o.expert_parallel_in(pool.name)) for o in others]
    fewest = max(
        math.ceil(sum(layout[3] for layout, _ in layouts) / per_node),
        *(packed_nodes(replicas, max(tp, ep) * pp, per_node) for (tp, pp, replicas, _), ep in layouts),
    )
    if pool.node.hosts < SPREAD_NODES and any(o.name in spread and o.replicas >= SPREAD_NODES for o in others):
        fewest = max(fewest, SPREAD_NODES)
    for nodes in range(fewest, pool.nodes):
        if pool_placement(others, pool._replace(nodes=nodes), spread, laid_out=False) is not None:
            return pool.nodes - nodes
    return 0


def _shares(sharing: GpuSharing) -> str:
    return f"{sharing.mig_profile} shares" if sharing.strategy == "mig" else f"{sharing.strategy} shares"


def _figures(objective: str, usd_per_month: float | None, gpus: int) -> str:
    """A month and GPUs added, the objective's figure first."""
    cost = "unpriced" if usd_per_month is None else f"${usd_per_month:,.0f}/month"
    count = f"{gpus} GPU" + ("" if gpus == 1 else "s")
    return f"{count} and {cost}" if objective == "gpus" else f"{cost} and {count}"
