"""What serving LoRA adapters over one base model costs: GPU slots the engine preallocates, host RAM, per-token work.

vLLM (``--enable-lora --max-loras N --max-lora-rank R``) wraps every linear layer of the model at load time, whatever
modules the adapters target: ``get_supported_lora_modules`` collects every ``LinearBase`` (and ``FusedMoE``) of the
model, and ``LoRAModelManager._create_lora_modules`` replaces each with its LoRA layer
(https://github.com/vllm-project/vllm/blob/main/vllm/lora/utils.py,
https://github.com/vllm-project/vllm/blob/main/vllm/lora/models.py). Each layer's
``create_lora_weights`` then allocates, per output slice (q, k and v of ``qkv_proj``; gate and up of
``gate_up_proj``), ``lora_a_stacked`` of ``(max_loras, 1, max_lora_rank, input_size)`` and ``lora_b_stacked`` of
``(max_loras, 1, output_size, max_lora_rank)`` zeros in ``lora_dtype`` (``auto``: the model's dtype)
(https://github.com/vllm-project/vllm/blob/main/vllm/lora/layers/base_linear.py). Under tensor parallelism a column-parallel
layer (q, k, v, gate, up) keeps A whole and B's output slice; a row-parallel one (o, down) A's input slice and B whole
(``input_size`` is ``input_size_per_partition`` there). These buffers exist before vLLM's profiling run measures what is
left for the KV cache, so they come out of the pool: ``max_loras x max_lora_rank x sum(in + out)`` elements a GPU.

SGLang (``--enable-lora --max-loras-per-batch N --max-lora-rank R``) keeps a ``LoRAMemoryPool`` of A buffers
``(max_loras_per_batch, c x max_lora_rank, input_dim)`` (c: 3 for qkv, 2 for gate_up) and B buffers
``(max_loras_per_batch, output_dim, max_lora_rank)`` per layer for the target modules only, split alike under TP
(``get_lora_A_shape`` / ``get_lora_B_shape``,
https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/mem_pool.py): the same count over the targets.

Host RAM: vLLM's ``WorkerLoRAManager`` loads each requested adapter on the CPU (``LoRAModel.from_local_checkpoint``,
device ``cpu``, pinned where it can) and keeps up to ``--max-cpu-loras`` of them in an LRU cache (default
``max_loras``), one cache per worker process: a TP replica holds it once per GPU
(https://github.com/vllm-project/vllm/blob/main/vllm/lora/worker_manager.py). An adapter there is its own rank over its
own targets; sized at ``max_rank`` it is an upper bound. SGLang loads every ``--lora-paths`` adapter on the CPU alike.

Per token: the punica / SGMV kernels (vLLM's ``lora_shrink`` / ``lora_expand``, SGLang's ``sgemm_lora_a`` /
``sgemm_lora_b``) run each wrapped module at the slot's full rank: ``2 x max_rank x (in + out)`` FLOPs a module; a
decode step reads the A and B of every slot its batch uses. Sized here, not timed: the kernels' launch and
gather cost beside the base model's GEMMs has no published measurement this engine is fitted to.

The embedding and output-layer LoRA buffers some vLLM releases add for models with ``embedding_modules``
(``embed_tokens``, ``lm_head``) are left out; routed experts are counted as linear modules with their copies.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture, Linear
from generator.sizing.lora_modules import LORA_ALL
from generator.sizing.memo import memoized

#: vLLM's accepted ``--max-lora-rank`` values (``MaxLoRARanks``, https://github.com/vllm-project/vllm/blob/main/vllm/config/lora.py).
VLLM_MAX_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)

#: vLLM's ``--max-loras`` default (``LoRAConfig.max_loras = 1``) and SGLang's ``--max-loras-per-batch`` default (8,
#: https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py).
VLLM_DEFAULT_MAX_LORAS = 1
SGLANG_DEFAULT_MAX_LORAS = 8

#: Bytes of an adapter element: ``lora_dtype auto`` is the model's dtype, which for a quantized checkpoint is its
#: activation dtype (bf16 / fp16).
LORA_ELEMENT_BYTES = 2

#: Row-parallel linears (vLLM ``RowParallelLinear``; SGLang ``ROW_PARALLELISM_LINEAR_LORA_NAMES``): TP splits their
#: input, so A's input slice and B whole on each GPU; every other linear is column-parallel.
ROW_PARALLEL = frozenset({"o_proj", "down_proj", "dense", "fc2", "w2", "out_proj"})


class LoraServing(NamedTuple):
    """One replica's LoRA serving cost at its TP degree."""

    #: Bytes on each GPU the engine's slots hold (``max_loras`` slots at ``max_rank`` over the wrapped modules).
    gpu_bytes: int
    #: One slot's bytes on each GPU.
    slot_bytes_per_gpu: int
    #: One adapter's bytes at ``max_rank`` over its target modules (its safetensors file, its CPU copy).
    adapter_bytes: int
    #: Host RAM of the replica's CPU adapter caches: ``cpu_loras`` adapters in each of its ``tp`` worker processes.
    host_bytes: int
    #: Extra FLOPs of one token through the LoRA kernels (the whole replica).
    flops_per_token: int
    #: Bytes each GPU reads from the slots in one decode step whose batch uses every slot.
    slot_read_bytes_per_step: int


def _is_row_parallel(lin: Linear) -> bool:
    """Whether TP splits the linear's input (o_proj, down_proj and their kin) rather than its output."""
    return lin.name.rsplit(".", 1)[-1] in ROW_PARALLEL


def slot_params_per_gpu(linears: list[Linear], rank: int, tp: int) -> int:
    """Parameters of one adapter slot on one GPU: ``rank x (in + out)`` a module, split as TP splits the module."""
    total = 0
    for lin in linears:
        row = _is_row_parallel(lin)
        width = (lin.in_features // tp if row else lin.in_features) + (lin.out_features if row else lin.out_features // tp)
        total += rank * width * lin.copies
    return total


@memoized
def adapted_linears(arch: Architecture, targets: tuple[str, ...]) -> tuple[Linear, ...]:
    """The linears an adapter of ``targets`` adapts (PEFT's matching; a name the model lacks is refused)."""
    from generator.sizing.training import lora_targets  # training sizing loads only for a service with adapters

    return tuple(lora_targets(arch, targets))


def wrapped_linears(arch: Architecture, engine: str, targets: tuple[str, ...]) -> tuple[Linear, ...]:
    """The linears the engine gives adapter slots: every one under vLLM, the targets under SGLang."""
    return adapted_linears(arch, (LORA_ALL,) if engine == "vllm" else targets)


def lora_serving(
    arch: Architecture,
    *,
    engine: str,
    targets: tuple[str, ...],
    max_rank: int,
    max_loras: int,
    cpu_loras: int,
    tp: int,
) -> LoraServing:
    """The GPU slots, host RAM and per-token work of serving adapters of ``targets`` up to ``max_rank``."""
    slot = slot_params_per_gpu(list(wrapped_linears(arch, engine, targets)), max_rank, tp) * LORA_ELEMENT_BYTES
    adapter = slot_params_per_gpu(list(adapted_linears(arch, targets)), max_rank, 1) * LORA_ELEMENT_BYTES
    whole_slot = slot_params_per_gpu(list(wrapped_linears(arch, engine, targets)), max_rank, 1)
    return LoraServing(
        gpu_bytes=max_loras * slot,
        slot_bytes_per_gpu=slot,
        adapter_bytes=adapter,
        host_bytes=cpu_loras * adapter * tp,
        flops_per_token=2 * whole_slot,
        slot_read_bytes_per_step=max_loras * slot,
    )


#: Output slices of the widest packed module vLLM's punica wrapper runs (``qkv_proj``: q, k and v).
PACKED_SLICES = 3
#: Bytes of an element of the kernels' intermediate buffer: float32 (triton-lang/triton#1387).
SHRINK_BUFFER_BYTES = 4


def shrink_buffer_bytes(tokens: int, max_rank: int) -> int:
    """VLLM's intermediate ``x @ A`` buffer for one linear at ``tokens`` tokens: the profiling run's extra peak.

    ``PunicaWrapperGPU.add_lora_linear`` allocates ``(len(output_slices), num_tokens, r)`` float32 for the shrink's
    output, then expands it into the layer's output
    (https://github.com/vllm-project/vllm/blob/main/vllm/lora/punica_wrapper/punica_gpu.py); ``r`` is the slots' rank.
    Its widest, ``qkv_proj``'s three slices, is held while the profiling run's ``max_num_batched_tokens`` tokens pass;
    each GPU's is whole (the rank dimension is split only with ``fully_sharded_loras``).
    """
    return PACKED_SLICES * tokens * max_rank * SHRINK_BUFFER_BYTES


def default_max_loras(engine: str) -> int:
    """The engine's adapters-in-one-batch default (vLLM --max-loras, SGLang --max-loras-per-batch)."""
    return VLLM_DEFAULT_MAX_LORAS if engine == "vllm" else SGLANG_DEFAULT_MAX_LORAS
