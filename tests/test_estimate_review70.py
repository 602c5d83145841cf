"""review70 items 3 and 4: the estimate's figures move one way as the request grows."""

from __future__ import annotations

import pytest

from tests.helpers import estimate_json, run_estimate

LLAMA_8B = ("meta-llama/Llama-3.1-8B-Instruct", "--input-tokens", "1000", "--output-tokens", "200")


@pytest.mark.parametrize("gpu", ["h100-sxm5-80gb", "l4"])
def test_more_sequences_never_show_less_memory(gpu: str) -> None:
    """Item 3: batch 2 (2 x 1,200 tokens at the average) showed 21,606,440,960 B a GPU against batch 1's 21,795,184,640
    (one sequence of the whole 4,096-token context): a batch at the average is sized at one whole-context sequence at
    least, and says so."""
    totals, kv = [], []
    for batch in (1, 2, 3, 4, 8):
        data = estimate_json(*LLAMA_8B, "--gpu", gpu, "--batch", str(batch))
        totals.append(data["memory"]["per_gpu"]["total"])
        kv.append(data["kv_cache"]["bytes"])
        if batch in (2, 3):  # 2,400 and 3,600 tokens at the average: less than one 4,096-token sequence
            assert data["kv_cache"]["sized_at"] == "one_whole_context"
            assert data["kv_cache"]["bytes"] == 131_072 * 4096
    assert totals == sorted(totals) and kv == sorted(kv)
    assert kv[0] == kv[1] == 131_072 * 4096 and kv[3] == 131_072 * 4 * 1200
    code, text = run_estimate(*LLAMA_8B, "--gpu", gpu, "--batch", "2")
    assert code == 0
    assert "0.50 GiB for one whole 4,096-token sequence, more than 2 x 1,200 tokens (--input-tokens + --output-tokens" in text
