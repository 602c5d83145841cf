"""How requests reach the replicas sizes the wait for a place in their batch (review74 items 1, 3 and 10).

- ``inference.routing``: ``free_place`` (the default: a router holding each request until a replica has a place free,
  one M/M/c queue over replicas x places) or ``even`` (each replica its own M/M/b queue at the rate over the replicas,
  as a Kubernetes Service or round-robin balancer gives). Under the default a ``slot-routing`` warning names the count
  even routing would need. One rule (``generator.sizing.serving_queue``) for a service of one layout and for a split.
- A replica below one sequence in flight gets its slot queue too: its places the largest batch meeting the SLOs at
  the planned rate, a request's time its mean there (Little's law with the batch does not hold).
- A share under 1 never prints as 100%.

Every figure is checked against an oracle written here: Erlang C by the textbook Erlang B recursion, its p95 by the
closed form, the mixture's tail summed directly, and random routing simulated.
"""

from __future__ import annotations

import heapq
import math
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from generator.api import plan_file
from generator.errors import SpecgenError
from generator.planner.assemble import _percent
from generator.sizing.serving_queue import SlotParts, SlotQueue, TtftTail, pooled_slot_wait, resolved, slot_replicas

if TYPE_CHECKING:
    from generator.sizing.serving_queue import Routing
from generator.workload import load_workload
from tests.test_slot_tail import _past_target

TAIL = 0.05


def _erlang_c(servers: int, offered: float) -> float:
    """Erlang C from the Erlang B recursion B(k) = A B(k-1) / (k + A B(k-1)): the oracle."""
    if offered >= servers:
        return 1.0
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    rho = offered / servers
    return blocking / (1 - rho * (1 - blocking))


def _own_queue(places: int, rate: float, request_s: float) -> tuple[float, float]:
    """(P(wait), p95 wait) of one replica's M/M/b queue at ``rate``: P(W > t) = C exp(-(b - A) t / S)."""
    offered = rate * request_s
    if offered >= places:
        return 1.0, math.inf
    waits = _erlang_c(places, offered)
    return waits, request_s * math.log(waits / TAIL) / (places - offered) if waits > TAIL else 0.0


def _even_count(rate: float, places: int, request_s: float, slack: float, least: int) -> int:
    """The fewest replicas, ``least`` at least, whose own queues at ``rate / N`` keep the p95 wait within ``slack``."""
    n = least
    while _own_queue(places, rate / n, request_s)[1] > slack:
        n += 1
    return n


def _shared_count(rate: float, places: int, request_s: float, slack: float, least: int) -> int:
    """The same over one queue in front of every place (M/M/c, c = N x b)."""
    n = least
    while True:
        c, offered = n * places, rate * request_s
        waits = _erlang_c(c, offered) if offered < c else 1.0
        p95 = math.inf if offered >= c else (request_s * math.log(waits / TAIL) / (c - offered) if waits > TAIL else 0.0)
        if p95 <= slack:
            return n
        n += 1


@pytest.mark.parametrize(
    ("share", "said"),
    [
        pytest.param(0.9971, "99.7%", id="long-huge-99.71"),  # review74: printed "100% busy"
        pytest.param(0.995, "99.5%", id="rounds-up-to-100"),
        pytest.param(0.99996, "99.9%", id="would-print-100.0"),
        pytest.param(0.994, "99%", id="whole"),
        pytest.param(1.0, "100%", id="saturated"),
        pytest.param(0.5, "50%", id="half"),
        pytest.param(0.049, "4.9%", id="under-10"),
    ],
)
def test_a_share_under_one_never_reads_as_100_percent(share: float, said: str) -> None:
    assert _percent(share) == said


@pytest.mark.parametrize(
    ("replicas", "places", "rate", "request_s"),
    [
        pytest.param(17, 15, 10.0, 23.7, id="agent-llama70b"),  # review74: M/M/15 at 92.9%, 71% wait, p95 59.2 s
        pytest.param(20, 76, 1.0, 1421.0, id="r1-gke"),
        pytest.param(256, 1, 4.0, 58.4, id="one-place"),  # M/M/1: C = rho
        pytest.param(3, 101, 21.0, 14.04, id="chat-70b"),
    ],
)
def test_even_routing_is_each_replicas_own_m_m_b_queue(replicas: int, places: int, rate: float, request_s: float) -> None:
    queue = SlotQueue(places, request_s, 1.0, "even")
    wait = pooled_slot_wait(rate, ((replicas, queue),))
    waits, p95 = _own_queue(places, rate / replicas, request_s)
    assert wait.waits == pytest.approx(waits, rel=1e-9)
    assert wait.p95_s == pytest.approx(p95, rel=1e-9)
    assert wait.servers == replicas * places and wait.offered == pytest.approx(rate * request_s)
    # the same places behind one queue wait far less
    shared = pooled_slot_wait(rate, ((replicas, queue._replace(routing="free_place")),))
    assert shared.waits < wait.waits


def test_the_review74_agent_figures() -> None:
    """agent-llama70b (15 places, 23.7 s, 2.51 s slack, 10 req/s): 17 replicas behind one queue, 25 with a queue each."""
    at_17 = _own_queue(15, 10 / 17, 23.7)
    assert at_17[0] == pytest.approx(0.71, abs=0.01) and at_17[1] == pytest.approx(59.2, abs=0.2)
    cases: tuple[tuple[Routing, int], ...] = (("free_place", 17), ("even", 25))
    for routing, count in cases:
        oracle = (_shared_count if routing == "free_place" else _even_count)(10.0, 15, 23.7, 2.51, 16)
        assert slot_replicas(10.0, SlotQueue(15, 23.7, 2.51, routing), 16) == oracle == count


def _simulated_random_routing(parts: SlotParts, rate: float, arrivals: int = 300_000) -> tuple[float, float]:
    """P(wait) and the p95 wait where each request goes to a replica picked at random, each its own FCFS queue.

    Each replica's places are a heap of the times they free; a request takes its replica's first place to free.
    """
    rng = random.Random(88)
    replicas = [(q.per_replica, q.request_s) for n, q in parts for _ in range(n)]
    free = [[0.0] * b for b, _ in replicas]
    now, waits = 0.0, []
    for _ in range(arrivals):
        now += rng.expovariate(rate)
        i = rng.randrange(len(replicas))
        start = max(now, heapq.heappop(free[i]))
        waits.append(start - now)
        heapq.heappush(free[i], start + rng.expovariate(1.0 / replicas[i][1]))
    kept = sorted(waits[arrivals // 10 :])
    return sum(1 for w in kept if w > 0) / len(kept), kept[int(0.95 * len(kept))]


@pytest.mark.parametrize(
    ("parts", "rate"),
    [
        pytest.param(((3, SlotQueue(8, 3.0, 1.0, "even")), (2, SlotQueue(12, 1.5, 1.0, "even"))), 9.0, id="unlike"),
        pytest.param(((2, SlotQueue(4, 1.0, 1.0, "even")), (1, SlotQueue(6, 2.0, 1.0, "even"))), 6.0, id="few-places"),
    ],
)
def test_a_splits_even_routing_is_the_mixture_of_its_replicas_queues(parts: SlotParts, rate: float) -> None:
    """A split under even routing: a request lands on a part's replica with the share n / N; the p95 of the mixture."""
    wait = pooled_slot_wait(rate, parts)
    replicas = sum(n for n, _ in parts)
    own = [(n / replicas, _erlang_c(q.per_replica, rate / replicas * q.request_s), q) for n, q in parts]
    assert wait.waits == pytest.approx(sum(s * c for s, c, _ in own), rel=1e-9)

    def beyond(t: float) -> float:
        return sum(s * c * math.exp(-(q.per_replica - rate / replicas * q.request_s) * t / q.request_s) for s, c, q in own)

    assert wait.p95_s > 0 and beyond(wait.p95_s) == pytest.approx(TAIL, rel=1e-6)
    simulated_waits, simulated_p95 = _simulated_random_routing(parts, rate)
    assert simulated_waits == pytest.approx(wait.waits, rel=0.1)
    assert simulated_p95 == pytest.approx(wait.p95_s, rel=0.15)


AGENT = """\
version: 1
name: agent-llama
deployments:
  - name: agent
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 131072
      avg_input_tokens: 60000
      p95_input_tokens: 100000
      avg_output_tokens: 500
      requests_per_second: 10{routing}
      slo: {{ttft_p95_ms: 8000, tpot_ms: 50}}
hardware: {{provider: gcp, gpus: [h100-sxm5-80gb]}}
objective: cost
kubernetes: {{location: us-central1, zone: us-central1-a, gcp_project: my-proj}}
outputs: [kubernetes]
"""

R1 = """\
version: 1
name: r1
deployments:
  - name: r1
    model: deepseek-ai/DeepSeek-R1
    inference:
      precision: fp8
      kv_cache_precision: bf16
      max_context_tokens: 40960
      avg_input_tokens: 1000
      avg_output_tokens: 32000
      requests_per_second: 1{routing}
      slo: {{ttft_p95_ms: 3000, tpot_ms: 50}}
hardware: {{provider: gcp, gpus: [h100-sxm5-80gb, h200-sxm-141gb, b200-sxm-180gb]}}
objective: cost
kubernetes: {{location: us-central1, zone: us-central1-a, gcp_project: my-proj}}
outputs: [kubernetes]
"""

IDLE = """\
version: 1
name: idle
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    parallelism: {{tp: 8, pp: 1}}
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 131072
      avg_input_tokens: 100000
      avg_output_tokens: 2000
      requests_per_second: 0.5{routing}
      slo: {{ttft_p95_ms: 16000, tpot_ms: 14.3}}
hardware: {{gpus: [h100-sxm5-80gb], provider: baremetal}}
"""


def _plan(tmp_path: Path, text: str, routing: str | None = None) -> Any:
    path = tmp_path / "w.yaml"
    path.write_text(text.format(routing="" if routing is None else f"\n      routing: {routing}"))
    return plan_file(str(path))[1]


def _slot_line(dep: Any) -> tuple[str, float, int, int]:
    """The slot line and its request time, places a replica and replicas."""
    (line,) = (r for r in dep.reasons if r.startswith("a request holds a place in the batch"))
    held = re.match(r"a request holds a place in the batch for ([\d,.]+) s", line)
    # one pooled queue of c places (free_place), or a queue of b places each (even: newuser73 item 4)
    shape = re.search(r"; ([\d,]+) (?:replica\(s\) x ([\d,]+) places = |queue\(s\) of ([\d,]+) places \(b\), each )", line)
    assert held and shape
    places = shape[2] or shape[3]
    assert ("(b), each" in line) is ("inference.routing even," in line)
    return line, float(held[1].replace(",", "")), int(places.replace(",", "")), int(shape[1].replace(",", ""))


@pytest.mark.parametrize(
    ("text", "replicas", "even"),
    [
        # fix90: under even routing a replica at its share (0.588 of 0.633 req/s, the 19/20 rung) runs 30 places at a
        # shorter TTFT, so 17 hold it either way: no warning (before: 15 places at the most load, 25 needed)
        # acc122: 23 x TP8 PP2 since the stated prompt spread takes no ttft_p95_factor (was 17 x TP8 PP3)
        pytest.param(AGENT, 23, None, id="agent-llama70b"),
        # 20 x 76 places, 1,421 s a request, 2.81 s slack: 0.5% wait; a queue each at 20: M/M/76 at 93.5%, 46% wait,
        # p95 634 s; at 23, 5.3% wait, p95 5.4 s > 2.81 s; 24 (review74's 23 was at the 1,415 s of its run).
        # acc181 (landed by acc183): vLLM's fused-MoE layers take a fixed 70 us a step each, DeepSeek-R1's 58 = 4.06 ms
        # more a step: a request 1,421 -> 1,554 s (+133 s over its ~32,700 steps), 22 x 76 places (93% busy, 0.2%
        # wait); a queue each: 42% wait at 22, p95 617 s against the 2.79 s slack, 26 keep it
        pytest.param(R1, 22, 26, id="r1-deepseek-gke"),
    ],
)
def test_the_default_routing_warns_of_the_count_a_queue_each_needs(
    tmp_path: Path, text: str, replicas: int, even: int | None
) -> None:
    plan = _plan(tmp_path, text)
    (dep,) = plan.deployments
    assert dep.replicas == replicas
    line, request_s, places, counted = _slot_line(dep)
    assert counted == replicas
    assert "(Erlang C, an M/M/c queue: inference.routing free_place, a router that holds each request until" in line
    warnings = [f for f in plan.findings if f.code == "slot-routing"]
    if even is None:
        assert not warnings
        assert _plan(tmp_path, text, "even").deployments[0].replicas == replicas
        return
    (warning,) = warnings
    assert warning.level == "warning" and warning.path == "deployments[0].inference"
    assert f"its {replicas} replica(s) are sized for a router that holds each request" in warning.message
    assert f"each replica sent at most {places} requests in flight" in warning.message
    assert f"and {even} replicas would keep it there" in warning.message
    assert "https://www.haproxy.com/documentation/haproxy-runtime-api/reference/set-maxconn-server/" in warning.message
    # the oracle, from the plan's own figures: the slack the warning states, the request time the line states (the
    # TTFT p95 194 ms of 3 s: its 5% is far under the slack, so the wait's own p95 within the slack is the rule's)
    slack = float(re.search(r"against the ([\d.]+) s the TTFT p95 target leaves", warning.message)[1])  # type: ignore[index]
    assert _even_count(1.0, places, request_s, slack, replicas) == even
    assert _plan(tmp_path, text, "even").deployments[0].replicas == even


def test_even_routing_sizes_a_queue_each_and_says_so(tmp_path: Path) -> None:
    """routing: even: each replica's own M/M/b queue at its share, the TTFT and the wait held to 5% past the target.

    fix90: 17 replicas at 0.588 req/s each (the 19/20 rung of 0.633) run 30 places at 25.65 s a request: 15.1 Erlangs
    on 30 places, 0.0% wait; the oracle (Erlang B's recursion, the convolution by a midpoint sum) agrees. acc122 (the
    stated prompt spread takes no ttft_p95_factor): 23 x TP8 PP2 at 0.435 req/s each run 18 places, 4.7% wait,
    P(TTFT + wait > 8 s) = 4.0% (4.2% since acc126, 3.5% since acc129); the oracle agrees.
    """
    plan = _plan(tmp_path, AGENT, "even")
    (dep,) = plan.deployments
    assert not any(f.code == "slot-routing" for f in plan.findings)
    line, _request_s, places, replicas = _slot_line(dep)
    assert "(Erlang C of each replica, an M/M/b queue of its own: inference.routing even" in line
    # was (17, 30): 17 x TP8 PP3 before acc122; now 23 x TP8 PP2 (the stated prompt spread takes no ttft_p95_factor)
    assert (replicas, places) == (23, 18)
    ((_, queue),) = resolved(10.0, ((replicas, dep.slot_queue),))
    assert queue.tail is not None
    offered = 10 / replicas * queue.request_s
    waits = _erlang_c(places, offered)
    assert _past_target(queue.tail, 8.0, waits, (places - offered) / queue.request_s) <= 0.05
    # was 0.46% at 17 x TP8 PP3 before acc122; 23 x TP8 PP2 at 18 places, 63% busy, 4.7% wait: 4.0%; acc126 (the
    # stated spread's wait each length's M/D/1 law, not the exponential from 0: the TTFT's tail near 8 s fuller): 4.2%;
    # acc129 (past the stated lengths M/G/1's own decay, the tail near 8 s thinner): 3.5%
    assert "P(TTFT + wait > 8,000 ms) = 3.5%, within the 5%" in line
    assert (dep.details["slot_wait_share"], dep.details["slot_wait_p95_s"]) == (round(waits, 3), 0.0)


def _idle_queue(tmp_path: Path, text: str, routing: str | None) -> tuple[Any, SlotQueue]:
    """The plan and the chosen layout's slot queue (read off the planner, the arithmetic on it done here).

    The options another test formed for the same workload in this process are forgotten first, so the planner forms
    them again and the spy sees their queues (test_engine_settings plans the same reranker).
    """
    from generator.planner import clear_search_caches, inference

    clear_search_caches()

    seen: list[SlotQueue] = []
    original = inference.slot_queue

    def spy(spec: Any, point: Any, margin: float = 1.0) -> SlotQueue | None:
        queue = original(spec, point, margin)
        if queue is not None and point.idle_bound is not None and point.batch == 1:
            seen.append(queue)
        return queue

    inference.slot_queue = spy
    try:
        plan = _plan(tmp_path, text, routing)
    finally:
        inference.slot_queue = original
    return plan, seen[-1]


def _rung(queue: SlotQueue, share: float) -> tuple[int, float, float, TtftTail]:
    """(places, request time, slack, TTFT tail) of the ladder's first rung at or above a replica's ``share`` of the rate."""
    for rate, places, request_s, slack, tail in queue.by_rate:
        if rate >= share:
            assert slack is not None and tail is not None
            return places, request_s, slack, tail
    assert queue.slack_s is not None and queue.tail is not None
    return queue.per_replica, queue.request_s, queue.slack_s, queue.tail


@pytest.mark.parametrize(("routing", "replicas", "places"), [(None, 25, 1), ("even", 52, 2)])
def test_a_replica_below_one_in_flight_waits_for_its_place_too(
    tmp_path: Path, routing: str | None, replicas: int, places: int
) -> None:
    """review74 item 3: 100,000-token prompts at 0.5 req/s, TTFT 16 s, TPOT 14.3 ms, TP8: below one in flight.

    A replica takes 0.0279 req/s within the SLOs (18 for the rate), batch 1: before, no slot queue, 18 replicas at
    95.5% of 18 places, p95 wait about 116 s. At its most rate the TTFT p95 is the target itself (the rate is the
    highest meeting it), so the wait would have to be nil; but a fleet of N runs each replica at 0.5 / N, where the
    TTFT p95 is lower and more batches meet the SLOs: the queue is taken at the first twentieth of the most rate at or
    above that share (its places the largest batch meeting the SLOs there, a request's time its mean there, the slack
    the target less that TTFT p95). fix90: the rule is P(TTFT + wait > 16 s) <= 5%, the TTFT's tail convolved with
    the wait's (the old rule, the p95 wait within the slack, took 24 x 1 and 45 x 2, where 5.4% waited 0.36 s p95
    against a TTFT whose own 5% was at the target). One queue: 25 x 1 places (0.02 req/s each, 66% busy), 3.3% wait,
    4.7% past the target; 24 is past 5%. A queue each: 52 x 2 places, 4.9%; 51 past it.
    """
    plan, queue = _idle_queue(tmp_path, IDLE, routing)
    (dep,) = plan.deployments
    line, request_s, said_places, counted = _slot_line(dep)
    assert (dep.replicas, counted, said_places) == (replicas, replicas, places)
    assert "its mean TTFT and its output at the TPOT, the replica below one sequence in flight at its share" in line
    assert "more than the rate alone needs (18)" in line
    for n, meets in ((replicas, True), (replicas - 1, False)):
        b, s, slack, tail = _rung(queue, 0.5 / n)
        c, offered = (n * b, 0.5 * s) if routing is None else (b, 0.5 / n * s)  # one queue, or each replica's own
        share = _past_target(tail, 16.0, _erlang_c(c, offered), (c - offered) / s)
        assert (share <= 0.05) is meets, (n, b, s, slack, share)
    b, s, slack, _ = _rung(queue, 0.5 / replicas)
    assert (b, round(s, 2)) == (places, request_s)
    if routing is None:
        # review75: the slot-routing warning states the slack and places at the planned count, as the line does (the
        # rung at 0.5 / 24: 1.16 s), not the most rate's (nil there)
        (warning,) = (f for f in plan.findings if f.code == "slot-routing")
        assert b == 1  # one place a replica: "1 request", not "1 requests"
        assert f"one queue in front of all {replicas} places, each replica sent at most 1 request in flight" in warning.message
        said = re.search(r"against the ([\d.]+) s the TTFT p95 target leaves", warning.message)
        assert said and float(said[1]) == round(slack, 2) > 0


def test_a_lightly_loaded_replica_below_one_in_flight_keeps_its_count(tmp_path: Path) -> None:
    """test_engine_settings' 12,000-token reranker at 0.2 req/s: one replica at 0.2 of its 0.316 req/s takes two
    places there (1.82 s a request): 0.364 Erlangs on 2 places wait 5.6%, p95 0.13 s, within the slack: 1 L40S, as
    before. At the most rate (one place, no slack) it would have taken 3."""
    plan, queue = _idle_queue(tmp_path, RERANK, None)
    (dep,) = plan.deployments
    assert dep.replicas == 1
    b, s, slack, tail = _rung(queue, 0.2)
    assert b == 2
    waits = _erlang_c(2, 0.2 * s)
    assert waits > TAIL and s * math.log(waits / TAIL) / (2 - 0.2 * s) <= slack
    assert _past_target(tail, 4.0, waits, (2 - 0.2 * s) / s) <= 0.05  # fix90's rule: the TTFT and the wait together


RERANK = """\
version: 1
name: rerank
deployments:
  - name: cls
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 16384, avg_input_tokens: 12000, avg_output_tokens: 16,
                requests_per_second: 0.2, slo: {{ttft_p95_ms: 4000, tpot_ms: 200}}}}
hardware:
  gpus: [l40s-48gb, l4-24gb, a10g-24gb]
  provider: aws
"""


HOME = Path(__file__).resolve().parent.parent / "examples" / "home-70b-offload.yaml"


@pytest.mark.parametrize(
    ("text", "where", "said"),
    [
        pytest.param(AGENT.format(routing="\n      routing: random"), "w.yaml:14:", "free_place", id="unknown-routing"),
        pytest.param(
            re.sub(r"(\n(\s*)requests_per_second: [^\n]*)", r"\1\n\2routing: even", HOME.read_text(), count=1),
            "w.yaml:15:",
            "routing sizes a fleet of replicas for how requests reach them; hardware.fixed",
            id="fixed-machine",
        ),
    ],
)
def test_routing_is_refused_where_it_is_not_a_choice(tmp_path: Path, text: str, where: str, said: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(SpecgenError) as caught:
        load_workload(str(path))
    assert where in str(caught.value) and said in str(caught.value)


def test_the_looser_target_the_idle_note_names_counts_the_wait_too(tmp_path: Path) -> None:
    """review74 item 3: "at 24,000 ms ... about N replicas" counted the rate alone (18); planning at 24 s gives 22 (25 at 16 s).

    At 24 s a replica takes 0.0291 req/s, a request 34.36 s in its one place, with 7.81 s of slack. fix90: the rule is
    P(TTFT + wait > 24 s) <= 5%: 22 x 1 places at 17.18 Erlangs (78%), 20% wait, p95 9.74 s, but the TTFT p95 is
    16.2 s and the waiting ones mostly keep within 24 s: 4.5% past it (the old rule, the p95 wait within 7.81 s, took
    23). The oracle: the line's figures, the TTFT's tail off the plan's queue.
    """
    plan = _plan(tmp_path, IDLE)
    (note,) = (f for f in plan.findings if f.code == "ttft-bound-idle")
    assert "(about 22 replicas instead of 25)" in note.message
    assert note.message.endswith("the wait for a place in a replica's batch is stated apart, for inference.routing free_place")
    looser = _plan(tmp_path, IDLE.replace("ttft_p95_ms: 16000", "ttft_p95_ms: 24000"))
    (dep,) = looser.deployments
    line, _request_s, places, counted = _slot_line(dep)
    assert (dep.replicas, counted, places) == (22, 22, 1)
    assert "P(TTFT + wait > 24,000 ms) = 4.5%, within the 5%" in line
    ((_, queue),) = resolved(0.5, ((22, dep.slot_queue),))
    assert queue.tail is not None
    for n, meets in ((22, True), (21, False)):
        offered = 0.5 * queue.request_s
        assert (_past_target(queue.tail, 24.0, _erlang_c(n, offered), (n - offered) / queue.request_s) <= 0.05) is meets


def test_the_routings_are_the_literal_the_field_is_typed_with() -> None:
    """ROUTINGS is spelled out (typing is not imported at run time); it and the field's Routing literal name the same two."""
    import typing

    from generator.sizing import serving_queue
    from generator.workload import models

    assert typing.get_args(models.Routing) == serving_queue.ROUTINGS == ("free_place", "even")
