"""Serving replicas on aligned, contiguous GPU blocks, the widest first (newuser42 item 6).

The README promises a pool's hosts run "the widest replicas first on aligned GPUs". Moving a replica between hosts to
spread a ``min_replicas`` service put a TP2 replica on GPUs [1, 3] of a 4-GPU R760xa (two CPUs, GPUs paired on each:
the pair split over UPI) and a TP1 replica on GPU 0 ahead of it. A property over a table of pool mixes: every replica
within one host on a block of its width aligned to it, the widest first, no GPU used twice, every replica placed.
"""

from __future__ import annotations

from collections import Counter

import pytest

from generator.planner.placement import HostReplica, gpu_block, pool_placement
from generator.planner.plan import DeploymentPlan, NodeSpec, Pool

#: (name, TP, PP, replicas, spread: min_replicas of 2 or more)
Mix = tuple[tuple[str, int, int, int, bool], ...]


def _node(gpus: int, hosts: int) -> NodeSpec:
    """A node of ``gpus`` GPUs over ``hosts`` Linux hosts; the placement reads nothing else of it."""
    return NodeSpec(
        "server", "Server", "pcie", "baremetal", None, "gpu", "GPU", gpus, 48.0, "cpu", 64, 256, 3.84, 1, 6.0, 3.0, (),
        2000, "sum", 6824, "air", 2, None, False, hosts=hosts,
    )  # fmt: skip


def _pool(gpus: int, hosts: int, nodes: int, mix: Mix) -> Pool:
    return Pool("p", _node(gpus, hosts), nodes, tuple(name for name, *_ in mix), 1, 0, None, None, (), ())


def _deployment(name: str, tp: int, pp: int, replicas: int) -> DeploymentPlan:
    return DeploymentPlan(
        name, "inference", "m", "catalog", 1, 1, "bf16", None, tp, pp, replicas, tp * pp * replicas, "p", {}, {}, ()
    )


def _place(gpus: int, hosts: int, nodes: int, mix: Mix) -> list[list[HostReplica]]:
    placement = pool_placement(
        [_deployment(name, tp, pp, n) for name, tp, pp, n, _ in mix],
        _pool(gpus, hosts, nodes, mix),
        frozenset(name for name, *_, spread in mix if spread),
    )
    assert placement is not None
    return placement


#: The reported pool: two 4 x L40S R760xa, students-70b TP2 x 2, students-8b TP1 x 2 (min_replicas 2), qwen14b TP1.
NEWUSER42: Mix = (("students-70b", 2, 1, 2, False), ("students-8b", 1, 1, 2, True), ("qwen14b", 1, 1, 1, False))
#: (node GPUs, hosts a node, nodes, the replicas): mixes a planner's GPU count holds, power-of-two widths.
MIXES = [
    pytest.param(4, 1, 2, NEWUSER42, id="newuser42-r760xa"),
    pytest.param(4, 1, 3, (("a", 2, 1, 3, False), ("b", 1, 1, 4, True), ("c", 1, 1, 2, False)), id="4gpu-tp2-spread-tp1"),
    pytest.param(4, 1, 2, (("a", 1, 1, 3, False), ("b", 2, 1, 2, False), ("c", 1, 1, 1, True)), id="4gpu-tp1-first-in-order"),
    pytest.param(8, 1, 1, (("a", 1, 1, 2, False), ("b", 2, 1, 1, False), ("c", 4, 1, 1, False)), id="8gpu-one-of-each"),
    pytest.param(8, 1, 2, (("chat", 1, 1, 2, True), ("moe", 4, 1, 3, True)), id="8gpu-spread-cannot-hold"),
    pytest.param(8, 1, 4, (("a", 4, 1, 2, False), ("b", 2, 1, 9, False), ("c", 1, 1, 2, True)), id="review25-g"),
    pytest.param(8, 1, 2, (("a", 8, 1, 1, False), ("b", 4, 1, 1, False), ("c", 2, 1, 1, False), ("d", 1, 1, 2, True)),
                 id="8gpu-8-4-2-1"),
    pytest.param(8, 1, 2, (("a", 2, 1, 4, False), ("b", 1, 1, 2, True), ("c", 4, 1, 1, False), ("d", 1, 1, 2, True)),
                 id="8gpu-two-spread-services"),
    pytest.param(8, 1, 3, (("big", 8, 2, 1, False), ("a", 2, 1, 2, True), ("b", 1, 1, 3, True)), id="multi-node-replica"),
    pytest.param(8, 1, 2, (("a", 1, 2, 2, False), ("b", 1, 1, 4, True), ("c", 2, 2, 1, False)), id="pipeline-stages"),
    pytest.param(72, 18, 1, (("m", 2, 2, 10, False), ("s", 1, 1, 6, True), ("t", 2, 1, 7, True)), id="nvl72-trays"),
    pytest.param(72, 18, 1, (("m", 4, 4, 3, False), ("s", 2, 1, 6, True), ("t", 1, 1, 5, True)), id="nvl72-tray-spanning"),
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "hosts", "nodes", "mix"), MIXES)
def test_replicas_are_on_aligned_contiguous_blocks_widest_first(gpus: int, hosts: int, nodes: int, mix: Mix) -> None:
    per_host = gpus // hosts
    placement = _place(gpus, hosts, nodes, mix)
    assert len(placement) == nodes * hosts
    seen: Counter[tuple[str, int]] = Counter()
    for on in placement:
        used = [g for r in on for g in r.gpus]
        assert len(used) == len(set(used)) and all(0 <= g < per_host for g in used)  # no GPU twice
        seen.update((r.deployment, r.replica) for r in on)
        whole = [r for r in on if r.host_of_replica is None]
        for r in whole:  # TP n (x PP) on an n-aligned contiguous block
            width = len(r.gpus)
            assert r.gpus == tuple(range(r.gpus[0], r.gpus[0] + width)) and r.gpus[0] % width == 0, (r, on)
        if len(whole) == len(on):  # the widest first: widths never grow along the host's GPUs
            widths = [len(r.gpus) for r in sorted(on, key=lambda r: r.gpus)]
            assert widths == sorted(widths, reverse=True), on
    for name, tp, pp, replicas, _ in mix:  # each replica placed, over as many hosts as its width takes
        span = -(-tp * pp // per_host)
        assert {n: seen[(name, n)] for n in range(1, replicas + 1)} == dict.fromkeys(range(1, replicas + 1), span)


def test_the_reported_r760xa_mix_gets_pairs_and_tp1_on_the_gpus_left() -> None:
    """newuser42 item 6 as reported: students-70b TP2 was on GPUs [1, 3] of l40s-02, students-8b TP1 on GPU 0."""
    placement = _place(4, 1, 2, NEWUSER42)
    assert [[(r.deployment, r.gpus) for r in on] for on in placement] == [
        [("students-70b", (0, 1)), ("students-8b", (2,))],
        [("students-70b", (0, 1)), ("students-8b", (2,)), ("qwen14b", (3,))],
    ]


@pytest.mark.parametrize(
    ("room", "width", "size", "block"),
    [
        pytest.param([1, 2, 3], 2, 4, (2, 3), id="aligned-pair-over-a-lower-unaligned-one"),
        pytest.param([1, 3], 2, 4, (1, 3), id="no-contiguous-pair-left"),
        pytest.param([1, 2, 5, 6, 7], 2, 8, (6, 7), id="aligned-before-contiguous"),
        pytest.param([1, 2, 5], 2, 8, (1, 2), id="contiguous-where-none-aligned"),
        pytest.param([2, 3, 4, 5, 6, 7], 4, 8, (4, 5, 6, 7), id="tp4-on-its-half"),
        pytest.param([0, 1, 2, 3, 4, 5, 6, 7], 3, 8, (0, 1, 2), id="width-3"),
        pytest.param([5, 0, 2], 1, 8, (0,), id="tp1-lowest"),
    ],
)
def test_gpu_block(room: list[int], width: int, size: int, block: tuple[int, ...]) -> None:
    assert gpu_block(room, width, size) == block


def test_a_large_pool_is_placed_in_linear_time() -> None:
    """fz62 item 3: the placement checked every host for every replica (a 6,121-node pool rendered in 72 s, now 2 s).
    20,000 8-GPU servers: the TP4 replicas two a host on the first 10,000, the TP1 ones eight a host on the rest."""
    placed = _place(8, 1, 20_000, (("wide", 4, 1, 20_000, False), ("narrow", 1, 1, 80_000, False)))
    assert len(placed) == 20_000
    assert [(r.deployment, r.replica, r.gpus) for r in placed[0]] == [("wide", 1, (0, 1, 2, 3)), ("wide", 2, (4, 5, 6, 7))]
    assert [(r.deployment, r.replica) for r in placed[10_000]] == [("narrow", n) for n in range(1, 9)]
    assert [(r.deployment, r.replica, r.gpus) for r in placed[-1]][-1] == ("narrow", 80_000, (7,))


@pytest.mark.parametrize(("gpus", "hosts", "nodes", "mix"), MIXES)
def test_unlaid_placement_puts_the_same_replicas_on_each_host(gpus: int, hosts: int, nodes: int, mix: Mix) -> None:
    """``laid_out=False`` (perf141: the callers that count) skips only the choice of GPUs: each host runs the same
    replicas with as many GPUs each, and a replica over several hosts keeps its GPUs."""
    deployments = [_deployment(name, tp, pp, n) for name, tp, pp, n, _ in mix]
    spread = frozenset(name for name, *_, s in mix if s)
    laid = pool_placement(deployments, _pool(gpus, hosts, nodes, mix), spread)
    unlaid = pool_placement(deployments, _pool(gpus, hosts, nodes, mix), spread, laid_out=False)
    assert laid is not None and unlaid is not None

    def counted(placement: list[list[HostReplica]]) -> list[list[tuple[object, ...]]]:
        return [
            sorted((r.deployment, r.replica, len(r.gpus), r.host_of_replica, r.gpus if r.host_of_replica else ()) for r in on)
            for on in placement
        ]

    assert counted(unlaid) == counted(laid)
