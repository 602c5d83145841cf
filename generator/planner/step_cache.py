"""The training search's steps and batch splits, kept for the process: each distinct one is timed once.

The search times one layout again and again: the batch split's step before placement and the placed step, the wider
degrees each ZeRO stage tries, a ``run_after`` chain's jobs alike but for their names, a paced deadline's re-sizing
of a job (perf12: a 4-job chain timed 57,118 steps, 18,844 of them distinct). Both are pure; the architecture, the
hardware or GPU and the constants are keyed by identity and held by the entry (their ids cannot be reused while it
lives), the rest by value, the job's spec without the fields no step or split reads (:data:`STEP_UNREAD`).
"""

from __future__ import annotations

from collections.abc import Callable

from generator.sizing.memo import MAX_ENTRIES
from generator.workload.models import TrainingSpec

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import TypeVar

    R = TypeVar("R")

#: Fields of a training spec a step and a batch split never read, set to their defaults in a key: the data and its
#: passes, the deadline, the runs a month and the job it runs after decide how many steps and how many GPUs, not a step.
STEP_UNREAD = {
    name: TrainingSpec._field_defaults[name]
    for name in ("dataset_tokens", "epochs", "deadline_hours", "runs_per_month", "run_after")
}


def step_spec(spec: TrainingSpec) -> TrainingSpec:
    """``spec`` as a step's key: :data:`STEP_UNREAD` at their defaults."""
    return spec._replace(**STEP_UNREAD)


def kept(cache: dict[object, tuple[tuple[object, ...], R]], key: object, held: tuple[object, ...], form: Callable[[], R]) -> R:
    """``cache``'s entry of ``key`` formed with the objects ``held`` (by identity), else ``form()``, kept.

    ``key`` names ``held`` by their ids; an entry whose objects are not these (an id reused) is formed afresh.
    """
    hit = cache.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)):
        return hit[1]
    result = form()
    if len(cache) >= MAX_ENTRIES:
        cache.clear()
    cache[key] = (held, result)
    return result
