"""A ``mem_fraction_static`` too small for one GPU's weights and KV, where SGLang's default holds them (fuzz34 item 9b).

``mem_fraction_static: 0.01`` under SGLang left 0.8 GiB of each H100 for the weights and KV cache: an 8B service
that fits one quarter of a GPU at the default was spread TP8 x PP2 over two bought DGX H100 ($540,000) with no word
of why. SGLang's static pool (weights and KV) is about ``mem_fraction_static`` of the GPU's memory; where that is
less than one GPU needs for the weights and one full-context sequence's KV, and the default fraction is not, the plan
says so with the figures; that the fraction alone forced the replica onto more GPUs only where the planner's own sizing
holds a replica on one GPU at the default fraction (review28 item 4).
"""

from __future__ import annotations

from generator import catalog
from generator.planner.inference import replica_memory
from generator.planner.plan import DeploymentPlan, Finding, Pool, layout_name
from generator.sizing.constants import Constants
from generator.sizing.precision import WeightFormat
from generator.sizing.sglang_kv import sglang_default_mem_fraction_static
from generator.sizing.weights import Parallelism, engine_stages
from generator.units import GIB
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment


def sglang_fraction_findings(
    loaded: LoadedWorkload,
    consts: Constants,
    pools: list[Pool],
    deployments: list[DeploymentPlan],
    formats: dict[str, WeightFormat],
) -> list[Finding]:
    """A ``mem-fraction-too-small`` warning for each SGLang service whose given fraction made a replica span GPUs.

    ``formats``: the weight format each service's replicas hold, by deployment name.
    """
    wl = loaded.workload
    out = []
    planned = {d.name: d for d in deployments}
    gpu_of = {p.name: p.node.gpu_id for p in pools}
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or dep.inference.engine != "sglang":
            continue
        inference, plan, fmt = dep.inference, planned.get(dep.name), formats.get(dep.name)
        fraction = inference.mem_fraction_static
        if fraction is None or plan is None or fmt is None:
            continue
        gpu = catalog.gpus().get(gpu_of.get(plan.pool, ""))
        weights, per_token = plan.details.get("weights_bytes"), plan.details.get("kv_cache_bytes_per_token")
        if gpu is None or not weights or per_token is None or plan.stage_gpus * plan.pp <= 1:
            continue
        memory = gpu.memory_bytes
        needed = weights + per_token * inference.max_context_tokens
        default = sglang_default_mem_fraction_static(memory)
        if not fraction * memory < needed <= default * memory:
            continue
        # "alone" only where the planner's own sizing holds a TP1 replica at the default fraction (activations, CUDA
        # graphs, KV pages and the runtime besides): else the other needs spread it too (review28 item 4)
        one_gpu = Parallelism(1, 1, 1, engine_stages(inference.engine))
        at_default = inference._replace(mem_fraction_static=None)
        mem, _ = replica_memory(loaded.models[dep.name].architecture, at_default, fmt, gpu, one_gpu, consts)
        spread = f"each replica over {plan.stage_gpus * plan.pp} GPUs ({layout_name(plan.tp, plan.pp, plan.expert_parallel)})"
        if mem.capacity is not None and mem.capacity.max_concurrency >= 1:
            why = f", so the fraction alone spreads {spread}"
        else:
            why = f"; the fraction leaves less than one GPU needs, and the plan spreads {spread}"
        out.append(
            Finding(
                "warning",
                "mem-fraction-too-small",
                f"deployment {dep.name}: mem_fraction_static {fraction:g} leaves {fraction * memory / GIB:.2f} GiB of "
                f"each {gpu.id} ({memory / GIB:.1f} GiB) for the weights and KV cache, where one GPU holding the "
                f"replica needs {needed / GIB:.2f} GiB (weights {weights / GIB:.2f} GiB and one "
                f"{inference.max_context_tokens:,}-token sequence's KV {per_token * inference.max_context_tokens / GIB:.2f}"
                f" GiB); SGLang's default for the GPU, {default:g}, leaves {default * memory / GIB:.2f} GiB{why}: "
                "raise it, or leave it out for the default",
                f"deployments[{i}].inference.mem_fraction_static",
            )
        )
    return out
