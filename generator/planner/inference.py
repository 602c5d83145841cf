"""Size an inference deployment on one kind of hardware: TP/PP, batch under the SLOs, replicas.

A replica must hold its weights, its activation peak and runtime overheads, and the KV cache of
at least one ``max_context_tokens`` sequence (the runtime's own accounting). Its sustainable
request rate follows from Little's law: a replica with ``b`` sequences in flight, each spending
``TTFT + output_tokens x TPOT`` in the system, serves ``b / W`` requests per second; prefills
interleaved with decode (chunked prefill) stretch each decode step by the compute share they take.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

from generator import catalog
from generator.calculator.model_source import ResolvedModel
from generator.catalog.host_cpu import platform_host_time_scale
from generator.catalog.records import GpuSpec
from generator.named_tuple import NamedTuple
from generator.planner.blocked import NO_LAYOUT, PINNED_DEGREE, START_REFUSED, UNSERVED_FORMAT
from generator.planner.early import PIPELINE_STAGES
from generator.planner.fp8_kv import fp8_kv_offered
from generator.planner.lora_replica import lora_sizes, with_lora_adapters, with_lora_slots
from generator.planner.lora_slots_fit import lora_slots_fit
from generator.planner.narrower import narrower_missed
from generator.planner.nodes import node_link
from generator.planner.options import Hardware, tensor_parallel_sizes
from generator.planner.pooling import (
    PoolingTimes,
    highest_pooling_rate,
    pass_kv_tokens,
    pooling_excess,
    pooling_miss_text,
    pooling_point,
    pooling_times,
    requests_per_pass,
)
from generator.planner.throughput_gaps import planning_margin
from generator.sizing.alltoall_split import fewest_node_gpus
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import nvlink_replica
from generator.sizing.engine_runtime import batch_limits, default_max_num_batched_tokens
from generator.sizing.gpu_share import GpuShare, shared_gpu
from generator.sizing.kv_cache import layer_elements_per_gpu
from generator.sizing.loadability import float16_problem, format_problems, loadability_problems
from generator.sizing.loaded_weights import loaded_format
from generator.sizing.memo import memoized
from generator.sizing.memory import InferenceMemory, size_inference
from generator.sizing.moe_layer_step import engine_moe_layer_step_s
from generator.sizing.performance import (
    Accelerator,
    ExpertNetwork,
    accelerator_for,
    decode_model,
    prefill_seconds,
    prompt_taken_seconds,
    step_budget_batch,
)
from generator.sizing.precision import WeightFormat, kv_cache_bits
from generator.sizing.prompt_attention_kernel import prompt_query_rows
from generator.sizing.serving_queue import (
    LADDER_STEPS,
    SlotQueue,
    TtftTail,
    least_spread_mix,
    mix_moments,
    prefill_wait_p95,
    steady_state,
    ttft_p95_over_mix,
    ttft_tail,
)
from generator.sizing.sglang_kv import sglang_inference_capacity
from generator.sizing.vllm_kv import start_shortfall_bytes
from generator.sizing.weights import Parallelism, engine_stages
from generator.units import GIB, seconds_text
from generator.workload.models import InferenceSpec


class OperatingPoint(NamedTuple):
    """A replica serving ``requests_per_s`` with ``batch`` sequences in flight."""

    batch: int
    requests_per_s: float
    ttft_s: float
    tpot_s: float
    #: Share of the time the replica spends in prefill (the prompt queue's utilisation).
    prefill_busy: float = 0.0
    #: Below one sequence in flight (the TTFT target leaves prompts almost no wait): a lone prompt's TTFT p95, and
    #: the rate a replica would take at a TTFT target half again as loose (review 12 item 2); None otherwise.
    idle_bound: IdleBound | None = None
    #: Where the SLOs stop the batch below what memory and the engine allow: the target the next batch misses, and by
    #: how much (newuser24 item 9); None otherwise.
    binds: str | None = None
    #: A batch job's: one request's time alone on the replica (its TTFT p95 unqueued and its output at batch 1's TPOT),
    #: the least a run takes (review68 item 1); 0 for a service.
    lone_request_s: float = 0.0
    #: A request's mean time on the replica at this point: its prompt's own TTFT (the mix's mean) and its output at the
    #: TPOT, the ``W`` of Little's law (``batch / requests_per_s`` at the batch's own rate); 0 for a pooling point.
    request_s: float = 0.0
    #: Where memory or the engine stops the batch at a size the SLOs meet: the target the next batch would miss, and by
    #: how much (newuser73 item 3: a max_num_seqs set at the batch the SLOs allow was told to be raised), worked out
    #: when first read (:class:`CappedBinds`, :attr:`capped_binds_text`); None where no target is set. One whose text
    #: is None (the next batch meets the SLOs) equals None: the point is the same whether or not it was worked out.
    capped_binds: CappedBinds | None = None
    #: The TTFT's tail whose p95 is ``ttft_s`` (:class:`~generator.sizing.serving_queue.TtftTail`); None for pooling.
    ttft_tail: TtftTail | None = None
    #: A service's most-load point at one sequence in flight or more: ``rungs(k)``, the points at ``k / 20`` of its rate
    #: of the largest batch meeting the SLOs there and of each such batch of the rungs above (fix90, review74 item 5:
    #: the places and the TTFT at the rate of the count tested, worked out only where the wait needs them).
    rungs: Callable[[int], tuple[OperatingPoint, ...]] | None = None

    @property
    def capped_binds_text(self) -> str | None:
        """:attr:`capped_binds` as text: what the next batch misses; None where it meets the SLOs or none is set."""
        return None if self.capped_binds is None else self.capped_binds.text()


class CappedBinds:
    """What the batch past a capped most-load point would miss (:func:`_binding_text`), worked out when first read.

    Every layout whose largest batch meets the SLOs carries one, and a plan reads it of the layouts it chooses alone
    (newuser73 item 3's advice): the next batch's point is formed then, from the sizing (:func:`_points` formed
    again, as :class:`_Rungs` does: the same inputs, the same figures). It is a value, its text, put off: it compares
    and hashes as its text, so a point carrying it equals one carrying the text it stands for, the computed
    CappedBinds or the bare value (None where the next batch meets the SLOs: ``OperatingPoint(capped_binds=None)``
    says the same, and the batch search's bisection, which forms no CappedBinds, finds an equal point). Two formed from
    one sizing at one batch are equal without their texts worked out (the same inputs, the same text; review77 item 7).
    """

    __slots__ = ("batch", "done", "sized", "written")

    def __init__(
        self,
        sized: tuple[ResolvedModel, tuple[Parallelism, InferenceMemory, int, Accelerator], InferenceSpec, Constants],
        batch: int,
    ) -> None:
        self.sized, self.batch = sized, batch
        self.done = False
        self.written: str | None = None

    def text(self) -> str | None:
        """The next batch's miss, named; None where it meets the SLOs."""
        if not self.done:
            self.written, self.done = _binding_text(_points(*self.sized)(self.batch), self.sized[2]), True
        return self.written

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, CappedBinds):
            if self.batch == other.batch and self.sized == other.sized:  # one sizing's: the same text, unworked
                return True
            return self.text() == other.text()
        if other is None or isinstance(other, str):  # the value it stands for
            return self.text() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text())

    def __repr__(self) -> str:
        return repr(self.text())


class IdleBound(NamedTuple):
    """Why a replica is loaded below one sequence in flight, and what a looser TTFT target would give."""

    lone_ttft_p95_s: float
    looser_ttft_p95_ms: float
    looser_requests_per_s: float
    #: The places a replica's batch gives at the planned rate: the largest batch meeting the SLOs there (review74 item 3).
    places: int = 1
    #: A request's mean time in one of them at that rate (:attr:`OperatingPoint.request_s` at ``places``), and the TTFT
    #: p95 there: below one sequence in flight, batch over rate (Little's law) is not a request's time.
    request_s: float = 0.0
    ttft_s: float = 0.0
    #: The same at lower loads, (rate, places, request_s, ttft_s, TTFT tail) at 1/20 to 19/20 of the replica's most
    #: rate: a fleet of more replicas runs each at less, with more places and more of the TTFT target left
    #: (:class:`SlotQueue` by_rate).
    ladder: tuple[tuple[float, int, float, float, TtftTail | None], ...] = ()
    #: The same at the looser target's rate (``looser_requests_per_s``): what planning at that target would wait.
    looser_places: int = 1
    looser_request_s: float = 0.0
    looser_ttft_s: float = 0.0
    #: Its ladder where the looser target still holds a replica below one in flight (else its most load's places).
    looser_ladder: tuple[tuple[float, int, float, float, TtftTail | None], ...] = ()
    #: The TTFT tails at ``places`` and at ``looser_places`` (their p95s ``ttft_s`` and ``looser_ttft_s``).
    tail: TtftTail | None = None
    looser_tail: TtftTail | None = None


class ReplicaShape(NamedTuple):
    """One feasible replica layout and its capacity (a named tuple: planning forms one per layout and platform)."""

    hardware: Hardware
    fmt: WeightFormat
    par: Parallelism
    memory: InferenceMemory
    kv_bits: int
    max_point: OperatingPoint
    reason: str
    #: Most sequences a replica runs at once (the engine's --max-num-seqs the sizing counts on).
    max_num_seqs: int
    #: The least a known gap's public runs measured below the model where this replica runs (its lowest ratio of
    #: predicted to measured throughput, :mod:`generator.sizing.throughput_gaps`); 1.0 where no gap is known.
    margin: float = 1.0
    #: The share of one GPU a replica runs in (``kubernetes.gpu_sharing``), which it was sized against; None: whole GPUs.
    share: GpuShare | None = None
    #: A batch job's: the share of its deadline its requests may take, the rest its last request's own time at full
    #: load (:func:`deadline_share`); 1.0 for a service.
    deadline_share: float = 1.0
    #: A service's places in the batch and a request's time in one (:func:`slot_queue`; below one sequence in flight,
    #: the largest batch meeting the SLOs at the planned rate, review74 item 3); None for a batch job or a pooling service.
    slot_queue: SlotQueue | None = None
    #: Host RAM the replica's engine keeps beside the OS: its LoRA adapters' CPU caches, one in each worker process
    #: (:func:`generator.planner.lora_replica.lora_sizes`); 0 without adapters.
    host_ram_bytes: int = 0
    #: Why a replica of fewer GPUs on this hardware is not the layout: the widest layout narrower than this one that
    #: misses the latency targets, as :class:`LayoutBlocked` says it (fix168); None where none narrower misses them.
    narrower_missed: str | None = None

    @property
    def served_requests_per_s(self) -> float:
        """The most a replica serves: its most within the SLOs, over the known gap's margin (newuser30 item 3).

        A purchase ranked on a rate every public run of the setup measured below (MI325X under vLLM: 1.07-1.57x
        over-predicted) could not be the cheapest that meets the SLOs; the gap's lowest ratio is what all of them
        agree on. The model's figures themselves (``max_point``) are not derated.
        """
        return self.max_point.requests_per_s / self.margin

    @property
    def planned_requests_per_s(self) -> float:
        """The rate a replica is planned at: what it serves, of a batch job's its deadline's share (review69 item 1)."""
        return self.served_requests_per_s * self.deadline_share


#: :func:`slot_queue`'s answers by the identities of its spec and point and its margin: (spec, point, queue).
_QUEUES: dict[tuple[int, int, float], tuple[InferenceSpec, OperatingPoint, SlotQueue | None]] = {}


def slot_queue(spec: InferenceSpec, point: OperatingPoint, margin: float = 1.0) -> SlotQueue | None:
    """:func:`_slot_queue` of ``spec`` at ``point`` and ``margin``, one object for every platform the point is sized for.

    A layout's point is sized once for every server that carries its GPU (:func:`replica_shapes`), and each of them
    formed its queue anew: one object keeps the rate searches' caches (:func:`slot_replicas`) hitting by identity
    (speed100).
    """
    key = (id(spec), id(point), margin)
    known = _QUEUES.get(key)
    if known is not None and known[0] is spec and known[1] is point:
        return known[2]
    queue = _slot_queue(spec, point, margin)
    if len(_QUEUES) >= 65_536:
        _QUEUES.clear()
    _QUEUES[key] = (spec, point, queue)
    return queue


def _slot_queue(spec: InferenceSpec, point: OperatingPoint, margin: float = 1.0) -> SlotQueue | None:
    """The places in the batch a replica at ``point`` gives a service, and what a request may wait for one (newuser72 item 6).

    The replica is planned at up to the batch its latency targets or its KV cache allow, and a request arriving while
    every place of every replica is taken waits for one (the router's cap, the engine's max_num_seqs, or the pool).
    Its time in a place is the batch over the rate (Little's law; over the known gap's margin, as the replica is
    counted); the wait may take what the TTFT p95 target leaves over the TTFT p95 at that load. Below one sequence in
    flight (review74 item 3: 18 replicas of one place each ran at 95%, p95 wait 116 s against an 18 ms slack) the places
    are the largest batch meeting the SLOs at the planned rate and a request's time its mean there
    (:class:`IdleBound`), Little's law with the batch not holding. The requests reach the places as ``spec.routing``
    says. None for a batch job (sized by its deadline) or a pooling service (one pass a request, its own queue).
    """
    if spec.job or spec.pooling or point.requests_per_s <= 0:
        return None
    target_ms, bound = spec.slo.ttft_p95_ms, point.idle_bound
    target = None if target_ms is None else target_ms / 1000
    if bound is None:
        most = (point.batch, point.batch / point.requests_per_s, point.ttft_s, point.ttft_tail)
        queue = _queue(spec, margin, target, most, ())
        if target is None or point.rungs is None:
            return queue
        return queue._replace(top_rate=point.requests_per_s / margin, rungs=_RungQueues(point.rungs, spec, margin, target))
    most = (bound.places, bound.request_s, bound.ttft_s, bound.tail)
    return _queue(spec, margin, target, most, bound.ladder)


def looser_slot_queue(spec: InferenceSpec, point: OperatingPoint, margin: float = 1.0) -> SlotQueue | None:
    """:func:`slot_queue` of a replica below one sequence in flight at the looser TTFT target its plan names.

    What the ``ttft-bound-idle`` finding's "about N replicas" counts (the wait for a place with them); None where the
    replica runs one sequence in flight or more, or the service has no slot queue.
    """
    bound = point.idle_bound
    if bound is None or spec.job or spec.pooling:
        return None
    most = (bound.looser_places, bound.looser_request_s, bound.looser_ttft_s, bound.looser_tail)
    return _queue(spec, margin, bound.looser_ttft_p95_ms / 1000, most, bound.looser_ladder)


def _queue(
    spec: InferenceSpec,
    margin: float,
    target_s: float | None,
    most: tuple[int, float, float, TtftTail | None],
    ladder: tuple[tuple[float, int, float, float, TtftTail | None], ...],
) -> SlotQueue:
    """A :class:`SlotQueue` from ``most`` (places, a request's time, the TTFT p95 and its tail at its most) and a ladder.

    The ladder: (rate, places, request time, TTFT p95, its tail) at lower loads. Each time is over ``margin`` as the
    replica is counted (its rates under it), each slack the TTFT target ``target_s`` less that TTFT p95 (None with no
    target, and no ladder either).
    """
    places, request_s, ttft_s, tail = most
    if target_s is None:
        return SlotQueue(places, request_s * margin, None, spec.routing)
    by_rate = tuple((r / margin, b, w * margin, max(0.0, target_s - t), u) for r, b, w, t, u in ladder)
    slack = max(0.0, target_s - ttft_s)
    return SlotQueue(places, request_s * margin, slack, spec.routing, by_rate, tail, ttft_target_s=target_s)


def request_seconds_at(spec: InferenceSpec, point: OperatingPoint) -> float:
    """One request's time at ``point``: its TTFT p95 and its output at the TPOT."""
    return point.ttft_s + spec.avg_output_tokens * point.tpot_s


def deadline_share(spec: InferenceSpec, point: OperatingPoint) -> float:
    """The share of a batch job's deadline its requests may take: the run ends its last request's time after them.

    That time at the replica's full load (its TTFT p95 and its output at the TPOT), an upper bound; replicas sized for
    the requests in the rest finish the run within the deadline (review69 item 1: sized for the whole deadline, 6,448
    replicas ran 24.03 h of 24). 1.0 for a service, a pooling job (one pass a request, in the rate), or where the
    request alone takes the deadline or more, which no replica added shortens (batch-job-deadline-missed says so).
    """
    if not spec.job or spec.pooling or not spec.deadline_hours:
        return 1.0
    tail_s = request_seconds_at(spec, point)
    deadline_s = spec.deadline_hours * 3600
    return 1.0 - tail_s / deadline_s if tail_s < deadline_s else 1.0


#: An operating point of one replica shape: at a batch, at its Little's-law rate, or at a lower rate given.
PointAt = Callable[..., OperatingPoint]


def _points(
    model: ResolvedModel,
    shape: tuple[Parallelism, InferenceMemory, int, Accelerator],
    spec: InferenceSpec,
    consts: Constants,
) -> PointAt:
    """The operating point of one replica shape by batch (the prefill and the decode model formed once).

    ``point(batch)``: the most requests/s it sustains with ``batch`` sequences in flight (Little's law, closed form).

    ``point(batch, rate)`` gives the latencies at a ``rate`` below the batch's own (a replica loaded less than one
    sequence in flight on average, or the planned load of a replica that could take more).

    The TTFT p95 is ``ttft_p95_factor`` times the average prompt's TTFT plus its M/D/1 wait, every prompt taken as
    ``avg_input_tokens`` long: the factor stands for the prompts' spread the workload does not state. Where the
    workload gives ``p95_input_tokens``, the prompts are assumed two lengths, 5% at the p95 and 95% at the length that
    keeps the mean (:func:`least_spread_mix`: the least spread the two figures allow), the spread modelled rather than
    allowed for: the TTFT p95 is the larger of the average prompt's own TTFT plus its M/G/1 wait with the mix's spread
    and the p95 over the mix of each prompt's own TTFT plus that wait (:func:`ttft_p95_over_mix`), no factor (a
    ``p95_input_tokens`` equal to the average: every prompt of one length, an M/D/1 queue whose wait holds the
    residual of the prefill in progress); the prefill share takes the mix's mean.

    With ``cached_prompt_share``, each prompt prefills its new tail alone (:meth:`InferenceSpec.prompt_tail`), its
    tokens attending to the cached prefix too, for its own TTFT and for the time it takes from the replica; the decode
    steps still read each sequence's whole context.
    """
    par, mem, kv_bits, acc = shape
    arch = model.architecture
    decode = decode_model(arch, mem.weights, kv_bits, par, acc, spec.avg_input_tokens + spec.avg_output_tokens // 2, consts)

    # a prompt waits for its passes, each reading the weights; under load its tokens share the steps' weight reads,
    # and the stages work on different prompts, so the time it takes from the replica is its compute in one stage's turn
    # a prompt whose prefix the engine's cache holds is prefilled from the hit on: its new tail alone (cached_prompt_share)
    def taken(prompt: int) -> float:  # the time a prompt keeps the replica's stages busy
        new, cached = spec.prompt_tail(prompt)
        if spec.engine == "sglang":  # its passes are forwards of their own, each reading the weights (prompt_taken_seconds)
            return prompt_taken_seconds(arch, par, acc, new, consts, mem.weights, cached)
        return prefill_seconds(arch, par, acc, new, consts, fill=False, cached_tokens=cached)

    prefill = taken(spec.avg_input_tokens)
    scv = 0.0  # every prompt of the average length: an M/D/1 queue
    mix = None if spec.p95_input_tokens is None else least_spread_mix(spec.avg_input_tokens, spec.p95_input_tokens)
    times = (prefill, prefill)  # the short and the long prompt's time from the replica (the queue's service times)
    if mix is not None:  # the prompts' mean time from the replica and its spread, over the mix (newuser34 item 4)
        times = (taken(mix.short_tokens), taken(mix.long_tokens))
        prefill, scv = mix_moments(mix, *times)
    output_tokens, ttft_p95_factor = spec.avg_output_tokens, consts.ttft_p95_factor
    shared = spec.engine == "vllm"  # vLLM fills a step with the running decodes first, a prompt's chunk with the rest

    alone: dict[tuple[int, int], float] = {}  # a prompt's TTFT by its length and chunk (a chunk of the prompt: one pass)

    def waited(chunk: int, prompt: int = spec.avg_input_tokens) -> float:
        chunk = min(chunk, prompt)
        if (prompt, chunk) not in alone:
            tokens = with_engine_tokens(consts, None, chunk)
            new, cached = spec.prompt_tail(prompt)
            alone[prompt, chunk] = prefill_seconds(arch, par, acc, new, tokens, mem.weights, cached_tokens=cached)
        return alone[prompt, chunk]

    known: dict[tuple[int, float | None], OperatingPoint] = {}  # the points worked out (a pure function of the two)

    def point(batch: int, at_rate: float | None = None) -> OperatingPoint:
        # perf11: a search, its ladder of loads and the text beside it ask one point again (11% of 65,512 calls in
        # the first 20 files of benchmarks/scale.py); OperatingPoint is immutable, so the one worked out is given
        found = known.get((batch, at_rate))
        if found is None:
            found = known[batch, at_rate] = _point(batch, at_rate)
        return found

    def _point(batch: int, at_rate: float | None) -> OperatingPoint:
        step_s = decode.step(batch).seconds
        # each stage's step holds its share of the decodes; a waiting prompt's chunk is what they leave of the budget
        chunk = max(1, consts.prefill_chunk_tokens - math.ceil(batch / par.pp)) if shared else consts.prefill_chunk_tokens
        ttft = waited(chunk) + step_s
        if mix is None:
            state = steady_state(batch, ttft, step_s, output_tokens, prefill, at_rate)
            # prompts queue for the replica's prefill time (first come, first served): the p95 adds that wait
            wait = prefill_wait_p95(state.prefill_busy, prefill)
            ttft_p95, request_s = ttft * ttft_p95_factor + wait, ttft + output_tokens * state.tpot_s
            tail = ttft_tail(ttft * ttft_p95_factor, state.prefill_busy, prefill)
            return OperatingPoint(
                batch, state.requests_per_s, ttft_p95, state.tpot_s, state.prefill_busy, request_s=request_s, ttft_tail=tail
            )
        own = (waited(chunk, mix.short_tokens) + step_s, waited(chunk, mix.long_tokens) + step_s)
        mean_ttft, _ = mix_moments(mix, *own)
        state = steady_state(batch, mean_ttft, step_s, output_tokens, prefill, at_rate)
        # the larger of the average prompt's own TTFT with the queue's wait (the mix's spread in it) and the p95 over
        # the mix (the p95 prompt's own TTFT and the wait it meets); the factor stands for a spread the workload does
        # not state, and this one it states (acc122, newuser83 item 1: p95_input_tokens = avg_input_tokens, every
        # prompt of one length, still took 2 x a lone prompt's TTFT, 1,259 ms for a 630 ms prefill)
        # the stated lengths' wait law: each length's M/D/1 law by its share of the prefill time (acc123, acc126)
        stated = ((1 - mix.long_share, times[0]), (mix.long_share, times[1]))
        ttft_p95 = max(
            ttft + prefill_wait_p95(state.prefill_busy, prefill, scv, prompts_s=stated),
            ttft_p95_over_mix(own, mix.long_share, state.prefill_busy, prefill, scv, times),
        )
        request_s = mean_ttft + output_tokens * state.tpot_s
        shares = ((1 - mix.long_share, own[0]), (mix.long_share, own[1]))
        tail = ttft_tail(ttft, state.prefill_busy, prefill, scv, shares, prompts_s=stated)
        return OperatingPoint(
            batch, state.requests_per_s, ttft_p95, state.tpot_s, state.prefill_busy, request_s=request_s, ttft_tail=tail
        )

    return point


#: Where each engine reports the prefix-cache hit rate cached_prompt_share stands for (newuser90: an SGLang service
#: was pointed at vLLM's counters). SGLang's gauge: ``sglang:cache_hit_rate`` on its /metrics (--enable-metrics).
PREFIX_CACHE_HIT_METRIC = {
    "vllm": "vLLM: vllm:prefix_cache_hits / vllm:prefix_cache_queries",
    "sglang": "SGLang: sglang:cache_hit_rate, with --enable-metrics",
}


def cached_prompt_text(
    model: ResolvedModel,
    shape: tuple[Parallelism, InferenceMemory, int, Accelerator],
    spec: InferenceSpec,
    point: OperatingPoint,
    consts: Constants,
    room: tuple[int, int],
) -> str:
    """What ``cached_prompt_share`` does to a replica (its plan's reasons): the tail prefilled, against the whole prompt.

    The prefill figures are a prompt's time from the replica under load (:func:`prefill_seconds`, ``fill`` False), the
    share of its time the planned load's prompts take, and what the KV cache still holds; and what the share assumes.
    ``room``: the average requests the replica's KV cache holds, and its batch at the most load: the difference is the
    idle sessions' prefixes (each about a request) the pool can keep beside the running ones, not sized for.
    """
    par, _, _, acc = shape
    arch = model.architecture
    new, cached = spec.prompt_tail(spec.avg_input_tokens)
    tail_s = prefill_seconds(arch, par, acc, new, consts, fill=False, cached_tokens=cached)
    whole_s = prefill_seconds(arch, par, acc, spec.avg_input_tokens, consts, fill=False)
    request = spec.avg_input_tokens + spec.avg_output_tokens
    held, most = room
    return (
        f"the engine's prefix cache holds {spec.cached_prompt_share:.0%} of each prompt (cached_prompt_share "
        f"{spec.cached_prompt_share:g}): an average {spec.avg_input_tokens:,}-token prompt prefills its {new:,} new "
        f"tokens, each attending to the {cached:,} cached before it, {seconds_text(tail_s)} of a replica's time "
        f"({seconds_text(whole_s)} for the whole prompt), and the planned load's prompts take {point.prefill_busy:.0%} of "
        f"it (the TTFT, the prompt queue and the TPOT's stretch count the new tokens alone); the KV cache still holds "
        f"each request's {request:,} tokens; the share is taken as measured ({PREFIX_CACHE_HIT_METRIC[spec.engine]}) "
        "and assumes the pool keeps the idle sessions' prefixes between their turns (blocks "
        f"freed but not yet evicted), room the plan does not size: beside its {most:,} running requests at the most load "
        f"a replica's pool holds about {max(0, held - most):,} more of {request:,} tokens, and where more sessions than "
        "that wait between turns on a replica, the oldest prefixes are evicted and the hit rate falls"
    )


def ttft_basis_text(spec: InferenceSpec, ttft_p95_factor: float) -> str:
    """What prompt lengths a generating service's TTFT p95 is taken over (newuser34 item 4), for its plan's reasons.

    Without ``p95_input_tokens`` the p95 is ``ttft_p95_factor`` times the average prompt's own TTFT, an allowance for
    a spread not stated, and the text says so (newuser83 item 1: it read as if no spread were assumed).
    """
    if spec.p95_input_tokens is None:
        return (
            f"the TTFT p95 is constants.ttft_p95_factor ({ttft_p95_factor:g}) x an average {spec.avg_input_tokens:,}-token "
            "prompt's own TTFT, an allowance for a prompt-length spread the workload does not state, plus the wait for "
            "the prompts queued ahead: give p95_input_tokens for the spread instead (equal to avg_input_tokens where "
            "every prompt has one length: no allowance)"
        )
    mix = least_spread_mix(spec.avg_input_tokens, spec.p95_input_tokens)
    return (
        f"the TTFT p95 is taken over prompts assumed {1 - mix.long_share:.0%} of {mix.short_tokens:,} and "
        f"{mix.long_share:.0%} of {mix.long_tokens:,} tokens (the least spread an average of {spec.avg_input_tokens:,} "
        f"and a p95 of {spec.p95_input_tokens:,} allow): the p95 prompt's own TTFT and an M/G/1 queue wait with that "
        "spread, never below the average prompt's own TTFT and its wait (no ttft_p95_factor: the spread is stated)"
    )


def _pooling_operating_point(times: PoolingTimes, rate: float, consts: Constants) -> OperatingPoint:
    """A pooling replica at ``rate``: its pass's requests, the request latency p95 as TTFT, no decode (TPOT 0)."""
    packed, rate, latency_s, busy = pooling_point(times, rate, consts)
    return OperatingPoint(packed, rate, latency_s, 0.0, busy)


def _best_pooling_point(times: PoolingTimes, spec: InferenceSpec, consts: Constants) -> OperatingPoint | None:
    """The highest-rate point of a pooling replica within its latency target (its batch: the requests a pass packs)."""
    rate = highest_pooling_rate(times, spec.slo.ttft_p95_ms, consts)
    if rate is None:
        return None
    return _pooling_operating_point(times, rate, consts)._replace(batch=times.per_pass)


def _meets_slo(point: OperatingPoint, spec: InferenceSpec) -> bool:
    slo = spec.slo
    if slo.tpot_ms is not None and point.tpot_s * 1000 > slo.tpot_ms:
        return False
    return not (slo.ttft_p95_ms is not None and point.ttft_s * 1000 > slo.ttft_p95_ms)


def best_point(
    model: ResolvedModel,
    shape: tuple[Parallelism, InferenceMemory, int, Accelerator],
    spec: InferenceSpec,
    max_batch: int,
    consts: Constants,
) -> OperatingPoint | None:
    """The highest-rate operating point that meets the SLOs, or None: the largest batch that meets them.

    Latency grows with the batch, so the batches that meet the SLOs are ``1..b``; ``b`` is searched
    by :func:`largest_meeting`. A pipeline's decode step grows a micro-batch every ``pp`` sequences, and its rate
    (with the queue that follows the rate) is a sawtooth between: there the search runs over whole micro-batches
    (review 11 item 5), where the latencies grow with the batch again.
    """
    at = _points(model, shape, spec, consts)
    best = _best_of(at, shape[0].pp, spec, max_batch, (model, shape, spec, consts))
    if best is None or not spec.job:
        if best is None or best.idle_bound is not None or spec.pooling:
            return best
        return best._replace(rungs=_Rungs((model, shape, spec, consts), best, max_batch))
    lone = at(1, at(1).requests_per_s * 1e-6)  # no queue: a request alone
    return best._replace(lone_request_s=request_seconds_at(spec, lone))


def _best_of(
    at: PointAt,
    unit: int,
    spec: InferenceSpec,
    max_batch: int,
    sized: tuple[ResolvedModel, tuple[Parallelism, InferenceMemory, int, Accelerator], InferenceSpec, Constants],
) -> OperatingPoint | None:
    """:func:`best_point` over the points ``at`` gives (``unit``: the pipeline's stages, a micro-batch's step).

    ``sized``: what ``at`` is formed from (:func:`_points`' arguments), for the next batch's miss past a capped batch.
    """
    first = at(1)
    if not _meets_slo(first, spec):
        return _below_one_in_flight(at, first.requests_per_s, spec, max_batch)
    high = max(1, max_batch)

    def batch_of(step: int) -> int:  # without a pipeline the step is the batch; with one, step k > 1 is k - 1 full
        return step if unit == 1 or step == 1 else min(high, (step - 1) * unit)  # micro-batches (at most high)

    last = 1 + math.ceil(high / unit) if unit > 1 else high
    if last == 1:
        return first
    top = at(batch_of(last))
    if _meets_slo(top, spec):
        # the batch past the cap, against the targets: whether a larger max_num_seqs would hold them (newuser73 item 3)
        if spec.slo.tpot_ms is None and spec.slo.ttft_p95_ms is None:
            return top
        return top._replace(capped_binds=CappedBinds(sized, top.batch + 1))
    probed = {1: first}

    def probe(step: int) -> tuple[bool, float]:
        point = probed[step] = at(batch_of(step))
        return _meets_slo(point, spec), _slo_excess(point, spec)

    low = largest_meeting(1, _slo_excess(first, spec), last, _slo_excess(top, spec), probe)
    beyond = top if low + 1 == last else probed.get(low + 1) or at(batch_of(low + 1))
    found = probed[low]  # the search returns a step it probed (or 1)
    return found._replace(binds=_binding_text(beyond, spec, unit if beyond.batch - found.batch > 1 else 1))


class _Rungs:
    """A replica's points at ``k / 20`` of its most rate ``top`` (k 1 to 19), worked out when first asked (fix90).

    At a lower rate the prompts queue less and the steps stretch less, so a larger batch meets the SLOs (review74 item
    5: batch 1 at the most load, batch 3 at a fifth of it) and each batch's TTFT is shorter. ``rungs(k)``: at ``k / 20``
    of the rate, the largest batch meeting the SLOs there (:func:`_places_at`), then each larger-rate rung's (and the
    most load's) batch not already given, at that rate, largest first: a batch that met the SLOs at a higher rate meets
    them here at a TTFT and a request time no longer, so a fleet that fits at one rung fits at the next one down. The
    points' model (:func:`_points`) is formed again when first asked: most replicas' ladders never are, and keeping
    every layout's would keep its caches alive through the whole plan.
    """

    __slots__ = ("at", "hashed", "keyed", "max_batch", "places", "points", "sized", "top")

    def __init__(
        self,
        sized: tuple[ResolvedModel, tuple[Parallelism, InferenceMemory, int, Accelerator], InferenceSpec, Constants],
        top: OperatingPoint,
        max_batch: int,
    ) -> None:
        self.sized, self.top, self.max_batch = sized, top, max_batch
        self.at: PointAt | None = None
        self.places: dict[int, int] = {LADDER_STEPS: top.batch}
        self.points: dict[int, tuple[OperatingPoint, ...]] = {}
        self.hashed: int | None = None
        self.keyed: tuple[object, ...] | None = None

    def _key(self) -> tuple[object, ...]:  # what it is worked out from: the spec as the layout memo keys it (the
        if self.keyed is None:  # rate, floor and routing no rung reads), formed once
            model, shape, spec, consts = self.sized
            # the top without the next batch's miss (CappedBinds), which comparing could work out (review77 item 7):
            # it is formed from the sizing (``sized``, keyed here) at the top's batch, so equal keys give equal ones
            self.keyed = (self.top._replace(capped_binds=None), self.max_batch, model, shape, _layout_spec(spec), consts)
        return self.keyed

    def __eq__(self, other: object) -> bool:  # one layout sized twice (the memo's key whole or with what it drops:
        return self is other or (isinstance(other, _Rungs) and self._key() == other._key())  # test_layout_memo_key)

    def __hash__(self) -> int:
        if self.hashed is None:
            # the sizing's model holds dicts: equal keys, equal tops (their batch and rate; the next batch's miss,
            # CappedBinds, is left unread)
            self.hashed = hash((self.top.batch, self.top.requests_per_s, self.max_batch))
        return self.hashed

    def _at(self) -> PointAt:
        if self.at is None:
            self.at = _points(*self.sized)
        return self.at

    def _places(self, k: int) -> int:
        if k not in self.places:
            rate = self.top.requests_per_s * k / LADDER_STEPS
            self.places[k] = _places_at(self._at(), rate, self.sized[2], self.max_batch).batch
        return self.places[k]

    def __call__(self, k: int) -> tuple[OperatingPoint, ...]:
        if k not in self.points:
            rate = self.top.requests_per_s * k / LADDER_STEPS
            caps = sorted({self._places(j) for j in range(k, LADDER_STEPS + 1)}, reverse=True)
            self.points[k] = tuple(self._at()(batch, rate) for batch in caps)
        return self.points[k]


class _RungQueues:
    """A service's :class:`SlotQueue` at each rung of its point's ladder (:func:`_rungs`), formed when first asked."""

    __slots__ = ("hashed", "margin", "queues", "rungs", "spec", "target")

    def __init__(
        self, rungs: Callable[[int], tuple[OperatingPoint, ...]], spec: InferenceSpec, margin: float, target: float
    ) -> None:
        self.rungs, self.spec, self.margin, self.target = rungs, spec, margin, target
        self.queues: dict[int, tuple[SlotQueue, ...]] = {}
        self.hashed: int | None = None

    def _key(self) -> tuple[object, ...]:
        return (self.rungs, self.spec, self.margin, self.target)

    def __eq__(self, other: object) -> bool:  # alike over the platforms one layout's sizing is shared by: the sizing's
        return isinstance(other, _RungQueues) and self._key() == other._key()  # caches keep hitting (slot_replicas)

    def __hash__(self) -> int:
        if self.hashed is None:  # formed once: the rate searches' caches hash a queue on every lookup
            self.hashed = hash(self._key())
        return self.hashed

    def __call__(self, k: int) -> tuple[SlotQueue, ...]:
        if k not in self.queues:  # the points' queues, each at its own rate (a request's mean time there)
            self.queues[k] = tuple(
                _queue(self.spec, self.margin, self.target, (p.batch, p.request_s, p.ttft_s, p.ttft_tail), ())
                for p in self.rungs(k)
            )
        return self.queues[k]


def _binding_text(beyond: OperatingPoint, spec: InferenceSpec, stages: int = 1) -> str | None:
    """Which latency target stops the batch, said of the next batch (``beyond``), which misses it (None: it meets them).

    ``stages``: a pipeline's, where the next batch tried is a whole micro-batch more (newuser73 item 10: "batch 1 ...
    batch 3 would take" skipped 2 unsaid); 1 where it is the next batch.
    """
    slo = spec.slo
    targets, takes = [], []
    if slo.tpot_ms is not None and beyond.tpot_s * 1000 > slo.tpot_ms:
        targets.append(f"TPOT {slo.tpot_ms:g} ms")
        takes.append(f"{beyond.tpot_s * 1000:.1f} ms")
    if slo.ttft_p95_ms is not None and beyond.ttft_s * 1000 > slo.ttft_p95_ms:
        targets.append(f"TTFT p95 {slo.ttft_p95_ms:g} ms")
        takes.append(f"{beyond.ttft_s * 1000:.0f} ms")
    if not targets:
        return None
    verb = "bind" if len(targets) > 1 else "binds"
    steps = f" (the batch steps by whole micro-batches of the {stages} pipeline stages)" if stages > 1 else ""
    return f"{' and '.join(targets)} {verb}: batch {beyond.batch} would take {' and '.join(takes)}{steps}"


def _below_one_in_flight(at: PointAt, most: float, spec: InferenceSpec, max_batch: int) -> OperatingPoint | None:
    """The highest rate below one sequence in flight that meets the SLOs, or None where none does.

    A prefill-heavy service queues its prompts even at batch 1's rate; loaded less, it meets the targets where its
    own TTFT and TPOT do (review 11 item 1: a 12,000-token service at 0.2 req/s was "missing the SLO at batch 1").
    """
    lone = at(1, most * 1e-6)
    if not _meets_slo(lone, spec):
        return None
    rate = _highest_rate(at, most, spec)
    point = at(1, rate)
    slo = spec.slo
    if slo.ttft_p95_ms is None:
        return point
    looser = spec._replace(slo=slo._replace(ttft_p95_ms=1.5 * slo.ttft_p95_ms))
    placed, looser_rate = _places_at(at, rate, spec, max_batch), _highest_rate(at, most, looser)
    loose = _places_at(at, looser_rate, looser, max_batch)

    def ladder_of(top: float, held: InferenceSpec) -> tuple[tuple[float, int, float, float, TtftTail | None], ...]:
        rungs = (_places_at(at, top * k / LADDER_STEPS, held, max_batch) for k in range(1, LADDER_STEPS))
        return tuple((p.requests_per_s, p.batch, p.request_s, p.ttft_s, p.ttft_tail) for p in rungs)

    # at the looser target a replica that runs one in flight or more has its batch's places: no ladder to work out
    ladder, looser_ladder = ladder_of(rate, spec), (() if looser_rate >= most else ladder_of(looser_rate, looser))
    return point._replace(
        idle_bound=IdleBound(
            lone.ttft_s,
            1.5 * slo.ttft_p95_ms,
            looser_rate,
            placed.batch,
            placed.request_s,
            placed.ttft_s,
            ladder,
            loose.batch,
            loose.request_s,
            loose.ttft_s,
            looser_ladder,
            placed.ttft_tail,
            loose.ttft_tail,
        )
    )


def _places_at(at: PointAt, rate: float, spec: InferenceSpec, max_batch: int) -> OperatingPoint:
    """The largest batch up to ``max_batch`` that meets the SLOs at ``rate``, at that rate (batch 1 meets them there).

    A replica below one sequence in flight (:func:`_below_one_in_flight`) still holds each request in a place of its
    batch, and a router capping it there holds the rest (review74 item 3): its places are what the targets allow at
    the planned rate, found by bisection (the latencies grow with the batch).
    """
    low, high = 1, max(1, max_batch)
    if _meets_slo(top := at(high, rate), spec):
        return top
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _meets_slo(at(middle, rate), spec) else (low, middle)
    return at(low, rate)


def _highest_rate(at: PointAt, most: float, spec: InferenceSpec) -> float:
    """The highest rate up to ``most`` at which batch 1 meets the SLOs (a lone prompt meets them)."""
    if _meets_slo(at(1, most), spec):
        return most
    low, high = most * 1e-6, most
    for _ in range(40):  # the latencies rise with the rate: bisect to well under a percent
        middle = (low + high) / 2
        low, high = (middle, high) if _meets_slo(at(1, middle), spec) else (low, middle)
    return low


def _slo_excess(point: OperatingPoint, spec: InferenceSpec) -> float:
    """How far the point is past its tightest latency target, as a fraction (negative: within); only steers the search."""
    slo = spec.slo
    ratios = [
        point.tpot_s * 1000 / slo.tpot_ms if slo.tpot_ms else 0.0,
        point.ttft_s * 1000 / slo.ttft_p95_ms if slo.ttft_p95_ms else 0.0,
    ]
    return max(ratios) - 1.0


def largest_meeting(
    low: int, low_excess: float, high: int, high_excess: float, probe: Callable[[int], tuple[bool, float]]
) -> int:
    """The largest batch in ``[low, high)`` that meets a monotone predicate, given that ``low`` meets and ``high`` does not.

    ``probe(b)`` says whether ``b`` meets, and by how much it misses (an excess, steering the next guess). Guesses
    interpolate the excess (latency is close to linear in the batch) and check the neighbour on the far side, so
    a near-linear curve is bracketed in two or three probes; every third guess is a plain bisection, so the search
    never takes more than about three times the probes of one.
    """
    step = 0
    while high - low > 1:
        step += 1
        span = high_excess - low_excess
        guess = low + int((high - low) * (-low_excess) / span) if step % 3 and span > 0 else (low + high) // 2
        guess = min(max(guess, low + 1), high - 1)
        meets, excess = probe(guess)
        if meets:
            low, low_excess = guess, excess
            if guess + 1 < high:
                meets, excess = probe(guess + 1)
                if not meets:
                    return guess
                low, low_excess = guess + 1, excess
        else:
            high, high_excess = guess, excess
            if guess - 1 > low:
                meets, excess = probe(guess - 1)
                if meets:
                    return guess - 1
                high, high_excess = guess - 1, excess
    return low


def point_for_rate(
    model: ResolvedModel,
    shape: tuple[Parallelism, InferenceMemory, int, Accelerator],
    spec: InferenceSpec,
    rate: float,
    max_batch: int,
    consts: Constants,
) -> OperatingPoint:
    """The smallest batch at which one replica sustains ``rate`` requests/s, its latencies at that rate.

    A pooling replica (:mod:`generator.planner.pooling`): ``max_batch`` is the requests one pass packs, and the batch
    at ``rate`` the requests its passes pack then.
    """
    if spec.pooling:
        return _pooling_operating_point(pooling_times(model, shape, spec, max_batch, consts), rate, consts)
    at = _points(model, shape, spec, consts)
    low, high = 1, max(1, max_batch)
    while low < high:
        mid = (low + high) // 2
        if at(mid).requests_per_s >= rate:
            high = mid
        else:
            low = mid + 1
    return at(low, rate)  # the queue and the stretch at the planned load, not at the batch's whole rate


def batched_tokens(spec: InferenceSpec, gpu: GpuSpec, consts: Constants, whole: bool = False) -> int:
    """Tokens a forward pass of ``spec``'s engine runs on ``gpu``: the workload's, else the engine's server default.

    ``whole``: the model's requests are not chunked (an encoder: vLLM turns chunked prefill off for encoder-only
    attention and then raises max_num_batched_tokens to max_model_len), so a pass holds at least one whole request.
    """
    engine = default_max_num_batched_tokens(spec.engine, gpu.name, gpu.memory_bytes)
    tokens = spec.max_num_batched_tokens or engine or consts.prefill_chunk_tokens
    return max(tokens, spec.max_context_tokens) if whole else tokens


def step_token_budget(spec: InferenceSpec, gpu: GpuSpec, consts: Constants, whole: bool = False) -> int | None:
    """Tokens one step of ``spec``'s engine runs, decodes and prefill chunks together (``whole``: :func:`batched_tokens`).

    None where the engine does not share a step between them (SGLang prefills in batches of their own).
    """
    return batched_tokens(spec, gpu, consts, whole) if spec.engine == "vllm" else None


#: How each engine's MoE exchanges tokens under attention DP (constants.py ``moe_gathered_exchange``, sourced there):
#: vLLM's default all2all backend, allgather_reducescatter, all-gathers a rank's quantized tokens (1); SGLang's
#: --enable-dp-attention all-gathers the bf16 hidden states before the MoE (2). Neither is a top-k all-to-all.
ENGINE_GATHERED_EXCHANGE: dict[str, int] = {"vllm": 1, "sglang": 2}


def engine_constants(spec: InferenceSpec, gpu: GpuSpec, consts: Constants, whole: bool = False, *, model_type: str) -> Constants:
    """``consts`` with the engine's MoE exchange and tokens a forward pass on ``gpu`` (a prompt prefilled in such passes).

    ``model_type``: the model's, for the engine's prompt-attention kernel (vLLM's Triton unified attention for a sink
    model before Hopper) where the workload's constants leave it to the engine
    (:func:`generator.sizing.prompt_attention_kernel.prompt_query_rows`).
    """
    exchanged = with_gathered_exchange(consts, ENGINE_GATHERED_EXCHANGE.get(spec.engine, consts.moe_gathered_exchange))
    rows = prompt_query_rows(consts, spec.engine, gpu.architecture, model_type)  # a workload's own (0 too) or the engine's
    if rows != exchanged.prompt_attention_query_rows:
        exchanged = with_prompt_kernel(exchanged, rows)
    # a workload's own MoE layer time (0 too), else the engine's: vLLM's fused-MoE layers (acc181; fix191)
    exchanged = with_moe_layer_step(exchanged, engine_moe_layer_step_s(exchanged, spec.engine))
    if spec.engine != "vllm":
        return exchanged
    return with_engine_tokens(exchanged, None, batched_tokens(spec, gpu, consts, whole))


@functools.lru_cache(maxsize=64)
def with_prompt_kernel(consts: Constants, query_rows: int) -> Constants:
    """``consts`` with ``prompt_attention_query_rows`` set to ``query_rows``, cached (one copy per distinct set)."""
    return consts._replace(prompt_attention_query_rows=query_rows)


@functools.lru_cache(maxsize=64)
def with_moe_layer_step(consts: Constants, seconds: float) -> Constants:
    """``consts`` with ``moe_layer_step_s`` set to ``seconds`` (the same object where it already is), cached."""
    return consts if consts.moe_layer_step_s == seconds else consts._replace(moe_layer_step_s=seconds)


@functools.lru_cache(maxsize=64)
def with_gathered_exchange(consts: Constants, exchange: int) -> Constants:
    """``consts`` with ``moe_gathered_exchange`` set to ``exchange`` (the same object where it already is), cached."""
    return consts if consts.moe_gathered_exchange == exchange else consts._replace(moe_gathered_exchange=exchange)


@functools.lru_cache(maxsize=4096)
def with_engine_tokens(consts: Constants, max_num_seqs: int | None, prefill_chunk_tokens: int) -> Constants:
    """``consts`` with the engine's tokens a forward pass (and its ``max_num_seqs`` where given), one copy per distinct set.

    Sizing a layout forms these several times (its batch limits, its points, each chunk a prompt waits for): a copy of
    the constants' many fields each time cost more than the arithmetic it feeds, and the sizing caches then compared
    equal copies field by field.
    """
    if max_num_seqs is None:
        return consts._replace(prefill_chunk_tokens=prefill_chunk_tokens)
    return consts._replace(max_num_seqs=max_num_seqs, prefill_chunk_tokens=prefill_chunk_tokens)


def max_running(spec: InferenceSpec, gpu: GpuSpec, consts: Constants) -> int:
    """The most sequences a replica of ``spec`` runs at once on ``gpu``: the workload's, else the engine's default."""
    return _limits(spec, gpu, consts)[0]


def _limits(spec: InferenceSpec, gpu: GpuSpec, consts: Constants) -> tuple[int, ...]:
    """The batch limits to size ``spec`` at on ``gpu`` (:func:`batch_limits`), never above the tokens of a forward pass."""
    chunk = batched_tokens(spec, gpu, consts)
    return batch_limits(spec.engine, gpu.name, gpu.memory_bytes, spec.max_num_seqs, consts.max_batch_size, chunk)


def replica_shapes(
    model: ResolvedModel,
    spec: InferenceSpec,
    fmt: WeightFormat,
    hw: Hardware,
    consts: Constants,
    seen: dict[tuple[object, ...], _GpuShapes] | None = None,
    *,
    expert_parallel: int | None = None,
    pin: tuple[int | None, int | None] = (None, None),
    share: GpuShare | None = None,
) -> tuple[list[ReplicaShape], list[LayoutBlocked]]:
    """Feasible TP x PP layouts on ``hw`` and, when none, why not.

    ``expert_parallel``: the EP degree the deployment pins (vLLM --enable-expert-parallel, SGLang --ep-size): each
    stage's routed experts are spread whole over its ``ep`` GPUs, not split by TP, and the MoE layers exchange tokens
    all-to-all; at ep = TP the stage's TP GPUs, above it ``ep / tp`` attention data-parallel groups of TP GPUs (vLLM
    --data-parallel-size, SGLang --enable-dp-attention); 1: pinned off (``ep: 1``); None: EP where a TP split of the
    experts does not load, and the attention-DP layouts of a mixture-of-experts model searched beside the TP ones
    (:func:`attention_dp_degrees`).

    The layouts depend on the GPU as fitted (bridged or not) and the TP degrees the platform allows, not on
    the platform itself: they are sized once per such GPU (and host CPU speed) and shared by every platform
    that carries it. ``seen`` keeps them for one deployment's calls by (GPU, bridge, slot lanes, board, NVLink domain, TP
    degrees, GPUs a node holds, host speed). ``share``: a replica of one GPU sized against one pod's share of it (TP1 PP1 only).
    """
    sizes = tuple(tensor_parallel_sizes(hw, model.architecture.num_attention_heads))
    node_gpus = max(hw.platform.gpu_counts)
    host = platform_host_time_scale(hw.platform)
    if share is not None:
        sizes, pin = (1,), (1, 1)
    network = expert_network(hw, expert_parallel)  # a pinned EP wider than a server: its exchange leaves it
    gpu = hw.gpu
    fitted: Fitted = (gpu.bridged, gpu.slot_lanes, gpu.mesh_gpus, gpu.nvlink_domain_gpus, share)
    key = (gpu.id, fitted, sizes, node_gpus, host, pin, network)
    known = seen.get(key) if seen is not None else None
    if known is None:
        grid = (sizes, node_gpus)
        known = _gpu_shapes(
            model.architecture,
            model,
            _layout_spec(spec),
            fmt,
            gpu.id,
            fitted,
            grid,
            consts,
            host,
            expert_parallel,
            pin,
            network,
        )
        if seen is not None:
            seen[key] = known
    found, blocked = known
    # each at the margin of the batch it runs (review25 C: a gap's runs differ by batch); a shape is
    # (parallelism, memory, KV bits, best point, reason, max_num_seqs): :data:`_GpuShapes`
    arch = model.architecture
    margin = functools.partial(planning_margin, spec, hw.gpu, arch, fmt.name)
    shapes = [
        ReplicaShape(
            hw,
            fmt,
            *shape,
            margin=held,
            share=share,
            deadline_share=deadline_share(spec, shape[3]),
            slot_queue=slot_queue(spec, shape[3], held),
            host_ram_bytes=lora_sizes(arch, spec, shape[0]).host_bytes if spec.lora is not None else 0,
            narrower_missed=narrower_missed(blocked, shape[0].gpus),
        )
        for shape in found
        for held in (margin(shape[3].batch, shape[0].tp, shape[0].attention_dp),)  # the shape's margin, found once for both
    ]
    return shapes, list(blocked)


def expert_network(hw: Hardware, expert_parallel: int | None) -> ExpertNetwork | None:
    """Where a pinned EP group is wider than one server of ``hw``: its GPUs a server and a GPU's share of its network.

    review72 item 1: ``{tp: 1, ep: 16}`` on 8-GPU servers spreads each stage's experts over two servers, and 8 of each
    GPU's 15 peers are on the other one; ``{tp: 1, ep: 8}`` on one-GPU instances sends the whole exchange over the
    instance's network. The node's network is the one a replica spanning nodes is built with (its GPU fabric, else its
    front end: :func:`generator.planner.nodes.node_link`), shared by its GPUs. None where the group stays on one server
    (searched EP degrees always do: the widest the server gives) or on one NVLink domain of a rack-scale system's trays.
    """
    node_gpus = max(hw.platform.gpu_counts)
    if not expert_parallel or expert_parallel <= node_gpus:
        return None
    gbps, _ = node_link(hw.platform, hw.gpu, node_gpus, True)
    # a stage of ep GPUs over servers of node_gpus: the fewest of its GPUs one server holds (ep a multiple: node_gpus)
    return ExpertNetwork(fewest_node_gpus(expert_parallel, node_gpus), gbps / node_gpus / 8)


def _layout_spec(spec: InferenceSpec) -> InferenceSpec:
    """``spec`` less what no layout's sizing reads (the rate, the replicas' floor and utilisation, the precisions asked).

    A layout's memory and best operating point depend on the model, the traffic's shape, the SLOs and the engine, not
    on the rate the replicas share: services alike but for their rate size their layouts once (the memo's key). The
    fields dropped stand at placeholder values inside the layout sizing, which must not read them:
    tests/test_layout_memo_key.py sizes layouts with them and without and fails where the two differ (review26 item 4).
    """
    return spec._replace(
        requests_per_second=1.0,
        min_replicas=1,
        max_utilization=1.0,
        routing="free_place",
        precision=None,
        allowed_precisions=(),
        min_context_tokens=None,
    )


class LayoutBlocked(NamedTuple):
    """Why a layout of a GPU is not feasible; ``excess``: how far past the latency targets, where they are why."""

    text: str
    excess: float | None = None
    #: The latency targets missed ("ttft", "tpot"), where they are why.
    missed: tuple[str, ...] = ()
    #: The code it is recorded with (:mod:`generator.planner.blocked`).
    code: str = NO_LAYOUT
    #: The GPUs a replica of the layout takes (TP x PP); 0 where the reason is of no one layout.
    gpus: int = 0
    #: Where GPU memory rules the layout out and fewer or smaller LoRA slots would fit it: the field and its figure
    #: (:func:`generator.planner.lora_slots_fit.lora_slots_fit`); None otherwise.
    lora_fit: tuple[tuple[int, int], ...] | None = None
    #: Where a 16-bit KV cache rules the layout out and an FP8 one fits it (:func:`_fp8_kv_fit`): the KV tokens a
    #: replica then holds, and the layout's name; None otherwise.
    fp8_kv_fit: tuple[int, str] | None = None


#: The feasible (parallelism, memory, KV bits, best point, reason, max_num_seqs) of one GPU, and why others are not.
_GpuShapes = tuple[tuple[tuple[Parallelism, InferenceMemory, int, OperatingPoint, str, int], ...], tuple[LayoutBlocked, ...]]


def pipeline_depths(tp: int, grid: tuple[tuple[int, ...], int], num_layers: int, pin_pp: int | None) -> tuple[int, ...]:
    """The PP degrees tried at TP ``tp``; ``grid``: (the TP degrees the server allows, the GPUs one node holds).

    Every depth whose TP x PP replica fits one node, and at the largest TP degree every depth, across nodes too (a
    replica then fills whole nodes, its stages talking over the network). fuzz22 item 1: PP was tried only at the
    largest TP, so TP2 PP4 inside one 8-GPU server was never formed and a plan 35% dearer was chosen. A pinned PP is
    tried at any TP (fuzz13 item 4); never more stages than layers.
    """
    sizes, node_gpus = grid
    if pin_pp is not None:
        return (pin_pp,) if pin_pp <= num_layers or pin_pp == 1 else ()
    return tuple(pp for pp in PIPELINE_STAGES if pp == 1 or (pp <= num_layers and (tp == sizes[-1] or tp * pp <= node_gpus)))


#: How a server fits a GPU: bridged or not, the PCIe lanes its slots give, the fully connected board it sits on, the GPUs
#: its NVLink domain joins (a platform's own where it states one: a2-megagpu-16g's 16); and the share of it one pod gets
#: where the workload shares GPUs (None: the whole GPU).
Fitted = tuple[bool, tuple[tuple[int, int], ...], "int | None", int, "GpuShare | None"]


#: :func:`_fitted_gpu`'s GPUs by (GPU id, fitted): (the catalog record it is formed from, the GPU as fitted).
_FITTED: dict[tuple[str, Fitted], tuple[GpuSpec, GpuSpec]] = {}


def _fitted_gpu(gpu_id: str, fitted: Fitted) -> GpuSpec:
    """The catalog GPU as a server fits it (``fitted``: :meth:`PlatformSpec.fitted_gpu`'s facts of it), or one share of it.

    One object per catalog record and fitting (formed again where the catalog's record is another object): the
    roofline inputs (:func:`~generator.sizing.performance.accelerator_for`) are kept by the GPU's identity, and a new
    copy for every layout sized missed them every time (speed100).
    """
    record = catalog.gpus()[gpu_id]
    known = _FITTED.get((gpu_id, fitted))
    if known is not None and known[0] is record:
        return known[1]
    bridged, slot_lanes, mesh, domain, share = fitted
    gpu = record.as_fitted(bridged).in_slots(slot_lanes)._replace(mesh_gpus=mesh, nvlink_domain_gpus=domain)
    gpu = gpu if share is None else shared_gpu(gpu, share)
    _FITTED[gpu_id, fitted] = (record, gpu)
    return gpu


@memoized
def _gpu_shapes(
    arch: Architecture,
    model: ResolvedModel,
    spec: InferenceSpec,
    fmt: WeightFormat,
    gpu_id: str,
    fitted: Fitted,
    grid: tuple[tuple[int, ...], int],
    consts: Constants,
    host_time_scale: float = 1.0,
    expert_parallel: int | None = None,
    pin: tuple[int | None, int | None] = (None, None),
    network: ExpertNetwork | None = None,
) -> _GpuShapes:
    gpu = _fitted_gpu(gpu_id, fitted)
    # as the engine holds it there (Marlin's padding, an AWQ checkpoint's zero points)
    fmt = loaded_format(fmt, gpu.architecture, spec.engine, arch.quantization)
    unserved = format_problems(fmt, gpu.architecture)
    if unserved:
        return (), tuple(LayoutBlocked(why, code=UNSERVED_FORMAT) for why in unserved)
    if (float16 := float16_problem(arch.model_type, fmt, gpu, spec.engine)) is not None:
        return (), (LayoutBlocked(float16, code=UNSERVED_FORMAT),)
    tokens = batched_tokens(spec, gpu, consts)
    if spec.engine == "vllm" and (spec.max_num_seqs or 0) > tokens:
        # the workload's limit above the GPU's default tokens a forward pass (those given are checked at load)
        return (), (
            LayoutBlocked(
                f"max_num_seqs {spec.max_num_seqs:,} is more than the {tokens:,} tokens vLLM runs a forward pass on "
                f"{gpu.name} by default, and vLLM refuses to start so: set max_num_batched_tokens to at least that"
            ),
        )
    shapes: list[tuple[Parallelism, InferenceMemory, int, OperatingPoint, str, int]] = []
    blocked: list[LayoutBlocked] = []
    # pinned degrees are the only ones tried, a pinned PP at any TP (fuzz13 item 4: tp 2 / pp 2 was never enumerated)
    pin_tp, pin_pp = pin
    sizes = grid[0]
    if pin_tp is not None and pin_tp not in sizes:
        taken = ", ".join(str(t) for t in sizes)
        blocked.append(
            LayoutBlocked(f"TP{pin_tp}: not a degree this server's GPUs give a replica (TP {taken})", code=PINNED_DEGREE)
        )
    ep_on = None if expert_parallel is None else expert_parallel > 1
    for tp in sizes if pin_tp is None else [t for t in sizes if t == pin_tp]:
        if ep_on and tp != expert_parallel:  # a pinned EP is a TP layout's at its TP only (above it: attention DP's)
            continue
        for pp in pipeline_depths(tp, grid, arch.num_layers, pin_pp):
            shape, why, stop = _layout_shape(arch, model, spec, fmt, gpu_id, fitted, (tp, pp), consts, host_time_scale, ep_on)
            if shape is not None:
                shapes.append(shape)
            if why is not None:
                blocked.append(why._replace(gpus=tp * pp))
            if stop:  # what refuses to load does not depend on the stages: said once, no deeper pipeline tried
                break
    for tp, ep in attention_dp_degrees(arch, spec, sizes, pin_tp, expert_parallel):
        # newuser72 item 1: attention data-parallel over ep / tp groups, the experts over all ep GPUs of a stage; one
        # stage unless PP is pinned: vLLM's maintainers call DP attention with a pipeline "not a common setup"
        # (https://github.com/vllm-project/vllm/issues/20053), so a searched plan does not count on it
        for pp in (1,) if pin_pp is None else pipeline_depths(ep, grid, arch.num_layers, pin_pp):
            shape, why, stop = _layout_shape(
                arch, model, spec, fmt, gpu_id, fitted, (tp, pp), consts, host_time_scale, True, ep, network
            )
            if shape is not None:
                shapes.append(shape)
            if why is not None and expert_parallel is not None:  # searched ones are extras: the TP layouts' reasons stay
                blocked.append(why._replace(gpus=ep * pp))
            if stop:
                break
    missed = [b for b in blocked if b.excess is not None]
    if not shapes and missed:  # the layout nearest the targets last: the one an infeasible plan names (newuser14 item 7)
        nearest = min(missed, key=lambda b: b.excess or 0.0)
        blocked = [*(b for b in blocked if b != nearest), nearest]
    return tuple(shapes), tuple(blocked)


#: One layout's shape where feasible, else why not, and whether deeper pipelines at its TP are not worth trying.
_Layout = tuple[tuple[Parallelism, InferenceMemory, int, OperatingPoint, str, int] | None, LayoutBlocked | None, bool]


def _holds_one(mem: InferenceMemory) -> bool:
    """Whether a replica of ``mem`` holds one sequence's KV cache."""
    return mem.capacity is not None and mem.capacity.max_concurrency >= 1


def replica_memory(
    arch: Architecture, spec: InferenceSpec, fmt: WeightFormat, gpu: GpuSpec, par: Parallelism, consts: Constants
) -> tuple[InferenceMemory, int]:
    """A replica's memory at ``par`` on ``gpu``, at the first of the engine's batch limits whose KV holds one sequence.

    The limit is returned with it (the last where none holds one: the capacity then says so); under SGLang, the KV
    pool of ``spec.mem_fraction_static`` (None: SGLang's default for the GPU).
    """
    kv_bits = kv_cache_bits(spec.kv_cache_precision)
    tokens = batched_tokens(spec, gpu, consts, arch.encoder_only)
    nvlink = nvlink_replica(gpu.interconnect_kind, gpu.nvlink_domain_gpus, par)
    # the engine's limit; where vLLM's larger default leaves no room for one sequence, its smaller one is tried too
    for limit in _limits(spec, gpu, consts):  # vLLM's profiling run samples, and its graphs capture, that many sequences
        engine_consts = with_engine_tokens(consts, limit, tokens) if spec.engine == "vllm" else consts
        if spec.pooling:  # vLLM profiles a pooling model's pooler, not a sampler: no rows of logits
            engine_consts = engine_consts._replace(sampler_bytes_per_logit=0)
        mem = size_inference(
            arch, fmt, kv_bits, spec.max_context_tokens, 1, par, engine_consts, gpu.memory_bytes,
            nvlink=nvlink, pooling=spec.pooling,
        )  # fmt: skip
        if spec.lora is not None:  # the adapters' GPU slots, allocated before the KV pool is sized
            mem = with_lora_slots(arch, spec, par, mem, engine_consts, gpu.memory_bytes, tokens)
        if spec.engine == "sglang" and not arch.encoder_only:  # an encoder needs no KV pool (kv_capacity)
            sglang = sglang_inference_capacity(
                arch, kv_bits, spec.max_context_tokens, par, gpu.memory_bytes, mem, spec.mem_fraction_static
            )
            mem = mem._replace(capacity=sglang.capacity)
        if (
            mem.capacity is not None
            and mem.capacity.max_concurrency >= 1
            and not start_shortfall(arch, spec, par, mem, tokens, consts)
        ):
            break
    return mem, limit


def _fp8_kv_fit(
    arch: Architecture, spec: InferenceSpec, fmt: WeightFormat, gpu: GpuSpec, par: Parallelism, consts: Constants, name: str
) -> tuple[int, str] | None:
    """The KV tokens a layout its 16-bit KV cache rules out holds with an FP8 one, and its name; None where none fits.

    fix183 item 3: the refusal named a shorter context and a bigger GPU, never the engine's FP8 cache. Sized again as
    the engine would hold it (:func:`replica_memory`, vLLM's start-up check), only where the engine offers one there.
    """
    if not fp8_kv_offered(spec.engine, spec.kv_cache_precision, gpu):
        return None
    fp8 = spec._replace(kv_cache_precision="fp8")
    mem, _ = replica_memory(arch, fp8, fmt, gpu, par, consts)
    cap = mem.capacity
    if cap is None or cap.max_concurrency < 1:
        return None
    if start_shortfall(arch, fp8, par, mem, batched_tokens(fp8, gpu, consts, arch.encoder_only), consts):
        return None
    return cap.kv_cache_tokens, name


def start_shortfall(
    arch: Architecture, spec: InferenceSpec, par: Parallelism, mem: InferenceMemory, tokens: int, consts: Constants
) -> int:
    """KV bytes vLLM's start-up check finds short for one ``max_context_tokens`` request (0: it starts, or another engine).

    The check as :func:`~generator.sizing.vllm_kv.start_shortfall_bytes` sizes it, at the replica's pool.
    """
    cap = mem.capacity
    if spec.engine != "vllm" or cap is None:
        return 0
    bits = kv_cache_bits(spec.kv_cache_precision)
    return start_shortfall_bytes(arch, bits, spec.max_context_tokens, par, consts.kv_block_tokens, tokens, cap.kv_available_bytes)


def attention_dp_degrees(
    arch: Architecture, spec: InferenceSpec, sizes: tuple[int, ...], pin_tp: int | None, expert_parallel: int | None
) -> tuple[tuple[int, int], ...]:
    """The (TP, EP) degrees of the attention data-parallel layouts tried for ``arch``: EP above TP, a multiple of it.

    newuser72 item 1: DeepSeek-V3 / R1 are served with data-parallel attention and expert parallelism (vLLM
    ``--data-parallel-size N --enable-expert-parallel``, https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html;
    SGLang ``--enable-dp-attention``, https://lmsys.org/blog/2024-12-04-sglang-v0-4/): under TP every rank keeps the
    whole MLA latent of every sequence, so an 8-GPU TP8 replica holds 1/8 of the sequences its memory holds as eight
    DP ranks. Tried for a mixture-of-experts model (a dense one has no experts to spread, and its DP ranks are
    replicas), by a generating service. Searched: at the widest degree the server gives a replica (the GPUs it links
    for TP: an NVLink domain where it has one, PCIe on a PCIe server such as 8 x L40S, whose rate the all-to-all is then
    timed at; review72 item 10), where TP over as many GPUs would copy the KV cache (an MLA latent, KV heads fewer than
    the GPUs), with each TP that divides it and copies less (groups that split their KV with no copy hold no more
    sequences than the TP stage, and each keeps its own copy of the attention weights; one width keeps the search's
    cost small). Pinned (``expert_parallel`` above 1): that EP, at each TP below it that divides it, or at its pinned TP.
    None where EP is pinned off (1) or a pinned EP equals its TP (the TP layouts are those).
    """
    if not arch.is_moe or spec.pooling or expert_parallel == 1 or not sizes:
        return ()
    if expert_parallel is not None:
        pinned = expert_parallel
        return tuple((tp, pinned) for tp in sizes if tp < pinned and pinned % tp == 0 and pin_tp in (None, tp))
    ep = sizes[-1]
    copied = _kv_copied(arch, ep)
    return tuple((tp, ep) for tp in sizes if tp < ep and ep % tp == 0 and pin_tp in (None, tp) and _kv_copied(arch, tp) < copied)


def _kv_copied(arch: Architecture, tp: int) -> Fraction:
    """How many times over the ``tp`` GPUs of one attention group hold a token's KV (1: split with no copy)."""
    whole = sum(layer.kv_elements_per_token for layer in arch.layers)
    held = sum(layer_elements_per_gpu(layer, tp) for layer in arch.layers) * tp
    return Fraction(held, whole) if whole else Fraction(1)


@memoized
def _layout_shape(
    arch: Architecture,
    model: ResolvedModel,
    spec: InferenceSpec,
    fmt: WeightFormat,
    gpu_id: str,
    fitted: Fitted,
    degrees: tuple[int, int],
    consts: Constants,
    host_time_scale: float,
    expert_parallel: bool | None,
    attention_ep: int = 0,
    network: ExpertNetwork | None = None,
) -> _Layout:
    """One TP x PP layout of ``fmt`` (as held on the GPU) sized once per process, whichever server carries the GPU.

    Servers of 2, 4 and 8 of a GPU form many of the same layouts (TP2 PP2 on each): their sizing is shared.
    ``attention_ep``: the EP degree of an attention data-parallel layout (above TP: ``attention_ep / tp`` groups).
    """
    tp, pp = degrees
    if pp > 1 and arch.encoder_only:
        # vLLM's BERT / RoBERTa pooling models do not implement SupportsPP, and vLLM refuses PP for a model that does not
        return None, LayoutBlocked(f"TP{tp} PP{pp}: vLLM runs an encoder without pipeline parallelism"), True
    gpu = _fitted_gpu(gpu_id, fitted)
    kv_bits = kv_cache_bits(spec.kv_cache_precision)
    tokens = batched_tokens(spec, gpu, consts, arch.encoder_only)
    stages = engine_stages(spec.engine)  # where the engine puts the layers PP leaves over (newuser32 item 9)
    vision_tp = spec.engine == "vllm"  # its default mm_encoder_tp_mode splits the tower's layers (newuser62 item 3)
    par = Parallelism(tp, pp, attention_ep or (tp if expert_parallel else 1), stages, vision_tp)
    name = f"TP{tp} PP{pp}" if par.attention_dp == 1 else f"TP{tp} EP{par.ep} PP{pp} (attention DP {par.attention_dp})"
    problems = loadability_problems(arch, fmt, par)
    if problems and expert_parallel is None and tp > 1 and arch.is_moe:
        # what the engines advise where a TP split of the experts does not load (block-quantized expert widths
        # a TP rank does not divide into whole blocks): expert parallelism keeps each expert whole
        # (vLLM --enable-expert-parallel; newuser20 item 1: two servers were bought where one holds TP8 EP8)
        with_ep = Parallelism(tp, pp, tp, stages, vision_tp)
        if not loadability_problems(arch, fmt, with_ep):
            par, problems = with_ep, ()
    if problems:
        # what refuses to load does not depend on the stages: said once, of the layout as pinned or first tried
        # (fuzz16 item 5: every platform read "TP8 PP8", the last PP tried)
        named = name if par.attention_dp > 1 else f"TP{tp}" + (f" PP{pp}" if pp > 1 else "")
        return None, LayoutBlocked(f"{named}: {problems[0]}"), True
    mem, limit = replica_memory(arch, spec, fmt, gpu, par, consts)
    cap = mem.capacity
    if cap is None or cap.max_concurrency < 1:
        need = mem.per_gpu.total / GIB
        usable = cap.budget_bytes / GIB if cap else 0.0
        fit = lora_slots_fit(spec, lambda s: _holds_one(replica_memory(arch, s, fmt, gpu, par, consts)[0]))
        fp8 = _fp8_kv_fit(arch, spec, fmt, gpu, par, consts, name)
        why = f"{name}: needs {need:.1f} GiB per GPU of {usable:.1f} GiB usable"
        return None, LayoutBlocked(why, lora_fit=fit, fp8_kv_fit=fp8), False
    if short := start_shortfall(arch, spec, par, mem, tokens, consts):
        need, left = (cap.kv_available_bytes + short) / GIB, cap.kv_available_bytes / GIB
        window = max(layer.window_tokens or 0 for layer in arch.layers)
        # the tokens the check charges a sliding layer: its window and a forward pass's, at most the context (review36
        # item 6: "a forward pass's 65,536 tokens beyond their window" where the 32,768-token context capped them)
        charged = (
            f" (its sliding-window layers charged {min(window - 1 + tokens, spec.max_context_tokens):,} tokens each, where "
            f"decoding they hold {window:,})"
        )
        why = (
            f"{name}: vLLM refuses to start: one {spec.max_context_tokens:,}-token request needs {need:.2f} GiB of "
            f"KV cache a GPU at start-up{charged}, {left:.2f} GiB is left at max_num_seqs {limit:,}"
        )
        fp8 = _fp8_kv_fit(arch, spec, fmt, gpu, par, consts, name)
        return None, LayoutBlocked(why, code=START_REFUSED, fp8_kv_fit=fp8), False
    acc = with_lora_adapters(accelerator_for(gpu, fmt.compute, tp, host_time_scale, fmt), arch, spec, par)
    if network is not None and par.attention_dp > 1 and par.ep > network.host_gpus:
        if network.gb_per_s <= 0:
            why = f"{name}: its {par.ep} GPUs a stage span servers whose network has no published rate"
            return None, LayoutBlocked(why), False
        acc = acc._replace(expert_network=network)  # the all-to-all's share to other servers over their network
    if spec.pooling:  # one forward pass a request, no decode (generator.planner.pooling)
        layout = f"TP{tp} PP{pp}"
        pooled = _pooling_shape(
            model,
            spec,
            (par, mem, kv_bits, acc),
            limit,
            tokens,
            engine_constants(spec, gpu, consts, arch.encoder_only, model_type=arch.model_type),
        )
        if isinstance(pooled, LayoutBlocked):
            return None, pooled._replace(text=f"{layout}: {pooled.text}"), False
        return (*pooled[:4], f"{layout} {pooled[4]}", limit), None, False
    # the limit is each engine's; a replica of attention-DP ranks runs one engine per rank
    max_batch = min(limit * par.attention_dp, cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens) or 1)
    if spec.engine == "vllm":  # a step's tokens hold the decodes and the prefill chunks they bring
        # one step a pipeline stage in flight, each with its budget (vLLM runs pp batches at once)
        steps = tokens * par.attention_dp * par.pp
        # a prompt brings its new tail to the steps: the tokens its prefix cache holds are not scheduled
        max_batch = min(max_batch, step_budget_batch(steps, spec.prompt_tail(spec.avg_input_tokens)[0], spec.avg_output_tokens))
    engine_consts = engine_constants(spec, gpu, consts, model_type=arch.model_type)
    point = best_point(model, (par, mem, kv_bits, acc), spec, max_batch, engine_consts)
    if point is None:
        # what a prompt alone reaches (no queue): the nearest a layout gets to the targets
        alone = _points(model, (par, mem, kv_bits, acc), spec, engine_consts)(1, 0.0)
        targets = tuple(
            name
            for name, reached, target in (
                ("ttft", alone.ttft_s, spec.slo.ttft_p95_ms),
                ("tpot", alone.tpot_s, spec.slo.tpot_ms),
            )
            if target and reached * 1000 > target
        )
        text = f"{name}: {_slo_miss_text(alone, spec)}"
        return None, LayoutBlocked(text, _slo_excess(alone, spec), targets), False
    return (par, mem, kv_bits, point, f"{name} holds {cap.kv_cache_tokens:,} KV tokens", limit), None, False


class PoolingReplica(NamedTuple):
    """One pooling replica layout as a plan sizes it (:func:`pooling_replica`): its memory and its two points."""

    par: Parallelism
    memory: InferenceMemory
    #: Its most load: the requests a pass packs, the req/s it sustains (within its latency target, where it has one).
    most: OperatingPoint
    #: One request alone: its latency p95 with no queue.
    alone: OperatingPoint


def pooling_replica(
    model: ResolvedModel,
    spec: InferenceSpec,
    fmt: WeightFormat,
    gpu: GpuSpec,
    degrees: tuple[int, int],
    consts: Constants,
    share: GpuShare | None = None,
) -> PoolingReplica | LayoutBlocked:
    """A pooling service's TP x PP replica on ``gpu`` as the catalog gives it, sized as a plan sizes it; else why not.

    ``estimate --task embed`` / ``score`` (newuser65 item 11: the quick calculator refused embedding and reranking
    models): the planner's own layout sizing (:func:`_gpu_shapes`), pinned to ``degrees``; ``share``: in one pod's
    share of the GPU (``--mig`` / ``--share``), as a plan under ``kubernetes.gpu_sharing`` sizes it (newuser100).
    """
    fitted: Fitted = (gpu.bridged, gpu.slot_lanes, gpu.mesh_gpus, gpu.nvlink_domain_gpus, share)
    tp, pp = degrees
    arch = model.architecture
    found, blocked = _gpu_shapes(arch, model, spec, fmt, gpu.id, fitted, ((tp,), tp * pp), consts, 1.0, None, degrees)
    if not found:
        return blocked[-1] if blocked else LayoutBlocked(f"TP{tp} PP{pp}: no layout")
    par, mem, kv_bits, most, _, _ = found[0]
    fitted_gpu = _fitted_gpu(gpu.id, fitted)
    held = loaded_format(fmt, fitted_gpu.architecture, spec.engine, arch.quantization)
    acc = accelerator_for(fitted_gpu, held.compute, tp, 1.0, held)
    engine_consts = engine_constants(spec, fitted_gpu, consts, arch.encoder_only, model_type=arch.model_type)
    alone = point_for_rate(model, (par, mem, kv_bits, acc), spec, 0.0, most.batch, engine_consts)
    return PoolingReplica(par, mem, most, alone)


def _slo_miss_text(alone: OperatingPoint, spec: InferenceSpec) -> str:
    """How far a layout's batch of one is from the latency targets: what it reaches against what is asked."""
    slo = spec.slo
    # each target as reached: missed ("against") or met ("within"; newuser67 item 9: a TTFT of 1,103 ms against 3,000
    # read as a miss beside the TPOT that missed)
    reached = [
        f"{text} {'against' if ms > target else 'within'} {target:g}"
        for ms, target, text in (
            (alone.ttft_s * 1000, slo.ttft_p95_ms, f"TTFT p95 {alone.ttft_s * 1000:,.0f} ms"),
            (alone.tpot_s * 1000, slo.tpot_ms, f"TPOT {alone.tpot_s * 1000:,.1f} ms"),
        )
        if target
    ]
    return f"misses the latency SLO even at batch 1 ({', '.join(reached)})"


def _pooling_shape(
    model: ResolvedModel,
    spec: InferenceSpec,
    shape: tuple[Parallelism, InferenceMemory, int, Accelerator],
    max_num_seqs: int,
    batched_tokens: int,
    consts: Constants,
) -> tuple[Parallelism, InferenceMemory, int, OperatingPoint, str] | LayoutBlocked:
    """A pooling replica layout: its best point and the requests a pass packs; or why it misses the latency target.

    Its memory is a generating replica's less the sampler's profiling rows: room for one ``max_context_tokens`` request
    (what vLLM checks at start-up); its KV pool holds one pass's requests at a time, each freeing its blocks after it.
    """
    par, mem, kv_bits, acc = shape
    cap = mem.capacity
    assert cap is not None  # sized against the GPU
    per_pass = requests_per_pass(spec.avg_input_tokens, batched_tokens, max_num_seqs * par.attention_dp, cap.kv_cache_tokens)
    times = pooling_times(model, (par, mem, kv_bits, acc), spec, per_pass, consts)
    point = _best_pooling_point(times, spec, consts)
    if point is None:
        target = spec.slo.ttft_p95_ms or 0.0
        return LayoutBlocked(pooling_miss_text(times, target, consts), pooling_excess(times, target, consts), ("ttft",))
    in_flight = pass_kv_tokens(spec, per_pass)
    return par, mem, kv_bits, point, f"holds {cap.kv_cache_tokens:,} KV tokens, {in_flight:,} in flight ({per_pass} a pass)"
