"""Replicas spread over nodes, and what one node down leaves of a service.

fuzz21 item 2: ``min_replicas: 2`` is what a service sets to stay up while a replica's node is upgraded, drained or
fails, yet two small replicas packed onto one node (one 2-GPU GKE node, one 8-GPU server) all go down with it. Such a
service is planned on at least :data:`SPREAD_NODES` nodes (a second node where one would hold every replica: the plan
counts and prices it), and a pool it shares keeps that many. ``nodes_down_tolerated`` (N+k, newuser63 item 3) runs the
replicas that keep the rate with k nodes down, spread evenly (:func:`tolerant_layouts`). specgen renders no serving
workload, so the finding says what puts the replicas on different nodes: a topology spread constraint on the node's
host name; and every service is told what the node holding the most of its replicas down leaves
(:func:`node_down_finding`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from generator import catalog
from generator.planner.plan import Finding
from generator.planner.slo import held_to
from generator.units import figure_text, hours_text
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
    layouts: list[tuple[int, int]],
    needed: int,
    replica_gpus: int,
    per_gpu: int,
    hosts_per_node: int,
    down: int,
    floor: int = 1,
) -> list[tuple[tuple[int, int], int]]:
    """Each (GPUs per node, nodes) layout of ``layouts`` resized to keep ``needed`` replicas with ``down`` hosts down.

    Returns ((GPUs per node, nodes), replicas) pairs (N+``down``), at least ``floor`` replicas (``min_replicas``, which
    is not what must survive: review41 item 2). ``needed``: the replicas the rate takes at ``max_utilization``. A host
    is a Kubernetes node (a rack-scale system's compute tray is one). Replicas within a host (``per_gpu`` of them a GPU
    where GPUs are shared) are spread evenly over the fewest hosts that keep ``needed`` with ``down`` of them out
    (``down + ceil(needed / per host)``), the fewest replicas that do so spread evenly (3 TP1 replicas on 8-GPU nodes:
    2 nodes of 3, not 11 packed; 9 on three nodes: 5 + 5 + 4). A replica spanning hosts loses one replica a host down,
    or two where its width is no multiple of a host's (6-GPU replicas on 4-GPU trays share a tray: review41 item 4).
    """
    out = []
    for gpus_per_node, _ in layouts:
        host_gpus = gpus_per_node // hosts_per_node
        if replica_gpus > host_gpus:
            touched = 1 if replica_gpus % host_gpus == 0 else 2  # replicas one host down takes
            replicas = max(floor, needed + down * touched)
            out.append(((gpus_per_node, packed_nodes(replicas, replica_gpus, gpus_per_node)), replicas))
            continue
        per_host = host_gpus // replica_gpus * per_gpu
        hosts = down + math.ceil(needed / per_host)
        replicas = needed
        while replicas - even_loss(replicas, hosts, down) < needed:  # the fewest that keep it, spread evenly
            replicas += 1
        if replicas < floor:  # min_replicas above: its replicas spread evenly over enough hosts to keep the rate
            replicas = floor
            hosts = max(hosts, math.ceil(floor / per_host))
            while floor - even_loss(floor, hosts, down) < needed:
                hosts += 1
        out.append(((gpus_per_node, math.ceil(hosts / hosts_per_node)), replicas))
    return out


def option_tolerant(opt: Option, spec: InferenceSpec, needed: int) -> tuple[int, int]:
    """(replicas, nodes) at ``opt``'s node size that keep ``needed`` replicas with ``nodes_down_tolerated`` hosts down."""
    c = opt.candidate
    ((_, nodes), replicas), *_ = tolerant_layouts(
        [(c.gpus_per_node, c.nodes)],
        needed,
        opt.replica_shape.par.gpus,
        c.shares_per_gpu or 1,
        opt.hardware.platform.hosts,
        spec.nodes_down_tolerated,
        spec.min_replicas,
    )
    return replicas, nodes


def even_loss(replicas: int, hosts: int, down: int) -> int:
    """Replicas lost with the ``down`` busiest of ``hosts`` out, ``replicas`` spread evenly over them.

    Evenly, ``replicas % hosts`` hosts hold one more than the rest (review42 item 1: 4 on 3 hosts are 2, 1, 1, so two
    down take 3, not 2 x 2).
    """
    share, more = divmod(replicas, hosts)
    return down * share + min(down, more)


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


def spread_note(replicas: int, replica_gpus: int, gpus_per_node: int, nodes: int, field: str) -> str:
    """Why ``nodes`` is more than the replicas fill (``field`` spread them), for the text that names the layout."""
    return f" ({field} spreads them)" if nodes > packed_nodes(replicas, replica_gpus, gpus_per_node) else ""


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

    by_name = {pool.name: pool for pool in pools}
    index_of = {dep.name: index for index, dep in enumerate(wl.deployments)}
    spread = spread_services(wl)
    placements: dict[str, list[list[HostReplica]] | None] = {}
    out = []
    for dep in deployments:
        asked = wl.deployments[index_of[dep.name]]
        if not isinstance(asked, InferenceDeployment):
            continue
        spec, at = asked.inference, f"deployments[{index_of[dep.name]}].inference"
        if dep.name in spread:
            for name in dep.pools:
                if name not in placements:
                    placements[name] = pool_placement(deployments, by_name[name], spread, laid_out=False)
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
                        f"{at}.{spread_field(spec)}",
                    )
                )
                continue
            hosts = sum(by_name[name].hosts for name in dep.pools)  # a rack-scale system's trays are hosts of their own
            out.append(
                Finding(
                    "info",
                    "replicas-spread",
                    f"deployment {dep.name}: {spread_asked(spec)} plans its {dep.replicas} replicas on pools of {hosts} "
                    f"host(s), so {_hosts_down(spec)} upgrade, drain or failure leaves replicas serving; specgen renders no "
                    f"serving workload: give its pods {SPREAD_CONSTRAINT} ({SPREAD_DOCS}) or a required podAntiAffinity "
                    "on kubernetes.io/hostname, or the scheduler may still put them on one node",
                    f"{at}.{spread_field(spec)}",
                )
            )
        if down := node_down_finding(dep, spec, by_name, placements, dep.name in spread, at, gke_upgrades(wl)):
            out.append(down)
    return out


#: A pod's terminationGracePeriodSeconds where none is given: what a drain waits for its requests by default
#: (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination).
POD_GRACE_DEFAULT_S = 30


def drain_grace_text(deployments: Iterable[DeploymentPlan], cut_by: str = "a drain") -> str:
    """What a drain of these services' nodes must wait for: their requests longer than a pod's default grace.

    ``cut_by``: what the text says cuts the requests (a scale-in's finding: "scaling in, like a drain,").

    newuser72 item 5: a 32k-token reasoning request lasts ~20 min, and a drain (an upgrade, a Karpenter disruption, a
    scale-in) gives the pods terminationGracePeriodSeconds, 30 s by default, before it kills them; "" where every
    request ends within that (``request_s`` is set only past it).
    """
    long = [(d.name, float(d.details["request_s"])) for d in deployments if d.details.get("request_s")]
    if not long:
        return ""
    each = ", ".join(f"{math.ceil(s):,} s in {name}" for name, s in long)
    return (
        f"; {cut_by} cuts the requests in flight past the engine pods' terminationGracePeriodSeconds "
        f"({POD_GRACE_DEFAULT_S} s unless set), and a request lasts {each} (request_s): give those pods at least that "
        "and a preStop hook that stops admission and waits for the running requests"
    )


def gke_upgrades(wl: Workload) -> bool:
    """Whether GKE auto-upgrades the rendered node pools: every node is drained in turn (:mod:`generator.render.gke`)."""
    return wl.hardware.provider == "gcp" and "kubernetes" in wl.outputs


def _hosts_down(spec: InferenceSpec) -> str:
    """The hosts a spread service is planned to lose, as the spread finding says them (review42 item 3)."""
    return "one host's" if spec.nodes_down_tolerated < 2 else f"{spec.nodes_down_tolerated} hosts'"


def spread_field(spec: InferenceSpec) -> str:
    """The field that spreads a service over nodes, where one does (the one that asks more: N+k over a floor)."""
    return "nodes_down_tolerated" if spec.nodes_down_tolerated else "min_replicas"


def spread_asked(spec: InferenceSpec) -> str:
    """The field that spreads a service, as set (``min_replicas 2``, ``nodes_down_tolerated 1``)."""
    field = spread_field(spec)
    return f"{field} {getattr(spec, field)}"


def replicas_a_node_holds(node_gpus: int, replica_gpus: int, shares_per_gpu: int | None, trays: bool = False) -> int:
    """The most replicas one node takes: as many as its GPUs (or their shares) hold, else those with a rank on it.

    A replica wider than a node has a rank on one node of its own (each takes whole nodes:
    :func:`packed_nodes`), but ``trays`` (a rack-scale system's compute trays, hosts of one node, which replicas are
    packed across) a tray holds ranks of two where the width is no multiple of a tray's GPUs, as
    :func:`tolerant_layouts` counts a host down (fix141: node-down-capacity counted one).
    """
    if replica_gpus > node_gpus:
        return 2 if trays and replica_gpus % node_gpus else 1
    return node_gpus // replica_gpus * (shares_per_gpu or 1)


def node_down_finding(
    dep: DeploymentPlan,
    spec: InferenceSpec,
    by_name: Mapping[str, Pool],
    placed: Mapping[str, list[list[HostReplica]] | None],
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
    info: no spare node is what was asked (N+0). None where the rest hold the rate. A split service's replicas on its
    two kinds of servers count together (review41 item 1: an owned + bought split was taken for N+1 without a word).
    """
    parts = [
        (p.pool, p.replicas, max(p.tp, p.expert_parallel or 1) * p.pp, p.requests_per_s_per_replica_max) for p in dep.split
    ] or [(dep.pool, dep.replicas, dep.stage_gpus * dep.pp, float(dep.details.get("requests_per_s_per_replica_max") or 0.0))]
    # requests are routed evenly over the replicas of both parts of a split: the slowest sets what each serves
    each = min(part[3] for part in parts)
    if not each:
        return None
    held = [
        n for name, count, width, _ in parts for n in _by_host(by_name[name], dep.name, count, width, spread, placed.get(name))
    ]
    down = max(1, spec.nodes_down_tolerated)  # fz65 item 2: N+2 in a shared pool was checked with one node down
    most = sum(sorted(held, reverse=True)[:down])
    pool = by_name[parts[0][0]]
    left = _held(dep, dep.replicas - most, each)
    stopped = "its run until they are back" if spec.job else "the service"
    cause = "(a failure, a repair, a drain" + (
        ": GKE's auto-upgrades drain every node in turn, and its replicas start again on the surge node)" if upgraded else ")"
    )
    # a batch job's run on the replicas left: past its deadline exactly where they serve less than its rate
    runs_on = spec.requests_per_run / left / 3600 if spec.requests_per_run is not None and left > 0 else None
    if left >= spec.requests_per_second:
        when = _floor_text(dep, spec, pool, spread, each, cause, down)
        if when is None:
            return None
    elif most == dep.replicas and down > 1:
        when = f"all {dep.replicas} of its replicas run on {down} nodes or fewer: those down {cause} stop {stopped}"
    elif most == dep.replicas:
        hosts_a_replica = math.ceil(dep.stage_gpus * dep.pp / (pool.node.gpus // pool.node.hosts))
        if dep.replicas == 1 and hosts_a_replica > 1:  # review41 item 7: a replica over two nodes ran "on one node"
            when = f"its one replica spans {hosts_a_replica} nodes: any of them down {cause} stops {stopped}"
        else:
            run = "runs" if dep.replicas == 1 else "run" if spread or pool.hosts == 1 else "may run"
            which = {1: "its one replica", 2: "both of its replicas"}.get(dep.replicas, f"all {dep.replicas} of its replicas")
            when = f"{which} {run} on one node: that node down {cause} stops {stopped}"
    else:
        serve = "serves" if dep.replicas - most == 1 else "serve"
        when = (
            f"with {_busiest(down)} down {cause}, {dep.replicas - most} of its {dep.replicas} replicas {serve} {left:,.2f} req/s "
            f"of the {figure_text(spec.requests_per_second)} asked"
        )
        if runs_on is not None:  # a batch job: what matters is its run against the deadline (review66 item 12)
            when += f": a run then takes {hours_text(runs_on)}, past its {hours_text(spec.deadline_hours or 0.0)} deadline"
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
        f"deployment {dep.name}: {when} ({each:,.2f} each {held_to(spec)}{_less_wait(dep, dep.replicas - most, each)}); "
        f"{remedy}{drain_grace_text([dep])}",
        f"{at}.{fields[0]}" if fields else at,
    )


#: The fields with which a service asks for headroom or spread, by whether it does: a node down short of them warns.
_AVAILABILITY_FIELDS: dict[str, Callable[[InferenceSpec], bool]] = {
    "nodes_down_tolerated": lambda spec: spec.nodes_down_tolerated > 0,
    "min_replicas": lambda spec: spec.min_replicas >= SPREAD_NODES,
    "max_utilization": lambda spec: spec.max_utilization < 1,
}


def _busiest(down: int) -> str:
    """The nodes a check takes out, as its text says them."""
    return "the node holding the most of its replicas" if down == 1 else f"the {down} nodes holding the most of them"


def _by_host(pool: Pool, name: str, replicas: int, width: int, spread: bool, placed: list[list[HostReplica]] | None) -> list[int]:
    """How many of ``name``'s ``replicas`` (``width`` GPUs each) the hosts of ``pool`` hold, or may hold."""
    from generator.planner.placement import replicas_by_host

    holds = replicas_a_node_holds(pool.node.gpus // pool.node.hosts, width, pool.shares_per_gpu, pool.node.hosts > 1)
    if not spread:  # nothing keeps them apart: as many as a host takes, host after host
        return [holds] * (replicas // holds) + ([replicas % holds] if replicas % holds else [])
    if placed is not None:
        return replicas_by_host(placed, name)
    # GPUs shared between pods: evenly, as a spread constraint keeps them
    hosts = min(replicas, pool.hosts)
    return [replicas // hosts + (1 if h < replicas % hosts else 0) for h in range(hosts)]


def _held(dep: DeploymentPlan, replicas: int, each: float) -> float:
    """Requests/s ``replicas`` of ``dep``'s serve within the SLOs, ``each`` at most a replica (a split's slowest part's).

    Together held to what keeps the p95 wait for a place in their batch within the TTFT target's slack, as the count
    was sized (:meth:`DeploymentPlan.sustained_rate`; m74a item 4: one of two replicas of 6.78 req/s was said to serve
    6.78, every one of its places taken); a split service (not slot-sized) ``replicas x each``.
    """
    return replicas * each if dep.slot_queue is None or dep.split else dep.sustained_rate(replicas)


def _less_wait(dep: DeploymentPlan, replicas: int, each: float) -> str:
    """', less the wait for a place in the batch' where that wait holds ``replicas`` of ``dep``'s below ``each`` apiece."""
    return ", less the wait for a place in the batch" if round(_held(dep, replicas, each), 2) < round(replicas * each, 2) else ""


def _floor_text(
    dep: DeploymentPlan, spec: InferenceSpec, pool: Pool, spread: bool, each: float, cause: str, down: int
) -> str | None:
    """What the scaled-down floor keeps of the average with ``down`` nodes down, where below it (newuser63 item 8)."""
    average, floor = spec.average_requests_per_second, dep.details.get("replicas_at_average")
    if average is None or not isinstance(floor, int) or pool.min_nodes is None:
        return None
    hosts = pool.min_nodes * pool.node.hosts
    holds = replicas_a_node_holds(
        pool.node.gpus // pool.node.hosts, dep.stage_gpus * dep.pp, pool.shares_per_gpu, pool.node.hosts > 1
    )
    most = even_loss(floor, hosts, down) if spread else min(floor, down * holds)
    left = _held(dep, floor - most, each)
    if left >= average:
        return None
    return (
        f"scaled down to {floor} replica(s) on {pool.min_nodes} node(s) for its {figure_text(average)} req/s average, "
        f"with {_busiest(down)} down {cause}, {floor - most} {'serves' if floor - most == 1 else 'serve'} {left:.2f} "
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
        # newuser103 item 1: the resource to weight is the pool's device plugin's (amd.com/gpu on MI300X, was always
        # nvidia.com/gpu), and owned bare-metal nodes have no Karpenter NodePool to launch a node more
        resource = catalog.gpus()[pool.node.gpu_id].device_resource
        launches = "" if pool.node.provider == "baremetal" else " (a Karpenter NodePool launches a node more)"
        out.append(
            Finding(
                "warning",
                "pool-packing",
                f"pool {pool.name}: its {pool.nodes} nodes hold the replicas of {', '.join(sorted(names))} ("
                + ", ".join(f"{w}-GPU" for w in kinds)
                + f") only packed as planned, the {kinds[0]}-GPU replicas together; Kubernetes' default scheduler "
                "scores nodes by CPU and memory, not GPUs, so narrower pods placed first on different nodes can leave "
                f"none with {kinds[0]} GPUs free, and that replica stays Pending{launches}: schedule the widest "
                f"replicas first, score nodes MostAllocated with {resource} weighted "
                f"({BIN_PACKING_DOCS}), or give the services pools of their own (pool:)",
                "deployments",
            )
        )
    return out
