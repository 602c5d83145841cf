"""The planning speed-ups of 2026-12-03 give what the code they replaced gave, element for element.

- :func:`~generator.planner.inference.with_engine_tokens` keeps one copy of the constants per (constants, limit,
  tokens): its key is all three, so two constants that differ only in a field their hash leaves out stay apart.
- ``_first_ranked`` forms no base order the first time a pass ranks a deployment's options so: its choice is the
  least (key, index) of the options that fit, as the stable sort it replaced chose, and as the base order chooses.
"""

from __future__ import annotations

import itertools
import random
from typing import Any, NamedTuple, cast

import pytest

from generator.planner import _first_ranked
from generator.planner.inference import with_engine_tokens
from generator.sizing.constants import Constants


@pytest.mark.parametrize(
    ("fields", "limit", "tokens"),
    [
        pytest.param({}, None, 2048, id="tokens-only"),
        pytest.param({}, 128, 8192, id="limit-and-tokens"),
        pytest.param({"pue": 1.0}, None, 2048, id="unhashed-field-tokens-only"),
        pytest.param({"pue": 1.0, "max_batch_size": 7}, 64, 512, id="unhashed-fields-limit"),
    ],
)
def test_with_engine_tokens_is_replace(fields: dict[str, Any], limit: int | None, tokens: int) -> None:
    consts = Constants()._replace(**fields)
    direct = consts._replace(prefill_chunk_tokens=tokens, **({} if limit is None else {"max_num_seqs": limit}))
    assert with_engine_tokens(consts, limit, tokens) == direct
    assert with_engine_tokens(consts, limit, tokens) is with_engine_tokens(consts, limit, tokens)  # one copy


def test_with_engine_tokens_keeps_constants_apart() -> None:
    """``pue`` is outside Constants.__hash__: the two hash alike, and each still gets its own fields back."""
    plain, site = Constants(), Constants()._replace(pue=1.0)
    assert hash(plain) == hash(site) and plain != site
    assert with_engine_tokens(plain, None, 1024).pue == plain.pue
    assert with_engine_tokens(site, None, 1024).pue == 1.0
    assert with_engine_tokens(plain, 32, 1024).pue == plain.pue
    assert with_engine_tokens(site, 32, 1024).pue == 1.0


class _Part(NamedTuple):
    """What ``_first_ranked`` reads of an option: its parts and each part's server kind (whole GPUs: its busy kind)."""

    server_kind: tuple[str, str, int]
    label: int

    @property
    def pieces(self) -> tuple[_Part, ...]:
        return (self,)

    @property
    def busy_kind(self) -> tuple[str, str, int]:
        return self.server_kind


KINDS = [("p1", "g1", 8), ("p2", "g1", 4), ("p3", "g2", 8)]


def _case(seed: int) -> tuple[list[_Part], dict[tuple[str, str, int], int], dict[int, tuple[int, int]], set[int]]:
    rng = random.Random(seed)
    options = [_Part(rng.choice(KINDS), i) for i in range(rng.randint(0, 12))]
    busy = {kind: rng.choice([0, 0, 4, 8]) for kind in KINDS if rng.random() < 0.7}
    keys = {o.label: (rng.randint(0, 3), rng.randint(0, 2)) for o in options}  # many ties: the index decides
    unfit = {o.label for o in options if rng.random() < 0.3}
    return options, busy, keys, unfit


@pytest.mark.parametrize("seed", range(60))
def test_first_ranked_without_base_is_the_stable_sort_first(seed: int) -> None:
    options, busy, keys, unfit = _case(seed)
    allowed = cast("list[Any]", options)

    def key(o: Any) -> tuple[object, ...]:
        return keys[o.label]

    def fits(o: Any) -> bool:
        return o.label not in unfit

    held = [o for o in options if busy.get(o.server_kind)]
    fitting = [o for o in options if o not in held or fits(o)]
    expected = cast("list[Any]", sorted(fitting, key=key)[:1])
    lazy, none = _first_ranked(allowed, None, busy, key, fits, form=False)
    formed, base = _first_ranked(allowed, None, busy, key, fits)
    assert none is None and base is not None
    assert lazy == formed == expected
    # the base formed once serves the later passes over other GPUs held, as before
    for later in itertools.islice(itertools.product([0, 4], repeat=len(KINDS)), 4):
        busy_later = dict(zip(KINDS, later, strict=True))
        again, _ = _first_ranked(allowed, base, busy_later, key, fits)
        fresh, _ = _first_ranked(allowed, None, busy_later, key, fits, form=False)
        assert again == fresh
