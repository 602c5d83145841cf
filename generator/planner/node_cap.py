"""Fleets within ``hardware.max_nodes`` put together from the pools the fleet passes formed.

newuser48 item 2: each pass chooses a service's servers before the cap is known to bind, so no single pass found the
fleet that fits it. A 70B chat service took 2 p5.48xlarge where 2 p5en.48xlarge would hold its autocomplete service as
well, and the embedder and reranker took one-GPU g6 where 2 four-GPU g6.12xlarge hold both ($112,417 a month on 4
nodes, where the pools of two passes make $99,130 on 4). Each pass's choices fall into groups, the services whose
replicas share one kind of server (a service on servers of its own is a group alone), and each set of a pool's services
is a group too; groups of different passes that cover every deployment once, on different server kinds, and need at
most the cap's nodes together make a fleet to assemble, the least of them by the objective's floor first.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from generator.named_tuple import NamedTuple
from generator.planner.spread import shared_nodes

if TYPE_CHECKING:
    from generator.planner.inventory import ServerKey
    from generator.planner.option import Option

#: The fleets put together and assembled at most (the least by the objective's floor first).
MAX_JOINED_FLEETS = 6

#: Steps of the search for covers taken at most (bounds a search over many passes and services).
MAX_COVERS = 200_000

#: Sets of deployments whose least floor the search's bound keeps at most (2^14 for fourteen services).
MAX_BOUND_SETS = 50_000

#: Options of one pool up to which each set of them is a group of its own too (2^8 - 1 sets).
MAX_SUBSET_UNITS = 8

#: Of a pool of more options, the sets that leave at most this many out are groups of their own too (and each option
#: alone): review34 item 5's fourteen services, whose cap of 9 found eleven of them on 5 p4d.24xlarge that no pass
#: under a cap of 11 formed apart from the other three.
MAX_UNITS_LEFT_OUT = 3

#: Groups kept of each set of deployments on each count of nodes, the least floor first (a floor ranks them only
#: roughly: review34 item 2's B200 pair floored below the p5en pair it costs twice).
GROUPS_PER_KEY = 3


class PoolGroup(NamedTuple):
    """Deployments whose choices in one pass share servers: a pool of the fleet, or a service's own servers."""

    #: The deployments, by index, and the option each was given.
    entries: tuple[tuple[int, Option], ...]
    #: The server kinds their replicas share (none for servers a job or a spanning replica holds alone).
    kinds: frozenset[ServerKey]
    #: Nodes the group needs: those its shared kinds' GPUs fill (and ``min_replicas`` spreads), and the rest's own.
    nodes: int
    #: The pass it was formed in (an index into the caller's list).
    source: int

    @property
    def members(self) -> frozenset[int]:
        """The deployments of the group, by index."""
        return frozenset(i for i, _ in self.entries)


def group_nodes(options: Sequence[Option]) -> int:
    """Nodes ``options`` (each once) need: their replicas filling shared kinds GPU by GPU, at least as spread."""
    parts = [part for opt in options for part in opt.pieces]
    own = sum(part.candidate.nodes for part in parts if not part.shares_servers)
    return own + sum(shared_nodes(parts).values())


def pool_groups(
    chosen: Sequence[tuple[int, Option]], source: int, subsets: bool = False, max_nodes: int | None = None
) -> list[PoolGroup]:
    """The groups of one pass's choices: deployments linked by a server kind their replicas share, or one option.

    ``subsets``: each set of a pool's options (up to :data:`MAX_SUBSET_UNITS`) is a group too; of a larger pool over
    ``max_nodes``, the sets that leave a few out are taken of its options within the cap too (:func:`_within_cap`).
    """
    parent = list(range(len(chosen)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    first_at: dict[object, int] = {}
    for k, (_, opt) in enumerate(chosen):
        links: list[object] = [id(opt)]  # the jobs of a chain hold one option
        links += [part.busy_kind for part in opt.pieces if part.shares_servers]
        for link in links:
            parent[root(k)] = root(first_at.setdefault(link, k))
    members: dict[int, list[int]] = {}
    for k in range(len(chosen)):
        members.setdefault(root(k), []).append(k)
    groups = []
    for ks in members.values():
        # the deployments of one option (a chain's jobs) stay together; of a few, each set of them is a group too: a
        # pool's services apart from the rest of it (review34 item 4: no pass formed the five small services on an
        # L40S server without the 70B chat service it held them with)
        units = list({id(chosen[j][1]): [chosen[k] for k in ks if chosen[k][1] is chosen[j][1]] for j in ks}.values())
        n = len(units)
        sizes: Sequence[int] = [n]
        if subsets:  # of a larger pool, each set that leaves at most a few of its options out, and each option alone
            sizes = range(1, n + 1) if n <= MAX_SUBSET_UNITS else [1, *range(n - MAX_UNITS_LEFT_OUT, n + 1)]
        for size in sizes:
            for picked in itertools.combinations(units, size):
                groups.append(_group(tuple(entry for unit in picked for entry in unit), source))
        within = _within_cap(units, max_nodes) if subsets and n > MAX_SUBSET_UNITS and max_nodes is not None else units
        for size in range(max(1, len(within) - MAX_UNITS_LEFT_OUT), len(within) + 1) if len(within) < n else ():
            for picked in itertools.combinations(within, size):
                groups.append(_group(tuple(entry for unit in picked for entry in unit), source))
    return groups


def _within_cap(units: list[list[tuple[int, Option]]], max_nodes: int) -> list[list[tuple[int, Option]]]:
    """``units`` (a pool's options, each with its deployments) less the largest, one by one, till the rest fit ``max_nodes``.

    A pass held to a server kind places a service there where a layout of it fits the cap: a higher cap lets in a
    layout that fills many servers of the kind alone (m74f: chat on 12 p4d.24xlarge under a cap of 14, none within 11),
    and the sets that leave a few of the pool out no longer reach the services the lower cap's pool held apart from the
    rest (nine small services on 3 p4d, which a 10-node fleet of $230,264 joined under 11 and not under 14 or 16). Those
    the cap cannot hold with the rest go first, the most nodes alone first, so that a higher cap's pool still holds the
    sets a lower cap's did.
    """

    def alone(unit: list[tuple[int, Option]]) -> tuple[int, int]:
        options = list({id(opt): opt for _, opt in unit}.values())
        return group_nodes(options), sum(opt.candidate.gpus for opt in options)

    kept = sorted(units, key=alone)  # the largest last (a stable sort: the pass's order among equals)
    while len(kept) > 1 and group_nodes(list({id(opt): opt for unit in kept for _, opt in unit}.values())) > max_nodes:
        kept.pop()
    return [unit for unit in units if any(unit is k for k in kept)]


def _group(entries: tuple[tuple[int, Option], ...], source: int) -> PoolGroup:
    """The group of ``entries`` (one pass's choices) formed in pass ``source``."""
    options = list({id(opt): opt for _, opt in entries}.values())
    kinds = frozenset(part.busy_kind for opt in options for part in opt.pieces if part.shares_servers)
    return PoolGroup(entries, kinds, group_nodes(options), source)


def joined_fleets(
    passes: Sequence[Sequence[tuple[int, Option]]],
    count: int,
    max_nodes: int,
    floor: Callable[[list[Option]], float],
    subsets: bool = False,
    ceiling: float = math.inf,
    every_cap: bool = False,
) -> list[tuple[PoolGroup, ...]]:
    """Groups of ``passes`` that hold each of ``count`` deployments once within ``max_nodes``, the least floor first.

    ``floor``: the objective's floor under a fleet of the options given. The groups of each set of deployments are
    kept the least floor first for each count of nodes (:data:`GROUPS_PER_KEY` of them); covers whose groups share a
    server kind are left out (their pools would merge, filled apart); at most :data:`MAX_JOINED_FLEETS` fleets, and
    none that one pass formed whole. The groups of a cover share no server kind, so its floor is theirs summed: the
    search is a branch and bound on it (review34 item 4: a depth-first search stopped at :data:`MAX_COVERS` covers
    before it met the least, once a pool of eight services was taken apart too), no cover above ``ceiling`` (the best
    fleet planned so far: none above it is assembled) and each deployment's groups tried the least floor a deployment
    first (review36 item 1: fourteen services found their 11-node fleet under a cap of 13 and not under 14 within the
    step budget). A cover is also bounded by the nodes the deployments left take at the least (m74f: under a cap of 16
    fourteen services' search spent its 200,000 steps among covers of 13-16 nodes; with the bound it ends in 1,646).
    ``every_cap``: the least :data:`MAX_JOINED_FLEETS` covers within each count of nodes up to ``max_nodes``, not only
    within it, the least floor first: the covers a lower cap's search returns (of the same groups) are returned under a
    higher one too, so a higher cap does not leave out a fleet a lower one put together for a 16-node cover floored
    lower (m74f: a cap of 11's 10-node fleet of $230,264 and a cap of 16's $236,562).
    """
    best: dict[tuple[frozenset[int], int], list[tuple[float, PoolGroup]]] = {}
    seen: set[tuple[int, ...]] = set()
    for source, chosen in enumerate(passes):
        for group in pool_groups(chosen, source, subsets, max_nodes):
            key = tuple(sorted(id(opt) for _, opt in group.entries))
            if key in seen or group.nodes > max_nodes:
                continue
            seen.add(key)
            best.setdefault((group.members, group.nodes), []).append((floor([o for _, o in group.entries]), group))
    fewer: dict[frozenset[int], list[tuple[int, float, frozenset[ServerKey]]]] = {}  # (nodes, floor, kinds) each
    for (members, nodes), groups in best.items():
        fewer.setdefault(members, []).extend((nodes, v, g.kinds) for v, g in groups)
    kept = [
        fg
        for (members, nodes), groups in best.items()
        for fg in sorted(groups, key=lambda fg: fg[0])[:GROUPS_PER_KEY]
        # a group the same deployments' group on fewer nodes, of no other server kind, floors below takes more of the
        # cap for more money (review37 item 4: of another kind, it may be the one a cover can take)
        if not any(n < nodes and v <= fg[0] and kinds <= fg[1].kinds for n, v, kinds in fewer[members])
    ]
    holding: dict[int, list[tuple[float, PoolGroup]]] = {}
    # the least floor a deployment first (covers of large shared groups come early, and bound the rest)
    for value, group in sorted(kept, key=lambda fg: fg[0] / len(fg[1].members)):
        holding.setdefault(min(group.members), []).append((value, group))
    # a bound under what the deployments not yet held add: the least floor of groups that hold them each once,
    # relaxing the cap and the server kinds (review36 item 1: a bound of each deployment's least share of a group's
    # floor left the search to its step budget); where too many sets of deployments come up, that least share
    mask = {id(g): sum(1 << i for i in g.members) for _, g in kept}
    by_floor = {low: sorted((v, mask[id(g)]) for v, g in groups) for low, groups in holding.items()}
    share = [min((v / len(g.members) for v, g in kept if i in g.members), default=math.inf) for i in range(count)]
    # the least floor, and the fewest nodes, of groups holding each deployment of a bit set once (cap and kinds relaxed)
    bound = _least_cover(by_floor, math.inf, lambda left: sum(share[i] for i in range(count) if left >> i & 1))
    by_nodes = {low: sorted((float(g.nodes), mask[id(g)]) for _, g in groups) for low, groups in holding.items()}
    nodes_bound = _least_cover(by_nodes, max_nodes + 1, lambda left: 0.0)

    found: list[tuple[float, int, tuple[PoolGroup, ...], int]] = []  # the least covers so far, the least first
    covered_by: set[frozenset[int]] = set()  # the options of each cover found
    tried = 0

    def worst(nodes: int) -> float:
        """The floor a cover of at least ``nodes`` nodes must come under to be kept."""
        # every cap: a cover of n nodes is kept while fewer than MAX_JOINED_FLEETS found on at most n floor below it,
        # and the fewer nodes it has the fewer covers it is ranked against (the loosest bound is at ``nodes``)
        within = [v for v, _, _, n in found if n <= nodes] if every_cap else [v for v, *_ in found]
        return within[MAX_JOINED_FLEETS - 1] if len(within) >= MAX_JOINED_FLEETS else ceiling

    def extend(picked: tuple[PoolGroup, ...], covered: int, nodes: int, value: float) -> None:
        nonlocal tried
        left_over = full & ~covered
        if tried >= MAX_COVERS:
            return
        # a cover of these groups takes at least the nodes the deployments left take, and is ranked among those on as many
        at_least = nodes + int(nodes_bound(left_over))
        if at_least > max_nodes or value + bound(left_over) > worst(at_least):
            return
        tried += 1
        if not left_over:
            options = frozenset(id(opt) for g in picked for _, opt in g.entries)
            # a fleet of one pass's groups was assembled by that pass, and one of the same options by another cover
            if len({g.source for g in picked}) > 1 and options not in covered_by:
                covered_by.add(options)
                bisect.insort(found, (value, tried, picked, nodes))
                if every_cap:  # those no cap keeps: MAX_JOINED_FLEETS found on at most as many nodes floor below them
                    found[:] = [f for k, f in enumerate(found) if sum(n <= f[3] for *_, n in found[:k]) < MAX_JOINED_FLEETS]
                else:
                    del found[MAX_JOINED_FLEETS:]
            return
        left = (left_over & -left_over).bit_length() - 1
        kinds = frozenset().union(*(g.kinds for g in picked))
        for group_value, group in holding.get(left, []):
            members = mask[id(group)]
            if members & covered or group.kinds & kinds or nodes + group.nodes > max_nodes:
                continue
            extend((*picked, group), covered | members, nodes + group.nodes, value + group_value)

    full = (1 << count) - 1
    extend((), 0, 0, 0.0)
    return [cover for _, _, cover, _ in found]


def _least_cover(
    by_low: dict[int, list[tuple[float, int]]], none: float, past_limit: Callable[[int], float]
) -> Callable[[int], float]:
    """The least sum of groups' values that holds each deployment of a bit set once, memoised (cap and kinds relaxed).

    ``by_low``: each deployment's groups led by it (their lowest member), as (value, members' bit set) by rising value;
    ``none``: where no groups hold the set; ``past_limit``: the bound taken once :data:`MAX_BOUND_SETS` sets are held.
    """
    memo: dict[int, float] = {0: 0.0}

    def least(left: int) -> float:
        if left in memo:
            return memo[left]
        if len(memo) > MAX_BOUND_SETS:
            return past_limit(left)
        low = (left & -left).bit_length() - 1
        value = none
        for own, members in by_low.get(low, []):
            if own >= value:
                break  # the rest hold it for more alone
            if not members & ~left:
                value = min(value, own + least(left & ~members))
        memo[left] = value
        return value

    return least
