"""Latency targets a deployment is planned against: its own, else the ``interactive`` defaults.

A chat service that states no targets still has users waiting on it, so unless it declares
``service_class: batch`` every missing target takes the interactive default. A pooling service (embed, score) has
no decode, so no TPOT target; its ``ttft_p95_ms`` is the p95 latency of the whole request.
"""

from __future__ import annotations

import math

from generator.sizing.serving_queue import SlotQueue, slot_replicas
from generator.units import figure_text
from generator.workload.models import InferenceSpec, Slo

#: Default p95 time to first token of an interactive service: a reply starts within 2 s (planning value;
#: the issue's and common chat-serving target).
INTERACTIVE_TTFT_P95_MS = 2000.0
#: Default time per output token of an interactive service: 100 ms is 10 tokens/s, about reading speed
#: (the same figure as the ``interactive_tokens_per_s`` constant).
INTERACTIVE_TPOT_MS = 100.0


def effective_slo(spec: InferenceSpec) -> tuple[InferenceSpec, list[str]]:
    """The spec with defaulted latency targets filled in, and a note for each default applied."""
    if spec.service_class == "batch":
        return spec, []
    notes = []
    ttft, tpot = spec.slo.ttft_p95_ms, spec.slo.tpot_ms
    if ttft is None:
        ttft = INTERACTIVE_TTFT_P95_MS
        what = "request latency p95" if spec.pooling else "TTFT p95"  # a pooling request answers after its one pass
        notes.append(f"{what} <= {INTERACTIVE_TTFT_P95_MS:g} ms (interactive default)")
    if tpot is None and not spec.pooling:  # no decode steps to time
        tpot = INTERACTIVE_TPOT_MS
        notes.append(f"TPOT <= {INTERACTIVE_TPOT_MS:g} ms (interactive default)")
    if not notes:
        return spec, []
    return spec._replace(slo=Slo(ttft_p95_ms=ttft, tpot_ms=tpot)), notes


def latency_bound(spec: InferenceSpec) -> bool:
    """Whether a replica's most load is held to latency targets (a batch service with none is held to its batch)."""
    slo = effective_slo(spec)[0].slo
    return slo.ttft_p95_ms is not None or slo.tpot_ms is not None


def held_to(spec: InferenceSpec, whose: str = "its") -> str:
    """What a replica's rate is held to, as a figure's phrase says it: the SLOs, or ``whose`` largest batch."""
    return "within the SLOs" if latency_bound(spec) else f"at {whose} largest batch"


def replicas_needed(spec: InferenceSpec, *replica_max_requests_per_s: float, slots: SlotQueue | None = None) -> int:
    """Replicas that hold ``spec``'s rate at an even share each (the slowest sets it), at least ``min_replicas``.

    Each runs at no more than ``max_utilization`` of what it sustains within the SLOs. ``slots``: the places in the
    batch each replica gives (one layout's): enough replicas that the p95 wait for a place stays within what the TTFT
    p95 target leaves, over the queue ``spec.routing`` states (:func:`~generator.sizing.serving_queue.slot_replicas`;
    newuser72 item 6), the larger of the two.
    """
    usable = min(replica_max_requests_per_s) * spec.max_utilization
    needed = max(spec.min_replicas, math.ceil(spec.requests_per_second / usable))
    return needed if slots is None else slot_replicas(spec.requests_per_second, slots, needed)


def rate_replicas(spec: InferenceSpec, *replica_max_requests_per_s: float, slots: SlotQueue | None = None) -> int:
    """Replicas the rate alone needs (``max_utilization`` and ``slots`` applied, ``min_replicas`` not): what N+k must keep."""
    return replicas_needed(spec._replace(min_replicas=1), *replica_max_requests_per_s, slots=slots)


def replicas_text(spec: InferenceSpec, replicas: int, running: int | None = None, tolerant: int | None = None) -> str:
    """What the replicas count holds: the rate, and the headroom or floor the spec asks (none by default).

    ``running``: the replicas run, where more than ``replicas`` (the servers' GPUs hold more whole: newuser46 item 2);
    ``tolerant``: of them, those ``nodes_down_tolerated`` runs (review41 item 5: the idle GPUs' were credited to it).
    """
    text = f"{figure_text(spec.requests_per_second)} req/s need {replicas:,} independent replica(s)"
    if spec.requests_per_run is not None and spec.deadline_hours:  # a batch job planned at the least rate (review71)
        own = spec.requests_per_run / (spec.deadline_hours * 3600)
        if own < spec.requests_per_second:
            text = (
                f"{figure_text(spec.requests_per_second)} req/s, the least rate planned (its {spec.requests_per_run:,} "
                f"request(s) in {spec.deadline_hours:g} h are {own:.3g} req/s), need {replicas:,} independent replica(s)"
            )
    if spec.max_utilization < 1:
        text += f" at {spec.max_utilization:.0%} of what each sustains (max_utilization)"
    if spec.min_replicas > 1:
        text += f", at least {spec.min_replicas} (min_replicas)"
    spread = max(replicas, tolerant or 0)
    if spread > replicas:
        k = spec.nodes_down_tolerated
        text += (
            f"; {spread - replicas:,} more run, spread over its nodes so that the rate holds with {k} of them down "
            f"(nodes_down_tolerated: N+{k})"
        )
    if running is not None and running > spread:
        text += f"; {running - spread:,} more run on GPUs of its servers that would otherwise idle, at no added cost"
    if max(spread, running or 0) > replicas:
        text += f" ({max(spread, running or 0):,} in all)"
    return text
