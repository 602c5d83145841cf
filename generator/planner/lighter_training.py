"""The training settings a job leaves at its framework's defaults that would plan it on less, said beside the plan.

newuser54 items 1 and 3: the search sizes a job with the settings it gives (checkpointing, ZeRO stage and micro-batch
searched, the loss kernel, optimizer and offloads its framework's or the job's), so a 7B full fine-tune at 8,192 tokens
bought 2 x H200 NVL ($77,271) where the same job with a fused loss and its optimizer states offloaded runs on one RTX
5090 desktop ($4,399) within its deadline, and an owned 2 x RTX 4090 box was refused without a word of the optimizer
offload that fits it. Here the workload is planned again with the job's settings that shrink it, those that cost no
step time first, and the best fleet is said beside the plan's; nothing is changed in the plan itself (the settings are
the job's framework configuration, which the user sets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.errors import InfeasibleError
from generator.planner.plan import Finding, Plan
from generator.sizing.frameworks import framework_profile
from generator.workload.models import TrainingDeployment, TrainingSpec
from generator.workload.value_checks import spec_conflicts

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: Plans tried at most for one workload (each plans the whole workload again, a job's settings changed).
MAX_TRIES = 12


def lighter_settings(spec: TrainingSpec) -> list[dict[str, Any]]:
    """The settings tried on a job, each a set of its fields: those that cost no step time first, then together.

    A loss that never holds the full logits (Liger's or cut cross-entropy's fused kernel) and an 8-bit optimizer cost
    no step time; optimizer offload copies the states over PCIe each step. Only what the job and its framework leave
    at a heavier setting is tried.
    """
    profile = framework_profile(spec.framework) if spec.framework else None
    loss = spec.loss or (profile.loss if profile is not None else None) or "standard"
    singles: list[dict[str, Any]] = []
    if loss == "standard":
        singles.append({"loss": "fused"})
    if spec.method == "full" and (spec.optimizer or "adamw") in ("adamw", "adamw-torch-amp"):
        singles.append({"optimizer": "adamw-8bit"})
    if spec.method == "full" and not spec.offload_optimizer:
        singles.append({"offload_optimizer": True})
    # then the loss and the offload, which leave the optimizer's arithmetic as it is, and then all of them
    together = [{k: v for t in singles for k, v in t.items()}] if len(singles) > 1 else []
    if len(singles) == 3:
        together.insert(0, {**singles[0], **singles[2]})
    return [t for t in (*singles, *together) if not spec_conflicts(spec._replace(**t))]


def said_settings(settings: dict[str, Any]) -> str:
    """``loss: fused and offload_optimizer: true``, as the workload writes them."""
    parts = [f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items()]
    return " and ".join(parts)


def lighter_fleet(
    loaded: LoadedWorkload,
    consts: Constants,
    index: int,
    replan: Callable[[LoadedWorkload, Constants], Plan],
    tries: list[int],
    better_than: Plan | None = None,
) -> tuple[dict[str, Any], Plan] | None:
    """The best of :func:`lighter_settings` by the objective under which the workload, job ``index`` so set, plans.

    Only one better than ``better_than``, where given. The whole workload, as setting them plans it (review36 item 3:
    the job planned alone took an owned box a service held). ``tries`` counts the plans made, against
    :data:`MAX_TRIES`.
    """
    from generator.planner import _fleet_objective, _fleet_rank  # the fleet's sort key, as the fleet search ranks plans

    wl = loaded.workload
    dep = wl.deployments[index]
    assert isinstance(dep, TrainingDeployment)
    best: tuple[dict[str, Any], Plan] | None = None
    for settings in lighter_settings(dep.training):
        if tries[0] >= MAX_TRIES:
            break
        tries[0] += 1
        job = dep._replace(training=dep.training._replace(**settings))
        changed = wl._replace(deployments=tuple(job if k == index else d for k, d in enumerate(wl.deployments)))
        try:
            plan = replan(loaded._replace(workload=changed), consts)
        except InfeasibleError:
            continue
        rival = best[1] if best is not None else better_than
        if rival is None:
            best = settings, plan
            continue
        objective = _fleet_objective(wl.objective, [rival, plan])
        if _fleet_rank(objective, plan, wl=wl) < _fleet_rank(objective, rival, wl=wl):  # the first of equals stays
            best = settings, plan
    return best


def fleet_said(plan: Plan) -> str:
    """A fleet's capex and month (or a rented job's cost a run)."""
    totals = plan.totals
    money = [f"capex ${totals['capex_usd']:,.0f}"] if totals.get("capex_usd") else []
    if totals.get("usd_per_month") is not None:
        money.append(f"${totals['usd_per_month']:,.0f}/month")
    if totals.get("training_usd_per_job"):  # review36 item 4: a job billed per run read "$0/month"
        money.append(f"${totals['training_usd_per_job']:,.2f} a training run")
    return " and ".join(money) or "unpriced"


def job_said(plan: Plan, index: int) -> str:
    """Where job ``index`` runs in ``plan`` and its hours a run."""
    dep = plan.deployments[index]
    pools = {p.name: p for p in plan.pools}
    where = ", ".join(
        f"{p.nodes} x {p.node.platform_id} ({p.node.gpus} x {p.node.gpu_id})"
        for part in (dep.split or (dep,))
        if (p := pools.get(part.pool)) is not None
    )
    hours = dep.details.get("hours")
    return f"{dep.name} on {where}" + (f", {hours:,.2f} h a run" if hours else "")


def lighter_training_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """An info finding per training job that an allowed GPU holds no layout of, where lighter settings plan better."""
    tries = [0]
    out = []
    wl = loaded.workload
    for index, dep in enumerate(wl.deployments):
        # a job some allowed GPU has no layout of (memory or the network its many GPUs need)
        unfit = [
            f
            for f in plan.findings
            if f.code == "gpu-no-layout"
            and f.message.startswith(f"deployment {dep.name}:")
            and "no allowed platform" not in f.message
        ]
        if not unfit or not isinstance(dep, TrainingDeployment):
            continue
        found = lighter_fleet(loaded, consts, index, replan, tries, better_than=plan)
        if found is None:
            continue
        settings, fleet = found
        out.append(
            Finding(
                "info",
                "training-fits-lighter",
                f"deployment {dep.name}: with {said_settings(settings)} set in its training the workload plans "
                f"{fleet_said(fleet)}, {job_said(fleet, index)}{front_end_said(fleet, index)}; as given it plans "
                f"{fleet_said(plan)}, {job_said(plan, index)}{front_end_said(plan, index)}",
                f"deployments[{index}].training",
            )
        )
    return out


#: How the step's link names a GPU fabric between nodes (:func:`~generator.planner.nodes.node_link`); any other link
#: is a front end: a bare-metal server's Ethernet, a cloud instance's network, or its primary NIC.
FABRIC_LINKS = ("GPU fabric", "GPU NICs of the instance")


def front_end_said(plan: Plan, index: int) -> str:
    """Where job ``index`` spans nodes over no GPU fabric, that link and its communication against its compute; else "".

    newuser76 item 9: "with loss: fused set ..., 11.46 h a run" planned 4 x a3-megagpu-8g over the 200 Gb/s primary NIC,
    16.44 s of communication a step against 19.46 s of compute, and said nothing of it.
    """
    details = plan.deployments[index].details
    link, comm, compute = (details.get(k) for k in ("inter_node_link", "comm_between_nodes_s_per_step", "compute_s_per_step"))
    if not isinstance(link, str) or not comm or not compute or (details.get("hosts") or 1) < 2:
        return ""
    if any(words in link for words in FABRIC_LINKS):
        return ""
    link = link.split(" (")[0]  # the link's name, without why (the refusal's reasons say it)
    return f", over the {link}: communication {comm:.2f} s a step against {compute:.2f} s of compute ({comm / compute:.0%})"


def lighter_training_hint(
    loaded: LoadedWorkload, consts: Constants, replan: Callable[[LoadedWorkload, Constants], Plan], *, network: bool = False
) -> str:
    """What an infeasible workload plans with a training job's lighter settings; empty where none plans it.

    ``network``: the refusal's reasons include the network between nodes; a lighter job planned over the same kind of
    link (no GPU fabric) is then said as less than that network's fix (newuser76 item 9), and said so wherever it is.
    """
    tries = [0]
    for index, dep in enumerate(loaded.workload.deployments):
        if not isinstance(dep, TrainingDeployment) or tries[0] >= MAX_TRIES:
            continue
        found = lighter_fleet(loaded, consts, index, replan, tries)
        if found is not None:
            settings, fleet = found
            over = front_end_said(fleet, index)
            short = "short of that fix: " if network and over else ""
            return (
                f"; {short}with {said_settings(settings)} set in the training of deployment {dep.name}, the workload "
                f"plans {fleet_said(fleet)}, {job_said(fleet, index)}{over}"
            )
    return ""
