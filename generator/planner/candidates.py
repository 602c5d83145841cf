"""Enumerate the feasible options of one deployment over every allowed (platform, GPU) pair."""

from __future__ import annotations

import functools
import math

from generator import catalog
from generator.calculator.estimate import default_precision
from generator.calculator.model_source import ResolvedModel
from generator.planner.inference import ReplicaShape, replica_shapes
from generator.planner.nodes import NodeNeeds, assemble_node
from generator.planner.option import Option
from generator.planner.options import HOURS_PER_MONTH, Hardware, allowed_hardware, node_counts, node_price_per_hour
from generator.planner.plan import Candidate, Finding, NodeSpec
from generator.planner.training import TrainingShape, training_shapes
from generator.sizing.constants import Constants
from generator.sizing.precision import weight_format
from generator.sizing.training import OPTIMIZERS
from generator.sizing.weights import size_weights
from generator.workload.models import InferenceDeployment, TrainingDeployment, Workload

#: Findings of node assembly that rule a layout out (the node cannot be configured that way).
_BLOCKING = {"ram-short", "ram-exceeds-platform", "no-gpu-fabric"}


def _inference_needs(shape: ReplicaShape, gpus_per_node: int) -> NodeNeeds:
    return NodeNeeds(shape.memory.weights.total_bytes, 0, 0, 0, needs_fabric=shape.par.gpus > gpus_per_node)


def _training_needs(
    model: ResolvedModel, shape: TrainingShape, dataset_tokens: int | None, layout: tuple[int, int], consts: Constants
) -> NodeNeeds:
    """Host RAM, dataset and checkpoint space of a training job, per node."""
    gpus_per_node, nodes = layout
    used_per_node = min(gpus_per_node, shape.world)
    files = size_weights(model.architecture, weight_format("bf16")).total_bytes
    optimizer = OPTIMIZERS[shape.setup.optimizer]
    if shape.setup.method == "full":
        host = int(consts.training_host_ram_ratio * shape.hardware.gpu.memory_bytes * used_per_node)
        # a checkpoint holds the weights and the optimizer states (master copy and moments), sharded over the nodes
        per_param = optimizer.weight_bytes + optimizer.state_bytes
        checkpoint = shape.memory.trainable_params * per_param * consts.checkpoints_kept // max(nodes, 1)
    else:
        host = files  # the frozen base is read (and quantized) through host memory once
        checkpoint = shape.memory.trainable_params * (4 + optimizer.moment_bytes) * consts.checkpoints_kept  # fp32 adapters
    host = max(host, shape.memory.host_ram_bytes_per_gpu * used_per_node)
    dataset = (dataset_tokens or 0) * consts.dataset_bytes_per_token
    return NodeNeeds(files, host, dataset, checkpoint, needs_fabric=nodes > 1 and shape.setup.method == "full")


@functools.lru_cache(maxsize=65_536)
def _assembled(
    platform_id: str, gpu_id: str, gpus_per_node: int, needs: NodeNeeds, consts: Constants
) -> tuple[NodeSpec, tuple[Finding, ...]]:
    """A node and its assembly findings, built once per distinct (platform, GPU, GPUs, needs, constants)."""
    scratch: list[Finding] = []
    node = assemble_node(catalog.platforms()[platform_id], catalog.gpus()[gpu_id], gpus_per_node, needs, consts, scratch)
    return node, tuple(scratch)


def _option(
    wl: Workload,
    hw: Hardware,
    layout: tuple[int, int],
    needs: NodeNeeds,
    shape: ReplicaShape | TrainingShape,
    replicas: int,
    summary: str,
    consts: Constants,
    blocked: list[str],
) -> Option | None:
    gpus_per_node, nodes = layout
    node, scratch = _assembled(hw.platform.id, hw.gpu.id, gpus_per_node, needs, consts)
    where = f"{hw.gpu.id} on {hw.platform.id}"
    if node.power_w > wl.hardware.rack_power_kw * 1000:
        blocked.append(f"{where}: a {node.power_w} W node exceeds the {wl.hardware.rack_power_kw:g} kW rack power")
        return None
    stopping = [f.message for f in scratch if f.code in _BLOCKING]
    if stopping:
        blocked.append(f"{where}: {stopping[0]}")
        return None
    usd, _ = node_price_per_hour(wl, hw.platform, gpus_per_node, consts)
    total_usd = usd * nodes if usd is not None else None
    gpus = replicas * shape.par.tp * shape.par.pp
    power = node.power_w * nodes
    candidate = Candidate(
        gpu_id=hw.gpu.id,
        platform_id=hw.platform.id,
        gpus_per_node=gpus_per_node,
        tp=shape.par.tp,
        pp=shape.par.pp,
        replicas=replicas,
        gpus=gpus,
        nodes=nodes,
        usd_per_hour=total_usd,
        power_w=power,
        summary=summary,
    )
    return Option(candidate, hw, node, needs, shape)


def inference_options(
    wl: Workload, dep: InferenceDeployment, model: ResolvedModel, consts: Constants, blocked: list[str]
) -> list[Option]:
    """Every feasible (hardware, TP x PP, replicas, node size) of an inference deployment."""
    spec = dep.inference
    fmt = weight_format(spec.precision or default_precision(model))
    options: list[Option] = []
    for hw in allowed_hardware(wl):
        shapes, why = replica_shapes(model, spec, fmt, hw, consts)
        if not shapes:
            blocked += [f"{hw.gpu.id} on {hw.platform.id}: {w}" for w in why[-1:]]
        for shape in shapes:
            replicas = max(1, math.ceil(spec.requests_per_second / shape.max_point.requests_per_s))
            for layout in node_counts(hw.platform, shape.par.tp, shape.par.pp, replicas):
                needs = _inference_needs(shape, layout[0])
                layout_text = f"TP{shape.par.tp}" + (f" PP{shape.par.pp}" if shape.par.pp > 1 else "")
                summary = f"{replicas} x {layout_text} on {layout[1]} x {hw.platform.id} ({layout[0]} GPUs)"
                opt = _option(wl, hw, layout, needs, shape, replicas, summary, consts, blocked)
                if opt is not None:
                    options.append(opt)
    return options


def training_options(
    wl: Workload, dep: TrainingDeployment, model: ResolvedModel, consts: Constants, blocked: list[str]
) -> list[Option]:
    """Every feasible (hardware, TP, ZeRO, data parallel, node size) of a training deployment."""
    spec = dep.training
    options: list[Option] = []
    for hw in allowed_hardware(wl):
        shapes, why = training_shapes(model, spec, hw, consts)
        if not shapes:
            blocked += [f"{hw.gpu.id} on {hw.platform.id}: {w}" for w in why[-1:]]
        for shape in shapes:
            replicas = shape.world // shape.par.tp
            for layout in node_counts(hw.platform, shape.par.tp, 1, replicas):
                needs = _training_needs(model, shape, spec.dataset_tokens, layout, consts)
                hours = f", {shape.hours:.1f} h" if shape.hours else ""
                summary = f"{shape.reason} on {layout[1]} x {hw.platform.id} ({layout[0]} GPUs){hours}"
                opt = _option(wl, hw, layout, needs, shape, replicas, summary, consts, blocked)
                if opt is not None:
                    options.append(opt)
    return options


def within_limits(wl: Workload, opt: Option) -> bool:
    """Whether an option alone respects max_nodes and the monthly budget."""
    hw = wl.hardware
    if hw.max_nodes is not None and opt.candidate.nodes > hw.max_nodes:
        return False
    usd = opt.candidate.usd_per_hour
    return not (
        hw.max_budget_usd_per_month is not None and usd is not None and usd * HOURS_PER_MONTH > hw.max_budget_usd_per_month
    )
