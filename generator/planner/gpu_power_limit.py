"""A GPU under a board power limit (``hardware.gpu_power_limits``, ``nvidia-smi -pl``): its draw and its clock.

The limit is enforced by lowering the clock (NVIDIA's nvidia-smi manual: ``-pl`` "specifies maximum power management
limit in watts", https://docs.nvidia.com/deploy/nvidia-smi/index.html; the driver then reports "SW Power Cap" as the
clock's throttle reason). The board's dynamic power is C x V^2 x f, and across the DVFS range the voltage tracks the
clock, so dynamic power goes as the clock cubed (https://en.wikipedia.org/wiki/Dynamic_voltage_scaling;
https://en.wikipedia.org/wiki/Processor_power_dissipation). The sustained clock a limit allows is then
``(limit / TDP) ** (1/3)`` of the clock at TDP. Unsourced simplification (stated, not measured): the whole board
power is taken to scale so; a board's static (leakage, HBM, idle) share does not, so the clock under a deep limit is
lower than this model says and its loss is understated. No measured throughput-vs-limit row is in tests/data yet.

What moves: the tensor rates (compute-bound work: prompt passes, training, large-batch steps) scale with the clock;
the memory bandwidth does not (HBM runs its own clock), so memory-bound decode barely moves. Where the limit is at or
above the TDP nothing moves.
"""

from __future__ import annotations

from generator.catalog.power_limit_tools import LIMIT_TOOLS

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start may reach this module)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypeGuard

    from generator.catalog.records import GpuSpec
    from generator.planner.plan import Finding, Pool
    from generator.workload.models import Hardware

#: Dynamic power over clock: P ~ C V^2 f with V ~ f across the DVFS range (sources in the module's docstring).
POWER_CLOCK_EXPONENT = 3.0


def below_tdp(limit_w: float | None, tdp_w: float) -> TypeGuard[float]:
    """Whether a board limit of ``limit_w`` (None: none set) lowers a ``tdp_w`` board's draw and clock."""
    return limit_w is not None and limit_w < tdp_w


def clock_fraction(limit_w: float, tdp_w: float) -> float:
    """The share of its clock at TDP a board sustains under a power limit of ``limit_w`` (1 at or above the TDP)."""
    if limit_w >= tdp_w or tdp_w <= 0:
        return 1.0
    return float((limit_w / tdp_w) ** (1 / POWER_CLOCK_EXPONENT))


def limited_gpu(gpu: GpuSpec, limit_w: float | None) -> GpuSpec:
    """``gpu`` under a board power limit of ``limit_w``: drawing the limit, its tensor rates at the clock it allows.

    None, or a limit at or above the TDP: ``gpu`` itself.
    """
    if not below_tdp(limit_w, gpu.tdp_w):
        return gpu
    share = clock_fraction(limit_w, gpu.tdp_w)
    dense = {k: None if v is None else v * share for k, v in gpu.dense_tflops.items()}
    achievable = gpu.max_achievable_tflops
    scaled = None if achievable is None else {k: v * share for k, v in achievable.items()}
    return gpu._replace(tdp_w=float(limit_w), rated_tdp_w=gpu.tdp_w, dense_tflops=dense, max_achievable_tflops=scaled)


def limited_power_saving_w(gpu: GpuSpec, gpus: int) -> float:
    """DC watts a node's ``gpus`` boards draw less under their limit than at their rated TDP (0 unlimited)."""
    return 0.0 if gpu.rated_tdp_w is None else (gpu.rated_tdp_w - gpu.tdp_w) * gpus


#: The code of the note on GPUs planned under a power limit.
GPU_POWER_LIMIT = "gpu-power-limit"


def gpu_power_limit_findings(pools: Sequence[Pool], hardware: Hardware) -> list[Finding]:
    """A note for each GPU model of ``pools`` run under a power limit: its clock, its draw, and where it is set."""
    from generator import catalog
    from generator.planner.plan import Finding

    out = []
    for gpu_id in sorted({p.node.gpu_id for p in pools}):
        limit = hardware.gpu_power_limit_w(gpu_id)
        gpu = catalog.gpus().get(gpu_id)
        if gpu is None or not below_tdp(limit, gpu.tdp_w):
            continue
        share = clock_fraction(limit, gpu.tdp_w)
        text = (
            f"{gpu_id} limited to {limit:g} W of its {gpu.tdp_w:g} W TDP: planned at {share:.1%} of its clock at TDP "
            f"(clock ~ power^(1/3), a model, not a measurement): compute-bound work (prompt passes, training) takes "
            f"{1 / share - 1:.1%} longer, memory-bound decode barely moves; each GPU is counted at {limit:g} W in node "
            f"power, heat, racks and site power; Ansible's specgen_gpu_power_limit sets it "
            f"({LIMIT_TOOLS[gpu.vendor]}) at every boot; Kubernetes has no standard field for it, "
            "so the manifests carry none"
        )
        out.append(Finding("info", GPU_POWER_LIMIT, text, "hardware.gpu_power_limits"))
    return out
