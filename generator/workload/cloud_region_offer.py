"""An EKS or AKS cluster's region and the GPU instance types ``gpu_regions.json`` lists there (fix177, fix179).

On AWS and Azure every node pool runs in the cluster's region, ``kubernetes.location``; an instance type the region
does not offer renders (EKS node groups, Karpenter NodePools, AKS node pools) and fails at ``terraform apply`` or when
the pool scales up. Unlike GCP's zones (:mod:`generator.workload.gke_zone`, each read from one current SkyPilot
catalog), the lists here may be stale or incomplete (Azure's is SkyPilot's mid-2024 v6 file, without ND H200 v5 or
MI300X v5; AWS's misses Capacity-Block Regions, fix177's p6-b300 in us-east-1), so a region they leave out for a type
is never refused and never leaves the type out of the plan: the planner warns at ``kubernetes.location`` (warning
``gpu-region-unlisted``, :mod:`generator.planner.region_offer`) with the command that checks it. A type without a
sourced region list, and a region the source does not list, are not checked.
"""

from __future__ import annotations

from generator.catalog.gpu_regions import gpu_regions
from generator.words import listed
from generator.workload.cloud_regions import region_problem
from generator.workload.models import Workload

#: What a finding calls each cloud's offer.
SELLER = {"aws": "EC2", "azure": "Azure"}
WHERE = ("kubernetes", "location")


def planned_region(wl: Workload) -> str | None:
    """The region an AWS or Azure workload's pools run in (``kubernetes.location``); None elsewhere, or unnamed or unknown."""
    provider, location = wl.hardware.provider, wl.kubernetes.location
    if provider not in SELLER or location is None or region_problem(provider, location) is not None:
        return None
    return location


def offered_in(platform_ids: list[str]) -> str:
    """Where the source lists any of ``platform_ids``, as a finding says it."""
    regions = gpu_regions(platform_ids)
    return listed(list(regions)) if regions else "no region the catalog lists"


def check_command(provider: str, instance_type: str, region: str) -> str:
    """The cloud CLI command that says whether ``region`` offers ``instance_type`` today."""
    if provider == "aws":
        return (
            "aws ec2 describe-instance-type-offerings --location-type region --filters "
            f"Name=instance-type,Values={instance_type} --region {region}"
        )
    return f"az vm list-skus --location {region} --size {instance_type} --all --output table"
