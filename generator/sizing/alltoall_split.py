"""How an all-to-all's bytes split between a node's GPU link and its network, and the rate that split sends them at.

NCCL runs an all-to-all (``torch.distributed.all_to_all_single``, which Megatron-Core's ``alltoall`` token dispatcher
calls) as one ``ncclSend`` and one ``ncclRecv`` a peer fused in one group, the calls "progressing independently"
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/p2p.html, the all-to-all example). Each peer is
reached over its own transport: a GPU of the same node over the P2P transport, "CUDA direct access between GPUs, using
NVLink or PCI" (``NCCL_P2P_DISABLE``, https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html), one on
another node over the network (the NET transport: InfiniBand / RoCE). So a rank sends ``(node_ranks - 1) / (ranks - 1)``
of its bytes over its node's GPU link and the rest over its share of the node's network, both at once, and the slower
of the two sets the time. On a rack-scale system (GB200 / GB300 NVL72) the node is the NVLink domain, 72 GPUs: all
of an EP group inside it stays on the scale-up fabric.

The serving side's all-to-all over hosts (``rank_alltoall_seconds`` in :mod:`generator.sizing.performance`, review72
item 1) calls :func:`alltoall_gbps` too, with rates in GB/s: the rule is the same in any one unit. Pure: no I/O.
"""

from __future__ import annotations

import math


def fewest_node_gpus(group_gpus: int, gpus_per_node: int) -> int:
    """GPUs of a group of ``group_gpus`` consecutive GPUs on the node that holds the fewest of them.

    The whole group inside one node; past one, ``gcd(group_gpus, gpus_per_node)`` (EP 16 on 8-GPU nodes: 8 a node;
    12 GPUs a group on 8-GPU nodes: some group holds 4 of one node), the rank whose all-to-all crosses the most. A
    narrower group is counted inside one node, which holds where it divides the node's GPUs; one that does not (6 of 8,
    or 16 of an NVL72 rack's 72 filled rank by rank) straddles two for some groups, which is not counted here.
    """
    return group_gpus if group_gpus <= gpus_per_node else math.gcd(group_gpus, gpus_per_node)


def node_peer_share(ranks: int, node_ranks: int) -> float:
    """Share of a rank's all-to-all bytes addressed to the peers on its own node: ``(node_ranks - 1) / (ranks - 1)``.

    ``ranks``: the group's ranks; ``node_ranks``: how many of them its node holds, this rank included (the fewest a node
    holds where the group spans nodes unevenly: the collective waits for that rank). 1.0 when the group fits the node.
    """
    if ranks <= 1 or node_ranks >= ranks:
        return 1.0
    return (max(1, node_ranks) - 1) / (ranks - 1)


def alltoall_gbps(ranks: int, node_ranks: int, link_gbps: float, network_gbps: float) -> float:
    """Gb/s at which a rank's all-to-all bytes leave it: the node's peers over ``link_gbps``, the others over ``network_gbps``.

    The two shares move at once, the slower bounds the collective: ``bytes / max(local x bytes / link, remote x bytes /
    network)``, so ``min(link / local, network / remote)`` (:func:`node_peer_share`). EP 64 over 8-GPU nodes: 7 of 63
    peers on NVLink, 56 over the network, which then carries 8/9 of the bytes (not all of them).
    """
    local = node_peer_share(ranks, node_ranks)
    if local >= 1.0:
        return link_gbps
    remote = 1.0 - local
    if local <= 0.0:
        return network_gbps
    return min(link_gbps / local, network_gbps / remote)
