"""A finite offline run: ``requests`` equal requests queued at once, the engine keeping ``batch`` of them in flight.

The steady state (:func:`generator.sizing.performance.saturated_throughput`) runs the in-flight batch full forever. A
benchmark of a finite request count does not: once the queue is empty the requests in flight finish one after another
and nothing replaces them, so the last ``output_tokens`` steps run at a batch that falls from ``batch`` to one (the last
request admitted runs its whole output). With the requests' progress spread evenly over their output (in-flight batching
admits them as others finish), the request with the k-th least output left has k / batch of it left: at a share t of
the tail ``ceil(batch x (1 - t))`` run, and the tail carries ``(batch + 1) / 2`` requests' output (half a batch's, where
the batch is large; one request's whole output at a batch of one, which is no tail: acc190), at the falling batch's
rate; the rest run at the full batch's. Where the in-flight batch is a large share of the request count (a pipeline
whose KV cache holds thousands of sequences against trtllm-bench's 1,500 to 3,000 requests), the tail is a large share
of the run.
"""

from __future__ import annotations

import math
from collections.abc import Callable

#: Points of the midpoint rule the falling batch of the tail is timed at (its step time is smooth in the batch).
TAIL_SAMPLES = 16


def finite_run_factor(step_seconds: Callable[[int], float], requests: int, batch: int, output_tokens: int) -> float:
    """The finite run's output tokens/s over the steady state's at ``batch`` (1 where the run is endless).

    ``step_seconds(b)``: a steady engine step of ``b`` sequences (their share of the prompts riding along). The run's
    ``requests x output_tokens`` tokens take their steady time at ``min(batch, requests)`` but for the tail's, which take
    ``output_tokens`` steps of the batch falling evenly to one.
    """
    if requests <= 0 or batch <= 0 or output_tokens <= 0:
        return 1.0
    full = min(batch, requests)
    per_token_s = step_seconds(full) / full
    steady_s = requests * output_tokens * per_token_s
    # the batch at the midpoint of each of the tail's samples: the requests with more than that share of output left
    falling = [math.ceil(full * (TAIL_SAMPLES - i - 0.5) / TAIL_SAMPLES) for i in range(TAIL_SAMPLES)]
    tail_tokens = output_tokens / TAIL_SAMPLES * sum(falling)
    tail_s = sum(output_tokens / TAIL_SAMPLES * step_seconds(b) for b in falling)
    return steady_s / ((requests * output_tokens - tail_tokens) * per_token_s + tail_s)
