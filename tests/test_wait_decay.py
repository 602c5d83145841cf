"""acc129 (issue #9): the prompt queue's wait past the stated prompt lengths falls at M/G/1's own rate.

The stated lengths' law (:func:`~generator.sizing.serving_queue.wait_past` with heads) is M/D/1's exactly within each
prefill; past it the tail fell at the heavy-traffic slope ``2 (1 - rho) / (E[S] (1 + c^2))``, which at moderate load
is far slower than the queue's: one length's p95 was 10% over M/D/1's at rho 0.5-0.6, a wide stated mix's TTFT p95
11-15% over a simulated queue at rho 0.45-0.5. The tail now takes Cramer-Lundberg's root ``theta`` (``lam (E[e^{theta
S}] - 1) = theta``) and M/G/1's asymptote ``C e^{-theta x}``, ``C = (1 - rho) / (lam E[S e^{theta S}] - 1)``, reached
from ``P(W > S)`` continuously (:func:`~generator.sizing.serving_queue.settling`). The oracles here are independent of
the code's forms: a bisection on the equation as written with the prompts' shares, Erlang's M/D/1 formula.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import pytest

from generator.sizing.serving_queue import (
    PromptMix,
    _wait_law,
    mix_moments,
    prefill_wait_p95,
    tail_decay,
    ttft_p95_over_mix,
    ttft_tail,
    wait_past,
    wait_quantile,
)

if TYPE_CHECKING:
    from generator.sizing.serving_queue import Heads, Settles


def _root(rho: float, prompts: tuple[tuple[float, float], ...]) -> float:
    """Cramer-Lundberg's ``theta > 0`` with ``lam (E[e^{theta S}] - 1) = theta``, by bisection on it as written."""
    mean = sum(p * s for p, s in prompts)
    lam = rho / mean

    def excess(theta: float) -> float:
        return lam * (sum(p * math.exp(theta * s) for p, s in prompts) - 1) - theta

    low, high = 1e-9, 1.0
    while excess(high) < 0:
        low, high = high, 2 * high
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if excess(middle) < 0 else (low, middle)
    return high


def _asymptote(rho: float, prompts: tuple[tuple[float, float], ...], theta: float) -> float:
    """M/G/1's ``C`` in ``P(W > x) ~ C e^{-theta x}``: ``(1 - rho) / (lam E[S e^{theta S}] - 1)``."""
    lam = rho / sum(p * s for p, s in prompts)
    return (1 - rho) / (lam * sum(p * s * math.exp(theta * s) for p, s in prompts) - 1)


def _m_d_1_past(x: float, rho: float, prefill: float) -> float:
    """Erlang's formula: ``P(W <= x) = (1 - rho) sum_{k <= x / S} (lam (k S - x))^k / k! e^{-lam (k S - x)}``."""
    lam = rho / prefill
    terms = (
        (lam * (k * prefill - x)) ** k / math.factorial(k) * math.exp(-lam * (k * prefill - x))
        for k in range(math.floor(x / prefill) + 1)
    )
    return 1 - (1 - rho) * sum(terms)


def _law(rho: float, prompts: tuple[tuple[float, float], ...]) -> tuple[float, float, Heads, Settles]:
    """The queue's law as every TTFT p95 takes it, for prompts of (share, prefill s)."""
    mean = sum(p * s for p, s in prompts)
    return _wait_law(rho, mean, 0.0, prompts)


MIXES = [
    ((1.0, 1.0),),
    ((1.0, 0.25),),
    ((0.95, 0.1), (0.05, 1.0)),
    ((0.95, 0.02), (0.05, 1.0)),
    ((0.95, 0.5), (0.05, 1.0)),
    ((0.7, 0.3), (0.3, 2.0)),
]


@pytest.mark.parametrize("prompts", MIXES)
@pytest.mark.parametrize("rho", [0.001, 0.05, 0.3, 0.5, 0.8, 0.999])
def test_the_decay_is_cramer_lundbergs_root(rho: float, prompts: tuple[tuple[float, float], ...]) -> None:
    busy, decay, heads, _ = _law(rho, prompts)
    assert decay == pytest.approx(_root(rho, prompts), rel=1e-9)
    assert decay == tail_decay(busy, heads)


@pytest.mark.parametrize(
    ("rho", "theta_s"),
    [(0.1, 3.6149504), (0.3, 2.0645683), (0.5, 1.2564312), (0.8, 0.4308422)],  # rho (e^u - 1) = u
)
def test_one_lengths_decay(rho: float, theta_s: float) -> None:
    """One length ``S``: ``u = theta S`` solves ``rho (e^u - 1) = u``; the heavy-traffic slope it replaces gave ``2 (1 -
    rho)``: 1.8, 1.4, 1.0 and 0.4 (too slow a fall at all but the highest loads)."""
    assert tail_decay(rho, ((1.0, 2.0),)) * 2.0 == pytest.approx(theta_s, abs=1e-7)


@pytest.mark.parametrize("prompts", MIXES)
@pytest.mark.parametrize("rho", [0.05, 0.3, 0.5, 0.8])
def test_the_tail_is_m_g_1s_asymptote(rho: float, prompts: tuple[tuple[float, float], ...]) -> None:
    """Far past the longest prefill ``P(W > x) e^{theta x}`` is M/G/1's ``C`` (the pole of Pollaczek-Khinchine's
    transform), for one length and for a mix."""
    law = _law(rho, prompts)
    theta = law[1]
    far = 80 / theta + max(s for _, s in prompts)  # the rest faded (at least 2 / S faster at rho 0.05)
    c = _asymptote(rho, prompts, theta)
    assert wait_past(far, *law) * math.exp(theta * far) == pytest.approx(c, rel=1e-6)


@pytest.mark.parametrize("prompts", MIXES)
@pytest.mark.parametrize("rho", [0.01, 0.06, 0.2, 0.3, 0.45, 0.6, 0.85, 0.99])
def test_the_law_is_continuous_at_each_prefill_and_falls(rho: float, prompts: tuple[tuple[float, float], ...]) -> None:
    law = _law(rho, prompts)
    for _, s in prompts:
        assert wait_past(s * (1 - 1e-12), *law) == pytest.approx(wait_past(s, *law), rel=1e-9, abs=1e-15)
    top = 3 * max(s for _, s in prompts) + 5 / law[1]
    values = [wait_past(top * i / 4000, *law) for i in range(4001)]
    assert all(b <= a + 1e-15 for a, b in itertools.pairwise(values))
    assert values[0] == pytest.approx(rho) and values[-1] >= 0


@pytest.mark.parametrize("rho", [0.3, 0.5, 0.7, 0.85])
def test_one_length_past_its_prefill_is_m_d_1s(rho: float) -> None:
    """Against Erlang's M/D/1 formula past the prefill: within 6.5% over the next prefill at rho 0.3 (2.3% at 0.5),
    within 3.2% from two prefills on (0.9% at 0.5); the heavy-traffic slope was 70% over at 3 S, rho 0.5 (56%)."""
    law = _law(rho, ((1.0, 1.0),))
    near, far = {0.3: (0.065, 0.032), 0.5: (0.023, 0.0095), 0.7: (0.0085, 0.003), 0.85: (0.003, 0.001)}[rho]
    for i in range(1, 100):
        x = 1 + i / 100
        assert wait_past(x, *law) == pytest.approx(_m_d_1_past(x, rho, 1.0), rel=near)
    for i in range(0, 100):  # Erlang's alternating sum loses digits past ~7 S
        x = 2 + i / 20
        assert wait_past(x, *law) == pytest.approx(_m_d_1_past(x, rho, 1.0), rel=far)


@pytest.mark.parametrize(
    ("rho", "model_s", "erlang_s"),
    # the p95 wait of one 1 s prefill: the heavy-traffic slope gave 1.0694, 1.6175, 2.2564, 3.1133, 4.4485
    [(0.3, 1.0675, 1.0708), (0.4, 1.5171, 1.5393), (0.5, 2.0544, 2.0506), (0.6, 2.8309, 2.8295), (0.7, 4.1028, 4.1029)],
)
def test_one_lengths_p95_wait_is_m_d_1s(rho: float, model_s: float, erlang_s: float) -> None:
    model = prefill_wait_p95(rho, 1.0, prompts_s=((1.0, 1.0),))
    assert model == pytest.approx(model_s, abs=5e-5)
    assert _m_d_1_past(erlang_s, rho, 1.0) == pytest.approx(0.05, abs=1e-4)  # the oracle's own p95
    assert model == pytest.approx(erlang_s, rel=0.02)


@pytest.mark.parametrize("prompts", MIXES)
@pytest.mark.parametrize("rho", [0.06, 0.3, 0.5, 0.8])
@pytest.mark.parametrize("share", [0.05, 0.01, 0.001])
def test_the_quantile_inverts_the_law(rho: float, prompts: tuple[tuple[float, float], ...], share: float) -> None:
    law = _law(rho, prompts)
    x = wait_quantile(share, *law)
    if x > 0:
        assert wait_past(x, *law) == pytest.approx(share, rel=1e-9)


def test_one_law_for_the_p95_the_tail_and_the_mix() -> None:
    """The p95, :class:`TtftTail` and the TTFT p95 over the mix take the same law (decay, heads, settles)."""
    mean, scv = mix_moments(PromptMix(1, 2), 0.1, 1.0)
    prompts = ((0.95, 0.1), (0.05, 1.0))
    law = _wait_law(0.5, mean, scv, prompts)
    tail = ttft_tail(0.0, 0.5, mean, scv, prompts_s=prompts)
    assert (tail.busy, tail.decay, tail.heads, tail.settles) == law
    wait = prefill_wait_p95(0.5, mean, scv, prompts_s=prompts)
    assert tail.beyond(wait) == pytest.approx(0.05, rel=1e-9)
    over = ttft_p95_over_mix((0.1, 1.0), 0.05, 0.5, mean, scv)
    assert 0.95 * wait_past(over - 0.1, *law) + 0.05 * wait_past(over - 1.0, *law) == pytest.approx(0.05, rel=1e-9)
