"""Serving engines on GPUs their current releases no longer support: said, with the releases that still do.

newuser67 item 1: a 70B course service was planned and rendered for vLLM on owned V100s (Volta, compute capability
7.0) with no word that vLLM's documented floor has moved to 7.5: its installation page read "compute capability 7.0 or
higher (e.g., V100, ...)" up to v0.14.0 and "compute capability 7.5 or higher (e.g., T4, ...)" by v0.21.0, whose wheels
are built for CUDA 12.9. A site deploying today's release on those pools gets an engine that does not start. specgen
renders no engine version, so the finding names the releases the documentation places on each side.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator import catalog
from generator.planner.plan import DeploymentPlan, Finding, Pool
from generator.workload.models import Workload

#: vLLM's installation page at the last release read here that lists Volta (compute capability 7.0 or higher).
VLLM_VOLTA_DOCS = "https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/"
#: The same page at the first release read here that requires compute capability 7.5 (Turing) or higher.
VLLM_TURING_FLOOR_DOCS = (
    "https://raw.githubusercontent.com/vllm-project/vllm/v0.21.0/docs/getting_started/installation/gpu.cuda.inc.md"
)
#: GPU architectures (the catalog's ``architecture``) below vLLM's documented compute-capability floor of 7.5.
BELOW_VLLM_FLOOR = frozenset({"volta"})


def engine_support_findings(wl: Workload, pools: Sequence[Pool], deployments: Sequence[DeploymentPlan]) -> list[Finding]:
    """A warning per vLLM service on a pool whose GPUs are below vLLM's documented compute-capability floor."""
    by_name = {p.name: p for p in pools}
    at = {d.name: i for i, d in enumerate(wl.deployments)}
    gpus = catalog.gpus()
    out = []
    for dep in deployments:
        if dep.kind != "inference" or dep.details.get("serving_engine", "vllm") != "vllm":
            continue
        for name in dep.pools:
            pool = by_name.get(name)
            gpu = gpus.get(pool.node.gpu_id) if pool is not None else None
            if pool is None or gpu is None or gpu.architecture not in BELOW_VLLM_FLOOR:
                continue
            out.append(
                Finding(
                    "warning",
                    "engine-gpu-unsupported",
                    f"deployment {dep.name} runs vLLM on {pool.node.gpu_name} ({gpu.architecture.title()}, "
                    "compute capability 7.0) in pool "
                    f"{name}: vLLM's installation page required compute capability 7.0 or higher up to v0.14.0 "
                    f"({VLLM_VOLTA_DOCS}) and 7.5 or higher by v0.21.0 ({VLLM_TURING_FLOOR_DOCS}), so a current release "
                    "does not start on these GPUs: pin a release whose page lists them (v0.14.0 or older) or build one "
                    "from source for SM 7.0; specgen renders no engine version",
                    f"deployments[{at.get(dep.name, 0)}]",
                )
            )
    return out
