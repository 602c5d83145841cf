"""What ``cached_prompt_share`` leaves under a router blind to prefixes (newuser73 item 11).

Each replica's engine keeps its own prefix cache (vLLM's automatic prefix caching is per engine,
:data:`VLLM_PREFIX_CACHE_DOCS`). A share measured on one replica (an agent's turns resending the earlier ones) holds on
a fleet only where a session's next turn reaches the replica that served its last: a session-affine or prefix-aware
router (:data:`PRODUCTION_STACK_PREFIX_ROUTING_DOCS`, :data:`LLM_D_PREFIX_CACHE_DOCS`). The routers the plan sizes
the wait for (``routing: free_place``: any replica with a place free; ``even``: a Service's random pick) send it to
any of the N replicas, which holds the session's prefix as far as the last turn it served, if any.

So where a service credits a share on more than one replica and its ``prefix_routing`` is ``none`` (the default: the
workload does not say the router keeps sessions, nor that the share was measured as routed), the fleet is planned
again at the share such a router finds (:func:`diluted_share`; N: the replicas it plans; again at the larger count
where the diluted share needs more, a few times) and ``prefix-routing`` warns with both months. A prefix every
request shares (a system prompt) is cached on every replica, so the diluted figure is a bound from below on the share,
and the finding says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.errors import SpecgenError
from generator.planner.plan import DeploymentPlan, Finding, Plan, layout_name
from generator.words import counted
from generator.workload.models import InferenceDeployment

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: vLLM's automatic prefix caching: each engine's own cache of the prompt blocks it has computed.
VLLM_PREFIX_CACHE_DOCS = "https://docs.vllm.ai/en/latest/features/automatic_prefix_caching.html"
#: SGLang's RadixAttention: each runtime's own radix tree of the prompt KV it has computed (the SGLang paper, section 3).
SGLANG_RADIX_CACHE_DOCS = "https://arxiv.org/abs/2312.07104"
#: SGLang's router: its cache_aware policy (the default) sends a request to the worker holding the longest prefix of it.
SGLANG_ROUTER_DOCS = "https://docs.sglang.ai/router/router.html"
#: Each engine's own prefix cache, as the finding cites it.
ENGINE_PREFIX_CACHE_DOCS = {"vllm": VLLM_PREFIX_CACHE_DOCS, "sglang": SGLANG_RADIX_CACHE_DOCS}
#: vLLM production-stack's router: session-based and prefix-aware routing to the engine holding a request's prefix.
PRODUCTION_STACK_PREFIX_ROUTING_DOCS = (
    "https://docs.vllm.ai/projects/production-stack/en/latest/use_cases/prefix-aware-routing.html"
)
#: llm-d's inference scheduler (an endpoint picker of the Gateway API Inference Extension): its prefix-cache scorer.
LLM_D_PREFIX_CACHE_DOCS = "https://llm-d.ai/docs/guide/Installation/precise-prefix-cache-aware"
#: Plans tried at most for one service (each plans the whole fleet again at the share over the last count).
MAX_TRIES = 3


def diluted_share(share: float, replicas: int) -> float:
    """The share of a prompt a router blind to prefixes finds cached on the replica it picks, one of ``replicas``.

    A session's turn resends the earlier ones: of a share ``s`` cached, each turn adds ``1 - s`` of the prompt. The
    replica picked last served this session ``j`` turns ago with probability ``(1/N)(1 - 1/N)^(j-1)`` (each turn's pick
    independent), and holds that turn's prompt and answer, ``s - (j - 1)(1 - s)`` of this one (review76 item 9: ``s /
    N`` counted the last turn only; at 0.8 on 5 replicas this gives 0.328, not 0.16). Eviction is not counted: a
    replica's cache then holds every session's prefixes, N times as many as behind a session-keeping router.
    """
    n = max(1, replicas)
    if n == 1 or share <= 0:
        return share
    held, j = 0.0, 1
    while (prefix := share - (j - 1) * (1 - share)) > 0:
        held += (1 / n) * (1 - 1 / n) ** (j - 1) * prefix
        j += 1
    return held


def prefix_routing_findings(
    loaded: LoadedWorkload, consts: Constants, plan: Plan, replan: Callable[[LoadedWorkload, Constants], Plan]
) -> list[Finding]:
    """A ``prefix-routing`` warning per service crediting ``cached_prompt_share`` on 2 replicas or more, unrouted.

    ``replan`` plans the workload with the service's share over its replicas (``prefix_routing: measured`` there, so
    the figure is the plan as the share would then be measured).
    """
    wl = loaded.workload
    planned = {d.name: d for d in plan.deployments}
    out = []
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment):
            continue
        spec = dep.inference
        done = planned.get(dep.name)
        if not spec.cached_prompt_share or spec.prefix_routing != "none" or done is None or done.replicas < 2:
            continue
        at, other, error = done.replicas, None, None
        for _ in range(MAX_TRIES):
            share = diluted_share(spec.cached_prompt_share, at)
            changed = dep._replace(inference=spec._replace(cached_prompt_share=share, prefix_routing="measured"))
            diluted = wl._replace(deployments=tuple(changed if d is dep else d for d in wl.deployments))
            try:
                other = replan(loaded._replace(workload=diluted), consts)
            except SpecgenError as exc:  # no fleet at that share: the warning says so
                other, error = None, exc
                break
            again = next(d for d in other.deployments if d.name == dep.name)
            if again.replicas <= at:
                break
            at = again.replicas
        out.append(
            Finding(
                "warning",
                "prefix-routing",
                _text(dep, done, plan, at, other, error),
                f"deployments[{i}].inference.cached_prompt_share",
            )
        )
    return out


def _text(
    dep: InferenceDeployment, done: DeploymentPlan, plan: Plan, at: int, other: Plan | None, error: SpecgenError | None
) -> str:
    """The warning: the share on one replica, what a blind router leaves, and the plan at that."""
    s = dep.inference.cached_prompt_share
    share = diluted_share(s, at)
    if other is None:
        planned = f"no fleet is planned at that share ({str(error).splitlines()[0] if error else 'none found'})"
    else:
        again = next(d for d in other.deployments if d.name == dep.name)
        planned = (
            f"at which the plan is {_fleet_text(other)} ({again.replicas:,} x {layout_name(again.tp, again.pp)} on "
            f"{again.pool}{_fewer(again.replicas, at, s)})"
        )
    engine = dep.inference.engine
    cache_docs = ENGINE_PREFIX_CACHE_DOCS.get(engine, VLLM_PREFIX_CACHE_DOCS)
    engine_router = (
        f"SGLang's router with its cache_aware policy, the default, {SGLANG_ROUTER_DOCS}"
        if engine == "sglang"
        else f"vLLM production-stack's session or prefix-aware router, {PRODUCTION_STACK_PREFIX_ROUTING_DOCS}"
    )
    routers = (
        f"a router that keeps a session's turns on the replica holding its prefix ({engine_router}; llm-d's "
        f"prefix-cache scorer on the Gateway API Inference Extension, {LLM_D_PREFIX_CACHE_DOCS})"
    )
    return (
        f"deployment {dep.name}: cached_prompt_share {s:g} is credited on each of its {done.replicas:,} replicas "
        f"({done.replicas:,} x {layout_name(done.tp, done.pp)} on {done.pool}), but each replica's engine keeps "
        f"its own prefix cache ({cache_docs}) and a router blind to prefixes (routing free_place's router, "
        "a Kubernetes Service, a round-robin balancer) sends a session's next turn to any replica: at "
        f"{s:g} measured on one replica, the replica it picks (1 of {at:,}{_grown(done.replicas, at)}) holds the "
        f"session's prompt as far as the last turn it served, if any: ~{share:.2g} of a prompt (each turn adding "
        f"{1 - s:g} of it; caches evicting sooner, holding every session's prefixes, not counted), {planned}, against "
        f"{_fleet_text(plan)}. A prefix every request "
        "shares (a system prompt) is cached on every replica and keeps its share, so the truth lies between the two. "
        f"The share holds with {routers}: then set inference.prefix_routing: session (with routing: even, a session "
        "queueing at its own replica); where the share was measured on the fleet as routed, set prefix_routing: measured"
    )


def _fewer(replicas: int, at: int, share: float) -> str:
    """Where the plan at the diluted share runs fewer replicas than it was divided by: it keeps more of the share."""
    if replicas >= at:
        return ""
    found = diluted_share(share, replicas)
    return f"; on {replicas:,} replica(s) a turn would find ~{found:.2g}, so that plan is a bound from above"


def _grown(planned: int, at: int) -> str:
    """Where the diluted share needs more replicas than planned, that the count divided by is theirs."""
    return "" if at == planned else f": the {at:,} replicas the share over {planned:,} needs, a share it keeps there"


def _fleet_text(plan: Plan) -> str:
    """A fleet's month and GPUs as the finding says them."""
    usd = plan.totals.get("usd_per_month")
    month = "unpriced" if usd is None else f"${usd:,.0f}/month"
    return f"{month}, {counted(plan.totals['gpus'], 'GPU')}"
