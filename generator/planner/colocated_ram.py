"""Host RAM a node of a pool holding co-located services keeps beside the OS (fix167, fix171).

Each service's engine keeps its own host memory: what a serving option sizes today is its LoRA adapters' CPU caches,
one in each engine worker (a GPU, or a pod in a share of one: every MIG instance and every MPS or time-slicing replica
runs its own vLLM process with its own caches). A serving option counts them on the workers a node of it holds
(:func:`workers_counted`): on whole GPUs, every GPU of the node (a lone service's pool runs replicas past its rate on
the GPUs its rate leaves); in shares of GPUs, its pods on its busiest node (shares are not filled past the rate, and a
node holds at most its GPUs times the shares a GPU holds). Co-located services split a node's workers, so the node
holds each service's per-worker bytes on the workers that service takes there, summed; the OS reserve is added once by
node assembly. Before fix167 the pool took the largest member's whole-node figure; before fix171 a share counted its
GPU's bytes once, however many pods shared it (two services on MIG slices of one GPU: one service's caches).

Which GPUs of a node each service takes is the render's placement (:func:`~generator.planner.placement.pool_placement`),
made after the pool; here a service takes at most its workers in the pool or the node's, the costliest per worker
first: the most any node of the pool can hold (exact on one node, where every member's workers are on it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generator.planner.option import Option


def workers_counted(gpus_per_node: int, nodes: int, replicas: int, shares_per_gpu: int | None) -> int:
    """Engine workers whose host RAM one node of a serving option counts: its GPUs, or in shares its pods there.

    ``shares_per_gpu``: pods a GPU holds (MIG instances, MPS or time-slicing replicas); None: whole GPUs.
    """
    if not shares_per_gpu:
        return gpus_per_node
    return min(gpus_per_node * shares_per_gpu, -(-replicas // max(1, nodes)))


def summed_host_ram_bytes(members: Sequence[tuple[int, int]], node_workers: int) -> int:
    """Bytes ``members`` = (bytes a worker, workers it takes) hold on a node of ``node_workers``, costliest first."""
    total, left = 0, node_workers
    for bytes_per_worker, workers in sorted(members, reverse=True):
        taken = min(workers, left)
        total += bytes_per_worker * taken
        left -= taken
    return total


def colocated_host_ram_bytes(members: Sequence[Option], node_gpus: int) -> int:
    """The host RAM bytes beside the OS that one node of ``node_gpus`` GPUs running ``members`` side by side holds.

    Members of one pool share GPUs one way (a pool has one MIG partition or device-plugin config), so a node holds
    ``node_gpus`` x the first one's shares a GPU workers.
    """
    node_workers = node_gpus * (members[0].candidate.shares_per_gpu or 1)
    each = []
    for o in members:
        c = o.candidate
        counted = workers_counted(c.gpus_per_node, c.nodes, c.replicas, c.shares_per_gpu)
        workers = math.ceil(o.gpus_used * (c.shares_per_gpu or 1))  # its GPUs, or its pods in shares
        each.append((o.needs.host_ram_bytes // counted if counted else 0, min(node_workers, workers)))
    return summed_host_ram_bytes(each, node_workers)
