"""Why a service's replicas stay in GPU shares that leave some empty, or keep whole GPUs the workload shares."""

from __future__ import annotations

from collections.abc import Sequence

from generator.planner.blocked import SHARE_TOO_SMALL, Blocked
from generator.planner.candidates import ranking_candidate
from generator.planner.choice_reasons import _buys, _replicas_rate, purchase
from generator.planner.option import Option, sustained_rps
from generator.planner.options import ties_before_headroom
from generator.planner.plan import Finding, Pool
from generator.planner.tco import cost_text
from generator.workload.models import Workload
from generator.workload.sharing import planned_sharing, sharing_field, sharing_text


def _shares_left_empty(
    wl: Workload, index: int, objective: str, chosen: Option, rest: list[Option], pools: list[Pool]
) -> tuple[str, Finding] | None:
    """Why a service stays in shares that leave some empty, where whole GPUs on the same purchase tie and sustain more.

    newuser69 item 4: one time-sliced replica in half an A100 (3.64 req/s, gpu_memory_utilization 0.45) on a GPU no
    other service uses, at the $2,681/month of the whole A100 (12.92 req/s), and nothing said why. The planner keeps the
    sharing asked on the objective's tie (:func:`~generator.planner.candidates.ranking_key`, fuzz14 item 6): said, with
    both figures and how to take whole GPUs. None where the shares are filled, the pool holds other services (they may
    fill them), or no layout on whole GPUs ties it.
    """
    c = ranking_candidate(chosen)
    sharing = planned_sharing(wl, wl.deployments[index])
    if sharing is None or chosen.parts or not c.shares_per_gpu or c.run_hours is not None or len(pools) != 1:
        return None
    pool = pools[0]
    shares = pool.nodes * pool.node.gpus * c.shares_per_gpu
    empty = shares - c.replicas
    if pool.deployments != (wl.deployments[index].name,) or empty <= 0:
        return None
    bought = purchase(chosen)
    whole = next(
        (
            o
            for o in rest
            if not o.candidate.shares_per_gpu
            and not o.parts
            and _buys(o, bought, chosen.candidate.gpus_bought)
            and ties_before_headroom(objective, c, ranking_candidate(o))
            and round(sustained_rps(o), 2) > round(sustained_rps(chosen), 2)
        ),
        None,
    )
    if whole is None:
        return None
    name, field = wl.deployments[index].name, sharing_field(wl, index)
    figures = (
        f"{_replicas_rate(chosen)} within the SLOs in its {shares} shares, {empty} of them empty, against "
        f"{_replicas_rate(whole)} on whole GPUs ({whole.candidate.summary}) at the same {cost_text(whole.candidate)}"
    )
    why = (
        f"kept in the {sharing_text(sharing)} shares asked on the tie on {objective} with whole GPUs (the sharing asked "
        f"comes first on a tie): {figures}"
    )
    finding = Finding(
        "info",
        "gpu-sharing-shares-empty",
        f"deployment {name} runs in {sharing_text(sharing)} shares that no other service fills: {figures}. Its "
        "replicas are sized and started against their shares (memory, and the compute and bandwidth of each), so the "
        f"GPU's rest stays idle: give it gpu_sharing: {{strategy: none}} for "
        "whole GPUs at this price, or put another service of one GPU under the same sharing to fill them",
        field,
    )
    return why, finding


def _kept_off_shares(wl: Workload, index: int, opt: Option, pools: list[str], blocked: Sequence[Blocked]) -> list[Finding]:
    """Where a service's replicas of one GPU keep whole GPUs though the workload shares them: why a share cannot hold them.

    newuser40 item 3: a model too big for its MIG instance was rendered into one, where it could not start.
    """
    sharing = planned_sharing(wl, wl.deployments[index])
    out = []
    for part, pool in zip(opt.pieces, pools, strict=True):
        if sharing is None or part.candidate.shares_per_gpu or part.replica_shape.par.gpus > 1:
            continue
        # the share is the GPU's, whichever server holds it: the reason recorded on the chosen server, with the GPU
        # alone named (fuzz32 item 6: the first server recorded was named, one the plan did not choose)
        small = [b for b in blocked if b.code == SHARE_TOO_SMALL and b.gpu_id == part.gpu_id]
        if not small:
            continue
        chosen = next((b for b in small if b.platform_id == part.hardware.platform.id), small[0])
        why = chosen.why
        fix = "a larger MIG profile" if sharing.strategy == "mig" else "fewer replicas_per_gpu"
        out.append(
            Finding(
                "warning",
                "gpu-share-too-small",
                f"deployment {wl.deployments[index].name} keeps whole GPUs in pool {pool}, without {sharing.strategy}: "
                f"no layout of it is feasible in its share ({why}); for it to share GPUs, choose {fix}, a shorter "
                "max_context_tokens, a lower precision or looser SLOs",
                f"deployments[{index}]",
            )
        )
    return out
