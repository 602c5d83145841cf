"""An EKS or AKS cluster's region checked against the GPU instance types it offers (``gpu_regions.json``, fix177).

On AWS and Azure every node pool runs in the cluster's region, ``kubernetes.location``; an instance type the region
does not offer renders (EKS node groups, Karpenter NodePools, AKS node pools) and fails at ``terraform apply`` or when
the pool scales up. As on GCP (:mod:`generator.workload.gke_zone`): a region offering none of the allowed types is
refused at ``kubernetes.location``, a deployment's ``platform`` it lacks at that line, and the planner leaves out the
types it lacks. A type without a sourced region list, and a region the source does not list, are not checked.
"""

from __future__ import annotations

from generator.catalog.gpu_regions import NOT_OFFERED, gpu_regions, not_in_region, region_offer, region_source
from generator.errors import InputError
from generator.words import listed
from generator.workload.cloud_regions import region_problem
from generator.workload.gke_zone import allowed_cloud_types, types_by_gpu
from generator.workload.loader import Document
from generator.workload.models import Workload

#: What a refusal or finding calls each cloud's offer.
SELLER = {"aws": "EC2", "azure": "Azure"}
WHERE = ("kubernetes", "location")


def planned_region(wl: Workload) -> str | None:
    """The region an AWS or Azure workload's pools run in (``kubernetes.location``); None elsewhere, or unnamed or unknown."""
    provider, location = wl.hardware.provider, wl.kubernetes.location
    if provider not in SELLER or location is None or region_problem(provider, location) is not None:
        return None
    return location


def region_left_out(wl: Workload) -> frozenset[str]:
    """The platform ids the workload's AWS or Azure region does not offer (empty: no region, or another provider)."""
    region = planned_region(wl)
    return frozenset() if region is None else not_in_region(wl.hardware.provider, region)


def offered_in(platform_ids: list[str]) -> str:
    """Where the cloud offers any of ``platform_ids``, as a refusal or finding says it."""
    regions = gpu_regions(platform_ids)
    return listed(list(regions)) if regions else "no region the catalog lists"


def region_offer_errors(doc: Document, wl: Workload) -> list[InputError]:
    """An AWS or Azure region that offers none of the GPU instance types the workload allows, or a pinned one, refused.

    Located at ``kubernetes.location``, or at the deployment's ``platform`` for a pinned type the region lacks.
    """
    region = planned_region(wl)
    if region is None:
        return []
    provider = wl.hardware.provider
    seller = SELLER[provider]
    errors = []
    for i, dep in enumerate(wl.deployments):
        pin = (dep.platform or "").lower()
        if pin and region_offer(pin, region) == NOT_OFFERED:
            why = (
                f"'{pin}' is not offered in region {region} (kubernetes.location): {seller} offers it in "
                f"{offered_in([pin])} ({region_source(pin)}); pin an instance type the region offers, or set "
                "kubernetes.location to a region that offers it"
            )
            errors.append(InputError(why, doc.locate(("deployments", i, "platform"))))
    allowed = allowed_cloud_types(wl, provider)
    if not allowed or any(region_offer(p, region) != NOT_OFFERED for p in allowed):
        return errors
    lists = [f"hardware.{key}" for key in ("gpus", "platforms") if getattr(wl.hardware, key)]
    asked = " and ".join(lists) if lists else f"the catalog's {provider.upper() if provider == 'aws' else 'Azure'} list"
    where = "; ".join(f"{gpu_id} in {offered_in(ids)}" for gpu_id, ids in types_by_gpu(allowed).items())
    why = (
        f"region {region} offers none of the GPU instance types {asked} allow{'s' if len(lists) != 2 else ''} "
        f"({listed(allowed)}): {seller} offers {where} ({region_source(allowed[0])}); set kubernetes.location to a "
        f"region that offers one, or allow a GPU {region} offers"
    )
    return [InputError(why, doc.locate(WHERE)), *errors]
