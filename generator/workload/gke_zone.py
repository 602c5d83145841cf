"""Checks of where GKE node pools go: ``kubernetes.location`` (the cluster's region or zone) and ``kubernetes.zone``.

GKE's ``nodeCount`` is per zone, and a pool without ``nodeLocations`` in a regional cluster gets nodes in each of
the cluster's zones (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters: GPU pools there
must name their zones with ``--node-locations``). specgen puts every GPU pool in exactly one zone, so that
``nodeCount`` is the plan's node count and a COMPACT placement policy (one zone only) is valid. A zone is never
guessed: a regional location needs ``kubernetes.zone``. The zone must offer the planned machine type
(``gpu_zones.json``, :func:`zone_offer_errors`; the planner leaves out the types it lacks).
"""

from __future__ import annotations

import difflib
import re

from generator import catalog
from generator.catalog.gpu_zones import (
    NOT_OFFERED,
    gpu_zones,
    not_in_region,
    not_in_zone,
    offering_zones,
    region_offer,
    zone_offer,
    zone_source,
)
from generator.errors import InputError
from generator.words import listed
from generator.workload.cloud_regions import AWS_REGIONS, AZURE_REGIONS, region_problem
from generator.workload.loader import Document
from generator.workload.models import KubernetesSettings, Workload

WHERE = ("kubernetes",)
#: Google Cloud's regions, as Compute Engine lists them (https://cloud.google.com/compute/docs/regions-zones, "Available
#: regions and zones", 42 regions, read 2026-12), and asia-southeast3 (fix174), not on that page as read: SkyPilot's
#: catalog of the Compute Engine API lists its zones a, b and c (n4-highcpu-4 and -48 rows, offsets 1,900,000-1,916,000
#: of https://github.com/skypilot-org/skypilot-catalog/blob/2c3d7ea7d76bf84cf80d382e946c1609571485fd/catalogs/v9/gcp/vms.csv,
#: the revision gpu_zones.json cites); a GKE location there was refused as "not a Google Cloud region". GKE runs in
#: each. A region Google opens after that is refused until it is added here; the message names this page.
GCP_REGIONS = frozenset(
    {
        "africa-south1",
        "asia-east1",
        "asia-east2",
        "asia-northeast1",
        "asia-northeast2",
        "asia-northeast3",
        "asia-south1",
        "asia-south2",
        "asia-southeast1",
        "asia-southeast2",
        "asia-southeast3",
        "australia-southeast1",
        "australia-southeast2",
        "europe-central2",
        "europe-north1",
        "europe-north2",
        "europe-southwest1",
        "europe-west1",
        "europe-west10",
        "europe-west12",
        "europe-west2",
        "europe-west3",
        "europe-west4",
        "europe-west6",
        "europe-west8",
        "europe-west9",
        "me-central1",
        "me-central2",
        "me-west1",
        "northamerica-northeast1",
        "northamerica-northeast2",
        "northamerica-south1",
        "southamerica-east1",
        "southamerica-west1",
        "us-central1",
        "us-east1",
        "us-east4",
        "us-east5",
        "us-south1",
        "us-west1",
        "us-west2",
        "us-west3",
        "us-west4",
    }
)
REGIONS_PAGE = "https://cloud.google.com/compute/docs/regions-zones"
#: A zone is its region, ``-`` and a letter; the zones on :data:`REGIONS_PAGE` use a to f (us-central1-f,
#: europe-west1-b/c/d), so a later letter names no zone.
ZONE_LETTERS = "abcdef"
#: A Compute Engine zone is its region plus ``-<letter>`` (us-central1 -> us-central1-a).
_ZONE = re.compile(r"[a-z]+-[a-z]+[0-9]+-[a-z]")
ZONES_PAGE = "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones"


def is_zone(location: str) -> bool:
    """Whether a GKE location names a zone (else a region)."""
    return _ZONE.fullmatch(location) is not None


def region_of(zone: str) -> str:
    """The region a zone belongs to."""
    return zone.rpartition("-")[0]


def cluster_region(location: str) -> str:
    """The region of a GKE cluster's location (a zone's region, or the region itself)."""
    return region_of(location) if is_zone(location) else location


def pool_zone(settings: KubernetesSettings) -> str | None:
    """The one zone the GPU node pools run in: ``zone``, else a zonal ``location``; None when neither names one."""
    if settings.zone is not None:
        return settings.zone
    if settings.location is not None and is_zone(settings.location):
        return settings.location
    return None


def pool_place(settings: KubernetesSettings) -> str | None:
    """Where the GPU pools run: :func:`pool_zone`, else the regional ``location`` (any of its zones); None: neither."""
    return pool_zone(settings) or settings.location


def planned_place(wl: Workload) -> str | None:
    """Where a GCP workload's GPU pools run (:func:`pool_place`); None on another provider, or where neither is named."""
    return pool_place(wl.kubernetes) if wl.hardware.provider == "gcp" else None


def place_offer(platform_id: str, place: str) -> str:
    """Whether a zone offers ``platform_id``, or for a region whether any of its zones does (:mod:`gpu_zones`)."""
    return zone_offer(platform_id, place) if is_zone(place) else region_offer(platform_id, place)


def not_offered_in(place: str) -> frozenset[str]:
    """The GCP platforms a zone does not offer, or, for a region, that none of its zones offers."""
    return not_in_zone(place) if is_zone(place) else not_in_region(place)


def place_in(place: str) -> str:
    """``place`` as "offered in ..." says it: ``zone Z``, or ``any zone of region R``."""
    return f"zone {place}" if is_zone(place) else f"any zone of region {place}"


def place_lacks(place: str, what: str) -> str:
    """The phrase "zone Z does not offer <what>", or "no zone of region R offers <what>"."""
    return f"zone {place} does not offer {what}" if is_zone(place) else f"no zone of region {place} offers {what}"


def pool_node_locations(platform_id: str, settings: KubernetesSettings) -> list[str] | None:
    """A GKE pool's ``node_locations``: the one zone, else the zones of the regional location offering the type.

    terraform-provider-google: a pool's ``node_locations`` unset takes the cluster's zones, and a zone lacking the
    machine type fails the pool; so a regional pool lists only its region's zones that offer the type (fix169). None:
    no location, or a type without a sourced zone list (the cluster's zones, unchecked).
    """
    zone = pool_zone(settings)
    if zone is not None:
        return [zone]
    region, zones = settings.location, offering_zones(platform_id)
    if region is None or zones is None:
        return None
    return [z for z in zones if region_of(z) == region] or None


def place_problem(place: str) -> str | None:
    """Why a GKE location or zone names no Google Cloud region or zone (:data:`GCP_REGIONS`); None when it does.

    fuzz22 item 7: ``mars-north9-a`` and ``us-central1-z`` fit the pattern and were rendered into Terraform.
    """
    if place != place.lower() and place_problem(place.lower()) is None:  # fuzz24 item L1
        return f"'{place}' is written {place.lower()} (lower case)"
    region = cluster_region(place)
    if region not in GCP_REGIONS:
        close = difflib.get_close_matches(region, sorted(GCP_REGIONS), n=1, cutoff=0.8)
        other = "an AWS Region" if place in AWS_REGIONS else "an Azure region" if place in AZURE_REGIONS else None
        hint = f" (it is {other})" if other else f" (did you mean {close[0]}?)" if close else ""  # fuzz24 item L3
        where = f"'{place}'" if region == place else f"'{place}': {region}"
        return f"{where} is not a Google Cloud region{hint}; the regions are listed at {REGIONS_PAGE}"
    if is_zone(place) and place[-1] not in ZONE_LETTERS:
        return (
            f"'{place}' is not a zone of {region}: zones are the region, '-' and a letter from a to f "
            f"({REGIONS_PAGE} lists each region's zones)"
        )
    return None


def location_errors(doc: Document, wl: Workload) -> list[InputError]:
    """``kubernetes.location`` or ``zone`` naming no region or zone of the workload's cloud, located at the field.

    On GCP a Google Cloud region or zone; on AWS and Azure one of their regions (:mod:`cloud_regions`).
    """
    provider, location = wl.hardware.provider, wl.kubernetes.location
    if provider in ("aws", "azure"):
        problem = None if location is None else region_problem(provider, location, cluster_region(location) in GCP_REGIONS)
        return [] if problem is None else [InputError(problem, doc.locate((*WHERE, "location")))]
    if provider != "gcp":
        return []
    places = (("location", wl.kubernetes.location), ("zone", wl.kubernetes.zone))
    return [
        InputError(problem, doc.locate((*WHERE, field)))
        for field, place in places
        if place is not None and (problem := place_problem(place) or _not_a_zone(field, place)) is not None
    ]


def _not_a_zone(field: str, place: str) -> str | None:
    """Why ``kubernetes.zone`` names a GKE region, not one of its zones (the schema takes any cloud's zone name)."""
    if field != "zone" or is_zone(place):
        return None
    return f"'{place}' is a region, not a zone: a zone is the region, '-' and a letter from a to f ({REGIONS_PAGE})"


def zone_problem(settings: KubernetesSettings) -> tuple[str, str] | None:
    """(field, why) when the pools' zone is missing or outside the cluster's location; None when it is fine."""
    location, zone = settings.location, settings.zone
    if location is None:
        return None  # kubernetes.location is required where GKE pools are rendered, and said so there
    if zone is None:
        if is_zone(location):
            return None
        return (
            "location",
            f"'{location}' is a region: GKE's nodeCount is per zone and a GPU pool without nodeLocations spreads "
            "over the cluster's zones (usually 3 times the nodes, or a rejected pool where a zone lacks the machine "
            f"type); set kubernetes.zone to the one zone of {location} that offers the planned machine type "
            f"({ZONES_PAGE}), or give a zone as the location",
        )
    region = cluster_region(location)
    if region_of(zone) != region:  # a zonal cluster's pools may use other zones of its region (multi-zonal)
        return "zone", f"'{zone}' is not in the cluster's region '{region}' (kubernetes.location {location})"
    return None


def gke_cluster_errors(doc: Document, wl: Workload) -> list[InputError]:
    """What a render of GKE node pools needs and the workload lacks: the cluster's project and location, located.

    Checked with the workload's values, so ``validate``, ``plan`` and ``render`` refuse it alike (fuzz35 item 6:
    ``plan`` planned what ``validate`` refused; a ContainerNodePool names its cluster). At the ``kubernetes`` block, or
    at ``hardware.provider``, which asks for them, where the block is absent.
    """
    if wl.hardware.provider != "gcp" or "kubernetes" not in wl.outputs:
        return []
    missing = [key for key in ("gcp_project", "location") if getattr(wl.kubernetes, key) is None]
    if not missing:
        return []
    named = " and ".join(f"kubernetes.{key}" for key in missing)
    why = (
        f"{named}: required to render GKE node pools (ContainerNodePool clusterRef and location); set them under "
        "kubernetes:, or leave kubernetes out of outputs"
    )
    given = isinstance(doc.data, dict) and isinstance(doc.data.get("kubernetes"), dict)
    return [InputError(why, doc.locate(WHERE if given else ("hardware", "provider")))]


def gke_zone_errors(doc: Document, wl: Workload) -> list[InputError]:
    """The zone problem of a workload that renders GKE node pools, located at the field to change.

    A location or zone that names no Google Cloud region or zone is refused first, whatever is rendered (it prices
    the plan: :func:`location_errors`).
    """
    if unknown := location_errors(doc, wl):
        return unknown
    offer = zone_offer_errors(doc, wl)
    if wl.hardware.provider != "gcp" or "kubernetes" not in wl.outputs:
        return offer
    problem = zone_problem(wl.kubernetes)
    if problem is None:
        return offer
    field, why = problem
    return [InputError(why, doc.locate((*WHERE, field))), *offer]


def zone_field(settings: KubernetesSettings) -> str:
    """The field that names the pools' zone (:func:`pool_zone`): ``zone``, else the zonal ``location``."""
    return "zone" if settings.zone is not None else "location"


def allowed_gcp_types(wl: Workload, provider: str = "gcp") -> list[str]:
    """The catalog's GCP (or ``provider``'s) types ``hardware.gpus`` and ``hardware.platforms`` allow (each list where given)."""
    gpus = {g.lower() for g in wl.hardware.gpus or ()}
    platforms = {p.lower() for p in wl.hardware.platforms or ()}
    return sorted(
        p.id
        for p in catalog.platforms().values()
        if p.provider == provider and (not gpus or gpus & set(p.gpu_ids)) and (not platforms or p.id in platforms)
    )


def types_by_gpu(platform_ids: list[str]) -> dict[str, list[str]]:
    """GPU id -> those of ``platform_ids`` (catalog platforms, in the given order) that hold it, by GPU id."""
    out: dict[str, list[str]] = {}
    for platform_id in platform_ids:
        for gpu_id in catalog.platforms()[platform_id].gpu_ids:
            out.setdefault(gpu_id, []).append(platform_id)
    return dict(sorted(out.items()))


def offered_where(platform_ids: list[str], place: str) -> str:
    """Where Compute Engine offers any of ``platform_ids``, as a refusal or finding says it: ``place``'s region first."""
    zones = gpu_zones(platform_ids)
    region = cluster_region(place)
    near = [z for z in zones if region_of(z) == region]
    if near:
        return listed(near)
    return f"no zone of {region} (elsewhere: {listed(list(zones))})" if zones else "no zone the catalog lists"


def zone_offer_errors(doc: Document, wl: Workload) -> list[InputError]:
    """A GKE pools' zone that offers none of the GPU machine types the workload allows, or a pinned one, refused.

    On GCP every GPU pool runs in one zone (:func:`pool_zone`); a machine type that zone lacks renders and fails at
    ``terraform apply`` (fix164). A regional ``location`` without a zone (where no GKE pools are rendered) is checked
    against every zone of the region (fix169): a type none of them offers is refused alike. Checked against
    ``gpu_zones.json``; a type without a sourced zone list is not checked (it counts as offered). Located at the field
    that names the zone or region, at the deployment's ``platform``, or at the ``kubernetes.reservations`` key of a
    type the place lacks (a reservation is of one zone).
    """
    place = planned_place(wl)
    if place is None or place_problem(place) is not None:
        return []
    field = zone_field(wl.kubernetes)
    errors = []
    for i, dep in enumerate(wl.deployments):
        pin = (dep.platform or "").lower()
        if pin and place_offer(pin, place) == NOT_OFFERED:
            why = (
                f"'{pin}' is not offered in {place_in(place)} (kubernetes.{field}): Compute Engine offers it in "
                f"{offered_where([pin], place)} ({zone_source(pin)}); pin a machine type the "
                f"{'zone' if is_zone(place) else 'region'} offers, or set kubernetes.{field} to a "
                f"{'zone' if is_zone(place) else 'region or zone'} that offers it"
            )
            errors.append(InputError(why, doc.locate(("deployments", i, "platform"))))
    for key in wl.kubernetes.reservations or ():
        if place_offer(key.lower(), place) == NOT_OFFERED:  # a Compute Engine reservation is of one zone
            why = (
                f"a reservation of '{key}' cannot be in {place_in(place)} (kubernetes.{field}), which does not offer "
                f"it: Compute Engine offers it in {offered_where([key.lower()], place)} ({zone_source(key.lower())})"
            )
            errors.append(InputError(why, doc.locate(("kubernetes", "reservations", key), key=True)))
    allowed = allowed_gcp_types(wl)
    if not allowed or any(place_offer(p, place) != NOT_OFFERED for p in allowed):
        return errors
    by_gpu = types_by_gpu(allowed)
    lists = [f"hardware.{key}" for key in ("gpus", "platforms") if getattr(wl.hardware, key)]
    asked = " and ".join(lists) if lists else "the catalog's GCP list"
    where = "; ".join(f"{gpu_id} in {offered_where(ids, place)}" for gpu_id, ids in by_gpu.items())
    types = f"the GPU machine types {asked} allow{'s' if len(lists) != 2 else ''}"
    lacks = f"zone {place} offers none of {types}" if is_zone(place) else f"no zone of region {place} offers any of {types}"
    why = (
        f"{lacks} ({listed(allowed)}): Compute Engine offers {where} ({zone_source(allowed[0])}); set "
        f"kubernetes.{field} to a {'zone' if is_zone(place) else 'region or zone'} that offers one, or allow a GPU "
        f"{place} offers"
    )
    return [InputError(why, doc.locate((*WHERE, field))), *errors]
