"""Replicas spread over nodes: ``inference.min_replicas`` 2 or more plans them on at least two nodes.

fuzz21 item 2: ``min_replicas: 2`` is what a service sets to stay up while a replica's node is upgraded, drained or
fails, yet two small replicas packed onto one node (one 2-GPU GKE node, one 8-GPU server) all go down with it. Such a
service is planned on at least :data:`SPREAD_NODES` nodes (a second node where one would hold every replica: the plan
counts and prices it), and a pool it shares keeps that many. specgen renders no serving workload, so the finding
says what puts the replicas on different nodes: a topology spread constraint on the node's host name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING

from generator.planner.plan import Finding
from generator.units import figure_text
from generator.workload.models import InferenceDeployment

if TYPE_CHECKING:
    from generator.planner.inventory import ServerKey
    from generator.planner.option import Option
    from generator.planner.placement import HostReplica
    from generator.planner.plan import DeploymentPlan, Pool
    from generator.workload.models import Workload

#: Fewest nodes the replicas of a service with ``min_replicas`` of 2 or more run on.
SPREAD_NODES = 2

#: What makes the Kubernetes scheduler put the replicas on different nodes (the default spreads only as it scores).
SPREAD_CONSTRAINT = (
    "topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, "
    "labelSelector: <the replicas' pod labels>}]"
)
SPREAD_DOCS = "https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/"
#: Scoring nodes by how full they are (NodeResourcesFit MostAllocated, extended resources weighted).
BIN_PACKING_DOCS = "https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/"


def spread_services(wl: Workload) -> frozenset[str]:
    """The services whose replicas the plan spreads over hosts: ``min_replicas`` of :data:`SPREAD_NODES` or more."""
    return frozenset(
        d.name for d in wl.deployments if isinstance(d, InferenceDeployment) and d.inference.min_replicas >= SPREAD_NODES
    )


def spread_layouts(
    layouts: list[tuple[int, int]], replicas: int, min_replicas: int, hosts_per_node: int = 1
) -> list[tuple[int, int]]:
    """(GPUs per node, nodes) layouts with ``replicas`` on at least :data:`SPREAD_NODES` nodes where ``min_replicas`` asks.

    A node of several hosts (a rack-scale system's compute trays, each its own Kubernetes node) spreads them over its
    trays: no second node is bought for it (fuzz29 item 2: a second $3M NVL72 rack stood empty for min_replicas 2).
    """
    if min_replicas < SPREAD_NODES or hosts_per_node >= SPREAD_NODES:
        return layouts
    fewest = min(replicas, SPREAD_NODES)
    return [(per_node, max(nodes, fewest)) for per_node, nodes in layouts]


def packed_nodes(replicas: int, replica_gpus: int, gpus_per_node: int) -> int:
    """Nodes ``replicas`` of ``replica_gpus`` GPUs each fill, packed whole (wider replicas take nodes of their own)."""
    if replica_gpus > gpus_per_node:
        return replicas * -(-replica_gpus // gpus_per_node)
    return math.ceil(replicas / (gpus_per_node // replica_gpus))


def spread_note(replicas: int, replica_gpus: int, gpus_per_node: int, nodes: int) -> str:
    """Why ``nodes`` is more than the replicas fill (they were spread), for the text that names the layout."""
    return " (min_replicas spreads them)" if nodes > packed_nodes(replicas, replica_gpus, gpus_per_node) else ""


def spread_floor(opt: Option) -> int:
    """Nodes ``opt``'s replicas keep in any pool: more than their GPUs fill where they were spread, else 1."""
    if not opt.shares_servers:
        return 1
    c = opt.candidate
    if c.shares_per_gpu:  # replicas in shares of GPUs: the GPUs they fill, packed (review34 item 6: counted as whole)
        packed = math.ceil(math.ceil(c.replicas / c.shares_per_gpu) / c.gpus_per_node)
    else:
        packed = packed_nodes(c.replicas, opt.replica_shape.par.gpus, c.gpus_per_node)
    return c.nodes if c.nodes > packed else 1


def shared_nodes(parts: Iterable[Option]) -> dict[ServerKey, int]:
    """Servers of each kind the replicas of ``parts`` that share servers fill GPU by GPU.

    At least as many as ``min_replicas`` spreads one of them over (:func:`spread_floor`).
    """
    gpus: dict[ServerKey, Fraction] = {}
    spread: dict[ServerKey, int] = {}
    for part in parts:
        if part.shares_servers:
            gpus[part.busy_kind] = gpus.get(part.busy_kind, Fraction(0)) + part.gpus_used
            spread[part.busy_kind] = max(spread.get(part.busy_kind, 1), spread_floor(part))
    return {kind: max(math.ceil(held / kind[2]), spread[kind]) for kind, held in gpus.items()}


def spread_findings(wl: Workload, deployments: list[DeploymentPlan], pools: list[Pool]) -> list[Finding]:
    """Where ``min_replicas`` spreads a service's replicas over nodes: how many, and what keeps them apart.

    Where the pools' packing (:mod:`generator.planner.placement`) still puts every replica on one host, a warning
    says so (fuzz29 item 1: a TP1 service beside three TP4 replicas on two 8-GPU servers: one server holds two TP4,
    so both TP1 replicas share the other).
    """
    from generator.planner.placement import hosts_holding, pool_placement

    hosts_of = {pool.name: pool.hosts for pool in pools}  # a rack-scale system's trays are hosts (nodes) of their own
    index_of = {dep.name: index for index, dep in enumerate(wl.deployments)}
    spread = spread_services(wl)
    placements = {pool.name: pool_placement(deployments, pool, spread) for pool in pools} if spread else {}
    out = []
    for dep in deployments:
        asked = wl.deployments[index_of[dep.name]]
        spec = asked.inference if isinstance(asked, InferenceDeployment) else None
        if spec is None or dep.name not in spread:
            continue
        placed = [placements[name] for name in dep.pools]
        if dep.replicas >= SPREAD_NODES and all(placed) and sum(hosts_holding(p or [], dep.name) for p in placed) < 2:
            beside = sorted(d.name for d in deployments if any(d.in_pool(n) for n in dep.pools))
            out.append(
                Finding(
                    "warning",
                    "replicas-not-spread",
                    f"deployment {dep.name}: min_replicas {spec.min_replicas} asks for its replicas on two hosts or "
                    f"more, but its pool's GPUs hold the replicas of {', '.join(beside)} only with all of its replicas "
                    "on one host: give it a pool of its own (pool:) or more nodes, or one host's failure stops it",
                    f"deployments[{index_of[dep.name]}].inference.min_replicas",
                )
            )
            continue
        hosts = sum(hosts_of[name] for name in dep.pools)
        if wl.hardware.provider != "gcp" and (short := _node_down_text(dep, spec.requests_per_second, pools, placed)):
            out.append(
                Finding("warning", "node-down-capacity", short, f"deployments[{index_of[dep.name]}].inference.min_replicas")
            )
        out.append(
            Finding(
                "info",
                "replicas-spread",
                f"deployment {dep.name}: min_replicas {spec.min_replicas} plans its {dep.replicas} replicas on pools "
                f"of {hosts} host(s), so one host's upgrade, drain or failure leaves replicas serving; specgen renders "
                f"no serving workload: give its pods {SPREAD_CONSTRAINT} ({SPREAD_DOCS}) or a required podAntiAffinity "
                "on kubernetes.io/hostname, or the scheduler may still put them on one node",
                f"deployments[{index_of[dep.name]}].inference.min_replicas",
            )
        )
    return out


def _node_down_text(
    dep: DeploymentPlan, rate: float, pools: list[Pool], placed: list[list[list[HostReplica]] | None]
) -> str | None:
    """What a spread service keeps with the node holding the most of its replicas down, where it is below its rate.

    newuser48 item 4: on EKS and AKS (and bare metal) a drained or failed node took 4 of a chat service's 6 replicas,
    leaving 8.4 of its 25 req/s, and only GKE's upgrade warning said so. Counted as the plan places the replicas
    (node by node); None where the placement is not the plan's, or the rest hold the rate.
    """
    if dep.split or len(dep.pools) != 1 or placed[0] is None:
        return None
    from generator.planner.placement import most_on_a_node

    (pool,) = [p for p in pools if p.name == dep.pools[0]]
    most = most_on_a_node(placed[0], dep.name, pool.node.hosts)
    each = float(dep.details.get("requests_per_s_per_replica_max") or 0.0)
    left = (dep.replicas - most) * each
    if not each or left >= rate:
        return None
    return (
        f"deployment {dep.name}: with the node holding the most of its replicas down (an upgrade's drain, a "
        f"replacement or a failure), {dep.replicas - most} of its {dep.replicas} replicas serve "
        f"{left:.2f} req/s of the {figure_text(rate)} asked ({each:.2f} each within the SLOs): more replicas over more "
        "nodes (a higher min_replicas), or upgrades that add a node before draining one, keep the rate"
    )


def strands_a_replica(widths: list[int], nodes: int, gpus_per_node: int) -> bool:
    """Whether replicas of these widths (GPUs each), placed narrowest first each on the emptiest node, leave one out.

    That is the order Kubernetes' default scoring (least allocated) can take when the narrow pods come first.
    """
    free = [gpus_per_node] * nodes
    for width in sorted(widths):
        emptiest = max(range(nodes), key=lambda n: free[n])
        if free[emptiest] < width:
            return True
        free[emptiest] -= width
    return False


def packing_findings(deployments: list[DeploymentPlan], pools: list[Pool]) -> list[Finding]:
    """Pools whose nodes hold their services' replicas of different widths only packed as planned (newuser31 item 4).

    Three TP4 and two TP1 replicas fit two 8-GPU nodes as 4+4 and 4+1+1; Kubernetes' default scoring spreads pods by
    CPU and memory, not GPUs, so the two TP1 pods placed first on different nodes leave 7 + 7 GPUs: the third TP4 stays
    Pending (and a Karpenter NodePool launches a node more). Said where that order strands a replica
    (:func:`strands_a_replica`).
    """
    out = []
    for pool in pools:
        names: list[str] = []
        widths: list[int] = []
        for dep in deployments:
            layout = dep.in_pool(pool.name)
            if dep.kind == "inference" and layout is not None:
                names.append(dep.name)
                widths += [layout[0] * layout[1]] * layout[2]
        kinds = sorted(set(widths), reverse=True)
        if pool.nodes < 2 or len(kinds) < 2 or kinds[0] > pool.node.gpus:
            continue
        if not strands_a_replica(widths, pool.nodes, pool.node.gpus):
            continue
        out.append(
            Finding(
                "warning",
                "pool-packing",
                f"pool {pool.name}: its {pool.nodes} nodes hold the replicas of {', '.join(sorted(names))} ("
                + ", ".join(f"{w}-GPU" for w in kinds)
                + f") only packed as planned, the {kinds[0]}-GPU replicas together; Kubernetes' default scheduler "
                "scores nodes by CPU and memory, not GPUs, so narrower pods placed first on different nodes can leave "
                f"none with {kinds[0]} GPUs free, and that replica stays Pending (a Karpenter NodePool launches a node "
                "more): schedule the widest replicas first, score nodes MostAllocated with nvidia.com/gpu weighted "
                f"({BIN_PACKING_DOCS}), or give the services pools of their own (pool:)",
                "deployments",
            )
        )
    return out
