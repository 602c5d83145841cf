"""Which serving replicas each Linux host of a pool runs, and on which of its GPUs.

newuser36 item 6: a pool's group vars list each service with its pool-wide ``replicas``, so a role starting the
services host by host (systemd or podman, the air-gapped colo path without a Kubernetes scheduler) started every
replica on every host: 8 chat replicas on each of two 8-GPU hosts that the plan had packed as 4 + 4 beside a TP4
replica. The planner counts a shared pool's nodes from the GPUs its replicas take (:mod:`generator.planner.spread`
says where only one packing holds them); this is that packing, made explicit, node by node (a node is what is
bought and racked: a server, or a rack-scale system whose compute trays are its hosts, one NVLink domain):

- the widest replicas first; one wider than a node takes whole nodes of its own (the engine launched multi-node);
- one that fits a host goes to the first host with as many GPUs free; a service with ``min_replicas`` of 2 or more
  to the host holding the fewest of its replicas among those with room (the plan spreads it: ``spread.py``);
- once every host's replicas are known (after a spread service's replica moved between hosts), each host's are laid
  out on its GPUs widest first, each on the first free block aligned to its width (a TP4 replica gets GPUs 0-3 or
  4-7 of an 8-GPU host, a TP2 one 0-1 or 2-3 of a 4-GPU one), TP1 replicas on the GPUs left (``gpu_block``);
- one wider than a host (a rack-scale system's tray) takes the lowest free GPUs of the first node with room, over
  as many of its trays as that takes: a replica never spans two nodes it fits one of (fuzz29 item 3: replica 5 of
  a TP4 x PP4 service ran on trays of two NVL72 racks), and trays are shared GPU by GPU as the planner counts them
  (fuzz29 item 4: whole trays a replica left the pool's 11 TP2 x PP3 replicas without a placement).

A pool that holds a training job (jobs of a chain take the same GPUs one after another) gets none: its launcher
places it; so does one whose GPUs Kubernetes shares (the render's decision, ``kubernetes.gpu_sharing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil

from generator.named_tuple import NamedTuple
from generator.planner.plan import DeploymentPlan, Pool


class HostReplica(NamedTuple):
    """One replica (or one host's part of a replica over several hosts) a host runs."""

    deployment: str
    #: The replica's number among the service's replicas in the pool, from 1.
    replica: int
    #: The host's GPUs (indices from 0) the replica takes there.
    gpus: tuple[int, ...]
    #: For a replica over several hosts: this host's place among them, from 1 (the engine's node rank + 1).
    host_of_replica: int | None = None

    def as_vars(self) -> dict[str, object]:
        """The host var entry (``specgen_replicas``): a replica over several hosts also says its place among them."""
        out: dict[str, object] = {"deployment": self.deployment, "replica": self.replica, "gpus": list(self.gpus)}
        return out if self.host_of_replica is None else {**out, "host_of_replica": self.host_of_replica}


def pool_placement(
    deployments: Sequence[DeploymentPlan], pool: Pool, spread: frozenset[str], *, laid_out: bool = True
) -> list[list[HostReplica]] | None:
    """The replicas each host of ``pool`` runs, host by host (node by node, each node's hosts in turn); None: none.

    ``spread``: the services whose replicas the plan spreads (:func:`~generator.planner.spread.spreads`). The hosts are in the
    inventory's order: the pool's owned ones, then its bought ones (:func:`generator.render.hosts.host_racks`).
    ``laid_out`` False: each host's replicas, each with as many GPUs as laid out, but not which (:func:`_lay_out` skipped:
    it only picks a host's GPUs for the replicas already on it, as many as each took; callers that count the replicas or
    GPUs a host runs need no more, and a 25,000-replica pool was laid out GPU by GPU each time, perf141).
    """
    replicas: list[tuple[int, int, str, int]] = []  # (-width, order, name, replica number)
    for order, dep in enumerate(deployments):
        share = dep.in_pool(pool.name)
        if share is None:
            continue
        if dep.kind != "inference":
            return None
        tp, pp, count, _ = share
        # a replica's GPUs: TP x PP, or EP x PP where its attention runs data-parallel (newuser72 item 1)
        replicas += [
            (-(max(tp, dep.expert_parallel_in(pool.name)) * pp), order, dep.name, number) for number in range(1, count + 1)
        ]
    if not replicas:
        return None
    node_gpus, per_node = pool.node.gpus, pool.node.hosts
    per_host = node_gpus // per_node
    free = [list(range(node_gpus)) for _ in range(pool.nodes)]  # each node's free GPUs, in its GPU space
    placed: list[list[HostReplica]] = [[] for _ in range(pool.nodes * per_node)]
    # the first pass only takes GPUs: a host too full for a width stays so, and the first with room for a width is
    # found from where the last search for it stopped (fz62 item 3: a 6,121-node pool rendered in 72 s, every host
    # checked for every replica)
    room = [per_host] * len(placed)
    first_with_room: dict[int, int] = {}
    first_empty = 0

    def on_host(host: int) -> list[int]:
        node, first = divmod(host, per_node)
        return [g for g in free[node] if first * per_host <= g < (first + 1) * per_host]

    def fewest(hosts: list[int], name: str) -> list[int]:
        """``hosts`` with those holding the fewest of ``name``'s replicas first (stable: in order within)."""
        return sorted(hosts, key=lambda h: sum(r.deployment == name for r in placed[h]))

    for negative_width, _, name, number in sorted(replicas):
        width = -negative_width
        if width > node_gpus:  # whole nodes of its own, the next empty ones
            while first_empty < pool.nodes and len(free[first_empty]) < node_gpus:
                first_empty += 1
            empty = [n for n in range(first_empty, pool.nodes) if len(free[n]) == node_gpus][: ceil(width / node_gpus)]
            if node_gpus * len(empty) < width:
                return None
            gpus = [n * node_gpus + g for n in empty for g in range(node_gpus)][:width]
            for n in empty:
                free[n] = []
                room[n * per_node : (n + 1) * per_node] = [0] * per_node
        else:
            host = None
            if width <= per_host and name in spread:
                hosts = [h for h in range(len(placed)) if room[h] >= width]
                host = fewest(hosts, name)[0] if hosts else None
            elif width <= per_host:
                h = first_with_room.get(width, 0)
                while h < len(placed) and room[h] < width:
                    h += 1
                first_with_room[width] = h
                host = h if h < len(placed) else None
            if host is not None:  # within one host
                node = host // per_node
                taken = on_host(host)[:width]
            else:  # over several hosts of one node (a rack-scale system's trays)
                nodes = [n for n in range(pool.nodes) if len(free[n]) >= width]
                if not nodes:
                    return None  # the planner's GPU count holds these widths; never expected
                node = nodes[0]
                taken = free[node][:width]
            free[node] = [g for g in free[node] if g not in taken]
            gpus = [node * node_gpus + g for g in taken]
            for g in gpus:
                room[g // per_host] -= 1
        by_host: dict[int, list[int]] = {}
        for g in gpus:  # pool-wide GPU index -> (host, its GPU)
            by_host.setdefault(g // per_host, []).append(g % per_host)
        several = len(by_host) > 1
        for rank, (host, local) in enumerate(sorted(by_host.items()), start=1):
            placed[host].append(HostReplica(name, number, tuple(local), rank if several else None))

    def release(host: int, replica: HostReplica) -> None:
        node, first = divmod(host, per_node)
        placed[host].remove(replica)
        free[node] = sorted([*free[node], *(first * per_host + g for g in replica.gpus)])

    def take(host: int, replica: HostReplica) -> None:
        """Put ``replica`` on ``host`` (which GPUs there: :func:`_lay_out`, once every host's replicas are known)."""
        node, first = divmod(host, per_node)
        base = first * per_host
        taken = gpu_block([g - base for g in on_host(host)], len(replica.gpus), per_host)
        free[node] = [g for g in free[node] if g - base not in taken]
        placed[host].append(replica._replace(gpus=tuple(taken)))

    # a spread service the greedy pass left on one host: one of its replicas moves to another host, swapped there with
    # another service's replica where that host has no room (review25 G: four TP2 replicas filled the one host with
    # room, and both TP1 replicas of a min_replicas 2 service shared the third)
    for name in sorted(spread):
        on = [h for h in range(len(placed)) if any(r.deployment == name for r in placed[h])]
        if len(on) != 1 or sum(r.deployment == name for r in placed[on[0]]) < 2:
            continue
        home = on[0]
        moving = next(r for r in reversed(placed[home]) if r.deployment == name and r.host_of_replica is None)
        width = len(moving.gpus)
        home_room = len(on_host(home)) + width  # the home host's GPUs once the spread replica leaves
        spare = [h for h in range(len(placed)) if h != home and len(on_host(h)) >= width]
        swaps = [
            (len(r.gpus), h, i)
            for h in range(len(placed))
            if h != home
            for i, r in enumerate(placed[h])
            if r.host_of_replica is None
            and r.deployment not in spread
            and len(r.gpus) <= home_room
            and len(on_host(h)) + len(r.gpus) >= width
        ]
        if spare:
            release(home, moving)
            take(spare[0], moving)
        elif swaps:
            _, other, index = min(swaps)  # the narrowest replica moved, on the first host
            swap = placed[other][index]
            release(home, moving)
            release(other, swap)
            take(other, moving)
            take(home, swap)
    if not laid_out:
        return placed
    sort_key = {(name, number): (negative_width, order) for negative_width, order, name, number in replicas}
    return [_lay_out(on, per_host, sort_key) for on in placed]


def gpu_block(room: Sequence[int], width: int, size: int) -> tuple[int, ...]:
    """The GPUs of a ``size``-GPU host a ``width``-GPU replica takes among the free ones, ``room``.

    The first free block aligned to its width (a TP2 replica on GPUs 0-1 or 2-3, the pairs a PCIe server puts on one
    CPU or switch, an SXM board's TP4 on one half), else the first free contiguous block, else the lowest free GPUs.
    """
    free = set(room)
    for step in (width, 1):
        for start in range(0, size - width + 1, step):
            if free.issuperset(range(start, start + width)):
                return tuple(range(start, start + width))
    return tuple(sorted(free)[:width])


def _lay_out(on: list[HostReplica], per_host: int, sort_key: dict[tuple[str, int], tuple[int, int]]) -> list[HostReplica]:
    """One host's replicas on its GPUs: the widest first, each on the first aligned free block (:func:`gpu_block`).

    The host's share of a replica over several hosts keeps its GPUs (it is laid out across them); the others are laid
    out afresh, widest first and in deployment order within a width, so that moving a replica between hosts to spread
    a service (newuser42 item 6: a TP2 replica swapped onto GPUs [1, 3] of a 4-GPU host) leaves no replica on GPUs a
    narrower one split.
    """
    spanning = [r for r in on if r.host_of_replica is not None]
    room = [g for g in range(per_host) if not any(g in r.gpus for r in spanning)]
    laid = list(spanning)
    for replica in sorted(
        (r for r in on if r.host_of_replica is None), key=lambda r: (*sort_key[(r.deployment, r.replica)], r.replica)
    ):
        taken = gpu_block(room, len(replica.gpus), per_host)
        room = [g for g in room if g not in taken]
        laid.append(replica._replace(gpus=taken))
    return sorted(laid, key=lambda r: (r.gpus, r.deployment, r.replica))


def replicas_by_host(placement: list[list[HostReplica]], name: str) -> list[int]:
    """How many of ``name``'s replicas each host (a Kubernetes node) of a placement runs, of those running any.

    A replica over several hosts counts on each.
    """
    held: dict[int, set[int]] = {}
    for host, on in enumerate(placement):
        for replica in on:
            if replica.deployment == name:
                held.setdefault(host, set()).add(replica.replica)
    return [len(replicas) for _, replicas in sorted(held.items())]


def hosts_holding(placement: list[list[HostReplica]], name: str) -> int:
    """Hosts of a placement that run some replica of ``name``."""
    return sum(any(r.deployment == name for r in host) for host in placement)
