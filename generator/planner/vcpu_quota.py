"""The vCPU quota an Azure plan's nodes need in the cluster's region (info ``azure-vcpu-quota``, newuser87 item 3).

Azure refuses a VM, and so an AKS node pool's scale set or a Karpenter node, past a subscription's vCPU quota in the
region: the quota of the VM size's family and the region's total (Total Regional vCPUs), each counting every VM's
vCPUs; Spot VMs count against the region's Spot vCPU quota instead, one for all sizes
(https://learn.microsoft.com/azure/virtual-machines/quotas). A plan that says nothing of it leaves the first
``terraform apply`` of a GPU pool to fail on it. The finding gives each VM size's vCPUs (its nodes x its vCPUs, the
catalog's ``vcpus``), those of Spot pools apart, and the totals, so a quota request can be sized before the apply.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from generator import catalog
from generator.planner.plan import Finding, Pool

#: Microsoft's page on VM vCPU quotas: the two tiers (the VM family's and Total Regional vCPUs) and Spot's own.
QUOTA_PAGE = "https://learn.microsoft.com/azure/virtual-machines/quotas"


def _vcpus(platform_id: str) -> int | None:
    platform = catalog.platforms().get(platform_id)
    return None if platform is None else platform.vcpus


def _size_text(size: str, nodes: int, vcpus: int, pools: list[str]) -> str:
    return f"{size} {nodes} node(s) x {vcpus} vCPUs = {nodes * vcpus:,} (pool {', '.join(pools)})"


def vcpu_quota_findings(provider: str, region: str | None, pools: Iterable[Pool]) -> list[Finding]:
    """The info ``azure-vcpu-quota``: the vCPUs of each VM size the plan's Azure pools run, on demand and Spot apart.

    ``region``: the cluster's (``kubernetes.location``), else None (the quota is then the region the cluster is in).
    Owned or bought servers and pools of no catalog vCPU count are left out; a pool that runs only for jobs' runs
    counts its nodes as they run.
    """
    if provider != "azure":
        return []
    sizes: dict[tuple[bool, str], tuple[int, int, list[str]]] = {}
    grouped: dict[tuple[bool, str], list[Pool]] = defaultdict(list)
    for pool in pools:
        vcpus = _vcpus(pool.node.platform_id)
        if pool.node.provider != "azure" or pool.node.instance_type is None or not vcpus or pool.nodes <= 0:
            continue
        grouped[(pool.spot, pool.node.instance_type)].append(pool)
    for key, members in grouped.items():
        vcpus = _vcpus(members[0].node.platform_id) or 0
        sizes[key] = (sum(p.nodes for p in members), vcpus, [p.name for p in members])
    if not sizes:
        return []
    where = f"in {region}" if region else "in the cluster's region"
    parts = []
    regular = sorted((size, *rest) for (spot, size), rest in sizes.items() if not spot)
    spot = sorted((size, *rest) for (on_spot, size), rest in sizes.items() if on_spot)
    if regular:
        total = sum(nodes * vcpus for _, nodes, vcpus, _ in regular)
        parts.append(
            "on demand, of each VM size's family quota: "
            + "; ".join(_size_text(*row) for row in regular)
            + f"; {total:,} of Total Regional vCPUs, beside the cluster's other nodes"
        )
    if spot:
        total = sum(nodes * vcpus for _, nodes, vcpus, _ in spot)
        parts.append(
            "on Spot, of the region's Spot vCPU quota (one for all sizes, apart from the families'): "
            + "; ".join(_size_text(*row) for row in spot)
            + f"; {total:,} in all"
        )
    return [
        Finding(
            "info",
            "azure-vcpu-quota",
            f"the plan's AKS nodes need the subscription's vCPU quota {where}, which Azure checks as each VM is created "
            f"(a node pool's or Karpenter's node past it is refused): {'; '.join(parts)}. Sizes of one family share its "
            f"quota; `az vm list-usage --location {region or '<region>'}` lists each family's limit and use. A node "
            "pool cycled through its temporary_name_for_rotation pool (a new VM size or OS disk), an upgrade's surge "
            "node and a Karpenter NodePool's replacement node need vCPUs beyond these for a while "
            f"({QUOTA_PAGE})",
            "hardware.provider",
        )
    ]
