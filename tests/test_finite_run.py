"""A finite offline run's drain tail (generator/sizing/finite_run.py) and the trtllm-bench rows it times.

trtllm-bench queues its dataset's requests at once (perf-overview.md, "Preparing a Dataset": 1,000 to 30,000 requests
by input / output length); where a pipeline's KV cache holds a batch near that count, the run's tail at a falling
batch is a large share of it (CALIBRATION.md, acc153 entry of 2026-12-07).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.sizing.finite_run import finite_run_factor
from tests.conftest import calibration_report as _report


def test_a_step_of_fixed_time_loses_half_a_batch_of_steps() -> None:
    # 1,500 requests, 1,363 in flight, every step 1 s: steady 1500/1363 x 2000 steps; the run adds the tail's
    # 2000 steps for (1,363 + 1) / 2 requests' tokens, about half a batch's: (1500 / 1363) / (1500 / 1363 + 1 / 2)
    got = finite_run_factor(lambda b: 1.0, 1500, 1363, 2000)
    assert got == pytest.approx((1500 / 1363) / (1500 / 1363 + 0.5), rel=1e-3)


@pytest.mark.parametrize("requests", [1, 10, 20, 1000])
def test_one_request_at_a_time_has_no_tail(requests: int) -> None:
    """acc190: a closed loop of one request at a time (InferenceX's B200 conc-1 runs, 10 requests) runs its last
    request at the batch of one it ran every other at; the tail's falling batch floors at the last request, so the
    factor is 1 whatever the request count (it was 10 / 10.5 while the tail counted half a request's tokens)."""
    assert finite_run_factor(lambda b: 0.01 + 1e-3 * b, requests, 1, 922) == pytest.approx(1.0)


def test_a_small_batch_tail_carries_its_requests_output_left() -> None:
    # 4 in flight when the queue empties, progress spread evenly: 1, 3/4, 1/2 and 1/4 of an output left, 2.5 outputs
    # over the tail's 1,000 steps at 4, 3, 2, 1 in flight (250 steps each); steps of fixed time 1 s
    got = finite_run_factor(lambda b: 1.0, 40, 4, 1000)
    steady_s, tail_s = (40 * 1000 - 2.5 * 1000) / 4, 1000
    assert got == pytest.approx(40 * 1000 / 4 / (steady_s + tail_s))


def test_a_step_proportional_to_its_batch_loses_nothing() -> None:
    # every token costs the same at any batch: the tail is as fast a token as the steady state
    assert finite_run_factor(lambda b: 2.0 * b, 3000, 2048, 1000) == pytest.approx(1.0)


def test_no_stated_request_count_is_the_steady_state() -> None:
    assert finite_run_factor(lambda b: 1.0, 0, 2048, 1000) == 1.0


@given(st.integers(1, 5000), st.integers(1, 4096), st.integers(1, 4096), st.floats(0.0, 1.0))
def test_the_factor_is_at_most_one_and_falls_with_the_batch_share(requests: int, batch: int, osl: int, fixed: float) -> None:
    def step(b: int) -> float:  # a weight read (fixed) and a per-sequence part: time a token falls with the batch
        return fixed + 1e-3 * b

    got = finite_run_factor(step, requests, batch, osl)
    assert 0 < got <= 1 + 1e-12
    if requests >= batch:  # fewer requests than the batch run at a batch of their own (a batch of one has no tail)
        assert finite_run_factor(step, 2 * requests, batch, osl) >= got - 1e-12


def test_the_bench_request_count_is_read_from_the_rows_source() -> None:
    report = _report()
    rows = {label: row for group, label, _, _, row in report._rows() if group.startswith("throughput tensorrt-llm ")}
    assert report.bench_requests(rows["Llama-3.3-70B-Instruct tp1 pp8 1000/2000"]) == 1500
    assert report.bench_requests(rows["Llama-3.3-70B-Instruct tp1 pp8 128/128"]) == 30000


def test_the_pp8_rows_a_batch_near_the_request_count_lose_most() -> None:
    # Llama 3.3 70B on eight RTX PRO 6000 at PP8: 1,500 requests of 1000/2000 against ~1,360 in flight lose more than
    # 30,000 of 128/128 (~2,048 in flight) and the 20000/2000 run's ~180 in flight of 1,000 requests
    report = _report()
    rows = {label: row for group, label, _, _, row in report._rows() if group.startswith("throughput tensorrt-llm rtx")}

    def factor(label: str) -> float:
        row = rows[label]
        return float(report.finite_run(row, report.row_batch(row)))

    tight = factor("Llama-3.3-70B-Instruct tp1 pp8 1000/2000")
    assert tight < 0.9
    assert tight < factor("Llama-3.3-70B-Instruct tp1 pp8 128/128") < 1
    assert tight < factor("Llama-3.3-70B-Instruct tp1 pp8 20000/2000") < 1
