"""Which serving replicas each Linux host of a bare-metal pool runs, and on which of its GPUs.

newuser36 item 6: a pool's group vars list each service with its pool-wide ``replicas``, so a role starting the
services host by host (systemd or podman, the air-gapped colo path without a Kubernetes scheduler) started every
replica on every host: 8 chat replicas on each of two 8-GPU hosts that the plan had packed as 4 + 4 beside a TP4
replica. The planner counts a shared pool's nodes from the GPUs its replicas take (:mod:`generator.planner.spread`
says where only one packing holds them); this is that packing, made explicit:

- the widest replicas first, each on the first host with as many GPUs free, on the GPUs after those already taken
  (a TP4 replica gets GPUs 0-3 or 4-7 of an 8-GPU host, never 2-5: power-of-two widths stay aligned);
- a replica wider than a host takes whole hosts of its own (``hosts_per_replica``, the engine launched multi-node);
- a service with ``min_replicas`` of 2 or more goes to the host holding the fewest of its replicas, among those
  with room (the plan spread it over at least two nodes: :mod:`generator.planner.spread`).

A pool that holds a training job (jobs of a chain take the same GPUs one after another) or whose GPUs are shared
(``kubernetes.gpu_sharing``) gets none: there the launcher or the scheduler places the work.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.planner.multi_host import hosts_per_replica
from generator.planner.plan import Plan, Pool
from generator.render.hosts import host_node


class HostReplica(NamedTuple):
    """One replica (or one host's part of a replica wider than a host) a host runs."""

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


def pool_placement(plan: Plan, pool: Pool, spread: frozenset[str]) -> list[list[HostReplica]] | None:
    """The replicas each host of ``pool`` runs, host by host in the inventory's order; None where none is planned.

    ``spread``: the services whose replicas the plan spreads over nodes (``min_replicas`` 2 or more). The hosts are
    the pool's owned ones, then its bought ones (:func:`generator.render.hosts.host_racks`' order).
    """
    replicas: list[tuple[int, int, str, int]] = []  # (-width, order, name, replica number)
    for order, dep in enumerate(plan.deployments):
        share = dep.in_pool(pool.name)
        if share is None:
            continue
        if dep.kind != "inference":
            return None
        tp, pp, count, _ = share
        replicas += [(-(tp * pp), order, dep.name, number) for number in range(1, count + 1)]
    if not replicas:
        return None
    per_host = host_node(pool.node).gpus
    hosts: list[list[HostReplica]] = [[] for _ in range(pool.hosts)]
    used = [0] * pool.hosts
    for negative_width, _, name, number in sorted(replicas):
        width = -negative_width
        if width > per_host:  # whole hosts of its own, the next empty ones
            span = hosts_per_replica(per_host, width)
            empty = [h for h in range(pool.hosts) if used[h] == 0][:span]
            if len(empty) < span:
                return None
            for rank, h in enumerate(empty, start=1):
                hosts[h].append(HostReplica(name, number, tuple(range(per_host)), rank))
                used[h] = per_host
            continue
        room = [h for h in range(pool.hosts) if per_host - used[h] >= width]
        if not room:
            return None  # the planner's GPU count holds these widths packed whole; never expected
        if name in spread:
            room.sort(key=lambda h: sum(r.deployment == name for r in hosts[h]))  # stable: the first such host
        h = room[0]
        hosts[h].append(HostReplica(name, number, tuple(range(used[h], used[h] + width))))
        used[h] += width
    return hosts
