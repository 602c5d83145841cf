"""Matching two plans' pools: which new pool replaces which old one, and what changes with it (hardware, disk, GPU sharing)."""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from generator.fleet_diff_cells import _number, _plan_figure, two_places

#: What a pool's nodes are: (provider, platform, GPU, GPUs a node).
Hardware = tuple[Any, Any, Any, Any]


def _hardware(plan: dict[str, Any], pool: dict[str, Any]) -> Hardware:
    """A pool's (provider, platform, GPU, GPUs a node): what its nodes are, the server build a node is bought as.

    newuser33 item 7b: a pool going from 4 to 8 L40S a dell-xe7740 kept its name and read as resized (3 -> 1 nodes,
    "-$68,542 capex"), while MAAS allocates a node by its ``gpus-<n>`` tag (ForceNew): every node is replaced, and
    the servers taken out were bought. A spec.json without a platform matches on the GPU.
    """
    node = pool["node"]
    return (plan.get("provider") or node.get("provider"), node.get("platform_id"), node["gpu_id"], node.get("gpus"))


def _same_hardware(a: Hardware, b: Hardware) -> bool:
    """Whether two pools' (provider, platform, GPU, GPUs a node) agree wherever both spec.json files say."""
    return all(x == y for x, y in zip(a, b, strict=True) if x is not None and y is not None)


def pool_replacements(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Pools whose nodes are deleted and created again rather than resized (newuser23 item 3, newuser24 item 3).

    A pool's name is its identity wherever it goes (GKE node pool, node group, Ansible group, Terraform key,
    ``specgen.dev/pool`` label): a pool that disappears while a pool of the same hardware (provider, platform, GPU)
    appears is a replacement, and so is a pool that keeps its name on another platform, and a service that leaves a
    removed pool for an added one on other hardware (it moves: every node it runs on is deleted, others created).
    One entry per hardware kind or move (entries sharing a pool merged, so no node is counted twice): the pools
    removed and added, the nodes deleted and created, the hardware before and after (the kept name's, where a pool
    keeps it), the deployments that ran or run there and those of them that change hardware (``moved``). Pools rented
    per job (``per_job``) are left out.
    """
    # a pool rented per job runs no node between its runs: renaming or moving it deletes nothing (review22 item 9)
    old_pools = {p["name"]: p for p in old["pools"] if p.get("per_job") is not True}
    new_pools = {p["name"]: p for p in new["pools"] if p.get("per_job") is not True}
    removed, added = sorted(set(old_pools) - set(new_pools)), sorted(set(new_pools) - set(old_pools))
    kinds: dict[Hardware, tuple[list[str], list[str]]] = {}
    for name in removed:
        kinds.setdefault(_hardware(old, old_pools[name]), ([], []))[0].append(name)
    for name in added:
        kinds.setdefault(_hardware(new, new_pools[name]), ([], []))[1].append(name)
    groups = [([name], [name]) for name in sorted(set(old_pools) & set(new_pools))
              if not _same_hardware(_hardware(old, old_pools[name]), _hardware(new, new_pools[name]))]  # fmt: skip
    groups += [sides for sides in kinds.values() if sides[0] and sides[1]]
    used = {name for sides in groups for name in sides[0]}, {name for sides in groups for name in sides[1]}
    # a service may also leave a removed pool for a pool that keeps its name on other hardware, or leave that pool for
    # an added one (fuzz23 item 6: the named pool's first deployment left or came, its short name passed to other
    # servers): both pools' nodes go, and are created, in one entry
    kept = [name for sides in groups if sides[0] == sides[1] for name in sides[1]]
    gone = [n for n in removed if n not in used[0]] + kept
    moves = _service_moves(old, new, gone, [n for n in added if n not in used[1]] + kept)
    groups = _merged(groups + moves)
    out = [_replacement(old, new, [old_pools[n] for n in gone], [new_pools[n] for n in come]) for gone, come in groups]
    grouped = {name for gone, come in groups for name in (*gone, *come)}
    out += [
        _replacement(old, new, [old_pools[change["pool"]]], [new_pools[change["pool"]]]) | {"gpu_sharing": change}
        for change in sharing_changes(old, new)
        if change["effect"] == "replaced" and change["pool"] not in grouped and change["pool"] in old_pools
    ]
    grouped |= {str(entry["added"][0]["pool"]) for entry in out if "gpu_sharing" in entry}
    out += [  # (_replacement says the capacity a pool keeping its name moves between)
        _replacement(old, new, [old_pools[name]], [new_pools[name]]) for name in capacity_changes(old, new) if name not in grouped
    ]
    grouped |= {str(entry["added"][0]["pool"]) for entry in out if "capacity_type" in entry}
    disks = root_disk_changes(old, new)
    for entry in out:  # a pool replaced for another reason says its disk's change too
        same = {str(p["pool"]) for p in entry["removed"]} & {str(p["pool"]) for p in entry["added"]}
        if len(same) == 1 and (change := disks.get(next(iter(same)))) is not None:
            entry["root_disk"] = change
    out += [
        _replacement(old, new, [old_pools[name]], [new_pools[name]]) | {"root_disk": change}
        for name, change in disks.items()
        if name not in grouped
    ]
    return sorted(out, key=lambda entry: (str(entry["removed"][0]["pool"]), str(entry["added"][0]["pool"])))


#: What a pool's capacity reads as in a diff (``capacity_type`` left out of a ``spec.json`` is on demand).
ON_DEMAND = "on-demand"


def capacity_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Pools that keep their name and hardware while their nodes move between on-demand and spot capacity.

    newuser56 item 1: on-demand -> spot read "No change to the fleet." Every node of such a pool is created again:
    a GKE node pool of spot VMs is another node pool (``<pool>-spot``), an AKS node pool's ``priority`` and an EKS
    managed node group's ``capacity_type`` force a new one, and a Karpenter NodePool's ``karpenter.sh/capacity-type``
    requirement is drift, which replaces each node.

    Pools rented per job (``per_job``) are left out, as :func:`pool_replacements` leaves them (newuser70 item 2: a
    training pool moved to spot raised a KeyError there): no node of theirs rests between runs, so none is created
    again; the pool's row still says its move (``on-demand → spot``, :func:`_pool_status`).
    """
    old_pools = {p["name"]: p for p in old["pools"] if p.get("per_job") is not True}
    new_pools = {p["name"]: p for p in new["pools"] if p.get("per_job") is not True}
    out = {}
    for name in sorted(set(old_pools) & set(new_pools)):
        a, b = old_pools[name], new_pools[name]
        was, now = (str(p.get("capacity_type") or ON_DEMAND) for p in (a, b))
        if was != now and _same_hardware(_hardware(old, a), _hardware(new, b)):
            out[str(name)] = {"old": was, "new": now}
    return out


#: A cloud node's root disk as each provider names it, and the unit ``root_disk_size`` is in.
ROOT_DISK_WORDS = {"aws": ("root volume", "GiB"), "azure": ("OS disk", "GiB"), "gcp": ("boot disk", "GB")}  # Azure's "GB" is GiB


def root_disk_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Pools that keep their name and hardware while their nodes' root / OS disk (``root_disk_size``) changes.

    newuser74 item 12: a model swap resized an AKS pool's OS disk (223 -> 140 GB) and the diff said "changed (what
    runs on it)". No provider resizes a running node's root disk: azurerm cycles an AKS node pool's nodes through its
    ``temporary_name_for_rotation`` pool (a new ``os_disk_size_gb``), an EKS managed node group rolls every node onto
    its launch template's new version (``block_device_mappings``), a GKE node pool's ``nodeConfig`` (``diskSizeGb``)
    is immutable, and a Karpenter EC2NodeClass's ``blockDeviceMappings`` or AKSNodeClass's ``osDiskSizeGB`` is drift:
    every node is created again. A spec.json from before the field (no ``root_disk_size``) says nothing; pools rented
    per job are left out, as :func:`capacity_changes` leaves them.
    """
    old_pools = {p["name"]: p for p in old["pools"] if p.get("per_job") is not True}
    new_pools = {p["name"]: p for p in new["pools"] if p.get("per_job") is not True}
    out = {}
    for name in sorted(set(old_pools) & set(new_pools)):
        a, b = old_pools[name], new_pools[name]
        was, now = _number(a.get("root_disk_size")), _number(b.get("root_disk_size"))
        provider = _hardware(new, b)[0]
        if was is None or now is None or was == now or provider not in ROOT_DISK_WORDS:
            continue
        out[str(name)] = {"provider": provider, "old": a["root_disk_size"], "new": b["root_disk_size"]}
    return out


#: Providers whose GPU pools deploy as Karpenter NodePools (``kubernetes/<provider>/``), as the renderer's.
KARPENTER_PROVIDERS = ("aws", "azure")
#: The pool label the GPU Operator's MIG manager partitions a node's GPUs by (``generator.render.gpu_sharing``).
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
#: The label that keeps the MIG manager off an AKS node pool whose GPUs AKS partitions (``generator.render.gpu_sharing``).
MIG_MANAGER_DEPLOY_LABEL = "nvidia.com/gpu.deploy.mig-manager"


def _sharing(pool: dict[str, Any]) -> str | None:
    value = pool.get("gpu_sharing")
    return None if value is None else str(value)


def _mig_label(pool: dict[str, Any]) -> Any:
    """A pool's ``nvidia.com/mig.config`` label value (None without one), from its ``labels`` pairs."""
    labels = pool.get("labels")
    pairs = [pair for pair in labels if isinstance(pair, list) and len(pair) == 2] if isinstance(labels, list) else []
    return next((value for key, value in pairs if key == MIG_CONFIG_LABEL), None)


def _aks_native(pool: dict[str, Any]) -> bool:
    """Whether a pool is an AKS node pool whose GPUs AKS partitions (``generator.render.gpu_sharing.aks_mig_pools``)."""
    labels = pool.get("labels")
    pairs = [pair for pair in labels if isinstance(pair, list) and len(pair) == 2] if isinstance(labels, list) else []
    return any(key == MIG_MANAGER_DEPLOY_LABEL and value == "false" for key, value in pairs)


def _aks_pool_name(pool: dict[str, Any], sharing: str | None) -> str:
    """What runs a pool's nodes on Azure: its AKS node pool (MIG: that alone), else its Karpenter NodePool or that."""
    from generator.render.aks_terraform import aks_node_pool_name
    from generator.workload.aks_mig import aks_gpu_instance

    name = str(pool["name"])
    profile = (sharing or "").removeprefix("mig ")
    value = aks_gpu_instance(str(pool["node"]["gpu_id"]), profile) if _aks_native(pool) else None
    spot = pool.get("capacity_type") == "spot"
    if value:
        return f"AKS node pool {aks_node_pool_name(name, value, spot)}"
    # a spec.json does not record its outputs: the AKS node pool exists only where terraform was rendered (review29 13)
    return (
        f"Karpenter NodePool {name.replace('_', '-')}, or AKS node pool {aks_node_pool_name(name, None, spot)} where "
        "terraform is rendered"
    )


def sharing_changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Pools that keep their name and hardware while their GPU sharing changes, and what applying that does.

    newuser40 item 4: MIG 1g.10gb -> 3g.40gb, or MIG -> time-slicing, read "No change to the fleet". ``effect``:

    - ``replaced`` on GKE: a node pool's ``guestAccelerator`` (``gpuPartitionSize``, ``gpuSharingConfig``) cannot
      change in place (Config Connector: Immutable; Terraform replaces the resource), so the sharing is part of the
      node pool's name (``node_pool``: old and new) and a new node pool is created beside the old one;
    - ``replaced`` on Azure where either side is an AKS node pool whose GPUs AKS partitions (``gpu_instance``, fixed
      at creation; its name holds the profile): a new node pool, or a Karpenter NodePool, is created beside the old;
    - ``drift`` on AWS and Azure where the pool's ``nvidia.com/mig.config`` label changes: it is a label of the
      Karpenter NodePool's template, so Karpenter replaces every node of the pool (and a MIG repartition would evict
      every GPU pod anyway);
    - ``in place`` otherwise: the device plugin's config changes on the nodes as they are (time-slicing or MPS
      replicas), or, on servers, the MIG manager repartitions their GPUs (``mig``: whether it does).
    """
    old_pools = {p["name"]: p for p in old["pools"]}
    new_pools = {p["name"]: p for p in new["pools"]}
    out = []
    for name in sorted(set(old_pools) & set(new_pools)):
        a, b = old_pools[name], new_pools[name]
        was, now = _sharing(a), _sharing(b)
        relabelled = _mig_label(a) != _mig_label(b)
        if (was == now and not relabelled) or not _same_hardware(_hardware(old, a), _hardware(new, b)):
            continue
        provider = _hardware(new, b)[0]
        mig = relabelled or any(text is not None and text.startswith("mig") for text in (was, now))
        entry: dict[str, Any] = {"pool": name, "provider": provider, "nodes": a["nodes"], "old": was, "new": now}
        if provider == "gcp":
            from generator.render.gke import node_pool_name

            sides = {
                "old": node_pool_name(name, was, a.get("capacity_type") == "spot"),
                "new": node_pool_name(name, now, b.get("capacity_type") == "spot"),
            }
            entry |= {"effect": "replaced", "node_pool": sides}
        elif provider == "azure" and (_aks_native(a) or _aks_native(b)):  # an AKS node pool's gpu_instance is fixed
            sides = {"old": _aks_pool_name(a, was), "new": _aks_pool_name(b, now)}
            entry |= {"effect": "replaced", "node_pool": sides}
        elif provider in KARPENTER_PROVIDERS and relabelled:
            entry |= {"effect": "drift", "mig": True}
        else:
            entry |= {"effect": "in place", "mig": mig}
        out.append(entry)
    return out


def _merged(groups: list[tuple[list[str], list[str]]]) -> list[tuple[list[str], list[str]]]:
    """The (removed, added) groups, those with a pool in common merged into one: its nodes are counted once."""
    out: list[tuple[set[str], set[str]]] = []  # no two share a pool
    for gone, come in groups:
        old_side, new_side = set(gone), set(come)
        for other in [g for g in out if g[0] & old_side or g[1] & new_side]:
            out.remove(other)
            old_side, new_side = old_side | other[0], new_side | other[1]
        out.append((old_side, new_side))
    return [(sorted(gone), sorted(come)) for gone, come in out]


def _deployment_pools(plan: dict[str, Any]) -> dict[str, set[str]]:
    """Per deployment name: the pools it runs in (both parts' of a split one)."""
    return {str(d["name"]): {str(part["pool"]) for part in d.get("split") or [d]} for d in plan["deployments"]}


def _service_moves(
    old: dict[str, Any], new: dict[str, Any], removed: list[str], added: list[str]
) -> list[tuple[list[str], list[str]]]:
    """(removed pools, added pools) a service moves between: it ran in the removed ones and runs in the added ones.

    Pools linked by any one service form one group (two services moving out of one pool into two count once).
    """
    before, after = _deployment_pools(old), _deployment_pools(new)
    group_of: dict[tuple[str, str], int] = {}  # ("old"|"new", pool) -> group id
    groups: list[tuple[set[str], set[str]]] = []
    for name in sorted(set(before) & set(after)):
        gone = sorted(before[name] & set(removed))
        come = sorted(after[name] & set(added))
        if not gone or not come:
            continue
        members = [("old", p) for p in gone] + [("new", p) for p in come]
        ids = sorted({group_of[m] for m in members if m in group_of})
        target = ids[0] if ids else len(groups)
        if not ids:
            groups.append((set(), set()))
        for other in ids[1:]:  # a service joining two groups merges them
            groups[target][0].update(groups[other][0])
            groups[target][1].update(groups[other][1])
            groups[other] = (set(), set())
        groups[target][0].update(gone)
        groups[target][1].update(come)
        for side, pools in (("old", groups[target][0]), ("new", groups[target][1])):
            group_of.update({(side, p): target for p in pools})
    return [(sorted(gone), sorted(come)) for gone, come in groups if gone and come]


def _replacement(
    old: dict[str, Any], new: dict[str, Any], removed: list[dict[str, Any]], added: list[dict[str, Any]]
) -> dict[str, Any]:
    """A replacement's entry: the hardware after and before, the pools and nodes removed and added, the services.

    The services are the deployments that ran in the removed pools or run in the added ones.
    """
    gone, come = {str(p["name"]) for p in removed}, {str(p["name"]) for p in added}
    # the hardware after and before is that of the pool keeping its name where one does (fuzz23 item 6)
    provider, platform, gpu, per_node = _hardware(new, next((p for p in added if p["name"] in gone), added[0]))
    was = _hardware(old, next((p for p in removed if p["name"] in come), removed[0]))
    before, after = _deployment_pools(old), _deployment_pools(new)
    services = {name for name, pools in before.items() if pools & gone}
    services |= {name for name, pools in after.items() if pools & come}
    named = _named_pools(old) | _named_pools(new)
    was_on = {str(p["name"]): _hardware(old, p) for p in removed}
    now_on = {str(p["name"]): _hardware(new, p) for p in added}
    # who moves: a service that ran in a removed pool and runs in an added one on other hardware (not one that left
    # the workload or came, nor one that runs on the same servers under another pool name: fuzz23 item 6)
    moved = {
        name
        for name, pools in before.items()
        if any(not _same_hardware(was_on[a], now_on[b]) for a in pools & gone for b in after.get(name, set()) & come)
    }
    entry = {
        "provider": provider,
        "platform": platform,
        "gpu": gpu,
        "gpus_per_node": per_node,
        "was": dict(zip(("provider", "platform", "gpu", "gpus_per_node"), was, strict=True)),
        "removed": [{"pool": p["name"], "nodes": p["nodes"]} for p in removed],
        "added": [{"pool": p["name"], "nodes": p["nodes"]} for p in added],
        "nodes_deleted": sum(p["nodes"] for p in removed),
        "nodes_created": sum(p["nodes"] for p in added),
        "deployments": sorted(services),
        "moved": sorted(moved),
        # those whose workload names no pool (``pool``): the diff's advice to set one is for them (fuzz22 item 4)
        "unnamed": sorted(services - named),
    }
    # servers of another build are bought: those taken out were paid for, and the capex change does not refund them
    # (newuser33 item 7b: "-$68,542 capex" for three 4-GPU servers bought and one 8-GPU server to buy)
    taken_out, put_in = (sum(_plan_figure(p.get("capex_usd")) or 0.0 for p in side) for side in (removed, added))
    if taken_out > 0 and not _same_hardware(was, (provider, platform, gpu, per_node)):
        entry["capex_usd"] = {"taken_out": two_places(taken_out), "put_in": two_places(put_in)}
        if grow := _grow_on_bought(old, new, removed, sorted(services)):
            entry["capex_usd"]["grow"] = grow
    # the capacity a pool keeping its name moves between (review37 item 7: on other hardware too, unsaid)
    capacity = {
        side: str(p.get("capacity_type") or ON_DEMAND)
        for side, ps in (("old", removed), ("new", added))
        for p in ps
        if p["name"] in gone & come
    }
    if len(capacity) == 2 and capacity["old"] != capacity["new"]:
        entry["capacity_type"] = capacity
    return entry


def _named_pools(plan: dict[str, Any]) -> set[str]:
    """The deployments of a plan whose workload names their pool (``pool``, as ``details.named_pool``)."""
    return {
        str(d["name"])
        for d in plan["deployments"]
        if isinstance(d.get("details"), dict) and isinstance(d["details"].get("named_pool"), str)
    }


def _grow_on_bought(
    old: dict[str, Any], new: dict[str, Any], removed: list[dict[str, Any]], services: list[str]
) -> dict[str, Any] | None:
    """Servers of the old build to add to those bought, where that alone meets a new rate; None where it cannot be said.

    newuser80 item 7: a rate increase (20 -> 30 req/s) replaced 3 bought XE8640s ($591,000) by 2 new 8-GPU servers
    ($714,000) with no word of growing on top of them. Said only for one service in one removed pool whose inputs
    differ in the rate alone (same model and every other input), every added server at the old servers' price each.

    The replicas the new rate needs lie between two counts the old plan gives (review80 item 9: the most a replica
    sustains alone was taken, where the diff's capacity share is the replicas' ``requests_per_s_sustained``, the wait
    for a place in the batch included). At least ``rate / requests_per_s_per_replica_max`` (no replica sustains more
    than that); at most ``rate / (sustained / replicas)``, a replica's share of what the old replicas sustain together:
    more replicas at the same load each wait less for a place (Erlang C), so each sustains at least that share. The
    plan of the advice (the inventory listed) counts the wait at the new count, and finds the figure in that range
    (``requests_per_s_sustained`` absent, a ``spec.json`` written before it: the most a replica sustains, both ends).
    Whole replicas go to a server (``floor(gpus_per_node / (tp x pp))`` each; a replica wider than a server takes
    ``ceil(tp x pp / gpus_per_node)`` of them): ``ceil(replicas x tp x pp / gpus_per_node)`` split a replica of TP2
    PP3 over two 8-GPU servers.
    """
    if len(removed) != 1 or len(services) != 1:
        return None
    pool = removed[0]
    by_name = [{str(d.get("name")): d for d in plan.get("deployments") or [] if isinstance(d, dict)} for plan in (old, new)]
    before, after = (names.get(services[0]) for names in by_name)
    if before is None or after is None or before.get("model_id") != after.get("model_id"):
        return None
    if before.get("pool") != pool.get("name") or (pool.get("owned_nodes") or 0) > 0:
        return None
    ins = [d.get("details", {}).get("inputs") for d in (before, after)]
    if not all(isinstance(i, dict) for i in ins):
        return None
    rate_key = "requests_per_second"
    if {k: v for k, v in ins[0].items() if k != rate_key} != {k: v for k, v in ins[1].items() if k != rate_key}:
        return None
    details = before["details"]
    most = _plan_figure(details.get("requests_per_s_per_replica_max"))
    rate, was_rate = _plan_figure(ins[1].get(rate_key)), _plan_figure(ins[0].get(rate_key))
    node = pool.get("node") or {}
    capex = _plan_figure(pool.get("capex_usd"))
    counts = [n for n in (before.get("tp"), before.get("pp"), node.get("gpus"), pool.get("nodes")) if _whole(n)]
    if not most or not rate or not was_rate or rate <= was_rate or not capex or len(counts) != 4:
        return None
    tp, pp, per_node, nodes = counts
    had, sustained = before.get("replicas"), _plan_figure(details.get("requests_per_s_sustained"))
    # a replica's of the old fleet's, unrounded for the counts (review81 item 10: 5.0 / 3 taken as 1.667 counted 12
    # replicas for 20.004 req/s where 20.004 / 1.66667 = 12.0024 needs 13); rounded only where said
    share = sustained / had if sustained and _whole(had) else most
    width = tp * pp  # a replica's GPUs: whole replicas to a server, or whole servers to a replica

    def servers(replicas: int) -> int:
        if width <= per_node:
            return math.ceil(replicas / (per_node // width))
        return replicas * math.ceil(width / per_node)

    least, surely = (math.ceil(rate / each - 1e-9) for each in (most, min(share, most)))
    if servers(surely) <= nodes:
        return None
    add = [max(0, servers(n) - nodes) for n in (least, surely)]
    return {
        "platform": node.get("platform_id"),
        "replicas": surely,  # enough with the wait counted as the old fleet's
        "replicas_least": least,  # none fewer: each at the most a replica sustains
        "requests_per_s_per_replica_max": most,
        "requests_per_s_per_replica_sustained": round(min(share, most), 3),
        "servers_kept": nodes,
        "servers_added": add[1],
        "servers_added_least": add[0],
        "usd_added": two_places(capex / nodes * add[1]),
        "usd_added_least": two_places(capex / nodes * add[0]),
    }


def _whole(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is a count a plan holds (a positive int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def replaces_in_place(diff: dict[str, Any]) -> bool:
    """Whether a diff's pools are compared in place: no move to another provider, nor to a region named on both sides."""
    return "provider_change" not in diff and not _named_both(diff.get("region_change"))


def _named_both(change: dict[str, str | None] | None) -> bool:
    """Whether a change of place names both sides (a region unset on one may be the same region)."""
    return change is not None and None not in change.values()
