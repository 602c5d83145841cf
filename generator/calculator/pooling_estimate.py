"""``estimate --task embed`` / ``score``: one pooling replica (an embedding or reranking server) on one GPU.

newuser65 item 11: the quick calculator refused encoder-only models ("plan it as a task: embed deployment"), so the
throughput of an embedding backfill needed a whole workload. The replica is sized by the planner's own pooling sizing
(:func:`generator.planner.inference.pooling_replica`, :mod:`generator.planner.pooling`): vLLM's pooling runner, one
forward pass over each request's input and no decode, at ``--input-tokens`` a request, with no latency target (the
saturated rate, as a ``service_class: batch`` service), and the latency of one request alone beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.calculator.model_source import ResolvedModel, serving_format
from generator.errors import InputError
from generator.sizing.constants import Constants
from generator.sizing.precision import auto_kv_cache_precision
from generator.workload.models import InferenceSpec

if TYPE_CHECKING:
    from generator.catalog.records import GpuSpec
    from generator.sizing.gpu_share import GpuShare


def pooling_estimate(
    model: ResolvedModel,
    gpu: GpuSpec,
    consts: Constants,
    *,
    task: str,
    input_tokens: int,
    context: int,
    degrees: tuple[int, int],
    precision: str | None = None,
    kv_precision: str | None = None,
    max_num_seqs: int | None = None,
    max_batched_tokens: int | None = None,
    share: GpuShare | None = None,
) -> dict[str, Any]:
    """The estimate of one pooling replica: its memory a GPU, its saturated rate and its lone request's latency.

    ``capacity.fits`` is False (with why) where the layout does not load, does not fit the GPU or vLLM refuses to
    start it. ``share``: the replica in one pod's share of the GPU (``--mig`` / ``--share``; the planner's sizing).
    """
    from generator.planner.inference import LayoutBlocked, pooling_replica
    from generator.planner.pooling import pooling_details

    arch = model.architecture
    if arch.max_model_len and context > arch.max_model_len:
        raise InputError(f"--context {context:,} is more than {model.name}'s {arch.max_model_len:,}-token position table")
    if input_tokens > context:
        raise InputError(f"--input-tokens {input_tokens:,} is more than --context {context:,}: raise --context")
    fmt = serving_format(model, precision)
    spec = InferenceSpec(
        max_context_tokens=context,
        avg_input_tokens=input_tokens,
        avg_output_tokens=0,
        requests_per_second=1.0,
        precision=fmt.name,
        kv_cache_precision=kv_precision or auto_kv_cache_precision(fmt.name),
        service_class="batch",  # no latency target: the replica's most (its compute), as an offline backfill runs
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_batched_tokens,
        task=task,  # type: ignore[arg-type]  # one of cli.POOLING_TASKS, checked by the parser
    )
    replica = pooling_replica(model, spec, fmt, gpu, degrees, consts, share)
    result: dict[str, Any] = {
        "model": {"id": model.id, "name": model.name, "model_type": arch.model_type, "layers": arch.num_layers},
        "task": task,
        "precision": {"weights": fmt.name, "kv_cache": "none (encoder)" if arch.encoder_only else spec.kv_cache_precision},
        "parallelism": {"tp": degrees[0], "pp": degrees[1], "gpus_per_replica": degrees[0] * degrees[1]},
        "input_tokens": input_tokens,
        "context_tokens": context,
    }
    if isinstance(replica, LayoutBlocked):  # why the layout does not run
        result["capacity"] = {"gpu": gpu.id, "fits": False, "why": replica.text}
        return result
    mem = replica.memory
    cap = mem.capacity
    details = pooling_details(model, spec, replica.alone, replica.most)
    result["capacity"] = {
        "gpu": gpu.id,
        "fits": True,
        "kv_cache_tokens": 0 if arch.encoder_only or cap is None else cap.kv_cache_tokens,
    }
    result["memory"] = {"per_gpu": mem.per_gpu.as_dict()}
    result["pooling"] = {
        "requests_per_s": round(replica.most.requests_per_s, 3),
        "input_tokens_per_s": details["max_input_tokens_per_s_per_replica"],
        "requests_per_pass": replica.most.batch,
        "latency_alone_p95_s": details["latency_p95_s"],
        "prefill_gflop_per_request": details["prefill_gflop_per_request"],
    }
    return result
