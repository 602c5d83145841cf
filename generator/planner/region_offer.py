"""The AWS or Azure instance types the cluster's region does not offer: left out of the plan, and said (fix177).

Every EKS or AKS node pool runs in the cluster's region (``kubernetes.location``); a type that region lacks would
render and fail at ``terraform apply`` or when the pool scales up. The regions come from ``gpu_regions.json``; a type
without a sourced region list, or a region the source does not list, is planned unchecked. A workload whose allowed
types the region all lacks is refused before planning
(:func:`generator.workload.cloud_region_offer.region_offer_errors`).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_regions import region_source
from generator.planner.plan import Finding
from generator.words import listed
from generator.workload.cloud_region_offer import SELLER, offered_in, planned_region, region_left_out
from generator.workload.gke_zone import types_by_gpu
from generator.workload.models import Workload

FIELD = "kubernetes.location"


def region_findings(wl: Workload, allowed: Iterable[str]) -> list[Finding]:
    """One info per GPU whose instance types among ``allowed`` (the lists' choice) the region lacks, naming where it is."""
    region = planned_region(wl)
    if region is None:
        return []
    left = sorted(set(allowed) & region_left_out(wl))
    seller = SELLER[wl.hardware.provider]
    return [
        Finding(
            "info",
            "gpu-not-in-region",
            f"{gpu_id} ({', '.join(ids)}) left out of the plan: region {region} does not offer "
            f"{'it' if len(ids) == 1 else 'them'}; {seller} offers {'it' if len(ids) == 1 else 'them'} in "
            f"{offered_in(ids)} ({region_source(ids[0])}); set {FIELD} to one of those regions to plan {gpu_id}",
            FIELD,
        )
        for gpu_id, ids in types_by_gpu(left).items()
    ]


def region_reason(wl: Workload, allowed: Iterable[str]) -> str | None:
    """A deployment's short reason naming the types among ``allowed`` its region lacks (None: none lacked)."""
    region = planned_region(wl)
    left = [] if region is None else sorted(set(allowed) & region_left_out(wl))
    if region is None or not left:
        return None
    types = listed(left) if len(left) <= 2 else f"{len(left)} instance types"
    lacks = f"region {region} does not offer {'it' if len(left) == 1 else 'them'}"
    return f"not planned: {listed(list(types_by_gpu(left)))} on {types} ({lacks}; info gpu-not-in-region)"
