"""What would unblock a deployment every layout of which is ruled out: the "to unblock" a refusal ends with.

The reasons that are no deployment's own (every server over the rack's power or its power supplies, pinned degrees no
server gives) are said here; a service's ways are :func:`generator.planner.unblock_inference.inference_hint`'s, a
training job's :func:`generator.planner.unblock_training.training_hint`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.planner.blocked import NO_PACKING, PINNED_DEGREE, RACK_POWER
from generator.planner.nodes import PSU_OVER_CAPACITY
from generator.planner.unblock_inference import inference_hint
from generator.planner.unblock_training import training_hint
from generator.sizing.constants import Constants
from generator.workload.models import InferenceDeployment, TrainingDeployment

if TYPE_CHECKING:
    from generator.calculator.model_source import ResolvedModel
    from generator.planner.blocked import Blocked


def unblock_hint(
    dep: InferenceDeployment | TrainingDeployment,
    model: ResolvedModel,
    blocked: list[Blocked],
    power_field: str = "rack_power_kw",
    racks: bool = True,
    *,
    ttft_p95_factor: float = Constants().ttft_p95_factor,
    bought: bool = True,
) -> str:
    """What would unblock a deployment ``blocked`` so; ``power_field``: the hardware field that sets a rack's power.

    ``racks``: the servers stand in racks of the workload's own (bare metal); a cloud's instances stand in the
    provider's, whose power is no setting (newuser43 item 1: "more rack power" was offered on AWS, which refuses it).
    ``bought``: some server the workload allows is bought or rented; where none is (owned servers alone, ``buy: false``)
    "allow a GPU with more memory" is advice the workload cannot take, said as listing owned ones instead (fix113).
    """
    if blocked and all(b.code == RACK_POWER for b in blocked):
        # every server that holds the GPUs draws more than a rack is given: nothing of the model is the issue
        raise_it = (
            "set hardware.rack_power_kw to at least the node's power said above"
            if power_field == "rack_power_kw"
            else "give hardware.rack_circuits more or larger circuits, so a rack carries at least the node's power said above"
        )
        return f"to unblock: {raise_it}, or allow a GPU whose servers fit the rack"
    if blocked and all(b.code == PSU_OVER_CAPACITY for b in blocked):
        # nothing but the servers' power supplies rules the layouts out: memory, precision and SLOs are not the issue
        return (
            "to unblock: the servers that hold these GPUs draw more than their power supplies deliver; check the "
            "chassis' PSU rating where the catalog marks it believed, allow another platform, or fewer GPUs per server"
        )
    if blocked and all(b.code in (NO_PACKING, PINNED_DEGREE) for b in blocked):
        # the pinned degrees are what no server gives: memory, precision and SLOs are not the issue (review 12 items 3, 9)
        return (
            "to unblock: pin a TP x PP whose GPUs fit one server or fill whole servers of an allowed platform, allow a "
            "server that gives it, or drop the deployment's parallelism pin"
        )
    if isinstance(dep, InferenceDeployment):
        return inference_hint(dep, model, blocked, power_field, racks=racks, ttft_p95_factor=ttft_p95_factor, bought=bought)
    return training_hint(dep, blocked, racks=racks, bought=bought)
