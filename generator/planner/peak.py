"""A service whose rate varies over the day: its average (``inference.average_requests_per_second``) beside its peak.

``requests_per_second`` stays the rate the replicas and servers are sized for (the peak). The average then sets:

- the replicas the average needs (:func:`average_replicas`, the same rule as the peak's: at least ``min_replicas``,
  each replica at ``max_utilization`` of what it sustains within the SLOs);
- on a cloud, the fewest nodes a serving pool scales down to (:func:`scaled_pools`): the nodes its services' replicas
  take with each service that gives an average at the average's replicas, packed as the pool's nodes are at the peak
  (GKE autoscaling, EKS managed node groups' min_size; newuser40 item 8);
- the cost per million tokens at the average (newuser39 item 9: a service peaking at 30 req/s and averaging 12
  was priced as if it served 30 all month, $0.0437/M where the month bought $0.109/M), and on a cloud the month
  with the scaled pools at their fewest nodes all month: a floor, the peak-sized month the ceiling; where between falls
  depends on the day's profile, which the workload does not give.

Bought servers (bare metal) are bought for the peak and run all month: nothing scales them, so their month is the
peak's and the cost per token at the average counts the capacity idle off-peak. A split service (owned servers and
bought ones: bare metal only) keeps its parts' replicas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from generator.named_tuple import NamedTuple
from generator.planner.candidates import shared_gpus
from generator.planner.plan import DeploymentPlan, Finding, Pool
from generator.planner.slo import replicas_needed
from generator.planner.spread import SPREAD_NODES, drain_grace_text, option_tolerant, packed_nodes, spread_asked, spreads
from generator.units import HOURS_PER_MONTH, figure_text, usd_text
from generator.workload.models import InferenceDeployment, InferenceSpec

if TYPE_CHECKING:
    from generator.planner.option import Option
    from generator.workload.models import Workload

#: Providers whose node pools a cluster autoscaler (GKE, EKS) or Karpenter scales: instances are rented by the hour.
CLOUD_PROVIDERS = frozenset({"aws", "gcp", "azure"})

#: What scales the serving replicas between the average's and the peak's: specgen renders no Deployment for them.
HPA_DOCS = "https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/"
KEDA_DOCS = "https://keda.sh/docs/latest/scalers/prometheus/"


#: Karpenter's part in a pool that scales: it has no lower bound, and removes only empty nodes.
_KARPENTER_SCALES = (
    "Karpenter NodePools launch nodes for pending pods within spec.limits that allow the peak's nodes plus the "
    "replacement slot, and remove a node once it is empty (consolidationPolicy WhenEmpty), so scaling in frees a node "
    "only when all its replicas are gone"
)
#: How each cloud's rendered pools scale between their bounds.
_SCALED_AS = {
    "gcp": "the GKE ContainerNodePool and the Terraform google_container_node_pool get autoscaling minNodeCount / "
    "maxNodeCount (min_node_count / max_node_count) and no fixed nodeCount, which the provider says not to set beside "
    "autoscaling; GKE's cluster autoscaler then adds nodes for pending pods and removes unneeded ones",
    "aws": "the EKS managed node groups get min_size and max_size, and the Kubernetes cluster autoscaler must run to move "
    f"desired_size between them; {_KARPENTER_SCALES}",
    "azure": _KARPENTER_SCALES,
}


class PoolAtAverage(NamedTuple):
    """A pool with its services at the replicas their average rates need."""

    #: Nodes those replicas take, packed as the pool's are (at most the pool's nodes).
    nodes: int
    #: GPUs each member deployment (by index) uses there: whole ones, or shares of one (1/N a replica).
    gpus: Mapping[int, Fraction]


def average_replicas(spec: InferenceSpec, opt: Option) -> int | None:
    """Replicas ``spec``'s average rate needs of ``opt``'s layout; None without an average, or for a split service.

    The peak's rule at the average: at least ``min_replicas``, each replica at ``max_utilization`` of its planned rate;
    never more than the plan's (sized for the peak).
    """
    needed = _needed_at_average(spec, opt)
    if needed is None:
        return None
    if spec.nodes_down_tolerated:  # the floor keeps N+k too (newuser63 item 8)
        needed = _tolerant_at(opt, spec)[0]
    return min(opt.candidate.replicas, needed)


def _needed_at_average(spec: InferenceSpec, opt: Option) -> int | None:
    """Replicas ``spec``'s average rate needs of ``opt``'s layout by the peak's rule; None without an average or split."""
    average = spec.average_requests_per_second
    if average is None or opt.parts:
        return None
    shape = opt.replica_shape
    return replicas_needed(spec._replace(requests_per_second=average), shape.planned_requests_per_s, slots=shape.slot_queue)


def _tolerant_at(opt: Option, spec: InferenceSpec) -> tuple[int, int]:
    """(replicas, nodes) of ``opt``'s layout that keep the average's rate with ``nodes_down_tolerated`` nodes down."""
    return option_tolerant(opt, spec, _needed_at_average(spec._replace(min_replicas=1), opt) or 1)


def _gpus_used(opt: Option, replicas: int) -> Fraction:
    """GPUs ``replicas`` of ``opt``'s layout use: whole ones, or a share of one each."""
    c = opt.candidate
    return Fraction(replicas, c.shares_per_gpu) if c.shares_per_gpu else Fraction(replicas * opt.replica_shape.par.gpus)


def _spread_nodes(replicas: int, min_replicas: int, hosts_per_node: int) -> int:
    """Nodes ``min_replicas`` keeps the replicas on (:func:`generator.planner.spread.spread_layouts`), else 1."""
    if min_replicas < SPREAD_NODES or hosts_per_node >= SPREAD_NODES:
        return 1
    return min(replicas, SPREAD_NODES)


def _alone_nodes(opt: Option, replicas: int, spec: InferenceSpec) -> int:
    """Nodes ``replicas`` of ``opt``'s layout take in a pool of their own (:func:`generator.planner.options.node_counts`)."""
    c = opt.candidate
    if c.shares_per_gpu:
        packed = math.ceil(shared_gpus(replicas, c.shares_per_gpu) / c.gpus_per_node)
    else:
        packed = packed_nodes(replicas, opt.replica_shape.par.gpus, c.gpus_per_node)
    return max(packed, _floor_nodes(opt, replicas, spec))


def _floor_nodes(opt: Option, replicas: int, spec: InferenceSpec) -> int:
    """Nodes a service's ``replicas`` keep at least: those ``min_replicas`` or ``nodes_down_tolerated`` spread them over."""
    if not spec.nodes_down_tolerated:
        return _spread_nodes(replicas, spec.min_replicas, opt.hardware.platform.hosts)
    return opt.candidate.nodes if _needed_at_average(spec, opt) is None else _tolerant_at(opt, spec)[1]


def pool_at_average(wl: Workload, unit: Sequence[tuple[int, Option]], nodes: int) -> PoolAtAverage | None:
    """The pool of ``unit`` (``nodes`` at the peak) with its services at their averages; None where none gives one.

    One service alone takes the nodes its layout packs its replicas on; services sharing the pool take the GPUs they
    use together, and each at least the nodes ``min_replicas`` spreads it over (as the pool is formed).
    """
    replicas: dict[int, int] = {}
    for index, opt in unit:
        dep = wl.deployments[index]
        if not isinstance(dep, InferenceDeployment) or opt.candidate.owned_nodes:
            return None  # a training job's pool, or owned servers (always there): nothing to scale
        at = average_replicas(dep.inference, opt)
        replicas[index] = opt.candidate.replicas if at is None else at
    if not any(wl.deployments[i].inference.average_requests_per_second for i, _ in unit):  # type: ignore[union-attr]
        return None
    gpus = {index: _gpus_used(opt, replicas[index]) for index, opt in unit}
    specs = {index: wl.deployments[index].inference for index, _ in unit}  # type: ignore[union-attr]
    if len(unit) == 1:
        index, opt = unit[0]
        at_average = _alone_nodes(opt, replicas[index], specs[index])
    else:
        per_node = unit[0][1].candidate.gpus_per_node
        floors = [_floor_nodes(opt, replicas[i], specs[i]) for i, opt in unit]
        at_average = max([math.ceil(sum(gpus.values()) / per_node), *floors])
    return PoolAtAverage(min(nodes, at_average), gpus)


def scaled_pools(wl: Workload, pools: list[Pool], at_average: Mapping[str, PoolAtAverage]) -> list[Pool]:
    """The pools with ``min_nodes`` where a cloud's autoscaler may take them below their nodes (off-peak)."""
    if wl.hardware.provider not in CLOUD_PROVIDERS:
        return pools
    out = []
    for pool in pools:
        at = at_average.get(pool.name)
        scales = at is not None and not pool.per_job and not pool.owned_nodes and at.nodes < pool.nodes
        out.append(pool._replace(min_nodes=at.nodes) if scales and at is not None else pool)
    return out


def floor_usd_per_hour(pool: Pool) -> float | None:
    """A pool's price an hour at its fewest nodes (its peak's where it does not scale); None where unpriced."""
    if pool.usd_per_hour is None:
        return None
    if pool.min_nodes is None or not pool.nodes:
        return pool.usd_per_hour
    return pool.usd_per_hour * pool.min_nodes / pool.nodes


def floor_share_usd_per_month(pools: Sequence[Pool], index: int, at_average: Mapping[str, PoolAtAverage]) -> float | None:
    """Deployment ``index``'s month with its scaled pools at their fewest nodes: its share by the GPUs it uses there.

    None where none of its pools scales, or one is unpriced.
    """
    if not any(p.min_nodes is not None for p in pools):
        return None
    total = 0.0
    for pool in pools:
        hourly, at = floor_usd_per_hour(pool), at_average.get(pool.name)
        if hourly is None or at is None:
            return None
        used = sum(at.gpus.values(), Fraction(0))
        total += hourly * HOURS_PER_MONTH * float(at.gpus.get(index, Fraction(0)) / used) if used else 0.0
    return round(total, 2)


def token_kinds(spec: InferenceSpec) -> tuple[tuple[str, str, int], ...]:
    """The tokens a service's cost is stated per: (figure key, words, tokens a request), the headline's first.

    A generating service: its output tokens, its input tokens and both together (newuser65 item 5: a summarisation
    run, 3,000 in for 300 out, is 91% input, and batch buyers compare a price per million input tokens or a blended
    one); a pooling service (embed, score) makes none: its input tokens.
    """
    if spec.pooling:
        return (("input_tokens", "input tokens", spec.avg_input_tokens),)
    return (
        ("output_tokens", "output tokens", spec.avg_output_tokens),
        ("input_tokens", "input tokens", spec.avg_input_tokens),
        ("tokens", "tokens in and out", spec.avg_input_tokens + spec.avg_output_tokens),
    )


def per_million_tokens(usd_per_month: float, rps: float, tokens: int) -> float:
    """``usd_per_month`` over the millions of tokens a month ``rps`` requests a second of ``tokens`` each make."""
    return usd_per_month / (rps * tokens * 3600 * HOURS_PER_MONTH / 1e6)


def token_cost_figures(spec: InferenceSpec, usd_per_month: float, rps: float, suffix: str = "") -> dict[str, float]:
    """``usd_per_month`` over the tokens ``rps`` makes or reads in a month, per million of each of :func:`token_kinds`.

    Keys ``usd_per_million_<kind><suffix>`` (``usd_per_million_output_tokens_at_capacity``), rounded to 4 decimals.
    """
    return {
        f"usd_per_million_{key}{suffix}": round(per_million_tokens(usd_per_month, rps, tokens), 4)
        for key, _, tokens in token_kinds(spec)
    }


def other_tokens_text(spec: InferenceSpec, figures: Mapping[str, float], suffix: str, low_suffix: str = "") -> str:
    """The figures past the headline's (:func:`token_kinds`), ``$0.1013 per million input tokens (3,000 a request)``.

    From ``figures`` at ``suffix``, from ``low_suffix``'s to it where given (a range); "" for a pooling service.
    """
    parts = []
    for key, words, tokens in token_kinds(spec)[1:]:
        high = usd_text(figures[f"usd_per_million_{key}{suffix}"])
        value = f"{usd_text(figures[f'usd_per_million_{key}{low_suffix}'])} to {high}" if low_suffix else high
        count = f" ({tokens:,} a request)" if key == "input_tokens" else ""
        parts.append(f"{value} per million {words}{count}")
    return " and ".join(parts)


def token_cost_at_average(
    spec: InferenceSpec,
    usd_per_month: float,
    floor_usd_per_month: float | None,
    peak_text: str,
    *,
    cloud: bool,
    held: str = "",
) -> tuple[dict[str, float], str]:
    """The cost per million tokens at the average rate: figures, and the text that states it beside the peak's.

    Per million of each of :func:`token_kinds` (output tokens first for a generating service, input tokens for a
    pooling one); ``usd_per_month``: the deployment's month as planned (sized for the peak); ``floor_usd_per_month``:
    its month with its pools at the nodes the average needs (None where they do not scale); ``peak_text``: the
    peak's figures (``$0.0437 at the 30 req/s peak ...``); ``cloud``: its servers are rented by the hour (else bought
    for the peak); ``held``: on a cloud where its pool does not scale, why (:func:`held_text`).
    """
    average = float(spec.average_requests_per_second or 0.0)
    _, words, tokens = token_kinds(spec)[0]
    figures = token_cost_figures(spec, usd_per_month, average, "_at_average")
    at_average = per_million_tokens(usd_per_month, average, tokens)
    of = f"at its {figure_text(average)} req/s average of {tokens:,} tokens"
    text = f"costs {usd_text(at_average)} per million {words} {of}"
    low = ""
    if floor_usd_per_month is not None:
        figures.update(token_cost_figures(spec, floor_usd_per_month, average, "_at_average_floor"))
        floor = per_million_tokens(floor_usd_per_month, average, tokens)
        low = "_at_average_floor"
        text = (
            f"costs {usd_text(floor)} to {usd_text(at_average)} per million {words} {of} (its month between "
            f"${floor_usd_per_month:,.0f}, its pool at the nodes the average's replicas need all month, and "
            f"${usd_per_month:,.0f}, at the peak's: where between depends on the day's profile)"
        )
    text += f", {peak_text}"
    if cloud and floor_usd_per_month is None:
        text += f"; {held}, so its pool does not scale below the peak's nodes"
    elif not cloud:
        text += (
            "; its servers are paid for at the peak's size all month (bought, or rented with nothing scaling them), so "
            "the figure at the average counts the capacity idle off-peak"
        )
    if others := other_tokens_text(spec, figures, "_at_average", low):
        text += f"; at the average, {others}"
    return figures, text


def held_text(name: str, spec: InferenceSpec, opt: Option, at_average: int | None, pools: Sequence[Pool]) -> str:
    """Why service ``name``'s pools keep their nodes at its average: the replicas it still needs, or those beside it."""
    nodes = sum(p.nodes for p in pools)
    shared = sorted({other for p in pools for other in p.deployments if other != name})
    if at_average is None:
        return f"its replicas stay on the pools' {nodes} node(s)"
    floor = " (min_replicas)" if at_average == spec.min_replicas and at_average > 1 else ""
    text = f"at the average it needs {at_average} of its {opt.candidate.replicas} replica(s){floor}"
    if shared:
        return f"{text}, and its pool's {nodes} node(s) still hold those of {', '.join(shared)} beside them"
    packed = _alone_nodes(opt, at_average, spec._replace(min_replicas=1, nodes_down_tolerated=0))
    if packed < nodes and spreads(spec):  # newuser48 item 7: six 1-GPU replicas were said to "take" two 8-GPU nodes
        return f"{text}, which {packed} node(s) would hold, and {spread_asked(spec)} spreads them over its pool's {nodes} node(s)"
    return f"{text}, which still take its pool's {nodes} node(s)"


def average_findings(
    wl: Workload, pools: Sequence[Pool], fleet: Mapping[str, object], deployments: Sequence[DeploymentPlan] = ()
) -> list[Finding]:
    """What the average rates change: on a cloud the pools' bounds, the replicas' scaler and the month's range.

    ``deployments``: the plan's, whose long requests a scale-in must wait for (:func:`drain_grace_text`).

    On bought servers (bare metal): that the fleet is bought for the peak.
    """
    averaged = [
        (i, d)
        for i, d in enumerate(wl.deployments)
        if isinstance(d, InferenceDeployment) and d.inference.average_requests_per_second
    ]
    if not averaged:
        return []
    names = ", ".join(d.name for _, d in averaged)
    path = f"deployments[{averaged[0][0]}].inference.average_requests_per_second"
    if wl.hardware.provider not in CLOUD_PROVIDERS:
        text = (
            f"{names}: sized for requests_per_second (the peak) and stated at average_requests_per_second as well: the "
            "servers are bought (or rented by the month) for the peak and run all month, so the fleet's month is the "
            "peak's and the cost per token at the average counts the capacity idle off-peak; scaling the replicas "
            "down off-peak saves only the power of idle GPUs, which the plan does not count"
        )
        return [Finding("info", "peak-sized-fleet", text, path)]
    scaled = [p for p in pools if p.min_nodes is not None]
    bounds = "; ".join(f"{p.name} {p.min_nodes} to {p.nodes}" for p in scaled)
    floor, month = fleet.get("usd_per_month_floor"), fleet.get("usd_per_month")
    cost = (
        f"the fleet's month is between ${floor:,.0f} (the scaled pools at their fewest nodes all month) and ${month:,.0f} "
        "(at the peak's, as planned): where between depends on the day's profile, which the workload does not give"
        if isinstance(floor, float) and isinstance(month, float)
        else "the fleet's month is the peak's as planned at most"
    )
    nodes = (
        f"the serving node pools scale between the nodes the average's replicas need and the peak's ({bounds}: "
        f"{_SCALED_AS[wl.hardware.provider]}); {cost}"
        if scaled
        else "no serving pool's nodes fall at the average (each still needs its planned nodes: shared, or held by "
        "min_replicas), so the pools stay at the peak's size"
    )
    text = (
        f"{names}: sized for requests_per_second (the peak) and stated at average_requests_per_second as well; {nodes}. "
        "Something must scale the serving replicas between the average's and the peak's (replicas_at_average and "
        "replicas in spec.json): a HorizontalPodAutoscaler or KEDA ScaledObject on the engine's metrics (vLLM's "
        f"vllm:num_requests_waiting / vllm:num_requests_running, SGLang's sglang:num_queue_reqs; {HPA_DOCS}, "
        f"{KEDA_DOCS}): specgen renders no Deployment for them, and with the replicas fixed at the peak's no node is freed"
    )
    scaled_in = {d.name for _, d in averaged}
    text += drain_grace_text((d for d in deployments if d.name in scaled_in), "scaling in, like a drain,")
    return [Finding("info", "serving-autoscaling", text, path)]
