"""Checks of ``kubernetes.gpu_sharing`` against the GPUs the workload allows (MIG profiles from the catalog)."""

from __future__ import annotations

from generator import catalog
from generator.errors import InputError
from generator.workload.aks_mig import aks_mig_problem
from generator.workload.loader import Document, format_path
from generator.workload.models import GpuSharing, Workload

WHERE = ("kubernetes", "gpu_sharing")


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


def aks_native_mig(wl: Workload) -> bool:
    """Whether the workload's MIG pools are AKS node pools with a GPU instance profile (Terraform, on Azure)."""
    sharing = wl.kubernetes.gpu_sharing
    return (
        sharing is not None
        and sharing.strategy == "mig"
        and wl.hardware.provider == "azure"
        and {"kubernetes", "terraform"} <= set(wl.outputs)
    )


def sharing_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every problem of the workload's GPU-sharing request, located in the document."""
    sharing: GpuSharing | None = wl.kubernetes.gpu_sharing
    if sharing is None:
        return []
    errors: list[InputError] = []
    if wl.hardware.fixed is not None:  # fuzz17 item 10: a model too large for its share passed, and a MIG label rendered
        return [
            InputError(
                "not with hardware.fixed: a machine of yours is planned as one model's placement over its GPUs, RAM and "
                "NVMe (llama.cpp), with nothing sized for pods sharing a GPU; remove gpu_sharing",
                doc.locate(WHERE),
            )
        ]
    mig = sharing.strategy == "mig"
    if mig and sharing.mig_profile is None:
        errors.append(InputError("strategy mig needs mig_profile", doc.locate((*WHERE, "strategy"))))
    if not mig and sharing.replicas_per_gpu is None:
        errors.append(InputError(f"strategy {sharing.strategy} needs replicas_per_gpu", doc.locate((*WHERE, "strategy"))))
    if mig and sharing.replicas_per_gpu is not None:
        errors.append(
            InputError("replicas_per_gpu is for time-slicing and mps, not mig", doc.locate((*WHERE, "replicas_per_gpu")))
        )
    if not mig and sharing.mig_profile is not None:
        errors.append(InputError(f"mig_profile is for strategy mig, not {sharing.strategy}", doc.locate((*WHERE, "mig_profile"))))
    named = named_gpus(wl)
    for path, gpu in named:
        spec = catalog.gpus().get(gpu)
        if spec is not None and spec.vendor != "nvidia":
            errors.append(
                InputError(f"GPU '{gpu}' is not an NVIDIA GPU: kubernetes.gpu_sharing needs NVIDIA GPUs", doc.locate(path))
            )
        elif mig and sharing.mig_profile is not None:
            problem = mig_problem(gpu, sharing.mig_profile)
            if problem is None and aks_native_mig(wl):  # an AKS node pool's GPU instance profile partitions it
                problem = aks_mig_problem(gpu, sharing.mig_profile)
                if problem is not None:
                    errors.append(InputError(f"{problem}; the GPU from {format_path(path)}", doc.locate((*WHERE, "mig_profile"))))
                continue
            if problem is None:
                continue
            if gpu in catalog.mig_profiles():  # the GPU takes MIG, not this profile: said at it (fuzz32 item 12)
                errors.append(InputError(f"{problem}; the GPU from {format_path(path)}", doc.locate((*WHERE, "mig_profile"))))
            else:  # the GPU takes no MIG at all: said at the GPU
                errors.append(InputError(problem, doc.locate(path)))
    # a replica pinned wider than one GPU (parallelism tp or pp > 1) is not refused under MIG: it keeps whole GPUs in a
    # pool the MIG manager leaves unpartitioned, as an unpinned one and a training job do (gpu-sharing-whole-gpus)
    if mig and not named:
        errors.append(
            InputError(
                "strategy mig needs hardware.gpus naming the MIG-capable GPUs to plan on", doc.locate((*WHERE, "strategy"))
            )
        )
    return errors
