"""Every service whose precision no allowed GPU serves, refused at once before the search (fix183 item 2).

The search refused the first such deployment and stopped there: a workload with two (both in int8 on MI300X) was
told of one, fixed it, and was refused again. Whether the engine has a kernel for a weight format on a GPU needs the
format and the GPU's architecture alone (:func:`generator.sizing.loadability.format_problems`, as the search's
``_gpu_shapes`` asks it), so ``validate`` and ``plan`` say every one, each at its field, in file order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.calculator.model_source import serving_format
from generator.errors import InfeasibleError, SpecgenError
from generator.planner.unblock_inference import unserved_precision_hint
from generator.sizing.loadability import float16_problem, format_problems
from generator.sizing.loaded_weights import loaded_format
from generator.workload.models import InferenceDeployment
from generator.workload.value_checks import given_in

if TYPE_CHECKING:
    from generator.planner.options import Hardware
    from generator.workload import LoadedWorkload

#: Reasons said per deployment (one a GPU first, then one a platform), as the search's refusal says them.
MAX_REASONS = 6


def _unserved(loaded: LoadedWorkload, dep: InferenceDeployment, hardware: list[Hardware]) -> list[str] | None:
    """Why each allowed (GPU, platform) the deployment may run on does not serve its precision; None where one does."""
    if dep.inference.allowed_precisions:  # the search chooses among them
        return None
    model = loaded.models[dep.name]
    fmt = serving_format(model, dep.inference.precision)
    engine = dep.inference.engine
    reasons: dict[tuple[str, str], str] = {}
    for hw in hardware:
        if dep.platform is not None and hw.platform.id != dep.platform:
            continue
        held = loaded_format(fmt, hw.gpu.architecture, engine)
        why = format_problems(held, hw.gpu.architecture) or (
            (problem,) if (problem := float16_problem(model.architecture.model_type, held, hw.gpu, engine)) else ()
        )
        if not why:
            return None
        reasons[hw.gpu.id, hw.platform.id] = why[0]
    if not reasons:  # a pin no allowed server matches: the search says so
        return None
    firsts: dict[str, str] = {}
    for (gpu_id, platform_id), text in sorted(reasons.items()):
        firsts.setdefault(gpu_id, f"{gpu_id} on {platform_id}: {text}")
    rest = [f"{g} on {p}: {text}" for (g, p), text in sorted(reasons.items())]
    return list(dict.fromkeys([*firsts.values(), *rest]))[:MAX_REASONS]


def unserved_precisions(loaded: LoadedWorkload, hardware: list[Hardware]) -> dict[int, SpecgenError]:
    """Each inference deployment no allowed GPU serves the precision of, by index: its refusal, at its precision (or model)."""
    wl, doc = loaded.workload, loaded.document
    refusals: dict[int, SpecgenError] = {}
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or (reasons := _unserved(loaded, dep, hardware)) is None:
            continue
        path: tuple[str | int, ...] = ("deployments", i, "inference", "precision")
        where = doc.locate(path if given_in(doc, path) else ("deployments", i, "model"))
        refusals[i] = InfeasibleError(
            f"deployment '{dep.name}' ({loaded.models[dep.name].id}) has no feasible plan: {'; '.join(reasons)}; "
            f"{unserved_precision_hint(dep)}",
            where,
        )
    return refusals
