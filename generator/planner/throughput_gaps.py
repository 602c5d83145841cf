"""Warnings for serving setups whose measured throughput the model is known to over-predict.

The catalog's ``throughput_gaps.json`` names them with the public runs behind each (newuser18 item 1: a DeepSeek-R1
service on H200 was planned on a rate those runs measured 2.4-3.9x lower). The sizing is not derated: no factor per
group of measurements enters the model; the plan says how far the rate it counts on may be from what was measured.
"""

from __future__ import annotations

from generator.catalog import throughput_gaps
from generator.catalog.records import GpuSpec, ThroughputGap
from generator.planner.plan import Finding
from generator.sizing.architecture import Architecture


def matching_gap(engine: str, gpu: GpuSpec, arch: Architecture) -> ThroughputGap | None:
    """The known gap a service of ``arch`` on ``engine`` and ``gpu`` falls into, if any."""
    kinds = {layer.attention for layer in arch.layers}
    for gap in throughput_gaps().values():
        if engine in gap.engines and gpu.architecture in gap.gpu_architectures and gap.attention in (None, *kinds):
            return gap
    return None


def throughput_gap_finding(
    index: int, name: str, engine: str, gpu: GpuSpec, arch: Architecture, replica_rate: float
) -> Finding | None:
    """A warning when deployment ``index`` runs where measured throughput fell short of the model's, with the margin."""
    gap = matching_gap(engine, gpu, arch)
    if gap is None:
        return None
    low, high = gap.predicted_over_measured
    return Finding(
        "warning",
        "throughput-gap",
        f"deployment {name}: for {gap.description} on {gpu.id} with {engine}, specgen's throughput model predicted "
        f"{low:.2f}-{high:.2f}x what {gap.runs} public runs measured ({', '.join(gap.source)}); each replica is rated "
        f"{replica_rate:.2f} req/s, which those runs put at {replica_rate / high:.2f}-{replica_rate / low:.2f}: plan "
        "with that margin (a higher requests_per_second buys it) or measure this setup",
        f"deployments[{index}]",
    )
