"""A chain's three money splits share one rounding rule (chain_runs.steps_between), each keeping its own arithmetic.

review87 item 2: ``rounded_steps`` (a pool's months re-split, fix154), the sequence's run split (newuser84 item 3) and
assemble's chain share (each job's share of the chain's pool) each carried a copy of the rounded cumulative steps (fuzz23
item 16). They now call :func:`steps_between`. The old loops are copied here verbatim as oracles: the new functions give
the same floats, bit for bit, over a seeded sweep with half-cent cases.

They keep their own points: a single ``rounded_steps(whole, weights)`` for all three would move a cent at a half-cent
boundary, because ``upto / runs`` is not ``(sum / runs) * upto / sum`` in floats, nor is ``whole * fsum(h / total)``
``whole * sum(h) / total``. The two cases below show it.
"""

from __future__ import annotations

import math
import random

import pytest

from generator.planner.chain_runs import rounded_steps, runs_split, steps_between
from generator.planner.chain_share import share_part


def old_rounded_steps(whole: float, weights: list[float]) -> list[float]:
    """chain_runs.rounded_steps at 6031232b."""
    total = math.fsum(weights)
    out, before = [], 0.0
    for weight in weights:
        upto = before + weight
        out.append(round(round(whole * upto / total, 2) - round(whole * before / total, 2), 2))
        before = upto
    return out


def old_runs_split(months: list[float], times: float) -> list[float]:
    """chain_runs.sequence_month_per_run's loop at 6031232b."""
    out, before = [], 0.0
    for month in months:
        upto = before + month
        out.append(round(round(upto / times, 2) - round(before / times, 2), 2))
        before = upto
    return out


def old_chain_share(whole: float, hours: list[float], position: int, digits: int | None) -> float:
    """assemble._chain_share's ``part`` at 6031232b, with its shares of timed jobs."""
    total = math.fsum(hours)
    shares = [h / total for h in hours]
    before, upto = math.fsum(shares[:position]), math.fsum(shares[: position + 1])
    return round(round(whole * upto, digits) - round(whole * before, digits), digits)


def _cases(seed: int) -> list[tuple[float, list[float], int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(3000):
        jobs = rng.choice([2, 2, 3, 4])
        # whole-cent and half-cent figures, the kind a month or a run lands on, and a negative one (a credit)
        whole = rng.choice([round(rng.uniform(1, 60000), 2), round(rng.uniform(1, 60000), 2) + 0.005, -123.455])
        weights = [round(rng.uniform(0.1, 20000), rng.choice([1, 2])) for _ in range(jobs)]
        out.append((whole, weights, rng.choice([1, 2, 3, 7, 10, 30, 60, 100, 120])))
    return out


def test_steps_between_is_each_old_loop_to_the_bit() -> None:
    for whole, weights, times in _cases(87):
        assert rounded_steps(whole, weights) == old_rounded_steps(whole, weights)
        assert runs_split(weights, times) == old_runs_split(weights, times)
        for position in range(len(weights)):
            for digits in (2, None):
                new, old = (
                    share_part(whole, [w / math.fsum(weights) for w in weights], position, digits),
                    old_chain_share(whole, weights, position, digits),
                )
                assert (new, type(new), math.copysign(1, new)) == (old, type(old), math.copysign(1, old))


@pytest.mark.parametrize(
    ("whole", "weights"),
    [
        pytest.param(100.0, [1.0, 1.0, 1.0], id="thirds"),
        pytest.param(0.05, [1.0, 1.0], id="a-half-cent-each"),
        pytest.param(12346.82, [11177.66, 972.65], id="nightly-tune-100-runs"),
    ],
)
def test_the_steps_add_up_to_the_whole(whole: float, weights: list[float]) -> None:
    assert round(math.fsum(rounded_steps(whole, weights)), 2) == whole


def test_capex_shares_stay_whole_numbers() -> None:
    """``digits`` None: a chain share's capex is a whole number of dollars, written as an int."""
    assert steps_between([0.0, 100.5, 301.2], None) == [100, 201]
    assert all(type(part) is int for part in steps_between([0.0, 100.5, 301.2], None))


def test_one_formula_for_the_sequence_run_would_move_a_cent() -> None:
    """Two jobs of $7,920.25 and $6,780.00 a month at 10 runs: a run is $792.02 + $678.01 (792.025 rounds down in
    floats); split as the pool's months are (rounded_steps of the month over the runs) it would read $792.03 +
    $678.00. Same sum, a cent moved between the jobs: so the run split keeps its ``upto / runs`` points."""
    months, runs = [7920.25, 6780.0], 10
    assert runs_split(months, runs) == [792.02, 678.01]
    assert rounded_steps(math.fsum(months) / runs, months) == [792.03, 678.0]


def test_one_formula_for_the_chain_share_would_move_a_cent() -> None:
    """A $46,185.10 chain month between jobs of 484.8 and 161.6 h (3:1): the share gives $34,638.82 + $11,546.28
    (34,638.825 from ``whole * fsum(shares)``); rounded_steps of the hours gives $34,638.83 + $11,546.27."""
    whole, hours = 46185.1, [484.8, 161.6]
    assert [share_part(whole, [h / math.fsum(hours) for h in hours], i) for i in range(2)] == [34638.82, 11546.28]
    assert rounded_steps(whole, hours) == [34638.83, 11546.27]
