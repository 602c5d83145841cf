"""A planned AWS or Azure pool whose instance type ``gpu_regions.json`` does not list in the cluster's region (fix179).

Every EKS or AKS node pool runs in the cluster's region (``kubernetes.location``); an instance type the region does
not offer renders (EKS node groups, Karpenter NodePools, AKS node pools) and fails at ``terraform apply`` or when the
pool scales up. Unlike GCP's zones (:mod:`generator.workload.gke_zone`, each read from one current SkyPilot catalog),
the region lists come from SkyPilot's catalog at one commit each and may be stale or incomplete (Azure's is the
mid-2024 v6 file, without ND H200 v5 or MI300X v5; AWS's misses Capacity-Block Regions, fix177's p6-b300 in
us-east-1), so a type they leave out is never refused and never left out of the plan: it is planned by cost like any
other, and each pool of it is warned at ``kubernetes.location`` with the source, its revision, and the cloud CLI
command that checks the region today. A type without a sourced region list, or a region the source does not list, is
not checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_regions import NOT_OFFERED, gpu_regions, region_offer, region_read, region_source
from generator.planner.plan import Finding, Pool
from generator.words import listed
from generator.workload.cloud_regions import region_problem
from generator.workload.models import Workload

FIELD = "kubernetes.location"
#: What a finding calls each cloud's offer.
SELLER = {"aws": "EC2", "azure": "Azure"}


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
            f"not name: {SELLER[provider]} lists it in {_offered_in(platform_id)} by {region_source(platform_id)} "
            f"(read {region_read(platform_id)}), a snapshot that may be stale or incomplete, so the plan keeps it; "
            f"check before applying with `{check_command(provider, machine, region)}` (an empty answer: the region "
            f"lacks it, so set {FIELD} to a region that offers it or leave it out with hardware.platforms)",
            FIELD,
        )
        for platform_id, machine in types
        if region_offer(platform_id, region) == NOT_OFFERED
    ]


def planned_region(wl: Workload) -> str | None:
    """The region an AWS or Azure workload's pools run in (``kubernetes.location``); None elsewhere, or unnamed or unknown."""
    provider, location = wl.hardware.provider, wl.kubernetes.location
    if provider not in SELLER or location is None or region_problem(provider, location) is not None:
        return None
    return location


def _offered_in(platform_id: str) -> str:
    """Where the source lists ``platform_id``, as the finding says it."""
    regions = gpu_regions([platform_id])
    return listed(list(regions)) if regions else "no region the catalog lists"


def check_command(provider: str, instance_type: str, region: str) -> str:
    """The cloud CLI command that says whether ``region`` offers ``instance_type`` today."""
    if provider == "aws":
        return (
            "aws ec2 describe-instance-type-offerings --location-type region --filters "
            f"Name=instance-type,Values={instance_type} --region {region}"
        )
    return f"az vm list-skus --location {region} --size {instance_type} --all --output table"
