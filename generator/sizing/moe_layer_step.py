"""The fixed time an engine's MoE layer adds to a step: the workload's constant where set, else the engine's.

``moe_layer_step_s`` at :data:`ENGINE_CHOICE` (-1, its default) leaves the time to the engine: vLLM's fused-MoE layers take
``vllm_moe_layer_step_s`` (acc181), every other engine none. A workload's ``constants`` and the estimate's ``--set``
reach the sizing alike (``with_overrides``), so a value given (0 too) stands in the planner as in the estimate (fix191:
the planner overwrote it with vLLM's where the estimate kept it).
"""

from __future__ import annotations

from generator.sizing.constants import ENGINE_CHOICES, Constants

#: ``moe_layer_step_s`` of "the engine's time" (the default): :func:`engine_moe_layer_step_s`.
ENGINE_CHOICE = ENGINE_CHOICES["moe_layer_step_s"]


def engine_moe_layer_step_s(consts: Constants, engine: str | None) -> float:
    """Seconds each MoE layer adds to a step of ``engine``: the constant where set, else the engine's.

    ``engine`` None (a path that names none): the time where set, else none.
    """
    given = consts.moe_layer_step_s
    if given != ENGINE_CHOICE:
        return given
    return consts.vllm_moe_layer_step_s if engine == "vllm" else 0.0
