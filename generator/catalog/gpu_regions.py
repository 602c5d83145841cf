"""Which AWS Regions and Azure regions offer each GPU instance type the catalog rents there (``gpu_regions.json``).

An EKS or AKS cluster runs in one region (``kubernetes.location``); an instance type that region does not offer renders
fine and fails at ``terraform apply`` or when the node pool scales up (fix177). The lists may be stale or incomplete,
so a type a region's list leaves out is planned and warned, never refused (fix179). Not checked, :data:`UNSOURCED`: a
type whose record has no region list (``regions: null``), and a region the source does not list at all
(``listed_regions``: SkyPilot's Azure catalog holds US regions only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator import catalog
from generator.catalog import _records, _section
from generator.catalog.gpu_zones import NOT_OFFERED, OFFERED, UNSOURCED, first_source, places_by_platform

__all__ = ["NOT_OFFERED", "OFFERED", "UNSOURCED"]


def _listed() -> Mapping[str, Any]:
    """The file's ``listed_regions``: per provider, every region the source lists at all."""
    return dict(_section("gpu_regions", "listed_regions"))


def listed_regions(provider: str) -> frozenset[str]:
    """Every region the source lists for ``provider`` (empty for a provider the file does not hold)."""
    entry = _listed().get(provider)
    return frozenset(entry["regions"]) if entry else frozenset()


def offering_regions(platform_id: str) -> tuple[str, ...] | None:
    """The regions that offer ``platform_id``; None where no region list is sourced (or no record)."""
    return places_by_platform("gpu_regions", "regions").get(platform_id)


def region_offer(platform_id: str, region: str) -> str:
    """:data:`OFFERED`, :data:`NOT_OFFERED` or :data:`UNSOURCED`: whether ``region`` offers ``platform_id``."""
    regions = offering_regions(platform_id)
    platform = catalog.platforms().get(platform_id)
    if regions is None or platform is None or region not in listed_regions(platform.provider):
        return UNSOURCED
    return OFFERED if region in regions else NOT_OFFERED


def region_read(platform_id: str) -> str:
    """The date ``platform_id``'s region record was read from its source ("" where it has none)."""
    for rec in _records("gpu_regions"):
        if platform_id in rec["platform_ids"]:
            return str(rec["read"])
    return ""


def region_source(platform_id: str) -> str:
    """The first source URL of ``platform_id``'s region record ("" where it has none)."""
    return first_source("gpu_regions", platform_id)


def gpu_regions(platform_ids: list[str]) -> tuple[str, ...]:
    """Every region that offers at least one of ``platform_ids`` (sorted; the unsourced ones add none)."""
    return tuple(sorted({region for p in platform_ids for region in offering_regions(p) or ()}))
