"""A batch job served by replicas: ``inference.requests_per_run`` within ``deadline_hours``, ``runs_per_month`` runs.

The replicas are sized for the rate ``requests_per_run / (deadline_hours x 3600)`` (set as the workload loads). A run
takes its requests over what the replicas sustain together (:func:`run_hours`: within the deadline, sooner where the
layout's replicas sustain more than the rate). On a cloud, or on servers rented by the hour, a pool that holds only
such jobs scales to zero nodes between runs and is paid for its runs' hours alone (:func:`job_pools`): each job a
run the nodes its replicas take over its run's hours. Bought, owned, reserved or monthly-rented servers are paid by
the month whatever runs: a run is then the month over the runs; a job split over owned servers and servers rented by
the hour pays each part so (:func:`job_split`). newuser65 items 1-3: a weekly 48 h job was priced as if it ran all
month, $44,403 against about $12,700 of runs, and its budget refused it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from generator.planner.inference import ReplicaShape, request_seconds_at
from generator.planner.option import sustained_rps
from generator.planner.plan import Candidate, DeploymentPlan, Finding, Pool
from generator.planner.spread import replicas_a_node_holds, spreads
from generator.planner.tco import billed_by_the_hour
from generator.units import HOURS_PER_MONTH, figure_text, hours_text, usd_text
from generator.workload.models import Deployment, InferenceDeployment, InferenceSpec, TrainingDeployment

if TYPE_CHECKING:
    from generator.planner.inventory import ServerKey
    from generator.planner.option import Option
    from generator.workload.models import Workload


#: Places a run's hours are stated to (3.6 ms), in ``spec.json`` and in every month counted from them.
HOURS_PLACES = 6
#: A service whose rate (its average where it gives one) takes less than this share of what its replicas sustain is
#: said to be mostly idle (newuser65 item 3): a reporting threshold, not a sourced figure.
MOSTLY_IDLE_SHARE = 0.05


def waits_for_runs(dep: Deployment) -> bool:
    """Whether a deployment runs to a finish: a training job, a batch job.

    Its near tie on cost is settled by its runs' hours (:func:`~generator.planner.training_candidates.near_tie_rule`).
    Answered from the types alone, so a service's plan does not import the training modules (review81 item 1: +40% on
    a serving plan's cold start).
    """
    return isinstance(dep, TrainingDeployment) or (isinstance(dep, InferenceDeployment) and bool(dep.inference.job))


def runs_a_month(spec: InferenceSpec) -> float:
    """A batch job's runs a month: its ``runs_per_month``, else one."""
    return spec.runs_per_month or 1.0


def run_hours(spec: InferenceSpec, replicas_rps: float, request_s: float = 0.0) -> float | None:
    """Hours one run of a batch job takes on replicas sustaining ``replicas_rps`` together; None for a service.

    Its requests over that rate, and the last one's own time after it starts (``request_s``: :func:`request_seconds`):
    a run takes one request's time at least, which no replica added shortens (review68 item 1: one request of 8,000
    output tokens was said to run in 0.38 s, where it decodes for 45.8 s at the plan's TPOT).
    """
    if spec.requests_per_run is None or replicas_rps <= 0:
        return None
    return (spec.requests_per_run / replicas_rps + request_s) / 3600


def request_seconds(spec: InferenceSpec, opt: Option) -> float:
    """The last request's time in a run of ``spec`` on ``opt``'s replicas (the slowest part's where it is split).

    Alone on a replica (:attr:`~generator.planner.inference.OperatingPoint.lone_request_s`) where the run's requests
    leave its replicas below their planned batch at the end, at that batch's TTFT p95 and TPOT where they fill it: in
    between in proportion to the batch the run's requests fill (a decode step grows with its batch). 0 for a pooling
    job (one pass, in its rate) or a training job.
    """
    if spec.pooling:  # one pass a request, in the rate (review69 item 2: the saturated queue's 60 s for an 85 ms pass)
        return 0.0
    out = 0.0
    for piece in opt.pieces:
        if not isinstance(piece.shape, ReplicaShape):
            continue
        point = piece.shape.max_point
        full = request_seconds_at(spec, point)
        filled = min(1.0, (spec.requests_per_run or 0) / max(1, piece.candidate.replicas * point.batch))
        lone = point.lone_request_s or full
        out = max(out, lone + (full - lone) * filled)
    return out


def option_run_hours(spec: InferenceSpec, opt: Option) -> float | None:
    """Hours one run of batch job ``spec`` takes on ``opt``'s replicas, as its reason states them; None for a service.

    The replicas its servers hold where it fills them (:attr:`Option.filled`), as its month is ranked
    (:func:`_job_option`). What a near tie on cost is settled by (fix137:
    :func:`~generator.planner.training_candidates.cost_near_ties_settled`).
    """
    ran = opt.filled or opt
    hours = run_hours(spec, sustained_rps(ran, served=True), request_seconds(spec, ran))
    return None if hours is None else round(hours, HOURS_PLACES)


def node_down_rps(opt: Option, spread: bool = False) -> tuple[int, int, float]:
    """(replicas, those the busiest node holds, what the rest sustain in req/s) of ``opt`` with that node down.

    A node is a Linux host (a cloud's VM, a spot reclaim's unit): it holds as many replicas as fit its GPUs, which the
    scheduler may pack there, or one replica where a replica spans several; ``spread`` (``min_replicas`` 2 or more,
    ``nodes_down_tolerated``: :func:`~generator.planner.spread.spreads`): evenly over the option's nodes, as
    node-down-capacity counts them. Each replica at its most (:func:`~generator.planner.option.sustained_rps` over them).
    """
    pieces = [p for p in opt.pieces if isinstance(p.shape, ReplicaShape)]
    replicas = sum(p.candidate.replicas for p in pieces)
    if not replicas:
        return 0, 0, 0.0
    most = 0
    for p in pieces:
        c = p.candidate
        trays = p.hardware.platform.hosts
        holds = replicas_a_node_holds(c.gpus_per_node // trays, p.shape.par.gpus, c.shares_per_gpu, trays > 1)
        if spread and c.nodes:
            holds = min(holds, math.ceil(c.replicas / (c.nodes * p.hardware.platform.hosts)))
        most = max(most, min(c.replicas, holds))
    return replicas, most, (replicas - most) * sustained_rps(opt, served=True) / replicas


def holds_node_down(spec: InferenceSpec, opt: Option) -> bool:
    """Whether a batch job's run on ``opt`` keeps its deadline with the node holding the most of its replicas down.

    The replicas left sustain its rate (``requests_per_run`` over its deadline), as node-down-capacity checks the plan
    (:func:`~generator.planner.spread.node_down_finding`): on spot capacity a reclaim is routine (fix137). The replicas
    its servers hold where it fills them, as :func:`option_run_hours` counts them.
    """
    return node_down_rps(opt.filled or opt, spreads(spec))[2] >= spec.requests_per_second * (1 - 1e-9)


def job_options(provider: str, spec: InferenceSpec, options: tuple[Option, ...]) -> tuple[Option, ...]:
    """A batch job's options, each billed by the hour with the hours a month its runs take (its servers' month).

    The ranking, the budget and every month a layout states then count the runs' hours (newuser65 items 1, 2: a
    weekly 48 h job was ranked and held to its budget at a month of the peak's servers, $44,403 against $8,635).
    Another service's options, and a batch job's on servers paid by the month, are as they are. Formed once with the
    options of each hardware (:func:`~generator.planner.candidates.inference_options` keeps them), so every pass ranks
    the same option objects.
    """
    if not spec.job:
        return options
    return tuple(_job_option(opt, spec) if billed_by_the_hour(provider, opt.candidate) else opt for opt in options)


def _job_option(opt: Option, spec: InferenceSpec) -> Option:
    """``opt`` and the option filling its servers (:attr:`Option.filled`) at the hours a month their runs take.

    The replicas its servers hold where no other service shares them run the job sooner, and the layout is ranked by
    them (review66 item 1: TP2 x PP4 at $425.55 a month beat 8 x TP1's $291.22).
    """
    filled = None if opt.filled is None else _with_busy_hours(opt.filled, spec)
    return _with_busy_hours(opt, spec, filled)._replace(filled=filled)


def _with_busy_hours(opt: Option, spec: InferenceSpec, filled: Option | None = None) -> Option:
    """``opt`` with the hours a month its servers run ``spec``'s runs (``filled``'s replicas where it fills them).

    Its running cost a month falls with its hours (review66 item 3: opex stayed at 730 h beside the runs' month).
    """
    ran = filled or opt
    if not isinstance(ran.shape, ReplicaShape):
        return opt
    busy = _busy_hours(spec, sustained_rps(ran, served=True), request_seconds(spec, ran))
    return opt if busy is None else opt._replace(candidate=_at_busy_hours(opt.candidate, busy))


def _busy_hours(spec: InferenceSpec, replicas_rps: float, request_s: float) -> float | None:
    """Hours a month a batch job's runs take on replicas sustaining ``replicas_rps`` (a run's to the places stated)."""
    hours = run_hours(spec, replicas_rps, request_s)
    return None if hours is None else min(HOURS_PER_MONTH, round(hours, HOURS_PLACES) * runs_a_month(spec))


def _at_busy_hours(c: Candidate, busy: float) -> Candidate:
    """``c`` running ``busy`` hours a month; its running cost a month falls with them (review66 item 3)."""
    opex = None if c.opex_usd_per_month is None else c.opex_usd_per_month * busy / HOURS_PER_MONTH
    return c._replace(busy_hours_per_month=busy, opex_usd_per_month=opex)


def job_split(provider: str, spec: InferenceSpec, opt: Option) -> Option:
    """A batch job's split (owned servers and more beside them) with the part billed by the hour at its runs' hours.

    newuser66 item 2: the part rented by the hour beside two owned DGX was priced for all 730 h, so renting every
    server ($46,670 a month) beat the split (about $33,600). The joined candidate's ``busy_hours_per_month`` is then its
    parts' month over its price an hour (owned servers all month, the rented part its runs), so its month, ranking and
    budget add up its parts'.
    """
    if not spec.job or not any(billed_by_the_hour(provider, part.candidate) for part in opt.parts):
        return opt
    busy = _busy_hours(spec, sustained_rps(opt, served=True), request_seconds(spec, opt))
    if busy is None:
        return opt
    parts = tuple(
        p._replace(candidate=_at_busy_hours(p.candidate, busy)) if billed_by_the_hour(provider, p.candidate) else p
        for p in opt.parts
    )
    c = opt.candidate
    months = [p.candidate.usd_per_month for p in parts]
    if c.usd_per_hour is None or not c.usd_per_hour or None in months:
        return opt._replace(parts=parts)
    opex = [p.candidate.opex_usd_per_month for p in parts]
    joined = c._replace(
        busy_hours_per_month=math.fsum(m or 0.0 for m in months) / c.usd_per_hour,
        opex_usd_per_month=None if None in opex else math.fsum(o or 0.0 for o in opex),
    )
    return opt._replace(candidate=joined, parts=parts)


def hourly_job_parts(wl: Workload, chosen: Iterable[tuple[int, Option]]) -> frozenset[tuple[str, ServerKey]]:
    """The batch jobs' parts billed by the hour, by (deployment, server kind): their pools may scale to zero."""
    provider, deployments = wl.hardware.provider, wl.deployments
    return frozenset(
        (dep.name, part.server_kind)
        for index, opt in chosen
        if isinstance(dep := deployments[index], InferenceDeployment) and dep.inference.job
        for part in opt.pieces
        if billed_by_the_hour(provider, part.candidate)
    )


def zero_pools(pools: Iterable[Pool], hourly: frozenset[tuple[str, ServerKey]]) -> frozenset[str]:
    """The pools that hold only batch jobs' parts billed by the hour: they scale to zero nodes between runs."""
    return frozenset(
        p.name
        for p in pools
        if p.deployments
        and not p.owned_nodes
        and all((d, (p.node.platform_id, p.node.gpu_id, p.node.gpus)) in hourly for d in p.deployments)
    )


def job_details(
    spec: InferenceSpec,
    ran: tuple[float, float, Mapping[str, int]],
    pools: Sequence[Pool],
    scaled: frozenset[str],
    details: Mapping[str, Any],
) -> tuple[dict[str, Any], str]:
    """A batch job's run: its hours and cost, and its month of runs; and the reason's sentence on them.

    ``ran``: what its replicas sustain together (req/s), one request's seconds on them (:func:`request_seconds`) and the
    GPUs they take in each of its pools; ``pools``: the
    job's; ``scaled``: the pools that scale to zero (:func:`zero_pools`), where a run pays the nodes its replicas take
    (:func:`nodes_run`), the others their month (its share of a pool by the GPUs it uses there); ``details``: its
    figures so far (its month, ``usd_per_month``, as every service's), which a job on no scaled pool keeps.
    """
    replicas_rps, request_s, gpus = ran
    hours = round(run_hours(spec, replicas_rps, request_s) or 0.0, HOURS_PLACES)  # the figure stated, the months add up
    runs = runs_a_month(spec)
    out: dict[str, Any] = {
        "requests_per_run": spec.requests_per_run,
        "deadline_hours": spec.deadline_hours,
        "hours_per_run": hours,
        "runs_per_month": runs,
        "request_s": round(request_s, 3),
    }
    took = (
        f"runs its {spec.requests_per_run:,} request{'' if spec.requests_per_run == 1 else 's'} in {hours_text(hours)} "
        f"(deadline {hours_text(spec.deadline_hours or 0)}) "
        f"at the {figure_text(replicas_rps)} req/s its replicas sustain"
    )
    mine = [p for p in pools if p.name in scaled]
    fixed = [p for p in pools if p.name not in scaled]
    if mine and all(p.usd_per_hour is not None for p in pools):
        # a run pays the nodes its replicas take in each pool that scales to zero; the others are paid by the month
        run_usd = math.fsum((p.usd_per_hour or 0.0) * nodes_run(p, gpus.get(p.name, 0)) / p.nodes * hours for p in mine)
        held = math.fsum((p.usd_per_hour or 0.0) * HOURS_PER_MONTH * _share(p, gpus.get(p.name, 0)) for p in fixed)
        month = run_usd * runs + held  # within a month: its runs' deadlines fit in one (a workload check)
        out |= {"usd_per_run": round(month / runs, 2), "usd_per_month": round(month, 2)}
        if not fixed:
            out["scales_to_zero"] = True
            if details.get("opex_usd_per_month") is not None:  # rented by the hour: its running cost is its rent
                out["opex_usd_per_month"] = round(month, 2)
        held_text = f", its servers in {', '.join(p.name for p in fixed)} paid by the month" if fixed else ""
        return out, (
            f"{took}: {usd_text(month / runs)} a run, {usd_text(month)} a month at {runs:g} run(s), "
            f"{_between_runs(mine)}{held_text}"
        )
    paid = details.get("usd_per_month")
    if isinstance(paid, int | float):
        out["usd_per_run"] = round(paid / runs, 2)
        return out, f"{took}: {usd_text(paid / runs)} a run as the month of its servers ({usd_text(paid)}) over {runs:g} run(s)"
    return out, took


def _share(pool: Pool, gpus: int) -> float:
    """A job's share of a pool paid by the month: the GPUs it uses there over those in use (the whole where alone)."""
    used = pool.nodes * pool.node.gpus - pool.idle_gpus
    return min(1.0, gpus / used) if used > 0 else 1.0


def job_findings(wl: Workload, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan]) -> list[Finding]:
    """What each batch job's run needs and leaves: its pools scaled to zero, or servers paid all month for its runs."""
    out = []
    by_name = {p.name: p for p in pools}
    planned = {d.name: d for d in deployments}
    jobs = {d.name for d in wl.deployments if isinstance(d, InferenceDeployment) and d.inference.job}
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or dep.name not in jobs:
            continue
        plan = planned[dep.name]
        hours, runs = float(plan.details["hours_per_run"]), float(plan.details["runs_per_month"])
        busy = min(HOURS_PER_MONTH, hours * runs)
        out += _deadline_missed(dep, plan, f"deployments[{i}].inference.deadline_hours")
        mine = [by_name[name] for name in plan.pools if name in by_name]
        at: str = f"deployments[{i}].inference.requests_per_run"
        scaled = [p for p in mine if p.busy_hours_per_month is not None]
        if scaled:  # all its pools, or the part rented by the hour beside owned servers (review67 item 3)
            how = "" if any(p.rented for p in scaled) else _SCALERS
            fixed = [p.name for p in mine if p.busy_hours_per_month is None]
            held = f" (its servers in {', '.join(fixed)} paid by the month whatever runs)" if fixed else ""
            slack_h = max(0.0, (dep.inference.deadline_hours or 0.0) - hours)
            text = (
                f"deployment {dep.name}: a batch job, {runs:g} run(s) a month of {hours_text(hours)}; "
                f"{_between_runs(scaled)}{how}{held}, and the month counts the runs' hours ({hours_text(busy)}) alone: "
                "each run's cold start (nodes boot, the image is pulled, the model downloaded and loaded: "
                "cold-start-time) and the nodes' idle minutes after it, before they are removed, are billed beside "
                f"them, not counted, the cold start within the {hours_text(slack_h)} its deadline "
                f"leaves; something must start the {plan.replicas} replica(s) for a "
                "run and stop them after (a Kubernetes Job, or the engine's Deployment scaled up and back to 0): specgen "
                "renders no workload"
            )
            out.append(Finding("info", "batch-job-scales-to-zero", text, at))
            if hours <= (dep.inference.deadline_hours or 0.0):  # a run past it is said by batch-job-deadline-missed
                out += _tight_deadline(dep.name, plan, slack_h, f"deployments[{i}].inference.deadline_hours")
            continue
        always_on = sorted({n for p in mine for n in p.deployments} - jobs)
        if always_on:
            why = (
                f"its pool(s) also hold {', '.join(always_on)}, which run all month, so they do not scale to zero "
                "for it: a run costs its share of their month over its runs"
            )
        else:
            why = (
                "its servers are paid by the month whatever runs (bought, owned, reserved or rented monthly): a run "
                "costs their month over its runs; servers rented by the hour (a cloud, on demand or spot) would be paid "
                "for the runs' hours alone"
            )
        text = (
            f"deployment {dep.name}: a batch job, {runs:g} run(s) a month of {hours_text(hours)}, its replicas idle "
            f"{hours_text(HOURS_PER_MONTH - busy)} of the month's {HOURS_PER_MONTH} h: {why}"
        )
        out.append(Finding("info", "batch-job-paid-all-month", text, at))
    return out


#: What takes each cloud's pools from zero nodes for a run and back after it.
_SCALERS = (
    " (starting at 0 nodes, minimum 0: GKE's and AKS's cluster autoscalers, or on AWS Karpenter or the Kubernetes "
    "cluster autoscaler for the EKS node groups, add the nodes a run's pods wait for and remove them once empty)"
)


def _between_runs(pools: Sequence[Pool]) -> str:
    """What a batch job's pools do between its runs: a cloud's scale to zero; a provider's rented servers are released."""
    names = ", ".join(p.name for p in pools)
    if any(p.rented for p in pools):  # bare metal rented by the hour from a provider (a Lambda instance)
        return f"the servers of pool(s) {names} rented from their provider for each run and released after"
    return f"its pool(s) {names} scaling to zero nodes between runs"


def _deadline_missed(dep: InferenceDeployment, plan: DeploymentPlan, at: str) -> list[Finding]:
    """A warning where a run outlasts its deadline (review68 item 1): its last request alone takes longer.

    The replicas are sized for the requests in the deadline less the last request's time at full load
    (:func:`~generator.planner.inference.deadline_share`), so a run past it is one whose request alone takes the
    deadline or more, which no replica added shortens.
    """
    hours, deadline = float(plan.details["hours_per_run"]), float(plan.details["deadline_hours"])
    if hours <= deadline:
        return []
    request_s = float(plan.details["request_s"])
    text = (
        f"deployment {dep.name}: a run takes {hours_text(hours)}, past its {hours_text(deadline)} deadline: its last "
        f"request takes {request_s:,.1f} s of it (its TTFT p95 and {dep.inference.avg_output_tokens:,} output tokens at "
        "the TPOT of the batch the run leaves), which more replicas do not shorten; a later deadline_hours, fewer "
        "output tokens a request, or a GPU that decodes faster"
    )
    return [Finding("warning", "batch-job-deadline-missed", text, at)]


def _tight_deadline(name: str, plan: DeploymentPlan, slack_h: float, at: str) -> list[Finding]:
    """A warning where a run leaves its deadline less time than the cold start's timed parts take (review66 item 5)."""
    timed = [v for k in ("model_download_s", "model_load_s") if isinstance(v := plan.details.get(k), int | float)]
    if not timed or slack_h * 3600 >= sum(timed):
        return []
    text = (
        f"deployment {name}: a run takes {hours_text(float(plan.details['hours_per_run']))} of its "
        f"{hours_text(float(plan.details['deadline_hours']))} deadline, leaving {hours_text(slack_h)} for its cold "
        f"start, whose download and load of the model alone take at least {sum(timed):,.1f} s (cold-start-time; the "
        "nodes' boot, the image's pull and the engine's start are not timed): a later deadline_hours, or fewer "
        "requests_per_run, leaves the time a run from zero nodes needs"
    )
    return [Finding("warning", "batch-job-deadline-tight", text, at)]


def job_pools(provider: str, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan], scaled: frozenset[str]) -> list[Pool]:
    """The pools with those that run only for their batch jobs' runs marked: the hours a month they run, ``min_nodes`` 0.

    On a cloud its autoscaler takes such a pool to zero nodes between runs; servers rented from a provider on bare
    metal are rented for each run, as a training job's are (no ``min_nodes``: nothing autoscales them). A pool's hours:
    its jobs' node-hours over its nodes (each job's hours a run x runs a month x the nodes it takes), at most a month;
    its running cost a month falls with them (review66 item 3).
    """
    out = []
    for pool in pools:
        if pool.name not in scaled:
            out.append(pool)
            continue
        members = [(d, share[3]) for d in deployments if (share := d.in_pool(pool.name))]
        hours = math.fsum(
            float(d.details["hours_per_run"]) * float(d.details["runs_per_month"]) * nodes_run(pool, gpus) / pool.nodes
            for d, gpus in members
        )
        busy = round(min(HOURS_PER_MONTH, hours), HOURS_PLACES)
        opex = None if pool.opex_usd_per_month is None else round(pool.opex_usd_per_month * busy / HOURS_PER_MONTH, 2)
        min_nodes = None if provider == "baremetal" else 0
        out.append(pool._replace(min_nodes=min_nodes, busy_hours_per_month=busy, opex_usd_per_month=opex))
    return out


def nodes_run(pool: Pool, gpus: int) -> int:
    """Nodes of ``pool`` a batch job's ``gpus`` take while it runs; a job alone in its pool takes them all.

    review66 item 6: two jobs in one pool were each charged every node of it.
    """
    return min(pool.nodes, math.ceil(gpus / pool.node.gpus)) if pool.node.gpus else pool.nodes


def runs_only_why(pools: Iterable[Pool]) -> str:
    """Why pools that run only for jobs (:attr:`Pool.runs_only`) rest at zero nodes, as a finding says it."""
    jobs = [p for p in pools if p.runs_only]
    if all(p.per_job for p in jobs):
        return "costed per training job"
    if not any(p.per_job for p in jobs):
        return "costed by their batch jobs' runs"
    return "costed per training job or by their batch jobs' runs"


def pool_month_usd(pool: Pool) -> float | None:
    """A pool's cost a month: its price an hour over the hours it runs (a month, or its batch jobs' runs)."""
    if pool.usd_per_hour is None:
        return None
    hours = HOURS_PER_MONTH if pool.busy_hours_per_month is None else pool.busy_hours_per_month
    return pool.usd_per_hour * hours


def idle_service_findings(wl: Workload, deployments: Sequence[DeploymentPlan]) -> list[Finding]:
    """Services whose rate keeps their replicas busy less than :data:`MOSTLY_IDLE_SHARE` of the month: the ways to pay less.

    newuser65 item 3: an API at 0.01 req/s on average held a node all month ($2,336, $444 per million output tokens),
    and nothing named a batch job (whose pool scales to zero), scaling to zero on demand, or a per-token endpoint.
    """
    out = []
    planned = {d.name: d for d in deployments}
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or dep.inference.job:
            continue
        plan = planned[dep.name]
        each, month = plan.details.get("requests_per_s_per_replica_max"), plan.details.get("usd_per_month")
        if not isinstance(each, int | float) or each <= 0:
            continue
        spec = dep.inference
        rate = spec.requests_per_second if spec.average_requests_per_second is None else spec.average_requests_per_second
        share = rate / (plan.replicas * each)
        if share >= MOSTLY_IDLE_SHARE:
            continue
        which = "average " if spec.average_requests_per_second is not None else ""
        paid = f" (${month:,.0f} a month)" if isinstance(month, int | float) else ""
        text = (
            f"deployment {dep.name}: its {figure_text(rate)} req/s {which}keeps its {plan.replicas} replica(s) busy "
            f"{share:.2%} of their {figure_text(plan.replicas * each)} req/s, on servers running all month{paid}. "
            "Requests that can wait fit a batch job (requests_per_run, deadline_hours, runs_per_month), whose pool "
            "scales to zero between runs; a service that must answer after idling could scale to zero on demand (KEDA "
            "minReplicaCount 0, a node pool with minimum 0), each first request then waiting for a node to boot and "
            "load the model (cold-start-time), which specgen does not plan; an endpoint billed per token pays by use"
        )
        field = "average_requests_per_second" if which else "requests_per_second"
        out.append(Finding("info", "mostly-idle-service", text, f"deployments[{i}].inference.{field}"))
    return out
