"""Which Compute Engine zones offer each GPU machine type the catalog rents on GCP (``gpu_zones.json``).

GKE puts every GPU node pool in one zone (:mod:`generator.workload.gke_zone`); a machine type that zone does not offer
renders fine and fails at ``terraform apply``. One fact for the workload check (a zone that offers none of the allowed
types is refused at its field) and the planner (a type the zone lacks is not planned). A type whose record has no zone
list (``zones: null``, no source found) is not checked: :data:`UNSOURCED`.
"""

from __future__ import annotations

from functools import cache

from generator import catalog
from generator.catalog import _records
from generator.errors import CatalogError

#: What :func:`zone_offer` says of a machine type in a zone.
OFFERED, NOT_OFFERED, UNSOURCED = "offered", "not-offered", "unsourced"


@cache
def places_by_platform(kind: str, field: str) -> dict[str, tuple[str, ...] | None]:
    """Platform id -> the places (``field`` of its ``kind`` record) that offer it, sorted; None where none is listed.

    ``gpu_zones`` (GCP zones) and ``gpu_regions`` (AWS and Azure regions, fix177) alike.
    """
    out: dict[str, tuple[str, ...] | None] = {}
    for rec in _records(kind):
        places = rec[field]
        for platform_id in rec["platform_ids"]:
            if platform_id in out:
                raise CatalogError(f"{kind}.json: {platform_id} is in two records (the second: {rec['id']})")
            out[platform_id] = None if places is None else tuple(sorted(places))
    return out


def first_source(kind: str, platform_id: str) -> str:
    """The first source URL of ``platform_id``'s ``kind`` record ("" where it has none)."""
    for rec in _records(kind):
        if platform_id in rec["platform_ids"]:
            return str(rec["source"][0])
    return ""


def _zones_by_platform() -> dict[str, tuple[str, ...] | None]:
    """GCP platform id -> the zones that offer it (sorted), None where its record lists none (unsourced)."""
    return places_by_platform("gpu_zones", "zones")


def offering_zones(platform_id: str) -> tuple[str, ...] | None:
    """The zones that offer GCP machine type ``platform_id``; None where no zone list is sourced (or no record)."""
    return _zones_by_platform().get(platform_id)


def zone_offer(platform_id: str, zone: str) -> str:
    """:data:`OFFERED`, :data:`NOT_OFFERED` or :data:`UNSOURCED`: whether ``zone`` offers ``platform_id``."""
    zones = offering_zones(platform_id)
    if zones is None:
        return UNSOURCED
    return OFFERED if zone in zones else NOT_OFFERED


def region_offer(platform_id: str, region: str) -> str:
    """:func:`zone_offer` for a GKE region without a zone: offered where any zone of ``region`` offers ``platform_id``.

    A Compute Engine zone is its region, ``-`` and a letter (us-central1-a is in us-central1).
    """
    zones = offering_zones(platform_id)
    if zones is None:
        return UNSOURCED
    return OFFERED if any(zone.rpartition("-")[0] == region for zone in zones) else NOT_OFFERED


def zone_source(platform_id: str) -> str:
    """The first source URL of ``platform_id``'s zone record ("" where it has none)."""
    return first_source("gpu_zones", platform_id)


@cache
def not_in_zone(zone: str) -> frozenset[str]:
    """The GCP platforms whose sourced zone list leaves ``zone`` out (the unsourced ones are not among them)."""
    return frozenset(p.id for p in catalog.platforms().values() if p.provider == "gcp" and zone_offer(p.id, zone) == NOT_OFFERED)


@cache
def not_in_region(region: str) -> frozenset[str]:
    """The GCP platforms whose sourced zone list has no zone of ``region`` (the unsourced ones are not among them)."""
    return frozenset(
        p.id for p in catalog.platforms().values() if p.provider == "gcp" and region_offer(p.id, region) == NOT_OFFERED
    )


def gpu_zones(platform_ids: list[str]) -> tuple[str, ...]:
    """Every zone that offers at least one of ``platform_ids`` (sorted; the unsourced ones add none)."""
    return tuple(sorted({zone for p in platform_ids for zone in offering_zones(p) or ()}))
