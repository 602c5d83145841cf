"""The GCP machine types the GKE pools' zone does not offer: left out of the plan, and said (``gpu-not-in-zone``).

Every GKE GPU pool runs in one zone (:func:`generator.workload.gke_zone.pool_zone`); a type that zone lacks would
render and fail at ``terraform apply`` (fix164). The zones come from ``gpu_zones.json``; a type without a sourced zone
list is planned unchecked. A workload whose allowed types the zone all lacks is refused before planning
(:func:`generator.workload.gke_zone.zone_offer_errors`).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_zones import zone_source
from generator.planner.plan import Finding
from generator.words import listed
from generator.workload.gke_zone import (
    is_zone,
    not_offered_in,
    offered_where,
    place_lacks,
    planned_place,
    types_by_gpu,
    zone_field,
)
from generator.workload.models import Workload


def zone_left_out(wl: Workload) -> frozenset[str]:
    """The GCP platform ids the workload's zone, or every zone of its region, does not offer (empty: no place)."""
    place = planned_place(wl)
    return frozenset() if place is None else not_offered_in(place)


def zone_findings(wl: Workload, allowed: Iterable[str]) -> list[Finding]:
    """One info per GPU whose machine types among ``allowed`` (the lists' choice) the zone lacks, naming where it is."""
    place = planned_place(wl)
    if place is None:
        return []
    left = sorted(set(allowed) & not_offered_in(place))
    by_gpu = types_by_gpu(left)
    field = f"kubernetes.{zone_field(wl.kubernetes)}"
    kind = "zones" if is_zone(place) else "regions or zones"
    return [
        Finding(
            "info",
            "gpu-not-in-zone",
            f"{gpu_id} ({', '.join(ids)}) left out of the plan: {place_lacks(place, 'it' if len(ids) == 1 else 'them')}; "
            f"Compute Engine offers {'it' if len(ids) == 1 else 'them'} in "
            f"{offered_where(ids, place)} ({zone_source(ids[0])}); set {field} to one of those {kind} to plan {gpu_id}",
            field,
        )
        for gpu_id, ids in by_gpu.items()
    ]


def zone_reason(wl: Workload, allowed: Iterable[str]) -> str | None:
    """A deployment's short reason naming the types among ``allowed`` its pools' zone (or region) lacks (fix169).

    The plan's info ``gpu-not-in-zone`` says where each is offered; a deployment's reasons say it was left out for
    it, so a reader of one deployment sees why its choice is not the type the others would expect. None: none lacked.
    """
    place = planned_place(wl)
    left = [] if place is None else sorted(set(allowed) & not_offered_in(place))
    if place is None or not left:
        return None
    types = listed(left) if len(left) <= 2 else f"{len(left)} machine types"
    lacks = place_lacks(place, "it" if len(left) == 1 else "them")
    return f"not planned: {listed(list(types_by_gpu(left)))} on {types} ({lacks}; info gpu-not-in-zone)"
