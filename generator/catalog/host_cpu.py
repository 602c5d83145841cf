"""How fast a serving host's CPU runs an engine's per-sequence host work, relative to the reference host.

The engine constant ``decode_overhead_per_sequence_s`` was fitted on x86 DGX hosts (the TensorRT-LLM
rows of H100 / H200 / B200 systems); :data:`REFERENCE_CPU_ID` is the one of them with a measured
``host_dispatch_us`` in ``cpus.json``. A CPU with its own figure from the same benchmark scales that
host time by ``its host_dispatch_us / the reference's``; a CPU without one (or no CPU) is assumed to run
at the reference's speed (scale 1.0), as the other x86 hosts the constant was fitted on are.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import PlatformSpec

#: The host the per-sequence host constant was fitted on (DGX H100 / H200: Intel Xeon Platinum 8480C).
REFERENCE_CPU_ID = "xeon-platinum-8480c"


def host_time_scale(cpu_id: str | None) -> float:
    """Host-time multiplier of ``cpu_id`` against the reference host (1.0 when either has no figure)."""
    cpus = catalog.cpus()
    cpu = cpus.get(cpu_id or "")
    reference = cpus[REFERENCE_CPU_ID].host_dispatch_us
    if cpu is None or cpu.host_dispatch_us is None or reference is None:
        return 1.0
    return cpu.host_dispatch_us / reference


def platform_host_time_scale(platform: PlatformSpec | None) -> float:
    """Host-time multiplier of the CPU ``platform`` carries (1.0 for a platform without a known CPU)."""
    return host_time_scale(platform.cpu_id if platform is not None else None)
