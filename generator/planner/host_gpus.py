"""Which GPUs of each host the services sharing a pool take, as the plan says it (fix167, fix171).

Two services placed on one server form one pool, and Ansible's ``specgen_replicas`` gives each host's replicas their
GPUs (:func:`~generator.planner.placement.pool_placement`). ``spec.json`` and SPEC.md said only the pool, and a
refusal read "'small' holds 1 x dgx-h100; 'chat' holds 1 x dgx-h100", as if two servers. The same placement is kept
on the pool (:attr:`~generator.planner.plan.Pool.host_gpus`), host by host: its owned hosts by their inventory names,
then those it buys or rents by the names Ansible's hosts.yml.example gives them (``<pool>-NN``,
:func:`~generator.planner.placeholder_hosts.placeholder_names`; fix167 named owned hosts only).
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.planner.placeholder_hosts import placeholder_names
from generator.planner.placement import pool_placement
from generator.planner.plan import DeploymentPlan, HostGpus, Pool
from generator.workload.models import Workload


def with_host_gpus(
    wl: Workload, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan], spread: frozenset[str]
) -> list[Pool]:
    """``pools`` with ``host_gpus`` set on each bare-metal pool that two or more services share.

    Left None on a pool of one deployment, one whose GPUs are shared in parts (no GPU a replica's own), a
    ``hardware.fixed`` machine (its deployments take turns) or one with a training job.
    """
    out = list(pools)
    if wl.hardware.provider != "baremetal":
        return out
    for k, pool in enumerate(out):
        if len(pool.deployments) < 2 or pool.shares_per_gpu or pool.node.kind == "fixed":
            continue
        placed = pool_placement(deployments, pool, spread)
        if placed is None:  # a training job among them: its launcher places it
            continue
        hosts = [*pool.owned_hosts, *placeholder_names(pool, wl)]
        out[k] = pool._replace(
            host_gpus=tuple(
                HostGpus(host, r.deployment, r.replica, r.gpus) for host, on in zip(hosts, placed, strict=False) for r in on
            )
        )
    return out
