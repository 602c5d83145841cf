"""The activation checkpointing a training estimate is sized at where the user gives none (newuser108, fix194).

The planner sizes a job that leaves ``gradient_checkpointing`` out at each of
:data:`generator.sizing.frameworks.CHECKPOINTING_LEVELS` (none, selective, full), or at the framework's own level
where it has one (:func:`generator.planner.training.checkpointing_levels`), and ranks the layouts (on one cost, the
faster run). ``estimate --train`` without ``--gradient-checkpointing`` took full for every job (fix193 said the
planner's level beside it): Llama-3.1-8B continued pre-training on 64 H100s under Megatron-LM was 30.8% MFU and
9,118 GPU-hours at full, where the job fits without recomputation (40.6%, 6,929). The estimate now takes the
planner's rule: of the levels at which the job fits its GPU, the fastest, re-running its own sizing with only the
level changed; full where none fits.
"""

from __future__ import annotations

from generator.errors import InputError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest


def searched_levels(framework: str | None) -> tuple[str, ...]:
    """The levels a job of ``framework`` is sized at, as the planner's ``checkpointing_levels``.

    The framework's own level where it has one (torchtune and Unsloth: full), else every level, least recompute first.
    """
    from generator.sizing.frameworks import CHECKPOINTING_LEVELS, own_checkpointing_levels

    return own_checkpointing_levels(framework) or CHECKPOINTING_LEVELS


def planned_checkpointing(req: EstimateRequest, *, advise: bool) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``req``'s estimate at the level a plan sizes it at, and why each lighter level was passed over.

    The estimate is None where no level fits its GPU, or where full is taken while ``req`` gives another fallback
    level; :func:`passed_over` gives the reasons.

    Each of :func:`searched_levels` that the framework and method take (the planner leaves a conflict out) is sized;
    of those that fit, the fastest (tokens a second a GPU; on a tie, the least recompute) is taken, as the plan's
    ranking takes the cheaper layout, on one cost the faster run: with activation offload, full recomputation's
    smaller copies can outrun none's. Where full is taken the answer is the estimate at full as before, with the
    levels passed over added by the caller.

    Full, ``req``'s own fallback level (``checkpointing`` "full" where the CLI gives none), is sized once (fix197:
    every ``estimate --train --gpu`` of a torchtune job sized it twice, in the search and again as the answer): as
    ``req`` itself, advised as ``advise`` says where no lighter level fits (advice is what makes a job that does not
    fit fit, sized as ``req`` sizes a job that gives no level); a job that fits is not advised.
    """
    from generator.calculator.estimate import _estimate, estimate

    tried_levels: list[tuple[str, dict[str, Any]]] = []
    answer_error: InputError | None = None
    for level in searched_levels(req.framework):
        try:
            if level == req.checkpointing == "full":  # the answer where full is taken: sized as the caller's request
                lighter_fits = any(tried["capacity"].get("fits") for _, tried in tried_levels)
                tried_levels.append((level, _estimate(req, advise=advise and not lighter_fits)))
            else:
                # a job that fits is not advised (advise only lists what makes a job that does not fit fit)
                tried = estimate(req._replace(checkpointing=level, checkpointing_given=True), advise=False)
                tried_levels.append((level, tried))
        except InputError as exc:
            if level == req.checkpointing == "full":
                answer_error = exc
            continue
    fitting = [(level, tried) for level, tried in tried_levels if tried["capacity"].get("fits")]
    if not fitting:
        if answer_error is not None:
            raise answer_error
        return _full_answer(req, tried_levels), passed_over(tried_levels, "full", None)
    rate = [_rate(tried) for _, tried in fitting]
    level, tried = fitting[max(range(len(fitting)), key=lambda i: (rate[i], -i))]
    passed = passed_over(tried_levels, level, _rate(tried))
    if level == "full":
        return _full_answer(req, tried_levels), passed
    tried["training"]["checkpointing_chosen"] = [lv for lv, _ in fitting]
    if passed:
        tried["training"]["checkpointing_passed_over"] = passed
    tried["notes"].append(chosen_note(level, [lv for lv, _ in fitting]))
    return tried, passed


def _full_answer(req: EstimateRequest, tried_levels: list[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    """The search's estimate at full where it is ``req`` itself (``checkpointing`` full), else None: sized anew."""
    if req.checkpointing != "full":
        return None
    return next((tried for level, tried in tried_levels if level == "full"), None)


def _rate(tried: dict[str, Any]) -> float:
    """An estimate's tokens a second a GPU (0 where it gives none)."""
    return float((tried.get("training_speed") or {}).get("tokens_per_second_per_gpu") or 0.0)


def passed_over(tried_levels: list[tuple[str, dict[str, Any]]], chosen: str, chosen_rate: float | None) -> list[dict[str, Any]]:
    """Why each level lighter than ``chosen`` was not taken (fix195).

    ``over_bytes`` past the GPU's usable memory where it does not fit, else ``slower_fraction`` (its tokens a second a
    GPU against ``chosen_rate``).
    """
    from generator.sizing.frameworks import CHECKPOINTING_LEVELS

    lighter = CHECKPOINTING_LEVELS[: CHECKPOINTING_LEVELS.index(chosen)]
    out: list[dict[str, Any]] = []
    for level, tried in tried_levels:
        if level not in lighter:
            continue
        cap = tried["capacity"]
        if not cap.get("fits"):
            over = tried["memory"]["per_gpu"]["total"] - cap["usable_bytes"]
            out.append({"level": level, "fits": False, "over_bytes": over})
        elif chosen_rate:
            rate = _rate(tried)
            out.append(
                {
                    "level": level,
                    "fits": True,
                    "tokens_per_second_per_gpu": rate,
                    "slower_fraction": round(1 - rate / chosen_rate, 4),
                }
            )
    return out


def passed_over_text(entry: dict[str, Any]) -> str:
    """Why a lighter level was not taken, as the training line says it.

    ``none, which needs 12.34 GiB more than this GPU's usable memory`` or ``none, which fits but runs 9.1% slower
    (8,100 tokens/s a GPU)``.
    """
    if not entry["fits"]:
        return f"{entry['level']}, which needs {entry['over_bytes'] / 2**30:,.2f} GiB more than this GPU's usable memory"
    return (
        f"{entry['level']}, which fits but runs {entry['slower_fraction']:.1%} slower "
        f"({entry['tokens_per_second_per_gpu']:,.0f} tokens/s a GPU)"
    )


def chosen_note(level: str, fitting: list[str]) -> str:
    """The estimate's note of the level :func:`planned_checkpointing` chose, of those that fit."""
    return (
        f"checkpointing {level}: the fastest of the levels that fit this GPU ({', '.join(fitting)}), as a plan sizes "
        "a job that gives no level; give --gradient-checkpointing to choose one"
    )
