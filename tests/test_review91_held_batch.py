"""review91: the estimate's batch-against-pool rule is :meth:`Capacity.sequences_held` for SGLang as for vLLM.

The estimate counted SGLang's whole-context sequences as ``int(rank_max_concurrency) * attention_dp`` and its average
ones as ``rank_kv_cache_tokens // average * attention_dp``; SGLang's capacity (``sglang_capacity``) has no hybrid pool
groups, so ``sequences_held`` gives the same count. These rows pin that equality and the queue figures built on it.
"""

from __future__ import annotations

import pytest

from generator.calculator.estimate import _held_batch_fit
from generator.sizing.memory import Capacity


def _sglang_like(pool_tokens: int, context: int, ranks: int) -> Capacity:
    """A capacity as ``sglang_capacity`` builds it: one-token pages, no pool groups, each rank its own pool."""
    concurrency = pool_tokens / max(context, 1)
    return Capacity(80 << 30, 70 << 30, 10 << 30, pool_tokens * ranks, concurrency * ranks, pool_tokens, concurrency, ranks)


@pytest.mark.parametrize(
    ("pool_tokens", "context", "ranks"),
    [(0, 4096, 1), (4095, 4096, 1), (4096, 4096, 1), (300_000, 131_072, 1), (295_000, 33_000, 8), (10**9, 7, 4)],
)
def test_sglang_whole_context_count_is_sequences_held(pool_tokens: int, context: int, ranks: int) -> None:
    cap = _sglang_like(pool_tokens, context, ranks)
    assert cap.sequences_held(context) == int(cap.rank_max_concurrency) * ranks


@pytest.mark.parametrize(
    ("engine", "pool_tokens", "context", "ranks", "batch", "average", "expected"),
    [
        # whole-context batch: 2 held of 8 asked, 6 queue
        (
            "sglang",
            300_000,
            131_072,
            1,
            8,
            None,
            {"fits": True, "whole_context_batch": {"sequences_held": 2, "sequences_asked": 8, "queued": 6}},
        ),
        # nothing held: no fit, nothing said to queue
        ("sglang", 4095, 4096, 1, 2, None, {"fits": False, "whole_context_batch": {"sequences_held": 0, "sequences_asked": 2}}),
        # SGLang batch 1 at the context: the pool must hold one request
        ("sglang", 4096, 4096, 2, 1, None, {"fits": True}),
        # vLLM batch 1 at the context: the fit is the memory's alone (no key set here)
        ("vllm", 4095, 4096, 1, 1, None, {}),
        # average batch: 8 ranks x (295,000 // 1,200 = 245) held, 100 asked
        (
            "sglang",
            295_000,
            33_000,
            8,
            100,
            1200,
            {"fits": True, "average_batch": {"tokens_per_sequence": 1200, "sequences_held": 1960}},
        ),
        (
            "vllm",
            30_000,
            4096,
            1,
            100,
            1200,
            {"fits": True, "average_batch": {"tokens_per_sequence": 1200, "sequences_held": 25, "queued": 75}},
        ),
    ],
)
def test_held_batch_fit(
    engine: str, pool_tokens: int, context: int, ranks: int, batch: int, average: int | None, expected: dict[str, object]
) -> None:
    fit: dict[str, object] = {}
    _held_batch_fit(fit, _sglang_like(pool_tokens, context, ranks), engine, batch, context, average)
    assert fit == expected
