"""Why a replica takes more GPUs than the fewest its weights need: a narrower layout misses the latency targets (fix168).

newuser95 item 4: Llama-3.3-70B at int4 on an RTX PRO 6000 took TP2 where fp8 took TP1, a dearer plan for the smaller
weights: the W4A16 GEMMs' slower prefill put TP1's TTFT p95 at 2,284 ms against the 2 s interactive default. Neither
``plan`` nor ``diff`` said why; the plan's reasons now name the narrower layout's miss, and ``diff`` repeats it where
a deployment's replica grows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

#: How the reason begins (``diff`` finds it among a deployment's reasons by it).
NARROWER_LEAD = "a replica of fewer GPUs misses the latency targets"


class _Missed(Protocol):
    """A layout dropped (:class:`generator.planner.inference.LayoutBlocked`): why, how far past the targets, its GPUs."""

    @property
    def text(self) -> str: ...
    @property
    def excess(self) -> float | None: ...
    @property
    def gpus(self) -> int: ...


def narrower_missed(blocked: Iterable[_Missed], gpus: int) -> str | None:
    """Why no layout of fewer than ``gpus`` GPUs a replica is the layout, where latency is why: the widest such's text."""
    slow = [b for b in blocked if b.excess is not None and 0 < b.gpus < gpus]
    if not slow:
        return None
    widest = max(b.gpus for b in slow)
    return min((b for b in slow if b.gpus == widest), key=lambda b: b.excess or 0.0).text


def narrower_reason(missed: str, gpu_id: str, precision: str, layout: tuple[int, int]) -> str:
    """The plan's reason that a replica takes TP x PP GPUs (``layout``): the narrower layout ``missed`` names misses."""
    tp, pp = layout
    return f"{NARROWER_LEAD} on {gpu_id} at {precision} ({missed}), so each replica takes {tp * pp} GPUs (TP{tp} x PP{pp})"
