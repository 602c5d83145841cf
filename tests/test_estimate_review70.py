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


MIXTRAL_4090 = (
    "mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "rtx-4090", "--ram-gib", "96", "--input-tokens", "3000",
    "--output-tokens", "300",
)  # fmt: skip


def test_a_longer_context_never_answers_a_request_sooner() -> None:
    """Item 4: at --context 8192 the plan kept -ub 512 (TTFT 28.92 s, 3.54 tokens/s) because -ub 4096 moves layer 6's
    experts to RAM; at 16384 it took -ub 4096 (5.82 s, 3.42): a longer context answered 5x sooner. The -ub is now chosen
    by the request's time (TTFT + 300 tokens at the decode rate), which never falls as the context grows."""
    times, ttfts = [], []
    for context in (4096, 8192, 16384, 32768):
        thr = estimate_json(*MIXTRAL_4090, "--context", str(context))["throughput"]
        times.append(thr["ttft_s"] + 300 / thr["decode_tokens_per_s"])
        ttfts.append(thr["ttft_s"])
        assert thr["ubatch_tokens"] == 4096
    assert times == sorted(times) and ttfts == sorted(ttfts)
    # 8,192 tokens: against 28.92 + 300 / 3.541 = 113.6 s at -ub 512 (at 8,192 until review80 items 1-2 left the 5%
    # margin off the offloaded layers, then at 16,384 until fix135: at the 4090's CUDA total, 24,210 MiB, not
    # nvidia-smi's 24,564, the 354 MiB less move the trade back to 8,192, where the old figures had 90.3 s; at 16,384
    # the -ub 512 placement now holds a layer fewer too, so -ub 4096 moves none there and it is 93.5 s either way).
    # 4,096 tokens: the GPUs' free memory holds -ub 4096's buffer, 90.3 s
    assert round(times[0], 1) == 90.3 and round(times[1], 1) == 93.5 and round(times[2], 1) == 93.5


def test_the_trade_of_a_larger_ubatch_is_said() -> None:
    # at 8,192 tokens (8,192 until review80 items 1-2 left the 5% margin off the offloaded layers; 16,384 from then until
    # fix135 planned the 4090 at CUDA's 24,210 MiB, not nvidia-smi's 24,564: the same trade, 354 MiB sooner)
    data = estimate_json(*MIXTRAL_4090, "--context", "8192")
    said = next(d for d in data["offload"]["decisions"] if d.startswith("prompt passes of 4,096 tokens"))
    assert said.endswith(
        "their larger compute buffer moves weights of 1 more layer(s) off the GPUs (6): decode 3.42 tokens/s instead of "
        "3.54 at -ub 512, for a TTFT of 5.82 s instead of 28.92 for 3,000 prompt tokens: a request of 3,000 + 300 tokens "
        "in 93.5 s instead of 113.7"
    )
    # with no layer moved, as before: the shorter TTFT at the same decode (at 8,192 tokens until fix135)
    quiet = estimate_json(*MIXTRAL_4090, "--context", "4096")["offload"]["decisions"]
    assert any(d.endswith("the GPUs' free memory holds the larger compute buffer") for d in quiet)


def test_the_text_rate_is_the_jsons() -> None:
    """Item 13: "8 output tokens/s" was printed where the JSON kept 8.5.

    acc120: the L4 at the L40's GDDR6 stream share (1.048x on the bandwidth-bound part) takes the TP2 step 39.37 ->
    37.72 ms, and one output token's rate 8.6 -> 9.0, a whole number: two output tokens, 12.9 -> 13.4, keep a fraction."""
    args = ("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "l4", "--tp", "2", "--input-tokens", "1", "--output-tokens", "2")
    rate = estimate_json(*args)["throughput"]["decode_tokens_per_s"]
    assert rate < 100 and rate != round(rate)
    assert f"; {rate:,.1f} output tokens/s), decode-only step" in run_estimate(*args)[1]


@pytest.mark.parametrize("value", ["1e-300", "0", "0.0009", "1.01"])
def test_gpu_memory_utilization_out_of_range_names_the_flag(capsys: pytest.CaptureFixture[str], value: str) -> None:
    """Item 17: 1e-300 was refused as "constant 'gpu_memory_utilization' must be in [0.001, 1]", the help saying (0, 1]."""
    from generator.calculator.cli import EPILOG
    from generator.calculator.cli import main as estimate_main

    code = estimate_main(["meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--gpu-memory-utilization", value])
    err = capsys.readouterr().err
    assert code == 2 and "--gpu-memory-utilization must be a number in [0.001, 1], got" in err and "constant" not in err
    assert "--gpu-memory-utilization in [0.001, 1]" in EPILOG and "--ram-gib in (0, 65,536]" in EPILOG
