"""Placing deployments on ``hardware.fixed``: the direct computations ``validate`` and ``plan`` share.

Building the machine from the catalog and placing each inference deployment on it (offload to RAM and
NVMe included) is a calculation, not a search, so ``specgen validate`` runs it too and reports the
same located error ``plan`` would. Kept apart from :mod:`generator.planner.fixed` so that ``validate``
does not import the plan's assembly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from generator import catalog
from generator.calculator.machine import build_machine, place_over_nodes, wider_machine
from generator.calculator.model_source import serving_format
from generator.calculator.offload_report import alternatives, offload_unblock, tokens_per_s_text
from generator.errors import InfeasibleError, InputError
from generator.planner.slo import effective_slo
from generator.sizing.loadability import format_problems
from generator.sizing.loaded_weights import llama_cpp_formats
from generator.sizing.offload import (
    MAX_STREAMS,
    RateTarget,
    StreamCapacity,
    plan_offload,
    slots_at,
    splits_context_over_slots,
    stream_capacity,
)
from generator.sizing.precision import kv_cache_bits, weight_format
from generator.sizing.server_slots import state_slot_wait
from generator.sizing.serving_queue import SlotWait
from generator.units import figure_text
from generator.workload.models import InferenceDeployment, InferenceSpec

if TYPE_CHECKING:
    from generator.catalog.records import GpuSpec
    from generator.sizing.constants import Constants
    from generator.sizing.offload import Machine, OffloadPlan
    from generator.workload import LoadedWorkload

#: Why a training deployment on ``hardware.fixed`` is refused.
TRAINING_ON_FIXED = (
    "training on hardware.fixed is not planned by specgen yet: describe the machine as owned servers instead "
    "(hardware.buy: false beside hardware.inventory, each item a catalog platform with gpu, gpus_per_server and count, "
    "or a custom server), "
    "which plans the job on it, or size it with 'specgen estimate --train'"
)


def fixed_machine(loaded: LoadedWorkload) -> tuple[Machine, GpuSpec, str]:
    """The workload's ``hardware.fixed`` machine (its GPU, and the basis of its assumed figures), or a located error."""
    fixed = loaded.workload.hardware.fixed
    assert fixed is not None
    try:
        return build_machine(fixed)
    except InputError as exc:
        raise InputError(exc.message, loaded.document.locate(("hardware", "fixed"))) from None


def place_on_fixed(
    loaded: LoadedWorkload, index: int, machine: Machine, consts: Constants, context: int | None = None
) -> OffloadPlan:
    """Place deployment ``index`` on the machine, or raise the located reason it cannot run there.

    ``context``: the KV cache's tokens where the server's slots need more than ``max_context_tokens`` (a lone request's).
    """
    dep = loaded.workload.deployments[index]
    if not isinstance(dep, InferenceDeployment):
        raise InputError(TRAINING_ON_FIXED, loaded.document.locate(("deployments", index, "training"), key=True))
    spec = dep.inference
    model = loaded.models[dep.name]
    fixed = loaded.workload.hardware.fixed
    assert fixed is not None
    architecture = catalog.gpus()[fixed.gpu].architecture
    first = serving_format(model, spec.precision)
    if unserved := format_problems(first, architecture):  # no kernel for it on this GPU, as a bought GPU is ruled out
        field = ("deployments", index, "inference", "precision") if spec.precision else ("hardware", "fixed", "gpu")
        raise InputError(unserved[0], loaded.document.locate(field))
    allowed = [weight_format(name) for name in spec.allowed_precisions]
    for j, fmt in enumerate(allowed):
        if unserved := format_problems(fmt, architecture):  # refused as the precision is (fuzz18 item 3)
            raise InputError(unserved[0], loaded.document.locate(("deployments", index, "inference", "allowed_precisions", j)))
    formats = llama_cpp_formats(first, allowed)  # the machine runs llama.cpp, an MXFP4 checkpoint as its GGUF (newuser38 item 5)
    try:
        return plan_offload(
            model.architecture, formats, kv_cache_bits(spec.kv_cache_precision), context or spec.max_context_tokens,
            spec.min_context_tokens, machine, spec.avg_input_tokens, consts, alternatives(model.architecture),
            spec.avg_input_tokens + spec.avg_output_tokens // 2,  # the KV a decode step reads on average, as the estimate
            fixed.offload_engine,
            # picks among allowed precisions that all offload (newuser68 item 5)
            RateTarget(
                effective_slo(spec)[0].slo.tpot_ms, spec.requests_per_second * spec.avg_output_tokens,
                spec.avg_input_tokens + spec.avg_output_tokens, spec.requests_per_second,
            ),
        )  # fmt: skip
    except InfeasibleError as exc:
        where = loaded.document.locate(("deployments", index, "model"))
        unblock = offload_unblock(model.architecture, formats)
        raise InfeasibleError(f"'{model.id}' cannot run on hardware.fixed: {exc}; {unblock}", where) from None


def place_for_rate(
    loaded: LoadedWorkload, index: int, machine: Machine, consts: Constants
) -> tuple[OffloadPlan, Machine, bool, StreamCapacity | None, OffloadPlan]:
    """Deployment ``index`` placed on the machine, and the llama.cpp server slots its rate takes.

    Placed across the NUMA nodes' RAM where one node's would not hold it, again with the slots' KV cache. Returns
    the placement, the machine it is on, whether it spans nodes, the slots (None: one stream makes the rate), and a
    lone request's placement (the first; the slots' cache may have moved weights off the GPUs since, review73 item 1b).
    ``validate`` runs it too: a rate beyond the machine is refused at its field by both (exit 3).
    """
    fixed = loaded.workload.hardware.fixed
    assert fixed is not None
    wider = wider_machine(machine, fixed)

    def on_disk(placed: OffloadPlan) -> int:
        return placed.placement.disk_bytes

    plan, on, spans = place_over_nodes(lambda m: place_on_fixed(loaded, index, m, consts), machine, wider, on_disk)
    lone = plan
    context = plan.placement.context_tokens  # a lone request's (shortened where min_context_tokens allowed it)
    slots = _rate_slots(loaded, index, plan, on, consts, context)
    placed: list[tuple[OffloadPlan, Machine, bool]] = []  # every placement made, the first (a lone request's) included
    for _ in range(MAX_REPLACEMENTS):
        tokens = slots.context_tokens if slots is not None else context  # the cache the slots on this placement take
        if tokens == plan.placement.context_tokens:
            return plan, on, spans, slots, lone  # the slots' cache is the one placed: a fixed point
        placed.append((plan, on, spans))
        if any(p.placement.context_tokens == tokens for p, _, _ in placed):
            break  # placed before: the loop goes round (its slots on the edge of the rate or the wait), never settles
        # their requests' KV cache placed as the model is, a larger one moving weights off the GPUs and a smaller one
        # (fewer slots than the last placement was made for) bringing them back: a cache no slot uses slows every one
        again = functools.partial(place_on_fixed, loaded, index, consts=consts, context=tokens)
        plan, on, spans = place_over_nodes(again, machine, wider, on_disk)
        # the slots again on the placement planned: its prompt passes (review69 item 3: judged on the first placement,
        # 207 slots were planned where the final one's prompts take 151% of the machine), or another precision
        slots = _rate_slots(loaded, index, plan, on, consts, context)
    tokens = slots.context_tokens if slots is not None else context
    if tokens == plan.placement.context_tokens:
        return plan, on, spans, slots, lone
    if not any(p is plan for p, _, _ in placed):
        placed.append((plan, on, spans))
    # not settled (review73 item 1: 93 -> 161 -> 194 -> 197 slots, the last on a placement of 194's cache, rendered
    # -c 446,200 -np 197; fix131: 162 slots' cache of 372,600 tokens placed, then 96 slots on it rendered -c 372,600
    # -np 96): of the placements made, the slots each one's cache holds, their rate and wait checked
    wanted = slots or StreamCapacity(1, plan.cost.decode_tokens_per_s, plan.cost.decode_tokens_per_s, context)
    plan, on, spans, slots = _held_slots(loaded, index, placed, consts, context, wanted)
    return plan, on, spans, slots, lone


#: Times the slots' KV cache may move the placement before the slots a placement made holds are taken instead.
MAX_REPLACEMENTS = 8


def _held_slots(
    loaded: LoadedWorkload,
    index: int,
    placed: list[tuple[OffloadPlan, Machine, bool]],
    consts: Constants,
    context: int,
    wanted: StreamCapacity,
) -> tuple[OffloadPlan, Machine, bool, StreamCapacity]:
    """Of the placements ``placed``, one with the slots its KV cache holds whole, or the located refusal.

    The render's ``-c`` is the placement's cache, the plan's slots fill it and the parallel-slots finding says it: one
    figure (review73 item 1, fix131). Each placement's slots are as many as its cache holds, timed on it with its
    prompt passes; taken: those that make the rate and whose wait for one fits what the TTFT leaves of the target (a
    batch service's: drains), the smallest cache first (the most weights on the GPUs); else the smallest cache whose
    slots make the rate; else refused at the rate. ``wanted``: the slots the loop last asked for.
    """
    dep = loaded.workload.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    spec = dep.inference
    request = spec.avg_input_tokens + spec.avg_output_tokens
    demand = spec.requests_per_second * spec.avg_output_tokens
    arch = loaded.models[dep.name].architecture
    found: list[tuple[bool, int, OffloadPlan, Machine, bool, StreamCapacity]] = []
    best: tuple[float, int, int, OffloadPlan] | None = None  # the most any placement's slots make, for the refusal
    for plan, on, spans in placed:
        cache = plan.placement.context_tokens
        split = splits_context_over_slots(plan.engine)
        streams = max(1, cache // max(context, request) if split else cache // request)
        prompts = spec.requests_per_second * plan.cost.prefill_s
        held = slots_at(
            arch, plan.weight_format, kv_cache_bits(spec.kv_cache_precision), context, on, consts,
            spec.avg_input_tokens + spec.avg_output_tokens // 2, request, streams, plan.engine, prompts,
            with_speeds=True,
        )  # fmt: skip
        made = held.served_tokens_per_s if held is not None else 0.0
        if best is None or made > best[0]:
            best = (made, cache, streams, plan)
        # the slots' own cache must be the one placed (a shortened placement's may hold a part of a request more)
        if held is None or held.context_tokens != cache or not held.meets(demand):
            continue
        wait = slot_wait_at(spec, plan.cost.ttft_s, held).p95_s
        fits = math.isfinite(wait) and wait <= slot_slack_s(spec, plan.cost.ttft_s)
        found.append((not fits, cache, plan, on, spans, held))
    if found:
        _, _, plan, on, spans, held = min(found, key=lambda f: f[:2])
        return plan, on, spans, held
    assert best is not None
    made_text, cache, streams, plan = tokens_per_s_text(best[0]), best[1], best[2], best[3]
    most = best[0] / max(1, spec.avg_output_tokens)  # req/s it makes
    raise InfeasibleError(
        f"{figure_text(spec.requests_per_second)} req/s x {spec.avg_output_tokens:,} output tokens need "
        f"{demand:,.1f} tokens/s; the rate takes {wanted.streams} {plan.engine} server slots, but each placement sized "
        f"for their KV cache moves weights on or off the GPUs and so takes another count ({len(placed)} placements "
        f"tried, none settled): the best one's cache of {cache:,} tokens holds {streams} slot(s) of {request:,}-token "
        f"requests, which make {made_text} tokens/s beside the prompt passes; {_rate_advice(loaded, index, plan, most)}",
        loaded.document.locate(("deployments", index, "inference", "requests_per_second")),
    )


def _rate_slots(
    loaded: LoadedWorkload, index: int, plan: OffloadPlan, machine: Machine, consts: Constants, context: int
) -> StreamCapacity | None:
    """The llama.cpp server slots the request rate needs where one stream is short of it; None where one is enough.

    ``context``: a lone request's KV tokens (the first placement's), which the slots' cache holds at least.

    The requests' prompt passes take the machine from the slots' decode: each takes its prefill time (the weights held
    off the GPUs copied to them once a pass), so the slots must decode the demand in what is left of each second,
    ``1 - rate x prefill_s`` (newuser68 item 1: 0.1 req/s of 800-token prompts on Qwen3-235B with 92 GiB of experts
    in RAM, 7.48 s a prompt, took 75% of the machine, and 25 slots were planned at 99% of its decode alone). A rate
    beyond what the slots the machine's memory holds can make in that time is refused at its field, as owned servers
    with ``buy: false`` are (newuser29 item 7: 550 times one stream's speed exited 0).
    """
    dep = loaded.workload.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    spec = dep.inference
    demand = spec.requests_per_second * spec.avg_output_tokens
    prompts = spec.requests_per_second * plan.cost.prefill_s  # the share of the machine's time prompts take
    where = loaded.document.locate(("deployments", index, "inference", "requests_per_second"))
    if prompts >= 1:
        raise InfeasibleError(
            f"{figure_text(spec.requests_per_second)} req/s of {spec.avg_input_tokens:,}-token prompts need "
            f"{prompts:.0%} of hardware.fixed's time for their prompt passes alone ({plan.cost.prefill_s:,.2f} s each, "
            f"{_pass_text(plan)}), {1 / plan.cost.prefill_s:.3g} a second at most with no time left to decode; "
            f"{_rate_advice(loaded, index, plan, 1 / plan.cost.prefill_s)}",
            where,
        )
    alone = plan.cost.decode_tokens_per_s
    lone = StreamCapacity(1, alone, alone, context, prompt_share=prompts)
    request = spec.avg_input_tokens + spec.avg_output_tokens
    args = (
        loaded.models[dep.name].architecture, plan.weight_format, kv_cache_bits(spec.kv_cache_precision), context,
        machine, consts, spec.avg_input_tokens + spec.avg_output_tokens // 2, request,
    )  # fmt: skip
    if lone.meets(demand):
        return _slots_for_wait(spec, plan, lone, lambda n: slots_at(*args, n, plan.engine, prompts, with_speeds=True))
    slots = stream_capacity(*args, demand, plan.engine, prompts)
    if slots.meets(demand):
        return _slots_for_wait(spec, plan, slots, lambda n: slots_at(*args, n, plan.engine, prompts, with_speeds=True))
    decode_demand = demand / (1 - prompts)  # tokens/s the slots must make while no prompt pass runs
    # an engine that splits -c over its slots holds a whole request in each (ik_llama.cpp)
    each = f", {slots.context_tokens // slots.streams:,} a slot," if splits_context_over_slots(plan.engine) else ""
    why = (
        "the best count that fits its memory, more KV cache leaving less of it to the weights"
        if slots.memory_bound
        else f"specgen looks no further than {MAX_STREAMS:,}"
    )
    # the rate r it serves: r x output tokens = slots' tokens/s x (1 - r x prefill_s)
    served = slots.tokens_per_s / (spec.avg_output_tokens + slots.tokens_per_s * plan.cost.prefill_s)
    raise InfeasibleError(
        f"{figure_text(spec.requests_per_second)} req/s x {spec.avg_output_tokens:,} output tokens need "
        f"{demand:,.1f} tokens/s{_prompt_text(prompts, plan.cost.prefill_s, decode_demand)}; hardware.fixed makes at "
        f"most {tokens_per_s_text(slots.tokens_per_s)} with {slots.streams} {plan.engine} server slot(s) at "
        f"{plan.weight_format.name} ({why}; a KV cache of {slots.context_tokens:,} tokens{each} for requests of "
        f"{request:,}; the weights read once a step for all of them, the CPU's arithmetic not counted, so at best): about "
        f"{served:.3g} req/s; {_rate_advice(loaded, index, plan, served)}",
        where,
    )


def gpus_hold_model(plan: OffloadPlan) -> bool:
    """Whether the machine's GPUs hold the model under llama.cpp: every weight but the input embedding, and its KV cache.

    The one rule for the hardware.fixed advice that names the serving engines' twin (review78 item 5): the rate
    refusals' advice (:func:`_rate_advice`), the prompt pass's text (:func:`_pass_text`) and the plan's
    ``fixed-serving-engines`` finding. The input embedding is left out: llama.cpp keeps it in RAM whatever the VRAM (a
    lookup). llama.cpp keeps the KV cache of a layer on the CPU with its weights, so a cache in RAM is a weight off the
    GPUs too. Where the GPUs do not hold it, vLLM and SGLang, which keep every weight and the KV cache on the GPUs, are
    not offered.
    """
    return not plan.placement.offloaded


def _pass_text(plan: OffloadPlan) -> str:
    """What a prompt pass's time is spent on: the weights held off the GPUs copied to them, or the GPUs in turn."""
    if not gpus_hold_model(plan):
        return "the weights held off the GPUs copied to them a pass"
    # newuser77 item 11: said of 8 x MI300X holding every weight; llama.cpp's layer split runs one GPU at a time
    return f"every weight on the GPUs, {plan.engine}'s layer split running one GPU at a time"


def _rate_advice(loaded: LoadedWorkload, index: int, plan: OffloadPlan, most_rps: float) -> str:
    """What to do about a rate the machine misses under llama.cpp: the same server under vLLM / SGLang where it serves it.

    newuser77 item 11: "plan bought hardware" was said to the owner of 8 x MI300X whose vLLM replicas make the rate.
    The twin is offered only where the GPUs hold the model (:func:`gpus_hold_model`), as the plan's finding is, and,
    where it misses the rate too, only where it serves more than ``most_rps``, the most the refusal says llama.cpp
    makes (hostile79 item 13: a twin serving 0.13 req/s within the SLOs was offered against llama.cpp's 0.411 prompt
    passes a second).
    """
    from generator.planner.fixed_engines import AS_OWNED, serving_engines

    lower = "lower requests_per_second"
    served = serving_engines(loaded, index) if gpus_hold_model(plan) else None
    if served is not None and not served.meets_rate and served.sustained_rps <= most_rps:
        served = None  # no better than the placement refused
    if served is None:
        return f"{lower}, or plan bought hardware (without hardware.fixed)"
    dep = loaded.workload.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    rate = dep.inference.requests_per_second
    twin = f"under {AS_OWNED} (one custom server of its GPUs and RAM): {served.text(rate)}"
    if served.meets_rate:
        return f"{lower}, or describe this server {twin}"
    return f"{lower}; {twin}, short of the rate too; or plan servers to buy beside it (hardware.inventory, buy: true)"


def slot_wait_at(spec: InferenceSpec, ttft_s: float, slots: StreamCapacity) -> SlotWait:
    """The wait for one of ``slots`` at the rate: each request holds one for its TTFT and its output at a slot's speed.

    With :attr:`StreamCapacity.speeds` a slot's speed is the one with as many decoding as hold a request
    (:func:`~generator.sizing.server_slots.state_slot_wait`), else the speed with all of them decoding; the prompts'
    passes pause every slot's decode (:attr:`StreamCapacity.prompt_share`). Infinite where a slot makes no tokens.
    """
    request_s = slot_request_s(spec, ttft_s, slots)
    if not all(map(math.isfinite, request_s)):
        return SlotWait(slots.streams, float(slots.streams), 1.0, math.inf)
    return state_slot_wait(spec.requests_per_second, request_s)


def slot_request_s(spec: InferenceSpec, ttft_s: float, slots: StreamCapacity) -> list[float]:
    """A request's seconds in a slot with 1, 2, ... all of ``slots`` decoding (infinite where a slot makes none).

    Its TTFT and its output at that speed, the prompts' passes pausing it; the last is with every slot decoding.
    """
    paused = max(0.0, 1.0 - slots.prompt_share)
    speeds = slots.speeds or (slots.stream_tokens_per_s,) * slots.streams
    return [ttft_s + spec.avg_output_tokens / (each * paused) if each * paused > 0 else math.inf for each in speeds]


def slot_slack_s(spec: InferenceSpec, ttft_s: float) -> float:
    """What the TTFT leaves the wait for a slot of the TTFT target (none where it misses it; no bound for a batch one)."""
    target_ms = effective_slo(spec)[0].slo.ttft_p95_ms
    return math.inf if target_ms is None else max(0.0, target_ms / 1000 - ttft_s)


def _slots_for_wait(
    spec: InferenceSpec, plan: OffloadPlan, start: StreamCapacity, at: Callable[[int], StreamCapacity | None]
) -> StreamCapacity | None:
    """The fewest slots from ``start`` (those the rate's tokens take) whose p95 wait for one fits the TTFT target.

    review74 item 6: the rate's tokens took 2 slots of Llama 3.3 70B at 0.01 req/s, about 119 s a request, and 44% of
    requests waited for one, 318 s at p95, where llama-server's own default runs 4 (``-np`` auto since
    https://github.com/ggml-org/llama.cpp/pull/16736). The wait over the slots, each as fast as the requests in them
    let it be (:func:`slot_wait_at`), must fit what the TTFT leaves of the target (nothing where the TTFT misses it:
    then at most one request in twenty waits); a batch service's need only drain (review76 item 10: 2 slots of
    6,000-token prompts held 200 s each at 0.01 req/s, a queue without bound). Slots are added within the KV cache the
    rate's slots take (``-c``: llama.cpp's unified cache holds ``-c`` over a request's tokens of them): a larger cache
    moves weights off the GPUs or leaves the prompt passes less room, slowing every request; save where the rate's
    slots do not drain: then any count that fits the machine (review76 item 11). On one cache more slots wait less, so
    counts double from ``start`` until one fits the wait or no longer fits the machine, the cache or the rate; then
    the fewest that fits the wait, found by halving, else the most the cache holds (review76 item 1: 6 were planned
    where 7 and 8 held the same placement). ``at(n)``: ``n`` slots placed with their speeds, None where they do not
    fit. None where one slot is the answer.
    """
    demand = spec.requests_per_second * spec.avg_output_tokens

    def held(streams: int) -> StreamCapacity | None:  # slots that fit and make the rate, with their speeds
        slots = at(streams)
        return slots if slots is not None and slots.meets(demand) else None

    def p95_s(slots: StreamCapacity) -> float:
        return slot_wait_at(spec, plan.cost.ttft_s, slots).p95_s

    first = held(start.streams) or start
    slack = slot_slack_s(spec, plan.cost.ttft_s)

    def fits(slots: StreamCapacity) -> bool:  # a batch service's: a wait that ends
        return math.isfinite(wait := p95_s(slots)) and wait <= slack

    if fits(first):
        return first if first.streams > 1 else None
    drains = math.isfinite(p95_s(first))
    chosen = _within_cache(first, held, fits) if drains else _draining(first, held, p95_s, fits)
    if chosen.streams == start.streams:
        return first if first.streams > 1 else None
    basis = "fits" if fits(chosen) else "cache" if drains else "drain"
    return chosen._replace(rate_streams=start.streams, wait_basis=basis)


def _within_cache(
    first: StreamCapacity, held: Callable[[int], StreamCapacity | None], fits: Callable[[StreamCapacity], bool]
) -> StreamCapacity:
    """The fewest slots from ``first`` in its KV cache whose wait fits, else the most its cache holds (least wait)."""

    def more(streams: int) -> StreamCapacity | None:
        slots = held(streams)
        return slots if slots is not None and slots.context_tokens <= first.context_tokens else None

    def fewest(low: int, high: StreamCapacity) -> StreamCapacity:  # ``high`` fits the wait, ``low`` does not
        while high.streams - low > 1:
            middle = (low + high.streams) // 2
            got = more(middle)
            high, low = (got, low) if got is not None and fits(got) else (high, middle)
        return high

    most, unfit = first, None
    while most.streams < MAX_STREAMS:
        got = more(min(2 * most.streams, MAX_STREAMS))
        if got is None:
            unfit = min(2 * most.streams, MAX_STREAMS)
            break
        if fits(got):
            return fewest(most.streams, got)
        most = got
    short = most.streams  # the most tried that does not fit the wait
    while unfit is not None and unfit - most.streams > 1:  # the most slots the cache holds, between the last two
        middle = (most.streams + unfit) // 2
        got = more(middle)
        most, unfit = (got, unfit) if got is not None else (most, middle)
    return fewest(short, most) if fits(most) else most


def _draining(
    first: StreamCapacity,
    held: Callable[[int], StreamCapacity | None],
    p95_s: Callable[[StreamCapacity], float],
    fits: Callable[[StreamCapacity], bool],
) -> StreamCapacity:
    """Where the rate's slots never drain (each holds a request its TTFT too): a few more counts, placed as they need.

    The fewest of ``first`` + 1, + 2, x 2, x 4 and x 8 that fits the wait, else the fewest whose queue drains: a larger
    cache may move weights off the GPUs, slowing every request, and the placement made again for it take yet more
    slots (the q4_k_m of Qwen3-235B on 2 x RTX 3090 went from 9 slots to 128 so); ``first`` where none drains.
    """
    counts = sorted({n for n in (first.streams + 1, first.streams + 2, 2 * first.streams, 4 * first.streams,
                                 8 * first.streams) if n <= MAX_STREAMS})  # fmt: skip
    tried = [slots for n in counts if (slots := held(n)) is not None]
    return next((s for s in tried if fits(s)), None) or next((s for s in tried if math.isfinite(p95_s(s))), first)


def _prompt_text(share: float, prefill_s: float, decode_demand: float) -> str:
    """What the prompts' passes take of the machine, and the decode rate left to make ('' where they take under 1%)."""
    if share < 0.01:
        return ""
    return (
        f", and their prompt passes take {share:.0%} of the machine's time ({prefill_s:,.2f} s each), so the slots must "
        f"decode {decode_demand:,.1f} tokens/s in the rest"
    )
