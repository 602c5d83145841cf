"""A training job that could run in turn on another job's servers, idle most of the month (newuser30 item 7).

An owned 4 x A100 server ran one weekly fine-tune 6.7 h x 4 a month (96% idle) while a second weekly job bought a
desktop of two RTX 5090s; with ``run_after`` the second ran after the first on the owned server: $633 a month and
$6,398 of capex less, deadline met. Nothing said so. Here each such pair is planned again with ``run_after`` set, and
where the fleet then ranks better on the objective the finding gives both figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.errors import ChainDeadlineError, InfeasibleError, InputError, SpecgenError
from generator.planner.plan import Finding, Plan, Pool
from generator.units import HOURS_PER_MONTH, sequence_hours_text
from generator.words import counted
from generator.workload.chains import chain_errors
from generator.workload.models import TrainingDeployment

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: A job's servers busy less than this share of the month are worth trying another job on in turn.
IDLE_ENOUGH = 0.5
#: Plans tried at most for one workload (each plans the whole fleet again).
MAX_TRIES = 2


def chain_hint_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """An info finding per training job that the fleet would hold better run after a job whose servers idle.

    Only where no job runs after another yet (a chain given is the user's choice, and a plan planned here has one):
    a job on servers paid by the month (owned or bought, not rented per run) busy under half of it, and another job
    on other servers with the same runs a month (on servers bought or owned, any runs a month: newuser80 item 2, where a
    deadline of the less frequent job keeps it off them, that is said instead, once a pair, where no order of the two
    plans: fix138, the less frequent job due sooner than its slices would take runs stretched where it runs last).
    ``replan`` plans the workload with ``run_after`` set.
    """
    from generator.planner import _fleet_rank  # the fleet's sort key, as the fleet search ranks plans

    wl = loaded.workload
    jobs = {d.name: d for d in wl.deployments if isinstance(d, TrainingDeployment)}
    if len(jobs) < 2 or any(d.training.run_after for d in jobs.values()):
        return []
    pools = {p.name: p for p in plan.pools}
    planned = {d.name: d for d in plan.deployments}
    held = {}
    for name, job in jobs.items():
        pool = pools.get(planned[name].pool) if name in planned else None
        hours, runs = planned[name].details.get("hours") if name in planned else None, job.training.runs_per_month
        if pool is None or pool.per_job or not hours or not runs or len(pool.deployments) != 1:
            continue
        busy = hours * runs / HOURS_PER_MONTH
        if busy < IDLE_ENOUGH:
            held[name] = (pool, busy)
    out = []
    best = _fleet_rank(wl.objective, plan, wl=wl)
    tries = MAX_TRIES
    said: set[frozenset[str]] = set()
    kept_apart: dict[frozenset[str], tuple[int, str]] = {}  # a pair a deadline keeps apart, said where no order plans
    for first, (pool, busy) in sorted(held.items()):
        for name, dep in sorted(jobs.items()):
            # jobs of different cadences share servers bought or owned, the less frequent one in slices of its run
            # between the other's runs (newuser80 item 2; training_chain), where both give their runs a month
            mine, theirs = dep.training.runs_per_month, jobs[first].training.runs_per_month
            same_runs = mine == theirs or (wl.hardware.provider == "baremetal" and bool(mine) and bool(theirs))
            own = pools.get(planned[name].pool) if name in planned else None
            # what the chain saves is the other job's servers: bought, or rented (a month or a run), not owned
            pays = own is not None and (own.per_job or own.nodes > own.owned_nodes)
            if name == first or own is None or own is pool or not pays or not same_runs or tries <= 0:
                continue
            pair = frozenset((name, first))
            if pair in said:  # the pair is said once, in one order
                continue
            index = wl.deployments.index(dep)
            chained = wl._replace(
                deployments=tuple(
                    d._replace(training=d.training._replace(run_after=first)) if d is dep else d for d in wl.deployments
                )
            )
            if errors := chain_errors(loaded.document, chained):
                # the less frequent job first with a deadline its slices miss: the other order may run it stretched
                if blocked := _deadline_blocks(errors, dep, jobs[first], pool, own, busy):
                    kept_apart.setdefault(pair, (index, blocked))
                continue
            tries -= 1
            try:
                other = replan(loaded._replace(workload=chained), consts)
            except InfeasibleError as error:  # run stretched, the less frequent job still misses its deadline (fix138)
                if (missed := _stretch_blocks(error, dep, jobs[first], pool, own, busy)) is not None:
                    kept_apart[pair] = (index, missed)
                continue
            except SpecgenError:  # a chain the planner cannot hold (deadlines, limits) is no hint
                continue
            kept_apart.pop(pair, None)  # the two share a pool in this order: no deadline keeps them apart
            if _fleet_rank(wl.objective, other, wl=wl) >= best:
                continue
            said.add(pair)
            out.append(
                Finding(
                    "info",
                    "run-after-idle-servers",
                    f"{name} could run after {first}, whose servers ({pool.nodes} x {pool.node.platform_id}) are busy "
                    f"{busy:.0%} of the month at {_runs_text(jobs[first])}: with run_after: {first} on {name} the "
                    f"two run in turn on {_chain_servers(other, name)}{_sliced_text(dep, jobs[first], other)} and the fleet "
                    f"plans at {_fleet_text(other)} "
                    f"against {_fleet_text(plan)}",
                    f"deployments[{index}].training",
                )
            )
            break  # one hint a job of idle servers
    for index, text in sorted(kept_apart.values()):
        out.append(Finding("info", "run-after-idle-servers", text, f"deployments[{index}].training"))
    return out


def _deadline_blocks(
    errors: list[InputError], dep: TrainingDeployment, first: TrainingDeployment, pool: Pool, own: Pool, busy: float
) -> str | None:
    """Where only the less frequent job's deadline keeps two jobs of different cadences off one pool, that said."""
    mine, theirs = dep.training.runs_per_month or 0, first.training.runs_per_month or 0
    if mine == theirs or len(errors) != 1 or not (errors[0].location and errors[0].location.path.endswith("deadline_hours")):
        return None
    rare = dep if mine < theirs else first
    window = HOURS_PER_MONTH / (rare.training.runs_per_month or 1)
    return (
        f"{dep.name} could share the servers of {first.name} ({pool.nodes} x {pool.node.platform_id}, busy {busy:.0%} "
        f"of the month), freeing its own {own.nodes} x {own.node.platform_id}, but {rare.name}'s deadline_hours "
        f"{rare.training.deadline_hours:g} keeps it off them: sharing, the less frequent job runs in slices between "
        f"the other's runs (checkpointed and resumed, the other's runs never delayed) and a run of it ends within "
        f"{window:.4g} h; with deadline_hours dropped (or {window:.4g} or more) and run_after: {first.name} on "
        f"{dep.name} they share one pool (run last, after {(dep if rare is first else first).name}, it would run "
        "straight through the gaps between the other's runs instead, where its deadline allows)"
    )


def _stretch_blocks(
    error: InfeasibleError, dep: TrainingDeployment, first: TrainingDeployment, pool: Pool, own: Pool, busy: float
) -> str | None:
    """Where the less frequent job, run stretched after the other, misses its deadline: that said, with the figures."""
    mine, theirs = dep.training.runs_per_month or 0, first.training.runs_per_month or 0
    where = error.location.path if error.location else ""
    # the late job run stretched, as the planner marks it (review81 item 12: not its message's wording)
    if mine >= theirs or not where.endswith("deadline_hours") or not isinstance(error, ChainDeadlineError) or not error.stretched:
        return None
    why = error.reasons
    window = HOURS_PER_MONTH / mine
    return (
        f"{dep.name} could share the servers of {first.name} ({pool.nodes} x {pool.node.platform_id}, busy {busy:.0%} "
        f"of the month), freeing its own {own.nodes} x {own.node.platform_id}, but its deadline_hours "
        f"{dep.training.deadline_hours:g} keeps it off them: with run_after: {first.name} on {dep.name}, {why}; with a "
        f"deadline_hours its stretched run meets (or {window:.4g} or more, in slices of its run) they can share one pool"
    )


def _sliced_text(dep: TrainingDeployment, first: TrainingDeployment, other: Plan | None = None) -> str:
    """How two jobs of different cadences share the servers, empty where they run equally often.

    ``other``: the plan with them chained, where the less frequent job may run stretched (fix138).
    """
    mine, theirs = dep.training.runs_per_month or 0, first.training.runs_per_month or 0
    if mine == theirs:
        return ""
    rare = dep if mine < theirs else first
    planned = next((d.details for d in other.deployments if d.name == rare.name), {}) if other is not None else {}
    if (runs := planned.get("stretched_preemptions")) is not None:
        return (
            f" ({rare.name}, at {_runs_text(rare)} and due in {rare.training.deadline_hours:g} h, run straight through "
            f"the gaps between the other's runs, pre-empted by {runs} of them and resumed: it finishes at "
            f"{sequence_hours_text(planned['finishes_at_hours'])} h, and the other's runs are not delayed)"
        )
    return (
        f" ({rare.name}, at {_runs_text(rare)}, in slices of its run between the other's runs, checkpointed and "
        "resumed: the other's runs are not delayed)"
    )


def _runs_text(dep: TrainingDeployment) -> str:
    runs = dep.training.runs_per_month or 0
    return f"{runs:g} run{'' if runs == 1 else 's'} a month"


def _chain_servers(plan: Plan, name: str) -> str:
    """The servers the chain holding ``name`` runs on in ``plan``."""
    pool = next(p for p in plan.pools if name in p.deployments)
    return f"{pool.nodes} x {pool.node.platform_id}"


def _fleet_text(plan: Plan) -> str:
    """A fleet's month, capex and GPUs as a finding says them."""
    t = plan.totals
    usd = t.get("usd_per_month")
    month = "unpriced" if usd is None else f"${usd + t.get('training_usd_per_month', 0.0):,.0f}/month"
    capex = f", capex ${t['capex_usd']:,.0f}" if t.get("capex_usd") else ""
    return f"{month}{capex}, {counted(t['gpus'], 'GPU')}"
