"""Serving setups whose measured throughput the model is known to over-predict (``throughput_gaps.json``).

A plan (a warning) and the estimate (a note) say so with the margin the public runs measured (newuser18 item 1: a
DeepSeek-R1 service on H200 was planned on a rate those runs measured 2.4-3.9x lower; review 14 item 6: the estimate
gave that rate without a word). The sizing is not derated: no factor per group of measurements enters the model.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import GpuSpec, ThroughputGap
from generator.sizing.architecture import Architecture


def matching_gap(engine: str, gpu: GpuSpec, arch: Architecture) -> ThroughputGap | None:
    """The known gap a service of ``arch`` on ``engine`` and ``gpu`` falls into, if any."""
    kinds = {layer.attention for layer in arch.layers}
    for gap in catalog.throughput_gaps().values():
        if (
            engine in gap.engines
            and gpu.architecture in gap.gpu_architectures
            and gap.attention in (None, *kinds)
            and (arch.is_moe or not gap.routed_experts)
        ):
            return gap
    return None


def gap_text(gap: ThroughputGap, engine: str, gpu_id: str, figure: float, unit: str) -> str:
    """What the runs measured against the model, and where their ratios put a replica's predicted ``figure``."""
    low, high = gap.predicted_over_measured
    return (
        f"for {gap.description} with {engine} on {gpu_id}, specgen's throughput model predicted {low:.2f}-{high:.2f}x "
        f"what {gap.runs} public runs of {gap.measured_on} measured ({', '.join(gap.source)}); a replica rated "
        f"{figure:,.2f} {unit}, which those ratios put at {figure / high:,.2f}-{figure / low:,.2f}"
    )
