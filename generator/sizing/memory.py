"""Per-GPU memory as a breakdown that sums to its total, and inference capacity under a budget."""

from __future__ import annotations

import math

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import EXPERT, MLP, SHARED_EXPERT, Architecture
from generator.sizing.constants import Constants
from generator.sizing.kv_cache import KvCacheSizes, size_kv_cache
from generator.sizing.memo import memoized
from generator.sizing.moe_workspace import gathered_moe_bytes
from generator.sizing.precision import WeightFormat
from generator.sizing.vllm_kv import pool_groups, steady_pages, vllm_kv_cache
from generator.sizing.weights import Parallelism, WeightSizes, size_weights


class MemoryBreakdown(NamedTuple):
    """Bytes on the fullest GPU, by what holds them; ``total`` is their sum."""

    weights: int
    kv_cache: int
    activations: int
    gradients: int
    optimizer: int
    overhead: int

    @property
    def total(self) -> int:
        """Sum of every component."""
        return self.weights + self.kv_cache + self.activations + self.gradients + self.optimizer + self.overhead

    def as_dict(self) -> dict[str, int]:
        """Components and total, in bytes."""
        return {
            "weights": self.weights,
            "kv_cache": self.kv_cache,
            "activations": self.activations,
            "gradients": self.gradients,
            "optimizer": self.optimizer,
            "overhead": self.overhead,
            "total": self.total,
        }


class Capacity(NamedTuple):
    """What a GPU's memory budget leaves for the KV cache (vLLM's accounting).

    ``kv_available_bytes`` is one GPU's pool. Each attention data-parallel rank (``Parallelism.attention_dp``:
    vLLM's ``--data-parallel-size`` beside ``--enable-expert-parallel``) builds its own pool for its own
    sequences; the engine logs one rank's figures (``rank_*``), the replica holds ``attention_dp`` times them.
    """

    gpu_memory_bytes: int
    budget_bytes: int
    kv_available_bytes: int
    #: Tokens and full-context sequences of the whole replica (every attention-DP rank).
    kv_cache_tokens: int
    max_concurrency: float
    #: The same for one attention-DP rank, whose GPUs share one pool of ``kv_available_bytes`` each.
    rank_kv_cache_tokens: int
    rank_max_concurrency: float
    attention_dp: int = 1
    #: Hybrid models only (sliding-window or linear-attention layers; none otherwise): one rank's pool in pages, and each
    #: layer type's groups in it with the tokens of its block, (kind, groups, block tokens), as vLLM's pool counts them.
    rank_pool_blocks: int = 0
    pool_groups: tuple[tuple[str, int, int], ...] = ()

    def sequences_held(self, tokens_per_sequence: int) -> int:
        """Sequences of ``tokens_per_sequence`` tokens the replica's pools hold at once.

        Each attention-DP rank's pool holds its own sequences whole, the replica ``attention_dp`` times one rank's (m74e:
        R1 at TP1 EP8 on B200 held 229 requests of 33,000 tokens from the ranks' tokens pooled, where each rank holds 28:
        224). KV tokens over tokens a sequence; in a hybrid pool, whole pages at the sequence's own length: a sliding layer's
        group holds the blocks of its window only (newuser55 item 1: Gemma 3 27B's pool held 18 requests of 2,300
        tokens, counted as 58 from its tokens of 32,768-token requests), a state group one page, so short sequences
        are bounded by the state pages.
        """
        tokens = max(1, tokens_per_sequence)
        if not self.pool_groups:
            return self.rank_kv_cache_tokens // tokens * self.attention_dp
        pages = sum(groups * steady_pages(kind, tokens, block) for kind, groups, block in self.pool_groups)
        return self.rank_pool_blocks // pages * self.attention_dp


class InferenceMemory(NamedTuple):
    """Weights, KV and runtime of one inference replica, per GPU."""

    weights: WeightSizes
    kv: KvCacheSizes
    per_gpu: MemoryBreakdown
    #: Named parts of ``per_gpu.overhead``.
    overhead_parts: dict[str, int]
    capacity: Capacity | None


@memoized
def ffn_width_per_token(arch: Architecture) -> int:
    """Largest feed-forward intermediate width one token passes through (experts x top-k)."""
    widest = 0
    for layer in arch.layers:
        width = 0
        for lin in layer.linears:
            if lin.name.endswith(("gate_proj", "intermediate.dense")):  # a gated MLP's, an encoder's ungated one
                if lin.group == EXPERT:
                    width += lin.out_features * layer.experts_per_token
                elif lin.group in (MLP, SHARED_EXPERT):
                    width += lin.out_features
        widest = max(widest, width)
    return widest


def inference_activation_bytes(
    arch: Architecture,
    par: Parallelism,
    chunk_tokens: int,
    act_bits: int,
    consts: Constants,
    *,
    logits_every_token: bool = False,
) -> int:
    """Peak activation memory of one forward pass over ``chunk_tokens`` tokens, per GPU.

    Intermediate tensors of the widest layer plus the fp32 logits of the sampled rows (none for an encoder): vLLM
    samples at most ``max_num_seqs`` rows a step; ``logits_every_token``: llama.cpp reserves its prompt graph with an
    output for every token of the micro-batch (llama-context.cpp, "reserve pp graph first":
    ``graph_reserve(n_tokens, n_seqs, n_tokens, ...)``, n_outputs = n_ubatch).
    """
    per_token = consts.activation_mlp_copies * math.ceil(ffn_width_per_token(arch) / par.tp)
    per_token += consts.activation_hidden_copies * arch.hidden_size
    rows = 0 if arch.encoder_only else chunk_tokens if logits_every_token else min(consts.max_num_seqs, chunk_tokens)
    logits = rows * math.ceil(arch.vocab_size / par.tp) * 4
    return chunk_tokens * per_token * act_bits // 8 + logits


def rope_cache_bytes(arch: Architecture, dtype_bits: int) -> int:
    """The rotary-embedding cos/sin cache the runtime precomputes for every position."""
    return arch.max_position_embeddings * arch.rotary_dim * dtype_bits // 8


def size_inference(
    arch: Architecture,
    fmt: WeightFormat,
    kv_bits: int,
    context_tokens: int,
    sequences: int,
    par: Parallelism,
    consts: Constants,
    gpu_memory_bytes: int | None = None,
    *,
    nvlink: bool,
    pooling: bool = False,
) -> InferenceMemory:
    """Per-GPU memory of one replica serving ``sequences`` x ``context_tokens``.

    ``pooling``: an embedding or scoring service, loaded without its LM head (:func:`size_weights`).

    ``nvlink``: the replica's TP group has NVLink peers, whose runtime takes more memory
    (:func:`~generator.sizing.distributed_runtime.nvlink_replica`); required, so no caller gets PCIe's by omission.

    With ``gpu_memory_bytes`` it also computes the KV capacity the way vLLM does:
    usable = memory x utilization - weights - activation peak - non-torch - CUDA graphs, the reservation
    from :mod:`generator.sizing.vllm_reservation` (profiling forward and sampler, graph pool by captured sizes).
    """
    from generator.sizing.vllm_reservation import vllm_reservation  # imports this module's helpers

    weights = size_weights(arch, fmt, par, lm_head=not pooling)
    kv = size_kv_cache(arch, kv_bits, context_tokens, sequences, par)
    act_bits = 16
    chunk = min(consts.prefill_chunk_tokens, max(context_tokens, 1) * max(sequences, 1))
    # an engine whose MoE gathers every attention-DP rank's tokens holds them in its profiling pass (TensorRT-LLM)
    moe = gathered_moe_bytes(arch, par, chunk, fmt) if consts.moe_gathered_workspace else 0
    reserved = vllm_reservation(arch, par, consts, chunk, act_bits, nvlink=nvlink, gathered_moe_bytes=moe)
    activations = reserved.activation_peak_bytes
    parts = {
        "non_torch": consts.non_torch_bytes,
        "nccl": reserved.non_torch_bytes - consts.non_torch_bytes,
        "cuda_graphs": reserved.cuda_graph_bytes,
        "rope_cache": rope_cache_bytes(arch, act_bits),
    }
    per_gpu = MemoryBreakdown(weights.per_gpu_bytes, kv.per_gpu_bytes, activations, 0, 0, sum(parts.values()))
    capacity = None
    if gpu_memory_bytes is not None:
        capacity = kv_capacity(arch, kv_bits, context_tokens, par, consts, gpu_memory_bytes, per_gpu)
    return InferenceMemory(weights, kv, per_gpu, parts, capacity)


@memoized
def _hybrid_pool(arch: Architecture) -> bool:
    """Whether any layer keeps a sliding window or a linear-attention state: vLLM then pools its KV cache in groups.

    Found once per architecture: every layout sized asked it again, walking every layer (0.4 s of a profiled render
    of 200 workloads).
    """
    return any(layer.window_tokens is not None or layer.state is not None for layer in arch.layers)


def full_context_layers(arch: Architecture) -> Architecture:
    """``arch`` with each sliding-window layer's KV kept for the whole context, as a pool without windows sizes it."""
    if not any(layer.window_tokens is not None for layer in arch.layers):
        return arch
    return arch._replace(layers=tuple(layer._replace(window_tokens=None) for layer in arch.layers))


def kv_capacity(
    arch: Architecture,
    kv_bits: int,
    context_tokens: int,
    par: Parallelism,
    consts: Constants,
    gpu_memory_bytes: int,
    per_gpu: MemoryBreakdown,
) -> Capacity:
    """KV tokens and full-context sequences that fit beside weights, activations and overheads.

    Capacity in tokens is counted in full-context sequences, so sliding-window layers (which keep
    only their window of each sequence) are not charged for tokens they do not hold. The pool holds
    whole blocks of ``kv_block_tokens``, and a sequence takes ``ceil(context / block)`` of them: the
    concurrency is whole blocks over blocks per sequence, as vLLM's "Maximum concurrency" is
    (``get_max_concurrency_for_kv_cache_config``), not the unfloored bytes over bytes per sequence.
    ``kv_budget_of_free_memory``: the pool is ``gpu_memory_utilization`` of the memory left free beside what is held
    (TensorRT-LLM's ``free_gpu_memory_fraction``), not what is left of that share of the whole GPU (vLLM's).
    ``kv_window_layers_full_context``: a sliding-window layer holds the whole context in the pool (TensorRT-LLM without
    ``max_attention_window``); its attention still reads only its window.
    """
    if consts.kv_window_layers_full_context:
        arch = full_context_layers(arch)
    held = per_gpu.weights + per_gpu.activations + per_gpu.overhead
    utilization = consts.gpu_memory_utilization
    if consts.kv_budget_of_free_memory:
        # TensorRT-LLM: the fraction of what its profiling pass left free, (total - held) x fraction (constants.py)
        budget = int(gpu_memory_bytes * utilization + held * (1 - utilization))
    else:
        budget = int(gpu_memory_bytes * utilization)
    available = max(0, budget - held)
    context = max(context_tokens, 1)
    ranks = par.attention_dp
    if arch.encoder_only:
        # no KV cache (vLLM's EncoderOnlyAttentionSpec needs 0 bytes, no pool is allocated): with weights and a pass's
        # activations in the budget, the requests in flight are bounded by the scheduler's max_num_seqs alone
        seqs = consts.max_num_seqs if available else 0
        tokens = seqs * context
        return Capacity(gpu_memory_bytes, budget, 0, tokens * ranks, float(seqs * ranks), tokens, float(seqs), ranks)
    per_sequence = size_kv_cache(arch, kv_bits, context, 1, par).per_gpu_bytes
    block = consts.kv_block_tokens
    blocks = int(available / per_sequence * context) // block if per_sequence else 0
    rank_concurrency = blocks / -(-context // block)
    pool_blocks = 0
    groups: tuple[tuple[str, int, int], ...] = ()
    if _hybrid_pool(arch):
        # a hybrid model's pool is vLLM's groups of equal size, padding layers included, and a sliding layer keeps the
        # blocks its window spans (newuser21 item 3: Gemma 3 27B held 102.8-103.5 requests of 8,192 tokens, not 109.8);
        # a linear-attention layer's state takes one raised page per sequence (Qwen3-Next)
        pool = vllm_kv_cache(arch, kv_bits, available, context, par, block)
        rank_concurrency = pool.steady_concurrency
        blocks = int(rank_concurrency * context) // block
        pool_blocks, groups = pool.num_blocks, pool_groups(pool)
    return Capacity(
        gpu_memory_bytes,
        budget,
        available,
        kv_cache_tokens=blocks * block * ranks,
        max_concurrency=rank_concurrency * ranks,
        rank_kv_cache_tokens=blocks * block,
        rank_max_concurrency=rank_concurrency,
        attention_dp=ranks,
        rank_pool_blocks=pool_blocks,
        pool_groups=groups,
    )
