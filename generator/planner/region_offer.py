"""A planned AWS or Azure pool whose instance type ``gpu_regions.json`` does not list in the cluster's region (fix179).

Every EKS or AKS node pool runs in the cluster's region (``kubernetes.location``). The region lists come from
SkyPilot's catalog at one commit each and may be stale or incomplete (fix177's Azure file is a mid-2024 snapshot), so a
type they leave out is planned as if offered, by cost like any other, and each pool of it is warned at
``kubernetes.location`` with the source, its revision, and the cloud CLI command that checks the region today
(:func:`generator.workload.cloud_region_offer.check_command`). A type without a sourced region list, or a region the
source does not list, is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_regions import NOT_OFFERED, region_offer, region_read, region_source
from generator.planner.plan import Finding, Pool
from generator.workload.cloud_region_offer import SELLER, check_command, offered_in, planned_region
from generator.workload.models import Workload

FIELD = "kubernetes.location"


def region_pool_findings(wl: Workload, pools: Iterable[Pool]) -> list[Finding]:
    """One warning per planned instance type the source does not list in the cluster's region."""
    region = planned_region(wl)
    if region is None:
        return []
    provider = wl.hardware.provider
    types = sorted({(p.node.platform_id, p.node.instance_type or p.node.platform_id) for p in pools})
    return [
        Finding(
            "warning",
            "gpu-region-unlisted",
            f"{machine} ({platform_id}) is planned in region {region}, which the catalog's region list for it does "
            f"not name: {SELLER[provider]} lists it in {offered_in([platform_id])} by {region_source(platform_id)} "
            f"(read {region_read(platform_id)}), a snapshot that may be stale or incomplete, so the plan keeps it; "
            f"check before applying with `{check_command(provider, machine, region)}` (an empty answer: the region "
            f"lacks it, so set {FIELD} to a region that offers it or leave it out with hardware.platforms)",
            FIELD,
        )
        for platform_id, machine in types
        if region_offer(platform_id, region) == NOT_OFFERED
    ]
