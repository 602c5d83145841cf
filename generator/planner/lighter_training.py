"""The training settings a job left at its framework's defaults that would let a GPU it was not planned on hold it.

newuser54 items 1 and 3: the search sizes a job with the settings it gives (checkpointing, ZeRO stage and micro-batch
searched, the loss kernel, optimizer and offloads its framework's or the job's), so a 7B full fine-tune at 8,192 tokens
bought 2 x H200 NVL ($77,271) where the same job with a fused loss and its optimizer states offloaded runs on one RTX
5090 desktop ($4,399) within its deadline, and an owned 2 x RTX 4090 box was refused without a word of the optimizer
offload that fits it. Here each such GPU is planned again with the settings that shrink the job, those that cost no
step time first, and what fits is said with its fleet; nothing is changed in the plan itself (the settings are the
job's framework configuration, which the user sets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.errors import InfeasibleError
from generator.planner.plan import Finding, Plan
from generator.sizing.frameworks import framework_profile
from generator.sizing.training_conflicts import training_conflicts
from generator.workload.models import TrainingDeployment, TrainingSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: Plans tried at most for one workload (each plans one job on one GPU kind again, in well under a second).
MAX_TRIES = 12


def lighter_settings(spec: TrainingSpec) -> list[dict[str, Any]]:
    """The settings tried on a job, each a set of its fields: those that cost no step time first, then all together.

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
    return [t for t in (*singles, *together) if not _refused(spec._replace(**t))]


def _refused(spec: TrainingSpec) -> bool:
    """Whether the job's framework or method refuses the settings (as a workload giving them is refused)."""
    return bool(
        training_conflicts(
            method=spec.method,
            framework=spec.framework,
            zero_stage=spec.zero_stage,
            offload_params=bool(spec.offload_params),
            optimizer_in_backward=spec.optimizer_in_backward,
            activation_offload=spec.activation_offload,
            checkpointing=spec.gradient_checkpointing,
            optimizer=spec.optimizer,
            offload_optimizer=bool(spec.offload_optimizer),
        )
    )


def said_settings(settings: dict[str, Any]) -> str:
    """``loss: fused and offload_optimizer: true``, as the workload writes them."""
    parts = [f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items()]
    return " and ".join(parts)


def lighter_fleet(
    loaded: LoadedWorkload,
    consts: Constants,
    index: int,
    gpu_ids: tuple[str, ...] | None,
    replan: Callable[[LoadedWorkload, Constants], Plan],
    tries: list[int],
) -> tuple[dict[str, Any], Plan] | None:
    """The first of :func:`lighter_settings` under which job ``index`` alone plans on ``gpu_ids`` (None: as allowed).

    ``tries`` counts the plans made, against :data:`MAX_TRIES`.
    """
    wl = loaded.workload
    dep = wl.deployments[index]
    assert isinstance(dep, TrainingDeployment)
    hardware = wl.hardware if gpu_ids is None else wl.hardware._replace(gpus=gpu_ids)
    for settings in lighter_settings(dep.training):
        if tries[0] >= MAX_TRIES:
            return None
        tries[0] += 1
        job = dep._replace(training=dep.training._replace(**settings))
        alone = wl._replace(deployments=(job,), hardware=hardware)
        try:
            return settings, replan(loaded._replace(workload=alone), consts)
        except InfeasibleError:
            continue
    return None


def fleet_said(plan: Plan) -> str:
    """One fleet in a line: its servers, capex or month, and its run's hours."""
    pools = ", ".join(f"{p.nodes} x {p.node.platform_id} ({p.node.gpus} x {p.node.gpu_id})" for p in plan.pools)
    totals = plan.totals
    money = f"capex ${totals['capex_usd']:,.0f}" if totals.get("capex_usd") else f"${totals['usd_per_month']:,.0f}/month"
    hours = plan.deployments[0].details.get("hours")
    return f"{pools}, {money}" + (f", {hours:,.1f} h a run" if hours else "")


def lighter_training_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """An info finding per training job and allowed GPU it has no layout on that lighter settings would let hold it."""
    tries = [0]
    out = []
    for finding in plan.findings:
        if finding.code != "gpu-no-layout" or "no allowed platform" in finding.message:
            continue
        index = next(
            (i for i, d in enumerate(loaded.workload.deployments) if finding.message.startswith(f"deployment {d.name}:")),
            None,
        )
        if index is None or not isinstance(loaded.workload.deployments[index], TrainingDeployment):
            continue
        gpu = finding.message.split(": no layout on ", 1)[1].split(":", 1)[0]
        found = lighter_fleet(loaded, consts, index, (gpu,), replan, tries)
        if found is None:
            continue
        settings, fleet = found
        name = loaded.workload.deployments[index].name
        out.append(
            Finding(
                "info",
                "training-fits-lighter",
                f"deployment {name}: {gpu} holds it with {said_settings(settings)} (the job as given does not fit it): "
                f"{fleet_said(fleet)}; set them in training to plan it so",
                f"deployments[{index}].training",
            )
        )
    return out


def lighter_training_hint(loaded: LoadedWorkload, consts: Constants, replan: Callable[[LoadedWorkload, Constants], Plan]) -> str:
    """What an infeasible workload's first training job plans with under lighter settings; empty where nothing does."""
    tries = [0]
    wl = loaded.workload
    for index, dep in enumerate(wl.deployments):
        if not isinstance(dep, TrainingDeployment) or tries[0] >= MAX_TRIES:
            continue
        tries[0] += 1
        try:  # a job that plans alone as given is refused for what is beside it, which its settings do not change
            replan(loaded._replace(workload=wl._replace(deployments=(dep,))), consts)
            continue
        except InfeasibleError:
            pass
        found = lighter_fleet(loaded, consts, index, None, replan, tries)
        if found is not None:
            settings, fleet = found
            job = f"deployment {dep.name}" + (" alone" if len(wl.deployments) > 1 else "")
            return f"; with {said_settings(settings)} set in its training, {job} plans: {fleet_said(fleet)}"
    return ""
