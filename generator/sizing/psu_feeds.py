"""Where a rack's PSUs plug in, each into one phase's outlet of one circuit, and the current that puts on each line.

Pure arithmetic over scalars. A server's PSUs share its load equally. With 2N (A+B) feeds they are split over the two
sides, the larger half on one (a single PSU stands on one side alone), and when a side is lost the other side's PSUs
carry the whole server: one PSU on a side then carries all of it through one outlet, a current no even spread over
the circuits shows (fuzz30 item 1: a 2-PSU server put 11 A through a 10 A breaker at failover while the plan said
5.5 A). Without redundancy every PSU carries its share all the time. Each PSU goes to the outlet of its side that
carries least, over the side's circuits and their phases (where outlets tie, on the circuit that carries least): how
an installer balances a rack's PDUs. A server whose PSU count is unknown is taken as spread evenly over every outlet,
the balanced ideal, which the plan says.

The line currents are :func:`generator.sizing.electrical.line_currents_a`'s; a rack's circuits carry it when no line
of a side that must carry it alone (every circuit, without redundancy) is above the continuous limit.
"""

from __future__ import annotations

import math

from generator.named_tuple import NamedTuple
from generator.sizing.electrical import line_currents_a

#: Float noise allowed over a line's continuous limit: a rack at exactly its limit (7 A on a 7 A circuit) is carried.
_RELATIVE_NOISE = 1e-9

Outlets = tuple[float, ...]


class Feeds(NamedTuple):
    """The circuits of one rack as the PSUs see them: sides of circuits, each circuit one outlet a phase."""

    voltage_v: float
    phases: int
    #: 2 with A+B feeds (2N), either side alone carrying the rack; 1 without redundancy.
    sides: int
    circuits_per_side: int
    #: The most a line may carry continuously: the breaker's rating times the continuous-load fraction.
    limit_a: float
    power_factor: float

    @property
    def outlets_per_circuit(self) -> int:
        """One outlet a phase: three on a three-phase circuit (one per line, or per pair of lines), one on a single."""
        return 3 if self.phases == 3 else 1

    @property
    def outlets_per_side(self) -> int:
        """The outlets of one side's circuits, circuit by circuit."""
        return self.circuits_per_side * self.outlets_per_circuit


class FeedLoads(NamedTuple):
    """Watts on each outlet of each side, circuit by circuit.

    ``shared`` with every circuit up; ``alone`` with that side carrying alone what stays up when the other side is lost
    (as ``shared`` without redundancy).
    """

    shared: tuple[Outlets, ...]
    alone: tuple[Outlets, ...]


def no_load(feeds: Feeds) -> FeedLoads:
    """The outlets of an empty rack."""
    empty = tuple((0.0,) * feeds.outlets_per_side for _ in range(feeds.sides))
    return FeedLoads(empty, empty)


def _added(outlets: Outlets, chosen: list[int], watts: float) -> Outlets:
    out = list(outlets)
    for i in chosen:
        out[i] += watts
    return tuple(out)


def _least_loaded(feeds: Feeds, outlets: Outlets, psus: int, each_w: float) -> list[int]:
    """The outlets ``psus`` PSUs of ``each_w`` go to.

    One by one, each to the outlet carrying least (ties: the circuit that carries least, then the first).
    """
    load = list(outlets)
    per = feeds.outlets_per_circuit
    chosen = []
    for _ in range(psus):
        circuit_w = [sum(load[c * per : (c + 1) * per]) for c in range(feeds.circuits_per_side)]
        best = min(range(len(load)), key=lambda i: (load[i], circuit_w[i // per], i))
        load[best] += each_w
        chosen.append(best)
    return chosen


def side_split(psus: int, sides: int) -> list[tuple[int, ...]]:
    """How ``psus`` PSUs may be split over the sides: the larger half on either side with 2N, all of them without."""
    if sides == 1:
        return [(psus,)]
    larger, smaller = math.ceil(psus / 2), psus // 2
    return [(larger, smaller)] if larger == smaller else [(larger, smaller), (smaller, larger)]


def with_server(feeds: Feeds, loads: FeedLoads, power_w: float, psus: int | None) -> FeedLoads:
    """``loads`` with a server drawing ``power_w`` through ``psus`` PSUs (None or 0: unknown, spread evenly) plugged in.

    With 2N and an odd count, the larger half goes to the side that leaves the rack's worst line lower.
    """
    if not psus:
        alone_w = power_w / feeds.outlets_per_side
        shared_w = alone_w / feeds.sides
        spread = range(feeds.outlets_per_side)
        return FeedLoads(
            tuple(_added(o, list(spread), shared_w) for o in loads.shared),
            tuple(_added(o, list(spread), alone_w) for o in loads.alone),
        )
    options = []
    for split in side_split(psus, feeds.sides):
        shared, alone = list(loads.shared), list(loads.alone)
        for side, count in enumerate(split):
            if not count:
                continue  # a single PSU's other side: the server goes down with its own
            chosen = _least_loaded(feeds, alone[side], count, power_w / count)
            alone[side] = _added(alone[side], chosen, power_w / count)
            shared[side] = _added(shared[side], chosen, power_w / psus)
        placed = FeedLoads(tuple(shared), tuple(alone))
        options.append(((worst_carrying_a(feeds, placed), worst_shared_a(feeds, placed)), placed))
    return min(options, key=lambda option: option[0])[1]


def circuit_currents_a(feeds: Feeds, outlets: Outlets) -> list[tuple[float, ...]]:
    """The current on each line of each circuit of one side whose outlets carry ``outlets``."""
    per = feeds.outlets_per_circuit
    return [
        line_currents_a(outlets[c * per : (c + 1) * per], feeds.voltage_v, feeds.phases, feeds.power_factor)
        for c in range(feeds.circuits_per_side)
    ]


def _worst_a(feeds: Feeds, sides: tuple[Outlets, ...]) -> float:
    return max(max(lines) for outlets in sides for lines in circuit_currents_a(feeds, outlets))


def worst_shared_a(feeds: Feeds, loads: FeedLoads) -> float:
    """The most current on any line of any circuit with every circuit up."""
    return _worst_a(feeds, loads.shared)


def worst_failover_a(feeds: Feeds, loads: FeedLoads) -> float | None:
    """The most current on any line of the side left when the other is lost (the worse side); None without redundancy."""
    return _worst_a(feeds, loads.alone) if feeds.sides == 2 else None


def worst_carrying_a(feeds: Feeds, loads: FeedLoads) -> float:
    """The most current on any line of the circuits that must carry the rack: one side alone (2N), or all of them."""
    failover = worst_failover_a(feeds, loads)
    return worst_shared_a(feeds, loads) if failover is None else failover


def carried(feeds: Feeds, loads: FeedLoads) -> bool:
    """Whether no line that must carry the rack is above its continuous limit."""
    return worst_carrying_a(feeds, loads) <= feeds.limit_a * (1 + _RELATIVE_NOISE)
