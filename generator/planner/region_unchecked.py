"""A planned AWS or Azure instance type whose offer in the cluster's region no source checked (newuser109).

``gpu_regions.json`` checks an EKS or AKS cluster's region against SkyPilot's catalogs, and a type a listed region
lacks is warned (``gpu-region-unlisted``, :mod:`generator.planner.region_offer`). What those catalogs do not cover was
passed in silence: SkyPilot's Azure catalog lists US regions only, so an AKS cluster in westeurope or swedencentral
(every European region) got no word that its VM sizes were never checked there, and a type without a region list
(ND H200 v5, ND MI300X v5: newer than the file) none in any region. One info a workload, at ``kubernetes.location``,
names each planned type so and the cloud CLI command that answers it; the price-region warning's clause points here.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_regions import UNSOURCED, listed_regions, region_offer
from generator.planner.plan import Finding, Pool
from generator.planner.region_offer import FIELD, SELLER, check_command, planned_region
from generator.words import listed
from generator.workload.models import Workload

CODE = "gpu-region-unchecked"


def unchecked_types(region: str, pools: Iterable[Pool]) -> dict[str, list[str]]:
    """Each planned instance type whose offer in ``region`` is unchecked: its pools' names, sorted."""
    found: dict[str, list[str]] = {}
    for pool in pools:
        if region_offer(pool.node.platform_id, region) == UNSOURCED:
            found.setdefault(pool.node.instance_type or pool.node.platform_id, []).append(pool.name)
    return {machine: sorted(names) for machine, names in sorted(found.items())}


def region_unchecked_findings(wl: Workload, pools: Iterable[Pool]) -> list[Finding]:
    """One info naming the planned types whose offer in ``kubernetes.location`` no source says, with the checks."""
    region = planned_region(wl)
    if region is None or not (types := unchecked_types(region, pools)):
        return []
    provider = wl.hardware.provider
    if region in listed_regions(provider):
        why = "the catalog holds no region list for them (gpu_regions.json read no source row of them)"
    else:
        why = f"the catalog's region lists (generator/catalog/gpu_regions.json) do not cover {region}"
        if provider == "azure":
            why += " (their source, SkyPilot's Azure catalog, lists US regions only)"
    checks = "; ".join(
        f"{machine} ({'pools' if len(names) > 1 else 'pool'} {listed(names)}): `{check_command(provider, machine, region)}`"
        for machine, names in types.items()
    )
    return [
        Finding(
            "info",
            CODE,
            f"whether {SELLER[provider]} offers the planned instance types in {region} is not checked: {why}, and "
            f"an instance type the region lacks renders fine but fails at terraform apply or when its pool scales up; "
            f"check each before applying (an empty answer: the region lacks it, so set {FIELD} to a region that offers "
            f"it or leave it out with hardware.platforms): {checks}",
            FIELD,
        )
    ]
