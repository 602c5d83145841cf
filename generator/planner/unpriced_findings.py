"""What a plan cannot price: pools with no price, and the fabric a rented pool's price leaves out."""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import PlatformSpec
from generator.planner.owned_build import stated_kind
from generator.planner.plan import Candidate, DeploymentPlan, Finding, Pool
from generator.planner.rented_fabric import rented_fabric_finding
from generator.planner.tco import billed_per_run
from generator.workload.capacity_type import spot_key
from generator.workload.models import Workload


def _no_price(wl: Workload, platform: PlatformSpec, candidate: Candidate, index: int, spot: bool = False) -> Finding:
    """The finding of a chosen layout without an on-demand price: a warning where the instance is not rented on demand.

    Priced by the workload (a reservation's price), such an instance still launches only on reserved capacity, which
    the rendered node pools do not request (fuzz16 item 1) unless ``kubernetes.reservations`` names the reservation
    (GKE; newuser28 item 5); a training job there costed per run assumes capacity billed by the hour (item 6).
    """
    priced = candidate.usd_per_hour is not None
    price = "its price is the workload's" if priced else "no price is known; add yours under 'prices:' (USD per node-hour)"
    if candidate.reserved:
        reservation = (wl.kubernetes.reservations or {})[platform.id]
        return Finding(
            "info",
            "reserved-capacity",
            f"{platform.id} is sold through {platform.not_on_demand}, not on demand: its GKE node pools take their "
            f"nodes from reservation {reservation} alone (reservationAffinity SPECIFIC_RESERVATION), billed by the "
            f"month whether a job runs or not (kubernetes.reservations); {price}",
            f"deployments[{index}]",
        )
    if platform.not_on_demand and not spot:  # spot: the type is sold so, and its pool asks for spot capacity
        hourly = (
            "; a training job's cost per run assumes capacity billed by the hour (Flex-start or Spot): a reservation "
            "bills its whole term, so name it under kubernetes.reservations to cost the pool by the month"
            if platform.provider == "gcp" and billed_per_run(wl.hardware.provider, candidate)
            else ""
        )
        return Finding(
            "warning",
            "not-on-demand",
            f"{platform.id} is sold through {platform.not_on_demand}, not on demand: its nodes launch only on such "
            "capacity (a reservation you hold), which the rendered EKS node groups and GKE node pools do not request"
            + (
                " (an AWS Karpenter NodePool asks for the reservation tagged for it: the karpenter-reserved-capacity finding)"
                if platform.provider == "aws"
                else ""
            )
            + ": point them at it (EKS capacity_type and the launch template's capacity reservation; on GKE name it "
            f"under kubernetes.reservations) before applying; {price}{hourly}",
            f"deployments[{index}]",
        )
    # a spot pool's rate is the @spot key's (newuser79 item 1: the plain key prices an on-demand rate, and a type sold
    # through Spot alone has none)
    key = f" (key '{spot_key(platform.id)}', its spot rate)" if spot else ""
    return Finding(
        "info",
        "no-price",
        f"no price for {platform.id} with {candidate.gpu_id} in the catalog; add one under 'prices:' (USD per node-hour)" + key,
        f"deployments[{index}]",
    )


def _unpriced_fabric_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan]) -> list[Finding]:
    """Pools whose GPU fabric has parts the plan does not count: NICs their platform does not list, and switches.

    The NICs a server gets fitted and the fabric's switches are in no price the catalog has, so capex leaves them out.
    A system whose fabric NICs come with it (a DGX) needs the switches too where a replica or a training job spans its
    servers (newuser35 item 4: four DGX B200 of one job, 32 x 400G ports, and no switch, optic, power or rack unit in
    the plan, with nothing said).
    """
    out = []
    for pool in pools:
        platform = catalog.platforms().get(pool.node.platform_id)
        fabric = [n for n in pool.node.nics if n.role == "fabric"]
        if platform is None or platform.provider != "baremetal" or not fabric:
            continue
        nics = ", ".join(f"{n.count} x {n.name}" for n in fabric)
        spanning = sorted(
            d.name
            for d in deployments
            if (share := d.in_pool(pool.name)) is not None
            and (share[0] * share[1] if d.kind == "inference" else share[3]) > pool.node.gpus
        )
        if pool.rented and not pool.owned_nodes:
            # newuser91 item 1: a rented server's network is the provider's; nothing is fitted or bought, and a pool
            # whose replicas each keep to one server counts on no fabric at all
            at = [i for i, d in enumerate(wl.deployments) if d.name in spanning]
            if spanning and pool.nodes > 1:
                out.append(rented_fabric_finding(wl, pool, nics, f"deployments[{at[0]}]" if at else ""))
            continue
        # owned servers whose fabric the inventory states have their NICs; those of a stated kind bought do not
        owned_nics = pool.owned_nodes == pool.nodes and stated_kind(wl, platform.id, pool.node.gpu_id)
        if not platform.fabric_nic_id and not owned_nics:
            out.append(
                Finding(
                    "info",
                    "fabric-unpriced",
                    f"pool {pool.name}: the GPU fabric fitted to its {pool.nodes} server(s) ({nics} each) and the "
                    "fabric's switches are not in capex: the catalog has no sourced price for them",
                )
            )
            continue
        if spanning and pool.nodes > 1:
            links = pool.nodes * sum(n.count for n in fabric)
            # fuzz34 item 7: servers all owned buy nothing; the plan still holds only where the site's fabric joins them
            advice = (
                "the plan assumes your site's fabric connects them: check that its switches join these servers on "
                "those links, non-blocking (their power and rack units are not in the plan either)"
                if pool.owned_nodes == pool.nodes
                else "the fabric's switches, optics and cables are not in the plan's capex, power or rack units (the "
                "catalog has no sourced figures for them); size them for those links, non-blocking, before buying"
            )
            out.append(
                Finding(
                    "info",
                    "fabric-switches-unpriced",
                    f"pool {pool.name}: {', '.join(spanning)} spans its {pool.nodes} servers over their GPU fabric "
                    f"({nics} each, {links} in all): {advice}",
                )
            )
    return out
