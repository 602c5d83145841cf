"""The plan's warning for a service in a setup whose measured throughput the model over-predicts.

The gaps and their text are :mod:`generator.sizing.throughput_gaps`'; the plan adds whether its replicas cover the
rate even at the measured margin.
"""

from __future__ import annotations

from generator.catalog.records import GpuSpec
from generator.planner.plan import Finding
from generator.sizing.architecture import Architecture
from generator.sizing.throughput_gaps import gap_text, matching_gap


def throughput_gap_finding(
    index: int, name: str, engine: str, gpu: GpuSpec, arch: Architecture, replica_rate: float, replicas: int, rate: float
) -> Finding | None:
    """A warning when deployment ``index`` runs where measured throughput fell short of the model's, with the margin.

    ``replicas`` of ``replica_rate`` req/s serve ``rate`` (a split part's share of the deployment's rate, review 20):
    where they cover it even at the lowest measured ratio, the warning says so instead of advising more (fuzz15 item 5).
    """
    gap = matching_gap(engine, gpu, arch)
    if gap is None:
        return None
    worst = replica_rate / gap.predicted_over_measured[1] * replicas
    advice = (
        f"its {replicas} replica(s) serve the {round(rate, 2):g} req/s even so"
        if worst >= rate
        else "plan with that margin (inference.max_utilization buys it) or measure this setup"
    )
    return Finding(
        "warning",
        "throughput-gap",
        f"deployment {name}: {gap_text(gap, engine, gpu.id, replica_rate, 'req/s', arch=arch)}: {advice}",
        f"deployments[{index}]",
    )
