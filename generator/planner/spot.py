"""What a plan with spot pools (``capacity_type: spot``) says about them: their price, a serving reclaim, a job's restart.

- ``spot-priced-on-demand`` (info): a spot pool priced at the on-demand rate, the catalog's or ``prices:``'s plain
  one: spot bills less, at a rate the cloud changes over time (:data:`SPOT_RATE`), which the catalog does not hold
  for the type in the region (none is invented; it holds GCP's sourced spot rates, review80 item 14, which price the
  pool with no finding); ``prices: {<platform>@spot: ...}`` prices it.
- ``serving-on-spot`` (warning): the cloud reclaims a spot node at short notice, and a service's replicas on it stop
  until a new node starts and loads the model; the replicas the plan sizes for the peak leave none to spare.
- ``batch-job-on-spot`` (info; a warning where the run misses its deadline with the node holding the most of its
  replicas reclaimed, fix137): a reclaim stops a batch job's replicas on the node and restarts their requests in
  flight; the run's hours count no reclaim, and its deadline leaves the rest for one. Among near ties on cost the
  layout that keeps its deadline with that node reclaimed is chosen (:func:`~generator.planner.batch_job.holds_node_down`).
- ``training-on-spot`` (info): a reclaimed node stops a training job, which resumes from its last checkpoint only.
- ``aks-spot-taint`` (info): AKS taints Spot nodes; pods need a toleration.
- ``spot-rate-unused``: a ``<platform>@spot`` rate that prices no pool.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from generator import catalog
from generator.catalog.records import PriceRecord
from generator.planner.plan import DeploymentPlan, Finding, Level, Pool
from generator.planner.tco import costed_catalog_price
from generator.sizing.serving_queue import slot_replicas
from generator.units import hours_text, rough_seconds_text
from generator.workload.capacity_type import SPOT_SUFFIX, given_rate, spot_key
from generator.workload.models import InferenceDeployment, Workload

#: The taint (key, value, effect) AKS gives the nodes of a Spot node pool, and the label beside it: only pods that
#: tolerate it run there (https://learn.microsoft.com/en-us/azure/aks/spot-node-pool); azurerm asks for both in the
#: pool's ``node_labels`` and ``node_taints``. The findings say it as ``key=value:Effect``.
AKS_SPOT_TAINT = ("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")
AKS_SPOT_LABEL = AKS_SPOT_TAINT[:2]
AKS_SPOT_TAINT_TEXT = "{}={}:{}".format(*AKS_SPOT_TAINT)

#: The notice a cloud gives before it reclaims a spot node: EC2's two-minute Spot interruption notice
#: (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html), GCE's 30 s
#: preemption notice for Spot VMs (https://cloud.google.com/compute/docs/instances/spot), Azure's 30 s eviction notice
#: through Scheduled Events (https://learn.microsoft.com/en-us/azure/virtual-machines/spot-vms).
RECLAIM_NOTICE = {"aws": "2 min", "gcp": "30 s", "azure": "30 s"}


#: How each cloud sets its spot rate, as the spot-priced-on-demand finding says it (newuser69 item 6: "varies by zone
#: and hour" is AWS's; Azure and Google Cloud publish a rate per region and machine type, which they change over time).
SPOT_RATE = {
    "aws": "a rate that varies by availability zone and over time",
    "azure": "a rate Azure publishes per region and VM size and changes over time (its Retail Prices API, priceType "
    "Consumption, the meters named Spot)",
    "gcp": "a rate Google Cloud publishes per region and machine type and changes up to once a month",
}


def at_catalog_spot_rate(pool: Pool) -> PriceRecord | None:
    """The catalog spot rate ``pool`` is costed at (its basis ``catalog <price id> (hour), its spot rate``), else None."""
    record = costed_catalog_price(pool)
    return record if record is not None and record.spot else None


def priced_on_demand(findings: Iterable[Finding]) -> list[str]:
    """The spot pools the ``spot-priced-on-demand`` findings price at an on-demand rate, sorted (empty: none).

    newuser79 item 12: the headline's month held such pools at on-demand list prices and said nothing of it. The pools
    are the findings' ``pools``, set where each is made (review80 item 11: a pattern matched on their messages, which a
    rewording would have left silent); a pool with no price at all carries none, as the month leaves it out.
    """
    return sorted({name for f in findings if f.code == "spot-priced-on-demand" for name in f.pools})


def on_demand_text(pools: list[str]) -> str:
    """The headline's qualifier of a month that holds spot pools at on-demand rates; "" where none does."""
    if not pools:
        return ""
    which = f"spot pool {pools[0]}" if len(pools) == 1 else f"spot pools {', '.join(pools)}"
    return f" (with {which} at the on-demand rate, above what spot bills: info spot-priced-on-demand)"


def spot_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan]) -> list[Finding]:
    """The findings of the plan's spot pools, and of spot rates no spot pool is priced at."""
    spot = {pool.name: pool for pool in pools if pool.spot}
    out = _unused_rates(wl, list(spot.values()))
    if not spot:
        return out
    index = {dep.name: i for i, dep in enumerate(wl.deployments)}
    for pool in spot.values():
        first = index[pool.deployments[0]]
        platform = pool.node.platform_id
        given = given_rate(wl.prices, platform, spot=True)
        if given is not None and given[1] == spot_key(platform):
            continue
        if at_catalog_spot_rate(pool) is not None:  # the catalog's sourced spot rate (review80 item 14)
            continue
        if pool.usd_per_hour is None:  # newuser79 item 12: "priced at the on-demand rate (no price, ...)" of no price
            sold = catalog.platforms()[platform].not_on_demand if platform in catalog.platforms() else None
            why = f"{platform} is sold through {sold}, with no on-demand rate" if sold else "the catalog has no rate for it here"
            priced, bills = f"with no price ({why}), which the plan's month leaves out", "spot bills at"
            qualified: tuple[str, ...] = ()  # the month leaves it out: nothing of the month to qualify
        else:
            rate = f"${pool.usd_per_hour / pool.nodes:,.2f} a node-hour"
            basis = "prices." + platform if given is not None else "the catalog's on-demand list price"
            priced, bills = f"priced at the on-demand rate ({rate}, {basis})", "spot bills less, at"
            qualified = (pool.name,)  # the headline's month holds it at that rate (priced_on_demand)
        out.append(
            Finding(
                "info",
                "spot-priced-on-demand",
                f"pool {pool.name} is spot capacity {priced}: {bills} "
                f"{SPOT_RATE[pool.node.provider]}, which the catalog does not hold; give it as prices: "
                f"{{{spot_key(platform)}: <USD per node-hour>}} to price the pool at it",
                f"deployments[{first}].capacity_type",
                qualified,
            )
        )
    azure = [pool for pool in spot.values() if pool.node.provider == "azure"]
    if azure:
        out.append(
            Finding(
                "info",
                "aks-spot-taint",
                f"AKS taints the nodes of Spot pool(s) {', '.join(p.name for p in azure)} {AKS_SPOT_TAINT_TEXT} (the rendered "
                "AKS node pools and Karpenter NodePools carry it): their pods need a toleration for it beside the GPU "
                "taint's, else none is scheduled there (https://learn.microsoft.com/en-us/azure/aks/spot-node-pool)",
                f"deployments[{index[azure[0].deployments[0]]}].capacity_type",
            )
        )
    for dep in deployments:
        on_spot = [spot[name] for name in dep.pools if name in spot]
        if not on_spot:
            continue
        i = index[dep.name]
        notice = RECLAIM_NOTICE.get(on_spot[0].node.provider, "short")
        if dep.kind == "inference" and "requests_per_run" in dep.details:
            out.append(_batch_job_on_spot(dep, on_spot[0], i, notice))
        elif dep.kind == "inference":
            out.append(_serving_on_spot(wl, dep, on_spot[0], i, notice))
        else:
            out.append(_training_on_spot(dep, i, notice))
    return out


def _unused_rates(wl: Workload, spot: list[Pool]) -> list[Finding]:
    """``spot-rate-unused``: a ``<platform>@spot`` rate no spot pool runs on.

    newuser44 item 3: a spot rate priced capacity the rendered files did not request.

    A warning where no deployment asks for spot (every pool is on demand: the rate prices nothing); info where spot
    deployments were planned on other types (the rate was ranked, and lost).
    """
    asked = any(dep.capacity_type == "spot" for dep in wl.deployments)
    used = {spot_key(pool.node.platform_id) for pool in spot}
    out = []
    for key in sorted(k for k in wl.prices if k.endswith(SPOT_SUFFIX) and k not in used):
        platform = key.removesuffix(SPOT_SUFFIX)
        why = (
            "no deployment asks for spot capacity, so every pool is on demand and rendered so: set capacity_type: spot "
            "on the deployments it is for, or remove it"
            if not asked
            else f"no spot deployment was planned on {platform}: the rate was weighed and another type chosen"
        )
        level: Level = "warning" if not asked else "info"
        out.append(Finding(level, "spot-rate-unused", f"prices.{key} is a spot rate, and {why}", f"prices.{key}"))
    return out


def _loading(dep: DeploymentPlan) -> str:
    """What a new node's start takes before it serves, as the cold-start-time finding times it; "" where untimed."""
    load, download = dep.details.get("model_load_s"), dep.details.get("model_download_s")
    if isinstance(download, int | float):  # newuser63 item 5: a cloud node downloads the checkpoint first
        return f" (downloading its model alone takes at least ~{rough_seconds_text(download)}: cold-start-time)"
    return f" (its model alone takes ~{rough_seconds_text(load)} to load)" if isinstance(load, int | float) else ""


def _serving_on_spot(wl: Workload, dep: DeploymentPlan, pool: Pool, i: int, notice: str) -> Finding:
    spec = wl.deployments[i]
    assert isinstance(spec, InferenceDeployment), "a serving deployment plan is an inference deployment's"
    per_replica = dep.details.get("requests_per_s_per_replica_max")  # what one replica sustains within the SLOs
    needed = math.ceil(spec.inference.requests_per_second / per_replica - 1e-9) if per_replica else dep.replicas
    if per_replica and dep.slot_queue is not None and not dep.split:  # and the wait for a place, as sized (m74a item 4)
        needed = slot_replicas(spec.inference.requests_per_second, dep.slot_queue, needed)
    per_node = math.ceil(dep.replicas / pool.nodes) if pool.nodes else dep.replicas
    spare = dep.replicas - needed
    loading = _loading(dep)
    span = reclaim_span(dep, pool)
    if span is None:
        headroom = (
            f"its {dep.replicas} replica(s) are {spare} more than the {needed} the peak needs, while a reclaim takes a "
            f"node's {per_node}"
            if spare > 0
            else f"its {dep.replicas} replica(s) are what the peak needs ({needed}), none to spare for a reclaim"
        )
    else:  # fix141: a replica over k nodes stops with any of them reclaimed (newuser81 item 5)
        hosts, taken, nodes = span
        ranks = "the replica with a rank on it" if taken == 1 else f"the {taken} replicas with a rank on it"
        exposed = (
            f"each of its {dep.replicas} replica(s) spans {hosts} spot nodes, so a reclaim of any one of their {nodes} "
            f"nodes stops {ranks} and leaves its other node(s) idle until a new one joins: a replica is {hosts} times as "
            "exposed to a reclaim as one on a single node"
        )
        if spare <= 0:
            headroom = f"{exposed}; its {dep.replicas} replica(s) are what the peak needs ({needed}), none to spare for a reclaim"
        else:
            covers = "which covers" if spare >= taken else "short of"
            stops = "the replica" if taken == 1 else f"the {taken} replicas"
            headroom = (
                f"{exposed}; its {dep.replicas} replica(s) are {spare} more than the {needed} the peak needs, {covers} "
                f"{stops} one node's reclaim stops"
            )
    return Finding(
        "warning",
        "serving-on-spot",
        f"deployment {dep.name} serves from spot capacity (pool {pool.name}): the cloud reclaims a spot node "
        f"with {notice} of notice, and the replicas on it stop until a new node starts and loads the model{loading}, a reclaim "
        f"often taking every spot node of the type in the zone at once; {headroom}. Plan headroom for a reclaim (a "
        "min_replicas above the peak's, or a copy of the service on demand beside it)"
        + (
            ", a layout whose replicas each fit one node (the deployment's platform and parallelism pin one: replica-spans-hosts)"
            if span is not None
            else ""
        )
        + ", or serve it on demand (capacity_type: on-demand)",
        f"deployments[{i}].capacity_type",
    )


def reclaim_span(dep: DeploymentPlan, pool: Pool) -> tuple[int, int, int] | None:
    """(nodes a replica spans, replicas one node's reclaim stops, spot nodes they stand on); None: a replica fits a node.

    fix141 (newuser81 item 5): serving-on-spot counted replicas, not the nodes each needs. A replica of ``w`` GPUs on
    nodes (hosts) of ``g`` spans ``ceil(w / g)`` of them and stops with any one reclaimed; a node holds a rank of one
    replica (each takes whole nodes: :func:`~generator.planner.spread.packed_nodes`), or of two on a rack-scale
    system's trays where ``w`` is no multiple of ``g`` (:func:`~generator.planner.spread.tolerant_layouts`).
    """
    host_gpus = pool.node.gpus // max(1, pool.node.hosts)
    width = dep.stage_gpus * dep.pp
    if not host_gpus or width <= host_gpus:
        return None
    hosts = math.ceil(width / host_gpus)
    # whole nodes a replica (packed_nodes) unless a rack-scale system's trays take them packed across (review41 item 4)
    shared = pool.node.hosts > 1 and width % host_gpus != 0
    stood_on = math.ceil(dep.replicas * width / host_gpus) if shared else dep.replicas * hosts
    return hosts, min(dep.replicas, 2 if shared else 1), min(pool.nodes * pool.node.hosts, stood_on)


def _batch_job_on_spot(dep: DeploymentPlan, pool: Pool, i: int, notice: str) -> Finding:
    """``batch-job-on-spot``: a reclaim delays the run by the new node's start and the requests in flight on it.

    newuser70 item 8: a batch job on spot was told of "the peak" and "a copy of the service". fix137: a warning where
    the run misses its deadline with the node holding the most of its replicas reclaimed for the rest of it (the
    replicas left sustain less than its rate, as node-down-capacity counts them), with the longest such reclaim its
    deadline absorbs (its slack over the share of the replicas the node holds); an info where the rest keep it. A
    layout that misses is not ruled out (a reclaim lasts until a new node serves, and serving-on-spot warns of the
    replicas to spare the same way): among near ties on cost the one that holds is chosen
    (:func:`~generator.planner.batch_job.holds_node_down`), and ``nodes_down_tolerated: 1`` plans, counts and prices
    the replicas that hold it.
    """
    hours, deadline = dep.details.get("hours_per_run"), dep.details.get("deadline_hours")
    # the node a reclaim takes and what the rest sustain, as the near tie counted them (review81 item 6: this finding
    # had its own even split over the pool's nodes, and each replica at its most rather than the run's rate)
    per_node, rest_rps = dep.node_down if dep.node_down is not None else (dep.replicas, 0.0)
    level: Level = "info"
    slack = ""
    if isinstance(hours, int | float) and isinstance(deadline, int | float):
        spare = max(0.0, deadline - hours)
        rate, requests = dep.details.get("requests_per_s"), dep.details.get("requests_per_run")
        left = dep.replicas - per_node
        down = ""
        if isinstance(rate, int | float) and isinstance(requests, int | float):
            if rest_rps >= rate * (1 - 1e-9):
                down = f"; with that node reclaimed for the rest of a run, its other {left} replica(s) keep the deadline"
            else:
                level = "warning"
                tolerated = (
                    "inference.nodes_down_tolerated: 1 plans the replicas that keep it with a node reclaimed (counted and priced)"
                )
                if left and rest_rps > 0:
                    request_s = dep.details.get("request_s")
                    absorbed = spare * dep.replicas / per_node
                    down = (
                        f"; with that node reclaimed and not replaced, its other {left} replica(s) run it in "
                        f"{hours_text(run_hours(requests, rest_rps, request_s))}, past the deadline, which holds a "
                        f"reclaim of that node lasting up to {hours_text(absorbed)} (those {hours_text(spare)} over "
                        f"the {per_node} of {dep.replicas} replica(s) it holds); {tolerated}"
                    )
                else:
                    down = (
                        "; that node reclaimed stops the run until a new node serves, which keeps the deadline only "
                        f"within those {hours_text(spare)}; {tolerated}"
                    )
        slack = (
            f"; a run's {hours_text(hours)} leave {hours_text(spare)} of its {hours_text(deadline)} deadline for reclaims{down}"
        )
    return Finding(
        level,
        "batch-job-on-spot",
        f"deployment {dep.name} runs its batch job on spot capacity (pool {pool.name}): the cloud reclaims a spot node "
        f"with {notice} of notice, which stops the {per_node} of its {dep.replicas} replica(s) on it until a new node "
        f"starts and loads the model{_loading(dep)}, and their requests in flight start over, a reclaim often taking "
        f"every spot node of the type in the zone at once{slack}. The run's hours and cost count no reclaim: where a "
        "run must meet its deadline whatever spot capacity does, run it on demand (capacity_type: on-demand)",
        f"deployments[{i}].capacity_type",
    )


def run_hours(requests: float, rps: float, request_s: object) -> float:
    """A run's hours at ``rps``: its requests over it and the last one's own time.

    As :func:`~generator.planner.batch_job.run_hours` counts the run's hours the finding sets them beside.
    """
    return (requests / rps + (float(request_s) if isinstance(request_s, int | float) else 0.0)) / 3600


def _training_on_spot(dep: DeploymentPlan, i: int, notice: str) -> Finding:
    size, write = dep.details.get("checkpoint_bytes_per_node"), dep.details.get("checkpoint_write_s")
    checkpoint = ""
    if isinstance(size, int | float) and size > 0:
        took = f", about {write:,.0f} s to write" if isinstance(write, int | float) else ""
        kept = dep.details.get("checkpoints_kept") or 1  # newuser51 item 5: the kept ones' total was said as one
        checkpoint = f" (a checkpoint: {size / kept / 1e9:,.1f} GB a node{took})"
    hours = dep.details.get("hours")
    run = f"its {hours:,.2f} h a run are costed once, with no work lost to a reclaim" if isinstance(hours, int | float) else ""
    return Finding(
        "info",
        "training-on-spot",
        f"deployment {dep.name} trains on spot capacity: the cloud reclaims a spot node with {notice} of notice, which stops "
        f"the job, and it resumes from its last checkpoint only{checkpoint}: save checkpoints often and restart it "
        "(torchrun --max-restarts, a Job's backoffLimit, a JobSet's failurePolicy)" + (f"; {run}" if run else ""),
        f"deployments[{i}].capacity_type",
    )
