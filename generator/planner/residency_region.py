"""The types an EU-resident AWS cluster's region lacks, left out of the plan, said (``gpu-not-in-eu-region``, fix200).

:mod:`generator.workload.residency_offer` leaves them out (the region cannot move out of the EU to find them) and
refuses a workload left with none; this info names each GPU so left out and the EU regions whose list offers it.
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog.gpu_regions import region_source
from generator.planner.plan import Finding
from generator.workload.models import Workload
from generator.workload.residency_offer import lacks_by_gpu, residency_left_out

CODE = "gpu-not-in-eu-region"


def residency_findings(wl: Workload, allowed: Iterable[str]) -> list[Finding]:
    """One info naming the types among ``allowed`` (the lists' choice) the EU region lacks, with where they are."""
    left = sorted(set(allowed) & residency_left_out(wl))
    if not left:
        return []
    return [
        Finding(
            "info",
            CODE,
            f"left out of the plan, as kubernetes.data_residency is eu and the catalog's region list does not name "
            f"{wl.kubernetes.location} for them ({region_source(left[0])}): {lacks_by_gpu(wl, left)}; set "
            "kubernetes.location to one of those regions to plan them",
            "kubernetes.location",
        )
    ]
