"""Zones and racks as failure domains of the services that ask to stay up (newuser63 items 7 and 9).

``min_replicas`` of 2 or more and ``nodes_down_tolerated`` spread a service's replicas over nodes
(:func:`~generator.planner.spread.spread_services`); a zone outage (a cloud) or a rack's loss (its power feed, its
top-of-rack switch, its cooling) takes every node in it. specgen plans no second zone and racks servers by power, so
where such a service sits in one failure domain, or where the rendered pools leave the zones to the cloud, an info
says what is rendered and what it means. A service that asked for no spread is not told (one node already stops it).
"""

from __future__ import annotations

from generator.planner.plan import Finding, Plan, sorted_findings
from generator.planner.spread import spread_services
from generator.render.kubeadm import pool_rack
from generator.workload.gke_zone import pool_zone
from generator.workload.models import Workload

#: Kubernetes' well-known zone label, which a topology spread constraint keys on to spread pods over zones.
ZONE_SPREAD_DOCS = "https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/"
#: AKS: a node pool's availability zones are set when it is created and cannot be changed after.
AKS_ZONES_DOCS = "https://learn.microsoft.com/azure/aks/availability-zones"

#: What each cloud's rendered pools say of zones, after "the GPU node pools of <services>", by output: the Terraform
#: node groups / pools and the Karpenter NodePools (kubernetes/).
_CLOUD_ZONES = {
    ("aws", "terraform"): (
        "the EKS managed node groups take the availability zones of their subnet_ids (one where a cluster placement "
        "group holds a group)"
    ),
    ("aws", "kubernetes"): "the Karpenter NodePools require no topology.kubernetes.io/zone",
    ("azure", "terraform"): (
        f"the AKS node pools are created without zones, which cannot be added to a pool later ({AKS_ZONES_DOCS})"
    ),
    ("azure", "kubernetes"): "the Karpenter NodePools require no topology.kubernetes.io/zone",
}


def failure_domain_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """What a zone or rack down takes of the services that spread their replicas over nodes."""
    spread = spread_services(workload)
    index_of = {dep.name: index for index, dep in enumerate(workload.deployments)}
    services = [d for d in plan.deployments if d.name in spread]
    if not services:
        return []
    if plan.provider == "baremetal":
        return [f for dep in services if (f := _one_rack(plan, dep.name, dep.pools, index_of[dep.name])) is not None]
    if not {"kubernetes", "terraform"} & set(workload.outputs):
        return []
    names = ", ".join(d.name for d in services)
    if plan.provider == "gcp":
        zone = pool_zone(workload.kubernetes) or "one zone"
        text = (
            f"the GPU node pools of {names} run in one zone, {zone} (nodeLocations: GKE's nodeCount is per zone): a zone "
            "outage stops them, however their replicas are spread over nodes; specgen plans one zone (a second is a "
            "workload of its own with another kubernetes.zone, rendered beside this one)"
        )
        return [Finding("info", "zone-failure-domain", text, "kubernetes")]
    rendered = [
        _CLOUD_ZONES[(plan.provider, out)]
        for out in ("terraform", "kubernetes")
        if (plan.provider, out) in _CLOUD_ZONES and out in workload.outputs
    ]
    if not rendered:
        return []
    text = (
        f"the GPU node pools of {names} set no zone: {' and '.join(rendered)}, so nodes land in whichever zones GPU "
        "capacity allows, with nothing spreading a service's replicas between them; where the nodes can span zones, give "
        f"the pods a topology spread constraint on topology.kubernetes.io/zone beside the host name one ({ZONE_SPREAD_DOCS}); "
        "what a zone down leaves is not counted"
    )
    return [Finding("info", "zone-failure-domain", text, "hardware.provider")]


def _one_rack(plan: Plan, name: str, pools: tuple[str, ...], index: int) -> Finding | None:
    """A bare-metal service whose every pool stands in one rack: the rack's loss stops it.

    Only servers the plan buys and racks: where owned servers stand is not said in the workload (newuser57 item 9), so
    an owned pool has no rack (:func:`~generator.render.kubeadm.pool_rack`, the one its join file is labelled with).
    """
    held = [p for p in plan.pools if p.name in pools]
    racks = {pool_rack(p, plan.racks) for p in held}
    if len(racks) != 1 or None in racks:
        return None
    (rack,) = racks
    hosts = sum(p.hosts for p in held)
    if any(p.node.hosts > 1 for p in held):  # fz65 item 4: a rack-scale system's trays stand in its one rack
        remedy = "a second system in another rack (or a pool of another kind beside it) spreads it"
    else:
        remedy = "put the hosts in two racks by hand (their specgen_rack host var and the specgen.dev/rack node label say which)"
    return Finding(
        "info",
        "rack-failure-domain",
        f"deployment {name}: the {hosts} host(s) of its pool(s) all stand in {rack}: the loss of the rack's power "
        "feed, its top-of-rack switch or its cooling stops it, however its replicas are spread over hosts; specgen "
        f"fills racks by power (hardware.rack_power_kw), not by failure domain: {remedy}",
        f"deployments[{index}].inference",
    )


def with_failure_domain_findings(plan: Plan, workload: Workload) -> Plan:
    """``plan`` with what a zone or rack down takes of its spread services (:func:`failure_domain_findings`)."""
    found = failure_domain_findings(plan, workload)
    return plan._replace(findings=sorted_findings([*plan.findings, *found])) if found else plan
