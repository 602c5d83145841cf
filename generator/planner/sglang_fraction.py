"""A ``mem_fraction_static`` too small for one GPU's weights and KV, where SGLang's default holds them (fuzz34 item 9b).

``mem_fraction_static: 0.01`` under SGLang left 0.8 GiB of each H100 for the weights and KV cache: an 8B service
that fits one quarter of a GPU at the default was spread TP8 x PP2 over two bought DGX H100 ($540,000) with no word
of why. SGLang's static pool (weights and KV) is about ``mem_fraction_static`` of the GPU's memory; where that is
less than one GPU needs for the weights and one full-context sequence's KV, and the default fraction is not, the
fraction alone forced the replica onto more GPUs, and the plan says so with the figures.
"""

from __future__ import annotations

from generator import catalog
from generator.planner.plan import DeploymentPlan, Finding, Pool
from generator.sizing.sglang_kv import sglang_default_mem_fraction_static
from generator.units import GIB
from generator.workload.models import Workload


def sglang_fraction_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan]) -> list[Finding]:
    """A ``mem-fraction-too-small`` warning for each SGLang service whose given fraction made a replica span GPUs."""
    out = []
    planned = {d.name: d for d in deployments}
    gpu_of = {p.name: p.node.gpu_id for p in pools}
    for i, dep in enumerate(wl.deployments):
        inference = getattr(dep, "inference", None)
        fraction = getattr(inference, "mem_fraction_static", None)
        plan = planned.get(dep.name)
        if inference is None or fraction is None or getattr(inference, "engine", None) != "sglang" or plan is None:
            continue
        gpu = catalog.gpus().get(gpu_of.get(plan.pool, ""))
        weights, per_token = plan.details.get("weights_bytes"), plan.details.get("kv_cache_bytes_per_token")
        if gpu is None or not weights or per_token is None or plan.tp * plan.pp <= 1:
            continue
        memory = gpu.memory_bytes
        needed = weights + per_token * inference.max_context_tokens
        default = sglang_default_mem_fraction_static(memory)
        if not fraction * memory < needed <= default * memory:
            continue
        out.append(
            Finding(
                "warning",
                "mem-fraction-too-small",
                f"deployment {dep.name}: mem_fraction_static {fraction:g} leaves {fraction * memory / GIB:.2f} GiB of "
                f"each {gpu.id} ({memory / GIB:.1f} GiB) for the weights and KV cache, where one GPU holding the "
                f"replica needs {needed / GIB:.2f} GiB (weights {weights / GIB:.2f} GiB and one "
                f"{inference.max_context_tokens:,}-token sequence's KV {per_token * inference.max_context_tokens / GIB:.2f}"
                f" GiB); SGLang's default for the GPU, {default:g}, leaves {default * memory / GIB:.2f} GiB, so the "
                f"fraction alone spreads each replica over {plan.tp * plan.pp} GPUs (TP{plan.tp} x PP{plan.pp}): "
                "raise it, or leave it out for the default",
                f"deployments[{i}].inference.mem_fraction_static",
            )
        )
    return out
