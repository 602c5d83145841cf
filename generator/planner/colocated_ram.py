"""Host RAM a node of a pool holding co-located services keeps beside the OS (fix167).

Each service's engine keeps its own host memory: what a serving option sizes today is its LoRA adapters' CPU caches,
one in each engine worker (a GPU), counted for a node whose GPUs all run its replicas (``_replica_option``: a lone
service's pool runs replicas past its rate on the GPUs its rate leaves). Co-located services split a node's GPUs, so
the node holds each service's per-GPU bytes on the GPUs that service takes there, summed; the OS reserve is added once
by node assembly. Before, the pool took the largest member's whole-node figure: never short (its per-GPU bytes on every
GPU bound the sum), but it counted a 1-GPU service's caches on all 8 GPUs beside a service without adapters.

Which GPUs of a node each service takes is the render's placement (:func:`~generator.planner.placement.pool_placement`),
made after the pool; here a service takes at most its GPUs in the pool or the node's, the costliest per GPU first: the
most any node of the pool can hold (exact on one node, where every member's GPUs are on it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generator.planner.option import Option


def colocated_host_ram_bytes(members: Sequence[Option], node_gpus: int) -> int:
    """The host RAM bytes beside the OS that one node of ``node_gpus`` GPUs running ``members`` side by side holds."""
    per_gpu = sorted(
        ((o.needs.host_ram_bytes // o.candidate.gpus_per_node, min(node_gpus, math.ceil(o.gpus_used))) for o in members),
        reverse=True,
    )
    total, left = 0, node_gpus
    for bytes_per_gpu, gpus in per_gpu:
        taken = min(gpus, left)
        total += bytes_per_gpu * taken
        left -= taken
    return total
