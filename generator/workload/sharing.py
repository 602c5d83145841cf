"""Checks of ``kubernetes.gpu_sharing`` and a deployment's own ``gpu_sharing`` against the GPUs the workload allows.

A deployment's ``gpu_sharing`` overrides the workload's for its replicas (strategy ``none``: whole GPUs); what each
deployment runs under is :func:`deployment_sharing`, which the planner sizes and packs by and the render configures
(one implementation). MIG profiles come from the catalog.

One rule for the workload's sharing and a deployment's (newuser44 item 5; newuser69 item 8: the workload's was refused
where any GPU allowed lacked its MIG profile): each is checked against the GPUs its services may use, the services
under it are planned only on those that take it (:func:`share_problem`), the GPUs it rules out are said
(:func:`excluded_gpus`, the ``gpu-sharing-excluded-gpus`` info), and it is refused only where none takes it.
"""

from __future__ import annotations

from typing import Final

from generator import catalog
from generator.errors import InputError
from generator.workload.aks_mig import aks_mig_problem
from generator.workload.loader import Document, format_path
from generator.workload.models import Deployment, GpuSharing, ParallelismPin, TrainingDeployment, Workload

WHERE = ("kubernetes", "gpu_sharing")
#: A deployment's ``gpu_sharing`` strategy for whole GPUs where the workload's shares them.
NO_SHARING: Final = "none"


def deployment_sharing(wl: Workload, dep: Deployment) -> GpuSharing | None:
    """The GPU sharing ``dep``'s replicas run under: its own ``gpu_sharing``, else the workload's; None: whole GPUs."""
    own = dep.gpu_sharing
    if own is None:
        return wl.kubernetes.gpu_sharing
    return None if own.strategy == NO_SHARING else own


#: The output that configures GPU sharing (the device plugin's sharing config, the MIG manager's partitions, GKE's node
#: pool sharing): without it nothing shares the GPUs, so none is planned (:func:`planned_sharing`).
SHARING_OUTPUT: Final = "kubernetes"


def planned_sharing(wl: Workload, dep: Deployment) -> GpuSharing | None:
    """The GPU sharing ``dep``'s replicas are sized and packed in: :func:`deployment_sharing` where the outputs render it.

    Without the Kubernetes output nothing would configure it, so the plan keeps whole GPUs and the setting is said
    to be unused (``gpu-sharing-not-rendered``).
    """
    return deployment_sharing(wl, dep) if SHARING_OUTPUT in wl.outputs else None


def sharing_text(sharing: GpuSharing) -> str:
    """A sharing request as a pool records it (``Pool.gpu_sharing``): ``mig 3g.40gb``, ``time-slicing x4``, ``mps x4``."""
    if sharing.strategy == "mig":
        return f"mig {sharing.mig_profile}"
    return f"{sharing.strategy} x{sharing.replicas_per_gpu}"


def sharing_where(wl: Workload, index: int) -> tuple[str | int, ...]:
    """The document path of the sharing deployment ``index`` runs under (its own field, else the workload's)."""
    return WHERE if wl.deployments[index].gpu_sharing is None else ("deployments", index, "gpu_sharing")


def sharing_field(wl: Workload, index: int) -> str:
    """:func:`sharing_where` as text (``deployments[1].gpu_sharing``, ``kubernetes.gpu_sharing``)."""
    return format_path(sharing_where(wl, index))


def named_gpus(wl: Workload) -> list[tuple[tuple[str | int, ...], str]]:
    """The GPUs the workload names, with their document paths (allowed list, fixed choice, owned servers)."""
    hw = wl.hardware
    found: list[tuple[tuple[str | int, ...], str]] = [(("hardware", "gpus", j), g) for j, g in enumerate(hw.gpus or ())]
    if hw.fixed is not None:
        found.append((("hardware", "fixed", "gpu"), hw.fixed.gpu))
    for j, g in enumerate(hw.inventory):
        if g.gpu is not None:
            found.append((("hardware", "inventory", j, "gpu"), g.gpu))
        elif g.platform is not None and (platform := catalog.platforms().get(g.platform)) and len(platform.gpu_ids) == 1:
            # a platform of one GPU kind owned without naming it (fuzz15 item 2: its MIG profile went unchecked)
            found.append((("hardware", "inventory", j, "platform"), platform.gpu_ids[0]))
    found += [(("hardware", "inventory", j, "custom", "gpu"), g.custom.gpu) for j, g in enumerate(hw.inventory) if g.custom]
    return found


def mig_problem(gpu_id: str, profile: str, asked: str = "kubernetes.gpu_sharing.strategy mig") -> str | None:
    """Why MIG ``profile`` cannot run on ``gpu_id``, or None when it can (``asked``: what asked for MIG, as said)."""
    spec = catalog.gpus().get(gpu_id)
    if spec is None:
        return None  # the unknown id is reported by the id check
    if not spec.mig_max_instances:
        return f"GPU '{gpu_id}' does not support MIG ({asked})"
    profiles = catalog.mig_profiles().get(gpu_id)
    if profiles is None:
        return f"GPU '{gpu_id}' supports MIG but the catalog has no MIG profile list for it"
    if profile not in profiles:
        return f"MIG profile '{profile}' does not exist on GPU '{gpu_id}' (it has {', '.join(profiles)})"
    return None


def share_problem(gpu_id: str, sharing: GpuSharing, asked: str, *, aks: bool = False) -> str | None:
    """Why pods cannot share ``gpu_id`` as ``sharing`` asks, or None where they can (``asked``: the field, as said).

    Not an NVIDIA GPU; under MIG, no such profile on it, or (``aks``: AKS partitions it, :func:`aks_native_mig`) none
    of AKS's GPU instance profiles makes it. The planner ranks a service under sharing only on GPUs where this is
    None, and the load refuses a deployment's ``gpu_sharing`` where it holds on every GPU the deployment may use.
    """
    spec = catalog.gpus().get(gpu_id)
    if spec is None:
        return None  # the unknown id is reported by the id check
    if spec.vendor != "nvidia":
        return f"GPU '{gpu_id}' is not an NVIDIA GPU: {asked} needs NVIDIA GPUs"
    if sharing.strategy != "mig" or sharing.mig_profile is None:
        return None
    problem = mig_problem(gpu_id, sharing.mig_profile, f"{asked}.strategy mig")
    return aks_mig_problem(gpu_id, sharing.mig_profile) if problem is None and aks else problem


def aks_native_mig(wl: Workload, sharing: GpuSharing | None) -> bool:
    """Whether MIG pools of ``sharing`` are AKS node pools with a GPU instance profile (Terraform, on Azure)."""
    return (
        sharing is not None
        and sharing.strategy == "mig"
        and wl.hardware.provider == "azure"
        and {"kubernetes", "terraform"} <= set(wl.outputs)
    )


def sharing_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every problem of the workload's GPU-sharing requests (the workload's and each deployment's), located."""
    errors = _sharing_errors(doc, wl, wl.kubernetes.gpu_sharing, WHERE, sharing_gpus(wl, WHERE))
    for index, dep in enumerate(wl.deployments):
        own = dep.gpu_sharing
        if own is None or own == GpuSharing(NO_SHARING):
            continue
        where = ("deployments", index, "gpu_sharing")
        if own.strategy == NO_SHARING:  # whole GPUs: nothing to size a share by
            extra = "replicas_per_gpu" if own.replicas_per_gpu is not None else "mig_profile"
            errors.append(InputError(f"{extra} is not for strategy none (whole GPUs)", doc.locate((*where, extra))))
            continue
        if isinstance(dep, TrainingDeployment):
            errors.append(
                InputError(
                    "not for a training job: it is planned on whole GPUs with their links; remove gpu_sharing or give it "
                    "strategy none",
                    doc.locate(where),
                )
            )
            continue
        pin = dep.parallelism or ParallelismPin()
        wide = [f"{k} {v}" for k, v in (("tp", pin.tp), ("pp", pin.pp)) if v is not None and v > 1]
        if wide:
            errors.append(
                InputError(
                    f"not with parallelism {' and '.join(wide)}: a replica of several GPUs keeps whole GPUs (MIG "
                    "instances have no P2P, and shares could hand one pod slices of one GPU); remove gpu_sharing or pin "
                    "tp and pp 1",
                    doc.locate(where),
                )
            )
            continue
        errors += _sharing_errors(doc, wl, own, where, sharing_gpus(wl, where))
    return errors


def _deployment_gpus(wl: Workload, index: int) -> list[tuple[tuple[str | int, ...], str]]:
    """The GPUs deployment ``index`` may run on, with their paths: those named its pinned platform takes, else all named.

    Where the workload names none its platform takes, the platform's own GPUs (at ``deployments[i].platform``).
    """
    named = named_gpus(wl)
    dep = wl.deployments[index]
    platform = catalog.platforms().get(dep.platform) if dep.platform is not None else None
    if platform is None:
        return named
    on_it = [(path, gpu) for path, gpu in named if gpu in platform.gpu_ids]
    return on_it or [(("deployments", index, "platform"), gpu) for gpu in platform.gpu_ids]


def _sharing_errors(
    doc: Document,
    wl: Workload,
    sharing: GpuSharing | None,
    where: tuple[str | int, ...],
    named: list[tuple[tuple[str | int, ...], str]],
) -> list[InputError]:
    """Problems of one sharing request at ``where`` on the GPUs it may run on (``named``, with their paths)."""
    if sharing is None:
        return []
    own = where != WHERE  # a deployment's: said at its field, the GPU's path in the text
    field = format_path(where)
    errors: list[InputError] = []
    if wl.hardware.fixed is not None:  # fuzz17 item 10: a model too large for its share passed, and a MIG label rendered
        return [
            InputError(
                "not with hardware.fixed: a machine of yours is planned as one model's placement over its GPUs, RAM and "
                "NVMe (llama.cpp), with nothing sized for pods sharing a GPU; remove gpu_sharing",
                doc.locate(where),
            )
        ]
    mig = sharing.strategy == "mig"
    if mig and sharing.mig_profile is None:
        errors.append(InputError("strategy mig needs mig_profile", doc.locate((*where, "strategy"))))
    if not mig and sharing.replicas_per_gpu is None:
        errors.append(InputError(f"strategy {sharing.strategy} needs replicas_per_gpu", doc.locate((*where, "strategy"))))
    if mig and sharing.replicas_per_gpu is not None:
        errors.append(
            InputError("replicas_per_gpu is for time-slicing and mps, not mig", doc.locate((*where, "replicas_per_gpu")))
        )
    if not mig and sharing.mig_profile is not None:
        errors.append(InputError(f"mig_profile is for strategy mig, not {sharing.strategy}", doc.locate((*where, "mig_profile"))))
    gpu_errors: list[InputError] = []
    able = False  # some GPU it may use takes the sharing asked
    aks = aks_native_mig(wl, sharing)  # an AKS node pool's GPU instance profile partitions it
    for path, gpu in named:
        spec = catalog.gpus().get(gpu)
        if spec is None:
            continue  # the unknown id is reported by the id check
        # the planner's rule (NOT_SHARED_HERE): one function decides, here only where the problem is said (review29 5)
        problem = share_problem(gpu, sharing, field, aks=aks)
        if problem is None:
            able = True
            continue
        suffix = f"; the GPU from {format_path(path)}"
        if spec.vendor != "nvidia":
            gpu_errors.append(InputError(problem + suffix, doc.locate(where)) if own else InputError(problem, doc.locate(path)))
        elif gpu in catalog.mig_profiles():  # the GPU takes MIG, not this profile (fuzz32 item 12) or not on AKS: at it
            gpu_errors.append(InputError(problem + suffix, doc.locate((*where, "mig_profile"))))
        elif own:  # a deployment's: said at its field, whose request it is
            gpu_errors.append(InputError(problem + suffix, doc.locate((*where, "strategy"))))
        else:  # the GPU takes no MIG at all: said at the GPU
            gpu_errors.append(InputError(problem, doc.locate(path)))
    # the workload's sharing and a deployment's alike (newuser44 item 5, newuser69 item 8): planned only on the GPUs
    # its services may use that take it (the planner ranks them on no other, excluded_gpus says which it rules out),
    # refused where none does
    if not able:
        errors += gpu_errors
    # a replica pinned wider than one GPU (parallelism tp, pp or ep > 1) is not refused under MIG: it keeps whole GPUs in a
    # pool the MIG manager leaves unpartitioned, as an unpinned one and a training job do (gpu-sharing-whole-gpus)
    if not named:
        errors += _offered_errors(doc, wl, sharing, where)
    return errors


def sharing_gpus(wl: Workload, where: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    """The GPUs the services under the sharing asked at ``where`` may use, with their paths (the workload's: all named)."""
    return named_gpus(wl) if where == WHERE else _deployment_gpus(wl, int(where[1]))


def excluded_gpus(wl: Workload, sharing: GpuSharing, where: tuple[str | int, ...]) -> list[tuple[str, str]]:
    """The named GPUs the sharing asked at ``where`` rules out for its services, each once with why (file order)."""
    field = format_path(where)
    aks = aks_native_mig(wl, sharing)
    out: dict[str, str] = {}
    for _, gpu in sharing_gpus(wl, where):
        if gpu in catalog.gpus() and gpu not in out and (problem := share_problem(gpu, sharing, field, aks=aks)):
            out[gpu] = problem
    return list(out.items())


def _offered_errors(doc: Document, wl: Workload, sharing: GpuSharing, where: tuple[str | int, ...]) -> list[InputError]:
    """A sharing where the workload names no GPU: refused where no GPU the provider offers takes it.

    The replicas under it are planned on the catalog's GPUs of the provider that do (:func:`share_problem`), the other
    deployments on every GPU the provider offers.
    """
    provider = wl.hardware.provider
    offered = sorted({g for p in catalog.platforms().values() if p.provider == provider for g in p.gpu_ids})
    aks = aks_native_mig(wl, sharing)
    if any(share_problem(g, sharing, format_path(where), aks=aks) is None for g in offered if g in catalog.gpus()):
        return []
    if sharing.strategy == "mig":
        which = f"MIG profile '{sharing.mig_profile}'" + (" as an AKS GPU instance profile" if aks else "")
        return [
            InputError(
                f"no GPU the catalog offers on {provider} has {which}: name GPUs that do in hardware.gpus, or give "
                "another mig_profile (generator/catalog/mig_profiles.json lists each GPU's)",
                doc.locate((*where, "mig_profile")),
            )
        ]
    return [
        InputError(
            f"no GPU the catalog offers on {provider} is an NVIDIA GPU: {sharing.strategy} shares NVIDIA GPUs", doc.locate(where)
        )
    ]
