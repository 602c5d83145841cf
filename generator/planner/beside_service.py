"""What a refused training job is told of the owned servers a service holds: the GPUs its rate leaves, and the rule.

newuser94: a lab owning two 8 x H100 servers serves Llama 3.1 70B FP8 at a modest rate on one and wants to fine-tune
an 8B model on the GPUs the service leaves free. The planner places a training job on whole servers no service holds
(:func:`~generator.planner.assemble._colocation_groups`: a job is a group of its own), so where every owned server is
held by a service and nothing is bought, the job is refused. The refusal said only the rule; this says, of each
service holding owned servers, how many of their GPUs its rate needs and how many run replicas past it or stand idle,
and that a job on those GPUs is what the planner does not place (not sized: the job's and the service's pods would
share the server's NVLink / PCIe, host RAM, CPU and power, which no pass of the search sizes together).
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.planner.inference import ReplicaShape
from generator.planner.option import Option
from generator.planner.slo import replicas_needed
from generator.workload.models import InferenceDeployment, Workload


def spare_gpus(dep: InferenceDeployment, opt: Option) -> tuple[int, int] | None:
    """(GPUs the rate needs, GPUs of the owned servers it holds) of a service on owned servers; None: not said.

    Said for a service on whole GPUs of owned servers alone, not split over server kinds (a split's parts are routed
    together) and not in shares of GPUs (a share is no whole GPU another pod could take).
    """
    c, shape = opt.candidate, opt.shape
    if opt.parts or c.shares_per_gpu or not c.owned_nodes or c.nodes != c.owned_nodes:
        return None
    if not isinstance(shape, ReplicaShape):
        return None
    needed = replicas_needed(dep.inference, shape.planned_requests_per_s, slots=shape.slot_queue)
    return min(needed, c.replicas) * shape.par.gpus, c.nodes * c.gpus_per_node


def beside_service_text(wl: Workload, chosen: Sequence[tuple[int, Option, list[Option]]]) -> str:
    """The clause a training job's refusal adds after the rule that keeps it off a service's servers ("" : none).

    E.g. ``'chat' needs 2 of the 8 GPUs of the owned servers it holds for its rate (6 run replicas past it or idle);
    a training job on GPUs a service leaves free of an owned server is not planned: ...``.
    """
    said = []
    for index, opt, _ in chosen:
        dep = wl.deployments[index]
        if not isinstance(dep, InferenceDeployment) or (gpus := spare_gpus(dep, opt)) is None:
            continue
        needed, held = gpus
        said.append(
            f"'{dep.name}' needs {needed} of the {held} GPUs of the owned servers it holds for its rate "
            f"({held - needed} run replicas past it or idle)"
            if needed < held
            else f"'{dep.name}' needs all {held} GPUs of the owned servers it holds for its rate"
        )
    if not said:
        return ""
    return (
        f": {'; '.join(said)}; a training job on GPUs a service leaves free of an owned server is not planned (the "
        "job's pods and the service's would share the server's NVLink, host RAM, CPU and power, which the plan does not "
        "size together)"
    )
