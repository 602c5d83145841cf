"""AKS's own MIG setting: a node pool's GPU instance profile (``gpuInstanceProfile``, azurerm's ``gpu_instance``).

AKS partitions every GPU of a node pool created with a GPU instance profile itself, at the node's boot, into
instances of one size: ``MIG1g``, ``MIG2g``, ``MIG3g``, ``MIG4g`` or ``MIG7g`` (the provider's allowed values,
terraform-provider-azurerm ``kubernetes_cluster_node_pool`` ``gpu_instance``). The value names the compute slices of
an instance of 7; AKS's node script creates the same layout on every GPU, MIG profile ids 19 / 14 / 9 / 5 / 0: seven
1g, three 2g, two 3g, one 4g or one 7g instance (Azure/AgentBaker ``parts/linux/cloud-init/artifacts/mig-partition.sh``,
https://github.com/Azure/AgentBaker/blob/04c076b92d6a4911026d41a9b58cb6376eba9d36/parts/linux/cloud-init/artifacts/mig-partition.sh).
Profile id 19 is the smallest 1g instance (1g.5gb of an A100 40GB, 1g.10gb of an 80GB GPU): the 1g profile of twice
the memory (1g.10gb of an A100 40GB, 1g.20gb of an H100 80GB, four a GPU) has no AKS value, nor has a GPU of 4
compute slices (A30).

AKS supports MIG "on NVIDIA A100, H100, and H200 series GPU VM sizes" (Create a multi-instance GPU node pool in AKS,
ms.date 2026-05-22, https://learn.microsoft.com/en-us/azure/aks/gpu-multi-instance), whose example is
``Standard_ND96asr_v4`` with ``--gpu-instance-profile MIG1g``; the profile cannot be changed after the pool is created.
"""

from __future__ import annotations

from fractions import Fraction

from generator import catalog

#: AKS's value for an instance of ``n`` compute slices of 7, and how many of them its layout puts on each GPU.
AKS_GPU_INSTANCES = {1: ("MIG1g", 7), 2: ("MIG2g", 3), 3: ("MIG3g", 2), 4: ("MIG4g", 1), 7: ("MIG7g", 1)}
#: The GPU families AKS supports MIG on (the article's prerequisites), as catalog id prefixes.
AKS_MIG_GPU_FAMILIES = ("a100-", "h100-", "h200-")
#: Where a reader checks both.
AKS_MIG_SOURCE = "https://learn.microsoft.com/en-us/azure/aks/gpu-multi-instance"


def aks_gpu_instance(gpu_id: str, profile: str) -> str | None:
    """AKS's ``gpu_instance`` that splits every GPU of ``gpu_id`` into ``profile`` instances, or None where none does."""
    if not gpu_id.startswith(AKS_MIG_GPU_FAMILIES):
        return None
    profiles = catalog.mig_profile_specs().get(gpu_id, {})
    spec = profiles.get(profile)
    if spec is None:
        return None
    slices = spec.sm_fraction * 7
    if slices.denominator != 1 or int(slices) not in AKS_GPU_INSTANCES:
        return None  # a GPU of 4 compute slices: none of AKS's layouts
    value, per_gpu = AKS_GPU_INSTANCES[int(slices)]
    smallest: Fraction = min(p.memory_fraction for p in profiles.values() if p.sm_fraction == spec.sm_fraction)
    if spec.memory_fraction != smallest or spec.instances != per_gpu:
        return None  # the 1g profile of twice the memory: AKS's layout makes the smaller one
    return value


def aks_profiles(gpu_id: str) -> list[str]:
    """The MIG profiles of ``gpu_id`` AKS can make, as ``3g.40gb (MIG3g)``, in the catalog's order."""
    return [
        f"{name} ({value})"
        for name in catalog.mig_profile_specs().get(gpu_id, {})
        if (value := aks_gpu_instance(gpu_id, name)) is not None
    ]


def aks_mig_problem(gpu_id: str, profile: str) -> str | None:
    """Why AKS cannot split ``gpu_id`` into ``profile`` instances with a node pool's GPU instance profile, or None."""
    if aks_gpu_instance(gpu_id, profile) is not None:
        return None
    if not gpu_id.startswith(AKS_MIG_GPU_FAMILIES):
        return f"AKS supports MIG node pools on A100, H100 and H200 VM sizes only, not on GPU '{gpu_id}' ({AKS_MIG_SOURCE})"
    return (
        f"AKS's GPU instance profiles (MIG1g, MIG2g, MIG3g, MIG4g, MIG7g) split GPU '{gpu_id}' into "
        f"{', '.join(aks_profiles(gpu_id))} only, not '{profile}' ({AKS_MIG_SOURCE})"
    )
