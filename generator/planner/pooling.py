"""Size a pooling replica (``task: embed`` / ``score``): one forward pass over each request's input, no decode.

vLLM's pooling runner (``vllm serve --runner pooling``, ``--convert embed`` / ``classify``; before v0.10
``--task embed`` / ``score``; https://docs.vllm.ai/en/v0.11.2/models/pooling_models/) answers a request with its
pooled hidden state (an embedding) or a classifier's score once its input is prefilled: no token is sampled and no
decode step runs. So, with the prefill model generation uses (:func:`~generator.sizing.performance.prefill_seconds`):

- a request takes its input's prefill compute from the replica (its time in one stage's turn under load), so a replica
  sustains at most one request per that time: sustained compute over the prefill FLOPs of a request;
- a request's latency is its own pass (several, past ``max_num_batched_tokens``) times the TTFT p95 factor generation
  plans with, and its wait for the requests ahead of it (the M/D/1 tail of
  :func:`~generator.sizing.serving_queue.prefill_wait_p95`): a generating prompt's TTFT less its first decode step;
- its KV cache holds only the tokens in flight: a request frees its blocks after its pass, so a replica needs room for
  one ``max_context_tokens`` request (what vLLM checks at start-up) and holds one pass's requests at a time; no batch
  of sequences decoding for many steps sizes it.
  Encoder-only layers keep none (``EncoderOnlyAttentionSpec.max_memory_usage_bytes`` returns 0 in
  ``vllm/v1/kv_cache_interface.py``; :mod:`generator.sizing.encoder` gives their layers no KV elements);
- vLLM's start-up profiling runs the pooler instead of the sampler (``profile_run``: ``_dummy_pooler_run`` where
  ``is_pooling_model``, ``vllm/v1/worker/gpu_model_runner.py``): no rows of logits are reserved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from generator.calculator.model_source import ResolvedModel
from generator.named_tuple import NamedTuple
from generator.planner.plan import Finding
from generator.sizing.constants import Constants
from generator.sizing.memory import InferenceMemory
from generator.sizing.performance import Accelerator, prefill_flops, prefill_seconds
from generator.sizing.serving_queue import prefill_wait_p95  # the queue generation's prompts wait in
from generator.sizing.weights import Parallelism
from generator.workload.models import InferenceDeployment, InferenceSpec, Workload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from generator.planner.inference import OperatingPoint

#: vLLM's pooling flags by task (``--runner pooling`` and the conversion that gives the task's pooler).
VLLM_POOLING_CONVERT = {"embed": "embed", "score": "classify"}

#: What vLLM loads Qwen's original Qwen3-Reranker checkpoints with: they are causal LMs that score by the logits of
#: their "no" and "yes" tokens, which this makes the classifier's (``vllm serve Qwen/Qwen3-Reranker-8B --hf_overrides
#: ...``, https://docs.vllm.ai/en/v0.10.2/examples/offline_inference/qwen3_reranker.html). Without it ``--convert
#: classify`` gives them an untrained head. Checkpoints converted to sequence classification (``-seq-cls``) need none.
QWEN3_RERANKER_HF_OVERRIDES: dict[str, object] = {
    "architectures": ["Qwen3ForSequenceClassification"],
    "classifier_from_token": ["no", "yes"],
    "is_original_qwen3_reranker": True,
}


def vllm_hf_overrides(model_id: str, task: str | None) -> dict[str, object] | None:
    """The ``--hf-overrides`` vLLM needs to serve ``model_id`` for ``task``; None where it needs none.

    ``model_id`` is a Hub id or a path: a folder (with or without its trailing slash), its ``config.json``, or a Hub
    cache snapshot (``models--Qwen--Qwen3-Reranker-8B/snapshots/<sha>``) all name the checkpoint (fuzz24 item H3).
    """
    named = model_id.lower().replace("\\", "/")
    if task == "score" and "seq-cls" not in named and _QWEN3_RERANKER.search(named):
        return QWEN3_RERANKER_HF_OVERRIDES
    return None


#: A path component that names one of Qwen's Qwen3-Reranker checkpoints (a Hub cache folder included).
_QWEN3_RERANKER = re.compile(r"(^|/|--)qwen3-reranker-[^/]*")


def hf_overrides_arg(overrides: dict[str, object]) -> str:
    """``--hf-overrides``' value: the overrides as one line of JSON, keys sorted."""
    return json.dumps(overrides, sort_keys=True, separators=(",", ":"))


#: Share of a replica's time in prefill the search stops below (the queue grows without bound at 1).
_MOST_BUSY = 0.999


class PoolingTimes(NamedTuple):
    """What one request costs a pooling replica: its compute share under load, and its own pass(es) alone."""

    #: The replica's time per request under load (its prefill compute, one stage's turn): 1 / the most req/s.
    busy_s: float
    #: A request's own prefill alone, through every stage, the weights read once a pass.
    lone_s: float
    #: Requests one forward pass packs (max_num_batched_tokens, max_num_seqs and the KV cache allow).
    per_pass: int


def requests_per_pass(input_tokens: int, batched_tokens: int, max_num_seqs: int, kv_cache_tokens: int) -> int:
    """Requests vLLM packs into one forward pass: as many average inputs as its tokens, sequences and KV cache hold."""
    return max(1, min(max_num_seqs, min(batched_tokens, kv_cache_tokens) // max(1, input_tokens)))


def pass_kv_tokens(spec: InferenceSpec, per_pass: int) -> int:
    """KV tokens a pooling replica holds at once: one pass's requests, at least one ``max_context_tokens`` request."""
    return max(spec.max_context_tokens, per_pass * spec.avg_input_tokens)


def pooling_flops_per_request(model: ResolvedModel, spec: InferenceSpec) -> float:
    """FLOPs of one request: the prefill of its input (:func:`~generator.sizing.performance.prefill_flops`) less the LM head.

    ``prefill_flops`` counts every matmul parameter for every token, the LM head (``vocab x hidden``, the tied embedding
    too) included; a pooling model runs no LM head (vLLM's pooling adapter deletes ``lm_head``: ``_create_pooling_model_cls``
    in ``vllm/model_executor/models/adapters.py``), and its pooler is a gather and a normalisation.
    """
    arch = model.architecture
    head = arch.logits_params  # an encoder has no LM head to take out
    return prefill_flops(arch, spec.avg_input_tokens) - 2.0 * head * spec.avg_input_tokens


def pooling_times(
    model: ResolvedModel,
    shape: tuple[Parallelism, InferenceMemory, int, Accelerator],
    spec: InferenceSpec,
    per_pass: int,
    consts: Constants,
) -> PoolingTimes:
    """A request's cost to one replica shape (``consts``: the engine's tokens a pass as ``prefill_chunk_tokens``).

    Under load the engine packs ``per_pass`` requests in a pass: the pass multiplies their tokens at once and reads
    the weights once, each request attending over its own tokens; a request's share of the replica is the pass's time
    over ``per_pass`` (review22 item 1: each request was costed alone, 2x too slow at 16 tokens, and without the
    weight read, 7x too fast at one request a pass).
    """
    par, mem, _, acc = shape
    arch = model.architecture
    tokens = per_pass * spec.avg_input_tokens
    # each pass is one engine iteration, with its scheduling and kernel-launch time beside the forward (as a decode
    # step's): a small encoder's request read 0 ms and 13,000 req/s on one A10G without it
    step = consts.decode_step_overhead_s
    passes = -(-tokens // max(1, consts.prefill_chunk_tokens))
    busy = (
        prefill_seconds(arch, par, acc, tokens, consts, mem.weights, fill=False, sequences=per_pass) + passes * step
    ) / per_pass
    lone_passes = -(-spec.avg_input_tokens // max(1, consts.prefill_chunk_tokens))
    lone = prefill_seconds(arch, par, acc, spec.avg_input_tokens, consts, mem.weights) + lone_passes * step
    return PoolingTimes(busy, lone, per_pass)


def pooling_latency_p95_s(times: PoolingTimes, rate: float, consts: Constants) -> float:
    """p95 latency of a request at ``rate`` req/s on one replica: its own pass(es), then the queue ahead of it.

    As a generating prompt's TTFT (:func:`~generator.planner.inference._points`) less the decode step that emits the
    first token: its prefill alone times ``ttft_p95_factor``, plus the p95 wait for the requests ahead of it at a share
    ``rate x busy`` of the replica in prefill (packed in its pass or in the passes before, each taking its share).
    """
    rho = min(rate * times.busy_s, _MOST_BUSY)
    return times.lone_s * consts.ttft_p95_factor + prefill_wait_p95(rho, times.busy_s)


def pooling_point(times: PoolingTimes, rate: float, consts: Constants) -> tuple[int, float, float, float]:
    """(requests a pass packs, req/s, latency p95 s, share of time busy) of a replica at ``rate``.

    At a share ``rho = rate x busy`` of the replica in prefill, a pass packs about ``1 + rho (per_pass - 1)`` requests
    (one alone when idle, a full pass when saturated).
    """
    rho = min(rate * times.busy_s, _MOST_BUSY)
    packed = 1 + round(rho * (times.per_pass - 1))
    return packed, rate, pooling_latency_p95_s(times, rate, consts), rho


def highest_pooling_rate(times: PoolingTimes, target_ms: float | None, consts: Constants) -> float | None:
    """The most req/s one replica serves with its p95 latency within ``target_ms`` (None: no target), or None.

    The latency rises with the rate, so the highest rate within the target is bisected; without a target it is the
    replica's compute, one request per ``busy_s`` (held just below, where the queue stays finite).
    """
    most = _MOST_BUSY / times.busy_s
    if target_ms is None:
        return most
    target_s = target_ms / 1000
    low = most * 1e-6
    if pooling_latency_p95_s(times, low, consts) > target_s:
        return None
    if pooling_latency_p95_s(times, most, consts) <= target_s:
        return most
    high = most
    for _ in range(50):  # to well under a percent
        middle = (low + high) / 2
        low, high = (middle, high) if pooling_latency_p95_s(times, middle, consts) <= target_s else (low, middle)
    return low


def pooling_miss_text(times: PoolingTimes, target_ms: float, consts: Constants) -> str:
    """Why a layout misses the latency target even alone: what a lone request reaches against the target."""
    alone_ms = pooling_latency_p95_s(times, 0.0, consts) * 1000
    return f"misses the latency SLO even with one request alone (request latency p95 {alone_ms:,.0f} ms against {target_ms:g})"


def pooling_excess(times: PoolingTimes, target_ms: float, consts: Constants) -> float:
    """How far a lone request's p95 latency is past ``target_ms``, as a fraction (steers which layout is named)."""
    return pooling_latency_p95_s(times, 0.0, consts) * 1000 / target_ms - 1.0 if target_ms else 0.0


def pooling_details(
    model: ResolvedModel, spec: InferenceSpec, planned: OperatingPoint, most: OperatingPoint
) -> dict[str, object]:
    """What a pooling deployment's plan says beside a generating one's: its task, latency, and a request's compute."""
    return {
        "task": spec.task,
        "latency_p95_s": round(planned.ttft_s, 4),
        "prefill_gflop_per_request": round(pooling_flops_per_request(model, spec) / 1e9, 1),
        "max_input_tokens_per_s_per_replica": round(most.requests_per_s * spec.avg_input_tokens, 1),
        "slo_latency_p95_ms": spec.slo.ttft_p95_ms,
    }


#: Why a pooling replica reserves no sampler rows, by engine: vLLM's start-up profiling runs the pooler (module
#: docstring); SGLang sizes its pool from ``mem_fraction_static`` with no profiling run (newuser62 item 9: the SGLang
#: plan said "vLLM profiles the pooler").
_NO_SAMPLER = {"vllm": "no sampler rows: vLLM profiles the pooler", "sglang": "no sampler rows: nothing is sampled"}


def pooling_kv_text(spec: InferenceSpec, per_pass: int) -> str:
    """What a pooling replica's KV cache must hold, as the memory reason says it: one request, then one pass's."""
    return (
        f"one {spec.max_context_tokens:,}-token request ({_NO_SAMPLER[spec.engine]}); its KV pool holds "
        f"the {pass_kv_tokens(spec, per_pass):,} tokens of one pass of {per_pass} {spec.avg_input_tokens:,}-token "
        "request(s) at a time, each freeing its blocks after its pass"
    )


def encoder_pass_text(spec: InferenceSpec, per_pass: int, max_model_len: int) -> tuple[str, str]:
    """An encoder's memory reason: what its activations are sized for, and why no KV cache (no pass of tokens held)."""
    return (
        f"a forward pass of one whole {spec.max_context_tokens:,}-token request (vLLM runs an encoder without chunked "
        f"prefill, max_num_batched_tokens at least max_model_len) or {per_pass} {spec.avg_input_tokens:,}-token ones; "
        "no sampler rows",
        "a bidirectional encoder keeps no KV cache (vLLM's EncoderOnlyAttentionSpec), so the memory left bounds no "
        f"request count; a request is at most {max_model_len:,} tokens (its position table)",
    )


def pooling_pass_text(point: OperatingPoint) -> str:
    """A pooling replica's most load as the reasons say it: the requests one forward pass packs."""
    return f"forward passes of up to {point.batch} request(s), busy {point.prefill_busy:.0%} of the time"


def pooling_load_text(point: OperatingPoint) -> str:
    """A pooling replica at its planned load: requests a pass, the request latency p95, no decode."""
    return (
        f"at the planned load: about {point.batch} request(s) a pass, request latency p95 {point.ttft_s * 1000:.0f} ms "
        "(one forward pass over the input, no decode)"
    )


def pooling_engine_text(spec: InferenceSpec, ansible: bool, model_id: str) -> str:
    """The engine flags a pooling service runs with; ``ansible``: the rendered group vars carry them (review22 item 11)."""
    where = "the Ansible group vars carry them" if ansible else "pass them to the engine (no Ansible output is rendered)"
    if spec.engine == "sglang":
        return f"task {spec.task}: SGLang runs it with --is-embedding; {where}"
    overrides = vllm_hf_overrides(model_id, spec.task)
    scored = (
        f" --hf-overrides '{hf_overrides_arg(overrides)}' (a Qwen3-Reranker scores by its 'no' / 'yes' token logits: "
        "without it vLLM gives it an untrained classification head)"
        if overrides
        else ""
    )
    return (
        f"task {spec.task}: vLLM runs it with --runner pooling --convert {VLLM_POOLING_CONVERT[spec.task]}{scored} "
        f"(before v0.10: --task {spec.task}); {where}"
    )


def encoder_batch_findings(wl: Workload, models: Mapping[str, ResolvedModel]) -> list[Finding]:
    """Encoder services whose ``max_num_batched_tokens`` is below their context: raised to it, as vLLM does.

    newuser65 item 9: bge-m3 with ``max_num_batched_tokens: 1024`` and an 8,192-token context was sized and rendered
    at 8,192 with no word. vLLM runs an encoder-only model without chunked prefill, so a pass holds one whole request
    (:func:`~generator.planner.inference.batched_tokens`).
    """
    out = []
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or dep.name not in models:
            continue
        spec = dep.inference
        given = spec.max_num_batched_tokens
        if spec.engine == "vllm" and models[dep.name].architecture.encoder_only and given and given < spec.max_context_tokens:
            out.append(
                Finding(
                    "info",
                    "batched-tokens-raised",
                    f"deployment {dep.name}: max_num_batched_tokens {given:,} is raised to max_context_tokens "
                    f"({spec.max_context_tokens:,}), as it is sized and rendered: vLLM runs an encoder-only model "
                    "without chunked prefill, so a forward pass holds one whole request; a lower max_context_tokens "
                    "lowers it",
                    f"deployments[{i}].inference.max_num_batched_tokens",
                )
            )
    return out
