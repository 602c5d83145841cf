"""The planner: enumerate feasible hardware per deployment, pick the best by the objective, build pools.

``plan_workload`` is pure over the loaded workload and the catalog; it returns a frozen
:class:`Plan` or raises :class:`InfeasibleError` saying which limit blocked what and what would unblock it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from generator.errors import InfeasibleError
from generator.estimate import default_precision
from generator.model_source import ResolvedModel
from generator.planner.inference import ReplicaShape, point_for_rate, replica_shapes
from generator.planner.nodes import NodeNeeds, assemble_node, model_load_seconds, racks_needed
from generator.planner.options import HOURS_PER_MONTH, Hardware, accelerator, allowed_hardware, node_counts, node_price_per_hour, score
from generator.planner.plan import Candidate, DeploymentPlan, Finding, NodeSpec, Plan, Pool
from generator.planner.training import TrainingShape, training_shapes
from generator.sizing.constants import Constants, with_overrides
from generator.sizing.precision import weight_format
from generator.units import GIB
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, TrainingDeployment, Workload

RUNNERS_UP = 3


@dataclass(frozen=True)
class Option:
    """One way to run a deployment, with everything needed to build its pool."""

    candidate: Candidate
    hardware: Hardware
    node: NodeSpec
    needs: NodeNeeds
    shape: ReplicaShape | TrainingShape


def pool_name(deployment: str, gpu_id: str) -> str:
    """A pool name valid for Ansible groups and Terraform keys: ``[a-z0-9_]``."""
    return re.sub(r"[^a-z0-9_]", "_", f"{deployment}_{gpu_id}".lower())


def _inference_needs(model: ResolvedModel, shape: ReplicaShape) -> NodeNeeds:
    return NodeNeeds(shape.memory.weights.total_bytes, 0, 0, 0, needs_fabric=shape.par.pp > 1)


def _training_needs(model: ResolvedModel, shape: TrainingShape, spec_dataset_tokens: int | None, nodes: int, consts: Constants) -> NodeNeeds:
    gpus_per_node = max(1, shape.world // max(nodes, 1))
    host = int(consts.training_host_ram_ratio * shape.hardware.gpu.memory_bytes * gpus_per_node)
    host = max(host, shape.memory.host_ram_bytes_per_gpu * gpus_per_node)
    trainable = shape.memory.trainable_params
    state_bytes = trainable * 14 if shape.setup.method == "full" else trainable * 4
    checkpoint = state_bytes * consts.checkpoints_kept // max(nodes, 1)
    dataset = (spec_dataset_tokens or 0) * consts.dataset_bytes_per_token
    weights = weight_format("bf16")
    from generator.sizing.weights import size_weights

    files = size_weights(model.architecture, weights).total_bytes
    return NodeNeeds(files, host, dataset, checkpoint, needs_fabric=nodes > 1)


def _candidate_row(wl: Workload, hw: Hardware, gpus_per_node: int, nodes: int, node: NodeSpec, tp: int, pp: int, replicas: int, summary: str, consts: Constants) -> Candidate:
    usd, _ = node_price_per_hour(wl, hw.platform, gpus_per_node, consts)
    total_usd = usd * nodes if usd is not None else None
    power = node.power_w * nodes
    return Candidate(
        gpu_id=hw.gpu.id,
        platform_id=hw.platform.id,
        gpus_per_node=gpus_per_node,
        tp=tp,
        pp=pp,
        replicas=replicas,
        gpus=replicas * tp * pp,
        nodes=nodes,
        usd_per_hour=round(total_usd, 4) if total_usd is not None else None,
        power_w=power,
        score=score(wl.objective, total_usd, replicas * tp * pp, power),
        summary=summary,
    )


def _inference_options(wl: Workload, dep: InferenceDeployment, model: ResolvedModel, consts: Constants, blocked: list[str]) -> list[Option]:
    spec = dep.inference
    fmt = weight_format(spec.precision or default_precision(model))
    options: list[Option] = []
    for hw in allowed_hardware(wl):
        shapes, why = replica_shapes(model, spec, fmt, hw, consts)
        blocked += [f"{hw.gpu.id} on {hw.platform.id}: {w}" for w in why[-1:]] if not shapes else []
        for shape in shapes:
            replicas = max(1, math.ceil(spec.requests_per_second / shape.max_point.requests_per_s))
            needs = _inference_needs(model, shape)
            for gpus_per_node, nodes in node_counts(hw.platform, shape.par.tp, shape.par.pp, replicas):
                scratch: list[Finding] = []
                node = assemble_node(hw.platform, hw.gpu, gpus_per_node, needs, consts, scratch)
                if node.power_w > wl.hardware.rack_power_kw * 1000:
                    blocked.append(f"{hw.gpu.id} on {hw.platform.id}: a {node.power_w} W node exceeds the {wl.hardware.rack_power_kw:g} kW rack")
                    continue
                summary = f"{replicas} x TP{shape.par.tp}" + (f" PP{shape.par.pp}" if shape.par.pp > 1 else "") + f" on {nodes} x {hw.platform.id} ({gpus_per_node} GPUs)"
                cand = _candidate_row(wl, hw, gpus_per_node, nodes, node, shape.par.tp, shape.par.pp, replicas, summary, consts)
                options.append(Option(cand, hw, node, needs, shape))
    return options


def _training_options(wl: Workload, dep: TrainingDeployment, model: ResolvedModel, consts: Constants, blocked: list[str]) -> list[Option]:
    spec = dep.training
    options: list[Option] = []
    for hw in allowed_hardware(wl):
        shapes, why = training_shapes(model, spec, hw, consts)
        blocked += [f"{hw.gpu.id} on {hw.platform.id}: {w}" for w in why[-1:]] if not shapes else []
        for shape in shapes:
            replicas = shape.world // shape.par.tp
            for gpus_per_node, nodes in node_counts(hw.platform, shape.par.tp, 1, replicas):
                needs = _training_needs(model, shape, spec.dataset_tokens, nodes, consts)
                scratch: list[Finding] = []
                node = assemble_node(hw.platform, hw.gpu, gpus_per_node, needs, consts, scratch)
                if node.power_w > wl.hardware.rack_power_kw * 1000:
                    blocked.append(f"{hw.gpu.id} on {hw.platform.id}: a {node.power_w} W node exceeds the {wl.hardware.rack_power_kw:g} kW rack")
                    continue
                hours = f", {shape.hours:.1f} h" if shape.hours else ""
                summary = f"{shape.reason} on {nodes} x {hw.platform.id} ({gpus_per_node} GPUs){hours}"
                cand = _candidate_row(wl, hw, gpus_per_node, nodes, node, shape.par.tp, 1, replicas, summary, consts)
                options.append(Option(cand, hw, node, needs, shape))
    return options


def _within_limits(wl: Workload, opt: Option) -> bool:
    hw = wl.hardware
    if hw.max_nodes is not None and opt.candidate.nodes > hw.max_nodes:
        return False
    usd = opt.candidate.usd_per_hour
    return not (hw.max_budget_usd_per_month is not None and usd is not None and usd * HOURS_PER_MONTH > hw.max_budget_usd_per_month)


def _unblock_hint(dep: InferenceDeployment | TrainingDeployment) -> str:
    if isinstance(dep, InferenceDeployment):
        return (
            "to unblock: allow a GPU with more memory, a lower precision (fp8 or int4 halve or quarter the weights), "
            "a shorter max_context_tokens, looser SLOs, or more rack power / max_nodes"
        )
    return "to unblock: allow a GPU with more memory, ZeRO-3 or LoRA/QLoRA, a shorter sequence_length, or more rack power / max_nodes"


def plan_workload(loaded: LoadedWorkload) -> Plan:
    """Plan every deployment of a validated workload."""
    wl = loaded.workload
    consts = with_overrides(dict(wl.constants))
    findings: list[Finding] = []
    chosen: list[tuple[int, Option, list[Option]]] = []
    for i, dep in enumerate(wl.deployments):
        model = loaded.models[dep.name]
        blocked: list[str] = []
        if isinstance(dep, InferenceDeployment):
            options = _inference_options(wl, dep, model, consts, blocked)
        else:
            options = _training_options(wl, dep, model, consts, blocked)
        feasible = sorted((o for o in options if _within_limits(wl, o)), key=lambda o: (o.candidate.score, o.candidate.summary))
        if not feasible:
            where = loaded.document.locate(("deployments", i, "model"))
            detail = "; ".join(sorted(set(blocked))[:6]) or "no platform of this provider offers an allowed GPU"
            if options:
                detail = f"every layout exceeds max_nodes or the budget (smallest: {min(o.candidate.nodes for o in options)} nodes)"
            raise InfeasibleError(f"{where}: deployment '{dep.name}' ({model.id}) has no feasible plan: {detail}; {_unblock_hint(dep)}")
        chosen.append((i, feasible[0], feasible[1:]))
    from generator.planner.assemble import build_plan

    return build_plan(loaded, consts, chosen, findings)


__all__ = ["accelerator", "plan_workload", "point_for_rate", "racks_needed", "model_load_seconds", "GIB"]
