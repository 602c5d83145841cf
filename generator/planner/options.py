"""Shared pieces of option evaluation: allowed hardware, interconnect, prices and the objective."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator import catalog
from generator.catalog.records import GpuSpec, PlatformSpec
from generator.sizing.constants import Constants
from generator.sizing.performance import Accelerator
from generator.workload.models import Workload

#: PCIe x16 bandwidth per direction, GB/s, by generation (hardware_facts.json, PCIe fact record).
PCIE_X16_GB_PER_S = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}
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


def accelerator(gpu: GpuSpec, compute: str, tp: int) -> Accelerator:
    """Roofline inputs for ``gpu`` computing in ``compute`` precision in a TP group of ``tp``."""
    tflops = gpu.tflops(compute) or gpu.tflops("bf16") or gpu.tflops("fp16") or 0.0
    fast = gpu.interconnect_kind in ("nvlink", "nvlink-bridge", "infinity-fabric", "ethernet") and tp <= gpu.nvlink_domain_gpus
    if fast and gpu.interconnect_gb_per_s_bidir > 0:
        link = gpu.interconnect_gb_per_s_bidir / 2
    else:
        fast = False
        link = PCIE_X16_GB_PER_S.get(gpu.pcie_gen, 31.5) * gpu.pcie_lanes / 16
    return Accelerator(gpu.memory_bandwidth_gb_per_s, tflops, link, fast)


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


def score(objective: str, usd_per_hour: float | None, gpus: int, power_w: int) -> tuple[float, ...]:
    """Sort key for the objective; unpriced options rank after priced ones under ``cost``."""
    usd = usd_per_hour if usd_per_hour is not None else math.inf
    if objective == "gpus":
        return (gpus, usd, power_w)
    if objective == "power":
        return (power_w, usd, gpus)
    return (usd, power_w, gpus)


def node_counts(platform: PlatformSpec, tp: int, pp: int, replicas: int) -> list[tuple[int, int]]:
    """(GPUs per node, nodes) layouts of ``replicas`` TP x PP replicas on ``platform``."""
    layouts = []
    biggest = max(platform.gpu_counts)
    for count in sorted(platform.gpu_counts):
        if pp == 1 and count >= tp and count % tp == 0:
            layouts.append((count, math.ceil(replicas / (count // tp))))
        elif pp > 1 and count == biggest and tp == count:
            layouts.append((count, replicas * pp))
    return layouts
