"""``precision-not-in-checkpoint`` read off the workload alone, as ``validate`` says it before any plan.

A service asking a format its checkpoint does not hold, which no engine makes of it as it loads it (NVFP4 of the BF16
Llama 3.3 70B, NVFP4 of DeepSeek-R1's FP8 blocks), is sized at that format while the engine loads the checkpoint's own
weights. The finding needs only the model and the precision asked, so ``validate`` says it as ``plan`` does
(newuser110: ``validate`` said "ok" and ``plan`` then warned). Owned machines planned for llama.cpp
(``hardware.fixed``) are left to ``plan``: their engine reads a GGUF file, not a quantization_config.
"""

from __future__ import annotations

from generator.calculator.model_source import serving_format
from generator.planner.online_quantization import unserved_precision_finding
from generator.planner.plan import Finding
from generator.workload.models import InferenceDeployment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from generator.workload import LoadedWorkload


def early_unserved_precision_findings(loaded: LoadedWorkload) -> list[Finding]:
    """Each inference deployment served in a format its checkpoint does not hold (the finding ``plan`` gives)."""
    if loaded.workload.hardware.fixed is not None:
        return []
    out = []
    for i, dep in enumerate(loaded.workload.deployments):
        model = loaded.models.get(dep.name)
        if not isinstance(dep, InferenceDeployment) or model is None or dep.inference.precision is None:
            continue
        served = serving_format(model, dep.inference.precision).name
        if (finding := unserved_precision_finding(i, dep.name, served, model, dep.inference.engine)) is not None:
            out.append(finding)
    return out
