"""The TTFT and the wait for a place, held together to the TTFT p95 target (fix90: review74 items 4 and 5).

A service's replicas are the fewest whose places keep ``P(TTFT + wait > target) <= 5%``: the TTFT once placed has
the tail its point models (each prompt's own TTFT and its prompt queue's M/G/1 tail), the wait for a place M/M/c's.
Adding the two p95s let up to ~10% of requests miss the target where fewer than one in twenty wait (item 4); the
places and the TTFT are taken at the per-replica rate of the count tested, not at the most load (item 5).

The oracles are written here: Erlang C from the Erlang B recursion, the convolution by a fine midpoint sum, and a
simulation of an FCFS M/M/c queue whose requests each draw a TTFT from the tail.
"""

from __future__ import annotations

import heapq
import math
import random
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.sizing.serving_queue import SlotQueue, TtftTail, miss_share, resolved, slot_rate, slot_replicas, ttft_tail

INPUTS = Path(__file__).parent / "data" / "slot_tail"


def _erlang_c(servers: int, offered: float) -> float:
    """Erlang C from the textbook recursion of Erlang B: the oracle."""
    if offered >= servers:
        return 1.0
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    rho = offered / servers
    return blocking / (1 - rho * (1 - blocking))


def _beyond(tail: TtftTail, t: float) -> float:
    """P(TTFT > t) from the tail's figures: each offset plus the queue's wait (busy e^{-decay x}), the larger rule.

    With heads (stated prompt lengths: one, acc123; several, acc126), their weighted sum of M/D/1's law within each
    head ``h``, ``P(W <= x) = (1 - rho) e^{rho x / h}`` (Erlang's formula's first term), and the exponential from
    ``P(W > h)`` past it; with settles (acc129: (a, k) a head), ``a`` of it and ``1 - a`` at ``k``."""

    def head_past(x: float, head: float, settle: tuple[float, float]) -> float:
        rho = tail.busy
        if x < head:
            return 1 - (1 - rho) * math.exp(rho * x / head)
        lead, rate = settle
        past = lead * math.exp(-tail.decay * (x - head)) + (1 - lead) * math.exp(-rate * (x - head))
        return (1 - (1 - rho) * math.exp(rho)) * past

    def waits_past(x: float) -> float:
        if x < 0 or tail.busy <= 0:
            return 1.0 if x < 0 else 0.0
        if not tail.heads:
            return tail.busy * math.exp(-tail.decay * x)
        settles = tail.settles or ((1.0, tail.decay),) * len(tail.heads)
        return sum(weight * head_past(x, head, settle) for (weight, head), settle in zip(tail.heads, settles, strict=True))

    plain = waits_past(t - tail.plain_s)
    mixed = sum(share * waits_past(t - own) for share, own in tail.mix) if tail.mix else 0.0
    return max(plain, mixed)


def _past_target(tail: TtftTail, target: float, waits: float, drain: float, cells: int = 20_000) -> float:
    """P(TTFT + W > target), ``P(W > t) = waits e^{-drain t}``: a midpoint sum over the TTFT's law (fine cells)."""
    low = min(tail.plain_s, *(own for _, own in tail.mix)) if tail.mix else tail.plain_s
    total, width = _beyond(tail, target), (target - low) / cells
    # the TTFT's atom at its least (no queue wait) and the density after it, cell by cell
    total += (1 - _beyond(tail, low)) * waits * math.exp(-drain * (target - low))
    for i in range(cells):
        a, b = low + i * width, low + (i + 1) * width
        total += (_beyond(tail, a) - _beyond(tail, b)) * waits * math.exp(-drain * (target - (a + b) / 2))
    return total


def _p95(tail: TtftTail) -> float:
    low, high = 0.0, 100.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if _beyond(tail, middle) > 0.05 else (low, middle)
    return high


TAILS = [
    pytest.param(TtftTail(0.15, (), 0.6, 40.0), id="one-length"),
    pytest.param(TtftTail(0.10, ((0.95, 0.06), (0.05, 0.40)), 0.5, 25.0), id="a-prompt-mix"),
    pytest.param(TtftTail(0.18, (), 0.0), id="no-queue"),
    # one length, its prefill 40 ms: M/D/1 within it (acc123), at low load and at high
    pytest.param(TtftTail(0.15, (), 0.13, 2 * 0.87 / 0.04, ((1.0, 0.04),)), id="one-length-m-d-1-low"),
    pytest.param(TtftTail(0.15, (), 0.6, 2 * 0.4 / 0.04, ((1.0, 0.04),)), id="one-length-m-d-1-high"),
    # a stated spread (acc126): 95% of 20 ms prefills, 5% of 200 ms, each length's M/D/1 law by its share of the time
    pytest.param(TtftTail(0.15, (), 0.3, 25.0, ((0.655, 0.02), (0.345, 0.2))), id="stated-spread-heads"),
    pytest.param(TtftTail(0.10, ((0.95, 0.06), (0.05, 0.40)), 0.5, 25.0, ((0.655, 0.02), (0.345, 0.2))), id="mix-heads"),
    # acc129: the law as planned, M/G/1's decay and each head's way to its asymptote (a > 1: one length; a < 1: a mix)
    pytest.param(ttft_tail(0.15, 0.6, 0.04, prompts_s=((1.0, 0.04),)), id="one-length-settled"),
    pytest.param(ttft_tail(0.15, 0.3, 0.029, prompts_s=((0.95, 0.02), (0.05, 0.2))), id="stated-spread-settled"),
    pytest.param(
        ttft_tail(0.10, 0.5, 0.029, mix=((0.95, 0.06), (0.05, 0.40)), prompts_s=((0.95, 0.02), (0.05, 0.2))),
        id="mix-settled",
    ),
]


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize(("waits", "drain"), [(0.03, 3.0), (0.2, 10.0), (0.8, 50.0), (1.0, 400.0)])
def test_the_bound_is_the_convolution_and_never_below_it(tail: TtftTail, waits: float, drain: float) -> None:
    """miss_share against the midpoint oracle: never below it, and within 3% of the wait's part above it."""
    target = _p95(tail) + 0.02
    exact = _past_target(tail, target, waits, drain)
    bound = miss_share(tail, target, waits, drain)
    assert bound >= exact - 1e-6
    low = min(tail.plain_s, *(own for _, own in tail.mix)) if tail.mix else tail.plain_s
    cells = min(128, max(16, math.ceil(8 * drain * (target - low))))  # one offset: in closed form, exact
    slack = 1e-6 if not tail.mix else (1 - math.exp(-drain * (target - low) / cells)) * (bound - _beyond(tail, target))
    assert bound - exact <= slack + 1e-6


@pytest.mark.parametrize("room", [0.005, 0.02, 0.039, 0.041, 0.3])
def test_the_m_d_1_head_is_convolved_exactly_within_it_and_past_it(room: float) -> None:
    """acc123: the closed form with the prompt queue's M/D/1 head (40 ms prefills), targets within and past it."""
    tail = TtftTail(0.15, (), 0.13, 2 * 0.87 / 0.04, ((1.0, 0.04),))
    for waits, drain in ((0.03, 3.0), (0.8, 50.0), (1.0, 400.0)):
        exact = _past_target(tail, 0.15 + room, waits, drain)
        assert miss_share(tail, 0.15 + room, waits, drain) == pytest.approx(exact, abs=2e-6)
    # acc126: two heads (a stated spread, 95% of 10 ms and 5% of 40 ms prefills), within both, between and past them
    two = tail._replace(heads=((0.826, 0.01), (0.174, 0.04)))
    for waits, drain in ((0.03, 3.0), (0.8, 50.0), (1.0, 400.0)):
        exact = _past_target(two, 0.15 + room, waits, drain)
        assert miss_share(two, 0.15 + room, waits, drain) == pytest.approx(exact, abs=2e-6)
    # acc129: the heads as planned (M/G/1's decay, each head's settle to the asymptote: a > 1 and a < 1)
    for settled in (
        ttft_tail(0.15, 0.13, 0.04, prompts_s=((1.0, 0.04),)),
        ttft_tail(0.15, 0.6, 0.04, prompts_s=((1.0, 0.04),)),
        ttft_tail(0.15, 0.5, 0.0115, prompts_s=((0.95, 0.01), (0.05, 0.04))),
    ):
        assert settled.settles
        for waits, drain in ((0.03, 3.0), (0.8, 50.0), (1.0, 400.0)):
            exact = _past_target(settled, 0.15 + room, waits, drain)
            assert miss_share(settled, 0.15 + room, waits, drain) == pytest.approx(exact, abs=2e-6)


@pytest.mark.parametrize("tail", TAILS)
def test_with_no_wait_the_share_past_the_p95_is_five_percent(tail: TtftTail) -> None:
    p95 = _p95(tail)
    assert miss_share(tail, p95, 0.0, 1.0) <= 0.05 + 1e-9
    assert miss_share(tail, p95 - 1e-6, 0.0, 1.0) > 0.05


def test_the_p95_wait_of_zero_still_lets_requests_miss() -> None:
    """Item 4 in figures: 3.4% wait (q95 of the wait 0), 0.31 s each on average, a TTFT at its p95 of the target.

    The old rule (q95 TTFT + q95 wait <= target) passed this; the share past the target is ~8%, as review74 said.
    """
    tail = TtftTail(0.1999, (), 0.0)  # every TTFT 199.9 ms, 0.1 ms short of the 200 ms target
    share = miss_share(tail, 0.2, 0.034, 1 / 0.31)
    assert share == pytest.approx(0.034 * math.exp(-0.0001 / 0.31), rel=1e-6)
    busy = TtftTail(0.1, (), 0.5, math.log(0.5 / 0.05) / 0.0999)  # p95 199.9 ms, 5% past it
    assert 0.07 < miss_share(busy, 0.2, 0.034, 1 / 0.31) < 0.05 + 0.034  # 7.5%: the waiting ones mostly miss


def _simulate(tail: TtftTail, target: float, servers: int, rate: float, request_s: float, n: int = 200_000) -> float:
    """Share of requests whose wait for one of ``servers`` places (FCFS, exponential times) and TTFT pass ``target``."""
    rng = random.Random(90)
    free = [0.0] * servers
    now, past = 0.0, 0
    offsets = [(1.0, tail.plain_s)] if not tail.mix else list(tail.mix)
    for i in range(n):
        now += rng.expovariate(rate)
        start = max(now, heapq.heappop(free))
        heapq.heappush(free, start + rng.expovariate(1 / request_s))
        # the TTFT: the plain rule's or the mix's draw, each an offset plus the queue's wait (the larger rule's law)
        queued = rng.expovariate(tail.decay) if tail.busy > 0 and rng.random() < tail.busy else 0.0
        pick, own = rng.random(), offsets[-1][1]
        for share, offset in offsets:
            if pick < share:
                own = offset
                break
            pick -= share
        ttft = max(tail.plain_s, own) + queued if tail.mix else tail.plain_s + queued
        if i > n // 10 and start - now + ttft > target:
            past += 1
    return past / (n - n // 10 - 1)


@pytest.mark.parametrize(("servers", "offered"), [(12, 8.0), (30, 24.0)])
def test_a_simulated_queue_misses_no_more_than_the_bound(servers: int, offered: float) -> None:
    """FCFS M/M/c with each request's TTFT drawn (an offset, a queue wait): simulated share <= the bound, and near it."""
    tail = TtftTail(0.12, (), 0.3, 30.0)
    request_s, target = 2.0, 0.2
    rate = offered / request_s
    waits = _erlang_c(servers, offered)
    bound = miss_share(tail, target, waits, (servers - offered) / request_s)
    simulated = _simulate(tail, target, servers, rate, request_s)
    assert simulated <= bound + 0.01
    assert simulated >= bound - 0.03


def _dep(name: str) -> Any:
    (dep,) = plan_file(str(INPUTS / f"{name}.yaml"))[1].deployments
    return dep


def _planned_share(dep: Any, replicas: int) -> float:
    """The oracle's P(TTFT + wait > target) over ``replicas`` of the plan's queue at the places the rule takes."""
    rate = _rate_of(dep)
    ((n, queue),) = resolved(rate, ((replicas, dep.slot_queue),))
    assert queue.tail is not None
    servers, offered = n * queue.per_replica, rate * queue.request_s
    waits = _erlang_c(servers, offered)
    return _past_target(queue.tail, queue.ttft_target_s, waits, (servers - offered) / queue.request_s)


def _rate_of(dep: Any) -> float:
    (said,) = (r for r in dep.reasons if "busy at" in r)
    return float(said.split("busy at ")[1].split(" req/s")[0].replace(",", ""))


@pytest.mark.parametrize("name", ["ttft-binds2", "long-huge-tight"])
def test_the_planned_fleet_keeps_the_share_past_the_ttft_target_within_five_percent(name: str) -> None:
    """review74's two inputs: ~8% and ~7.4% past the target under the old rule; the planned fleet now keeps 5%."""
    dep = _dep(name)
    assert _planned_share(dep, dep.replicas) <= 0.05 + 1e-6
    (said,) = (r for r in dep.reasons if "P(TTFT + wait >" in r)
    assert "within the 5% the p95 target allows" in said


def test_long_huge_tight_needs_each_replica_the_wait_adds() -> None:
    """806 replicas: with 805 the oracle's share is past 5% (the count is the least)."""
    dep = _dep("long-huge-tight")
    assert dep.replicas == 806
    assert _planned_share(dep, dep.replicas - 1) > 0.05


def test_a_lightly_loaded_replica_runs_more_places_one_replica_serves() -> None:
    """batch1b (review74 item 5): batch 1 at the most load (0.26 req/s) but 5 places at 0.05 req/s: 1 replica, not 2."""
    dep = _dep("batch1b")
    assert dep.replicas == 1
    (said,) = (r for r in dep.reasons if "P(TTFT + wait >" in r)
    assert "1 replica(s) x 5 places = 5 (c)" in said
    assert _planned_share(dep, 1) <= 0.05


def test_each_queue_of_even_routing_states_the_share_past_the_target_too(tmp_path: Path) -> None:
    """merge90: under ``routing: even`` the slot line gives each replica's own queue of b places (newuser73 item 4) and
    the rule in figures as the pooled line does: ttft-binds2 even, 3 queues of 166 places, 37% busy at 6.67 req/s each,
    P(TTFT + wait > 200 ms) = 5.0% (the wait 0.0%: the TTFT's own tail at that load takes the 5%)."""
    path = tmp_path / "even.yaml"
    text = (INPUTS / "ttft-binds2.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("      max_utilization: 1.0\n", "      max_utilization: 1.0\n      routing: even\n"))
    (dep,) = plan_file(str(path))[1].deployments
    (said,) = (r for r in dep.reasons if r.startswith("a request holds a place in the batch"))
    assert "3 queue(s) of 166 places (b), each 37% busy at 6.66667 req/s of the 20" in said
    assert "P(TTFT + wait > 200 ms) = 5.0%, within the 5% the p95 target allows" in said


def test_the_replicas_rise_with_the_rate_and_the_rate_sustained_agrees() -> None:
    """Monotone in the rate over ttft-binds2's ladder of loads; slot_rate is slot_replicas' rule (one rule)."""
    queue: SlotQueue = _dep("ttft-binds2").slot_queue
    counts = [slot_replicas(rate, queue, 1) for rate in [r / 2 for r in range(1, 121)]]
    assert counts == sorted(counts)
    most = queue.top_rate
    for replicas in (1, 2, 3, 5, 8):
        sustained = slot_rate(replicas * most, ((replicas, queue),))
        assert slot_replicas(sustained, queue, 1) <= replicas
        assert slot_replicas(sustained * (1 + 1e-5), queue, 1) > replicas or sustained == replicas * most
