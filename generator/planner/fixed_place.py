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
from typing import TYPE_CHECKING, NamedTuple

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
)
from generator.sizing.precision import kv_cache_bits, weight_format
from generator.sizing.server_slots import state_slot_wait
from generator.sizing.serving_queue import SlotWait
from generator.sizing.slot_step import slot_step_text
from generator.units import figure_text
from generator.workload.models import InferenceDeployment, InferenceSpec

if TYPE_CHECKING:
    from generator.catalog.records import GpuSpec
    from generator.sizing.constants import Constants
    from generator.sizing.offload import Machine, OffloadPlan
    from generator.workload import LoadedWorkload

#: Counts under the fewest found by bisection that are tried too (:meth:`_SlotSearch._just_below`).
BELOW = 2

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
        return build_machine(fixed, bound=True)  # the plan's line binds llama.cpp to one node of several
    except InputError as exc:
        raise InputError(exc.message, loaded.document.locate(("hardware", "fixed"))) from None


def place_on_fixed(
    loaded: LoadedWorkload,
    index: int,
    machine: Machine,
    consts: Constants,
    context: int | None = None,
    others: bool = True,
) -> OffloadPlan:
    """Place deployment ``index`` on the machine, or raise the located reason it cannot run there.

    ``context``: the KV cache's tokens where the server's slots need more than ``max_context_tokens`` (a lone request's).
    ``others``: look for the precisions outside the allowed ones that would fit or decode faster (the plan's advice); the
    slot search leaves them out of the counts it tries, which they do not change (:class:`_SlotSearch`).
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
            spec.min_context_tokens, machine, spec.avg_input_tokens, consts, alternatives(model.architecture) if others else (),
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

    Placed across the NUMA nodes' RAM where one node's would not hold it, with the slots' KV cache. Returns the
    placement, the machine it is on, whether it spans nodes, the slots (None: one stream makes the rate and its wait),
    and a lone request's placement (the first; the slots' cache may have moved weights off the GPUs since, review73
    item 1b). ``validate`` runs it too: a rate beyond the machine is refused at its field by both (exit 3).

    The slots are the fewest whose cache, placed as the model is, holds them, and who on that placement make the rate
    beside their prompt passes with a p95 wait for one within what the TTFT leaves of the target (a batch service's:
    a wait that ends) (fix136, :class:`_SlotSearch`). The placement's KV cache, the rendered ``-c`` and the
    parallel-slots finding are then one figure, the slots' (review73 item 1, fix131). Until fix136 a loop placed the
    model with a cache, counted the slots on it, and placed again with theirs until the two agreed; it went round
    (0.04 req/s on review73's 2 x RTX 5090: 220,800 -> 195,500 -> 381,800 -> 220,800 tokens) and then took the slots
    filling one of its caches: 162 where 120 carry the rate and the wait, each slot slower for the weights the larger
    cache moved off the GPUs.
    """
    fixed = loaded.workload.hardware.fixed
    assert fixed is not None
    wider = wider_machine(machine, fixed)
    lone = place_over_nodes(lambda m: place_on_fixed(loaded, index, m, consts), machine, wider, _on_disk)
    _refuse_prompt_passes(loaded, index, lone[0])
    search = _SlotSearch(loaded, index, machine, wider, consts, lone)
    chosen = search.fewest()
    cache = search.cache(chosen.streams)
    if cache == lone[0].placement.context_tokens:
        plan, on, spans = lone
    else:  # placed again with the advice's other precisions, which the search's placements leave out
        again = functools.partial(place_on_fixed, loaded, index, consts=consts, context=cache)
        plan, on, spans = place_over_nodes(again, machine, wider, _on_disk)
    return plan, on, spans, chosen if chosen.streams > 1 else None, lone[0]


def _on_disk(placed: OffloadPlan) -> int:
    return placed.placement.disk_bytes


class _Trial(NamedTuple):
    """``streams`` slots on the placement made for their KV cache, timed there: whether they make the rate, and wait."""

    slots: StreamCapacity
    #: They make the rate's output tokens beside their prompt passes.
    makes: bool
    #: The p95 wait for one at the rate (infinite: the queue does not drain).
    p95_s: float
    #: They make the rate and the wait fits what the TTFT leaves of the target (a batch service's: it ends).
    fits: bool


class _SlotSearch:
    """The slot counts of one deployment on a fixed machine, each timed on the placement made for its own KV cache.

    ``n`` slots take a cache of ``n`` requests (llama.cpp's unified ``-kvu``; a lone request's context at least;
    ik_llama.cpp splits ``-c``, every slot holding a lone request's), placed as the model is: a larger cache leaves the
    GPUs fewer weights, so each count's slots are timed (:func:`slots_at`, with their speeds for 1..n decoding) and its
    prompt passes taken (the placement's prefill) on its own placement. Placements are kept by cache, trials by count.

    Passing (making the rate with the wait within the slack) is not monotone in ``n`` (every count 1..420 of
    Qwen3-235B on 2 x RTX 5090 at 15 rates, fix136 report): on one placement more slots make more tokens a step and
    wait less, but (a) at llama.cpp's streaming step (:meth:`ladder`) the slots' tokens fall (at 0.031 req/s 22..31
    pass, 32..67 do not, 68 on do); (b) the -ub the placement's prompt passes take flips with the cache; (c) the slot
    whose cache pushes a layer's weights off the GPUs can fail between two that pass (0.045: 167, 169 pass, 168 not);
    (d) near the memory's edge the cache moves weights off faster than a slot adds, and the passing counts end (0.051:
    only 258 and 259 pass). So: a ladder of counts (:meth:`ladder`) to the first that passes, bisection between it
    and the rung below, the counts just under the result (:meth:`_just_below`), and where no rung passes a search for
    the counts that make the most (:meth:`_peak`). At those 15 rates it takes the fewest the brute force does.
    """

    def __init__(
        self,
        loaded: LoadedWorkload,
        index: int,
        machine: Machine,
        wider: Machine | None,
        consts: Constants,
        lone: tuple[OffloadPlan, Machine, bool],
    ) -> None:
        dep = loaded.workload.deployments[index]
        assert isinstance(dep, InferenceDeployment)
        self.loaded, self.index, self.machine, self.wider, self.consts = loaded, index, machine, wider, consts
        self.spec = dep.inference
        self.arch = loaded.models[dep.name].architecture
        self.request = self.spec.avg_input_tokens + self.spec.avg_output_tokens
        self.demand = self.spec.requests_per_second * self.spec.avg_output_tokens
        self.context = lone[0].placement.context_tokens  # a lone request's (shortened where min_context_tokens allowed)
        self.split = splits_context_over_slots(lone[0].engine)
        self.placements: dict[int, tuple[OffloadPlan, Machine, bool] | None] = {self.context: lone}
        self.trials: dict[int, _Trial | None] = {}

    def cache(self, streams: int) -> int:
        """The KV cache's tokens ``streams`` slots take."""
        if self.split:
            return streams * max(self.context, self.request)
        return max(self.context, streams * self.request)

    def placed(self, tokens: int) -> tuple[OffloadPlan, Machine, bool] | None:
        """The deployment placed with a KV cache of ``tokens`` (None where it does not fit the machine so)."""
        if tokens not in self.placements:
            again = functools.partial(place_on_fixed, self.loaded, self.index, consts=self.consts, context=tokens, others=False)
            try:
                self.placements[tokens] = place_over_nodes(again, self.machine, self.wider, _on_disk)
            except InfeasibleError:
                self.placements[tokens] = None
        return self.placements[tokens]

    def trial(self, streams: int) -> _Trial | None:
        """``streams`` slots on the placement made for their cache; None where they do not fit the machine."""
        if streams not in self.trials:
            self.trials[streams] = self._timed(streams)
        return self.trials[streams]

    def _timed(self, streams: int) -> _Trial | None:
        cache = self.cache(streams)
        placed = self.placed(cache)
        # the placement must hold the whole cache (plan_offload shortens it where min_context_tokens allows)
        if placed is None or placed[0].placement.context_tokens != cache:
            return None
        plan, on, _ = placed
        spec = self.spec
        prompts = spec.requests_per_second * plan.cost.prefill_s  # the share of the machine's time prompts take
        # at the -ub the placement runs (newuser85: placed at 512, the slots timed a layer's experts the -ub 1024 buffer
        # moves off the GPU as still on it: gpt-oss-120b on an RTX 4090, 36.97 tokens/s alone against the decode's 35.82)
        consts = self.consts._replace(offload_ubatch_tokens=plan.ubatch_tokens)
        args = (
            self.arch, plan.weight_format, kv_cache_bits(spec.kv_cache_precision), self.context, on, consts,
            spec.avg_input_tokens + spec.avg_output_tokens // 2, self.request, streams, plan.engine, prompts,
        )  # fmt: skip
        slots = slots_at(*args)
        if slots is None or slots.context_tokens != cache:
            return None
        if not slots.meets(self.demand):  # short of the rate's tokens: their queue grows without bound
            return _Trial(slots, False, math.inf, False)
        slots = slots_at(*args, with_speeds=True) or slots  # each count's speed, for the wait
        makes = slots.meets(self.demand)
        p95 = slot_wait_at(spec, plan.cost.ttft_s, slots).p95_s
        fits = makes and math.isfinite(p95) and p95 <= slot_slack_s(spec, plan.cost.ttft_s)
        return _Trial(slots, makes, p95, fits)

    def _passes(self, streams: int, test: Callable[[_Trial], bool]) -> bool:
        got = self.trial(streams)
        return got is not None and test(got)

    def _bisect(self, test: Callable[[_Trial], bool], low: int, high: int) -> int:
        """The fewest count in (``low``, ``high``] that passes ``test``, ``high`` passing and ``low`` not."""
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if self._passes(middle, test) else (middle, high)
        return high

    def _first(self, test: Callable[[_Trial], bool], above: int = 0) -> int | None:
        """The fewest count above ``above`` passing ``test``, bracketed by the counts tried so far; None if none did."""
        passed = [n for n, t in self.trials.items() if n > above and t is not None and test(t)]
        if not passed:
            return None
        high = min(passed)
        failed = [n for n, t in self.trials.items() if above <= n < high and (t is None or not test(t))]
        return self._bisect(test, max(failed, default=above), high)

    def ladder(self) -> list[int]:
        """The counts tried in turn: doubling from 1, with the two either side of llama.cpp's streaming step as rungs.

        A step of ``offload_min_batch_tokens`` (32) decoding streams or more copies the weights held in RAM to the GPUs
        rather than the CPU multiplying them (:func:`offload_cost`): on 2 x RTX 5090, 31 slots of Qwen3-235B make
        about 16 tokens/s together, 32 about 10. Passing is not monotone across that step (at 0.031 req/s 22 to 31
        slots pass, 32 to 67 do not, 68 on do), so the fewest is bisected between rungs on one side of it only.
        """
        step = self.consts.offload_min_batch_tokens
        counts = {min(2**k, MAX_STREAMS) for k in range(11)} | {max(1, step - 1), step}
        return sorted(n for n in counts if n <= MAX_STREAMS)

    def fewest(self) -> StreamCapacity:
        """The slots taken: the fewest that pass; else those closest to it (:meth:`_closest`); else refused."""
        last, unfit = 0, None
        for streams in self.ladder():  # until a count passes or no longer fits the machine
            got = self.trial(streams)
            if got is None:
                unfit = streams
                break
            last = streams
            if got.fits:
                break
        if unfit is not None:  # none passed: the most slots the machine's memory holds, between the last two counts
            while unfit - last > 1:
                middle = (last + unfit) // 2
                last, unfit = (middle, unfit) if self.trial(middle) is not None else (last, middle)
        rate = self._first(lambda t: t.makes)  # the fewest whose tokens make the rate
        if rate is None:
            raise self._refusal(unfit is not None)
        if not any(t is not None and t.fits for t in self.trials.values()):
            self._peak(rate, last)  # the rate made, the wait not: the counts that make the most, where it waits least
        chosen = self._first(lambda t: t.fits)
        while chosen is not None and (lower := self._just_below(chosen)) is not None:
            chosen = lower
        basis = "fits"
        if chosen is None:
            chosen, basis = self._closest(rate)
        held = self.trial(chosen)
        assert held is not None
        if chosen == rate:
            return held.slots
        return held.slots._replace(rate_streams=rate, wait_basis=basis)

    def _just_below(self, streams: int) -> int | None:
        """The fewest of the :data:`BELOW` counts under ``streams`` that pass, where one does (None where none does).

        A count one more slot's cache pushes a layer's weights off the GPUs can fail between two that pass (at 0.045
        req/s on 2 x RTX 5090: 169 passes, 170 does not, 171 does), which bisection alone can land beyond.
        """
        below = [n for n in range(max(1, streams - BELOW), streams) if (t := self.trial(n)) is not None and t.fits]
        return min(below, default=None)

    def _peak(self, low: int, high: int) -> int:
        """The count in [``low``, ``high``] whose slots make the most tokens/s, by ternary search (a few either side).

        Past the rate's count each slot added makes more until its cache moves weights off faster than it adds; near that
        peak the slots finish requests fastest, and the wait can fit there alone (at 0.051 req/s on 2 x RTX 5090: 258
        and 259 slots of 204 to about 420 that make the rate).
        """

        def made(streams: int) -> float:
            got = self.trial(streams)
            return got.slots.served_tokens_per_s if got is not None else -1.0

        while high - low > 4:
            third = (high - low) // 3
            if made(low + third) < made(high - third):
                low += third + 1
            else:
                high -= third
        return max(range(low, high + 1), key=made)

    def _closest(self, rate: int) -> tuple[int, str]:
        """Where no count's wait fits: from the fewest that make the rate, those that wait less without moving weights.

        Their queue drains: the most their cache holds (a lone request's context holds more than one where requests are
        short), more slots only growing the cache, where those make the rate too and wait no longer (passing is not
        monotone in the count: past llama.cpp's streaming step the slots make fewer tokens, review81 item 2); it does
        not: the fewest more whose queue drains (``drain``), else the rate's (the slot-wait warning says the queue).
        """
        held = self.trial(rate)
        assert held is not None
        if math.isfinite(held.p95_s):
            cache = self.cache(rate)
            most = cache // max(self.context, self.request) if self.split else cache // self.request
            more = self.trial(most) if most > rate else None
            return (most, "cache") if more is not None and more.makes and more.p95_s <= held.p95_s else (rate, "")
        drains = self._first(lambda t: t.makes and math.isfinite(t.p95_s), above=rate)
        return (drains, "drain") if drains is not None else (rate, "")

    def _refusal(self, memory_bound: bool) -> InfeasibleError:
        """No count makes the rate: the refusal at the rate, naming the count that makes the most and why it is short."""
        where = self.loaded.document.locate(("deployments", self.index, "inference", "requests_per_second"))
        made = [t for t in self.trials.values() if t is not None]
        if not made:
            return InfeasibleError(f"one slot's KV cache of {self.cache(1):,} tokens does not fit hardware.fixed", where)
        best = max(made, key=lambda t: (t.slots.served_tokens_per_s, -t.slots.streams))
        slots = best.slots
        placed = self.placed(slots.context_tokens)
        assert placed is not None
        plan = placed[0]
        spec = self.spec
        request, demand, prompts = self.request, self.demand, slots.prompt_share
        decode_demand = demand / (1 - prompts)  # tokens/s the slots must make while no prompt pass runs
        # an engine that splits -c over its slots holds a whole request in each (ik_llama.cpp)
        each = f", {slots.context_tokens // slots.streams:,} a slot," if self.split else ""
        why = (
            "the best count that fits its memory, more KV cache leaving less of it to the weights"
            if memory_bound
            else f"specgen looks no further than {MAX_STREAMS:,}"
        )
        # the rate r it serves: r x output tokens = slots' tokens/s x (1 - r x prefill_s)
        served = slots.tokens_per_s / (spec.avg_output_tokens + slots.tokens_per_s * plan.cost.prefill_s)
        return InfeasibleError(
            f"{figure_text(spec.requests_per_second)} req/s x {spec.avg_output_tokens:,} output tokens need "
            f"{demand:,.1f} tokens/s{_prompt_text(prompts, plan.cost.prefill_s, decode_demand)}; hardware.fixed makes "
            f"at most {tokens_per_s_text(slots.tokens_per_s)} with {slots.streams} {plan.engine} server slot(s) at "
            f"{plan.weight_format.name} ({why}; a KV cache of {slots.context_tokens:,} tokens{each} for requests of "
            f"{request:,}, placed for them; {slot_step_text(slots.mode, plan.engine, 0.0, 0.0)}): about "
            f"{served:.3g} req/s; {_rate_advice(self.loaded, self.index, plan, served)}",
            where,
        )


def _refuse_prompt_passes(loaded: LoadedWorkload, index: int, plan: OffloadPlan) -> None:
    """Refuse a rate whose prompt passes alone take the machine's whole time on a lone request's placement.

    The requests' prompt passes take the machine from the slots' decode: each takes its prefill time (the weights held
    off the GPUs copied to them once a pass), so the slots must decode the demand in what is left of each second,
    ``1 - rate x prefill_s`` (newuser68 item 1: 0.1 req/s of 800-token prompts on Qwen3-235B with 92 GiB of experts
    in RAM, 7.48 s a prompt, took 75% of the machine, and 25 slots were planned at 99% of its decode alone). The lone
    request's placement holds the most weights on the GPUs, so its prompt pass is the fastest any slots' cache leaves.
    """
    dep = loaded.workload.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    spec = dep.inference
    prompts = spec.requests_per_second * plan.cost.prefill_s
    if prompts >= 1:
        raise InfeasibleError(
            f"{figure_text(spec.requests_per_second)} req/s of {spec.avg_input_tokens:,}-token prompts need "
            f"{prompts:.0%} of hardware.fixed's time for their prompt passes alone ({plan.cost.prefill_s:,.2f} s each, "
            f"{_pass_text(plan)}), {1 / plan.cost.prefill_s:.3g} a second at most with no time left to decode; "
            f"{_rate_advice(loaded, index, plan, 1 / plan.cost.prefill_s)}",
            loaded.document.locate(("deployments", index, "inference", "requests_per_second")),
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


def _prompt_text(share: float, prefill_s: float, decode_demand: float) -> str:
    """What the prompts' passes take of the machine, and the decode rate left to make ('' where they take under 1%)."""
    if share < 0.01:
        return ""
    return (
        f", and their prompt passes take {share:.0%} of the machine's time ({prefill_s:,.2f} s each), so the slots must "
        f"decode {decode_demand:,.1f} tokens/s in the rest"
    )
