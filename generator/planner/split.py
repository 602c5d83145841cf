"""A service split over two server kinds: as many replicas as the free owned servers hold, the rest on another kind.

When the owned servers of a kind are too few for all of a service's replicas, the planner also tries
running as many replicas as they hold and the rest on another kind the workload allows buying. Each
part is homogeneous (one GPU, platform and TP x PP inside it). Nothing rendered weights the routing by
capacity (a Kubernetes Service or a round-robin balancer spreads requests evenly over the replicas), so
a split is sized for even routing: every replica of either part gets rate / N, with N = ceil(rate /
the smaller per-replica capacity of the two parts), the owned part keeps its replicas and the other
part has the remaining N - owned replicas. Every replica then runs within the SLOs. As for a service of one layout,
N is also enough that the wait for a place in the batch keeps within what the TTFT p95 target leaves (fix85, m74b item
7): one M/M/c queue over both parts' places (each part's replicas x its batch), a request's time the parts' weighted by
the share of the requests each part's places serve with all of them taken, the slack the smaller part's
(:func:`~generator.sizing.serving_queue.slot_replicas` with the owned part beside); the owned part keeps its replicas,
the rest takes the ones the wait adds. That queue is a router sending each request to a replica with a place free,
capped at each part's batch; an even split's own queue at each replica waits longer. The split is one
more candidate: the objective decides whether it wins. A training job is never split: one job runs on
one homogeneous cluster.
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel
from generator.planner.batch_job import job_split
from generator.planner.candidates import SizedOptions, SplitRest, inference_options, owned_fill_options
from generator.planner.inventory import ServerKey
from generator.planner.option import Option
from generator.planner.options import allowed_hardware
from generator.planner.slo import effective_slo, replicas_needed
from generator.planner.spread import replicas_a_node_holds
from generator.sizing.constants import Constants
from generator.workload.models import InferenceDeployment, Workload

#: Why a training job is never split over server kinds (said in its reasons when owned servers of another kind exist).
TRAINING_NOT_SPLIT = (
    "a training job runs on one homogeneous cluster (its data-parallel ranks step in lockstep), so it is never "
    "split over server kinds"
)


def split_options(
    wl: Workload,
    dep: InferenceDeployment,
    model: ResolvedModel,
    consts: Constants,
    free: dict[ServerKey, int],
    sizes: SizedOptions | None = None,
) -> list[Option]:
    """Every split of the service: a full owned kind's replicas first, the rest of the replicas on another allowed kind.

    The rest may use free owned servers of that other kind before buying more of it; of a kind the workload does
    not allow buying, only its free owned servers (two owned kinds can hold a service that neither holds alone).
    ``sizes`` keeps the parts' options and their splits for the other passes of one plan (:func:`inference_options`):
    the same parts make the same split object, so its ranking is formed once (fuzz26 H4).
    """
    if not any(free.values()):
        return []
    spec = effective_slo(dep.inference)[0]
    hardware = allowed_hardware(wl)
    out: list[Option] = []
    seen: set[frozenset[tuple[object, ...]]] = set()
    known: SizedOptions = {} if sizes is None else sizes
    for key, servers in sorted(free.items()):
        owned_hw = next((h for h in hardware if (h.platform.id, h.gpu.id) == key[:2]), None)
        if not servers or owned_hw is None:
            continue
        others = [h for h in hardware if (h.platform.id, h.gpu.id) != key[:2]]  # one not bought: its free owned servers
        rest_free = {k: n for k, n in free.items() if k != key}
        fill = (
            "owned-fill",
            dep.name,
            model,
            dep.inference,
            dep.parallelism,
            owned_hw.platform.id,
            owned_hw.gpu.id,
            key[2],
            servers,
        )
        if fill not in known:
            known[fill] = ((), tuple(owned_fill_options(wl, dep, model, consts, owned_hw, key[2], servers)))
        for owned in known[fill][1]:
            beside = split_rest(owned)
            if replicas_needed(spec, beside.owned_requests_per_s, slots=beside.owned_queue) <= beside.held_replicas:
                continue  # the owned servers hold the whole service, its wait for a place too: not a split
            for rest in inference_options(wl, dep, model, consts, [], rest_free, beside, others, sizes):
                # two owned kinds can each come first; the same two parts either way are one candidate
                parts = frozenset(_layout(p) for p in (owned, rest))
                if parts not in seen:
                    seen.add(parts)
                    # keyed by the parts' identities: the split holds both parts, so neither id is reused while it lives
                    pair = ("split", id(owned), id(rest))
                    if pair not in known:
                        known[pair] = ((), (job_split(wl.hardware.provider, dep.inference, joined(owned, rest)),))
                    out += known[pair][1]
    return out


def split_rest(owned: Option) -> SplitRest:
    """The owned part ``owned`` as the rest of a split is sized beside: its rate, replicas, busiest host and places."""
    return SplitRest(replica_max(owned), owned.candidate.replicas, _most_on_a_host(owned), owned.replica_shape.slot_queue)


def _most_on_a_host(opt: Option) -> int:
    """The most replicas of a part one of its hosts holds, packed (a host down takes them)."""
    c = opt.candidate
    trays = opt.hardware.platform.hosts
    return min(
        c.replicas, replicas_a_node_holds(c.gpus_per_node // trays, opt.replica_shape.par.gpus, c.shares_per_gpu, trays > 1)
    )


def _layout(opt: Option) -> tuple[object, ...]:
    """What tells two parts apart: server kind, replica layout, replicas and servers."""
    c = opt.candidate
    return (c.platform_id, c.gpu_id, c.gpus_per_node, c.tp, c.pp, c.replicas, c.nodes)


def replica_max(opt: Option) -> float:
    """Requests/s one replica of a part is planned at (within the SLOs, over a known gap's margin)."""
    return opt.replica_shape.planned_requests_per_s


def part_rates(opt: Option, requests_per_s: float) -> list[float]:
    """The rate routed to each part of an option: even over all replicas, so in proportion to its replicas."""
    if not opt.parts:
        return [requests_per_s]
    replicas = [p.candidate.replicas for p in opt.parts]
    return [requests_per_s * r / sum(replicas) for r in replicas]


def joined(owned: Option, rest: Option) -> Option:
    """One candidate for the two parts: their servers, GPUs, power and prices summed, latency the worse of the two."""
    a, b = owned.candidate, rest.candidate

    def total(x: float | None, y: float | None) -> float | None:
        return None if x is None or y is None else x + y

    candidate = a._replace(
        replicas=a.replicas + b.replicas,
        gpus=a.gpus + b.gpus,
        nodes=a.nodes + b.nodes,
        usd_per_hour=total(a.usd_per_hour, b.usd_per_hour),
        power_w=a.power_w + b.power_w,
        summary=f"{a.summary} + {b.summary}",
        gpus_bought=a.gpus_bought + b.gpus_bought,
        idle_gpus=a.idle_gpus + b.idle_gpus,
        capex_usd=total(a.capex_usd, b.capex_usd),
        opex_usd_per_month=total(a.opex_usd_per_month, b.opex_usd_per_month),
        latency_s=max(a.latency_s, b.latency_s),
        owned_nodes=a.owned_nodes + b.owned_nodes,
        power_compared_w=a.power_compared_w + b.power_compared_w,
        # servers bought beside servers rented from a provider: the GPUs rented said apart (review67 item 6)
        gpus_rented=None if bool(a.rented) == bool(b.rented) else (a if a.rented else b).gpus_bought,
    )
    return owned._replace(candidate=candidate, parts=(owned, rest))
