"""The quota a cloud plan's GPU nodes need in the cluster's region (newuser87 item 3).

- ``azure-vcpu-quota`` (info): the vCPUs of each VM size, on demand and on Spot apart.
- ``gke-gpu-quota`` (info): the GPUs of each accelerator type, on demand and on Spot (preemptible) apart, and what
  Google's pages say of Spot GPUs' quota (the standard metric's without preemptible quota; GPUS_ALL_REGIONS unsaid).

Azure:
Azure refuses a VM, and so an AKS node pool's scale set or a Karpenter node, past a subscription's vCPU quota in the
region: the quota of the VM size's family and the region's total (Total Regional vCPUs), each counting every VM's
vCPUs; Spot VMs count against the region's Spot vCPU quota instead, one for all sizes
(https://learn.microsoft.com/azure/virtual-machines/quotas). A plan that says nothing of it leaves the first
``terraform apply`` of a GPU pool to fail on it. The finding gives each VM size's vCPUs (its nodes x its vCPUs, the
catalog's ``vcpus``), summed by quota family on demand (the catalog's sourced ``quota_family``, fix154: sizes of one
family share its quota), those of Spot pools apart, and the totals, so a quota request can be sized before the apply.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from generator import catalog
from generator.catalog.gke_accelerators import accelerator_type
from generator.planner.plan import Finding, Pool

#: Microsoft's page on VM vCPU quotas: the two tiers (the VM family's and Total Regional vCPUs) and Spot's own.
QUOTA_PAGE = "https://learn.microsoft.com/azure/virtual-machines/quotas"
#: Google's page on Compute Engine quotas: a region's GPU quota by model, Spot VMs' preemptible GPU quota, and
#: GPUS_ALL_REGIONS over the project.
GPU_QUOTA_PAGE = "https://cloud.google.com/compute/resource-usage#gpu_quota"
#: Google's Spot VM page: "To prevent Spot VMs from consuming your quotas for standard VMs' CPUs, GPUs, and disks,
#: consider requesting preemptible quota for Spot VMs" (a project without preemptible quota pays Spot VMs' GPUs out of
#: the standard metric); its GPU page: "Consider requesting dedicated Preemptible GPU quota to use for GPUs on Spot VMs".
SPOT_QUOTA_PAGES = (
    "https://cloud.google.com/compute/docs/instances/create-use-spot",
    "https://cloud.google.com/compute/docs/gpus/about-gpus",
)
#: The regional quota metric of each GKE accelerator type (``gcloud compute regions describe`` lists them; a Spot VM's
#: GPUs count against the metric with PREEMPTIBLE_ before it where the project has that quota, else against the
#: standard one: :data:`SPOT_QUOTA_PAGES`). An accelerator missing here is said by its type.
GPU_QUOTA_METRIC = {
    "nvidia-tesla-a100": "NVIDIA_A100_GPUS",
    "nvidia-a100-80gb": "NVIDIA_A100_80GB_GPUS",
    "nvidia-h100-80gb": "NVIDIA_H100_GPUS",
    "nvidia-h100-mega-80gb": "NVIDIA_H100_MEGA_GPUS",
    "nvidia-h200-141gb": "NVIDIA_H200_GPUS",
    "nvidia-b200": "NVIDIA_B200_GPUS",
    "nvidia-l4": "NVIDIA_L4_GPUS",
    # G4 (newuser93): NVIDIA_<GPU>_GPUS as the others; the name public gcloud preflight tools query and GCE's refusal
    # of a G4 Spot VM names (PREEMPTIBLE_NVIDIA_RTX_PRO_6000_GPUS, Cloud Quotas PREEMPTIBLE-NVIDIA-RTX-PRO-6000-GPUS-...)
    "nvidia-rtx-pro-6000": "NVIDIA_RTX_PRO_6000_GPUS",
}
#: The metrics of :data:`GPU_QUOTA_METRIC` no Google page read gives (unsourced, said so beside the metric). fix174:
#: docs / pages searches 'NVIDIA_RTX_PRO_6000_GPUS', 'G4 machine series NVIDIA RTX PRO 6000 GPU quota', 'GPU quota
#: metric NVIDIA_RTX_PRO_6000_GPUS Compute Engine quotas' (2026-12-07) found Google's quota page only from its top (no
#: GPU table held) and Compute API Quota.Metric enum pages whose excerpts (cut short) list no RTX PRO metric. The name
#: rests on third-party preflight scripts and notes (gcloud quota checks of NVIDIA_RTX_PRO_6000_GPUS, a GCE refusal
#: naming PREEMPTIBLE_NVIDIA_RTX_PRO_6000_GPUS) and the NVIDIA_<GPU>_GPUS pattern of the others; SkyPilot's v9 GCP
#: accelerator_quota_mapping.csv (commit a5be5386) maps no G4 GPU.
UNSOURCED_QUOTA_METRICS = frozenset({"NVIDIA_RTX_PRO_6000_GPUS"})


def _vcpus(platform_id: str) -> int | None:
    platform = catalog.platforms().get(platform_id)
    return None if platform is None else platform.vcpus


def _family(platform_id: str, size: str) -> str:
    """A VM size's quota family (``platforms.json`` ``quota_family``, fix154), or how to find it where the catalog has none."""
    platform = catalog.platforms().get(platform_id)
    family = None if platform is None else platform.quota_family
    return family or f"the family of {size} (not in the catalog: `az vm list-skus --size {size}` names it)"


def _size_text(size: str, nodes: int, vcpus: int, pools: list[str]) -> str:
    return f"{size} {nodes} node(s) x {vcpus} vCPUs = {nodes * vcpus:,} (pool {', '.join(pools)})"


#: A Spot or on-demand VM size's row: its size, nodes, vCPUs a node, pools and quota family.
_Row = tuple[str, int, int, list[str], str]


def _family_text(rows: list[_Row]) -> str:
    """On demand: each quota family's vCPUs, the sum of its sizes' (sizes of one family share its quota, fix154)."""
    families: dict[str, list[_Row]] = defaultdict(list)
    for row in rows:
        families[row[4]].append(row)
    out = []
    for family, members in sorted(families.items()):
        sizes = [f"{size} {n} node(s) x {v} vCPUs = {n * v:,}, pool {', '.join(pools)}" for size, n, v, pools, _ in members]
        out.append(f"{family} {sum(n * v for _, n, v, _, _ in members):,} ({'; '.join(sizes)})")
    return "; ".join(out)


def vcpu_quota_findings(provider: str, region: str | None, pools: Iterable[Pool]) -> list[Finding]:
    """The info ``azure-vcpu-quota`` (Azure) or ``gke-gpu-quota`` (GCP) of the plan's pools; none elsewhere."""
    if provider == "gcp":
        return _gpu_quota(region, pools)
    return _vcpu_quota(provider, region, pools)


def _gpu_metric(pool: Pool) -> str:
    """The quota metric a GKE pool's GPUs count against, PREEMPTIBLE_ on Spot; its accelerator type where unknown."""
    accelerator = accelerator_type(str(pool.node.instance_type))
    metric = GPU_QUOTA_METRIC.get(accelerator)
    if metric is None:
        return f"the {'Spot ' if pool.spot else ''}GPU quota of {accelerator}"
    return f"PREEMPTIBLE_{metric}" if pool.spot else metric


def _unsourced_text(metric: str) -> str:
    """What a row adds where its metric's name is unsourced (:data:`UNSOURCED_QUOTA_METRICS`); "" elsewhere."""
    if metric.removeprefix("PREEMPTIBLE_") not in UNSOURCED_QUOTA_METRICS:
        return ""
    return "; the metric's name is unsourced: no Google page names it"


def _gpu_quota(region: str | None, pools: Iterable[Pool]) -> list[Finding]:
    """The info ``gke-gpu-quota``: each quota metric's GPUs (nodes x GPUs a node), and their sum over all regions."""
    metrics: dict[str, list[Pool]] = defaultdict(list)
    for pool in pools:
        if pool.node.provider == "gcp" and pool.node.instance_type is not None and pool.nodes > 0:
            metrics[_gpu_metric(pool)].append(pool)
    if not metrics:
        return []
    rows = []
    for metric, members in sorted(metrics.items()):
        gpus = sum(p.nodes * p.node.gpus for p in members)
        each = ", ".join(f"{p.name} {p.nodes} node(s) x {p.node.gpus}" for p in members)
        rows.append(f"{metric} {gpus:,} (pool {each}{_unsourced_text(metric)})")
    total = sum(p.nodes * p.node.gpus for members in metrics.values() for p in members)
    spot = sum(p.nodes * p.node.gpus for members in metrics.values() for p in members if p.spot)
    where = f"in {region}" if region else "in the cluster's region"
    # fix154 (newuser88 item 6): what Google's pages say of Spot GPUs' quota, and what they leave unsaid
    spot_text = (
        f". The Spot nodes' {spot:,} GPU(s) count against the PREEMPTIBLE_ metric only where the project has that "
        'preemptible quota; without it Spot VMs consume the standard quota of their GPUs (Google: "To prevent Spot VMs '
        "from consuming your quotas for standard VMs' CPUs, GPUs, and disks, consider requesting preemptible quota\", "
        f"{', '.join(SPOT_QUOTA_PAGES)}). Google's GPU and Spot pages do not say whether Spot GPUs count against "
        f"GPUS_ALL_REGIONS: the {total:,} above counts them, {total - spot:,} without them"
        if spot
        else ""
    )
    return [
        Finding(
            "info",
            "gke-gpu-quota",
            f"the plan's GKE nodes need the project's GPU quota {where}, which Compute Engine checks as each VM is "
            f"created (a node past it is not created and the pool stays short): {'; '.join(rows)}; {total:,} of "
            f"GPUS_ALL_REGIONS, beside the project's GPUs elsewhere, and the machine family's CPU quota{spot_text}. "
            "`gcloud compute "
            f"regions describe {region or '<region>'}` lists each metric's limit and use. An upgrade's surge node "
            f"(maxSurge 1) needs one node's GPUs beyond these for a while ({GPU_QUOTA_PAGE})",
            "hardware.provider",
        )
    ]


def _vcpu_quota(provider: str, region: str | None, pools: Iterable[Pool]) -> list[Finding]:
    """The info ``azure-vcpu-quota``: the vCPUs of each VM size the plan's Azure pools run, on demand and Spot apart.

    ``region``: the cluster's (``kubernetes.location``), else None (the quota is then the region the cluster is in).
    Pools of no catalog vCPU count are left out; a pool that runs only for jobs' runs counts its nodes as they run.
    """
    if provider != "azure":
        return []
    grouped: dict[tuple[bool, str], list[Pool]] = defaultdict(list)
    for pool in pools:
        if pool.node.provider == "azure" and pool.node.instance_type and _vcpus(pool.node.platform_id) and pool.nodes > 0:
            grouped[(pool.spot, pool.node.instance_type)].append(pool)
    if not grouped:
        return []
    parts = []
    for on_spot, tier, total_text in (
        (False, "on demand, of each VM size's family quota", "of Total Regional vCPUs, beside the cluster's other nodes"),
        (True, "on Spot, of the region's Spot vCPU quota (one for all sizes, apart from the families')", "in all"),
    ):
        rows: list[_Row] = []
        for (spot, size), members in sorted(grouped.items()):
            if spot == on_spot:
                platform_id = members[0].node.platform_id
                nodes = sum(p.nodes for p in members)
                rows.append((size, nodes, _vcpus(platform_id) or 0, [p.name for p in members], _family(platform_id, size)))
        if rows:
            total = sum(nodes * vcpus for _, nodes, vcpus, _, _ in rows)
            said = "; ".join(_size_text(*row[:4]) for row in rows) if on_spot else _family_text(rows)
            parts.append(f"{tier}: {said}; {total:,} {total_text}")
    where = f"in {region}" if region else "in the cluster's region"
    return [
        Finding(
            "info",
            "azure-vcpu-quota",
            f"the plan's AKS nodes need the subscription's vCPU quota {where}, which Azure checks as each VM is created "
            f"(a node pool's or Karpenter's node past it is refused): {'; '.join(parts)}. Sizes of one family share its "
            f"quota; `az vm list-usage --location {region or '<region>'}` lists each family's limit and use (the "
            "family named as Azure's VM SKU list gives it, spaces removed, matched without regard to case). A node "
            "pool cycled through its temporary_name_for_rotation pool (a new VM size or OS disk), an upgrade's surge "
            "node and a Karpenter NodePool's replacement node need vCPUs beyond these for a while "
            f"({QUOTA_PAGE})",
            "hardware.provider",
        )
    ]
