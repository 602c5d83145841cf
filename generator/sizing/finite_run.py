"""A finite offline run: ``requests`` equal requests queued at once, the engine keeping ``batch`` of them in flight.

The steady state (:func:`generator.sizing.performance.saturated_throughput`) runs the in-flight batch full forever. A
benchmark of a finite request count does not: once the queue is empty the requests in flight finish one after another
and nothing replaces them, so the last ``output_tokens`` steps run at a batch that falls from ``batch`` to none. With the
requests' progress spread evenly over their output (in-flight batching admits them as others finish), the tail carries
half a batch's output tokens, ``batch x output / 2``, at the falling batch's rate; the rest run at the full batch's. Where
the in-flight batch is a large share of the request count (a pipeline whose KV cache holds thousands of sequences
against trtllm-bench's 1,500 to 3,000 requests), the tail is a large share of the run.
"""

from __future__ import annotations

from collections.abc import Callable

#: Points of the midpoint rule the falling batch of the tail is timed at (its step time is smooth in the batch).
TAIL_SAMPLES = 16


def finite_run_factor(step_seconds: Callable[[int], float], requests: int, batch: int, output_tokens: int) -> float:
    """The finite run's output tokens/s over the steady state's at ``batch`` (1 where the run is endless).

    ``step_seconds(b)``: a steady engine step of ``b`` sequences (their share of the prompts riding along). The run's
    ``requests x output_tokens`` tokens take their steady time at ``min(batch, requests)`` but for the tail's half
    batch of tokens, which take ``output_tokens`` steps of the batch falling evenly to none.
    """
    if requests <= 0 or batch <= 0 or output_tokens <= 0:
        return 1.0
    full = min(batch, requests)
    per_token_s = step_seconds(full) / full
    steady_s = requests * output_tokens * per_token_s
    tail_tokens = full * output_tokens / 2
    tail_s = sum(
        output_tokens / TAIL_SAMPLES * step_seconds(max(1, round(full * (TAIL_SAMPLES - i - 0.5) / TAIL_SAMPLES)))
        for i in range(TAIL_SAMPLES)
    )
    return steady_s / ((requests * output_tokens - tail_tokens) * per_token_s + tail_s)
