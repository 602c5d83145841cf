"""An EU-resident AWS or Azure cluster's region that the catalog says lacks a GPU type: left out, or refused (fix200).

Under ``kubernetes.data_residency: eu`` the region cannot move out of the EU to find a type, so a type the region's
list in ``gpu_regions.json`` leaves out (p5.48xlarge in eu-central-1, which EC2 offers in eu-north-1) is not planned
with a warning, as elsewhere (:mod:`generator.planner.region_offer`), but left out of the plan, with the EU regions
that list it; a workload whose allowed types the region all lacks, or a deployment pinned to one, is refused at the
field. A region no list covers (every Azure region in Europe: SkyPilot's Azure catalog is US-only) or a type without
a list is not checked: the info ``gpu-region-unchecked`` says so.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.gpu_regions import NOT_OFFERED, gpu_regions, region_offer
from generator.errors import InputError
from generator.words import listed
from generator.workload.data_residency import EU_REGIONS
from generator.workload.gke_zone import allowed_gcp_types, types_by_gpu
from generator.workload.loader import Document
from generator.workload.models import Workload

#: The clouds whose regions ``gpu_regions.json`` checks.
CHECKED = ("aws", "azure")


def eu_region_checked(wl: Workload) -> str | None:
    """The EU region an EU-resident AWS or Azure workload names; None elsewhere (or outside the EU: refused)."""
    provider, region = wl.hardware.provider, wl.kubernetes.location
    if wl.kubernetes.data_residency != "eu" or provider not in CHECKED or region not in EU_REGIONS[provider]:
        return None
    return region


def residency_left_out(wl: Workload) -> frozenset[str]:
    """The provider's platform ids the EU region's list leaves out (empty where none is checked)."""
    region = eu_region_checked(wl)
    if region is None:
        return frozenset()
    provider = wl.hardware.provider
    return frozenset(
        p.id for p in catalog.platforms().values() if p.provider == provider and region_offer(p.id, region) == NOT_OFFERED
    )


def eu_offered_in(provider: str, platform_ids: list[str]) -> str:
    """The provider's EU regions whose list names any of ``platform_ids``, as a message says them."""
    regions = [r for r in gpu_regions(platform_ids) if r in EU_REGIONS[provider]]
    return listed(regions) if regions else "no EU region the catalog lists"


def lacks_by_gpu(wl: Workload, platform_ids: list[str]) -> str:
    """Each GPU of ``platform_ids`` with the EU regions that offer it: "h100-sxm5-80gb (p5.48xlarge) in eu-north-1"."""
    provider = wl.hardware.provider
    return "; ".join(
        f"{gpu_id} ({listed(ids)}) in {eu_offered_in(provider, ids)}" for gpu_id, ids in types_by_gpu(platform_ids).items()
    )


def residency_offer_errors(doc: Document, wl: Workload) -> list[InputError]:
    """A deployment pinned to a type the EU region lacks, or a region lacking every type the lists allow, refused."""
    region = eu_region_checked(wl)
    if region is None:
        return []
    lacking = residency_left_out(wl)
    why = "kubernetes.data_residency is eu and the catalog's region list (generator/catalog/gpu_regions.json) says"
    errors = [
        InputError(
            f"'{dep.platform}' is not offered in {region} ({why} so); the EU regions that offer it: "
            f"{lacks_by_gpu(wl, [dep.platform.lower()])}; set kubernetes.location to one of them or pin another type",
            doc.locate(("deployments", i, "platform")),
        )
        for i, dep in enumerate(wl.deployments)
        if dep.platform and dep.platform.lower() in lacking
    ]
    allowed = allowed_gcp_types(wl, wl.hardware.provider)
    if allowed and set(allowed) <= lacking:
        errors.insert(
            0,
            InputError(
                f"{region} offers none of the GPU types the workload allows ({why} so of {listed(allowed)}), and "
                f"the data must stay in the EU; the EU regions that offer them: {lacks_by_gpu(wl, allowed)}; set "
                "kubernetes.location to one of them or allow a GPU the region offers",
                doc.locate(("kubernetes", "location")),
            ),
        )
    return errors
