"""The training search's layouts, batch splits and steps, kept for the process: each distinct one is formed once.

The search times one layout again and again: the batch split's step before placement and the placed step, the wider
degrees each ZeRO stage tries, a paced deadline's re-sizing of a job, and a ``run_after`` chain's jobs alike but for
the job they run after, each sized anew (perf12: a 4-job chain timed 57,118 steps, 18,844 of them distinct). All are
pure; the architecture, the hardware or GPU, a layout and the constants are keyed by identity and held by the entry
(their ids cannot be reused while it lives), the rest by value, a step's and a split's spec without the fields neither
reads (:data:`STEP_UNREAD`). Kept: :func:`~generator.planner.training.training_shapes`,
:func:`~generator.planner.training.gpu_step`, :func:`~generator.planner.training.compute_efficiency`, the batch splits
and :func:`~generator.planner.training_candidates._with_communication`.
"""

from __future__ import annotations

from collections.abc import Callable

from generator.workload.models import TrainingSpec

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import TypeVar

    R = TypeVar("R")

#: Entries a cache holds before it starts over: bounds the memory of a long ``render`` or test run of many workloads
#: (an entry holds about 1 KB; one training job of Llama 3.1 8B on the default bare-metal servers forms 4,732 steps,
#: 2,838 splits and 4,846 placed layouts).
MAX_KEPT = 10_000
#: The same for the layout searches, each entry a server kind's feasible layouts of a job (42 a job there).
MAX_SEARCHES = 1_000

#: Fields of a training spec a step and a batch split never read, set to their defaults in a key: the data and its
#: passes, the deadline, the runs a month and the job it runs after decide how many steps and how many GPUs, not a step.
STEP_UNREAD = {
    name: TrainingSpec._field_defaults[name]
    for name in ("dataset_tokens", "epochs", "deadline_hours", "runs_per_month", "run_after")
}


def step_spec(spec: TrainingSpec) -> TrainingSpec:
    """``spec`` as a step's key: :data:`STEP_UNREAD` at their defaults."""
    return spec._replace(**STEP_UNREAD)


def kept(
    cache: dict[object, tuple[tuple[object, ...], R]],
    key: object,
    held: tuple[object, ...],
    form: Callable[[], R],
    most: int = MAX_KEPT,
) -> R:
    """``cache``'s entry of ``key`` formed with the objects ``held`` (by identity), else ``form()``, kept.

    ``key`` names ``held`` by their ids; an entry whose objects are not these (an id reused) is formed afresh, and a key
    that cannot be hashed is formed and not kept. ``most``: the entries ``cache`` holds before it starts over.
    """
    try:
        hit = cache.get(key)
    except TypeError:  # an unhashable input
        return form()
    if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)):
        return hit[1]
    result = form()
    if len(cache) >= most:
        cache.clear()
    cache[key] = (held, result)
    return result
