"""The Markdown lines of a diff's pool replacements and GPU-sharing changes (and of a render's drift)."""

from __future__ import annotations

from typing import Any

from generator.errors import InputError, one_line
from generator.fleet_diff_cells import fmt_cell
from generator.fleet_diff_load import plan_from_spec
from generator.fleet_diff_pools import MIG_CONFIG_LABEL, ROOT_DISK_WORDS, Hardware, _same_hardware, pool_replacements
from generator.render.md_escape import md_code, md_text
from generator.units import dollars_text


def drift_replacement_lines(committed: dict[str, str], rendered: dict[str, str]) -> list[str]:
    """``render --check``: one plain line per pool the committed tree's ``spec.json`` has and the rendered one replaces.

    ``committed`` and ``rendered`` map a tree's relative paths to their text; each ``spec.json`` (``spec.json`` or
    ``<workload>/spec.json``) in both is compared. A committed one specgen cannot read adds no line (it may hold
    anything; the patch shows it); every value is printed as one line of plain text.
    """
    lines = []
    for rel in sorted(set(committed) & set(rendered)):
        if rel.rsplit("/", 1)[-1] != "spec.json" or committed[rel] == rendered[rel]:
            continue
        try:
            old, new = plan_from_spec(committed[rel], rel), plan_from_spec(rendered[rel], rel)
        except InputError:
            continue
        for entry in pool_replacements(old, new):
            lines.append(f"specgen: {one_line(rel)}: node pool replaced, not resized: {replacement_text(entry, plain=True)}")
    return lines


#: Pools a replacement names on each side (a spec.json may hold thousands; the JSON lists every one).
_MAX_NAMED_POOLS = 3


def _count(value: Any, noun: str, plain: bool) -> str:
    """A count and its noun, singular for one (fuzz21 item 8: "(1 nodes)", "1 servers leave")."""
    return f"{_cell(value, plain)} {noun}{'' if value == 1 else 's'}"


def _pools_text(pools: list[dict[str, Any]], plain: bool) -> str:
    """Pools with their nodes, the first :data:`_MAX_NAMED_POOLS` by name and a count of the rest."""
    text = ", ".join(f"{_name(p['pool'], plain)} ({_count(p['nodes'], 'node', plain)})" for p in pools[:_MAX_NAMED_POOLS])
    return text + (f" and {len(pools) - _MAX_NAMED_POOLS} more" if len(pools) > _MAX_NAMED_POOLS else "")


def _name(value: Any, plain: bool) -> str:
    """A name as a Markdown code span, or (``plain``) quoted on one line."""
    return f"'{one_line(str(value))}'" if plain else md_code(str(value))


def _cell(value: Any, plain: bool) -> str:
    """A value as :func:`fmt_cell` prints it, or (``plain``) as one line of text without Markdown escapes."""
    if plain and isinstance(value, str):
        return one_line(value)
    return fmt_cell(value)


def _hardware_text(kind: dict[str, Any], plain: bool, per_node: bool = False) -> str:
    """A GPU and, where known, its platform: ``h100-sxm5-80gb on aws-p5-48xlarge``; ``per_node``: ``8 x`` before it."""
    gpu = _cell(kind["gpu"], plain)
    if per_node and kind.get("gpus_per_node") is not None:
        gpu = f"{_cell(kind['gpus_per_node'], plain)} x {gpu}"
    return gpu if kind["platform"] is None else f"{gpu} on {_cell(kind['platform'], plain)}"


def replacement_text(entry: dict[str, Any], plain: bool = False) -> str:
    """One replacement as Markdown (``plain``: one line of plain text): pools, hardware, what it does to the nodes.

    Where the hardware changes, the hardware before and the services that move are said too.
    """
    removed, added = (_pools_text(entry[side], plain) for side in ("removed", "added"))
    moved = _moved(entry)
    # the GPUs a node where they change (the same GPU on the same platform reads as no change otherwise)
    was = entry.get("was") or {}
    per_node = moved and was.get("gpus_per_node") not in (None, entry.get("gpus_per_node"))
    hardware = _hardware_text(entry, plain, per_node)
    gone, come = ([p["pool"] for p in entry[side]] for side in ("removed", "added"))
    kept = [name for name in come if name in gone] if gone != come else []
    if moved:
        services = entry.get("moved", entry.get("deployments", []))
        names = ", ".join(_name(d, plain) for d in services[:_MAX_NAMED_POOLS])
        names += f" and {len(services) - _MAX_NAMED_POOLS} more" if len(services) > _MAX_NAMED_POOLS else ""
        moves = f"; {names} {'moves' if len(services) == 1 else 'move'}" if services else ""
        which = f"{', '.join(_name(k, plain) for k in kept)} " if kept else ""
        hardware += f" ({which}was {_hardware_text(entry['was'], plain, per_node)}{moves})"
    deleted, created = entry["nodes_deleted"], entry["nodes_created"]
    if entry["provider"] not in (None, "baremetal"):
        effect = f"applying it deletes {_count(deleted, 'node', plain)} and creates {_cell(created, plain)}"
    elif moved:  # other machines: the old servers leave the cluster, the new hardware joins it
        effect = (
            f"{_count(deleted, 'server', plain)} taken out and {_count(created, 'server', plain)} of the new hardware "
            "put in (Kubernetes nodes drained; the new ones provisioned and joined)"
        ) + _capex_text(entry.get("capex_usd"))
    else:
        effect = (
            f"{_count(deleted, 'server', plain)} {'leaves' if deleted == 1 else 'leave'} the pool and "
            f"{_cell(created, plain)} join the new one (Ansible group, node labels and Terraform keys renamed; "
            "Kubernetes nodes drained and rejoined)"
        )
    if isinstance(entry.get("gpu_sharing"), dict):  # a kept name and hardware, GPUs shared otherwise (GKE)
        return f"{added}, {hardware}: {_gke_sharing_text(entry['gpu_sharing'], plain)}: {effect}"
    if isinstance(entry.get("root_disk"), dict):  # the nodes' root disk changes too, or alone
        effect = f"{_root_disk_effect(entry['root_disk'], plain)}; {effect}"
    capacity = entry.get("capacity_type")
    if isinstance(capacity, dict) and not moved:  # a kept name and hardware, another capacity
        return (
            f"{added}, {hardware}: its nodes move from {_cell(capacity['old'], plain)} to {_cell(capacity['new'], plain)} "
            "capacity, which no node changes in place (a GKE spot node pool is another node pool, an AKS node pool's "
            "priority and an EKS node group's capacity type force new ones, a Karpenter NodePool's capacity-type "
            f"requirement is drift): {effect}"
        )
    if isinstance(entry.get("root_disk"), dict) and gone == come and not moved:  # a kept name, hardware, capacity
        return f"{added}, {hardware}: {effect}"
    if gone == come:  # a kept name, other hardware (and capacity)
        to = ""
        if isinstance(capacity, dict):
            to = f", its nodes on {_cell(capacity['new'], plain)} capacity (were {_cell(capacity['old'], plain)})"
        return f"{added} keeps its name on other hardware, {hardware}{to}: {effect}"
    return f"{removed} replaced by {added}, {hardware}: {effect}"


def _root_disk_effect(change: dict[str, Any], plain: bool) -> str:
    """Why a pool whose nodes' root disk changes has its nodes created again, as its provider applies it."""
    words, unit = ROOT_DISK_WORDS.get(str(change.get("provider")), ("root disk", "GB"))
    sizes = f"{_cell(change.get('old'), plain)} → {_cell(change.get('new'), plain)} {unit}"
    how = {
        "azure": "an AKS node pool cycles every node through its temporary_name_for_rotation pool, as many VMs again "
        "for a while, which needs quota for them; an AKSNodeClass's osDiskSizeGB change is Karpenter drift",
        "aws": "an EKS managed node group rolls every node onto its launch template's new version, and an "
        "EC2NodeClass's blockDeviceMappings change is Karpenter drift",
        "gcp": "a GKE node pool's boot disk (nodeConfig diskSizeGb) is immutable: its nodes are created again",
    }.get(str(change.get("provider")), "no node resizes it in place")
    return f"its nodes' {words} changes ({sizes}), which no node takes in place ({how})"


def _sharing_side(text: Any) -> str:
    return "whole GPUs" if text is None else str(text)


def _gke_sharing_text(change: dict[str, Any], plain: bool) -> str:
    """Why a GKE or AKS pool whose GPU sharing changes is replaced: its node pool's accelerator is immutable."""
    names = change.get("node_pool") or {}
    if change.get("provider") == "azure":  # AKS: gpu_instance forces a new node pool (azurerm), Karpenter has no MIG
        return (
            f"its GPU sharing changes ({_cell(_sharing_side(change.get('old')), plain)} → "
            f"{_cell(_sharing_side(change.get('new')), plain)}), which AKS cannot change in place (a node pool's "
            f"gpu_instance is fixed when it is created), so {_cell(names.get('old'), plain)} is replaced by "
            f"{_cell(names.get('new'), plain)}, created beside it (terraform/aks-node-pools.tf: create_before_destroy)"
        )
    return (
        f"its GPU sharing changes ({_cell(_sharing_side(change.get('old')), plain)} → "
        f"{_cell(_sharing_side(change.get('new')), plain)}), which GKE cannot change in place (guestAccelerator "
        f"is immutable), so node pool {_name(names.get('old'), plain)} is replaced by {_name(names.get('new'), plain)}, "
        "created beside it (under Terraform only where the resource has lifecycle create_before_destroy; "
        "otherwise the old one is deleted first)"
    )


def sharing_lines(changes: list[dict[str, Any]]) -> list[str]:
    """The warning on pools whose GPU sharing changes on Karpenter (drift) or in place; GKE's are replacements."""
    shown = [c for c in changes if c.get("effect") != "replaced"]
    if not shown:
        return []
    drift = [c for c in shown if c.get("effect") == "drift"]
    lines = []
    if drift:
        nodes = sum(c["nodes"] for c in drift if isinstance(c.get("nodes"), int))
        lines.append(f"**Karpenter drift: {fmt_cell(nodes)} node(s) replaced, one at a time, where GPU sharing changes.**")
    else:
        lines.append("**GPU sharing changes in place.**")
    lines.append("")
    for c in shown:
        pool = f"{md_code(str(c['pool']))} ({_count(c.get('nodes'), 'node', False)})"
        change = f"{md_text(_sharing_side(c.get('old')))} → {md_text(_sharing_side(c.get('new')))}"
        if c.get("effect") == "drift":
            effect = (
                f"its Karpenter NodePool's template label `{MIG_CONFIG_LABEL}` changes, which Karpenter treats as drift: "
                "it launches a replacement for every node of the pool and drains the old one once the new one is "
                "ready (the MIG manager partitions the new node's GPUs first), so every pod on the pool restarts"
            )
        elif c.get("mig"):
            effect = (
                "the GPU Operator's MIG manager repartitions every GPU of the pool's nodes in place, evicting every "
                "GPU pod there first: no node is replaced, but every pod on the pool restarts"
            )
        else:
            effect = (
                "the device plugin takes its new config on each node (its sharing replicas): no node is replaced; "
                "pods already running keep their GPU until they restart"
            )
        lines.append(f"- {pool}: GPU sharing {change}: {effect}")
    return [*lines, ""]


def _capex_text(capex: dict[str, Any] | None) -> str:
    """What a replacement onto servers of another build does to capex: those taken out are bought, not refunded."""
    if not capex:
        return ""
    text = (
        f"; the servers taken out were bought ({dollars_text(capex['taken_out'])}): the capex change counts them as saved, but "
        f"they are freed, not refunded (reuse or sell them), and the new ones are {dollars_text(capex['put_in'])} to buy"
    )
    if grow := capex.get("grow"):  # newuser80 item 7: growing on the servers bought, said before replacing them
        platform, most, share = (
            grow["platform"],
            grow["requests_per_s_per_replica_max"],
            grow["requests_per_s_per_replica_sustained"],
        )
        if grow["replicas_least"] == grow["replicas"]:
            need = f"at the old layout's {share:g} req/s a replica the new rate needs {grow['replicas']} replicas"
        else:  # review80 item 9: between a replica's most and its share of what the old ones sustain with the wait
            need = (
                f"the new rate needs {grow['replicas_least']} to {grow['replicas']} replicas ({grow['replicas_least']} "
                f"at the {most:g} req/s a replica of the old layout sustains at most, {grow['replicas']} at the "
                f"{share:g} each of its old replicas sustains with the wait for a place in the batch, which more "
                "replicas shorten)"
            )
        added = f"{grow['servers_added']} ({dollars_text(grow['usd_added'])} at their price)"
        if grow["servers_added_least"] != grow["servers_added"]:
            added = (
                f"{grow['servers_added_least']} to {grow['servers_added']} ({dollars_text(grow['usd_added_least'])} to "
                f"{dollars_text(grow['usd_added'])} at their price)"
            )
        text += (
            f"; growing on them instead: {need}, so keep the {grow['servers_kept']} {platform} and add {added}: list "
            f"them under hardware.inventory (platform: {platform}, count: {grow['servers_kept']}) and allow {platform} "
            "in hardware.platforms, so the plan uses them first and buys only the shortfall, then diff that plan"
        )
    return text


def _moved(entry: dict[str, Any]) -> bool:
    """Whether a replacement puts its pools on other hardware (not only other names)."""
    was = entry.get("was")
    return isinstance(was, dict) and not _same_hardware(_kind(was), _kind(entry))


def _kind(kind: dict[str, Any]) -> Hardware:
    """A replacement's hardware (or its ``was``) as :data:`Hardware`."""
    return (kind["provider"], kind["platform"], kind["gpu"], kind.get("gpus_per_node"))


def replacement_lines(replacements: list[dict[str, Any]]) -> list[str]:
    """The warning a diff opens with when node pools are replaced, not resized; no lines when none is."""
    if not replacements:
        return []
    deleted = sum(r["nodes_deleted"] for r in replacements)
    created = sum(r["nodes_created"] for r in replacements)
    # the pool: advice only where a name changed on the same hardware (fuzz21 item 8: a kept name was told to set it)
    # (and where a pool whose deployments all name it takes another removed pool's services: fuzz23 item 6)
    renamed = [
        r
        for r in replacements
        if (not _moved(r) or _takes_over(r)) and not {"gpu_sharing", "capacity_type", "root_disk"} & set(r)
    ]
    lines = [
        f"**Node pools replaced, not resized: {fmt_cell(deleted)} node(s) deleted and {fmt_cell(created)} created.**"
        + _pool_advice(renamed),
        "",
    ]
    lines += [f"- {replacement_text(r)}" for r in replacements]
    return [*lines, ""]


def _takes_over(entry: dict[str, Any]) -> bool:
    """Whether a named pool keeps its name on other servers and takes the services of another pool removed."""
    gone, come = ({p["pool"] for p in entry[side]} for side in ("removed", "added"))
    return bool(gone & come) and gone != come and not entry.get("unnamed", entry.get("deployments"))


#: What a pool's name is, said before the advice on keeping it.
_IDENTITY = " A pool's name is its identity (node pool, Ansible group, Terraform key, `specgen.dev/pool` label);"


def _pool_advice(renamed: list[dict[str, Any]]) -> str:
    """How to keep a renamed pool's name: set ``pool:`` where its deployments name none; else why it changed anyway.

    fuzz22 item 4: deployments that already set ``pool:`` were told to set it. A spec.json from before
    ``details.named_pool`` counts its deployments as naming none.
    """
    if not renamed:
        return ""
    unnamed = sorted({name for r in renamed for name in r.get("unnamed", r.get("deployments", []))})
    if unnamed:
        return f"{_IDENTITY} set `pool:` on the deployments to keep it when deployments join or leave."
    return (
        f"{_IDENTITY} these deployments set `pool:`, so the pool's own name changed, or its first deployment in the "
        "file changed (it runs on other servers, left, or another came before it): the servers of the pool's first "
        "deployment keep `<pool>_<gpu>`, its deployments on other servers add the platform to the name."
    )
