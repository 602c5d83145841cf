"""The collector's pacing while planning (speed102): fewer full collections inside, the caller's own restored after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from generator.collector import FULL_COLLECTION_EVERY, fewer_full_collections


@pytest.fixture(autouse=True)
def _thresholds_kept() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


@pytest.mark.parametrize(
    ("caller", "inside"),
    [
        pytest.param((700, 10, 10), (700, 10, FULL_COLLECTION_EVERY), id="python-default"),
        pytest.param((2000, 20, 500), (2000, 20, 500), id="caller-paces-fewer-already"),
    ],
)
def test_paced_inside_and_restored_after(caller: tuple[int, int, int], inside: tuple[int, int, int]) -> None:
    gc.set_threshold(*caller)
    with fewer_full_collections():
        assert gc.get_threshold() == inside
        with fewer_full_collections():  # nested: the outer pacing kept
            assert gc.get_threshold() == inside
        assert gc.get_threshold() == inside
    assert gc.get_threshold() == caller


def test_restored_when_the_block_raises() -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(ValueError, match="planning failed"), fewer_full_collections():
        raise ValueError("planning failed")
    assert gc.get_threshold() == (700, 10, 10)
