"""A plan's idle GPUs by pool: the shares they leave unused and the replicas of its service they would hold."""

from __future__ import annotations

from generator.catalog.records import acquired
from generator.planner.candidates import replicas_held
from generator.planner.idle_training import idle_gpus
from generator.planner.plan import DeploymentPlan, Finding, Pool


def _idle_findings(pools: list[Pool], deployments: list[DeploymentPlan], provider: str) -> list[Finding]:
    out = []
    for pool in pools:
        idle = idle_gpus(pool, deployments)
        if idle > 0:
            # owned servers were not bought: their GPUs are idle, not idle purchases
            how = "owned" if pool.owned_nodes == pool.nodes else "rented" if pool.rented else acquired(provider)
            out.append(
                Finding(
                    "info",
                    "idle-gpus",
                    f"pool {pool.name}: {idle} of {pool.node.gpus * pool.nodes} GPUs {how} are idle "
                    f"({pool.nodes} x {pool.node.gpus}-GPU {pool.node.platform_id}); their cost is counted"
                    + (
                        _unused_shares_text(pool, sum(s[2] for d in deployments if (s := d.in_pool(pool.name))))
                        if pool.shares_per_gpu
                        else _spare_replicas_text(pool, deployments)
                    ),
                )
            )
    return out


def _unused_shares_text(pool: Pool, shares: int) -> str:
    """The shares the GPUs in use of a shared pool leave unused, apart from its idle GPUs ('' where none)."""
    per_gpu = pool.shares_per_gpu or 1
    in_use = pool.node.gpus * pool.nodes - pool.idle_gpus
    unused = in_use * per_gpu - shares
    if unused <= 0:
        return ""
    return f"; the {in_use} GPU(s) in use hold {shares} of their {in_use * per_gpu} shares ({per_gpu} a GPU), {unused} unused"


def _spare_replicas_text(pool: Pool, deployments: list[DeploymentPlan]) -> str:
    """How many more replicas of a pool's one service its idle GPUs hold ('' where none, or not one unsplit service).

    Replicas are packed node by node (:func:`~generator.planner.candidates.replicas_held`). min_replicas is named
    only with two or more nodes: asked of one node, 2 or more would plan a second one for the spread.
    """
    services = [d for d in deployments if d.in_pool(pool.name)]
    if len(services) != 1 or services[0].kind != "inference" or services[0].split:
        return ""
    only = services[0]
    slots = replicas_held((pool.node.gpus, pool.nodes), only.stage_gpus * only.pp)
    spare = slots - only.replicas
    if spare <= 0:
        return ""
    ask = f" (min_replicas: {slots} asks for them)" if pool.nodes > 1 else ""
    return f"; {spare} more replica(s) of {only.name} (TP{only.tp} x PP{only.pp}) fit on them{ask}"
