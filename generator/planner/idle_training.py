"""A training job on a serving pool's idle GPUs: what it would take, said beside the plan's own pool for it.

newuser44 item 4: a weekly LoRA fine-tune rented a node of its own for each run ($16) while a serving pool had an idle
H100 all month. The plan keeps a training job off the serving pools (its memory, interconnect and power peaks could
break a service's latency targets); this finding quantifies the alternative it does not take, from the plan's own
figures: the pool's idle GPUs (the ``idle-gpus`` finding's count, placed node by node as the planner packs the
replicas), the job re-timed on that GPU by the planner's training search (:func:`training_options`), its runs a month
against the month's hours, and the cost either way. The search is given the idle GPUs (:class:`IdleGpus`), so every
degree they hold is timed, not only the fewest GPUs the job needs and those that fill whole servers (fix178: DP1 on
1 of 4 idle H100s, 3.37 h a run, where DP4 takes 0.84 h); the fastest within the job's deadline is said.

Left out: pools whose GPUs Kubernetes shares (a pod asking ``nvidia.com/gpu`` there gets a share or a MIG instance, not
a whole GPU), pools that scale down off-peak (``min_nodes``: their idle GPUs are the peak's), training pools, and jobs
of a ``run_after`` chain. The replicas a service frees between its peak and its ``average_requests_per_second`` are
not offered either: the plan models the average rate, not how many hours of the month it holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from generator.calculator.model_source import ResolvedModel
from generator.catalog.records import acquired
from generator.planner.candidates import SizedOptions
from generator.planner.idle_degrees import IdleGpus
from generator.planner.option import Option
from generator.planner.plan import PAID_AS_RUNS, PAID_WHETHER_RUN, RUNS_ENERGY_PAID, DeploymentPlan, Finding, OwnedRuns, Pool
from generator.planner.training_energy import owned_pool_runs
from generator.sizing.constants import Constants
from generator.units import GIB, HOURS_PER_MONTH, hours_text, usd_text
from generator.words import listed
from generator.workload.capacity_type import SPOT
from generator.workload.models import InferenceDeployment, TrainingDeployment, Workload

CODE = "training-fits-idle-gpus"


def idle_gpus(pool: Pool, deployments: Sequence[DeploymentPlan]) -> int:
    """GPUs of ``pool`` no replica or job uses (those ``idle-gpus`` reports).

    A pool whose GPUs are shared counts the GPUs with no share in use; the jobs of a ``run_after`` chain take the same
    GPUs in turn, so the widest counts.
    """
    shares = [(d.kind, share[3]) for d in deployments if (share := d.in_pool(pool.name))]
    in_turn = len(shares) > 1 and all(kind == "training" for kind, _ in shares)
    used = max(g for _, g in shares) if in_turn else sum(g for _, g in shares)
    return pool.idle_gpus if pool.shares_per_gpu else pool.node.gpus * pool.nodes - used


def _free_by_node(pool: Pool, deployments: Sequence[DeploymentPlan], spread: frozenset[str]) -> list[int] | None:
    """Each node's GPUs the rates do not need, as the planner packs the pool's replicas (:func:`pool_placement`).

    The GPUs no replica uses, and those of the replicas a service runs past its rate's need (``replicas_past_rate``:
    the last ones placed, on GPUs that would otherwise idle); None: not placed.
    """
    from generator.planner.placement import pool_placement

    placed = pool_placement(deployments, pool, spread, laid_out=False)  # GPUs counted, not which
    if placed is None:
        return None
    needed = {d.name: d.replicas - _spare_replicas(d) for d in deployments}
    per_node = pool.node.hosts
    used = [0] * pool.nodes
    for host, replicas in enumerate(placed):
        used[host // per_node] += sum(len(r.gpus) for r in replicas if r.replica <= needed[r.deployment])
    return [pool.node.gpus - n for n in used]


def _spare_replicas(d: DeploymentPlan) -> int:
    """The replicas past the rate a job may take the place of: none of a service run N+k (``nodes_down_tolerated``).

    fix187 (newuser100 item 6): ``replicas_past_rate`` counts the N+1 replica (its ``needed`` is the rate's alone), so
    the job was offered its GPU "at $0" while the service it leaves is N+0 for the hours the runs take.
    """
    return 0 if d.details.get("nodes_down_tolerated") else int(d.details.get("replicas_past_rate", 0))


def past_rate_gpus(pool: Pool, deployments: Sequence[DeploymentPlan]) -> int:
    """GPUs of ``pool`` running replicas past their service's rate (``replicas_past_rate``), whole GPUs each.

    A replica's GPUs are ``max(tp, ep) x pp`` (:attr:`DeploymentPlan.stage_gpus`): an attention-DP replica TP1 EP2 takes
    2 (review72 item 4: counted as TP x PP, 1, it left "3 idle all month" on a pool with none idle).
    """
    return sum(_spare_replicas(d) * d.stage_gpus * d.pp for d in deployments if d.in_pool(pool.name) and not d.split)


def _fits(opt: Option, idle: list[int], pool: Pool) -> bool:
    """Whether ``opt`` (a layout on the pool's servers) runs on its idle GPUs: within one node, or on whole idle nodes.

    A layout over several nodes takes whole nodes (:func:`~generator.planner.options.node_counts`), each idle; one that
    asks for a GPU fabric between nodes needs the pool's nodes to have one.
    """
    c = opt.candidate
    if c.gpus_per_node != pool.node.gpus:
        return False
    if c.nodes == 1:
        return max(idle, default=0) >= c.gpus
    if opt.needs.needs_fabric and not any(nic.role == "fabric" for nic in pool.node.nics):
        return False
    return sum(n == pool.node.gpus for n in idle) >= c.nodes


def _serving_pools(wl: Workload, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan]) -> list[tuple[Pool, list[int]]]:
    """The serving pools with whole GPUs their rates do not need all month, and each node's such GPUs."""
    from generator.planner.spread import spread_services

    kinds = {d.name: d.kind for d in deployments}
    spread = spread_services(wl)
    out = []
    for pool in pools:
        if not pool.deployments or any(kinds.get(name) != "inference" for name in pool.deployments):
            continue
        if pool.shares_per_gpu or pool.min_nodes is not None:
            continue
        if idle_gpus(pool, deployments) + past_rate_gpus(pool, deployments) <= 0:
            continue
        idle = _free_by_node(pool, deployments, spread)
        if idle is not None and any(idle):
            out.append((pool, idle))
    return out


def idle_training_findings(
    wl: Workload,
    models: Mapping[str, ResolvedModel],
    consts: Constants,
    chosen: Mapping[int, Option],
    pools: Sequence[Pool],
    deployments: Sequence[DeploymentPlan],
    chained: frozenset[int],
    sizes: SizedOptions | None = None,
) -> list[Finding]:
    """For each training job on a pool of its own: the serving pool whose idle GPUs would hold its run, and at what.

    ``chosen``: each deployment's option by index; ``chained``: the indices of jobs in a ``run_after`` chain;
    ``sizes``: the search's options by server kind, which already hold the job's on the pools' servers.
    """
    jobs = [
        (i, d)
        for i, d in enumerate(wl.deployments)
        if isinstance(d, TrainingDeployment) and i not in chained and i in chosen and d.training.dataset_tokens
    ]
    if not jobs:
        return []
    serving = _serving_pools(wl, pools, deployments)
    if not serving:
        return []
    from generator.planner.inventory import free_servers
    from generator.planner.options import allowed_hardware
    from generator.planner.training_candidates import training_options

    hardware = {(hw.platform.id, hw.gpu.id): hw for hw in allowed_hardware(wl)}
    owned = free_servers(wl)  # as the search sized the job (owned servers of a kind let it try parameter offload)
    planned = {d.name: d for d in deployments}
    # fix170 item 1: the owned pools charged their jobs' runs' energy, whose month is not paid whatever runs
    charged = {p.name: got for p in pools if (got := owned_pool_runs(wl, p, list(deployments), consts)) is not None}
    out = []
    for index, dep in jobs:
        runs = dep.training.runs_per_month
        fitting: list[_Fit] = []
        for order, (pool, idle) in enumerate(serving):
            hw = hardware.get((pool.node.platform_id, pool.node.gpu_id))
            if hw is None or pool.spot != (dep.capacity_type == SPOT):
                continue  # review30 item 5: a job is offered only a pool of its own capacity type (spot or on demand)
            free = IdleGpus(max(idle), sum(n == pool.node.gpus for n in idle), pool.node.gpus)
            for opt in training_options(wl, dep, models[dep.name], consts, [], owned, sizes=sizes, hardware=[hw], idle=free):
                hours = opt.candidate.run_hours
                if not hours or not _fits(opt, idle, pool):
                    continue
                if runs is not None and runs * hours > HOURS_PER_MONTH:
                    continue  # its runs a month would not fit the month on those GPUs
                fitting.append((hours, opt.candidate.gpus, order, opt, pool, idle))
        if fitting:
            _, _, _, opt, pool, idle = _fastest(fitting)
            own = planned[dep.name]
            energy = [charged[name] for name in own.pools if name in charged]
            message = _message(wl, dep, own, opt, pool, idle, deployments, energy)
            out.append(Finding("info", CODE, message, f"deployments[{index}]"))
    return out


#: A layout on a serving pool's idle GPUs: its hours a run, GPUs, the pool's place, the layout, the pool, its idle GPUs.
_Fit = tuple[float, int, int, Option, Pool, list[int]]


def _fastest(fitting: Sequence[_Fit]) -> _Fit:
    """The fastest layout (fewest GPUs, then the first pool, on a tie), and of those on its GPUs that nearly tie it the simplest.

    fix178: every degree the idle GPUs hold is timed, so ZeRO stages that run alike on as many GPUs tie to the float
    (DP4 at 0.843 h a run, ZeRO-0 to ZeRO-3): the one the search's near tie keeps (:func:`_simplicity`) is said.
    """
    from generator.planner.near_tie import within_near_tie
    from generator.planner.training_candidates import _simplicity

    first = min(fitting, key=lambda f: f[:3])
    tied = [
        f
        for f in fitting
        if f[4] is first[4]
        and (f[3].candidate.gpus, f[3].candidate.nodes) == (first[3].candidate.gpus, first[3].candidate.nodes)
        and within_near_tie(f[0], first[0])
    ]
    return min(tied, key=lambda f: (_simplicity(f[3]), f[:3]))


def _message(
    wl: Workload,
    dep: TrainingDeployment,
    own: DeploymentPlan,
    opt: Option,
    pool: Pool,
    idle: list[int],
    deployments: Sequence[DeploymentPlan],
    energy: Sequence[OwnedRuns] = (),
) -> str:
    """The finding's text: where, on what layout, how long, how often, what it costs either way, and what it takes."""
    from generator.planner.training import TrainingShape

    shape = opt.shape
    assert isinstance(shape, TrainingShape)
    c = opt.candidate
    hours = c.run_hours or 0.0
    total = pool.node.gpus * pool.nodes
    how = "owned" if pool.owned_nodes == pool.nodes else "rented" if pool.rented else acquired(wl.hardware.provider)
    where = "on one node" if c.nodes == 1 else f"on {c.nodes} whole idle nodes"
    budget = shape.hardware.gpu.memory_bytes
    own_hours = own.details.get("hours")
    past = past_rate_gpus(pool, deployments)
    idle_now = sum(idle) - past
    running = f"{past} GPU(s) running replicas past the rate's need (replicas_past_rate), whose place the job would take"
    parts = [f"{idle_now} idle all month, idle-gpus" if past else "idle all month, idle-gpus"] if idle_now else []
    held = listed([*parts, running] if past else parts, "and")
    text = (
        f"deployment {dep.name}: a run fits the {sum(idle)} {'idle ' if not past else ''}GPU(s) of serving pool "
        f"{pool.name}{' its rates do not need' if past else ''} (of its {total} "
        f"{how}, {pool.nodes} x {pool.node.gpus}-GPU {pool.node.platform_id}; {held}): "
        f"{shape.reason} on {c.gpus} {pool.node.gpu_id} {where}, {shape.memory.per_gpu.total / GIB:.1f} GiB per GPU of "
        f"{budget / GIB:.1f} GiB, {hours_text(hours)} a run as the planner's training model times it there"
        + (f" ({hours_text(own_hours)} on its own pool {own.pool})" if own_hours else "")
    )
    gbs = shape.global_batch_size
    if dep.training.global_batch_size is None and gbs != own.details.get("global_batch_size"):
        own_gbs = own.details.get("global_batch_size")
        text += f", {gbs} sequences an optimizer step there against {own_gbs} (global_batch_size not set)"
    runs = dep.training.runs_per_month
    spare = "spare" if past else "idle"
    if runs is not None:
        month = hours_text(runs * hours)
        text += f"; its {runs:g} runs a month take {month} of the {HOURS_PER_MONTH} h a month those GPUs are {spare}"
    else:
        most = math.floor(HOURS_PER_MONTH / hours)
        text += f"; runs_per_month not set: the {HOURS_PER_MONTH} h a month those GPUs are {spare} hold up to {most:,} runs"
    text += f". There it adds $0 to the fleet's month, against its own pool's {_own_cost(own, runs, energy)}"
    services = [d for d in wl.deployments if isinstance(d, InferenceDeployment) and d.name in pool.deployments]
    text += (
        f". The plan keeps its own pool: co-locating would have {pool.name}'s nodes run the job's pod (its node selector "
        f"and toleration, {shape.hardware.gpu.device_resource}: {c.gpus_per_node if c.nodes > 1 else c.gpus}) beside "
        f"{listed([d.name for d in services])}, whose latency targets its memory, interconnect and power peaks could break, "
        "the risk the plan avoids"
    )
    varying = [d.name for d in services if d.inference.average_requests_per_second is not None]
    if varying:
        text += (
            f"; the replicas freed between the average and the peak rate ({listed(varying)}) are not counted: the plan "
            "models the average rate, not how many hours of the month it holds"
        )
    return text


def _own_cost(own: DeploymentPlan, runs: float | None, energy: Sequence[OwnedRuns] = ()) -> str:
    """What the job's own pool costs: a run rented per run (and its runs' month), else the servers' month.

    ``energy``: what its owned pools charged their runs' energy charge it (:class:`OwnedRuns`); their month is those
    runs' energy, paid only as it runs, and any colocation of theirs, paid whether they run or not (fix170 item 1: it
    was said "paid whatever runs", as ``specgen diff`` said it before newuser96 item 2).
    """
    details = own.details
    job, month, runs_month = details.get("usd_per_job"), details.get("usd_per_month"), details.get("usd_per_month_of_runs")
    if "usd_per_hour" in details:  # rented per run
        if job is None:
            return "an unpriced run"
        at_runs = f" ({usd_text(runs_month)} a month at {runs:g} runs)" if runs_month is not None else ""
        return f"{usd_text(job)} a run{at_runs}"
    if month is None:
        return "an unpriced month"
    if not energy or "cost_share" in details or details.get("co_located"):
        return f"{usd_text(month)} a month, paid whatever runs"
    runs_usd = math.fsum(o.energy_usd_per_month for o in energy)
    if month - runs_usd < 0.005:
        return f"{usd_text(month)} a month of {RUNS_ENERGY_PAID}, {PAID_AS_RUNS}"
    return (
        f"{usd_text(month)} a month: {RUNS_ENERGY_PAID} ({usd_text(runs_usd)}, {PAID_AS_RUNS}) and their colocation "
        f"({usd_text(month - runs_usd)}, {PAID_WHETHER_RUN})"
    )
