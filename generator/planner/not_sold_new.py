"""What a deployment would have bought of a product no longer sold new, and what the plan buys instead.

A purchase record may say, with its sources, that the product is not sold new (``availability.sold_new: false``,
``purchases.json``): its price (a launch list price) cannot be paid, so the planner does not buy it
(:func:`~generator.planner.options.not_sold_new_why`); one the team owns is still used. Where such a server would
have ranked first on the objective at its catalog price, the plan says so: the product, the price it would have been
bought at, the sources that it is not sold new, and what is bought instead (newuser30 item 11, newuser29 item 12: a
lab's embedding box was an RTX 3090 at its 2020 launch price of $1,499).
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import PurchaseRecord
from generator.planner.candidates import inference_options, ranking_candidate, within_limits
from generator.planner.option import Option
from generator.planner.options import Hardware, _refusals, not_sold_new_why, rank
from generator.planner.plan import Candidate, DeploymentPlan, Finding, Plan, Pool
from generator.planner.tco import cost_text, rented_at_given_rates
from generator.sizing.constants import Constants
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, TrainingDeployment, Workload

#: The finding's code.
NOT_SOLD_NEW = "not-sold-new"


def unsold_hardware(wl: Workload) -> list[Hardware]:
    """The bare-metal servers the workload would allow buying but for their product no longer being sold new."""
    if wl.hardware.provider != "baremetal" or not wl.hardware.buy:
        return []
    gpus = catalog.gpus()
    priced = rented_at_given_rates(wl)
    out = []
    for platform in sorted(catalog.platforms().values(), key=lambda p: p.id):
        if platform.provider != "baremetal":
            continue
        for gpu_id in platform.gpu_ids:
            gpu = gpus.get(gpu_id)
            if gpu is None:
                continue
            why = not_sold_new_why(platform, gpu, priced)
            if why is not None and _refusals(wl.hardware, platform, gpu, priced) == [why]:
                out.append(Hardware(platform, platform.fitted_gpu(gpu)))
    return out


def not_sold_new_findings(loaded: LoadedWorkload, consts: Constants, plan: Plan) -> list[Finding]:
    """An info finding per deployment whose best layout on a server not sold new ranks before the one planned.

    Each deployment's layouts on those servers are formed alone, every server bought at its catalog price, and held
    to the deployment's pins and fleet limits; the best of them is compared, on the objective the deployment was
    ranked by, with what the plan gives it (its cost a month, GPUs bought, or its pool's power). A service sharing
    servers with another (its figures are the pool's), and a job run after another (``run_after``, planned with it),
    are not compared.
    """
    wl = loaded.workload
    hardware = unsold_hardware(wl)
    if not hardware:
        return []
    pools = {p.name: p for p in plan.pools}
    findings = []
    for index, dep in enumerate(wl.deployments):
        planned = next((d for d in plan.deployments if d.name == dep.name), None)
        if (
            planned is None
            or planned.details.get("co_located")
            or (isinstance(dep, TrainingDeployment) and dep.training.run_after)
        ):
            continue
        objective = planned.details.get("objective_used", wl.objective)
        best = _best(loaded, dep, consts, hardware, objective)
        if best is None or not _ranks_before(best, planned, pools, objective):
            continue
        rec = catalog.not_sold_new(best.hardware.platform.id, best.hardware.gpu.id)
        if rec is not None and rec.availability is not None:  # only such servers are searched
            findings.append(Finding("info", NOT_SOLD_NEW, _message(best, rec, planned, pools), f"deployments[{index}]"))
    return findings


def _best(
    loaded: LoadedWorkload,
    dep: InferenceDeployment | TrainingDeployment,
    consts: Constants,
    hardware: list[Hardware],
    objective: str,
) -> Option | None:
    """The deployment's best layout alone on ``hardware`` (every server bought), within its pins and the fleet limits."""
    from generator.planner import honour_pins

    wl = loaded.workload
    model = loaded.models[dep.name]
    if isinstance(dep, InferenceDeployment):
        options = inference_options(wl, dep, model, consts, [], None, hardware=hardware)
        runs = None
    else:
        from generator.planner.training_candidates import training_options

        options = training_options(wl, dep, model, consts, [], None, hardware=hardware)
        runs = dep.training.runs_per_month
    within = [o for o in honour_pins(dep, options)[0] if within_limits(wl, o, runs)]
    priced = [o for o in within if objective != "cost" or o.candidate.usd_per_hour is not None]
    return min(priced, key=lambda o: (rank(objective, ranking_candidate(o)), o.candidate.summary), default=None)


def _ranks_before(best: Option, planned: DeploymentPlan, pools: dict[str, Pool], objective: str) -> bool:
    """Whether ``best`` ranks before what the plan gives the deployment on the objective and its first tie-breaks.

    The figures compared are the objective's (cost a month, GPUs bought, or power), then idle GPUs, servers and power
    (:func:`~generator.planner.options.rank`); the plan's are the deployment's and its pools'.
    """
    c = ranking_candidate(best)
    details = planned.details
    power = sum(pools[name].power_w for name in planned.pools if name in pools)
    idle, servers = int(details.get("idle_gpus", 0)), int(details.get("servers", 0))
    if objective == "cost":
        usd = details.get("usd_per_month")
        pool = pools.get(planned.pool)
        # a job rented per run has no month of servers: its runs' month (one run where not given), as it was ranked
        # (m74c item 1: read as unpriced, two RTX 3090 towers at $916 a month "ranked before" $111.84 of runs)
        if pool is not None and pool.per_job:
            usd = details.get("usd_per_month_of_runs", details.get("usd_per_job"))
        if c.usd_per_hour is None:
            return False
        if usd is None:
            return True
        mine = (round(c.usd_per_month or 0.0, 2), c.idle_gpus, c.nodes, c.power_w)
        return mine < (round(float(usd), 2), idle, servers, power)
    if objective == "gpus":
        bought = int(details.get("gpus_bought", 0))
        return (c.gpus_bought, c.idle_gpus, c.nodes, c.power_w) < (bought, idle, servers, power)
    return (c.power_w, c.idle_gpus, c.nodes) < (power, idle, servers)


def _message(best: Option, rec: PurchaseRecord, planned: DeploymentPlan, pools: dict[str, Pool]) -> str:
    """The finding: what would have been bought at which price (``rec``), why it is not, and what is bought instead."""
    c: Candidate = best.candidate
    platform, gpu = best.hardware.platform, best.hardware.gpu
    says = rec.availability.text() if rec.availability else ""
    instead = "; ".join(_pool_text(pools.get(name)) for name in planned.pools)
    month = planned.details.get("usd_per_month")
    cost = f" at ${float(month):,.0f}/month" if month is not None else ""
    return (
        f"deployment {planned.name}: {c.summary} at {cost_text(c)} is not bought: it is priced with {rec.id} "
        f"${rec.usd:,.0f} ({rec.basis}, {rec.as_of}), and the {gpu.name if rec.kind == 'gpu' else platform.name} is not "
        f"sold new ({says}); planned instead: {instead}{cost}; one you own is used: list it under "
        "hardware.inventory (or plan it as hardware.fixed)"
    )


def _pool_text(pool: Pool | None) -> str:
    """``"<pool>, <n> x <platform> (<gpus> x <gpu>)"`` of a pool of the plan."""
    if pool is None:
        return "no pool"
    return f"{pool.name}, {pool.nodes} x {pool.node.platform_id} ({pool.node.gpus} x {pool.node.gpu_id})"
