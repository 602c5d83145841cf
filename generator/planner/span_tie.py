"""A service's near tie on cost settled by the nodes a replica spans (fix141, newuser81 item 5).

A serving replica over several nodes (TP1 x PP2 over two single-GPU p5.4xlarge instances) asks what one inside a node
does not: a multi-node engine launch (Ray or LeaderWorkerSet, :mod:`generator.planner.multi_host`), a stage hop over
the network, EFA and a placement group, and any one of its nodes lost (a failure, a drain, a spot reclaim) stops it
while its other nodes sit idle, so it is as many times as exposed as it spans nodes. Where such a layout and one whose
replicas span fewer nodes are a near tie on cost (within
:data:`~generator.planner.near_tie.NEAR_TIE_FRACTION` of the cheapest's: closer than the serving model tells
them apart, the training and batch jobs' one definition), the one whose replicas span fewer nodes comes first, then the
order as ranked. Past that fraction the cheaper layout stays chosen: the difference is one the model resolves, and the
replica-spans-hosts finding names what it asks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from generator.planner.inference import ReplicaShape
from generator.planner.multi_host import replica_hosts
from generator.planner.near_tie import NEAR_TIE_FRACTION, near_tie_band, ranked_usd, within_near_tie
from generator.planner.option import Option
from generator.units import HOURS_PER_MONTH
from generator.workload.models import Deployment, InferenceDeployment

#: :func:`spanned_hosts` of each option asked, by identity (the option held, so its id is not reused while kept).
_SPANNED: dict[int, tuple[Option, int]] = {}

#: Options kept in :data:`_SPANNED` before it starts over (bounds memory on very long runs).
MAX_SPANNED = 200_000


def spanned_hosts(opt: Option) -> int:
    """The most nodes (Linux hosts) one of ``opt``'s replicas spans (1: every replica within a node).

    Kept for each option: it is read for every option of every service in each pass (563,744 calls over scale.py's
    200 workloads), nearly all of options read before.
    """
    hit = _SPANNED.get(id(opt))
    if hit is not None and hit[0] is opt:
        return hit[1]
    most = 1
    for p in opt.pieces:
        if isinstance(p.shape, ReplicaShape) and p.candidate.gpus_per_node:
            most = max(most, replica_hosts(p.hardware.platform, p.candidate.gpus_per_node, p.shape.par.gpus))
    if len(_SPANNED) >= MAX_SPANNED:
        _SPANNED.clear()
    _SPANNED[id(opt)] = (opt, most)
    return most


def span_tie_applies(dep: Deployment, options: Iterable[Option]) -> bool:
    """Whether a service's ranking settles its near tie on cost by the nodes a replica spans: some option spans several.

    A batch job's near tie has its own rule (:func:`~generator.planner.training_candidates.near_tie_rule`).
    """
    if not isinstance(dep, InferenceDeployment) or dep.inference.job:
        return False
    return any(spanned_hosts(o) > 1 for o in options)


def span_near_ties_settled(ranked: list[Option], key: Callable[[Option], tuple[object, ...]]) -> list[Option]:
    """``ranked`` (sorted by ``key``, the cost objective's) with its near tie on cost settled by the nodes a replica spans.

    The options at its head within :data:`NEAR_TIE_FRACTION` of the cheapest one's cost (and that take owned servers
    as it does), as :func:`~generator.planner.training_candidates.cost_near_ties_settled` bands them, are ordered by
    the nodes one of their replicas spans, fewer first, then as ranked. The rest keep their order.
    """
    if len(ranked) < 2:
        return ranked
    band = near_tie_band(ranked, key)
    if band < 2:
        return ranked
    near = ranked[:band]
    return [near[k] for k in sorted(range(band), key=lambda k: (spanned_hosts(near[k]), k))] + ranked[band:]


def span_near_tie_text(objective: str, chosen: Option, rest: list[Option]) -> str | None:
    """Which cheaper layout, its replicas over more nodes, a service was kept over as a near tie on cost; else None.

    As its month alone is ranked (:func:`~generator.planner.training_candidates.ranked_usd`); only a cheaper one (at
    the very same cost the objective's own tie-breaks settle it).
    """
    mine = ranked_usd(chosen)
    if objective != "cost" or mine is None:
        return None
    spans = spanned_hosts(chosen)
    owned = chosen.candidate.owned_nodes > 0
    wider = [
        (usd, k, o)
        for k, o in enumerate(rest)
        if spanned_hosts(o) > spans  # kept for each option: cheaper than the cost, and most span no more
        and (o.candidate.owned_nodes > 0) == owned
        and (usd := ranked_usd(o)) is not None
        and usd < mine
        and within_near_tie(mine, usd)
    ]
    if not wider:
        return None
    theirs, _, over = min(wider, key=lambda t: t[:2])
    cheaper = 1 - theirs / mine
    share = f"{cheaper:.2%}" if cheaper >= 0.00005 else "less than 0.01%"
    fit = "each within one node" if spans == 1 else f"over {spans} nodes each"
    return (
        f"kept over {over.candidate.summary}: ${theirs * HOURS_PER_MONTH:,.2f} against ${mine * HOURS_PER_MONTH:,.2f} a "
        f"month, {share} cheaper, within {NEAR_TIE_FRACTION:.0%} of its cost (a near tie, closer than the serving model "
        f"tells them apart), settled by replicas {fit} against {spanned_hosts(over)} nodes each (no multi-node engine launch "
        "or stage hop over the network, and a node lost or reclaimed idles no other node of a replica)"
    )


def one_node_text(chosen: Option, rest: list[Option]) -> str:
    """'; the cheapest layout whose replicas each fit one node: ...' for a service whose replicas span nodes; else "".

    newuser81 item 5: 18 single-GPU p5.4xlarge instances (9 replicas over 2 each) were chosen for 2% below 2 x
    p5en.48xlarge with every replica in NVLink, and nothing said what the layout without cross-node replicas costs.
    Past :data:`NEAR_TIE_FRACTION` the cheaper layout stays chosen; the user weighs the difference, and the
    deployment's ``platform`` and ``parallelism`` pin the other.
    """
    mine = ranked_usd(chosen)
    if mine is None or spanned_hosts(chosen) < 2:
        return ""
    owned = chosen.candidate.owned_nodes > 0
    within = [
        (usd, k, o)
        for k, o in enumerate(rest)
        if spanned_hosts(o) == 1 and (o.candidate.owned_nodes > 0) == owned and (usd := ranked_usd(o)) is not None
    ]
    if not within:
        return ""
    theirs, _, best = min(within, key=lambda t: t[:2])
    more = theirs / mine - 1
    dearer = f"{more:.1%} more" if more > 0 else "no more"
    c = best.candidate
    pins = f"parallelism: {{tp: {c.tp}, pp: {c.pp}}} pins"
    if best.hardware.platform.id != chosen.hardware.platform.id:
        pins = f"platform: {best.hardware.platform.id} and {pins.removesuffix('s')}"
    return (
        f"; the cheapest layout whose replicas each fit one node: {c.summary}, "
        f"${theirs * HOURS_PER_MONTH:,.0f} against ${mine * HOURS_PER_MONTH:,.0f} a month ({dearer}; within "
        f"{NEAR_TIE_FRACTION:.0%} it would have been chosen), which the deployment's {pins}"
    )
