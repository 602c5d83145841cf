"""A serving replica at steady state: its rate at a batch (Little's law), its stretched TPOT, its prompts' queue.

One replica decodes ``batch`` sequences; every request first has its prompt prefilled, and those prefills take
``rate x prefill`` of every second from the decode steps (chunked prefill interleaves them). The planner and
``specgen estimate --batch`` both state the steady state through :func:`steady_state` (newuser34 item 7: the
estimate gave the decode-only step as the TPOT, 18.8 ms where the plan's same batch took 34.7 ms).

The prompts queue for the replica's prefill time (first come, first served): :func:`prefill_wait_p95` is the
95th-percentile wait of an M/G/1 queue, the service-time spread taken from the prompt-length mix
(:func:`least_spread_mix`, where a workload gives the p95 prompt length) or none (every prompt of the average length:
M/D/1); :func:`wait_past` is the wait's tail all take, for stated lengths each one's M/D/1 law by its share of the
prefill time (:func:`stated_heads`), past them M/G/1's own decay and asymptote (:func:`tail_decay`, :func:`settling`).
"""

from __future__ import annotations

import functools
import math

from generator.named_tuple import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal, TypeAlias

#: The share of prompts at or above the 95th-percentile length.
TAIL_SHARE = 0.05


def little_rate(batch: int, ttft_s: float, decode_s: float, prefill_s: float) -> float:
    """Requests/s ``r`` at which ``batch`` sequences are in flight: ``r x W(r) = batch`` (Little's law).

    A request spends ``W(r) = ttft + decode / (1 - r x prefill)`` in the system: prefills interleaved with
    decode take ``r x prefill`` of every second, stretching the decode steps. ``r x W(r)`` rises from 0 to
    infinity on ``[0, 1 / prefill)``, so the answer is the smaller root of
    ``ttft x prefill x r^2 - (ttft + decode + batch x prefill) x r + batch = 0``, written in the form that
    does not cancel: ``r = 2 batch / (b + sqrt(b^2 - 4 ttft x prefill x batch))`` with ``b = ttft + decode +
    batch x prefill``.
    """
    linear = ttft_s + decode_s + batch * prefill_s
    discriminant = max(0.0, linear * linear - 4.0 * ttft_s * prefill_s * batch)
    return 2.0 * batch / (linear + math.sqrt(discriminant))


class SteadyState(NamedTuple):
    """A replica with ``batch`` sequences in flight, each prompt's prefill riding along with the decode steps."""

    requests_per_s: float
    #: The decode step stretched by the prefills (what a sequence sees between two of its tokens).
    tpot_s: float
    #: Share of the time the replica spends in prefill (the prompt queue's utilisation).
    prefill_busy: float


def steady_state(
    batch: int,
    ttft_s: float,
    step_s: float,
    output_tokens: int,
    prefill_s: float,
    at_rate: float | None = None,
) -> SteadyState:
    """The rate ``batch`` sequences in flight sustain (:func:`little_rate`) and the TPOT they see there.

    ``step_s``: the decode-only step of ``batch`` sequences; ``prefill_s``: the time a prompt takes from the replica
    (its mean, over a prompt-length mix); ``at_rate``: a lower rate the replica is loaded at (fewer prompts a second,
    so the steps stretch less). The TPOT is ``step / (1 - rate x prefill)``: the steps share each second with the
    prefills of the prompts that replace the finished sequences: requests arriving on their own (a plan's Poisson
    arrivals) come while any sequence decodes. A benchmark's fixed clients, where a sequence decodes beside the other
    ``batch - 1``'s prompts only, pass those as ``prefill_s`` (``estimate --batch``, newuser73 item 17).
    """
    rate = little_rate(batch, ttft_s, output_tokens * step_s, prefill_s)
    rate = rate if at_rate is None else min(rate, at_rate)
    share = rate * prefill_s
    return SteadyState(rate, step_s / max(1e-9, 1.0 - share), share)


#: The stated prompt lengths' wait law (:func:`wait_past`): (share of the prefill time, prefill s) of each length.
#: Empty where the spread is not stated (the exponential from 0); one head of the mean where every prompt has one length.
if TYPE_CHECKING:
    Heads: TypeAlias = tuple[tuple[float, float], ...]
    #: Each head's way past its prefill (:func:`settling`): (the asymptote's share ``a``, the rate ``k`` 1/s the rest
    #: fades at). Empty: the exponential at the decay from ``P(W > h)`` alone (``a = 1``).
    Settles: TypeAlias = tuple[tuple[float, float], ...]


def prefill_wait_p95(utilisation: float, prefill_s: float, scv: float = 0.0, *, prompts_s: Heads = ()) -> float:
    """95th-percentile wait of a prompt for the prompts ahead of it, at ``utilisation`` of the replica in prefill.

    Poisson arrivals and first-come-first-served prefills are an M/G/1 queue. Its mean wait is Pollaczek-Khinchine's
    ``rho E[S] (1 + c^2) / (2 (1 - rho))``, ``E[S]`` the mean prefill (``prefill_s``) and ``c^2`` the squared
    coefficient of variation of the prefill times (``scv``; 0: every prompt of one length, an M/D/1 queue). Its tail
    is :func:`wait_past`'s. Where the workload does not state the prompts' lengths (``prompts_s`` empty: every prompt
    taken of the average length, ``ttft_p95_factor`` its allowance; pooling), a prompt waits with probability ``rho``,
    then an exponential wait of mean ``W / rho``, so the 95th percentile is ``E[S] (1 + c^2) ln(rho / 0.05) / (2 (1 -
    rho))`` (0 while no more than one prompt in twenty waits). With the prompt's own prefill, against a simulation of
    300,000 arrivals of 0.535 s prefills (newuser15): 2.67 s at rho 0.67 (simulated 2.47), 1.90 at 0.54 (1.74).

    Where it states them (``prompts_s``: (share, prefill s) of each length, :func:`least_spread_mix`'s two), the wait
    is :func:`stated_heads`' law: each length's M/D/1 law at the queue's load, weighted by its share of the prefill
    time (acc123 for one length, acc126 for a spread), past them M/G/1's own tail (acc129). One length: within one
    prefill M/D/1's exactly, ``P(W > x) = 1 - (1 - rho) e^{rho x / S}``, so where at most one prompt in twenty waits
    past a whole prefill the p95 is ``S ln(0.95 / (1 - rho)) / rho``, else ``S`` plus M/D/1's tail's from there: 2.48
    s and 1.78 s for newuser15's (the heavy-traffic slope gave 2.66 and 1.91). Of two lengths (95% of 0.1 s prefills,
    5% of 1.0 s, ``c^2`` 1.83), the wait's p95 against 4,000,000 simulated arrivals (Lindley's recursion): 0.708 s at
    rho 0.3 (simulated 0.698; the exponential from 0 gave 0.53), 1.025 at 0.45 (0.94), 1.40 at 0.6 (1.38); over mixes
    of 2% to 90% of the long prefill and rho 0.06 to 0.8 (200,000 arrivals, ``tests/test_prompt_tail.py``) from 5.7%
    below to 11.5% above (the heavy-traffic slope past the heads: 2.9% below to 15.3% above, the most at rho 0.45-0.5
    of the widest mixes, where one length's law was itself 9% above).
    """
    if prefill_s <= 0 or utilisation <= 0:
        return 0.0
    return wait_quantile(TAIL_SHARE, *_wait_law(utilisation, prefill_s, scv, prompts_s))


def _past_one_prefill(rho: float) -> float:
    """M/D/1's ``P(W > S) = 1 - (1 - rho) e^rho``: a prompt waits past one whole prefill (``rho^2 / 2`` at low load)."""
    return rho - (1 - rho) * math.expm1(rho)


def wait_past(x: float, busy: float, decay: float, heads: Heads = (), settles: Settles = ()) -> float:
    """``P(W > x)``: a prompt's wait in the replica's prompt queue, ``busy`` the share of the time in prefill (rho).

    With no ``heads`` (the spread not stated), ``rho e^{-decay x}``, ``decay`` the heavy-traffic slope ``2 (1 - rho) /
    (E[S] (1 + c^2))`` (``rho / E[W]``: ``1 / E[W | W > 0]``). With ``heads`` ((weight, h) of each stated prompt
    length, :func:`stated_heads`), the weighted sum of M/D/1's law at load ``rho`` with prefills of ``h``: within ``h``,
    ``1 - (1 - rho) e^{rho x / h}`` exactly (a prompt arriving at low load waits the residual of the prefill in
    progress, uniform over it: acc123); past it, from ``P(W > h) = 1 - (1 - rho) e^rho``, ``P(W > h) (a e^{-decay y} +
    (1 - a) e^{-k y})``, ``y = x - h``, ``decay`` M/G/1's own (:func:`tail_decay`) and (a, k) the head's ``settles``
    (:func:`settling`: the asymptote ``C e^{-decay x}`` exactly, reached at ``k``; none: a = 1). Continuous at ``h``.
    """
    if x < 0:
        return 1.0
    if busy <= 0:
        return 0.0
    if not heads:
        return busy * math.exp(-x * decay)
    total, after = 0.0, -1.0  # P(W > h) for every head alike (one load), worked out once where a head is passed
    for index, (weight, head) in enumerate(heads):  # inline: miss_share's convolution calls it per cell
        if x < head:
            total += weight * (busy - (1 - busy) * math.expm1(busy * x / head))
        else:
            after = _past_one_prefill(busy) if after < 0 else after
            past = math.exp(-(x - head) * decay)
            if settles:
                lead, settle = settles[index]
                past = lead * past + (1 - lead) * math.exp(-(x - head) * settle)
            total += weight * after * past
    return total


def _one_head_quantile(share: float, busy: float, decay: float, head_s: float, settle: tuple[float, float]) -> float:
    """The least ``x`` with one head's law (:func:`wait_past`) at most ``share`` (``busy`` above it).

    Within the head in closed form; past it ``P(W > h) (a e^{-decay y} + (1 - a) e^{-k y}) = share``, between ``ln(P(W
    > h) min(a, 1) / share) / decay`` and ``ln(P(W > h) max(a, 1) / share) / decay`` (``k >= decay``: the second term
    falls no slower), by Newton's steps kept in that bracket (a bisection where one would leave it).
    """
    after = _past_one_prefill(busy)
    if after <= share:  # within the prefill in progress: 1 - (1 - rho) e^{rho x / S} = share
        return head_s * math.log1p((busy - share) / (1 - busy)) / busy
    lead, rate = settle
    low, high = (max(0.0, math.log(after * b / share) / decay) for b in sorted((lead, 1.0)))
    y = high
    for _ in range(_DECAY_STEPS):
        gap = after * (lead * math.exp(-decay * y) + (1 - lead) * math.exp(-rate * y)) - share
        slope = after * (lead * decay * math.exp(-decay * y) + (1 - lead) * rate * math.exp(-rate * y))
        low, high = (y, high) if gap > 0 else (low, y)
        step = y + gap / slope if slope > 0 else high + 1.0
        step = step if low <= step <= high else (low + high) / 2
        if abs(step - y) <= y * 1e-15:
            break
        y = step
    return head_s + y


def wait_quantile(share: float, busy: float, decay: float, heads: Heads = (), settles: Settles = ()) -> float:
    """The least ``x`` with ``P(W > x) <= share`` (:func:`wait_past`).

    0 where no more than ``share`` wait; with no heads, the exponential's ``ln(rho / share) / decay``; one head, its own
    (:func:`_one_head_quantile`: within it ``h ln((1 - share) / (1 - rho)) / rho``); several, a bisection between the
    least and the most of their own (each within ``share`` at the most of them, each past it below the least: so is
    their weighted sum).
    """
    if busy <= share:
        return 0.0
    if not heads:
        return math.log(busy / share) / decay
    each = settles or ((1.0, decay),) * len(heads)
    own = [_one_head_quantile(share, busy, decay, head, settle) for (_, head), settle in zip(heads, each, strict=True)]
    if len(own) == 1:
        return own[0]
    low, high = min(own), max(own)
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if wait_past(middle, busy, decay, heads, settles) > share else (low, middle)
    return high


def stated_heads(prefill_s: float, prompts_s: Heads) -> Heads:
    """The heads of :func:`wait_past` for the prompt lengths a workload states: (share, prefill s) of each.

    None where it states none (``ttft_p95_factor``'s rule and pooling keep the exponential from 0: their prompts are not
    known to be of one length). One length (every time the same): one head of the mean prefill, M/D/1's law (acc123).
    Several: each length's M/D/1 law weighted by its share of the prefill time, ``p_j S_j / E[S]`` (acc126). That is
    exact where a prompt waits at most one prefill in progress (at low load ``P(W > x) = lam sum p_j (S_j - x)^+``, the
    residual of the prefill in progress), its mean is Pollaczek-Khinchine's within the heads' approximation, and it
    tends to one length's law as the lengths meet (continuous in the spread). The exponential from 0, as before, had a
    stated spread's p95 23% short at rho 0.3 (95% of 0.1 s prefills, 5% of 1.0 s: 0.53 s against 0.69 simulated).
    """
    if not prompts_s:
        return ()
    if len({taken for _, taken in prompts_s}) == 1:
        return ((1.0, prefill_s),)
    work = sum(share * taken for share, taken in prompts_s)
    return tuple((share * taken / work, taken) for share, taken in prompts_s if share * taken > 0)


def _wait_law(utilisation: float, prefill_s: float, scv: float, prompts_s: Heads) -> tuple[float, float, Heads, Settles]:
    """The prompt queue's (busy, decay, heads, settles) for :func:`wait_past`: the one law every TTFT p95 takes.

    The heads where the workload states its prompts' lengths (:func:`stated_heads`), their tail M/G/1's own
    (:func:`tail_decay`, :func:`settling`); none where it does not (the heavy-traffic exponential from 0).
    """
    rho = min(utilisation, 0.999)
    heads = stated_heads(prefill_s, prompts_s)
    if not heads:
        return rho, 2 * (1 - rho) / (prefill_s * (1 + scv)), heads, ()
    decay = tail_decay(rho, heads)
    return rho, decay, heads, settling(rho, decay, heads)


#: Newton's steps :func:`tail_decay` takes at most (it converges from above in a handful: quadratically near the root).
_DECAY_STEPS = 60


def _log_rise(u: float) -> tuple[float, float]:
    """``ln((e^u - 1) / u)`` and its derivative ``1 / (1 - e^{-u}) - 1 / u`` at ``u >= 0`` (no overflow, no cancellation)."""
    if u < 1e-4:  # the series: u / 2 + u^2 / 24, 1/2 + u / 12
        return u / 2 + u * u / 24, 0.5 + u / 12
    return u + math.log(-math.expm1(-u)) - math.log(u), -1.0 / math.expm1(-u) - 1.0 / u


def tail_decay(busy: float, heads: Heads) -> float:
    """M/G/1's asymptotic decay ``theta`` (1/s) of the wait, ``P(W > x) ~ C e^{-theta x}``: Cramer-Lundberg's root.

    ``lam (E[e^{theta S}] - 1) = theta`` over the stated prompt lengths (:func:`stated_heads`' (weight ``w_j``, prefill
    ``h_j``), ``w_j = p_j h_j / E[S]``, ``lam = rho / E[S]``) reads ``sum w_j (e^{theta h_j} - 1) / (theta h_j) = 1 /
    rho``: ``K(theta) = ln sum w_j (e^{theta h_j} - 1) / (theta h_j) = -ln rho``, ``K`` the cumulant generating function
    of ``h U`` (``h`` drawn by weight, ``U`` uniform on [0, 1]), convex and rising from 0 at slope ``E[hU] = sum w_j
    h_j / 2``. Newton's steps from ``-ln rho / K'(0)``, above the root (``K`` lies over its tangent at 0), fall to it
    monotonically. One length ``S``: ``rho (e^u - 1) = u``, ``u = theta S`` (1.2564 at rho 0.5, 0.4308 at 0.8, 3.615
    at 0.1), where the heavy-traffic slope ``2 (1 - rho) / S`` the law took before gave 1, 0.4 and 1.8: too slow a
    fall, the p95 high at moderate load (one length's 9% over a simulated queue at rho 0.6).
    """
    target = -math.log(busy)
    theta = target / sum(w * h / 2 for w, h in heads)
    for _ in range(_DECAY_STEPS):
        rises = [(w, h, *_log_rise(theta * h)) for w, h in heads if w > 0]
        terms = [(math.log(w) + rise, h * slope) for w, h, rise, slope in rises]
        top = max(t for t, _ in terms)
        parts = [(math.exp(t - top), slope) for t, slope in terms]
        total = sum(p for p, _ in parts)
        over = top + math.log(total) - target  # K(theta) + ln rho, >= 0 from above
        step = over / (sum(p * slope for p, slope in parts) / total)
        if not step > theta * 1e-15:
            break
        theta -= step
    return theta


def settling(busy: float, decay: float, heads: Heads) -> Settles:
    """Each head's (a, k) past its prefill (:func:`wait_past`): the law continuous there, M/G/1's asymptote exact.

    M/G/1's wait falls as ``C e^{-theta x}``, ``C = (1 - rho) / (lam E[S e^{theta S}] - 1) = (1 - rho) / (rho sum w_j
    e^{theta h_j} - 1)`` (the pole of Pollaczek-Khinchine's transform at ``-theta``). Each head past ``h_j`` takes ``a
    P(W > h) e^{-theta y}``, ``a = C / sum w_j P(W > h) e^{theta h_j}`` alike for all (their sum is ``C e^{-theta
    x}``), and ``(1 - a) P(W > h) e^{-k_j y}`` more, which keeps the law continuous at ``h_j`` and fades: ``k_j = theta
    + k / h_j``, ``k`` what makes one length's law M/D/1's density just past ``S``, ``(1 - rho) lam (e^rho - 1)`` (the
    prompt then waits out one whole prefill, less the arrivals of that prefill: ``theta S + k`` 5.93 at rho 0.5, 6.37 at
    0.1, 5.46 as rho tends to 1, below the most that keeps the law falling, ``theta S a / (a - 1)``), held there.
    One length at rho 0.5: ``a`` 1.071 (the continuation from ``P(W > S)`` alone was 7% under M/D/1's tail past 1.5
    S); 95% of 0.1 s prefills and 5% of 1 s, ``a`` 0.73 (that continuation was 37% over M/G/1's asymptote).
    """
    after = _past_one_prefill(busy)
    rise = sum(w * math.exp(decay * h) for w, h in heads)  # sum w_j e^{theta h_j}
    lead = (1 - busy) / ((busy * rise - 1) * after * rise)
    one = tail_decay(busy, ((1.0, 1.0),))  # one length's theta S, its own a and its density-matched k
    one_lead = (1 - busy) / ((busy * math.exp(one) - 1) * after * math.exp(one))
    falls = (1 - busy) * busy * math.expm1(busy) / after  # M/D/1's density just past S over P(W > S), S = 1
    settle = (falls - one * one_lead) / (1 - one_lead) - one if abs(1 - one_lead) > 1e-12 else 0.0
    most = math.inf if lead <= 1 else decay * lead / (lead - 1)  # past it the law would rise just past the head
    return tuple((lead, min(most, decay + max(0.0, settle) / h)) for _, h in heads)


def ttft_p95_over_mix(
    own_s: tuple[float, float],
    long_share: float,
    utilisation: float,
    prefill_s: float,
    scv: float,
    taken_s: tuple[float, float] | None = None,
) -> float:
    """95th-percentile TTFT over a mix of two prompt lengths: each prompt's own TTFT plus its wait in the queue.

    ``own_s``: the short and the long prompt's TTFT alone; ``long_share`` of the prompts are long; ``taken_s``: the
    time each takes from the replica (the queue's service times, :func:`stated_heads`; None: ``own_s``). The wait ``W``
    is :func:`wait_past`'s (M/G/1, independent of the prompt's own length), so ``P(TTFT > t) = (1 - share) P(W > t -
    short) + share P(W > t - long)``, solved for 0.05 by bisection between the long prompt's own TTFT (at least one
    prompt in twenty takes that long) and that plus the wait's p95. Against 4,000,000 simulated arrivals, 95% of 0.1 s
    prefills and 5% of 1.0 s: 1.00 s at rho 0.3 (simulated 1.00), 1.17 at 0.45 (1.10), 1.60 at 0.6 (1.60); over
    mixes of 2% to 90% of the long prefill and rho 0.06 to 0.8 (``tests/test_prompt_tail.py``, 200,000 arrivals) from
    1.3% below to 8.4% above (0.4% below to 12.6% above with the heavy-traffic slope past the heads, before acc129).
    """
    short, long = own_s
    if prefill_s <= 0 or utilisation <= 0:
        return long
    taken = own_s if taken_s is None else taken_s
    law = _wait_law(utilisation, prefill_s, scv, ((1 - long_share, taken[0]), (long_share, taken[1])))

    def beyond(t: float) -> float:  # P(TTFT > t)
        return sum(share * wait_past(t - own, *law) for share, own in ((1 - long_share, short), (long_share, long)))

    low, high = long, long + wait_quantile(TAIL_SHARE, *law)
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if beyond(middle) > TAIL_SHARE else (low, middle)
    return high


class TtftTail(NamedTuple):
    """The TTFT's distribution as its p95 is modelled (:func:`ttft_tail`): ``P(TTFT > t)`` is :meth:`beyond`.

    Each prompt's own TTFT (an offset) plus the wait in the replica's prompt queue, :func:`wait_past` (the M/G/1 tail
    :func:`prefill_wait_p95` and :func:`ttft_p95_over_mix` take). ``plain_s``: the average prompt's own TTFT times the
    p95 factor, every request taken that long (the average prompt's rule); ``mix``: (share, own TTFT) of each prompt
    length where the workload gives a p95 prompt (its p95 is the larger of the two rules: the tail is the larger of
    the two, pointwise). Its 95th percentile is the TTFT p95 the point states.
    """

    plain_s: float
    mix: tuple[tuple[float, float], ...] = ()
    busy: float = 0.0
    #: 1/s: the prompt queue's wait tail falls by e every 1/decay seconds (past the heads).
    decay: float = math.inf
    #: The stated prompt lengths' M/D/1 laws, (weight, prefill s) each (:func:`stated_heads`); none: the exponential.
    heads: Heads = ()
    #: Each head's way past its prefill to M/G/1's asymptote (:func:`settling`).
    settles: Settles = ()

    def _waits_past(self, x: float) -> float:
        return wait_past(x, self.busy, self.decay, self.heads, self.settles)

    def beyond(self, t: float) -> float:
        """``P(TTFT > t)``."""
        plain = self._waits_past(t - self.plain_s)
        if not self.mix:
            return plain
        return max(plain, sum(share * self._waits_past(t - own) for share, own in self.mix))

    @property
    def least_s(self) -> float:
        """The shortest TTFT (no request's is shorter)."""
        return min(self.plain_s, *(own for _, own in self.mix)) if self.mix else self.plain_s


def ttft_tail(
    plain_s: float,
    utilisation: float,
    prefill_s: float,
    scv: float = 0.0,
    mix: tuple[tuple[float, float], ...] = (),
    *,
    prompts_s: Heads = (),
) -> TtftTail:
    """The :class:`TtftTail` of a point, its prompt queue as :func:`prefill_wait_p95` and :func:`ttft_p95_over_mix` take it.

    ``plain_s``: the average prompt's own TTFT times the p95 factor; ``mix``: (share, own TTFT) of each prompt length;
    the prompt queue at ``utilisation`` of the replica in prefill (mean prefill ``prefill_s``, spread ``scv``;
    ``prompts_s``: (share, prefill s) of each prompt length the workload states, :func:`stated_heads`).
    """
    if prefill_s <= 0 or utilisation <= 0:
        return TtftTail(plain_s, mix)
    return TtftTail(plain_s, mix, *_wait_law(utilisation, prefill_s, scv, prompts_s))


#: The most times the average prompt the p95 one may be: a mean of ``avg`` leaves at most one prompt in twenty
#: ``20 avg`` long (Markov's inequality).
MOST_TAIL_OVER_MEAN = round(1 / TAIL_SHARE)


def tail_problem(p95_tokens: int, avg_tokens: int, p95_name: str, avg_name: str, avg_said: str = "") -> str | None:
    """Why a p95 prompt length and an average describe no mix :func:`least_spread_mix` takes; None where they do.

    ``p95_name`` / ``avg_name``: the figures as the input names them (a workload's fields, the estimate's flags);
    ``avg_said``: where the average came from, said beside its value (the estimate's default).
    """
    if p95_tokens < avg_tokens:
        return (
            f"{p95_name} ({p95_tokens:,}) is less than {avg_name} ({avg_tokens:,}{avg_said}): the TTFT p95 is sized over "
            "a mix of the p95 prompt (one in twenty) and shorter ones keeping the average, which needs it at least the "
            "average; for a few very long prompts among short ones (the mean above most prompts), give their length"
        )
    if p95_tokens > MOST_TAIL_OVER_MEAN * avg_tokens:
        return (
            f"{p95_name} ({p95_tokens:,}) is more than {MOST_TAIL_OVER_MEAN} x {avg_name} "
            f"({MOST_TAIL_OVER_MEAN * avg_tokens:,}): with an average of {avg_tokens:,} tokens fewer than one prompt in "
            "twenty can be that long (Markov's inequality)"
        )
    return None


class PromptMix(NamedTuple):
    """Prompts of two lengths: ``1 - long_share`` of them ``short_tokens`` long, ``long_share`` ``long_tokens`` long."""

    short_tokens: int
    long_tokens: int
    long_share: float = TAIL_SHARE


def least_spread_mix(avg_tokens: int, p95_tokens: int) -> PromptMix:
    """The prompt-length mix a mean and a 95th percentile give, assumed of the least spread they allow.

    At least one prompt in twenty is ``p95_tokens`` long or longer; of all the mixes with that tail and the mean
    ``avg_tokens``, the one of least variance puts exactly 5% at ``p95_tokens`` and the other 95% at one length,
    ``(avg - 0.05 p95) / 0.95`` (any spread within either part, or a tail past the p95, only adds variance). The
    assumption is the optimistic one the two figures leave: the queue it gives is the least they allow, while the
    p95 prompt's own prefill is what they state. Needs ``avg <= p95 <= 20 avg`` (Markov's inequality: a mean of
    ``avg`` leaves at most ``avg / p95`` of the prompts that long), which the workload checks.
    """
    short = max(1, round((avg_tokens - TAIL_SHARE * p95_tokens) / (1 - TAIL_SHARE)))
    return PromptMix(min(short, p95_tokens), p95_tokens)


def mix_moments(mix: PromptMix, short_s: float, long_s: float) -> tuple[float, float]:
    """The mean and squared coefficient of variation of a time taken per prompt over ``mix`` (``short_s``, ``long_s``)."""
    share = mix.long_share
    mean = (1 - share) * short_s + share * long_s
    if short_s == long_s:  # one length: no spread, exactly (the prompt queue's M/D/1 law, :func:`wait_past`)
        return mean, 0.0
    second = (1 - share) * short_s * short_s + share * long_s * long_s
    return mean, max(0.0, second / (mean * mean) - 1.0) if mean > 0 else 0.0


#: How requests reach a service's replicas (the workload's ``inference.routing``): ``free_place``, a router that holds
#: each request until a replica has a place in its batch free (one queue in front of every place: M/M/c over replicas x
#: places); ``even``, each replica sent an even share whatever its load (a Kubernetes Service's random pick, a
#: round-robin balancer), so each replica has a queue of its own (M/M/b at the rate over the replicas).
if TYPE_CHECKING:
    Routing: TypeAlias = Literal["free_place", "even"]
ROUTINGS: tuple[Routing, ...] = ("free_place", "even")  # Routing's values (tests/test_slot_routing.py checks the two)


class SlotQueue(NamedTuple):
    """The places in the batch a service's replicas give, and what a request may wait for one (:func:`slot_replicas`).

    A replica runs at most ``per_replica`` sequences at once (the batch its latency targets or its KV cache hold: the
    router's cap, the engine's max_num_seqs, or the pool); a request holds one of them for ``request_s`` (its TTFT and
    its output at the TPOT), and one arriving while every place is taken waits for one.
    """

    per_replica: int
    request_s: float
    #: What the wait may take: the TTFT p95 target less the TTFT p95 once placed; None where no target holds it.
    slack_s: float | None
    #: How requests reach the places (:data:`ROUTINGS`): one queue in front of all of them, or each replica's own.
    routing: Routing = "free_place"
    #: A replica below one sequence in flight (review74 item 3): its places, a request's time and the slack at lower
    #: loads, as (a replica's rate, per_replica, request_s, slack_s, tail) by rising rate, the fields above at its most;
    #: a fleet of N replicas at ``rate`` takes the first at or above ``rate / N`` (:func:`resolved`). Empty otherwise.
    by_rate: tuple[tuple[float, int, float, float | None, TtftTail | None], ...] = ()
    #: The TTFT's tail once placed (:class:`TtftTail`), whose p95 is the target less ``slack_s``; None: every request's
    #: TTFT taken at that p95 (then the rule :func:`miss_share` is the p95 wait within the slack).
    tail: TtftTail | None = None
    #: A replica at one sequence in flight or more (fix90, review74 item 5): its rate at the most load (as counted,
    #: over the known gap's margin), and ``rungs(k)``: the queues a replica gives at ``k / 20`` of it (k 1 to 19), one
    #: a batch cap (the largest batch meeting the SLOs there, and each cap of the rungs above), each with its request
    #: time and TTFT tail at that rate. None where the replica has no such ladder.
    top_rate: float = 0.0
    rungs: Callable[[int], tuple[SlotQueue, ...]] | None = None

    #: The TTFT p95 target the tail is held to (with ``tail``; without, the target is the slack, the TTFT taken at 0).
    ttft_target_s: float = 0.0

    @property
    def target_s(self) -> float | None:
        """The TTFT target the TTFT and the wait together are held to (:func:`miss_share`); None where none holds them."""
        if self.slack_s is None:
            return None
        return self.slack_s if self.tail is None else self.ttft_target_s

    @property
    def tail_or_p95(self) -> TtftTail:
        """The TTFT's tail, or where none is given every TTFT at 0 against a target of the slack.

        That is the p95 wait within the slack (``P(W > slack) <= 5%``), for a queue formed without the TTFT's tail.
        """
        return self.tail if self.tail is not None else TtftTail(0.0)


#: The most cells of the TTFT's range (its least to the target) over which :func:`miss_share` convolves the wait.
_CELLS = 128


def miss_share(tail: TtftTail, target_s: float, waits: float, drain: float) -> float:
    """An upper bound on ``P(TTFT + W > target)``: the TTFT ``tail`` once placed and the wait ``W`` for a place before it.

    ``P(W > t) = waits exp(-drain t)`` (M/M/c: ``waits`` Erlang C, ``drain`` ``(c - A) / S``), independent of the TTFT.
    fix90 (review74 item 4): the p95 of the TTFT and the p95 of the wait do not add; where at most one request in twenty
    waits, the wait's p95 is 0 while the requests that wait, wait ``S / (c - A)``, far past the slack, and up to ~10%
    of requests missed the target. The sum is bounded by a numerical convolution, sound and cheap: the TTFT's range
    from its least to the target is cut in cells (an eighth of the wait's e-fold ``1 / drain`` wide, 16 to
    ``_CELLS`` of them), and a TTFT in a cell is taken at the cell's top (the wait then has less room), so ``P =
    P(TTFT > T) + sum P(TTFT in cell) P(W > T - top)`` over-counts by at most ``1 - exp(-drain x cell)`` of the wait's
    part. A union bound over a split point (``P(TTFT > T - u) + P(W > u)``) was
    the other choice: it throws the independence away and counts both tails at once, about twice the convolution where
    both are near their budget. A TTFT of one offset and the prompt queue's tail (no prompt mix) is convolved in
    closed form, exactly (:func:`_unqueued_in`): with no head, ``C ((1 - rho) e^{-k s} + rho d (e^{-d s} - e^{-k s})
    / (k - d))``, ``s`` the target less the offset, ``k`` the drain, ``d`` the queue's decay; with no queue, ``P(W > T -
    value)``.
    """
    past = tail.beyond(target_s)
    if waits <= 0:
        return past
    if not drain > 0:
        return 1.0
    low = tail.least_s
    if low >= target_s:  # every TTFT at or past the target: what waits at all misses it
        return min(1.0, past + (1.0 - past) * waits)
    if not tail.mix:  # one offset and the prompt queue's tail (wait_past): the convolution in closed form
        room = target_s - tail.plain_s
        return min(1.0, past + waits * _unqueued_in(room, tail, drain))
    # a cell a few hundredths of the wait's e-fold (at most _CELLS of them: the error's bound is their width)
    cells = min(_CELLS, max(16, math.ceil(8 * drain * (target_s - low))))
    total, above = past, 1.0
    for i in range(cells + 1):
        x = target_s if i == cells else low + (target_s - low) * i / cells
        at = past if i == cells else tail.beyond(x)
        total += (above - at) * waits * math.exp(-drain * (target_s - x))
        above = at
    return min(1.0, total)


def _unqueued_in(room: float, tail: TtftTail, drain: float) -> float:
    """``E[exp(-drain (room - W)); W <= room]``, ``W`` the prompt queue's wait (:func:`wait_past`), in closed form.

    With heads, their weighted sum (the law is): each the atom ``1 - rho`` at 0; within the head (``h``, M/D/1's
    density ``lam (1 - rho) e^{lam y}``, ``lam = rho / h``): ``lam (1 - rho) (e^{lam m - drain (room - m)} - e^{-drain
    room}) / (lam + drain)``, ``m`` the lesser of ``h`` and ``room``; past it, ``P(W > h) decay`` times the integral
    over ``y`` in ``[h, room]`` of ``exp(-decay (y - h) - drain (room - y))`` (with settles, ``a`` of it and ``(1 - a) P(W >
    h) k`` times that at ``k``).
    """
    if not tail.heads:
        return _one_head_unqueued(room, tail.busy, tail.decay, 0.0, drain)
    each = tail.settles or ((1.0, tail.decay),) * len(tail.heads)
    return sum(
        weight * _one_head_unqueued(room, tail.busy, tail.decay, head, drain, settle)
        for (weight, head), settle in zip(tail.heads, each, strict=True)
    )


def _one_head_unqueued(
    room: float, busy: float, decay: float, head: float, drain: float, settle: tuple[float, float] = (1.0, 0.0)
) -> float:
    """:func:`_unqueued_in` of one head ``head`` (0: none, the exponential from 0), ``settle`` its (a, k) past it."""
    total = (1.0 - busy) * math.exp(-drain * room)
    if busy <= 0:
        return total
    if head > 0:
        lam, reach = busy / head, min(head, room)
        total += lam * (1.0 - busy) * (math.exp(lam * reach - drain * (room - reach)) - math.exp(-drain * room)) / (lam + drain)
        start, room = _past_one_prefill(busy), room - head
        if room <= 0:
            return total
    else:
        start = busy
    lead, rate = settle
    total += start * lead * _faded(decay, drain, room)
    return total if lead == 1.0 else total + start * (1 - lead) * _faded(rate, drain, room)


def _faded(decay: float, drain: float, room: float) -> float:
    """``decay`` x the integral over ``y`` in ``[0, room]`` of ``exp(-decay y - drain (room - y))``, no overflow."""
    gap = abs(drain - decay) * room  # = exp(-min room) (1 - exp(-gap)) / |drain - decay|
    spread = -math.expm1(-gap) / gap if gap > 0 else 1.0
    return decay * room * math.exp(-min(drain, decay) * room) * spread


def resolved(rate: float, parts: SlotParts) -> SlotParts:
    """``parts`` at ``rate`` over their replicas: each queue with a ``by_rate`` ladder at its replicas' share of it.

    A replica loaded below one sequence in flight meets the SLOs with more places, and leaves the wait more of the
    TTFT target, the less it is loaded (review74 item 3): the ladder's first rung at or above ``rate / N`` (a
    replica's even share), so more replicas never wait longer. A replica at one in flight or more (``rungs``, fix90:
    review74 item 5): where its queue at the most load keeps the rule (:func:`miss_share` within 5%) it is kept;
    else the first of the rung's caps at ``rate / N`` (taken up to the next twentieth of its most rate) that keeps it,
    else the rung's largest. The caps of a rung include every rung's above it, so a fleet that keeps the rule keeps it
    with a replica more (each cap at a lower rate: no longer a TTFT, no longer a request): the search stays monotone.
    One layout's queue only, or a split's parts alike (:func:`_one_layout`; unlike parts are taken at their most
    load). Queues without either are as they are.
    """
    return _placed(rate, parts)[0]


def _placed(rate: float, parts: SlotParts) -> tuple[SlotParts, float | None]:
    """:func:`resolved`, and its ``P(TTFT + wait > target)`` where choosing a rung's cap worked it out (else None)."""
    if any(q.by_rate for _, q in parts):
        share = rate / max(1, sum(n for n, _ in parts))
        return tuple((n, _rung(q, share)) for n, q in parts), None
    held = [(n, q) for n, q in parts if n > 0]
    layout = _one_layout(held)
    if layout is None or rate <= 0:
        return parts, None
    n, queue = layout
    rungs, top = queue.rungs, queue._replace(rungs=None)
    assert rungs is not None

    def each(option: SlotQueue) -> SlotParts:  # a split's like parts each at the option (their places said apart)
        return tuple((m, option) for m, _ in held)

    if (miss := _misses(rate, ((n, top),))) <= _WITHIN:
        return each(top), miss
    step = queue.top_rate / LADDER_STEPS
    k = math.ceil(rate / n / step - 1e-9) if step > 0 else LADDER_STEPS
    if k >= LADDER_STEPS:
        return each(top), miss
    options = tuple(o._replace(routing=queue.routing) for o in rungs(max(1, k)))  # as routed (:func:`routed`)
    for option in options:
        if (miss := _misses(rate, ((n, option),))) <= _WITHIN:
            return each(option), miss
    return each(options[0]), (miss if len(options) == 1 else None)


def _one_layout(held: list[tuple[int, SlotQueue]] | SlotParts) -> tuple[int, SlotQueue] | None:
    """``held``'s replicas as one layout's with a ladder of loads (:attr:`SlotQueue.rungs`), or None.

    One part, or a split's parts alike in all but the ladder's own copy (two names of one server: fix90, the split
    of two like owned servers took the most load's places where the same servers listed as one group took the
    ladder's); the first part's ladder stands for all.
    """
    if not held or held[0][1].rungs is None:
        return None
    first = held[0][1]._replace(rungs=None)
    if any(q.rungs is None or q._replace(rungs=None) != first for _, q in held[1:]):
        return None
    return sum(n for n, _ in held), held[0][1]


#: The rungs of a replica's ladder (:attr:`SlotQueue.by_rate`, :attr:`SlotQueue.rungs`): its most rate over this many.
LADDER_STEPS = 20


def _rung(queue: SlotQueue, share: float) -> SlotQueue:
    """``queue`` at a replica's ``share`` of the rate: the first rung of its ladder at or above it (else its most)."""
    for rate, places, request_s, slack, tail in queue.by_rate:
        if rate >= share:
            return queue._replace(per_replica=places, request_s=request_s, slack_s=slack, tail=tail, by_rate=())
    return queue._replace(by_rate=())


#: Erlang C's partial sums are kept in range by this power of two (exact: the rescaling adds no rounding).
_RESCALE_AT = 2.0**600
#: Where the terms below the load stop counting: 40 e-folds under the sum (far under a double's precision).
_TAIL = math.exp(-40.0)


#: Erlang C's results kept (a pure function of two numbers): planning asks the same sum many times over (the rate a
#: fleet sustains, its wait, the routing note, each pass of a capacity plan's search: 18,894 sums of 2,621 queues at
#: 16,777,216 USD, some of ~10^5 terms), perf141.
ERLANG_C_KEPT = 1 << 16


@functools.lru_cache(maxsize=ERLANG_C_KEPT, typed=True)
def erlang_c(servers: int, offered: float) -> float:
    """The probability that an arrival waits in an M/M/c queue of ``servers`` at ``offered`` Erlangs (Erlang C).

    Through Erlang B, ``B = P(N = c) / P(N <= c)`` for ``N`` Poisson of mean ``A``, that is ``1 / B = sum_{k=0}^{c}
    c! / (k! A^(c-k))``. Where ``c`` is past ``A`` by more than ``12 sqrt(A) + 40``, ``P(N > c)`` is under ``e^-60``
    (Chernoff) and ``B`` is the Poisson term itself, from ``lgamma`` (0 where it underflows). Nearer, the sum from
    ``k = c`` down (each term the one above times ``k / A``; the sum and the term divided by 2^600 whenever the sum
    passes it, the count kept for the logarithm), stopped where the terms fall 40 e-folds under the sum below ``A``:
    at most ``21 sqrt(A) + 40`` terms. Then ``C = B / (1 - rho (1 - B))``, ``rho = A / c``; 1 at or past ``A >= c``
    (the queue grows without bound). Textbook: ``c`` 10 at 8 Erlangs, 0.409.
    """
    if offered <= 0 or servers <= 0:
        return 0.0 if offered <= 0 else 1.0
    if offered >= servers:
        return 1.0
    if servers - offered > 12.0 * math.sqrt(offered) + 40.0:
        log_blocking = servers * math.log(offered) - offered - math.lgamma(servers + 1)
        blocking = math.exp(log_blocking) if log_blocking > -745.0 else 0.0
    else:
        term, total, rescaled = 1.0, 1.0, 0  # the k = c term is 1
        for k in range(servers, 0, -1):
            term *= k / offered
            total += term
            if total > _RESCALE_AT:
                term, total, rescaled = term / _RESCALE_AT, total / _RESCALE_AT, rescaled + 1
            if k < offered and term < total * _TAIL:
                break
        blocking = math.exp(-(math.log(total) + rescaled * math.log(_RESCALE_AT)))
    rho = offered / servers
    return blocking / (1.0 - rho * (1.0 - blocking))


class SlotWait(NamedTuple):
    """The wait for a place in the batch over ``servers`` places at ``offered`` Erlangs (:func:`slot_wait`)."""

    servers: int
    offered: float
    waits: float
    p95_s: float

    @property
    def utilisation(self) -> float:
        """The share of the places taken on average."""
        return self.offered / self.servers

    def details(self) -> dict[str, float | None]:
        """``slot_wait_share`` and ``slot_wait_p95_s`` (None where the queue grows without bound), as plans record them."""
        return {
            "slot_wait_share": round(self.waits, 3),
            "slot_wait_p95_s": round(self.p95_s, 2) if math.isfinite(self.p95_s) else None,
        }


def slot_wait(servers: int, offered: float, service_s: float) -> SlotWait:
    """The share of requests that wait for one of ``servers`` places, and the 95th percentile of that wait.

    M/M/c: ``P(W > t) = C exp(-(c - A) t / S)``, so the p95 is ``S ln(C / 0.05) / (c - A)`` where more than one request
    in twenty waits (``C`` :func:`erlang_c`), else 0; infinite at or past ``A >= c``. Exponential request times: the
    spread of output lengths; requests of one fixed length wait about half as long (M/D/c).
    """
    waits = erlang_c(servers, offered)
    if offered >= servers:
        return SlotWait(servers, offered, 1.0, math.inf)
    p95 = service_s * math.log(waits / TAIL_SHARE) / (servers - offered) if waits > TAIL_SHARE else 0.0
    return SlotWait(servers, offered, waits, p95)


#: Replicas of one layout each and the places they give (:class:`SlotQueue`): a service's one layout, or a split
#: service's two parts (:mod:`generator.planner.split`), whose places one router fills.
SlotParts = tuple[tuple[int, SlotQueue], ...]


def pooled_request_s(parts: SlotParts) -> float:
    """A request's time in a place over ``parts``: each part's, weighted by the share of the requests it serves.

    With every place taken (the only time a request waits), a router filling any place free sends each request to the
    next place that frees, and a part's ``n x b`` places free ``n x b / S`` times a second: that is its share. Weighted
    so, the time is ``sum n b / sum (n b / S)`` (places over what they serve a second), and the M/M/c queue over all
    the places (:func:`pooled_slot_wait`) empties at the rate the parts' places do. One layout: its own time.
    """
    held = [(n, q) for n, q in parts if n > 0]
    if len({q.request_s for _, q in held}) == 1:
        return held[0][1].request_s
    return sum(n * q.per_replica for n, q in held) / sum(n * q.per_replica / q.request_s for n, q in held)


def pooled_slot_wait(rate: float, parts: SlotParts) -> SlotWait:
    """The wait for a place over every part's replicas x places at ``rate`` requests/s, as the parts' routing has it.

    ``free_place`` (a router filling any place free): :func:`slot_wait` over one queue, ``c`` the sum of each part's
    replicas x its batch, a request's time :func:`pooled_request_s`. ``even`` (each replica its own queue at an even
    share of the rate): :func:`even_slot_wait`. A service of one layout is the one part (:func:`replicas_slot_wait`), so
    one rule sizes both, and a split (fix85) follows the routing its service states.
    """
    parts = resolved(rate, parts)
    held = [(n, q) for n, q in parts if n > 0]
    if held and held[0][1].routing == "even":
        return even_slot_wait(rate, tuple(held))
    request_s = pooled_request_s(parts)
    return slot_wait(sum(n * q.per_replica for n, q in parts), rate * request_s, request_s)


def even_slot_wait(rate: float, parts: SlotParts) -> SlotWait:
    """The wait for a place where each replica has its own queue, sent ``rate`` over the replicas (review74 item 1).

    A random router (a Kubernetes Service) splits the Poisson arrivals into one of ``rate / N`` a replica, so each is
    an M/M/b queue of its own batch ``b``: ``A = rate / N x S`` Erlangs on ``b`` places, ``P(W > t) = C exp(-(b - A) t
    / S)`` (:func:`slot_wait`). A round-robin balancer spreads the arrivals more evenly than random, so it waits a
    little less: this is the bound. Over a split's unlike parts the wait is the mixture of the replicas' (a request
    lands on a part's replica with the share ``n / N``), its p95 found by bisection; over one layout, :func:`slot_wait`
    of a replica. The result counts every replica's places and Erlangs (``servers``, ``offered``).
    """
    replicas = sum(n for n, _ in parts)
    each = rate / replicas
    waits = [(n / replicas, slot_wait(q.per_replica, each * q.request_s, q.request_s), q.request_s) for n, q in parts]
    servers = sum(n * q.per_replica for n, q in parts)
    offered = sum(n * w.offered for (n, _), (_, w, _) in zip(parts, waits, strict=True))
    if len(waits) == 1:
        return SlotWait(servers, offered, waits[0][1].waits, waits[0][1].p95_s)
    share = sum(s * w.waits for s, w, _ in waits)
    if any(not math.isfinite(w.p95_s) for _, w, _ in waits):
        return SlotWait(servers, offered, share, math.inf)
    if share <= TAIL_SHARE:
        return SlotWait(servers, offered, share, 0.0)

    def beyond(t: float) -> float:  # P(W > t) over the replicas
        return sum(s * w.waits * math.exp(-(w.servers - w.offered) * t / r) for s, w, r in waits)

    # past the longest of the replicas' own p95s every term is under its share of 5%: the mixture's p95 is below it
    low, high = 0.0, max(w.p95_s for _, w, _ in waits)
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if beyond(middle) > TAIL_SHARE else (low, middle)
    return SlotWait(servers, offered, share, high)


def pooled_slack(parts: SlotParts) -> float | None:
    """What the wait may take over ``parts``: the smallest part's slack (a request may meet any); None where one has none."""
    slacks = [q.slack_s for n, q in parts if n > 0]
    return None if not slacks or any(s is None for s in slacks) else min(s for s in slacks if s is not None)


def routed(parts: SlotParts, routing: Routing) -> SlotParts:
    """``parts`` with their requests routed as ``routing`` says (:data:`ROUTINGS`): what the other routing would wait."""
    return tuple((n, q._replace(routing=routing)) for n, q in parts)


def replicas_slot_wait(replicas: int, rate: float, queue: SlotQueue, beside: SlotParts = ()) -> SlotWait:
    """:func:`pooled_slot_wait` of ``replicas`` x ``queue.per_replica`` places, with ``beside``'s (a split's other part)."""
    return pooled_slot_wait(rate, ((replicas, queue), *beside))


def _held(parts: SlotParts) -> tuple[SlotParts, float | None]:
    """``parts`` with replicas, and what the wait over them may take (:func:`_slack`; None where there are none)."""
    held = tuple((n, q) for n, q in parts if n > 0)
    return held, (_slack(held) if held else None)


def _slack(parts: SlotParts) -> float | None:
    """What the wait for a place over ``parts`` may take (:func:`pooled_slack`); None where nothing holds it to one.

    None too where a part's places or request time are not real (no batch a replica runs, no time a request takes).
    """
    if any(q.per_replica < 1 or q.request_s <= 0 for _, q in parts):
        return None
    return pooled_slack(parts)


#: The share of requests whose TTFT and wait together may pass the TTFT target (the p95's 5%; a hair over it for the
#: sums' rounding: where the TTFT alone is at its p95, as many replicas as make the wait's share nil keep it).
_WITHIN = TAIL_SHARE * (1 + 1e-9)


def _misses(rate: float, parts: SlotParts) -> float:
    """``P(TTFT + W > target)`` over ``parts`` at ``rate`` (:func:`miss_share`), their places and tails as they are.

    ``free_place``: one wait for every part's places (:func:`pooled_slot_wait`), the largest part's share (a request
    may land on any). ``even``: each replica its own M/M/b queue at its even share, weighted by the replicas of each
    part. 1 where every place is taken (the queue grows without bound).
    """
    held = [(n, q) for n, q in parts if n > 0]
    if not held:
        return 0.0
    if held[0][1].routing == "even":
        replicas = sum(n for n, _ in held)
        total = 0.0
        for n, q in held:
            wait = slot_wait(q.per_replica, rate / replicas * q.request_s, q.request_s)
            if not math.isfinite(wait.p95_s):
                return 1.0
            drain = (wait.servers - wait.offered) / q.request_s
            total += n / replicas * miss_share(q.tail_or_p95, q.target_s or 0.0, wait.waits, drain)
        return total
    wait = pooled_slot_wait(rate, tuple(held))
    if not math.isfinite(wait.p95_s):
        return 1.0
    drain = (wait.servers - wait.offered) / pooled_request_s(tuple(held))
    return max(miss_share(q.tail_or_p95, q.target_s or 0.0, wait.waits, drain) for _, q in held)


def tail_miss(rate: float, parts: SlotParts) -> float:
    """``P(TTFT + wait > TTFT target)`` over ``parts`` at ``rate`` as the rule takes them (:func:`resolved`).

    The share of requests past the target, which :func:`slot_replicas` and :func:`slot_rate` hold to 5% (fix90,
    review74 item 4).
    """
    placed, miss = _placed(rate, parts)
    return _misses(rate, placed) if miss is None else miss


def _miss_excess(rate: float, parts: SlotParts) -> float:
    """How far ``P(TTFT + wait > target)`` over ``parts`` at ``rate`` requests/s is past 5% (<= 0: within).

    The places, request times and TTFT tails are the parts' at ``rate`` (:func:`resolved`: a replica less loaded has
    more places and a shorter TTFT, review74 items 3 and 5). The one rule :func:`slot_replicas` (the fewest replicas
    for a rate) and :func:`slot_rate` (the most rate for the replicas planned) both answer.
    """
    return tail_miss(rate, parts) - _WITHIN


def _wait_fits(rate: float, parts: SlotParts) -> bool:
    """Whether ``P(TTFT + wait > target)`` over ``parts`` at ``rate`` requests/s is within 5% (:func:`_miss_excess`).

    At or under a rate the rule surely holds (:func:`_sure_rate`) without the Erlang sum: most layouts a plan counts.
    """
    slack = pooled_slack(parts)
    if slack is not None and (sure := _sure_rate(parts, slack)) is not None and rate <= sure:
        return True
    return _miss_excess(rate, parts) <= 0


@functools.lru_cache(maxsize=4096)
def slot_replicas(rate: float, queue: SlotQueue, least: int, beside: SlotParts = ()) -> int:
    """The fewest replicas, ``least`` at least, whose places keep ``P(TTFT + wait > TTFT target)`` within 5%.

    The TTFT once placed has the tail its point models (:attr:`SlotQueue.tail`), the wait for a place M/M/c's, and
    the share of requests past the target is bounded by their convolution (:func:`miss_share`; fix90, review74 item
    4: the p95s added let up to ~10% miss where fewer than one in twenty wait). A replica less loaded runs more places
    at a shorter TTFT (:func:`resolved`, review74 item 5), taken at the count tested.

    ``beside``: replicas of another layout the same router fills, held fixed (a split's owned part): their places
    count with these, and the slack is the smaller of the parts' (:func:`pooled_slack`). The wait falls as replicas are
    added (more places at the same load; under ``even`` routing, a smaller share of the rate a replica): a doubling
    search, then a bisection. ``least`` where no slack is set
    (nothing to hold the wait to) or the rate is nil.
    """
    slack = _slack(((max(1, least), queue), *beside))
    if slack is None or rate <= 0:
        return least

    def meets(replicas: int) -> bool:
        return _wait_fits(rate, ((replicas, queue), *beside))

    if meets(least):
        return least
    low, high = least, max(1, 2 * least)
    while not meets(high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if meets(middle) else (middle, high)
    return high


#: How near :func:`slot_rate`'s bisection comes to the most rate, as a share of the replicas' own (1e-7, a hundred
#: thousandth of a percent: far under the cent of a req/s the figures are said and ranked to).
_RATE_TOLERANCE = 1e-7


def _sure_rate(parts: SlotParts, slack: float) -> float | None:
    """A rate whose ``P(TTFT + wait > target)`` over ``parts`` (one queue) is within 5% whatever Erlang C comes to.

    ``P(W > t) <= exp(-(c - A) t / S)`` (``C <= 1``), so a drain ``(c - A) / S`` that keeps the rule at ``C = 1``
    (:func:`_sure_drain`) keeps it at every ``C``: ``c - A >= S x that`` keeps the rule (without a tail, the TTFT
    at 0 against the slack: ``c - A >= S ln 20 / slack``). None where there
    is no such rate to start from (no slack, each replica its own queue, a ladder of loads below one in flight, the
    TTFT alone at its 5%). A queue with ``rungs`` is taken at its most load: where that keeps the rule, the rule
    holds (:func:`resolved` keeps it first).
    """
    if slack <= 0 or any(q.routing != "free_place" or q.by_rate for _, q in parts):
        return None
    drain = 0.0
    for _, q in parts:
        least = _sure_drain(q.tail_or_p95, q.target_s or 0.0)
        if least is None:
            return None
        drain = max(drain, least)
    request_s = pooled_request_s(parts)
    places = sum(n * q.per_replica for n, q in parts)
    return (places - request_s * drain) / request_s


@functools.lru_cache(maxsize=4096)
def _sure_drain(tail: TtftTail, target_s: float) -> float | None:
    """A drain ``(c - A) / S`` (1/s) that keeps ``P(TTFT + W > target)`` within 5% whatever Erlang C (None: none found).

    The union over a split at a TTFT quantile ``q`` (the TTFT past ``q``, or the wait past ``T - q``): ``P(TTFT > q) +
    exp(-drain (T - q)) <= 5%`` at ``drain >= ln(1 / (5% - P(TTFT > q))) / (T - q)``, the least over ``q`` at the
    99th, 97.5th and 96th percentiles. Cheap (one offset: the quantiles in closed form) where the convolution's own
    least drain would take a root search a layout; it only lets a layout skip the Erlang sum.
    """
    drains = []
    for share in _SURE_SPLITS:
        quantile = _quantile(tail, share)
        if quantile < target_s:
            drains.append(math.log(1.0 / (TAIL_SHARE - tail.beyond(quantile))) / (target_s - quantile))
    return min(drains, default=None)


#: The TTFT's shares past the split points :func:`_sure_drain` tries.
_SURE_SPLITS = (0.01, 0.025, 0.04)


def _quantile(tail: TtftTail, share: float) -> float:
    """The least ``t`` with ``P(TTFT > t) <= share`` (one offset: in closed form; a mix: bisection, the tail falls)."""
    if not tail.mix:
        return tail.plain_s + wait_quantile(share, tail.busy, tail.decay, tail.heads, tail.settles)
    low, high = tail.least_s, tail.least_s + 1.0
    while tail.beyond(high) > share:
        low, high = high, high + 2 * (high - tail.least_s)
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if tail.beyond(middle) > share else (low, middle)
    return high


@functools.lru_cache(maxsize=4096)
def slot_rate(most: float, parts: SlotParts) -> float:
    """The most requests/s the replicas of ``parts`` sustain with ``P(TTFT + wait > target)`` within 5% (one rule).

    ``most``: what they serve with every place taken (replicas x a replica's rate; a split's, all its replicas x the
    slowest part's), the cap: the wait for a place grows without bound there, so where a slack holds it the most rate
    is below; ``most`` itself where nothing holds the wait (no parts: a batch job, a pooling service; no TTFT
    target). The wait grows with the rate (a fuller queue over the same places): a bisection on the rate under the
    rule :func:`slot_replicas` sizes by, so ``slot_replicas(rate, queue, 1, beside) <= n`` exactly where ``rate <=
    slot_rate(most, ((n, queue), *beside))`` (to the tolerance). m74a item 4: two 8B replicas of 5.68 req/s (114
    places, 20.07 s a request, a 1.578 s slack) sustain 10.54 req/s within it, not 11.36.
    """
    held, slack = _held(parts)
    if slack is None or most <= 0 or _wait_fits(most, held):
        return most
    # bracketed up toward the top (1/2, 3/4, 7/8 ... of ``most``) until the wait breaks the slack: many places hold
    # most of their rate, and the Erlang sum near full load is short (a few sqrt(A) terms) where one at half load runs
    # over c / 2 of them; then regula falsi (Illinois) between the last rate that fits and the first that does not,
    # a bisection step wherever it would not halve the bracket in two steps
    low, gap = 0.0, most / 2
    if (sure := _sure_rate(held, slack)) is not None and 0.0 < sure < most:
        low, gap = sure, (most - sure) / 2  # the bracket's foot where the wait surely fits: fewer steps to the top
    if (edges := _rung_edges(most, held)) is not None:
        # a ladder of loads (fix90): the rule changes its places at each twentieth of a replica's rate, and the rate
        # sustained is often one of those edges; the last edge that keeps it, and the next, bracket it
        low, high = max(low, edges[0]), edges[1]
        if high - low <= most * _RATE_TOLERANCE or not _wait_fits(low + most * _RATE_TOLERANCE, held):
            return low
    else:
        while gap > most * _RATE_TOLERANCE and _wait_fits(most - gap, held):
            low, gap = most - gap, gap / 2
        high = most - gap  # the first that breaks it (or within the tolerance of the last that fits)

    over = functools.partial(_miss_excess, parts=held)
    f_low, f_high, width, side = over(low), over(high), high - low, 0
    while high - low > most * _RATE_TOLERANCE:
        point = high - f_high * (high - low) / (f_high - f_low) if f_high > f_low else (low + high) / 2
        if not low < point < high or high - low > width / 2:  # a slow or stray secant: bisect
            point, width = (low + high) / 2, high - low
        f_point = over(point)
        if f_point <= 0:
            low, f_low = point, f_point
            f_high, side = (f_high / 2 if side == -1 else f_high), -1  # Illinois: the end kept twice counts half
        else:
            high, f_high = point, f_point
            f_low, side = (f_low / 2 if side == 1 else f_low), 1
    return low


def _rung_edges(most: float, held: SlotParts) -> tuple[float, float] | None:
    """Where one layout's ladder of loads (:attr:`SlotQueue.rungs`) changes rung below ``most``, bracketing the rule.

    The last edge whose rate keeps the rule and the next (``most`` past the last), by bisection over the edges (the
    rule only fails more at higher rates); None without such a ladder. At an edge ``N x k / 20`` of the replicas'
    rate the rung is ``k``'s.
    """
    layout = _one_layout(held)
    if layout is None or layout[1].top_rate <= 0:
        return None
    n, queue = layout
    edges = [n * k * queue.top_rate / LADDER_STEPS for k in range(1, LADDER_STEPS)]
    edges = [e for e in edges if e < most] + [most]
    low, high = -1, len(edges) - 1  # the top (``most``) breaks it: slot_rate checked
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _wait_fits(edges[middle], held) else (low, middle)
    return (0.0 if low < 0 else edges[low]), edges[high]


def slot_rate_bounds(most: float, parts: SlotParts) -> tuple[float, float]:
    """Where :func:`slot_rate` ``(most, parts)`` lies, without an Erlang sum: a rate the wait surely holds, and ``most``.

    What a ranking compares first, working the rate out only where the two options' bounds overlap.
    """
    held, slack = _held(parts)
    if slack is None or most <= 0:
        return most, most
    sure = _sure_rate(held, slack)
    return (0.0 if sure is None else min(most, max(0.0, sure))), most


def prompt_tail(prompt_tokens: int, cached_share: float) -> tuple[int, int]:
    """(new tokens prefilled, tokens the prefix cache holds) of a ``prompt_tokens`` prompt, ``cached_share`` of it cached.

    The cached tokens are the share rounded down, and at least one token is prefilled: an engine always computes the
    last prompt token, whose logits give the first output token (vLLM recomputes it on a whole-prompt hit).
    """
    cached = max(0, min(prompt_tokens - 1, math.floor(cached_share * prompt_tokens)))
    return prompt_tokens - cached, cached
