"""The lighter activation checkpointing a plan would size a training estimate at, where the user gave none (newuser108).

``estimate --train`` takes full checkpointing where ``--gradient-checkpointing`` is not given, while the planner sizes
a job that leaves ``gradient_checkpointing`` out at the least recompute that fits, in the order of
:data:`generator.planner.training.CHECKPOINTING_LEVELS` (Megatron-LM recomputes nothing unless told). Llama-3.1-8B
continued pre-training on 64 H100s: 30.8% MFU and 9,118 GPU-hours at the estimate's full, where the same job without
recomputation fits and a plan shows its hours. The estimate keeps its assumption and says the lighter level's figures
beside it, re-running its own sizing with only the level changed.
"""

from __future__ import annotations

from generator.errors import InputError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest

#: The levels lighter than full, least recompute first: the planner's search order (its ``CHECKPOINTING_LEVELS``).
LIGHTER_LEVELS = ("none", "selective")


def lighter_checkpointing(req: EstimateRequest, framework_default: str | None) -> dict[str, Any] | None:
    """The first of :data:`LIGHTER_LEVELS` at which ``req``'s job fits, with its speed and run; None where none does.

    ``framework_default``: the level the framework runs unless told (None: none), the only one tried where it is
    lighter than full, as the planner tries it. A level the framework or method refuses is skipped.
    """
    from generator.calculator.estimate import estimate

    levels = LIGHTER_LEVELS if framework_default is None else tuple(x for x in LIGHTER_LEVELS if x == framework_default)
    for level in levels:
        try:
            tried = estimate(req._replace(checkpointing=level, checkpointing_given=True), advise=False)
        except InputError:
            continue
        speed = tried.get("training_speed")
        if not tried["capacity"].get("fits") or not speed:
            continue
        run = speed.get("run") or {}
        return {
            "checkpointing": level,
            "per_gpu_bytes": tried["memory"]["per_gpu"]["total"],
            "tokens_per_second_per_gpu": speed["tokens_per_second_per_gpu"],
            "model_flops_utilization": speed["model_flops_utilization"],
            "gpu_hours": run.get("gpu_hours"),
        }
    return None


def lighter_checkpointing_note(lighter: dict[str, Any]) -> str:
    """The estimate's note of :func:`lighter_checkpointing`'s answer: the assumption, and what a plan would size."""
    hours = f", {lighter['gpu_hours']:,.0f} GPU-hours" if lighter["gpu_hours"] is not None else ""
    mfu = lighter["model_flops_utilization"]
    mfu_text = f", {mfu:.1%} MFU" if isinstance(mfu, float) else ""
    return (
        f"checkpointing full is this estimate's assumption (--gradient-checkpointing not given); a plan sizes the "
        f"least recompute that fits: with --gradient-checkpointing {lighter['checkpointing']} the job fits "
        f"({lighter['per_gpu_bytes'] / 2**30:.2f} GiB a GPU), {lighter['tokens_per_second_per_gpu']:,.0f} tokens/s a GPU"
        f"{mfu_text}{hours}"
    )
