"""The GCP machine types the GKE pools' zone does not offer: left out of the plan, and said (``gpu-not-in-zone``).

Every GKE GPU pool runs in one zone (:func:`generator.workload.gke_zone.pool_zone`); a type that zone lacks would
render and fail at ``terraform apply`` (fix164). The zones come from ``gpu_zones.json``; a type without a sourced zone
list is planned unchecked. A workload whose allowed types the zone all lacks is refused before planning
(:func:`generator.workload.gke_zone.zone_offer_errors`).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_zones import not_in_zone, zone_source
from generator.planner.plan import Finding
from generator.workload.gke_zone import offered_where, pool_zone, types_by_gpu, zone_field
from generator.workload.models import Workload


def planned_zone(wl: Workload) -> str | None:
    """The zone a GCP workload's GPU pools run in; None elsewhere or where no zone is named."""
    return pool_zone(wl.kubernetes) if wl.hardware.provider == "gcp" else None


def zone_left_out(wl: Workload) -> frozenset[str]:
    """The GCP platform ids the workload's zone does not offer (empty: no zone, another provider)."""
    zone = planned_zone(wl)
    return frozenset() if zone is None else not_in_zone(zone)


def zone_findings(wl: Workload, allowed: Iterable[str]) -> list[Finding]:
    """One info per GPU whose machine types among ``allowed`` (the lists' choice) the zone lacks, naming where it is."""
    zone = planned_zone(wl)
    if zone is None:
        return []
    left = sorted(set(allowed) & not_in_zone(zone))
    by_gpu = types_by_gpu(left)
    field = f"kubernetes.{zone_field(wl.kubernetes)}"
    return [
        Finding(
            "info",
            "gpu-not-in-zone",
            f"{gpu_id} ({', '.join(ids)}) left out of the plan: zone {zone} does not offer "
            f"{'it' if len(ids) == 1 else 'them'}; Compute Engine offers {'it' if len(ids) == 1 else 'them'} in "
            f"{offered_where(ids, zone)} ({zone_source(ids[0])}); set {field} to one of those zones to plan {gpu_id}",
            field,
        )
        for gpu_id, ids in by_gpu.items()
    ]
