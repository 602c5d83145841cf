"""Turn the chosen option of every deployment into pools, per-deployment plans, totals and findings."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from generator.planner.inference import ReplicaShape, point_for_rate
from generator.planner.nodes import NodeNeeds, assemble_node, model_load_seconds, racks_needed
from generator.planner.option import Option, pool_labels, pool_name
from generator.planner.options import HOURS_PER_MONTH, node_price_per_hour
from generator.planner.plan import DeploymentPlan, Finding, Plan, Pool, sorted_findings
from generator.planner.training import TrainingShape
from generator.sizing.constants import Constants
from generator.sizing.performance import accelerator_for, saturated_throughput
from generator.units import GIB
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment

GPU_TAINT = ("nvidia.com/gpu", "present", "NoSchedule")


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def _inference_details(
    loaded: LoadedWorkload, dep: InferenceDeployment, opt: Option, consts: Constants
) -> tuple[dict[str, Any], list[str]]:
    shape = opt.shape
    assert isinstance(shape, ReplicaShape)
    spec = dep.inference
    model = loaded.models[dep.name]
    replicas = opt.candidate.replicas
    acc = accelerator_for(opt.hardware.gpu, shape.fmt.compute, shape.par.tp)
    rate = spec.requests_per_second / replicas
    point = point_for_rate(model, (shape.par, shape.memory, shape.kv_bits, acc), spec, rate, shape.max_point.batch, consts)
    cap = shape.memory.capacity
    assert cap is not None
    sat = saturated_throughput(
        model.architecture,
        shape.memory.weights,
        shape.kv_bits,
        shape.par,
        acc,
        cap.kv_cache_tokens,
        spec.avg_input_tokens,
        spec.avg_output_tokens,
        consts,
    )
    load_s = model_load_seconds(shape.memory.weights.total_bytes, opt.node)
    details = {
        "context_tokens": spec.max_context_tokens,
        "weights_bytes": shape.memory.weights.total_bytes,
        "kv_cache_bytes_per_token": shape.memory.kv.bytes_per_token,
        "kv_cache_tokens_per_replica": cap.kv_cache_tokens,
        "max_concurrency_per_replica": round(cap.max_concurrency, 2),
        "requests_per_s_per_replica_max": round(shape.max_point.requests_per_s, 3),
        "requests_per_s_per_replica": round(rate, 3),
        "batch_per_replica": point.batch,
        "ttft_p95_s": round(point.ttft_s, 4),
        "tpot_s": round(point.tpot_s, 5),
        "max_output_tokens_per_s_per_replica": round(sat.output_tokens_per_s, 1),
        "model_load_s": round(load_s, 1) if load_s is not None else None,
    }
    mem = shape.memory.per_gpu
    par = shape.par
    if par.gpus == 1:
        case = "fits one GPU: no model split needed"
    else:
        link = f"{acc.link_gb_per_s:g} GB/s per direction over {'NVLink' if acc.fast_link else 'PCIe'}"
        case = f"split over {par.gpus} GPUs (TP{par.tp}" + (f" x PP{par.pp}" if par.pp > 1 else "") + f"), {link}"
    reasons = [
        case,
        f"per GPU: weights {_gib(mem.weights)} + KV {_gib(mem.kv_cache)} + activations {_gib(mem.activations)} + overhead "
        f"{_gib(mem.overhead)} for one {spec.max_context_tokens:,}-token sequence; {cap.kv_cache_tokens:,} KV tokens fit "
        f"({cap.max_concurrency:.1f} such sequences)",
        f"one replica sustains {shape.max_point.requests_per_s:.2f} req/s within the SLOs (batch {shape.max_point.batch}); "
        f"{spec.requests_per_second:g} req/s need {replicas} independent replica(s)",
        f"at the planned load: batch {point.batch}, TTFT p95 {point.ttft_s * 1000:.0f} ms, TPOT {point.tpot_s * 1000:.1f} ms",
    ]
    return details, reasons


def _training_details(opt: Option, consts: Constants) -> tuple[dict[str, Any], list[str]]:
    shape = opt.shape
    assert isinstance(shape, TrainingShape)
    setup, mem = shape.setup, shape.memory
    details = {
        "method": setup.method,
        "optimizer": setup.optimizer,
        "zero_stage": setup.zero_stage,
        "data_parallel": setup.data_parallel,
        "world_size": shape.world,
        "micro_batch_size": setup.micro_batch_size,
        "sequence_length": setup.sequence_length,
        "gradient_checkpointing": setup.checkpointing,
        "trainable_params": mem.trainable_params,
        "total_flops": shape.total_flops,
        "hours": round(shape.hours, 2) if shape.hours is not None else None,
        "host_ram_bytes_per_gpu": mem.host_ram_bytes_per_gpu,
        "checkpoint_bytes_per_node": opt.needs.checkpoint_bytes,
        "checkpoint_write_s": round(
            opt.needs.checkpoint_bytes / consts.checkpoints_kept / (opt.node.nvme_write_gb_per_s * 1e9), 1
        )
        if opt.node.nvme_write_gb_per_s
        else None,
    }
    per = mem.per_gpu
    reasons = [
        f"{setup.method} training with {setup.optimizer}, ZeRO-{setup.zero_stage} over {setup.data_parallel} "
        f"data-parallel GPU(s) x TP{shape.par.tp}",
        f"per GPU: weights {_gib(per.weights)} + gradients {_gib(per.gradients)} + optimizer {_gib(per.optimizer)} + activations "
        f"{_gib(per.activations)} + overhead {_gib(per.overhead)} = {_gib(per.total)} of {_gib(shape.hardware.gpu.memory_bytes)}",
    ]
    if shape.hours is not None:
        reasons.append(f"{shape.total_flops:.3g} FLOPs take {shape.hours:.1f} h on {shape.world} GPU(s) at the planned MFU")
    return details, reasons


def build_plan(
    loaded: LoadedWorkload, consts: Constants, chosen: list[tuple[int, Option, list[Option]]], findings: list[Finding]
) -> Plan:
    """Assemble pools (co-locating inference deployments where it saves nodes) and the plan."""
    wl = loaded.workload
    groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]] = {}
    for index, opt, _ in chosen:
        kind = "inference" if isinstance(opt.shape, ReplicaShape) and opt.shape.par.pp == 1 else f"solo-{index}"
        key = (opt.hardware.platform.id, opt.hardware.gpu.id, opt.candidate.gpus_per_node, kind)
        groups.setdefault(key, []).append((index, opt))
    pools: list[Pool] = []
    pool_of: dict[int, str] = {}
    for (_, _, per_node, _), members in sorted(groups.items()):
        separate = sum(o.candidate.nodes for _, o in members)
        merged = math.ceil(sum(o.candidate.gpus for _, o in members) / per_node)
        units = [members] if len(members) > 1 and merged < separate else [[m] for m in members]
        for unit in units:
            pools.append(_pool(loaded, unit, merged if len(unit) > 1 else unit[0][1].candidate.nodes, consts, findings))
            for index, _ in unit:
                pool_of[index] = pools[-1].name
    deployments = []
    for index, opt, rest in chosen:
        dep = wl.deployments[index]
        model = loaded.models[dep.name]
        if isinstance(dep, InferenceDeployment):
            details, reasons = _inference_details(loaded, dep, opt, consts)
            shape_inf = opt.shape
            assert isinstance(shape_inf, ReplicaShape)
            mem = shape_inf.memory.per_gpu.as_dict()
            precision, kv = shape_inf.fmt.name, dep.inference.kv_cache_precision
        else:
            details, reasons = _training_details(opt, consts)
            shape_tr = opt.shape
            assert isinstance(shape_tr, TrainingShape)
            mem = shape_tr.memory.per_gpu.as_dict()
            precision, kv = shape_tr.setup.base_precision_name, None
        reasons.append(_choice_reason(wl.objective, opt, rest))
        if opt.candidate.usd_per_hour is None:
            findings.append(
                Finding(
                    "info",
                    "no-price",
                    f"no price for {opt.hardware.platform.id} in the catalog; add one under 'prices:' to rank by cost",
                    f"deployments[{index}]",
                )
            )
        deployments.append(
            DeploymentPlan(
                name=dep.name,
                kind="inference" if isinstance(dep, InferenceDeployment) else "training",
                model_id=model.id,
                model_source=model.source,
                params_total=model.architecture.params_total,
                params_active=model.architecture.params_active,
                precision=precision,
                kv_cache_precision=kv,
                tp=opt.candidate.tp,
                pp=opt.candidate.pp,
                replicas=opt.candidate.replicas,
                gpus=opt.candidate.gpus,
                pool=pool_of[index],
                memory_per_gpu=mem,
                details=details,
                reasons=tuple(reasons),
                runners_up=tuple(o.candidate for o in rest[:3]),
            )
        )
    if wl.hardware.provider != "baremetal" and "kubernetes" in wl.outputs:
        findings.append(
            Finding(
                "info",
                "kubernetes-cloud-flavor",
                f"Kubernetes manifests for {wl.hardware.provider} node pools (Karpenter, GKE, AKS) are not rendered yet; "
                "only the bare-metal kubeadm and GPU Operator manifests exist",
            )
        )
    return Plan(
        workload=wl.name,
        objective=wl.objective,
        provider=wl.hardware.provider,
        deployments=tuple(deployments),
        pools=tuple(pools),
        totals=totals(pools),
        findings=sorted_findings(findings),
        constants=dict(sorted(wl.constants.items())),
    )


def _choice_reason(objective: str, opt: Option, rest: list[Option]) -> str:
    c = opt.candidate
    text = f"chosen by {objective}: {c.summary}"
    if c.usd_per_hour is not None:
        text += f", ${c.usd_per_hour:,.2f}/h"
    text += f", {c.power_w / 1000:.1f} kW"
    if rest:
        r = rest[0].candidate
        other = f"${r.usd_per_hour:,.2f}/h" if r.usd_per_hour is not None else "unpriced"
        text += f"; runner-up {r.summary} ({other}, {r.power_w / 1000:.1f} kW, {r.gpus} GPUs)"
    return text


def _pool(loaded: LoadedWorkload, unit: list[tuple[int, Option]], nodes: int, consts: Constants, findings: list[Finding]) -> Pool:
    wl = loaded.workload
    first = unit[0][1]
    names = [wl.deployments[i].name for i, _ in unit]
    needs = NodeNeeds(
        model_file_bytes=sum(o.needs.model_file_bytes for _, o in unit),
        host_ram_bytes=max(o.needs.host_ram_bytes for _, o in unit),
        dataset_bytes=sum(o.needs.dataset_bytes for _, o in unit),
        checkpoint_bytes=sum(o.needs.checkpoint_bytes for _, o in unit),
        needs_fabric=any(o.needs.needs_fabric for _, o in unit),
    )
    hw = first.hardware
    before = len(findings)
    node = assemble_node(hw.platform, hw.gpu, first.candidate.gpus_per_node, needs, consts, findings)
    # a node's findings point at the pool's first deployment (where a reviewer can act on them)
    findings[before:] = [f if f.path else replace(f, path=f"deployments[{unit[0][0]}]") for f in findings[before:]]
    name = pool_name("_".join(names), hw.gpu.id)
    usd, basis = node_price_per_hour(wl, hw.platform, node.gpus, consts)
    labels = pool_labels(name, hw.gpu, hw.platform.id)
    return Pool(
        name=name,
        node=node,
        nodes=nodes,
        deployments=tuple(names),
        racks=racks_needed(node, nodes, wl.hardware.rack_power_kw),
        power_w=node.power_w * nodes,
        usd_per_hour=usd * nodes if usd is not None else None,
        price_basis=basis,
        labels=labels,
        taints=(GPU_TAINT,),
    )


def totals(pools: list[Pool]) -> dict[str, Any]:
    """Fleet totals: GPUs, nodes, racks, power, heat and cost (when every pool is priced)."""
    priced = [p.usd_per_hour for p in pools if p.usd_per_hour is not None]
    usd = sum(priced) if len(priced) == len(pools) and pools else None
    power = sum(p.power_w for p in pools)
    return {
        "gpus": sum(p.node.gpus * p.nodes for p in pools),
        "nodes": sum(p.nodes for p in pools),
        "racks": sum(p.racks for p in pools),
        "power_w": power,
        "heat_btu_per_h": sum(p.node.heat_btu_per_h * p.nodes for p in pools),
        "usd_per_hour": round(usd, 2) if usd is not None else None,
        "usd_per_month": round(usd * HOURS_PER_MONTH, 2) if usd is not None else None,
    }
