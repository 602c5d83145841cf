"""Shared pieces of option evaluation: allowed hardware, interconnect, prices and the objective."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator import catalog
from generator.catalog.records import GpuSpec, PlatformSpec
from generator.planner.plan import Candidate
from generator.sizing.constants import Constants
from generator.workload.models import Workload

HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Hardware:
    """One (platform, GPU) pair the workload allows."""

    platform: PlatformSpec
    gpu: GpuSpec


def allowed_hardware(wl: Workload) -> list[Hardware]:
    """Every (platform, GPU) pair allowed by provider, GPU and platform lists and site cooling, sorted by id."""
    hw = wl.hardware
    gpus = catalog.gpus()
    allowed_gpus = {g.lower() for g in hw.gpus} if hw.gpus else None
    allowed_platforms = {p.lower() for p in hw.platforms} if hw.platforms else None
    out = []
    for platform in sorted(catalog.platforms().values(), key=lambda p: p.id):
        if platform.provider != hw.provider or (allowed_platforms and platform.id not in allowed_platforms):
            continue
        if platform.cooling == "liquid" and hw.cooling != "liquid":
            continue
        for gpu_id in platform.gpu_ids:
            if gpu_id not in gpus or (allowed_gpus and gpu_id not in allowed_gpus):
                continue
            gpu = gpus[gpu_id]
            if gpu.cooling == "liquid" and hw.cooling != "liquid":
                continue
            out.append(Hardware(platform, gpu))
    return out


def node_price_per_hour(wl: Workload, platform: PlatformSpec, gpus: int, consts: Constants) -> tuple[float | None, str | None]:
    """USD per node-hour and where it comes from: the workload's override, else the catalog."""
    if platform.id in wl.prices:
        return wl.prices[platform.id], "workload prices"
    records = [p for p in catalog.prices().values() if p.platform_id == platform.id]
    if not records:
        return None, None
    rec = sorted(records, key=lambda r: r.id)[0]
    if rec.unit == "hour":
        per_hour = rec.usd
    elif rec.unit == "month":
        per_hour = rec.usd / HOURS_PER_MONTH
    else:  # a purchase price, spread over the amortization period
        per_hour = rec.usd / (consts.amortization_months * HOURS_PER_MONTH)
    full = max(platform.gpu_counts)
    basis = f"catalog {rec.id} ({rec.unit})"
    if gpus != full:
        per_hour *= gpus / full
        basis += f", scaled by GPU count {gpus}/{full}"
    return per_hour, basis


def rank(objective: str, candidate: Candidate) -> tuple[float, ...]:
    """Sort key of a candidate under the objective."""
    return score(objective, candidate.usd_per_hour, candidate.gpus, candidate.power_w)


def score(objective: str, usd_per_hour: float | None, gpus: int, power_w: int) -> tuple[float, ...]:
    """Sort key for the objective; unpriced options rank after priced ones under ``cost``."""
    usd = usd_per_hour if usd_per_hour is not None else math.inf
    if objective == "gpus":
        return (gpus, usd, power_w)
    if objective == "power":
        return (power_w, usd, gpus)
    return (usd, power_w, gpus)


def tensor_parallel_sizes(hw: Hardware, heads: int) -> list[int]:
    """TP degrees allowed on ``hw``.

    Powers of two that divide the attention heads, inside one node, and inside the NVLink /
    Infinity Fabric domain where the GPU has one (over PCIe only for GPUs without).
    """
    gpu = hw.gpu
    limit = max(hw.platform.gpu_counts)
    if gpu.interconnect_kind != "none":
        limit = min(limit, gpu.nvlink_domain_gpus)
    sizes, tp = [], 1
    while tp <= limit:
        if heads % tp == 0:
            sizes.append(tp)
        tp *= 2
    return sizes


def node_counts(platform: PlatformSpec, tp: int, pp: int, replicas: int) -> list[tuple[int, int]]:
    """(GPUs per node, nodes) layouts of ``replicas`` TP x PP replicas on ``platform``.

    A replica fits in a node when its GPUs divide the node; a larger replica spans whole nodes
    of the biggest size (its pipeline stages then talk over the node fabric).
    """
    layouts = []
    size = tp * pp
    biggest = max(platform.gpu_counts)
    for count in sorted(platform.gpu_counts):
        if size <= count and count % size == 0:
            layouts.append((count, math.ceil(replicas / (count // size))))
        elif size > count == biggest and size % count == 0:
            layouts.append((count, replicas * (size // count)))
    return layouts
