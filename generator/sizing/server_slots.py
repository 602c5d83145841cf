"""The wait for one of a llama.cpp server's slots, whose speed depends on how many of them decode.

A bought replica's places run at the speed of its batch at the most load (:mod:`generator.sizing.serving_queue`).
A server of a few slots on an offloaded machine slows much more with each slot that decodes (each reads its KV cache
and the CPU multiplies the weights it reads once a slot): Llama 3.3 70B on one RTX 4090 makes 2.73 tokens/s alone,
1.26 a slot with six decoding. Timed all at the slowest, a request held a slot twice as long as most do, and more
slots looked worse. So the slots are a birth-death queue whose departures depend on the requests in it: with ``k``
requests in ``c`` slots (``k <= c``) they finish at ``mu_k = k / T_k`` a second, ``T_k`` a request's time with ``k``
decoding; past ``c`` the ``c`` slots finish at ``mu_c`` and the rest wait. Poisson arrivals at ``lambda``:
``p_k = p_0 prod_{i <= k} lambda / mu_i`` (``i > c``: ``mu_c``), so ``P(wait) = P(K >= c) = p_c / (1 - lambda /
mu_c)`` (PASTA), and a request that waits, FCFS behind ``j`` others at the total rate ``mu_c``, waits past ``t`` with
``P(W > t) = P(K >= c) exp(-(mu_c - lambda) t)``. With ``T_k`` alike for every ``k`` this is M/M/c (Erlang C).
Exponential request times, as the bought replicas' queue takes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from generator.sizing.serving_queue import TAIL_SHARE, SlotWait


def state_slot_wait(rate: float, request_s: Sequence[float]) -> SlotWait:
    """The wait for one of ``len(request_s)`` slots at ``rate`` req/s; ``request_s[k - 1]``: a request's time, ``k`` in.

    ``SlotWait.offered`` is the mean of the slots in use (``E[min(K, c)]``), so its utilisation is the share of the
    slots busy; the queue grows without bound (``waits`` 1, ``p95_s`` infinite) where the slots all busy finish fewer
    than ``rate`` a second.
    """
    servers = len(request_s)
    finish = [k / t for k, t in enumerate(request_s, start=1)]  # requests/s done with k in the slots
    if rate <= 0:
        return SlotWait(servers, 0.0, 0.0, 0.0)
    if rate >= finish[-1]:
        return SlotWait(servers, float(servers), 1.0, math.inf)
    weights = [1.0]  # p_k / p_0, k = 0..c
    for mu in finish:
        weights.append(weights[-1] * rate / mu)
    tail = weights[-1] / (1.0 - rate / finish[-1])  # sum over k >= c
    total = sum(weights[:-1]) + tail
    waits = tail / total
    busy = (sum(k * w for k, w in enumerate(weights[:-1])) + servers * tail) / total
    spare = finish[-1] - rate  # the rate a queue empties at with every slot busy
    p95 = math.log(waits / TAIL_SHARE) / spare if waits > TAIL_SHARE else 0.0
    return SlotWait(servers, busy, waits, p95)
