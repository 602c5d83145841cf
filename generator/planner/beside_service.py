"""What a refused training job is told of the owned servers services hold: the GPUs their rates leave, and the rule.

newuser94: a lab owning two 8 x H100 servers serves Llama 3.1 70B FP8 at a modest rate and wants to fine-tune an 8B
model on the GPUs the service leaves free. The planner places a training job on whole servers no service holds
(:func:`~generator.planner.pool_groups._colocation_groups`: a job is a group of its own), so where services hold every
owned server and nothing is bought, the job is refused. The refusal said only the rule; this says, of each owned
server kind services hold, how many of its GPUs their rates need and how many run replicas past them or stand idle,
and when a job is planned on those GPUs (fix182, :mod:`~generator.planner.beside_training`: one service alone on the
server, a layout of the job within its deadline and runs a month, its host RAM and files beside the service's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from generator.planner.inference import ReplicaShape
from generator.planner.inventory import ServerKey
from generator.planner.option import Option
from generator.planner.slo import replicas_needed
from generator.workload.models import InferenceDeployment, Workload


def needed_gpus(dep: InferenceDeployment, opt: Option) -> int | None:
    """The GPUs a service's rate needs of those its replicas hold on owned servers; None: not said.

    Said for a service on whole GPUs of owned servers alone, not split over server kinds (a split's parts are routed
    together) and not in shares of GPUs (a share is no whole GPU another pod could take).
    """
    c, shape = opt.candidate, opt.shape
    if opt.parts or c.shares_per_gpu or not c.owned_nodes or c.nodes != c.owned_nodes:
        return None
    if not isinstance(shape, ReplicaShape):
        return None
    needed = replicas_needed(dep.inference, shape.planned_requests_per_s, slots=shape.slot_queue)
    return min(needed, c.replicas) * shape.par.gpus


def beside_service_text(wl: Workload, chosen: Sequence[tuple[int, Option, list[Option]]], held: Mapping[ServerKey, int]) -> str:
    """The clause a training job's refusal adds after the rule that keeps it off services' servers ("": none).

    ``held``: the owned servers of each kind the deployments chosen hold, whole or in part (services sharing them).
    Per kind, the GPUs the services' rates need together (services share a kind's servers GPU by GPU), the rest of
    its GPUs run replicas past the rates or idle; a kind that something else holds too (a training job, a service in
    shares of GPUs or split, servers bought) is not said: its spare GPUs are not the services' to count.
    """
    needs: dict[ServerKey, list[tuple[str, int]]] = {}
    unsaid: set[ServerKey] = set()
    seen: set[int] = set()
    for index, opt, _ in chosen:
        if id(opt) in seen:  # a chain's jobs hold one option
            continue
        seen.add(id(opt))
        dep = wl.deployments[index]
        kinds = {part.server_kind for part in opt.pieces if part.candidate.owned_nodes}
        gpus = needed_gpus(dep, opt) if isinstance(dep, InferenceDeployment) else None
        if gpus is None:
            unsaid |= kinds
            continue
        needs.setdefault(opt.server_kind, []).append((dep.name, gpus))
    said = [
        _kind_clause(kind, held[kind], services)
        for kind, services in sorted(needs.items())
        if kind not in unsaid and held.get(kind)
    ]
    if not said:
        return ""
    return (
        f": {'; '.join(said)}; a training job runs on those GPUs where a layout of it fits them within its deadline "
        "and runs a month, its host RAM and files beside the services', and they hold the servers alone (fix182): "
        "none does here"
    )


def _kind_clause(kind: ServerKey, servers: int, services: list[tuple[str, int]]) -> str:
    """What the ``services`` (name, GPUs their rate needs) on ``servers`` owned servers of ``kind`` need of its GPUs."""
    platform_id, gpu_id, node_gpus = kind
    total = servers * node_gpus
    needed = sum(gpus for _, gpus in services)
    if len(services) == 1:
        whose, verb, they, rate, each, past = f"'{services[0][0]}'", "needs", "it holds", "its rate", "", "it"
    else:
        whose, verb, they, rate, past = " and ".join(f"'{n}'" for n, _ in services), "need", "they hold", "their rates", "them"
        each = " (" + ", ".join(f"'{n}' {gpus}" for n, gpus in services) + ")"
    held = f"{they} of {servers} owned {platform_id} ({node_gpus} x {gpu_id}) for {rate}{each}"
    if needed < total:
        return f"{whose} {verb} {needed} of the {total} GPUs {held}, {total - needed} running replicas past {past} or idle"
    return f"{whose} {verb} all {total} GPUs {held}"
