"""Latency targets a deployment is planned against: its own, else the ``interactive`` defaults.

A chat service that states no targets still has users waiting on it, so unless it declares
``service_class: batch`` every missing target takes the interactive default.
"""

from __future__ import annotations

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
        notes.append(f"TTFT p95 <= {INTERACTIVE_TTFT_P95_MS:g} ms (interactive default)")
    if tpot is None:
        tpot = INTERACTIVE_TPOT_MS
        notes.append(f"TPOT <= {INTERACTIVE_TPOT_MS:g} ms (interactive default)")
    if not notes:
        return spec, []
    return spec._replace(slo=Slo(ttft_p95_ms=ttft, tpot_ms=tpot)), notes
