"""Engine batch limits a workload raises past what they buy: ``max_num_seqs`` / ``max_num_batched_tokens`` that cost.

vLLM profiles a forward pass of ``max_num_batched_tokens`` tokens and samples ``max_num_seqs`` sequences' logits before
it sizes the KV cache: raised far above what the KV cache holds, they take activation memory from the KV pool, and a
replica holds and sustains less. newuser65 item 10: Llama 3.1 8B on one H100 with both at 65,536 had 27.5 GiB of
activations and a 27.9 GiB KV pool (51.9 GiB at the defaults), a batch of 69, and sustained 5.71 req/s against 6.33
at the defaults: 9 replicas where 8 would do, with no word. The replica is sized again at the engine's defaults, on the
same GPU and layout, and where that sustains more ``engine-limits-cost-capacity`` says so at the field, with the
figures.

newuser65 item 8: a batch service's replica is held at the batch its KV cache holds, so dropping the latency targets
bought nothing, and the plan named no lever. Where a generating service's batch is the KV cache's and its cache is
16-bit on a GPU with FP8, ``kv-cache-fp8`` sizes the replica again with ``kv_cache_precision: fp8`` on the same layout
and says what it holds and sustains (summarize on H100: a batch of 128 to 257, 6.33 to 8.15 req/s, 28 replicas to 22).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from generator.planner.fp8_kv import fp8_kv_offered
from generator.planner.inference import ReplicaShape, batched_tokens, max_running, replica_shapes
from generator.planner.plan import Finding, layout_name
from generator.planner.slo import effective_slo, replicas_needed
from generator.units import GIB
from generator.workload.models import InferenceDeployment, InferenceSpec

if TYPE_CHECKING:
    from generator.planner.option import Option
    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: The least gain in a replica's rate at the defaults that is said (below it the two are the same within rounding).
MIN_GAIN = 1.005


def _kv_pool_gib(shape: ReplicaShape) -> float:
    cap = shape.memory.capacity
    return 0.0 if cap is None else cap.kv_available_bytes / GIB


def _served(
    loaded: LoadedWorkload, chosen: Sequence[tuple[int, Option, Sequence[Option]]]
) -> Iterator[tuple[int, InferenceDeployment, ReplicaShape, InferenceSpec]]:
    """Each generating service of one part on whole GPUs: its index, deployment, replica shape and spec (SLOs filled)."""
    for index, opt, _ in chosen:
        dep = loaded.workload.deployments[index]
        shape = opt.shape
        if not isinstance(dep, InferenceDeployment) or opt.parts or not isinstance(shape, ReplicaShape) or shape.share:
            continue
        spec = effective_slo(dep.inference)[0]
        if not spec.pooling:
            yield index, dep, shape, spec


def _sized_again(
    loaded: LoadedWorkload, consts: Constants, dep: InferenceDeployment, shape: ReplicaShape, spec: InferenceSpec
) -> ReplicaShape | None:
    """``shape``'s layout (GPU, format, TP and PP) sized for ``spec``; None where it is not feasible so."""
    # the layout as planned: an attention-DP layout's EP (above its TP) sized again as such
    ep = shape.par.ep if shape.par.attention_dp > 1 else None if dep.parallelism is None else dep.parallelism.ep
    model, pin = loaded.models[dep.name], (shape.par.tp, shape.par.pp)
    shapes, _ = replica_shapes(model, spec, shape.fmt, shape.hardware, consts, expert_parallel=ep, pin=pin)
    return max(shapes, key=lambda s: s.planned_requests_per_s, default=None)


def _layout(shape: ReplicaShape) -> str:
    """The replica's layout in a finding: ``TP4 PP1``, or an attention-DP one as plans name it (review72 item 6).

    ``TP1 PP1`` for a TP1 EP8 (attention DP 8) replica read as one GPU, and its batch as one GPU's.
    """
    par = shape.par
    return layout_name(par.tp, par.pp, par.ep) if par.attention_dp > 1 else f"TP{par.tp} PP{par.pp}"


def _seqs_above(max_num_seqs: int | None, held: int, ranks: int) -> str:
    """That ``max_num_seqs`` admits more than the replica's KV cache holds, where it does ('' where not).

    vLLM's ``max_num_seqs`` is each attention-DP rank's (an engine core each), so a replica of ``ranks`` admits
    ``max_num_seqs x ranks``; ``held`` is the replica's (review72 item 6: a rank's cap was set against a replica's).
    """
    if max_num_seqs is None or max_num_seqs * ranks <= held:
        return ""
    if ranks == 1:
        return (
            f"; max_num_seqs {max_num_seqs:,} is above the {held:,} average requests the KV cache holds, so the "
            "sequences past them wait"
        )
    return (
        f"; max_num_seqs {max_num_seqs:,} is each attention-DP rank's ({max_num_seqs * ranks:,} over the replica's "
        f"{ranks} ranks), above the {held:,} average requests the KV cache holds ({held // ranks:,} a rank), so the "
        "sequences past them wait"
    )


def _held(shape: ReplicaShape, request: int) -> int:
    """Requests of ``request`` tokens the replica's KV cache holds at once."""
    cap = shape.memory.capacity
    return 0 if cap is None else cap.sequences_held(request)


def engine_setting_findings(
    loaded: LoadedWorkload, consts: Constants, chosen: Sequence[tuple[int, Option, Sequence[Option]]]
) -> list[Finding]:
    """What a service's engine settings cost (:func:`costly_limit_findings`) or would buy (:func:`fp8_kv_findings`)."""
    return costly_limit_findings(loaded, consts, chosen) + fp8_kv_findings(loaded, consts, chosen)


def costly_limit_findings(
    loaded: LoadedWorkload, consts: Constants, chosen: Sequence[tuple[int, Option, Sequence[Option]]]
) -> list[Finding]:
    """Services whose given ``max_num_seqs`` / ``max_num_batched_tokens`` sustain less than the engine's defaults.

    Each generating service of one part on whole GPUs that raises either past vLLM's default: its chosen layout sized
    again without them (the engine's defaults on the GPU); at the first field raised, where the defaults' replica
    sustains more, a warning where that costs replicas, an info where it costs headroom alone.
    """
    out = []
    for index, dep, shape, spec in _served(loaded, chosen):
        if spec.engine != "vllm":
            continue
        gpu, default_spec = shape.hardware.gpu, spec._replace(max_num_seqs=None, max_num_batched_tokens=None)
        default = {
            "max_num_seqs": max_running(default_spec, gpu, consts),
            "max_num_batched_tokens": batched_tokens(default_spec, gpu, consts),
        }
        fields = [f for f, value in default.items() if (getattr(spec, f) or 0) > value]  # raised past the defaults
        if not fields:
            continue
        at_default = _sized_again(loaded, consts, dep, shape, default_spec)
        if at_default is None or at_default.planned_requests_per_s < shape.planned_requests_per_s * MIN_GAIN:
            continue
        request = spec.avg_input_tokens + spec.avg_output_tokens
        held, held_default = _held(shape, request), _held(at_default, request)
        given = " and ".join(f"{f} {getattr(spec, f):,}" for f in fields)  # above the defaults
        defaults = ", ".join(f"{f} {value:,}" for f, value in default.items())
        above = _seqs_above(spec.max_num_seqs, held, shape.par.attention_dp)
        replicas, replicas_default = (
            replicas_needed(spec, s.planned_requests_per_s, slots=s.slot_queue) for s in (shape, at_default)
        )
        fewer = (
            f"{replicas:,} replica(s) for {spec.requests_per_second:g} req/s where {replicas_default:,} would do"
            if replicas_default < replicas
            else f"the same {replicas:,} replica(s) for {spec.requests_per_second:g} req/s, with less headroom"
        )
        out.append(
            Finding(
                "warning" if replicas_default < replicas else "info",  # replicas paid for, or headroom alone
                "engine-limits-cost-capacity",
                f"deployment {dep.name}: {given} cost capacity on {shape.hardware.gpu.id} "
                f"({_layout(shape)}): vLLM's start-up profiling runs a forward pass of "
                "max_num_batched_tokens tokens and samples max_num_seqs sequences' logits before it sizes the KV "
                f"cache, so activations take {shape.memory.per_gpu.activations / GIB:.1f} GiB a GPU and the KV pool "
                f"{_kv_pool_gib(shape):.1f} GiB ({at_default.memory.per_gpu.activations / GIB:.1f} and "
                f"{_kv_pool_gib(at_default):.1f} GiB at the engine's defaults, {defaults}); the KV cache holds "
                f"{held:,} average requests of {request:,} tokens ({held_default:,} at the defaults){above}. A replica "
                f"sustains {shape.planned_requests_per_s:.2f} req/s against {at_default.planned_requests_per_s:.2f} at "
                f"the defaults: {fewer}. A batch past what the KV cache holds buys no throughput: leave "
                f"{' and '.join(fields)} out, or lower {'them' if len(fields) > 1 else 'it'}",
                f"deployments[{index}].inference.{fields[0]}",
            )
        )
    return out


def fp8_kv_findings(
    loaded: LoadedWorkload, consts: Constants, chosen: Sequence[tuple[int, Option, Sequence[Option]]]
) -> list[Finding]:
    """Services whose batch is what a 16-bit KV cache holds, on a GPU with FP8: what ``kv_cache_precision: fp8`` buys.

    An info at ``kv_cache_precision`` where the replica sized again with an FP8 cache (same GPU, format and layout)
    sustains enough more to need fewer replicas; none where the batch stops short of the KV cache (latency targets,
    ``max_num_seqs``), or on Gaudi, whose FP8 cache needs calibration (``gaudi-fp8-calibration``).
    """
    out = []
    for index, dep, shape, spec in _served(loaded, chosen):
        gpu = shape.hardware.gpu
        if not fp8_kv_offered(spec.engine, spec.kv_cache_precision, gpu):
            continue
        request = spec.avg_input_tokens + spec.avg_output_tokens
        held = _held(shape, request)
        if not held or shape.max_point.batch < held:  # the batch stops before the KV cache is full
            continue
        fp8 = _sized_again(loaded, consts, dep, shape, spec._replace(kv_cache_precision="fp8"))
        if fp8 is None or fp8.planned_requests_per_s < shape.planned_requests_per_s * MIN_GAIN:
            continue
        replicas, replicas_fp8 = (replicas_needed(spec, s.planned_requests_per_s, slots=s.slot_queue) for s in (shape, fp8))
        if replicas_fp8 >= replicas:  # headroom alone, at the same cost: not worth a word
            continue
        out.append(
            Finding(
                "info",
                "kv-cache-fp8",
                f"deployment {dep.name}: its batch is what its {spec.kv_cache_precision} KV cache holds, "
                f"{shape.max_point.batch:,} requests of {request:,} tokens a replica on {gpu.id} "
                f"({_layout(shape)}), so no looser latency target raises it; kv_cache_precision: fp8 "
                f"(--kv-cache-dtype) halves a token's KV: the cache holds {_held(fp8, request):,}, the batch runs "
                f"{fp8.max_point.batch:,} and a replica sustains {fp8.planned_requests_per_s:.2f} req/s against "
                f"{shape.planned_requests_per_s:.2f}: {replicas_fp8:,} replica(s) for {spec.requests_per_second:g} req/s "
                f"where it needs {replicas:,}. An FP8 cache rounds the keys and values; check the "
                "model's output quality on your own prompts before you rely on it",
                f"deployments[{index}].inference.kv_cache_precision",
            )
        )
    return out
