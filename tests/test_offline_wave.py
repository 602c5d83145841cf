"""One offline wave under vLLM V1's scheduler (generator/sizing/offline_wave.py) and the calibration rows it predicts.

The mechanism (benchmarks/CALIBRATION.md, mi300x entry of 2026-12-04): a ``vllm bench throughput`` run of no more
prompts than ``max_num_seqs`` is one wave; where its sequences outgrow the KV cache, the newest are preempted and
recomputed after the survivors finish. And vLLM before async scheduling ran its host loop serially with the GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.sizing.offline_wave import blocks_for, one_wave, one_wave_output_tokens_per_s, prefill_seconds_in_steps
from tests.conftest import calibration_report as _report

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "calibration.json"


def _batch_seconds(batch: int, prefill_tokens: float) -> float:
    """A step that takes ``batch`` seconds (decode) or 1 s (a prefill step of any size), to count steps by hand."""
    return float(batch) if not prefill_tokens else 1.0


def test_a_wave_the_cache_holds_is_its_prefill_and_every_decode_step_at_the_whole_wave() -> None:
    # 10 prompts of 16 tokens, 64 out: 5 blocks each at the end, 50 of 60 blocks
    wave = one_wave(_batch_seconds, 10, 16, 64, 60, 16, 1000)
    assert wave.preempted == 0 and wave.recomputed_tokens == 0 and wave.survivors == 10
    assert wave.full_wave_steps == 63
    assert wave.seconds == 1 + 63 * 10  # one prefill step of 160 tokens, 63 decode steps of 10 sequences


def test_preemption_by_hand() -> None:
    """30 blocks of 16 tokens, 10 prompts of 16 tokens generating 64.

    Decode step k holds 16 + k tokens: 2 blocks to k = 16, 3 to 32, 4 to 48, 5 to 63. At k = 33, 30 // 4 = 7 fit: the
    3 newest are preempted with 33 tokens each; at k = 49, 30 // 5 = 6: one more with 49. The 6 survivors finish at
    step 63; the 4 victims prefill 3 x (16 + 33) + (16 + 49) = 212 tokens again (one step), then the 4 decode 14 steps
    (64 - 49 - 1) and the 3 earlier victims 16 more (64 - 33 - 1 = 30 in all).
    """
    wave = one_wave(_batch_seconds, 10, 16, 64, 30, 16, 1000)
    assert (wave.preempted, wave.recomputed_tokens, wave.survivors, wave.full_wave_steps) == (4, 212, 6, 32)
    prefill, first_phase, recompute, tail = 1, 32 * 10 + 16 * 7 + 15 * 6, 1, 14 * 4 + 16 * 3
    assert wave.seconds == prefill + first_phase + recompute + tail == 628
    assert one_wave_output_tokens_per_s(wave, 10, 64) == pytest.approx(640 / 628)


def test_prefill_runs_in_steps_of_the_budget() -> None:
    assert prefill_seconds_in_steps(lambda _b, p: p / 100.0, 250, 100) == pytest.approx(2.5)  # 100 + 100 + 50 tokens
    assert prefill_seconds_in_steps(_batch_seconds, 250, 100) == 3  # three steps
    assert blocks_for(17, 16) == 2 and blocks_for(16, 16) == 1


@pytest.mark.parametrize(
    ("prompts", "blocks", "why"),
    [
        pytest.param(10, 9, "do not fit", id="prompts-outgrow-the-cache-at-admission"),
        pytest.param(10, 12, "second wave", id="victims-outnumber-what-a-second-wave-holds"),
        pytest.param(0, 30, "at least one", id="no-prompt"),
    ],
)
def test_a_wave_the_model_does_not_cover_is_refused(prompts: int, blocks: int, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        one_wave(_batch_seconds, prompts, 16, 64, blocks, 16, 1000)


@settings(max_examples=60, deadline=None)
@given(
    prompts=st.integers(1, 64),
    input_tokens=st.integers(1, 200),
    output_tokens=st.integers(2, 300),
    spare=st.integers(0, 2000),
    fixed=st.floats(0.001, 0.05),
    per_sequence=st.floats(0.0, 0.001),
)
def test_preemption_never_makes_a_wave_faster(
    prompts: int, input_tokens: int, output_tokens: int, spare: int, fixed: float, per_sequence: float
) -> None:
    """With a step of fixed cost plus a cost per token (a decode's or a prompt's), a cache short of the wave's final
    length costs time: the victims' prompts and generated tokens are computed twice."""

    def step(batch: int, prefill_tokens: float) -> float:
        return fixed + per_sequence * (batch + prefill_tokens)

    whole = prompts * blocks_for(input_tokens + output_tokens, 16)
    roomy = one_wave(step, prompts, input_tokens, output_tokens, whole + spare, 16, 8192)
    assert roomy.preempted == 0
    short = max(
        prompts * blocks_for(input_tokens, 16), whole // 2 + 1, (prompts + 1) // 2 * blocks_for(input_tokens + output_tokens, 16)
    )
    try:
        tight = one_wave(step, prompts, input_tokens, output_tokens, short, 16, 8192)
    except ValueError:
        return
    assert tight.seconds >= roomy.seconds - 1e-9
    assert tight.preempted + tight.survivors == prompts


def _rows(**match: object) -> list[dict[str, object]]:
    rows = json.loads(DATA.read_text())["throughput"]
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def test_amds_kv_bound_rows_run_as_a_wave_with_preemption_and_the_rest_as_the_steady_state() -> None:
    """AMD's 405B 128/4096 and 500/2000 runs hold 1,500 and 2,000 sequences where the cache holds 931 and 1,552 at full
    length: the steady state at the cache's batch had them +48-52% and +39-41% over; the wave, preempted, +20% and +20%.
    The runs the cache holds predict within 4% of the steady state (the same work; a 2048-token prompt's prefill first)."""
    report = _report()
    rows = _rows(lab="AMD", version=_rows(lab="AMD")[0]["version"])
    assert len(rows) == 8
    for row in rows:
        assert report.one_wave_row(row)
        steady = float(report._saturated(row)["max_output_tokens_per_s"])
        wave = report.predict_throughput(row)
        held = int(report._saturated(row)["kv_cache_tokens"]) // (int(row["input_tokens"]) + int(row["output_tokens"]))  # type: ignore[call-overload]
        if held < int(row["num_prompts"]):  # type: ignore[call-overload]
            assert wave < 0.86 * steady, row["setup"]
        else:
            assert wave == pytest.approx(steady, rel=0.04)
    # rows that do not name their prompts (or name more than max_num_seqs) keep the steady state
    oracle = _rows(model="meta-llama/Llama-3.1-405B-Instruct", kv_precision="bf16")
    offline = [r for r in oracle if "batch" not in r]
    assert offline and not any(report.one_wave_row(r) for r in offline)


def test_vllm_rows_without_async_scheduling_hide_no_host_time() -> None:
    """The same row predicts slower on a synchronous vLLM loop than with async scheduling (the fitted overlap), and the
    setting stands over a fitting override; TensorRT-LLM's rows keep the fitted overlap."""
    report = _report()
    row = next(r for r in _rows(lab="AMD") if r["input_tokens"] == 128 and r["output_tokens"] == 2048)
    sync = report.predict_throughput(row)
    overlapped = report.predict_throughput({**row, "async_scheduling": True})
    assert sync < 0.93 * overlapped  # 3,200 sequences a step: 64 ms of host time, 45% of it hidden when overlapped
    report.OVERRIDES["host_overlap_fraction"] = 0.6
    try:
        assert dict(report._row_constants(row))["host_overlap_fraction"] == 0.0
        trt = next(r for r in json.loads(DATA.read_text())["throughput"] if r["engine"] == "tensorrt-llm")
        assert dict(report._row_constants(trt))["host_overlap_fraction"] == 0.6
    finally:
        report.OVERRIDES.clear()
    assert all(r.get("async_scheduling") for r in _rows(engine="vllm") if "v0.17.0" in str(r.get("version", "")))
