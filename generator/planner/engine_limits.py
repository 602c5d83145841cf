"""Engine batch limits a workload raises past what they buy: ``max_num_seqs`` / ``max_num_batched_tokens`` that cost.

vLLM profiles a forward pass of ``max_num_batched_tokens`` tokens and samples ``max_num_seqs`` sequences' logits before
it sizes the KV cache: raised far above what the KV cache holds, they take activation memory from the KV pool, and a
replica holds and sustains less. newuser65 item 10: Llama 3.1 8B on one H100 with both at 65,536 had 27.5 GiB of
activations and a 27.9 GiB KV pool (51.9 GiB at the defaults), a batch of 69, and sustained 5.71 req/s against 6.33
at the defaults: 9 replicas where 8 would do, with no word. The replica is sized again at the engine's defaults, on the
same GPU and layout, and where that sustains more ``engine-limits-cost-capacity`` says so at the field, with the
figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator.planner.inference import ReplicaShape, batched_tokens, max_running, replica_shapes
from generator.planner.plan import Finding
from generator.planner.slo import effective_slo, replicas_needed
from generator.units import GIB
from generator.workload.models import InferenceDeployment

if TYPE_CHECKING:
    from generator.planner.option import Option
    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: The least gain in a replica's rate at the defaults that is said (below it the two are the same within rounding).
MIN_GAIN = 1.005


def _kv_pool_gib(shape: ReplicaShape) -> float:
    cap = shape.memory.capacity
    return 0.0 if cap is None else cap.kv_available_bytes / GIB


def costly_limit_findings(
    loaded: LoadedWorkload, consts: Constants, chosen: Sequence[tuple[int, Option, Sequence[Option]]]
) -> list[Finding]:
    """Services whose given ``max_num_seqs`` / ``max_num_batched_tokens`` sustain less than the engine's defaults.

    Each generating service of one part on whole GPUs that gives either: its chosen layout sized again without them
    (the engine's defaults on the GPU); at the first field raised past its default, where the defaults' replica
    sustains more, a warning where that costs replicas, an info where it costs headroom alone.
    """
    out = []
    wl = loaded.workload
    for index, opt, _ in chosen:
        dep = wl.deployments[index]
        shape = opt.shape
        if not isinstance(dep, InferenceDeployment) or opt.parts or not isinstance(shape, ReplicaShape) or shape.share:
            continue
        spec = effective_slo(dep.inference)[0]
        if spec.pooling or spec.engine != "vllm":
            continue
        gpu, default_spec = shape.hardware.gpu, spec._replace(max_num_seqs=None, max_num_batched_tokens=None)
        default = {
            "max_num_seqs": max_running(default_spec, gpu, consts),
            "max_num_batched_tokens": batched_tokens(default_spec, gpu, consts),
        }
        fields = [f for f, value in default.items() if (getattr(spec, f) or 0) > value]  # raised past the defaults
        if not fields:
            continue
        ep = None if dep.parallelism is None or dep.parallelism.ep is None else dep.parallelism.ep > 1
        model, pin = loaded.models[dep.name], (shape.par.tp, shape.par.pp)
        shapes, _ = replica_shapes(model, default_spec, shape.fmt, shape.hardware, consts, expert_parallel=ep, pin=pin)
        at_default = max(shapes, key=lambda s: s.planned_requests_per_s, default=None)
        if at_default is None or at_default.planned_requests_per_s < shape.planned_requests_per_s * MIN_GAIN:
            continue
        request = spec.avg_input_tokens + spec.avg_output_tokens
        cap, cap_default = shape.memory.capacity, at_default.memory.capacity
        held = cap.sequences_held(request) if cap is not None else 0
        held_default = cap_default.sequences_held(request) if cap_default is not None else 0
        given = " and ".join(f"{f} {getattr(spec, f):,}" for f in fields)  # above the defaults
        defaults = ", ".join(f"{f} {value:,}" for f, value in default.items())
        above = (
            f"; max_num_seqs {spec.max_num_seqs:,} is above the {held:,} average requests the KV cache holds, so the "
            "sequences past them wait"
            if spec.max_num_seqs is not None and spec.max_num_seqs > held
            else ""
        )
        replicas, replicas_default = (replicas_needed(spec, s.planned_requests_per_s) for s in (shape, at_default))
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
                f"(TP{shape.par.tp} PP{shape.par.pp}): vLLM's start-up profiling runs a forward pass of "
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
