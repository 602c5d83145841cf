"""SGLang's KV-pool accounting (``--mem-fraction-static``), as an alternative to vLLM's.

From ``sglang/srt/model_executor/model_runner`` (``profile_max_num_token``):

- ``total`` is the free GPU memory measured once the distributed runtime is up, before the weights load;
  ``available`` is the free memory measured after they load.
- The pool gets ``rest = available - total x (1 - mem_fraction_static)``: everything the weights did not take,
  less a reserve for activations and CUDA graphs that is a fraction of ``total`` (not of what is left).
- Tokens: ``rest // cell``, one cell being a token's K and V in every layer of one rank
  (``kv_heads_per_rank x head_dim x layers x 2 x dtype bytes``; MLA: ``(kv_lora_rank + rope dim) x layers``).

Sliding-window layers are charged like full ones (SGLang's hybrid-SWA pool is a separate configurator).

``--mem-fraction-static`` left unset is derived from the GPU's memory (``ServerArgs._handle_gpu_memory_settings``,
https://github.com/sgl-project/sglang/pull/10975, python/sglang/srt/server_args.py): the GPU's size picks
``chunked_prefill_size`` and ``cuda_graph_max_bs`` (the latter by ``tp_size`` below 4 or not);
``reserved = 512 + max(chunk, 2048) x 1.5 + max_bs x 2 + tp_size x pp_size / 8 x 1024`` MiB, plus under
``--enable-dp-attention`` ``max_bs x dp_size x 3`` ("DP attention needs more padding for some operations") and, where
``max_bs > 300``, ``max_bs x dp_size x 1.5`` more ("DP attention uses much more memory for large cuda graph max bs");
at least 10 GiB above 60 GiB of memory; the fraction is ``(memory - reserved) / memory``, rounded to 3 places.
SGLang's ``tp_size`` is its ``--tp-size``: a pipeline stage's GPUs, which under DP attention are the stage's ``ep``
GPUs (``--tp-size 8 --enable-dp-attention --dp-size 8`` for TP1 EP8), not the attention TP (review72 item 5).
Pure: no I/O.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture
from generator.sizing.kv_cache import ceil_bytes, layer_elements_per_gpu
from generator.sizing.linear_attention import check_sized_use
from generator.sizing.memory import Capacity, InferenceMemory
from generator.sizing.weights import Parallelism, stage_layers
from generator.units import MIB

#: SGLang's defaults by GPU memory (MiB, upper bound exclusive): chunked_prefill_size, cuda_graph_max_bs below TP4
#: and from TP4 (``_handle_gpu_memory_settings``, https://github.com/sgl-project/sglang/pull/10975).
SGLANG_MEMORY_TIERS: tuple[tuple[float, int, int, int], ...] = (
    (20 * 1024, 2048, 8, 8),  # T4, 4080
    (35 * 1024, 2048, 24, 80),  # A10, 4090, 5090
    (60 * 1024, 4096, 32, 160),  # A100 40GB, L40
    (90 * 1024, 8192, 256, 512),  # H100, A100 80GB
    (160 * 1024, 8192, 256, 512),  # H20, H200
    (float("inf"), 16384, 512, 512),  # B200, MI300
)


class SglangKvPool(NamedTuple):
    """The pool SGLang sizes on one GPU and the token count its log prints."""

    #: ``available - total x (1 - mem_fraction_static)``, bytes (negative: SGLang refuses to start).
    rest_bytes: int
    #: Bytes of one token in every layer of this rank.
    cell_bytes: int
    #: "KV Cache is allocated. #tokens: N".
    tokens: int


def sglang_cell_bytes(arch: Architecture, kv_bits: int, par: Parallelism = Parallelism()) -> int:
    """One token's KV bytes on the rank that holds most (whole KV heads per TP rank; MLA latent replicated)."""
    return max(
        ceil_bytes(sum(layer_elements_per_gpu(arch.layers[index], par.tp) for index in stage) * kv_bits)
        for stage in stage_layers(arch.num_layers, par.pp, "sglang")
    )


def sglang_kv_pool(
    arch: Architecture,
    kv_bits: int,
    free_before_load_bytes: int,
    free_after_load_bytes: int,
    mem_fraction_static: float,
    par: Parallelism = Parallelism(),
) -> SglangKvPool:
    """SGLang's KV pool from the free memory before and after the weights load."""
    rest = int(free_after_load_bytes - free_before_load_bytes * (1 - mem_fraction_static))
    cell = sglang_cell_bytes(arch, kv_bits, par)
    return SglangKvPool(rest, cell, max(0, rest) // cell if cell else 0)


def sglang_default_mem_fraction_static(gpu_memory_bytes: int, tp: int = 1, pp: int = 1, dp_attention: int = 1) -> float:
    """The ``--mem-fraction-static`` SGLang picks when it is not given (see the module notes).

    ``tp``: SGLang's ``--tp-size`` (a stage's GPUs); ``dp_attention``: its ``--dp-size`` under ``--enable-dp-attention``
    (1: DP attention off).
    """
    gpu_mib = gpu_memory_bytes / MIB
    _, chunk, small_tp_bs, large_tp_bs = next(tier for tier in SGLANG_MEMORY_TIERS if gpu_mib < tier[0])
    max_bs = small_tp_bs if tp < 4 else large_tp_bs
    reserved_mib = 512 + max(chunk, 2048) * 1.5 + max_bs * 2 + tp * pp / 8 * 1024
    if dp_attention > 1:
        reserved_mib += max_bs * dp_attention * 3
        if max_bs > 300:
            reserved_mib += max_bs * dp_attention * 1.5
    if gpu_mib > 60 * 1024:
        reserved_mib = max(reserved_mib, 10 * 1024)
    return round((gpu_mib - reserved_mib) / gpu_mib, 3)


def sglang_mem_fraction(gpu_memory_bytes: int, par: Parallelism, mem_fraction_static: float | None = None) -> float:
    """The ``--mem-fraction-static`` a replica runs with: the one given, else SGLang's default for the GPU's memory.

    The default is taken at SGLang's own ``--tp-size``, a stage's GPUs (``max(tp, ep)``), with its DP-attention
    reserve where the stage runs ``ep / tp`` attention-DP groups.
    """
    if mem_fraction_static is not None:
        return mem_fraction_static
    return sglang_default_mem_fraction_static(gpu_memory_bytes, par.gpus // par.pp, par.pp, par.attention_dp)


class SglangCapacity(NamedTuple):
    """SGLang's KV capacity on one GPU: the fraction used, its pool, and the planner's capacity view of it."""

    mem_fraction_static: float
    pool: SglangKvPool
    capacity: Capacity


def sglang_capacity(
    arch: Architecture,
    kv_bits: int,
    context_tokens: int,
    par: Parallelism,
    gpu_memory_bytes: int,
    weights_per_gpu_bytes: int,
    runtime_bytes: int,
    mem_fraction_static: float | None = None,
) -> SglangCapacity:
    """KV tokens SGLang allocates beside the weights, and the full-context sequences they hold.

    ``runtime_bytes`` (CUDA context, NCCL) is taken before SGLang measures its total free memory; the weights
    load after it. Each token costs every layer's K and V, sliding-window layers included.
    """
    check_sized_use(arch, "sglang")  # SGLang keeps linear-attention states in a mamba pool of its own, not modelled
    fraction = sglang_mem_fraction(gpu_memory_bytes, par, mem_fraction_static)
    free_before = max(0, gpu_memory_bytes - runtime_bytes)
    pool = sglang_kv_pool(arch, kv_bits, free_before, free_before - weights_per_gpu_bytes, fraction, par)
    budget = int(free_before * fraction)
    # each attention-DP rank allocates its own pool of pool.tokens (SGLang pages hold one token)
    concurrency = pool.tokens / max(context_tokens, 1)
    ranks = par.attention_dp
    capacity = Capacity(
        gpu_memory_bytes,
        budget,
        max(0, pool.rest_bytes),
        kv_cache_tokens=pool.tokens * ranks,
        max_concurrency=concurrency * ranks,
        rank_kv_cache_tokens=pool.tokens,
        rank_max_concurrency=concurrency,
        attention_dp=ranks,
    )
    return SglangCapacity(fraction, pool, capacity)


def sglang_inference_capacity(
    arch: Architecture,
    kv_bits: int,
    context_tokens: int,
    par: Parallelism,
    gpu_memory_bytes: int,
    inference: InferenceMemory,
    mem_fraction_static: float | None = None,
) -> SglangCapacity:
    """:func:`sglang_capacity` for a sized replica: its weights, and its CUDA context and NCCL as the runtime.

    LoRA adapter slots (``lora_slots``) count with the weights: ``ModelRunner.initialize`` runs ``init_lora_manager``
    (its ``LoRAMemoryPool``) after ``load_model`` and before ``init_memory_pool`` measures what the fraction leaves
    (https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py; fix161).
    """
    runtime = inference.overhead_parts.get("non_torch", 0) + inference.overhead_parts.get("nccl", 0)
    held = inference.weights.per_gpu_bytes + inference.overhead_parts.get("lora_slots", 0)
    return sglang_capacity(arch, kv_bits, context_tokens, par, gpu_memory_bytes, held, runtime, mem_fraction_static)
