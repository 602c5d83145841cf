"""Replicas spread over nodes: ``inference.min_replicas`` 2 or more plans them on at least two nodes.

fuzz21 item 2: ``min_replicas: 2`` is what a service sets to stay up while a replica's node is upgraded, drained or
fails, yet two small replicas packed onto one node (one 2-GPU GKE node, one 8-GPU server) all go down with it. Such a
service is planned on at least :data:`SPREAD_NODES` nodes (a second node where one would hold every replica: the plan
counts and prices it), and a pool it shares keeps that many. specgen renders no serving workload, so the finding
says what puts the replicas on different nodes: a topology spread constraint on the node's host name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import TYPE_CHECKING

from generator.planner.plan import Finding
from generator.units import figure_text
from generator.workload.models import InferenceDeployment, InferenceSpec

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


def spreads(spec: InferenceSpec) -> bool:
    """Whether the plan spreads a service's replicas over hosts (``min_replicas`` 2 or more, ``nodes_down_tolerated``)."""
    return spec.min_replicas >= SPREAD_NODES or spec.nodes_down_tolerated > 0


def spread_services(wl: Workload) -> frozenset[str]:
    """The services whose replicas the plan spreads over hosts (:func:`spreads`)."""
    return frozenset(d.name for d in wl.deployments if isinstance(d, InferenceDeployment) and spreads(d.inference))


def tolerant_layouts(
    layouts: list[tuple[int, int]], needed: int, replica_gpus: int, per_gpu: int, hosts_per_node: int, down: int
) -> list[tuple[tuple[int, int], int]]:
    """Each (GPUs per node, nodes) layout of ``layouts`` resized to keep ``needed`` replicas with ``down`` hosts down.

    Returns ((GPUs per node, nodes), replicas) pairs (N+``down``). A host is a Kubernetes node (a rack-scale system's
    compute tray is one). Replicas within a host (``per_gpu`` of them a GPU where GPUs are shared) are spread evenly
    over the fewest hosts that keep ``needed`` with ``down`` of them out: ``down + ceil(needed / per host)`` hosts of
    ``ceil(needed / (hosts - down))`` each (3 TP1 replicas on 8-GPU nodes: 2 nodes of 3, not 11 packed). A replica
    spanning hosts loses one replica a host down, so ``down`` more are run.
    """
    out = []
    for gpus_per_node, _ in layouts:
        host_gpus = gpus_per_node // hosts_per_node
        if replica_gpus > host_gpus:
            replicas = needed + down
            out.append(((gpus_per_node, packed_nodes(replicas, replica_gpus, gpus_per_node)), replicas))
            continue
        hosts = down + math.ceil(needed / (host_gpus // replica_gpus * per_gpu))
        replicas = hosts * math.ceil(needed / (hosts - down))
        out.append(((gpus_per_node, math.ceil(hosts / hosts_per_node)), replicas))
    return out


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
    """What one node down leaves of each service, and where the plan spreads replicas, what keeps them apart.

    Where the pools' packing (:mod:`generator.planner.placement`) still puts every replica of a spread service on one
    host, a warning says so (fuzz29 item 1: a TP1 service beside three TP4 replicas on two 8-GPU servers: one server
    holds two TP4, so both TP1 replicas share the other).
    """
    from generator.planner.placement import hosts_holding, pool_placement

    hosts_of = {pool.name: pool.hosts for pool in pools}  # a rack-scale system's trays are hosts (nodes) of their own
    index_of = {dep.name: index for index, dep in enumerate(wl.deployments)}
    spread = spread_services(wl)
    placements: dict[str, list[list[HostReplica]] | None] = {}
    out = []
    for dep in deployments:
        asked = wl.deployments[index_of[dep.name]]
        if not isinstance(asked, InferenceDeployment):
            continue
        spec, at = asked.inference, f"deployments[{index_of[dep.name]}].inference"
        placed: list[list[list[HostReplica]] | None] = [None]  # read for a spread service only
        if dep.name in spread:
            for name in dep.pools:
                if name not in placements:
                    placements[name] = pool_placement(deployments, next(p for p in pools if p.name == name), spread)
            placed = [placements[name] for name in dep.pools]
            if dep.replicas >= SPREAD_NODES and all(placed) and sum(hosts_holding(p or [], dep.name) for p in placed) < 2:
                beside = sorted(d.name for d in deployments if any(d.in_pool(n) for n in dep.pools))
                out.append(
                    Finding(
                        "warning",
                        "replicas-not-spread",
                        f"deployment {dep.name}: {spread_asked(spec)} asks for its replicas on two hosts or more, but "
                        f"its pool's GPUs hold the replicas of {', '.join(beside)} only with all of its replicas on one "
                        "host: give it a pool of its own (pool:) or more nodes, or one host's failure stops it",
                        f"{at}.{_spread_field(spec)}",
                    )
                )
                continue
            hosts = sum(hosts_of[name] for name in dep.pools)
            out.append(
                Finding(
                    "info",
                    "replicas-spread",
                    f"deployment {dep.name}: {spread_asked(spec)} plans its {dep.replicas} replicas on pools of {hosts} "
                    "host(s), so one host's upgrade, drain or failure leaves replicas serving; specgen renders no "
                    f"serving workload: give its pods {SPREAD_CONSTRAINT} ({SPREAD_DOCS}) or a required podAntiAffinity "
                    "on kubernetes.io/hostname, or the scheduler may still put them on one node",
                    f"{at}.{_spread_field(spec)}",
                )
            )
        if down := node_down_finding(dep, spec, pools, placed[0], dep.name in spread, at, gke_upgrades(wl)):
            out.append(down)
    return out


def gke_upgrades(wl: Workload) -> bool:
    """Whether GKE auto-upgrades the rendered node pools: every node is drained in turn (:mod:`generator.render.gke`)."""
    return wl.hardware.provider == "gcp" and "kubernetes" in wl.outputs


def _spread_field(spec: InferenceSpec) -> str:
    return "nodes_down_tolerated" if spec.nodes_down_tolerated else "min_replicas"


def spread_asked(spec: InferenceSpec) -> str:
    """The field that spreads a service, as set (``min_replicas 2``, ``nodes_down_tolerated 1``)."""
    field = _spread_field(spec)
    return f"{field} {getattr(spec, field)}"


def replicas_a_node_holds(node_gpus: int, replica_gpus: int, shares_per_gpu: int | None) -> int:
    """The most replicas one node takes: as many as its GPUs (or their shares) hold, else 1 (a replica spans nodes)."""
    return 1 if replica_gpus > node_gpus else node_gpus // replica_gpus * (shares_per_gpu or 1)


def node_down_finding(
    dep: DeploymentPlan,
    spec: InferenceSpec,
    pools: list[Pool],
    placed: list[list[HostReplica]] | None,
    spread: bool,
    at: str,
    upgraded: bool = False,
) -> Finding | None:
    """What a service keeps with the node holding the most of its replicas down, where that is below its rate.

    newuser48 item 4, newuser63 items 1, 2 and 8: a drained or failed node took 4 of a chat service's 6 replicas, and a
    one-node fleet (``max_utilization`` 0.5 chose one 8-GPU node) all of them, on every provider and whatever
    ``min_replicas``. A node is a Kubernetes node (a host). A spread service is counted as the plan places it; any other
    as many as a node takes, which the scheduler may pack there. At a scaled-down floor (``average_requests_per_second``
    on a cloud) the floor's replicas are checked against the average. A warning where the service asked for headroom
    or spread (``min_replicas`` 2 or more, ``max_utilization`` below 1, ``nodes_down_tolerated``) or GKE drains every
    node for its auto-upgrades (``upgraded``: newuser31 item 3's ``gke-upgrade-capacity``, one check now), else an
    info: no spare node is what was asked (N+0). None where the rest hold the rate, or the service is split.
    """
    from generator.planner.placement import most_on_a_node

    if dep.split or len(dep.pools) != 1:
        return None
    (pool,) = [p for p in pools if p.name == dep.pools[0]]
    each = float(dep.details.get("requests_per_s_per_replica_max") or 0.0)
    if not each:
        return None
    holds = replicas_a_node_holds(pool.node.gpus // pool.node.hosts, dep.tp * dep.pp, pool.shares_per_gpu)
    if not spread:
        most = min(dep.replicas, holds)
    elif placed is not None:
        most = most_on_a_node(placed, dep.name, 1)
    else:  # GPUs shared between pods: placed by the scheduler, evenly where a spread constraint keeps them apart
        most = min(holds, math.ceil(dep.replicas / pool.hosts))
    left = (dep.replicas - most) * each
    cause = "(a failure, a repair, a drain" + (
        ": GKE's auto-upgrades drain every node in turn, and its replicas start again on the surge node)" if upgraded else ")"
    )
    if left >= spec.requests_per_second:
        when = _floor_text(dep, spec, pool, spread, each, cause)
        if when is None:
            return None
    elif most == dep.replicas:
        run = "runs" if dep.replicas == 1 else "run" if spread or pool.hosts == 1 else "may run"
        held = "its one replica" if dep.replicas == 1 else f"all {dep.replicas} of its replicas"
        when = f"{held} {run} on one node: that node down {cause} stops the service"
    else:
        when = (
            f"with the node holding the most of its replicas down {cause}, {dep.replicas - most} "
            f"of its {dep.replicas} replicas serve {left:.2f} req/s of the {figure_text(spec.requests_per_second)} asked"
        )
    fields = [f for f, asked in _AVAILABILITY_FIELDS.items() if asked(spec)]
    if spec.nodes_down_tolerated:
        remedy = (
            f"nodes_down_tolerated {spec.nodes_down_tolerated} is not kept as its pool's replicas are placed: give it "
            "a pool of its own (pool:)"
        )
    else:
        remedy = (
            "set inference.nodes_down_tolerated: 1 to plan N+1 (the replicas and nodes that keep the rate with one node "
            "down, counted and priced)"
        )
    if "max_utilization" in fields:
        remedy = f"max_utilization {spec.max_utilization:g} keeps headroom on the replicas, not on a node: " + remedy
    if upgraded:
        remedy += ", or a maintenance window or exclusion on the cluster outside busy hours"
    return Finding(
        "warning" if fields or upgraded else "info",
        "node-down-not-kept" if spec.nodes_down_tolerated else "node-down-capacity",
        f"deployment {dep.name}: {when} ({each:.2f} each within the SLOs); {remedy}",
        f"{at}.{fields[0]}" if fields else at,
    )


#: The fields with which a service asks for headroom or spread, by whether it does: a node down short of them warns.
_AVAILABILITY_FIELDS: dict[str, Callable[[InferenceSpec], bool]] = {
    "nodes_down_tolerated": lambda spec: spec.nodes_down_tolerated > 0,
    "min_replicas": lambda spec: spec.min_replicas >= SPREAD_NODES,
    "max_utilization": lambda spec: spec.max_utilization < 1,
}


def _floor_text(dep: DeploymentPlan, spec: InferenceSpec, pool: Pool, spread: bool, each: float, cause: str) -> str | None:
    """What the scaled-down floor keeps of the average with one node down, where below it (newuser63 item 8)."""
    average, floor = spec.average_requests_per_second, dep.details.get("replicas_at_average")
    if average is None or not isinstance(floor, int) or pool.min_nodes is None:
        return None
    hosts = pool.min_nodes * pool.node.hosts
    holds = replicas_a_node_holds(pool.node.gpus // pool.node.hosts, dep.tp * dep.pp, pool.shares_per_gpu)
    most = min(holds, math.ceil(floor / hosts)) if spread else min(floor, holds)
    left = (floor - most) * each
    if left >= average:
        return None
    return (
        f"scaled down to {floor} replica(s) on {pool.min_nodes} node(s) for its {figure_text(average)} req/s average, "
        f"with the node holding the most of them down {cause} {floor - most} serve {left:.2f} "
        "req/s of it until a node starts and loads the model"
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
