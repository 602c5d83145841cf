"""How options group into pools and racks: the co-location groups, their units and racks, why apart or together."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from generator.planner.cluster_findings import SHARED_GROUP, SPOT_GROUP
from generator.planner.inference import ReplicaShape
from generator.planner.inventory import ServerKey
from generator.planner.option import Option
from generator.planner.plan import Pool
from generator.planner.pool_names import unit_pool
from generator.planner.rack_supply import rack_feeds
from generator.planner.racks import pack_racks, racked_nodes
from generator.planner.spread import spread_floor
from generator.workload.models import Workload

if TYPE_CHECKING:
    from generator.planner.training_chain import Sequenced


def _option_pools(opts: Sequence[Option]) -> list[Pool]:
    """One pool of each part of ``opts`` (each on servers of its own), as the racks count them (:func:`alone_over_limit`)."""
    pools: list[Pool] = []
    for part in (part for opt in opts for part in opt.pieces):
        c = part.candidate
        name = str(len(pools))
        pools.append(Pool(name, part.node, c.nodes, (), 0, 0, None, None, (), (), owned_nodes=c.owned_nodes, rented=c.rented))
    return pools


def _colocation_groups(
    chosen: Sequence[tuple[int, Option]], sequenced: Mapping[int, Sequenced] | None = None
) -> dict[tuple[str, str, int, str], list[tuple[int, Option]]]:
    """The deployments' parts by the servers they may share: (platform, GPU, GPUs a server, group) -> (index, part).

    Inference replicas that divide a server's GPUs (:attr:`~generator.planner.option.Option.shares_servers`) of one
    kind group together; anything else is a group of its own deployment (``solo-<index>``: a chain's jobs, in
    ``sequenced``, one group of its first job's).
    """
    groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]] = {}
    for index, opt in chosen:
        for part in opt.pieces:  # a split deployment's parts go to pools of their own server kinds
            first = sequenced[index].first if sequenced and index in sequenced else index
            # replicas in shares of GPUs (gpu_sharing) fill nodes of their own: a node's GPUs are all whole or all
            # shared one way (a pool has one device-plugin config or MIG partition)
            kind = f"{SHARED_GROUP} {part.sharing_key}" if part.candidate.shares_per_gpu else "inference"
            # a job beside a service (fix182) joins the service's group, on the GPUs its rate leaves
            kind = kind if part.shares_servers or part.beside is not None else f"solo-{first}"
            # spot capacity is a node group of its own: a spot and an on-demand deployment never share a pool
            kind += SPOT_GROUP if part.hardware.spot else ""
            groups.setdefault((*part.server_kind, kind), []).append((index, part))
    return groups


def _pool_units(
    wl: Workload, groups: Mapping[tuple[str, str, int, str], list[tuple[int, Option]]]
) -> list[tuple[list[tuple[int, Option]], int]]:
    """The pools (members, nodes) the groups of :func:`_colocation_groups` make, in the order :func:`build_plan` names them."""
    units: list[tuple[list[tuple[int, Option]], int]] = []
    for (_, _, per_node, kind), members in sorted(groups.items()):
        if kind.startswith("solo-") and len(members) > 1:  # a chain: its jobs in turn on the servers the widest needs
            units.append((members, max(o.candidate.nodes for _, o in members)))
            continue
        units += _group_units(wl, members, per_node)
    return units


def _unit_pools(units: Sequence[tuple[Sequence[tuple[int, Option]], int]]) -> list[Pool]:
    """A pool of each unit of :func:`_pool_units`, as the racks count them (:func:`racks_needed`).

    A pool of one part is that part's servers; a pool its members share has the unit's nodes, each drawing the most
    of its members' servers (the node :func:`build_plan` configures holds all of their needs), the owned servers among
    them up to its nodes, and stands in no rack of the plan only where every member's servers are rented.
    """
    pools: list[Pool] = []
    for members, nodes in units:
        parts = [part for _, part in members]
        node = max((part.node for part in parts), key=lambda n: n.power_w)
        owned = min(nodes, sum(part.candidate.owned_nodes for part in parts))
        rented = parts[0].candidate.rented if all(part.candidate.rented for part in parts) else None
        name = str(len(pools))
        pools.append(Pool(name, node, nodes, (), 0, 0, None, None, (), (), owned_nodes=owned, rented=rented))
    return pools


def _racks_of(wl: Workload, pools: list[Pool]) -> int:
    """The racks ``pools``' servers pack into, as the fleet's are (:func:`~generator.planner.racks.pack_racks`)."""
    hw = wl.hardware
    feeds = rack_feeds(hw.rack_circuits) if hw.rack_circuits is not None else None
    return len(pack_racks(pools, hw.rack_power_kw, hw.rack_units_reserved, feeds, hw))


def racks_needed(wl: Workload, chosen: Sequence[tuple[int, Option]]) -> int:
    """The racks the servers of the options ``chosen`` (deployment index, option) need together, pooled as the plan pools them.

    What a search under ``hardware.max_racks`` holds each choice to beside those made before it (newuser80 item 1).
    Services whose replicas may share servers share them where that saves servers, as :func:`build_plan` pools them
    (:func:`_colocation_groups`, :func:`_pool_units`): counted each on servers of its own, a fleet of two 1-GPU
    services that one 8-GPU server holds needed two servers' racks (fix132), and the search under the limit never
    planned it.
    """
    return _racks_of(wl, _chosen_pools(wl, chosen))


def power_needed_w(wl: Workload, chosen: Sequence[tuple[int, Option]]) -> int:
    """The wall watts the servers of the options ``chosen`` draw together, pooled as :func:`racks_needed` pools them.

    What a search under ``hardware.site_power`` holds each choice to beside those made before it (newuser115: at
    60 req/s the cage example planned at 550 W a GPU and was refused at 500 W, the cost search's fleet over the site).
    """
    return sum(p.node.power_w * p.nodes for p in _chosen_pools(wl, chosen))


def _chosen_pools(wl: Workload, chosen: Sequence[tuple[int, Option]]) -> list[Pool]:
    """The servers of the options ``chosen`` pooled as :func:`build_plan` pools them, a chain's one option once."""
    seen: set[int] = set()
    unique: list[tuple[int, Option]] = []
    for index, opt in chosen:  # a chain's jobs hold one option: its servers once
        if id(opt) not in seen:
            seen.add(id(opt))
            unique.append((index, opt))
    return _unit_pools(_pool_units(wl, _colocation_groups(unique)))


def alone_over_limit(wl: Workload, opt: Option) -> str | None:
    """The limit of the whole fleet ``opt`` alone breaks, as its runner-up line says it (fuzz34 item 3); None: none.

    max_nodes, the monthly budget and the capex cap rule such an option out before it is ranked
    (:func:`~generator.planner.candidates.broken_limits`); racks are packed once the fleet is assembled, so a runner-up
    on more racks than ``max_racks`` was listed beside the choice, cheaper and with no word why (2 owned DGX H100 of
    10.2 kW each under max_racks 1 of 20 kW; the inventory-free finding said it, the runner-up did not). Its servers are
    packed as the fleet's are (:func:`~generator.planner.racks.pack_racks`: power, height, circuits).
    """
    hw = wl.hardware
    if hw.provider != "baremetal" or hw.max_racks is None:
        return None
    pools = _option_pools([opt])
    racks = _racks_of(wl, pools)
    if racks <= hw.max_racks:
        return None
    servers = sum(racked_nodes(pool) for pool in pools)
    return (
        f"hardware.max_racks: its {servers} server{'' if servers == 1 else 's'} alone need {racks} racks of "
        f"{hw.rack_power_kw:g} kW, {hw.max_racks} allowed"
    )


def _group_units(wl: Workload, members: list[tuple[int, Option]], per_node: int) -> list[tuple[list[tuple[int, Option]], int]]:
    """The pools (members, nodes) one co-location group makes.

    Members naming a pool (a deployment's ``pool`` field) form that pool, however few servers sharing saves; members
    naming none join the group's one named pool, or else share servers where that saves one, as before the field.
    """
    named: dict[str, list[tuple[int, Option]]] = {}
    for member in members:
        if (pool := wl.deployments[member[0]].pool) is not None:
            named.setdefault(pool, []).append(member)
    rest = [m for m in members if wl.deployments[m[0]].pool is None]
    if len(named) == 1 and rest:  # a service added to the servers of a named pool joins it (newuser23 item 3)
        named = {pool: list(members) for pool in named}
        rest = []
    units = [(group, _servers_apart_and_together(group, per_node)[1]) for group in named.values() if len(group) > 1]
    units += [(group, group[0][1].candidate.nodes) for group in named.values() if len(group) == 1]
    if rest:
        separate, merged = _servers_apart_and_together(rest, per_node)
        together = len(rest) > 1 and merged < separate
        units += [(rest, merged)] if together else [([m], m[1].candidate.nodes) for m in rest]
    return units


def _named_pool_reasons(
    wl: Workload, groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]]
) -> dict[tuple[int, ServerKey], str]:
    """Where a deployment's servers are chosen by its pool's name (``pool``), whom it shares them with, and why."""
    out: dict[tuple[int, ServerKey], str] = {}
    for (platform, gpu, per_node, kind), members in groups.items():
        if not kind.startswith("inference") or all(wl.deployments[i].pool is None for i, _ in members):
            continue  # a pool of its own (a training job, whole servers a replica) keeps the reason it has one
        for unit, nodes in _group_units(wl, members, per_node):
            pool = unit_pool(wl, unit)
            for index, _ in unit if pool is not None else ():
                others = [wl.deployments[i].name for i, _ in unit if i != index]
                out[(index, (platform, gpu, per_node))] = (
                    f"in pool {pool} with {', '.join(others)} on {nodes} {per_node}-GPU server(s): deployments naming a "
                    "pool, and those naming none on its servers, share them"
                    if others
                    else f"alone in pool {pool}: no other deployment that may share servers runs on its {per_node}-GPU "
                    f"{platform} ones"
                )
    return out


def _servers_apart_and_together(members: list[tuple[int, Option]], per_node: int) -> tuple[int, int]:
    """Servers the members of one co-location group take each in its own pool, and all in one."""
    separate = sum(o.candidate.nodes for _, o in members)
    merged = math.ceil(sum(o.gpus_used for _, o in members) / per_node)
    return separate, max([merged, *(spread_floor(o) for _, o in members)])  # a spread service keeps its nodes


def _colocation_reasons(
    wl: Workload, groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]]
) -> dict[tuple[int, ServerKey], str]:
    """Whether each deployment (each part of a split one, by its server kind) shares its servers with others, and why."""
    out: dict[tuple[int, ServerKey], str] = {}
    names = {i: wl.deployments[i].name for members in groups.values() for i, _ in members}
    for (platform, gpu, per_node, kind), members in groups.items():
        at = (platform, gpu, per_node)
        separate, merged = _servers_apart_and_together(members, per_node)
        for index, opt in members:
            others = [names[i] for i, _ in members if i != index]
            same_servers = sorted(
                names[i]
                for (p, g, n, _), group in groups.items()
                if (p, g, n) == (platform, gpu, per_node)
                for i, _ in group
                if i != index and not others
            )
            if others and merged < separate:
                out[(index, at)] = (
                    f"co-located with {', '.join(others)}: together they fit {merged} {per_node}-GPU server(s) "
                    f"instead of {separate} apart"
                )
            elif others:
                out[(index, at)] = (
                    f"not co-located with {', '.join(others)}: sharing servers would not save one ({merged} either way)"
                )
            elif not isinstance(opt.shape, ReplicaShape):  # a training job
                considered = f" (considered sharing with {', '.join(same_servers)} on the same servers)" if same_servers else ""
                out[(index, at)] = (
                    f"not co-located{considered}: a training job gets its own pool so its memory, interconnect and power "
                    "peaks cannot break an inference service's latency targets"
                )
            elif not kind.startswith("inference"):
                gpus = opt.replica_shape.par.gpus
                held = (
                    f"spans {gpus // per_node} of the {per_node}-GPU {platform} servers"
                    if gpus > per_node
                    else f"leaves {per_node % gpus} GPU(s) of a {per_node}-GPU {platform} server over"
                )
                out[(index, at)] = f"not co-located: each replica ({gpus} GPUs) {held}, so it takes whole servers"
            elif apart := sorted(
                names[i]
                for (p, g, n, k), group in groups.items()
                if (p, g, n) == at and k.startswith("inference") and k.endswith(SPOT_GROUP) != kind.endswith(SPOT_GROUP)
                for i, _ in group
                if not others
            ):
                how = "runs on spot capacity, they on demand" if kind.endswith(SPOT_GROUP) else "runs on demand, they on spot"
                out[(index, at)] = (
                    f"not co-located with {', '.join(apart)}: it {how} (capacity_type), and a pool is one node group of "
                    "one capacity type"
                )
            elif same_servers and kind.startswith(SHARED_GROUP):
                out[(index, at)] = (
                    f"not co-located with {', '.join(same_servers)}: its GPUs are shared between pods (gpu_sharing), "
                    "theirs are whole or shared otherwise, and a node's GPUs have one sharing config"
                )
            elif same_servers:
                out[(index, at)] = f"not co-located with {', '.join(same_servers)}: they run a different kind of work"
            else:
                out[(index, at)] = f"not co-located: no other deployment runs on {per_node}-GPU {platform} servers with {gpu}"
    return out
