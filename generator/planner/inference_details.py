"""A service's details in the plan: its serving figures, slot waits, routing and the replicas' bounds as text."""

from __future__ import annotations

import math
from typing import Any

from generator.catalog.host_cpu import platform_host_time_scale
from generator.catalog.tool_parsers import chat_template, tool_call_parser, tool_template_reason
from generator.planner.choice_reasons import slo_default_reason
from generator.planner.cold_start import model_download, model_load_seconds
from generator.planner.inference import (
    OperatingPoint,
    ReplicaShape,
    cached_prompt_text,
    engine_constants,
    expert_network,
    looser_slot_queue,
    max_running,
    point_for_rate,
    request_seconds_at,
    step_token_budget,
    ttft_basis_text,
)
from generator.planner.lora_plan import lora_details, lora_reason
from generator.planner.lora_replica import with_lora_adapters
from generator.planner.multi_host import (
    data_parallel_host_args,
    every_hop_leaves_host,
    expert_exchange_text,
    multi_host_note,
    replica_hosts,
    stage_hop_text,
)
from generator.planner.nodes import node_link
from generator.planner.online_quantization import quantized_online_from, served_file_bytes
from generator.planner.option import Option, sustained_rps
from generator.planner.plan import DeploymentPart, layout_name
from generator.planner.pooling import (
    encoder_pass_text,
    pooling_details,
    pooling_engine_text,
    pooling_kv_text,
    pooling_load_text,
    pooling_pass_text,
)
from generator.planner.reason_text import _gib, _percent
from generator.planner.slo import effective_slo, latency_bound, rate_replicas, replicas_needed, replicas_text
from generator.planner.split import part_rates, split_rest
from generator.planner.spread import POD_GRACE_DEFAULT_S, option_tolerant
from generator.planner.tco import acquired_as
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.engine_runtime import ENGINE_NAMES, MAX_SEQUENCES_FLAG
from generator.sizing.gpu_share import shared_gpu
from generator.sizing.memory import InferenceMemory
from generator.sizing.performance import (
    accelerator_for,
    dequantized_rates,
    host_staged_text,
    peer_link_share,
    saturated_throughput,
    step_budget_batch,
)
from generator.sizing.serving_queue import (
    SlotParts,
    least_spread_mix,
    pooled_slack,
    pooled_slot_wait,
    resolved,
    routed,
    slot_replicas,
    tail_miss,
)
from generator.sizing.sglang_kv import sglang_mem_fraction
from generator.units import figure_text, long_seconds_text, seconds_text
from generator.words import counted
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, InferenceSpec

#: Details of a split deployment that hold for the whole of it (the per-replica sizing is each part's).
_WHOLE_DEPLOYMENT_DETAILS = (
    "requests_per_s",
    "context_tokens",
    "service_class",
    "slo_ttft_p95_ms",
    "slo_tpot_ms",
    "serving_engine",
    "task",
    "slo_latency_p95_ms",
    "lora",
)


def replica_note(opt: Option, engine: str) -> str | None:
    """:func:`multi_host_note` for an inference option's (part's) replicas, served by ``engine``."""
    candidate = opt.candidate
    platform, par = opt.hardware.platform, opt.shape.par
    per_host = candidate.gpus_per_node // platform.hosts
    host_args = data_parallel_host_args(engine, par.tp, par.ep, par.pp, per_host) if platform.hosts == 1 else ()
    return multi_host_note(platform, candidate.gpus_per_node, par.gpus, host_args, engine)


def _serving_details(
    loaded: LoadedWorkload, dep: InferenceDeployment, opt: Option, pools: list[str], consts: Constants
) -> tuple[dict[str, Any], list[str], tuple[DeploymentPart, ...]]:
    """Details, reasons and (split over two server kinds) the parts of an inference deployment.

    A split one's details hold only what is true of the whole deployment (each part carries its own
    sizing); its reasons say how the replicas and the rate are divided, then each part's sizing.
    """
    if not opt.parts:
        details, reasons = _inference_details(loaded, dep, opt, consts)
        return details | _sustained_detail(opt), reasons, ()
    spec, slo_defaults = effective_slo(dep.inference)
    total = spec.requests_per_second
    rates = part_rates(opt, total)
    sized = [_inference_details(loaded, dep, part, consts, rate) for part, rate in zip(opt.parts, rates, strict=True)]
    parts = tuple(
        DeploymentPart(
            pool=pool,
            platform_id=part.hardware.platform.id,
            gpu_id=part.hardware.gpu.id,
            tp=part.candidate.tp,
            pp=part.candidate.pp,
            replicas=part.candidate.replicas,
            gpus=part.candidate.gpus,
            servers=part.candidate.nodes,
            owned_servers=part.candidate.owned_nodes,
            requests_per_s=round(rate, 3),
            requests_per_s_per_replica=details["requests_per_s_per_replica"],
            requests_per_s_per_replica_max=details["requests_per_s_per_replica_max"],
            batch_per_replica=details["batch_per_replica"],
            max_num_seqs=details["max_num_seqs"],
            max_num_batched_tokens=details.get("max_num_batched_tokens"),
            ttft_p95_s=details.get("ttft_p95_s", details.get("latency_p95_s", 0.0)),  # pooling: its request's latency
            tpot_s=details.get("tpot_s", 0.0),
            memory_per_gpu=serving_memory(part.replica_shape.memory),
            weights_bytes=details["weights_bytes"],
            kv_cache_tokens_per_replica=details["kv_cache_tokens_per_replica"],
            mem_fraction_static=details.get("mem_fraction_static"),
            expert_parallel=details.get("expert_parallel"),
        )
        for part, rate, pool, (details, _) in zip(opt.parts, rates, pools, sized, strict=True)
    )
    provider = opt.hardware.platform.provider
    where = [
        f"{p.replicas} replica(s) ({counted(p.gpus, 'GPU')}, TP{p.tp}"
        + (f" x PP{p.pp}" if p.pp > 1 else "")
        + ") on "
        + (f"{p.owned_servers} owned" if p.owned_servers else "")
        + (" and " if p.owned_servers and p.servers > p.owned_servers else "")
        + (f"{p.servers - p.owned_servers} {acquired_as(provider, o.candidate)}" if p.servers > p.owned_servers else "")
        + f" {p.platform_id} ({p.gpu_id}) in pool {p.pool}"
        for p, o in zip(parts, opt.parts, strict=True)
    ]
    slowest = min(p.requests_per_s_per_replica_max for p in parts)
    replicas = sum(p.replicas for p in parts)
    owned, rest = opt.parts
    pool = tuple((p.candidate.replicas, p.replica_shape.slot_queue) for p in opt.parts)
    beside = split_rest(owned)
    # the rate's rule alone (N+k included), and what the wait for a place in the batch adds to it (fix85)
    by_rate = owned.candidate.replicas + beside._replace(owned_queue=None).replicas(spec, rest.replica_shape)
    rate_only, needed = beside.counts(spec, rest.replica_shape)
    more = (
        f", and {needed - rate_only:,} more for the wait for a place in the batch (below): {replicas} in all"
        if needed > rate_only
        else ""
    )
    headline = (
        f"split over two server kinds: {where[0]}, {where[1]}; {_split_routing_text(spec)}, so the service needs "
        f"{_replicas_rule(spec, slowest)} = {by_rate} replicas at the slower part's {slowest:.3f} req/s per replica{more}, "
        f"{parts[0].replicas} of them on the free owned {parts[0].platform_id} servers; each replica serves "
        f"{total / replicas:.3f} req/s ({parts[0].requests_per_s:.2f} and {parts[1].requests_per_s:.2f} req/s per part), "
        "within the SLOs on both parts"
    )
    reasons = [headline]
    whole = {k: sized[0][0][k] for k in _WHOLE_DEPLOYMENT_DETAILS if k in sized[0][0]}
    queues = tuple((n, q) for n, q in pool if q is not None)
    if len(queues) == len(pool):  # the wait for a place over both parts' places, as one layout's (fix85, m74b item 7)
        bounds = [p.replica_shape.max_point for p in opt.parts]
        ttft_most = max(b.ttft_s if b.idle_bound is None else b.idle_bound.ttft_s for b in bounds)
        idle = any(b.idle_bound is not None for b in bounds)
        names = tuple(p.platform_id for p in parts)
        reasons.append(_slot_text(spec, queues, needed, rate_only, ttft_most, names, idle))
        whole.update(_slot_wait_details(spec, queues))
    reasons += [f"{p.platform_id} part: {r}" for p, (_, rs) in zip(parts, sized, strict=True) for r in rs]
    if slo_defaults:
        reasons.append(slo_default_reason(slo_defaults))
    return whole | _sustained_detail(opt), reasons, parts


def _sustained_detail(opt: Option) -> dict[str, float]:
    """``requests_per_s_sustained``: what a service's replicas sustain together within the SLOs, the wait included.

    The capacity the plan's reasons name ('18.71 req/s (4 x 4.92, less the wait for a place in the batch)'), which
    ``diff`` takes a rate's share of: one definition in both (newuser79 item 9: the plan said 64% of it used at
    12 req/s and ``diff`` 61% of capacity, replicas x the most a replica sustains).
    """
    return {"requests_per_s_sustained": round(sustained_rps(opt, served=True), 3)}


def _slot_wait_details(spec: InferenceSpec, pool: SlotParts) -> dict[str, Any]:
    """``slot_wait_share`` and ``slot_wait_p95_s`` (None where the queue grows without bound) over ``pool``'s places.

    The wait the slot line states (:func:`_slot_text`), for a service of one layout and a split's parts alike.
    """
    wait = pooled_slot_wait(spec.requests_per_second, pool)
    placed = resolved(spec.requests_per_second, pool)  # the places at the planned count, as the slot line says them
    caps = [q.per_replica for _, q in placed]
    return {
        **wait.details(),
        # the router the replicas are sized behind (newuser73 item 14): its routing and the requests each replica may
        # have in flight, which a HAProxy maxconn or a gateway's limit must be set to (under even routing no router
        # holds them: the places each replica's own queue is sized at). Always a list, one a part in the layout's
        # order, one item for a service of one layout (review76 item 14: an int or a list, by the split)
        "router": {"routing": spec.routing, "max_in_flight_per_replica": caps, "places": wait.servers},
    }


def _split_routing_text(spec: InferenceSpec) -> str:
    """How a split's headline says its requests are shared (fix85), as ``inference.routing`` has it (review74 1, review75)."""
    if spec.routing == "even":
        return (
            "requests are routed evenly across the replicas (each replica's mean share, as a Kubernetes Service or "
            "round-robin balancer sends it, each replica its own queue for a place in the batch, below: "
            "inference.routing even)"
        )
    return (
        "the replicas are counted at an even share of the requests each, the slower part's rate bounding it ("
        "a router that holds each request until any replica has a place free, inference.routing free_place, sends "
        "each part about the share of the places it frees, which the wait for a place in the batch, below, counts)"
    )


def _load_text(point: OperatingPoint) -> str:
    """A replica's most load as the reasons say it: its batch, or its share of time in prefill below one in flight."""
    if point.idle_bound is None:
        return f"batch {point.batch}" + (f"; {point.binds}" if point.binds else "")
    return f"below one sequence in flight: busy in prefill {_percent(point.prefill_busy)} of the time"


def _margin_text(shape: ReplicaShape) -> str:
    """How the plan counts a replica whose setup public runs measured slower than the model (newuser30 item 3)."""
    if shape.margin == 1.0:
        return ""
    return (
        f"planned at {round(shape.planned_requests_per_s, 3):.2f} req/s, that over {shape.margin:g}: every public run "
        "of this setup measured at least that much below the model (throughput-gap); "
    )


def _margin_load_text(shape: ReplicaShape) -> str:
    """What the planned load's latencies are where the plan counts a replica below the model (newuser50 item 7)."""
    if shape.margin == 1.0:
        return ""
    return (
        f" (the model's at that load; replicas {shape.margin:g}x slower than it, as the runs measured, run larger batches "
        "at a longer TPOT)"
    )


def _replicas_rule(spec: InferenceSpec, slowest: float) -> str:
    """How a split's replicas follow from its rate (:func:`~generator.planner.slo.replicas_needed`), as arithmetic."""
    per_replica = f"({slowest:.3f} x {spec.max_utilization:g})" if spec.max_utilization < 1 else f"{slowest:.3f}"
    rule = f"ceil({figure_text(spec.requests_per_second)} / {per_replica})"
    if spec.nodes_down_tolerated:  # review42 item 2: "ceil(24 / 4.471) = 8" where N+1 added two
        k = spec.nodes_down_tolerated
        rule += f" + the replicas its {k} busiest host(s) hold (nodes_down_tolerated: N+{k})"
    return f"max({spec.min_replicas} (min_replicas), {rule})" if spec.min_replicas > 1 else rule


def idle_bound_note(dep: InferenceDeployment, opt: Option, replicas: int) -> str | None:
    """Why a deployment's replicas are kept almost idle, what a looser TTFT target gives, and the queue assumed.

    ``opt``: the replicas of one layout (a split's part); ``replicas``: the whole service's.

    None where a replica runs at least one sequence in flight (review 12 item 2: 411 GPUs were bought at 5% busy
    for a TTFT target 0.3% above a lone prompt's p95, and nothing said so).
    """
    shape = opt.replica_shape
    point, bound = shape.max_point, shape.max_point.idle_bound
    target = effective_slo(dep.inference)[0].slo.ttft_p95_ms
    if bound is None or target is None:
        return None
    lone_ms = bound.lone_ttft_p95_s * 1000
    text = (
        f"deployment {dep.name}: each replica is kept busy in prefill {_percent(point.prefill_busy)} of the time, "
        f"below one sequence in flight, so that 95% of prompts find no queue: the TTFT p95 target ({target:,.0f} ms) "
        f"leaves {target - lone_ms:,.0f} ms over a lone prompt's p95 ({lone_ms:,.0f} ms)"
    )
    if bound.looser_requests_per_s > 1.01 * point.requests_per_s:
        # the rate asked, not the replicas' capacity (which rounds up past it): what planning at that target gives
        queue = looser_slot_queue(dep.inference, point, shape.margin)  # and their wait for a place (review74 item 3)
        fewer = replicas_needed(dep.inference, bound.looser_requests_per_s / shape.margin, slots=queue)
        text += (
            f"; at {bound.looser_ttft_p95_ms:,.0f} ms a replica would take {bound.looser_requests_per_s:.3g} req/s "
            f"instead of {point.requests_per_s:.3g} (about {fewer:,} replicas instead of {replicas:,})"
            if fewer < replicas
            else f"; at {bound.looser_ttft_p95_ms:,.0f} ms a replica would take {bound.looser_requests_per_s:.3g} req/s "
            f"instead of {point.requests_per_s:.3g}, but no fewer replicas (about {fewer:,}: the wait for a place in "
            "the batch holds them)"
        )
    else:
        text += "; a looser TTFT target would not help: the TPOT target holds the rate too"
    return text + (
        ". The prompts' queue in that TTFT p95 is each replica's own, as when a Kubernetes Service routes prompts at "
        "random (a least-loaded router queues far less over many replicas); the wait for a place in a replica's batch "
        f"is stated apart, for inference.routing {dep.inference.routing}"
    )


def _slot_text(
    spec: InferenceSpec,
    pool: SlotParts,
    needed: int,
    rate_only: int,
    ttft_most_s: float,
    names: tuple[str, ...] = (),
    idle: bool = False,
) -> str:
    """The wait for a place in the batch over the replicas' places (newuser72 item 6): Erlang C, and what it sized.

    The replicas are planned at up to the batch each may run; a request arriving while every place is taken waits for
    one, for minutes where requests last minutes, which the TTFT p95 of a request placed does not count. ``pool``: the
    replicas and places of each layout (a split's two parts, named ``names``: one queue over both, fix85);
    ``needed``: the replicas the rate and that wait need, ``rate_only`` the rate alone; ``ttft_most_s``: the TTFT p95
    at the most load (a split's slower part's); ``idle``: the replicas run below one sequence in flight (a request's
    time its mean, not the batch over the rate: review74 item 3). The parenthesis says the routing the wait is sized
    for (``inference.routing``, review74 item 1).
    """
    most = pool
    # below one in flight, or past the rule at the most load: at the replicas' share (review74 items 3 and 5)
    pool = resolved(spec.requests_per_second, pool)
    laddered = not idle and any(q != m._replace(rungs=None) for (_, q), (_, m) in zip(pool, most, strict=True))
    wait = pooled_slot_wait(spec.requests_per_second, pool)
    load = "the most load"
    if (idle or laddered) and (target_ms := spec.slo.ttft_p95_ms) is not None and (slack := pooled_slack(pool)) is not None:
        ttft_most_s, load = target_ms / 1000 - slack, "that load"
    if not math.isfinite(wait.p95_s):
        waited = "every place is taken: the queue for one grows without bound"
    elif wait.waits <= 0.05:
        waited = f"{_percent(wait.waits)} of requests wait for one (p95 wait 0)"
    else:
        waited = f"{_percent(wait.waits)} of requests wait for one, p95 wait {long_seconds_text(wait.p95_s)}"
    if len(pool) == 1 or len({q for _, q in pool}) == 1:  # one layout's places (or a split's two alike)
        replicas, queue = sum(n for n, _ in pool), pool[0][1]
        held = f"{long_seconds_text(queue.request_s)}: {_held_text(idle, laddered)}"
        places = f"{replicas:,} replica(s) x {queue.per_replica:,} places"
    else:
        times = " and ".join(f"{long_seconds_text(q.request_s)} on {name}" for name, (_, q) in zip(names, pool, strict=True))
        freed = " and ".join(f"{n * q.per_replica / q.request_s:.3g}" for n, q in pool)
        held = (
            f"{long_seconds_text(wait.offered / spec.requests_per_second)}: its TTFT and its output at the TPOT, each replica at "
            f"its most load ({times}, weighted by the requests each part's places take with all of them busy: they free "
            f"{freed} places a second)"
            if spec.routing == "free_place"
            else f"{long_seconds_text(wait.offered / spec.requests_per_second)} on average: its TTFT and its output at the TPOT, "
            f"each replica at its most load ({times}, each replica sent an even share)"
        )
        places = " + ".join(f"{n:,} replica(s) x {q.per_replica:,} places" for n, q in pool)
    if spec.routing == "even" and (len(pool) == 1 or len({q for _, q in pool}) == 1):
        # newuser73 item 4: each replica's own queue of b places, not one pooled c the routing does not have
        replicas = sum(n for n, _ in pool)
        share = figure_text(spec.requests_per_second / replicas)
        text = (
            f"a request holds a place in the batch for {held}; {replicas:,} queue(s) of {pool[0][1].per_replica:,} places "
            f"(b), each {_percent(wait.utilisation)} busy at {share} req/s of the "
            f"{figure_text(spec.requests_per_second)}: {waited} {_routing_text(spec)}"
        )
    else:
        text = (
            f"a request holds a place in the batch for {held}; {places} = {wait.servers:,} "
            f"(c), {_percent(wait.utilisation)} busy at {figure_text(spec.requests_per_second)} req/s: {waited} "
            f"{_routing_text(spec)}"
        )
    target = spec.slo.ttft_p95_ms or 0.0
    if pooled_slack(pool) is not None:  # the rule in figures (fix90, review74 item 4): the two tails convolved
        miss = tail_miss(spec.requests_per_second, pool)
        text += (
            f"; with the TTFT once placed (p95 {ttft_most_s * 1000:,.1f} ms at {load}), P(TTFT + wait > {target:,.0f} ms) "
            f"= {_miss_text(miss)}, {'within' if miss <= 0.05 else 'past'} the 5% the p95 target allows (the TTFT's "
            "tail and the wait's convolved: the p95s do not add)"
        )
    if needed > max(rate_only, spec.min_replicas):  # the wait sized it past the rate and min_replicas (review74)
        text += (
            f"; {needed - rate_only:,} replica(s) more than the rate alone needs ({rate_only:,}) keep P(TTFT + wait > "
            f"{target:,.0f} ms) within 5%"
        )
    elif pooled_slack(pool) is None:
        text += "; no TTFT target holds it (service_class batch)"
    return text


def _miss_text(share: float) -> str:
    """A share of requests past the TTFT target, to a tenth of a percent (a hundredth below 1%)."""
    return f"{share:.2%}" if share < 0.01 else f"{share:.1%}"


def _held_text(idle: bool, laddered: bool = False) -> str:
    """What a request's time in a place is (:func:`_slot_text`): the batch over the rate, or below one in flight its mean.

    ``laddered``: the replicas at their share of the rate, below their most load (fix90, review74 item 5).
    """
    if laddered:
        return (
            "its mean TTFT and its output at the TPOT, the replica at its share of the rate (taken up to the next "
            "twentieth of its most), its places a batch meeting the SLOs there: a replica less loaded than its most "
            "runs more places at a shorter TTFT"
        )
    if idle:
        return (
            "its mean TTFT and its output at the TPOT, the replica below one sequence in flight at its share of the "
            "rate (taken up to the next twentieth of its most; a request's own time there, not the batch over the "
            "rate), its places the largest batch meeting the SLOs there"
        )
    return "its TTFT and its output at the TPOT, the replica at its most load"


def _routing_text(spec: InferenceSpec) -> str:
    """The queue the wait for a place is taken over, as ``inference.routing`` states it (review74 item 1)."""
    if spec.routing == "even":
        return (
            "(Erlang C of each replica, an M/M/b queue of its own: inference.routing even, each replica sent an even "
            "share of the requests whatever its load, as a Kubernetes Service or a round-robin balancer sends them, "
            "request times spread exponentially)"
        )
    return (
        "(Erlang C, an M/M/c queue: inference.routing free_place, a router that holds each request until a replica has "
        "a place free, request times spread exponentially; each replica's own queue, as a Kubernetes Service or a "
        "round-robin balancer makes, waits far longer: inference.routing even)"
    )


#: A router that holds each request until a server has a slot free (HAProxy's per-server maxconn and its backend queue).
HAPROXY_MAXCONN_DOCS = "https://www.haproxy.com/documentation/haproxy-runtime-api/reference/set-maxconn-server/"


def routing_note(dep: InferenceDeployment, opt: Option) -> str | None:
    """What the default routing assumes of the router, where an even share a replica would need more (review74 item 1).

    Under ``inference.routing: free_place`` the replicas are sized for one queue in front of every place; a Kubernetes
    Service (a random pick) or a round-robin balancer gives each replica its own queue (``even``), which waits far
    longer at the same count. None where the routing is ``even``, the wait is not sized, or even routing needs no more.
    """
    spec = effective_slo(dep.inference)[0]
    pieces = opt.parts or (opt,)
    pool = tuple((p.candidate.replicas, p.replica_shape.slot_queue) for p in pieces)
    queues = tuple((n, q) for n, q in pool if q is not None)
    if spec.routing != "free_place" or len(queues) != len(pool) or pooled_slack(queues) is None:
        return None
    rate, even = spec.requests_per_second, routed(queues, "even")
    (last, queue), beside = even[-1], even[:-1]  # a split's owned part held, its bought part grown (fix85)
    needed = slot_replicas(rate, queue, last, beside) - last
    if needed <= 0:
        return None
    replicas = sum(n for n, _ in queues)
    at_plan = pooled_slot_wait(rate, even)
    # places and slack at the planned count, as the slot line says them (below one in flight: the ladder's rung at the
    # replicas' share of the rate, review74 item 3; its most load's slack may be nil)
    placed = resolved(rate, queues)
    slack = pooled_slack(placed) or 0.0
    caps = " and ".join(sorted({f"{q.per_replica:,}" for _, q in placed}))
    requests = "request" if caps == "1" else "requests"
    waited = (
        "every replica's queue grows without bound"
        if not math.isfinite(at_plan.p95_s)
        else f"{_percent(at_plan.waits)} of requests would wait for a place, p95 {long_seconds_text(at_plan.p95_s)}"
    )
    return (
        f"deployment {dep.name}: its {replicas:,} replica(s) are sized for a router that holds each request until a "
        f"replica has a place in its batch free (inference.routing: free_place, the default): one queue in front of all "
        f"{sum(n * q.per_replica for n, q in placed):,} places, each replica sent at most {caps} {requests} in flight, as "
        f"HAProxy's per-server maxconn does, its requests past that queueing in the backend until a server slot frees "
        f"({HAPROXY_MAXCONN_DOCS}). A Kubernetes Service (kube-proxy picks a pod at random) or a round-robin balancer "
        f"gives each replica a queue of its own instead: at {replicas:,} replicas {waited}, against the "
        f"{long_seconds_text(slack)} the TTFT p95 target leaves, and {replicas + needed:,} replicas would keep it there; put "
        "such a router in front of the replicas, or set inference.routing: even to plan for a queue each"
    )


def _request_time_text(spec: InferenceSpec, point: OperatingPoint, request_s: float) -> str:
    """A request's time where a drain's default grace cuts it (newuser72 item 5): what the engine pods then need."""
    return (
        f"a request takes {long_seconds_text(request_s)} at the planned load (TTFT p95 {seconds_text(point.ttft_s)} + "
        f"{spec.avg_output_tokens:,} tokens x TPOT {point.tpot_s * 1000:.1f} ms), and a replica holds {point.batch:,} of "
        "them: a drain (a node upgrade, a Karpenter disruption, a scale-in) cuts those in flight past the pod's "
        f"terminationGracePeriodSeconds ({POD_GRACE_DEFAULT_S} s unless set); give the engine pods at least "
        f"{math.ceil(request_s):,} s and a preStop hook that stops admission and waits for the running requests "
        "(a Karpenter NodePool's terminationGracePeriod, where set, must be longer still)"
    )


def _kv_bound_text(spec: InferenceSpec, shape: ReplicaShape, admitted: int, whole: bool) -> str:
    """The engine admitting past the batch a replica's KV cache holds (newuser72 item 4), and the cap that stops it.

    ``whole``: the service is one layout's (a split's parts share one max_num_seqs field, so only the router's cap).
    """
    engine = ENGINE_NAMES[spec.engine]
    batch, ranks = shape.max_point.batch, shape.par.attention_dp
    request = spec.avg_input_tokens + spec.avg_output_tokens
    seqs = f"inference.max_num_seqs: {batch // ranks}" + (f" ({batch // ranks} a rank)" if ranks > 1 else "")
    held_by = f", or give {seqs} (requests then wait to start)" if whole else ""
    if spec.engine == "vllm":
        then = (
            "vLLM admits a request once its prompt's blocks are free, so under a burst the running sequences outgrow "
            "the pool and it preempts the latest, recomputing its whole prefix (prompt and every token so far) when it "
            "resumes, while the rest's steps wait"
        )
    else:
        then = (
            f"{engine} admits on an estimate of the tokens its running requests will still take (its new_token_ratio), "
            "and where they outgrow the pool it retracts some back to the queue, to be prefilled again"
        )
    return (
        f"the KV cache holds {batch:,} requests of {request:,} tokens a replica, not a latency target, and {engine} "
        f"admits up to {admitted:,} ({MAX_SEQUENCES_FLAG[spec.engine]}): {then}; cap the router's concurrency at "
        f"{batch:,} a replica{held_by}"
    )


def _bound_by(spec: InferenceSpec) -> str:
    """What a replica's most load is held to: the SLOs, or none (newuser65 item 8: a batch job read "within the SLOs")."""
    if not latency_bound(spec):
        return "at its largest batch, service_class batch setting no latency target"
    return "within the SLOs"


def _tolerant_replicas(spec: InferenceSpec, opt: Option) -> int | None:
    """The replicas ``nodes_down_tolerated`` runs at ``opt``'s layout; None where not asked (or a split)."""
    if not spec.nodes_down_tolerated or opt.parts:
        return None
    shape = opt.replica_shape
    return option_tolerant(opt, spec, rate_replicas(spec, shape.planned_requests_per_s, slots=shape.slot_queue))[0]


def _inference_details(
    loaded: LoadedWorkload, dep: InferenceDeployment, opt: Option, consts: Constants, part_rate: float | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Details and reasons of the replicas of one option; ``part_rate``: they serve that share of a split deployment."""
    shape = opt.replica_shape
    spec, slo_defaults = effective_slo(dep.inference)
    model = loaded.models[dep.name]
    replicas = opt.candidate.replicas
    needed = replicas_needed(spec, shape.planned_requests_per_s, slots=shape.slot_queue) if part_rate is None else replicas
    host_scale = platform_host_time_scale(opt.hardware.platform)
    # a replica in a share of a GPU runs at the share's rates, with the engine defaults of the memory it sees, as it
    # was sized (the TTFT, TPOT and rates said were the whole GPU's, and vLLM's default max_num_seqs compared with it)
    gpu = opt.hardware.gpu if shape.share is None else shared_gpu(opt.hardware.gpu, shape.share)
    acc = with_lora_adapters(
        accelerator_for(gpu, shape.fmt.compute, shape.par.tp, host_scale, shape.fmt), model.architecture, spec, shape.par
    )
    network = expert_network(opt.hardware, shape.par.ep) if shape.par.attention_dp > 1 else None
    if network is not None and network.host_gpus < shape.par.ep:  # as sized: the exchange leaving the server (review72 1)
        acc = acc._replace(expert_network=network)
    rate = (spec.requests_per_second if part_rate is None else part_rate) / replicas
    whole = model.architecture.encoder_only  # an encoder's request runs in one pass (no chunked prefill)
    # a prompt prefilled in passes of the engine's tokens
    engine_consts = engine_constants(spec, gpu, consts, whole, model_type=model.architecture.model_type)
    point = point_for_rate(model, (shape.par, shape.memory, shape.kv_bits, acc), spec, rate, shape.max_point.batch, engine_consts)
    cap = shape.memory.capacity
    assert cap is not None
    running = shape.max_num_seqs
    budget = step_token_budget(spec, gpu, consts, whole)
    new_tokens, cached_tokens = spec.prompt_tail(spec.avg_input_tokens)  # a prompt's tail its prefix cache misses
    sat = (
        None
        if spec.pooling
        else saturated_throughput(
            model.architecture,
            shape.memory.weights,
            shape.kv_bits,
            shape.par,
            acc,
            cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens) * (spec.avg_input_tokens + spec.avg_output_tokens),
            spec.avg_input_tokens,
            spec.avg_output_tokens,
            engine_consts._replace(max_batch_size=running),
            budget,
            cached_tokens,
            prefill_apart=spec.engine == "sglang",  # SGLang runs a waiting prompt as a forward of its own
        )
    )
    # the node reads the checkpoint's files: the 16-bit ones where the engine quantizes them as it loads them
    files_bytes = served_file_bytes(model, shape.fmt.name, shape.memory.weights.total_bytes)
    load_s = model_load_seconds(files_bytes, opt.node, consts)
    download = model_download(files_bytes, opt.hardware.platform, consts)  # a cloud node's, from object storage
    details: dict[str, object] = {
        "requests_per_s": spec.requests_per_second,
        "context_tokens": spec.max_context_tokens,
        "weights_bytes": shape.memory.weights.total_bytes,
        "model_files_bytes": files_bytes,  # what a new node reads (and downloads): the checkpoint's files
        "kv_cache_bytes_per_token": shape.memory.kv.bytes_per_token,
        # an encoder keeps no KV cache: its capacity's tokens are max_num_seqs x the context (newuser62 item 5)
        "kv_cache_tokens_per_replica": 0 if model.architecture.encoder_only else cap.kv_cache_tokens,
        "max_concurrency_per_replica": round(cap.max_concurrency, 2),
        "requests_per_s_per_replica_max": round(shape.served_requests_per_s, 3),  # a job's not its deadline's share
        "requests_per_s_per_replica": round(rate, 3),
        "batch_per_replica": point.batch,
        "max_num_seqs": running,
        "ttft_p95_s": round(point.ttft_s, 4),
        "tpot_s": round(point.tpot_s, 5),
        "max_output_tokens_per_s_per_replica": round(sat.output_tokens_per_s, 1) if sat else None,
        "model_load_s": round(load_s, 1) if load_s is not None else None,
        "service_class": spec.service_class,
        "slo_ttft_p95_ms": spec.slo.ttft_p95_ms,
        "slo_tpot_ms": spec.slo.tpot_ms,
    }
    if download is not None:  # newuser63 item 5: a new cloud node's time to have the model, a floor
        details["model_download_s"] = round(download.seconds, 1)
        details["model_download_gbps"] = download.gbps
        details["model_download_link"] = download.link
    if replicas > needed:  # more than the rate needs run on GPUs of its servers that would otherwise idle
        details["replicas_past_rate"] = replicas - needed
    queue = shape.slot_queue if part_rate is None else None
    if queue is not None:  # the wait for a place in the batch over every replica's (newuser72 item 6)
        details.update(_slot_wait_details(spec, ((replicas, queue),)))
    request_s = None if spec.pooling else request_seconds_at(spec, point)
    if request_s is not None and request_s > POD_GRACE_DEFAULT_S:  # what a drain must wait for (newuser72 item 5)
        details["request_s"] = round(request_s, 1)
    if spec.nodes_down_tolerated:  # N+k asked: diff names a change of it (the replicas alone read as growth)
        details["nodes_down_tolerated"] = spec.nodes_down_tolerated
    if spec.cached_prompt_share:  # the share of each prompt its prefix cache holds: the rest is prefilled
        details["cached_prompt_share"] = spec.cached_prompt_share
        details["prefill_new_tokens"] = new_tokens
    if spec.p95_input_tokens is not None:  # the TTFT p95 is over a prompt mix (newuser34 item 4)
        mix = least_spread_mix(spec.avg_input_tokens, spec.p95_input_tokens)
        details["p95_input_tokens"] = spec.p95_input_tokens
        details["ttft_p95_prompt_mix"] = {
            "short_tokens": mix.short_tokens,
            "long_tokens": mix.long_tokens,
            "long_share": mix.long_share,
        }
    if spec.pooling:  # one forward pass a request: its latency, its compute, no decode figures
        details.update(pooling_details(model, spec, point, shape.max_point))
        for key in ("ttft_p95_s", "tpot_s", "max_output_tokens_per_s_per_replica", "slo_ttft_p95_ms", "slo_tpot_ms"):
            del details[key]
    if (own := quantized_online_from(model, shape.fmt.name)) is not None:  # the engine quantizes it as it loads it
        details["quantized_online_from"] = own
    if spec.engine != "vllm":
        details["serving_engine"] = spec.engine
        if spec.engine == "sglang":  # the fraction its pool is sized with, rendered as --mem-fraction-static (fuzz33 item 3)
            details["mem_fraction_static"] = sglang_mem_fraction(gpu.memory_bytes, shape.par, spec.mem_fraction_static)
    else:  # vLLM --max-num-batched-tokens: its profiling run reserves memory for that many tokens
        details["max_num_batched_tokens"] = budget
    if shape.par.ep > 1:
        details["expert_parallel"] = shape.par.ep
    if shape.par.attention_dp > 1:  # data-parallel attention groups of TP GPUs a stage, each its own sequences
        details["attention_dp"] = shape.par.attention_dp
    if shape.memory.kv.state_bytes_per_sequence:  # linear-attention layers: paged as vLLM does without prefix caching
        details["recurrent_state_bytes_per_sequence"] = shape.memory.kv.state_bytes_per_sequence
    # the attention kernels an engine picks by them (an AMD pool's vLLM settings, generator.render.rocm_tuning)
    if model.architecture.uses_mla:  # MLA (DeepSeek-V2/V3, Kimi-K2)
        details["latent_attention"] = True
    if model.architecture.model_type == "gpt_oss":  # attention sinks
        details["attention_sinks"] = True
    mem = shape.memory.per_gpu
    par = shape.par
    if shape.share is not None:  # sized against its share: memory, KV, rates and cost are the share's
        details["gpu_share"] = shape.share.text(opt.hardware.gpu.id)
        case = f"fits one pod's share of a GPU ({details['gpu_share']}); its memory, KV cache, rates and cost are the share's" + (
            "" if shape.share.strategy == "mig" else ", each replica on the GPU assumed at full load"
        )
    elif par.gpus == 1:
        case = "fits one GPU: no model split needed"
    else:
        gpu = opt.hardware.gpu
        platform = opt.hardware.platform
        per_node = opt.candidate.gpus_per_node
        across = platform.hosts == 1 and replica_hosts(platform, per_node, par.gpus) > 1  # a hop leaves its server
        width = par.gpus // par.pp  # a stage's GPUs: its TP, or its EP where attention runs data-parallel
        node_net = node_link(platform, gpu, per_node, opt.needs.needs_fabric) if across else (0.0, "")
        # one stage has no hops between stages; an EP stage wider than a server exchanges its tokens over the network
        hops = (
            stage_hop_text(platform, per_node, width, par.pp, model.architecture.hidden_size, node_net, spec.engine)
            if across and par.pp > 1
            else None
        )
        exchange = expert_exchange_text(platform, per_node, par.ep, node_net) if across and par.attention_dp > 1 else None
        link = f"{acc.link_gb_per_s:g} GB/s per direction over {gpu.link_name(acc.fast_link, par.tp)}"
        share = peer_link_share(par.tp, gpu.mesh_gpus)
        if acc.fast_link and gpu.collective_gb_per_s:
            link += f" (what NCCL/RCCL count on; {gpu.interconnect_gb_per_s_bidir / 2 * share:g} GB/s peak)"
        if acc.host_staged and par.tp > 1:  # acc102: no peer access over PCIe, so the collective goes through host memory
            link += f" ({host_staged_text(acc, gpu.name)})"
        if acc.fast_link and share < 1 and gpu.mesh_gpus:  # newuser30 item 1
            link += (
                f"; the {gpu.mesh_gpus} GPUs of its board are linked pairwise, no switch between them, so a group of "
                f"{par.tp} reaches {par.tp - 1}/{gpu.mesh_gpus - 1} of each GPU's links"
            )
        if par.tp > 1 and (note := opt.hardware.bridge_note()):
            link += f"; {note}"
        if width == 1 and every_hop_leaves_host(platform, opt.candidate.gpus_per_node, width, par.pp):
            link = ""  # no TP group and no hop inside a host: no GPU link carries anything (newuser61 item 14)
        if exchange is not None and par.tp == 1 and per_node // platform.hosts == 1:
            link = ""  # one GPU a host and no TP group: the whole exchange leaves the host (review72 item 1)
        split = f"split over {par.gpus} GPUs (TP{par.tp}" + (f" x PP{par.pp}" if par.pp > 1 else "") + ")"
        if par.attention_dp > 1:
            split = f"split over {par.gpus} GPUs ({layout_name(par.tp, par.pp, par.ep)})"
        # a rack-scale system's trays share NVLink; servers do not (newuser16 L2)
        case = "; ".join(part for part in (f"{split}, {link}" if link else split, hops, exchange) if part)
        if par.attention_dp > 1:
            pinned = dep.parallelism is not None and (dep.parallelism.ep or 1) > 1
            pinned_tp = not pinned and dep.parallelism is not None and dep.parallelism.tp is not None
            case += (
                f"; attention data-parallel over {par.attention_dp} groups of {par.tp} GPU(s) a stage, each holding its "
                f"own sequences' KV cache ({_tp_kv_copies(model.architecture, par.ep)}), the routed experts spread whole "
                f"over the stage's {par.ep} GPUs and their tokens exchanged all-to-all in every MoE layer "
                f"({'as pinned' if pinned else 'searched beside the TP layouts'}; vLLM "
                f"--data-parallel-size {par.attention_dp} --enable-expert-parallel, SGLang --enable-dp-attention)"
                + (
                    f"; a pinned tp leaves ep searched: parallelism.ep: 1 keeps each replica to its TP{par.tp} GPUs"
                    if pinned_tp
                    else ""
                )
            )
        elif par.ep > 1:
            pinned = dep.parallelism is not None and (dep.parallelism.ep or 1) > 1
            why = "as pinned" if pinned else f"TP{par.tp} alone splits the experts into shards that do not load"
            case += (
                f"; the routed experts spread whole over each stage's {par.ep} GPUs (expert parallelism, {why}), "
                "their tokens exchanged all-to-all in every MoE layer"
            )
    kv_for = pooling_kv_text(spec, shape.max_point.batch) if spec.pooling else f"one {spec.max_context_tokens:,}-token sequence"
    most_load = pooling_pass_text(shape.max_point) if spec.pooling else _load_text(shape.max_point)
    # from the figures spec.json keeps (ttft_p95_s, tpot_s), so that a diff prints the same (newuser27 item 11)
    planned = f"batch {point.batch}, TTFT p95 {round(point.ttft_s, 4) * 1000:.0f} ms, TPOT {round(point.tpot_s, 5) * 1000:.1f} ms"
    fit = (
        f"{cap.kv_cache_tokens:,} KV tokens fit ({cap.max_concurrency:.1f} such {'requests' if spec.pooling else 'sequences'})"
        + (" by SGLang's mem_fraction_static accounting" if spec.engine == "sglang" else "")
    )
    if model.architecture.encoder_only:
        kv_for, fit = encoder_pass_text(spec, shape.max_point.batch, model.architecture.max_model_len)
    reasons = [
        case,
        f"per GPU: weights {_gib(mem.weights)} + KV {_gib(mem.kv_cache)} + activations {_gib(mem.activations)} + overhead "
        f"{_gib(mem.overhead)} for {kv_for}; {fit}",
        # from the figure the details keep (3 decimals), so that SPEC.md and the diff print the same digits (newuser26 item 11)
        f"one replica sustains {round(shape.max_point.requests_per_s, 3):,.2f} req/s {_bound_by(spec)} ({most_load}); "
        + _margin_text(shape)
        + (
            replicas_text(spec, needed, replicas, _tolerant_replicas(spec, opt))
            if part_rate is None
            else f"{replicas} replica(s) here serve {part_rate:.2f} req/s, this part's share"
        ),
        pooling_load_text(point)
        if spec.pooling
        else f"at the planned load: {planned}{_margin_load_text(shape)}; {ttft_basis_text(spec, consts.ttft_p95_factor)}",
    ]
    if spec.cached_prompt_share:
        shaped = (shape.par, shape.memory, shape.kv_bits, acc)
        room = (cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens), shape.max_point.batch)
        reasons.append(cached_prompt_text(model, shaped, spec, point, engine_consts, room))
    if queue is not None:
        rate_only = rate_replicas(spec, shape.planned_requests_per_s)  # review74: not min_replicas, said as "the rate"
        idle = shape.max_point.idle_bound
        ttft_most = shape.max_point.ttft_s if idle is None else idle.ttft_s
        reasons.append(_slot_text(spec, ((replicas, queue),), needed, rate_only, ttft_most, idle=idle is not None))
    if request_s is not None and request_s > POD_GRACE_DEFAULT_S:
        reasons.append(_request_time_text(spec, point, request_s))
    if wide := replica_note(opt, spec.engine):
        reasons.insert(1, wide)
    engine = ENGINE_NAMES[spec.engine]
    if spec.pooling:  # a pooling replica's batch is its passes' requests (said above), not decodes a step holds
        reasons.append(pooling_engine_text(spec, "ansible" in loaded.workload.outputs, model.id))
    elif running < (default := max_running(spec, gpu, consts)):
        reasons.append(
            f"max_num_seqs {running}: at {engine}'s default of {default} on {opt.hardware.gpu.id} its profiling run samples "
            f"{default} sequences' logits and leaves no room for one {spec.max_context_tokens:,}-token sequence; the "
            "group vars carry the lower limit"
        )
    elif budget and shape.max_point.batch == (
        stepped := step_budget_batch(budget * shape.par.attention_dp, new_tokens, spec.avg_output_tokens)
    ) < min(running * shape.par.attention_dp, cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens)):
        reasons.append(
            f"the batch stops at {stepped} sequences: a step runs at most {budget:,} tokens (max_num_batched_tokens), "
            f"the decodes and the {new_tokens / max(1, spec.avg_output_tokens):.1f} prompt tokens each "
            "brings to prefill; set inference.max_num_batched_tokens higher where the latency SLOs allow a larger batch"
        )
    elif (
        shape.max_point.batch
        == running * shape.par.attention_dp
        < (held := cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens))
    ):
        if spec.max_num_seqs:
            whose = "the workload's max_num_seqs"
        elif budget is not None and running == budget:
            whose = f"max_num_batched_tokens {budget:,}: vLLM runs no more sequences than tokens a step"
        else:
            whose = f"{engine}'s default on {gpu.id}"
        if (beyond := shape.max_point.capped_binds_text) is not None:
            # newuser73 item 3: the batch the SLOs allow, which the plan had advised giving as max_num_seqs, was then
            # told to be raised: the next batch misses a target, so the cap is the SLOs' batch and stays
            reasons.append(
                f"the batch stops at {running} sequences ({whose}), the batch the latency SLOs allow ({beyond}): "
                f"keep it; the KV cache holds {held:,} average requests, room a larger batch would not use within "
                "the SLOs"
            )
        else:
            reasons.append(
                f"the batch stops at {running} sequences ({whose}) although the KV cache holds {held:,} average requests: "
                f"set inference.max_num_seqs higher ({engine}'s {MAX_SEQUENCES_FLAG[spec.engine]}) where the latency "
                "SLOs allow a larger batch"
            )
    admitted = running * shape.par.attention_dp  # max_num_seqs is each attention-DP rank's (review32 item 5)
    if not spec.pooling and shape.max_point.binds and shape.max_point.batch < admitted:
        # newuser46 item 7: the engine admits up to max_num_seqs, past the batch the latency targets hold at
        batch, ranks = shape.max_point.batch, shape.par.attention_dp
        if queue is not None:  # the places the wait is counted over at the planned load (fix90, review74 item 5)
            batch = max(batch, resolved(spec.requests_per_second, ((replicas, queue),))[0][1].per_replica)
        slower = " and ".join(t for t in ("TTFT", "TPOT") if t in shape.max_point.binds)
        # the engine's own flag, as the KV-bound line names it (newuser74 item 18: "SGLang admits up to 2,048
        # (max_num_seqs)" here, "(--max-running-requests)" there)
        flag = MAX_SEQUENCES_FLAG[spec.engine]
        per_rank = f" ({ranks} attention-DP ranks of {running:,}, {flag})" if ranks > 1 else f" ({flag})"
        seqs = f"inference.max_num_seqs: {batch // ranks}" + (f" ({batch // ranks} a rank)" if ranks > 1 else "")
        # one field for every part of a split service: the router's cap is the part's own (review32 item 5)
        held_by = f", or give {seqs} (requests then wait to start)" if part_rate is None else ""
        reasons.append(
            f"the SLOs hold at {batch} sequence{'s' if batch != 1 else ''} a replica, and {engine} admits up to "
            f"{admitted:,}{per_rank}: a burst "
            f"past the planned rate runs a larger batch at a slower {slower}, so cap the router's concurrency at "
            f"{batch} a replica{held_by}"
        )
    elif (
        not spec.pooling
        and shape.max_point.idle_bound is None
        and shape.max_point.batch == cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens)
        and shape.max_point.batch < admitted
    ):
        # newuser72 item 4: the KV cache, not a latency target, stops the batch, and the engine admits past it
        reasons.append(_kv_bound_text(spec, shape, admitted, part_rate is None))
    if (rates := dequantized_rates(model.architecture, shape.par, acc, consts)) is not None:  # review 27 item 3
        reasons.append(f"the replica's rates count on its GEMMs' dequantization: {rates.text()}")
    if slo_defaults and part_rate is None:
        reasons.append(slo_default_reason(slo_defaults))
    if spec.lora is not None:  # the adapters' slots and host copies (newuser92)
        buffer = shape.memory.overhead_parts.get("lora_shrink_buffer", 0)
        details["lora"] = lora_details(model.architecture, spec, shape.par, buffer)
        reasons.append(lora_reason(details, spec.engine))
    if spec.tool_calling:  # the engine's tool-call parser for the family, rendered into its args (fix180)
        # the workload's own parser first: a model whose id hides its family (fix184 item 1)
        family = (model.architecture.model_type, model.id, spec.engine)
        details["tool_call_parser"] = spec.tool_call_parser or tool_call_parser(*family)
        if spec.tool_call_parser is None and (template := chat_template(*family)):
            reasons.append(tool_template_reason(spec.engine, template))  # fix184 item 4: optional, said not rendered
    return details, reasons


def serving_memory(memory: InferenceMemory) -> dict[str, int]:
    """One serving GPU's memory by kind, bytes.

    ``kv_cache`` is one sequence's at the context (what ``total`` needs to start); ``kv_cache_pool`` the KV cache the
    engine allocates from what its budget leaves, which the replica's concurrency comes from.
    """
    out = memory.per_gpu.as_dict()
    if memory.capacity is not None:
        out["kv_cache_pool"] = memory.capacity.kv_available_bytes
    return out


def _tp_kv_copies(arch: Architecture, gpus: int) -> str:
    """What TP over a stage's ``gpus`` would do to the model's KV cache, which attention DP avoids (review72 item 10).

    MLA keeps one latent a token that TP does not split; grouped-query attention splits its KV heads over the GPUs,
    each held ``gpus / heads`` times where there are fewer heads than GPUs.
    """
    if arch.num_kv_heads == 0:
        return f"under TP{gpus} each of the {gpus} GPUs keeps the whole MLA latent of every sequence"
    heads = arch.num_kv_heads
    if heads < gpus:
        return (
            f"under TP{gpus} each GPU keeps the KV heads it serves of every sequence: the model's {heads} KV heads over "
            f"{gpus} GPUs, each held {gpus // heads} times"
        )
    return f"under TP{gpus} each GPU keeps {heads // gpus} of the model's {heads} KV heads of every sequence"
