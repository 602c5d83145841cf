"""A replica's LoRA adapters (``inference.lora``) at its layout: GPU slots, host caches, the kernels in its steps.

The slots come out of the replica's KV pool; the host caches add to its node's RAM. The planner's hooks into
:mod:`generator.sizing.lora_serving` for :mod:`generator.planner.inference` (the memory and the step times a layout is
sized with) and :mod:`generator.planner.lora_plan` (what the plan says of them).
"""

from __future__ import annotations

from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.lora_serving import (
    ENGINE_LORA,
    LoraServing,
    LoraStep,
    lora_serving,
    lora_step,
    served_cpu_loras,
    served_max_loras,
    shrink_buffer_bytes,
)
from generator.sizing.memory import InferenceMemory, kv_capacity
from generator.sizing.performance import Accelerator
from generator.sizing.precision import kv_cache_bits
from generator.sizing.weights import Parallelism
from generator.workload.models import InferenceSpec


def lora_sizes(arch: Architecture, spec: InferenceSpec, par: Parallelism) -> LoraServing:
    """The replica's LoRA serving cost at ``par`` (``spec.lora`` set): slots on each GPU of its fullest stage, host RAM."""
    lora = spec.lora
    assert lora is not None
    return lora_serving(
        arch, engine=spec.engine, targets=lora.target_modules, max_rank=lora.max_rank,
        max_loras=served_max_loras(lora.max_loras, spec.engine, lora.adapters),
        cpu_loras=served_cpu_loras(lora.max_cpu_loras, lora.adapters), tp=par.tp, pp=par.pp,
    )  # fmt: skip


def lora_step_of(arch: Architecture, spec: InferenceSpec, par: Parallelism) -> LoraStep:
    """What the LoRA kernels add to a step on one GPU of the replica's fullest stage (``spec.lora`` set)."""
    lora = spec.lora
    assert lora is not None
    return lora_step(
        arch, engine=spec.engine, targets=lora.target_modules, max_rank=lora.max_rank, adapters=lora.adapters,
        max_loras=served_max_loras(lora.max_loras, spec.engine, lora.adapters), tp=par.tp, pp=par.pp,
    )  # fmt: skip


def with_lora_adapters(acc: Accelerator, arch: Architecture, spec: InferenceSpec, par: Parallelism) -> Accelerator:
    """``acc`` running the service's LoRA kernels in its steps (:attr:`Accelerator.lora`); as is without adapters."""
    return acc if spec.lora is None else acc._replace(lora=lora_step_of(arch, spec, par))


def with_lora_slots(
    arch: Architecture,
    spec: InferenceSpec,
    par: Parallelism,
    mem: InferenceMemory,
    consts: Constants,
    gpu_memory_bytes: int,
    tokens: int,
) -> InferenceMemory:
    """``mem`` with the engine's LoRA slots held beside the weights, and the KV pool what is left after them.

    vLLM allocates the slots when it loads the model, before its profiling run measures what the KV cache may take
    (:mod:`generator.sizing.lora_serving`), and that run passes its tokens through the LoRA kernels too, whose float32
    shrink buffer adds to its peak; SGLang's pool of adapter buffers is allocated before its KV pool alike.
    """
    lora = spec.lora
    assert lora is not None
    slots = lora_sizes(arch, spec, par).gpu_bytes
    buffer = shrink_buffer_bytes(tokens, lora.max_rank) if ENGINE_LORA[spec.engine].shrink_buffer_at_start else 0
    per_gpu = mem.per_gpu._replace(overhead=mem.per_gpu.overhead + slots + buffer)
    parts = {**mem.overhead_parts, "lora_slots": slots, "lora_shrink_buffer": buffer}
    capacity = mem.capacity
    if capacity is not None:
        kv_bits = kv_cache_bits(spec.kv_cache_precision)
        capacity = kv_capacity(arch, kv_bits, spec.max_context_tokens, par, consts, gpu_memory_bytes, per_gpu)
    return mem._replace(per_gpu=per_gpu, overhead_parts=parts, capacity=capacity)
