"""Published minimums of host RAM and CPU cores per GPU (``host_minimums.json``), applied to one server.

Where a vendor publishes a minimum for a GPU in a class of platform (NVIDIA's AI Enterprise reference
architecture: 7 physical cores and 128 GB of system memory per H200 NVL in a PCIe server), a configured
server gets at least that RAM (still one DIMM size in every channel) and a CPU with at least those
cores where a catalog CPU of its socket has them. Where none is published nothing changes, and the
server's bill of materials says so.
"""

from __future__ import annotations

from functools import cache

from generator import catalog
from generator.catalog.records import GpuSpec, HostMinimum, PlatformSpec
from generator.sizing.constants import Constants


def published_minimum(platform: PlatformSpec, gpu: GpuSpec) -> HostMinimum | None:
    """The published per-GPU host minimum of ``gpu`` in ``platform``'s kind of server, if there is one."""
    return _minimum(platform.kind, gpu.id)


@cache
def _minimum(kind: str, gpu_id: str) -> HostMinimum | None:
    found = [m for m in catalog.host_minimums().values() if gpu_id in m.gpu_ids and kind in m.platform_kinds]
    return min(found, key=lambda m: m.id) if found else None


def wanted_cpu_cores(platform: PlatformSpec, gpu: GpuSpec, gpus: int, consts: Constants) -> int:
    """Physical CPU cores wanted for ``gpus`` GPUs: the planning value per GPU, or the published minimum where higher."""
    minimum = published_minimum(platform, gpu)
    per_gpu = max(consts.cpu_cores_per_gpu, (minimum.cpu_cores_per_gpu or 0) if minimum else 0)
    return per_gpu * gpus


def wanted_cores_basis(platform: PlatformSpec, gpu: GpuSpec, consts: Constants) -> str:
    """Where :func:`wanted_cpu_cores`' figure a GPU comes from, in words (newuser97 item 4).

    ``few-cpu-cores`` said "64 wanted" of a p4d.24xlarge with no word of the 8 cores a GPU behind it, a planning
    default (``constants.cpu_cores_per_gpu``), or of the vendor's published minimum where that is higher.
    """
    minimum = published_minimum(platform, gpu)
    if minimum is not None and (minimum.cpu_cores_per_gpu or 0) > consts.cpu_cores_per_gpu:
        return f"{minimum.cpu_cores_per_gpu} a GPU, {minimum.configuration}'s published minimum ({minimum.source[0]})"
    return f"{consts.cpu_cores_per_gpu} a GPU, constants.cpu_cores_per_gpu: a planning minimum, not a published one"


def minimum_ram_gib(platform: PlatformSpec, gpu: GpuSpec, gpus: int) -> int:
    """System RAM the published minimum asks for ``gpus`` GPUs, GiB (0 where none is published)."""
    minimum = published_minimum(platform, gpu)
    return (minimum.ram_gib_per_gpu or 0) * gpus if minimum else 0


def minimum_text(platform: PlatformSpec, gpu: GpuSpec, gpus: int, cores: int, ram_gib: int) -> str:
    """What the bill of materials says about the published minimum: met or not, or that none applies."""
    minimum = published_minimum(platform, gpu)
    if minimum is None:
        # newuser46 item 5: a server the catalog lists with its RAM (the XE9680 MI300X's 4 TiB) or CPU keeps them
        listed = platform.ram_gib is not None and ram_gib == platform.ram_gib
        fixed = [f"RAM ({ram_gib:,} GiB)"] * listed + ["CPU"] * (platform.cpu_id is not None)
        sized = [part for part, kept in (("RAM", listed), ("CPU", platform.cpu_id is not None)) if not kept]
        # review32 item 8: RAM an owned group states is the inventory's, not the catalog's
        source = "as hardware.inventory states for" if platform.ram_as_owned or platform.custom else "as the catalog configures"
        said = [f"{' and '.join(fixed)} {source} {platform.id}"] if fixed else []
        said += [f"{' and '.join(sized)} sized from the workload"] if sized else []
        return f"no published per-GPU RAM or CPU-core minimum for {gpu.id} on {platform.kind} platforms; {', '.join(said)}"
    asked, short = [], []
    if minimum.cpu_cores_per_gpu:
        need = minimum.cpu_cores_per_gpu * gpus
        asked.append(f"{minimum.cpu_cores_per_gpu} physical CPU cores")
        if cores < need:
            short.append(f"{cores} of {need} cores")
    if minimum.ram_gib_per_gpu:
        need = minimum.ram_gib_per_gpu * gpus
        asked.append(f"{minimum.ram_gib_per_gpu} GiB RAM")
        if ram_gib < need:
            short.append(f"{ram_gib} of {need} GiB RAM")
    state = f"below it: {', '.join(short)}" if short else f"met: {cores} cores, {ram_gib} GiB for {gpus} GPU(s)"
    return f"{minimum.configuration} asks at least {' and '.join(asked)} per GPU ({minimum.source[0]}); {state}"
