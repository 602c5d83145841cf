"""The near tie on cost or hours that training, batch and serving options share (one definition).

Kept apart from :mod:`generator.planner.training_candidates` so that a serving plan settling its near tie
(:mod:`generator.planner.span_tie`) does not load the training modules (test_cold_start ``render-all``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from generator.planner.candidates import ranking_candidate, ranking_lead
from generator.planner.option import Option
from generator.planner.options import rank

#: Layouts on the same servers whose run hours and prices are within this fraction of the fastest one's are a near tie:
#: closer than the step model tells them apart (newuser45 item 9: ZeRO-3 at 97.6% of the usable memory won over
#: plain DDP at 69% for 0.1% less GPU time).
NEAR_TIE_FRACTION = 0.01


def within_near_tie(value: float | None, best: float | None) -> bool:
    """Whether ``value`` is within :data:`NEAR_TIE_FRACTION` above ``best`` (both None: alike)."""
    if value is None or best is None:
        return value is None and best is None
    return value <= best * (1 + NEAR_TIE_FRACTION) + 1e-9


def ranked_usd(opt: Option) -> float | None:
    """What the cost objective ranks ``opt`` by, a price an hour (:func:`rank`'s first figure); None: unpriced.

    A training job's :func:`ranking_candidate` price; a batch job's, its runs' month over the month's hours.
    """
    usd = rank("cost", ranking_candidate(opt), alone=True)[0]
    return None if math.isinf(usd) else usd


def near_tie_band(ranked: list[Option], key: Callable[[Option], tuple[object, ...]]) -> int:
    """How many options at the head of ``ranked`` (sorted by ``key``, the cost objective's) are a near tie on cost.

    Those within :data:`NEAR_TIE_FRACTION` of the first one's cost that take owned servers as it does; 1 where the
    first ranks by no finite price (capex ranked first, a tuple, or unpriced). Not transitive: against the cheapest.
    """
    head, lead = ranking_lead(key(ranked[0]))
    if isinstance(lead, bool) or not isinstance(lead, (int, float)) or not math.isfinite(lead):
        return 1
    band = 1
    while band < len(ranked):
        owned, cost = ranking_lead(key(ranked[band]))
        if owned != head or isinstance(cost, bool) or not isinstance(cost, (int, float)) or not within_near_tie(cost, lead):
            break
        band += 1
    return band
