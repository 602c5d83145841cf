"""The quick calculator behind ``specgen estimate``: one model, one shape, a JSON-able answer.

Kept light on purpose (standard library plus the sizing core): it must answer a cold start in
well under 0.1 s, so no pydantic, jsonschema, jinja2, ruamel or click on this path.
"""

from __future__ import annotations

from typing import NamedTuple

from generator import catalog
from generator.errors import InfeasibleError, InputError
from generator.model_source import ResolvedModel, resolve_model
from generator.sizing.constants import Constants, with_overrides
from generator.sizing.memory import InferenceMemory, kv_capacity, size_inference
from generator.sizing.performance import accelerator_for, decode_step, prefill_seconds, saturated_throughput
from generator.sizing.precision import WeightFormat, kv_cache_bits, weight_format
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.weights import Parallelism

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from generator.catalog.records import GpuSpec
    from generator.machine import FixedSpec
    from generator.sizing.architecture import Architecture

#: Context sized when none is given: never a model's full 128k unless asked.
DEFAULT_CONTEXT_TOKENS = 4096


class EstimateRequest(NamedTuple):
    """Everything ``specgen estimate`` can be asked."""

    model: str
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    batch: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    gpu: str | None = None
    gpu_memory_utilization: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    max_batched_tokens: int | None = None
    train: str | None = None
    optimizer: str = "adamw"
    zero_stage: int = 0
    gpus: int | None = None
    micro_batch: int = 1
    seq_len: int | None = None
    checkpointing: str = "full"
    flash_attention: bool = True
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ("all-linear",)
    offload_optimizer: bool = False
    offload_params: bool = False
    constants: tuple[tuple[str, float], ...] = ()
    #: An existing machine (``--ram-gib`` and friends): plan placement and offload on it.
    fixed: FixedSpec | None = None
    allowed_precisions: tuple[str, ...] = ()
    min_context_tokens: int | None = None


def default_precision(model: ResolvedModel) -> str:
    """The checkpoint's own format: its quantization, else its dtype (bf16 for fp32 checkpoints)."""
    arch = model.architecture
    if arch.quantization is not None:
        return arch.quantization.precision
    return "fp16" if arch.torch_dtype in ("float16", "fp16") else "bf16"


def _constants(req: EstimateRequest) -> Constants:
    overrides: dict[str, Any] = dict(req.constants)
    if req.gpu_memory_utilization is not None:
        overrides["gpu_memory_utilization"] = req.gpu_memory_utilization
    if req.max_batched_tokens is not None:
        overrides["prefill_chunk_tokens"] = req.max_batched_tokens
    return with_overrides(overrides)


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {value}")


def estimate(req: EstimateRequest) -> dict[str, Any]:
    """Size one model for inference (default) or training (``train`` set); a JSON-able dict."""
    _check_positive(batch=req.batch, tp=req.tp, pp=req.pp, ep=req.ep, micro_batch=req.micro_batch, lora_rank=req.lora_rank)
    model = resolve_model(req.model)
    arch = model.architecture
    consts = _constants(req)
    gpu = catalog.find_gpu(req.gpu) if req.gpu else None
    par = Parallelism(req.tp, req.pp, req.ep)
    precision = req.precision or default_precision(model)
    fmt = weight_format(precision)
    kv_name = req.kv_precision or ("fp16" if precision == "fp16" else "bf16")
    kv_bits = kv_cache_bits(kv_name)
    context = req.context_tokens or min(DEFAULT_CONTEXT_TOKENS, arch.max_position_embeddings or DEFAULT_CONTEXT_TOKENS)
    _check_positive(context=context)
    notes = list(arch.notes)
    if arch.max_position_embeddings and context > arch.max_position_embeddings:
        notes.append(f"context {context} exceeds the model's max_position_embeddings {arch.max_position_embeddings}")
    if req.context_tokens is None:
        notes.append(f"no --context given: sized for {context} tokens")

    inference = size_inference(arch, fmt, kv_bits, context, req.batch, par, consts, gpu.memory_bytes if gpu else None)
    result: dict[str, Any] = {
        "model": {
            "id": model.id,
            "name": model.name,
            "source": model.source,
            "model_type": arch.model_type,
            "layers": arch.num_layers,
            "max_position_embeddings": arch.max_position_embeddings,
        },
        "params": {
            "total": arch.params_total,
            "active": arch.params_active,
            "embedding": arch.embedding_params,
            "lm_head": arch.lm_head_params,
        },
        "precision": {"weights": fmt.name, "kv_cache": kv_name},
        "parallelism": {"tp": par.tp, "pp": par.pp, "ep": par.ep, "gpus_per_replica": par.gpus},
        "weights": {"bytes": inference.weights.total_bytes, "bytes_per_gpu": inference.weights.per_gpu_bytes},
        "kv_cache": {
            "bytes_per_token": inference.kv.bytes_per_token,
            "bytes": inference.kv.total_bytes,
            "bytes_per_gpu": inference.kv.per_gpu_bytes,
            "context_tokens": context,
            "sequences": req.batch,
        },
        "notes": notes,
    }
    if req.fixed is not None:
        result.update(_fixed_machine(req, arch, fmt, kv_bits, context, consts))
        result["precision"]["weights"] = result["offload"]["precision"]
    elif req.train:
        setup, mem = _training(req, model, par, consts)
        breakdown = mem.per_gpu
        result["params"]["trainable"] = mem.trainable_params
        result["training"] = {
            "method": setup.method,
            "optimizer": setup.optimizer,
            "zero_stage": setup.zero_stage,
            "data_parallel": setup.data_parallel,
            "micro_batch_size": setup.micro_batch_size,
            "sequence_length": setup.sequence_length,
            "checkpointing": setup.checkpointing,
            "flash_attention": setup.flash_attention,
            "lora_rank": setup.lora_rank if setup.method != "full" else None,
            "host_ram_bytes_per_gpu": mem.host_ram_bytes_per_gpu,
            "activation_bytes_per_token": mem.activation_bytes_per_token,
        }
        result["memory"] = {"per_gpu": breakdown.as_dict()}
        if gpu:
            result["capacity"] = _fit(gpu.id, gpu.memory_bytes, breakdown.total, consts)
    else:
        result["memory"] = {"per_gpu": inference.per_gpu.as_dict(), "overhead_parts": inference.overhead_parts}
        if gpu and inference.capacity:
            cap = inference.capacity
            result["capacity"] = {
                **_fit(gpu.id, gpu.memory_bytes, inference.per_gpu.total, consts),
                "budget_bytes": cap.budget_bytes,
                "kv_cache_bytes": cap.kv_available_bytes,
                "kv_cache_tokens": cap.kv_cache_tokens,
                "max_concurrency": round(cap.max_concurrency, 2),
            }
            if req.input_tokens or req.output_tokens:
                result["throughput"] = _throughput(req, arch, gpu, fmt, kv_bits, par, inference, consts)
    result["constants"] = {
        "gpu_memory_utilization": consts.gpu_memory_utilization,
        "prefill_chunk_tokens": consts.prefill_chunk_tokens,
    }
    return result


def _throughput(
    req: EstimateRequest,
    arch: Architecture,
    gpu: GpuSpec,
    fmt: WeightFormat,
    kv_bits: int,
    par: Parallelism,
    inference: InferenceMemory,
    consts: Constants,
) -> dict[str, Any]:
    """Roofline throughput of one replica: saturated output rate, and TTFT / TPOT at ``--batch``."""
    isl = req.input_tokens or 1000
    osl = req.output_tokens or 200
    acc = accelerator_for(gpu, fmt.compute, par.tp)
    cap = inference.capacity
    assert cap is not None
    sat = saturated_throughput(arch, inference.weights, kv_bits, par, acc, cap.kv_cache_tokens, isl, osl, consts)
    step = decode_step(arch, inference.weights, kv_bits, par, acc, req.batch, isl + osl // 2, consts)
    return {
        "input_tokens": isl,
        "output_tokens": osl,
        "max_output_tokens_per_s": round(sat.output_tokens_per_s, 1),
        "saturation_batch": sat.batch,
        "ttft_s": round(prefill_seconds(arch, par, acc, isl, consts) + step.seconds, 5),
        "tpot_s": round(step.seconds, 6),
        "decode_tokens_per_s": round(step.tokens_per_s, 1),
        "bound": "compute" if step.compute_seconds > step.memory_seconds else "memory bandwidth",
        "dense_tflops": acc.dense_tflops,
        "memory_bandwidth_gb_per_s": acc.memory_bandwidth_gb_per_s,
    }


def _fixed_machine(
    req: EstimateRequest, arch: Architecture, fmt: WeightFormat, kv_bits: int, context: int, consts: Constants
) -> dict[str, Any]:
    """Place the model on an existing machine (``--ram-gib`` given): offload plan, speed, settings."""
    from generator.machine import build_machine
    from generator.offload_report import (
        OFFLOAD_UNBLOCK,
        alternatives,
        checklist,
        findings,
        offload_summary,
        runtime_settings,
    )
    from generator.sizing.offload import plan_offload

    spec = req.fixed
    assert spec is not None
    machine, _gpu, basis = build_machine(spec)
    formats = [fmt, *(weight_format(p) for p in req.allowed_precisions if p != fmt.name)]
    try:
        plan = plan_offload(
            arch, formats, kv_bits, context, req.min_context_tokens, machine, req.input_tokens or 1000, consts, alternatives()
        )
    except InfeasibleError as exc:
        raise InfeasibleError(f"the model cannot run on this machine: {exc}; {OFFLOAD_UNBLOCK}") from None
    summary = offload_summary(plan, machine)
    return {
        "offload": summary,
        "memory": {"per_gpu": max((b.as_dict() for b in plan.placement.per_gpu), key=lambda d: d["total"])},
        "throughput": {
            "decode_tokens_per_s": round(plan.cost.decode_tokens_per_s, 3),
            "ttft_s": round(plan.cost.ttft_s, 3),
            "bound": plan.cost.bound,
            "mode": plan.cost.mode,
        },
        "machine": {
            "gpu": spec.gpu,
            "gpus": spec.gpu_count,
            "ram_gib": spec.ram_gib,
            "reserved_ram_gib": spec.reserved_ram_gib,
            "bandwidths": basis,
        },
        "runtime_settings": runtime_settings(arch, plan, machine),
        "checklist": checklist(plan, machine),
        "findings": [{"level": lvl, "code": code, "message": msg} for lvl, code, msg in findings(plan, machine, None, consts)],
    }


def _fit(gpu_id: str, memory: int, need: int, consts: Constants) -> dict[str, Any]:
    budget = int(memory * consts.gpu_memory_utilization)
    return {"gpu": gpu_id, "gpu_memory_bytes": memory, "fits": need <= budget}


def _training(req: EstimateRequest, model: ResolvedModel, par: Parallelism, consts: Constants) -> tuple[TrainingSetup, Any]:
    gpus = req.gpus or par.gpus
    if gpus % par.gpus:
        raise InputError(f"--gpus {gpus} is not a multiple of tp x pp = {par.gpus}")
    setup = TrainingSetup(
        method=req.train or "full",
        optimizer=req.optimizer,
        zero_stage=req.zero_stage,
        data_parallel=gpus // par.gpus,
        micro_batch_size=req.micro_batch,
        sequence_length=req.seq_len or req.context_tokens or 2048,
        checkpointing=req.checkpointing,
        flash_attention=req.flash_attention,
        lora_rank=req.lora_rank,
        lora_targets=req.lora_targets,
        offload_optimizer=req.offload_optimizer,
        offload_params=req.offload_params,
        base_precision=req.precision if req.train in ("lora", "qlora") else None,
    )
    return setup, size_training(model.architecture, setup, par, consts)


__all__ = ["EstimateRequest", "estimate", "kv_capacity"]
