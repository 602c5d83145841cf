"""Roofline performance: prefill (compute-bound), decode (bandwidth-bound), TP communication, training time.

A decode step reads every weight a batch touches and the KV cache of every sequence once; its
compute is the GEMMs (``2 x active params`` FLOPs per token) at the weight format's tensor rate and
the attention (``4 x heads x head width`` FLOPs per cached token and layer; MLA in its absorbed
form attends over the ``kv_lora_rank + rope`` latent) at the bf16 rate. A GEMM's efficiency grows
with the tokens it multiplies: ``peak x t / (t + gemm_half_efficiency_tokens)``, so routed experts,
which see ``batch x top_k / experts touched`` tokens each, run slower per FLOP than dense layers.
The step takes the longer of memory and compute, plus the tensor-parallel all-reduces (two per
layer, ring algorithm, latency + bandwidth) and a fixed per-step engine overhead. MoE layers read
only the experts a batch routes to: with ``b`` tokens and top-``k`` of ``E`` experts,
``E x (1 - (1 - k/E)^b)`` experts are expected to be touched.

Prefill does ``2 x active params`` FLOPs per token plus causal attention (``2 x layers x heads x
head_dim x tokens^2``). Pipelines: a prompt passes the stages one after another (latency = the whole
model on one TP group), but at load the stages work on different micro-batches at once, so the
prefill rate of ``m`` micro-batches is ``pp x m / (m + pp - 1)`` times one stage group's rate (the
``pp - 1`` slots are the bubble), plus the activation hand-off between stages.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from generator.sizing.architecture import EXPERT, Architecture
from generator.sizing.constants import Constants
from generator.sizing.kv_cache import size_kv_cache
from generator.sizing.memo import memoized
from generator.sizing.weights import Parallelism, WeightSizes

if TYPE_CHECKING:
    from generator.catalog.records import GpuSpec

#: PCIe x16 bandwidth per direction, GB/s, by generation (hardware_facts.json, PCIe fact record).
PCIE_X16_GB_PER_S = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


class Accelerator(NamedTuple):
    """What the roofline needs to know of a GPU."""

    memory_bandwidth_gb_per_s: float
    dense_tflops: float
    #: Per-direction bandwidth between the GPUs of a TP group (NVLink, else PCIe), GB/s.
    link_gb_per_s: float
    #: Whether the TP group talks over NVLink / Infinity Fabric (else PCIe).
    fast_link: bool
    #: Dense bf16 rate for attention (FlashAttention / FlashMLA run in bf16); 0: ``dense_tflops``.
    attention_tflops: float = 0.0

    @property
    def attention_rate_tflops(self) -> float:
        """Tensor rate attention runs at."""
        return self.attention_tflops or self.dense_tflops


def accelerator_for(gpu: GpuSpec, compute: str, tp: int) -> Accelerator:
    """Roofline inputs for ``gpu`` computing in ``compute`` precision in a TP group of ``tp``."""
    tflops = gpu.tflops(compute) or gpu.tflops("bf16") or gpu.tflops("fp16") or 0.0
    fast = gpu.interconnect_kind in ("nvlink", "nvlink-bridge", "infinity-fabric", "ethernet") and tp <= gpu.nvlink_domain_gpus
    if fast and gpu.interconnect_gb_per_s_bidir > 0:
        link = gpu.interconnect_gb_per_s_bidir / 2
    else:
        fast = False
        link = pcie_gb_per_s(gpu.pcie_gen, gpu.pcie_lanes)
    attention = gpu.tflops("bf16") or gpu.tflops("fp16") or tflops
    return Accelerator(gpu.memory_bandwidth_gb_per_s, tflops, link, fast, attention)


def pcie_gb_per_s(gen: int, lanes: int) -> float:
    """PCIe bandwidth per direction of a link of ``lanes`` lanes (Gen4 when the generation is unknown)."""
    return PCIE_X16_GB_PER_S.get(gen, PCIE_X16_GB_PER_S[4]) * lanes / 16


class DecodeStep(NamedTuple):
    """One decode step of a replica at a batch size."""

    batch: int
    seconds: float
    memory_seconds: float
    compute_seconds: float
    comm_seconds: float

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second of the whole replica."""
        return self.batch / self.seconds


def expected_experts_touched(experts: int, top_k: int, tokens: int) -> float:
    """Expected distinct experts a batch of ``tokens`` routes to (uniform routing)."""
    if experts <= 0:
        return 0.0
    return experts * (1.0 - (1.0 - top_k / experts) ** tokens)


def _weights_read_per_gpu(arch: Architecture, weights: WeightSizes, par: Parallelism, batch: int) -> float:
    """Weight bytes one GPU streams per decode step (experts only as far as routed)."""
    experts, top_k = arch.routed_experts
    if not experts or weights.expert_bytes == 0:
        return float(weights.per_gpu_bytes)
    touched = expected_experts_touched(experts, top_k, batch) / experts
    expert_per_gpu = weights.expert_bytes / max(par.tp, par.ep) / par.pp
    return weights.per_gpu_bytes - expert_per_gpu * (1.0 - touched)


def allreduce_seconds(message_bytes: float, gpus: int, link_gb_per_s: float, latency_s: float) -> float:
    """Ring all-reduce: ``2 (n-1)/n`` of the message crosses each link, plus a fixed latency."""
    if gpus <= 1:
        return 0.0
    return 2 * (gpus - 1) / gpus * message_bytes / (link_gb_per_s * 1e9) + latency_s


@memoized
def decode_step(
    arch: Architecture,
    weights: WeightSizes,
    kv_bits: int,
    par: Parallelism,
    acc: Accelerator,
    batch: int,
    context_tokens: int,
    consts: Constants,
) -> DecodeStep:
    """Time of one decode step for ``batch`` sequences whose contexts average ``context_tokens``.

    With pipeline parallelism the batch flows through the stages as ``pp`` micro-batches: every
    token passes every stage, so the time per output token is ``pp`` stage times.
    """
    micro = max(1, math.ceil(batch / par.pp))
    kv = size_kv_cache(arch, kv_bits, max(context_tokens, 1), micro, par).per_gpu_bytes
    read = _weights_read_per_gpu(arch, weights, par, micro) + kv
    memory_s = read / (acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency)
    compute_s = gemm_seconds(arch, par, acc, micro, consts) + attention_seconds(arch, par, acc, micro, context_tokens, consts)
    comm_s = 0.0
    if par.tp > 1:
        latency = consts.allreduce_latency_nvlink_s if acc.fast_link else consts.allreduce_latency_pcie_s
        message = micro * arch.hidden_size * 2
        comm_s = 2 * arch.num_layers / par.pp * allreduce_seconds(message, par.tp, acc.link_gb_per_s, latency)
    stages = par.pp
    engine_s = consts.decode_step_overhead_s + consts.decode_overhead_per_sequence_s * batch
    seconds = stages * (max(memory_s, compute_s) + comm_s) + engine_s
    return DecodeStep(batch, seconds, stages * memory_s, stages * compute_s, stages * comm_s)


def gemm_efficiency(tokens: float, consts: Constants) -> float:
    """Fraction of the tensor peak a GEMM over ``tokens`` rows reaches (saturating in the token count)."""
    return consts.prefill_compute_efficiency * tokens / (tokens + consts.gemm_half_efficiency_tokens)


@memoized
def _expert_flop_params(arch: Architecture) -> int:
    """Active routed-expert parameters per token (whole model)."""
    total = 0
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT:
                total += lin.in_features * lin.out_features * layer.experts_per_token
    return total


def gemm_seconds(arch: Architecture, par: Parallelism, acc: Accelerator, tokens: int, consts: Constants) -> float:
    """Matmul time of one forward over ``tokens`` tokens on one GPU of the replica (one stage's share).

    Dense layers multiply all ``tokens`` at once; each routed expert only the tokens routed to it.
    """
    gpus = par.gpus
    peak = acc.dense_tflops * 1e12
    expert = _expert_flop_params(arch)
    dense_s = 2.0 * (arch.flop_params - expert) * tokens / gpus / (peak * gemm_efficiency(tokens, consts))
    if not expert:
        return dense_s
    experts, top_k = arch.routed_experts
    touched = max(1.0, expected_experts_touched(experts, top_k, tokens))
    per_expert_tokens = tokens * top_k / touched
    return dense_s + 2.0 * expert * tokens / gpus / (peak * gemm_efficiency(per_expert_tokens, consts))


@memoized
def attention_flops_per_token(arch: Architecture, context_tokens: int) -> float:
    """Attention FLOPs of one new token over its cached context, all layers (windows capped).

    QK^T and PV each cost ``2 x heads x width`` per cached token: the head dimension for MHA/GQA,
    the compressed latent for MLA (absorbed form, the latent is the K and the V of every head).
    """
    total = 0.0
    for layer in arch.layers:
        width = arch.head_dim if layer.kv_heads else layer.kv_elements_per_token
        seen = min(context_tokens, layer.window_tokens) if layer.window_tokens else context_tokens
        total += 4.0 * arch.num_attention_heads * width * seen
    return total


def attention_seconds(
    arch: Architecture, par: Parallelism, acc: Accelerator, sequences: int, context_tokens: int, consts: Constants
) -> float:
    """Attention time of one decode step for ``sequences`` sequences (heads split by TP, layers by PP)."""
    flops = attention_flops_per_token(arch, max(context_tokens, 1)) * sequences / (par.tp * par.pp)
    return flops / (acc.attention_rate_tflops * 1e12 * consts.prefill_compute_efficiency)


def pipeline_speedup(pp: int, micro_batches: int) -> float:
    """How many stage groups' worth of work a pipeline of ``pp`` stages does on ``micro_batches`` (bubble included)."""
    if pp <= 1:
        return 1.0
    m = max(1, micro_batches)
    return pp * m / (m + pp - 1)


def prefill_flops(arch: Architecture, tokens: int) -> float:
    """FLOPs to prefill one sequence of ``tokens`` (linear layers plus causal attention)."""
    linear = 2.0 * arch.flop_params * tokens
    attention = 2.0 * arch.num_layers * arch.num_attention_heads * arch.head_dim * tokens * tokens
    return linear + attention


@memoized
def prefill_seconds(arch: Architecture, par: Parallelism, acc: Accelerator, tokens: int, consts: Constants) -> float:
    """Time to prefill ``tokens`` prompt tokens on one replica (compute-bound, plus TP all-reduces).

    A prompt passes the pipeline stages one after another, so only tensor parallelism divides it.
    """
    gpus = max(par.tp, par.ep)
    linear = 2.0 * arch.flop_params * tokens / (gpus * acc.dense_tflops * 1e12 * gemm_efficiency(tokens, consts))
    attention = (prefill_flops(arch, tokens) - 2.0 * arch.flop_params * tokens) / (
        par.tp * acc.attention_rate_tflops * 1e12 * consts.prefill_compute_efficiency
    )
    compute = linear + attention
    comm = 0.0
    if par.tp > 1:
        latency = consts.allreduce_latency_nvlink_s if acc.fast_link else consts.allreduce_latency_pcie_s
        comm = 2 * arch.num_layers * allreduce_seconds(tokens * arch.hidden_size * 2, par.tp, acc.link_gb_per_s, latency)
    return compute + comm


class Saturation(NamedTuple):
    """A replica at full load (offline benchmark conditions)."""

    batch: int
    output_tokens_per_s: float
    step: DecodeStep


def saturated_throughput(
    arch: Architecture,
    weights: WeightSizes,
    kv_bits: int,
    par: Parallelism,
    acc: Accelerator,
    kv_capacity_tokens: int,
    input_tokens: int,
    output_tokens: int,
    consts: Constants,
) -> Saturation:
    """Most output tokens/s of one replica: the largest batch the KV cache holds, prefill included.

    Each sequence occupies ``input + output`` tokens of KV at its end; over a cycle of
    ``output`` steps the batch also prefills as many new prompts as it finishes.
    """
    per_seq = input_tokens + output_tokens
    batch = max(1, min(consts.max_batch_size, kv_capacity_tokens // per_seq))
    step = decode_step(arch, weights, kv_bits, par, acc, batch, input_tokens + output_tokens // 2, consts)
    # the batch's prompts flow through the pipeline one after another: pp of them in flight at once
    prefill = prefill_seconds(arch, par, acc, input_tokens, consts) * batch / pipeline_speedup(par.pp, batch)
    cycle = output_tokens * step.seconds + prefill
    return Saturation(batch, batch * output_tokens / cycle, step)


def training_flops_per_token(arch: Architecture, method: str, checkpointing: str) -> float:
    """FLOPs per training token from the active parameters N.

    6 N for full training (2 forward + 4 backward), 4 N for LoRA (no weight gradients of the
    frozen base), plus 2 N of recomputed forward under full activation checkpointing.
    """
    n = arch.flop_params
    base = 6.0 * n if method == "full" else 4.0 * n
    return base + (2.0 * n if checkpointing == "full" else 0.0)


def training_hours(total_flops: float, gpus: int, dense_tflops: float, consts: Constants, mfu: float | None = None) -> float:
    """Wall-clock hours at a model-FLOPs utilization (``mfu``, from ``training_mfu.py``; else ``training_mfu``)."""
    return total_flops / (gpus * dense_tflops * 1e12 * (mfu or consts.training_mfu)) / 3600


def gpus_for_deadline(total_flops: float, hours: float, dense_tflops: float, consts: Constants, mfu: float | None = None) -> int:
    """GPUs needed to finish ``total_flops`` within ``hours``."""
    return max(1, math.ceil(total_flops / (hours * 3600 * dense_tflops * 1e12 * (mfu or consts.training_mfu))))
