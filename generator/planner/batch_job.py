"""A batch job served by replicas: ``inference.requests_per_run`` within ``deadline_hours``, ``runs_per_month`` runs.

The replicas are sized for the rate ``requests_per_run / (deadline_hours x 3600)`` (set as the workload loads). A run
takes its requests over what the replicas sustain together (:func:`run_hours`: within the deadline, sooner where the
layout's replicas sustain more than the rate). On a cloud, or on servers rented by the hour, a pool that holds only
such jobs scales to zero nodes between runs and is paid for its runs' hours alone (:func:`job_pools`): each job a
run its pools' price an hour over its run's hours (a pool holding several jobs runs them one after another, each on
all its nodes: an upper bound where they could share the nodes). Bought, owned, reserved or monthly-rented servers are
paid by the month whatever runs: a run is then the month over the runs (newuser65 items 1-3: a weekly 48 h job was
priced as if it ran all month, $44,403 against about $12,700 of runs, and its budget refused it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from generator.planner.inference import ReplicaShape
from generator.planner.plan import DeploymentPlan, Finding, Pool
from generator.planner.tco import billed_by_the_hour
from generator.units import HOURS_PER_MONTH, figure_text, hours_text, usd_text
from generator.workload.models import InferenceDeployment, InferenceSpec

if TYPE_CHECKING:
    from generator.planner.option import Option
    from generator.workload.models import Workload


#: Places a run's hours are stated to (0.36 s), in ``spec.json`` and in every month counted from them.
HOURS_PLACES = 4
#: A service whose rate (its average where it gives one) takes less than this share of what its replicas sustain is
#: said to be mostly idle (newuser65 item 3): a reporting threshold, not a sourced figure.
MOSTLY_IDLE_SHARE = 0.05


def runs_a_month(spec: InferenceSpec) -> float:
    """A batch job's runs a month: its ``runs_per_month``, else one."""
    return spec.runs_per_month or 1.0


def run_hours(spec: InferenceSpec, sustained_rps: float) -> float | None:
    """Hours one run of a batch job takes on replicas sustaining ``sustained_rps`` together; None for a service."""
    if spec.requests_per_run is None or sustained_rps <= 0:
        return None
    return spec.requests_per_run / sustained_rps / 3600


def job_options(provider: str, spec: InferenceSpec, options: list[Option]) -> list[Option]:
    """A batch job's options, each billed by the hour with the hours a month its runs take (its servers' month).

    The ranking, the budget and every month a layout states then count the runs' hours (newuser65 items 1, 2: a
    weekly 48 h job was ranked and held to its budget at a month of the peak's servers, $44,403 against $8,635).
    Another service's options, and a batch job's on servers paid by the month, are as they are.
    """
    if not spec.job:
        return options
    runs = runs_a_month(spec)
    out = []
    for opt in options:
        c, shape = opt.candidate, opt.shape
        hours = run_hours(spec, c.replicas * shape.planned_requests_per_s) if isinstance(shape, ReplicaShape) else None
        if hours is None or opt.parts or not billed_by_the_hour(provider, c):
            out.append(opt)
            continue
        busy = min(HOURS_PER_MONTH, round(hours, HOURS_PLACES) * runs)
        out.append(opt._replace(candidate=c._replace(busy_hours_per_month=busy)))
    return out


def hourly_jobs(wl: Workload, chosen: Iterable[tuple[int, Option]]) -> frozenset[str]:
    """The batch jobs whose chosen layouts are billed by the hour (every part): their pools may scale to zero."""
    provider, deployments = wl.hardware.provider, wl.deployments
    return frozenset(
        deployments[index].name
        for index, opt in chosen
        if isinstance(dep := deployments[index], InferenceDeployment)
        and dep.inference.job
        and all(billed_by_the_hour(provider, part.candidate) for part in opt.pieces)
    )


def zero_pools(pools: Iterable[Pool], hourly: frozenset[str]) -> frozenset[str]:
    """The pools that hold only batch jobs billed by the hour: they scale to zero nodes between runs."""
    return frozenset(p.name for p in pools if p.deployments and set(p.deployments) <= hourly and not p.owned_nodes)


def job_details(
    spec: InferenceSpec, sustained_rps: float, pools: Sequence[Pool], scaled: frozenset[str], details: Mapping[str, Any]
) -> tuple[dict[str, Any], str]:
    """A batch job's run: its hours and cost, and its month of runs; and the reason's sentence on them.

    ``pools``: the job's; ``scaled``: the pools that scale to zero (:func:`zero_pools`); ``details``: its figures so
    far (its month, ``usd_per_month``, as every service's: its pools' month, or its share of a co-located one).
    """
    hours = round(run_hours(spec, sustained_rps) or 0.0, HOURS_PLACES)  # the figure stated, which the months add up
    runs = runs_a_month(spec)
    out: dict[str, Any] = {
        "requests_per_run": spec.requests_per_run,
        "deadline_hours": spec.deadline_hours,
        "hours_per_run": hours,
        "runs_per_month": runs,
    }
    took = (
        f"runs its {spec.requests_per_run:,} requests in {hours_text(hours)} (deadline {hours_text(spec.deadline_hours or 0)}) "
        f"at the {figure_text(sustained_rps)} req/s its replicas sustain"
    )
    hourly = [p.usd_per_hour for p in pools]
    if pools and all(p.name in scaled for p in pools) and None not in hourly:
        per_run = sum(h or 0.0 for h in hourly) * hours
        month = per_run * runs  # within a month: its runs' deadlines fit in one (a workload check)
        out |= {"usd_per_run": round(per_run, 2), "usd_per_month": round(month, 2), "scales_to_zero": True}
        return out, f"{took}: {usd_text(per_run)} a run, {usd_text(month)} a month at {runs:g} run(s), {_between_runs(pools)}"
    paid = details.get("usd_per_month")
    if isinstance(paid, int | float):
        out["usd_per_run"] = round(paid / runs, 2)
        return out, f"{took}: {usd_text(paid / runs)} a run as the month of its servers ({usd_text(paid)}) over {runs:g} run(s)"
    return out, took


def job_findings(wl: Workload, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan]) -> list[Finding]:
    """What each batch job's run needs and leaves: its pools scaled to zero, or servers paid all month for its runs."""
    out = []
    by_name = {p.name: p for p in pools}
    jobs = {d.name for d in wl.deployments if isinstance(d, InferenceDeployment) and d.inference.job}
    for i, dep in enumerate(wl.deployments):
        if dep.name not in jobs:
            continue
        plan = next(d for d in deployments if d.name == dep.name)
        hours, runs = float(plan.details["hours_per_run"]), float(plan.details["runs_per_month"])
        busy = min(HOURS_PER_MONTH, hours * runs)
        mine = [by_name[name] for name in plan.pools if name in by_name]
        at: str = f"deployments[{i}].inference.requests_per_run"
        if plan.details.get("scales_to_zero"):
            scaled = "" if any(p.rented for p in mine) else _SCALERS
            text = (
                f"deployment {dep.name}: a batch job, {runs:g} run(s) a month of {hours_text(hours)}; "
                f"{_between_runs(mine)}{scaled}, and the month counts the runs' hours ({hours_text(busy)}). Each run "
                "starts cold: nodes boot, the image is pulled and the model downloaded "
                "and loaded before the first request (see cold-start-time where stated), time the deadline must leave; "
                f"something must start the {plan.replicas} replica(s) for a run and stop them after (a Kubernetes Job, "
                "or the engine's Deployment scaled up and back to 0): specgen renders no workload"
            )
            out.append(Finding("info", "batch-job-scales-to-zero", text, at))
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


#: What takes each cloud's pools to zero nodes between runs.
_SCALERS = " (minimum 0: GKE minNodeCount, EKS min_size, AKS min_count; Karpenter removes empty nodes)"


def _between_runs(pools: Sequence[Pool]) -> str:
    """What a batch job's pools do between its runs: a cloud's scale to zero; a provider's rented servers are released."""
    names = ", ".join(p.name for p in pools)
    if any(p.rented for p in pools):  # bare metal rented by the hour from a provider (a Lambda instance)
        return f"the servers of pool(s) {names} rented from their provider for each run and released after"
    return f"its pool(s) {names} scaling to zero nodes between runs"


def job_pools(provider: str, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan], scaled: frozenset[str]) -> list[Pool]:
    """The pools with those that run only for their batch jobs' runs marked: the hours a month they run, ``min_nodes`` 0.

    On a cloud its autoscaler takes such a pool to zero nodes between runs; servers rented from a provider on bare
    metal are rented for each run, as a training job's are (no ``min_nodes``: nothing autoscales them). A pool's hours:
    its jobs' runs one after another (each job's hours a run x runs a month), at most a month.
    """
    out = []
    for pool in pools:
        if pool.name not in scaled:
            out.append(pool)
            continue
        members = [d.details for d in deployments if pool.name in d.pools]
        hours = sum(float(m["hours_per_run"]) * float(m["runs_per_month"]) for m in members)
        busy = round(min(HOURS_PER_MONTH, hours), HOURS_PLACES)
        out.append(pool._replace(min_nodes=None if provider == "baremetal" else 0, busy_hours_per_month=busy))
    return out


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
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or dep.inference.job:
            continue
        plan = next(d for d in deployments if d.name == dep.name)
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
