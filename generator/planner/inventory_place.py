"""Placing a fleet's pools on the owned servers left free, and the owned GPUs left idle while others are bought."""

from __future__ import annotations

from typing import Any

from generator.planner.blocked import RACK_HEIGHT, RACK_POWER, Blocked
from generator.planner.inventory import ServerKey, free_cost_clause, owned_groups, owned_idle_usd
from generator.planner.options import allowed_hardware
from generator.planner.owned_build import build_assumed, owned_build_findings
from generator.planner.plan import Finding, Pool
from generator.planner.ruled_out import left_free_message, owned_build, why_left_free
from generator.planner.wall_circuit import bought_on_outlet, wall_circuit_advice
from generator.sizing.constants import Constants
from generator.workload.models import Workload


def _owned_idle_while_bought(
    wl: Workload, key: tuple[str, str, int], entry: dict[str, Any], pools: list[Pool], consts: Constants
) -> list[Finding]:
    """A warning where owned servers of a kind are left free while the fleet buys more of that kind (fuzz34 item 4).

    What the free ones cost whether they run or not (their ``prices:`` rate, else their colocation where racked), which
    the fleets were compared with (:func:`~generator.planner.idle_owned_usd_per_month`) but the plan's monthly figure
    leaves out, is said too.
    """
    bought = [p for p in pools if (p.node.platform_id, p.node.gpu_id, p.node.gpus) == key and p.nodes > p.owned_nodes]
    if not bought:
        return []
    count = sum(p.nodes - p.owned_nodes for p in bought)
    up_front = [p.capex_usd for p in bought if p.capex_usd is not None]  # a pool's capex is its bought servers'
    capex = f" (${sum(up_front):,.0f} capex)" if len(up_front) == len(bought) else ""
    hosts = f" ({', '.join(entry['free_hosts'])})" if entry["free_hosts"] else ""
    text = (
        f"{entry['free']} of {entry['owned']} owned {key[0]} server(s) ({key[2]} x {key[1]}){hosts} are left free "
        f"while the plan buys {count} more {key[0]}{capex} in pool(s) {', '.join(p.name for p in bought)}"
    )
    text += free_cost_clause(wl, key, owned_idle_usd(wl, key, entry["free"], lambda: consts))
    text += "; check why the inventory-free finding says they are not used, or set hardware.buy: false"
    return [Finding("warning", "owned-idle-while-bought", text, "hardware.inventory")]


def _owned_entry(wl: Workload, platform_id: str) -> str:
    """The first ``hardware.inventory[N]`` entry of a server kind, where its finding stands.

    newuser112: a box too big for its outlet was said at ``hardware.inventory``, the list, not the entry that states it.
    """
    at = next((j for j, g in enumerate(wl.hardware.inventory) if g.platform_id == platform_id), None)
    return f"hardware.inventory[{at}]" if at is not None else "hardware.inventory"


def _place_on_inventory(
    wl: Workload,
    pools: list[Pool],
    findings: list[Finding],
    ruled_out: dict[str, list[Blocked]],
    feasible_on: dict[ServerKey, set[str]],
    consts: Constants,
) -> tuple[list[Pool], list[dict[str, Any]]]:
    """Owned host names onto the pools that use owned servers; what each owned group holds, what stays free and why.

    ``feasible_on``: by server kind, the deployments that had a feasible layout on it (the fleet chose another).
    """
    out = list(pools)
    report = []
    not_bought = {(h.platform.id, h.gpu.id): h.not_bought for h in allowed_hardware(wl)}
    order = {d.name: i for i, d in enumerate(wl.deployments)}
    # the reasons by server kind, each deployment's in the order found, formed once, not once a group (perf12: 100
    # owned kinds walked every reason of every deployment for each, 17.6 million times in one plan)
    on_kind: dict[tuple[str, str], dict[str, list[Blocked]]] = {}
    for name, found in ruled_out.items():
        for b in found:
            on_kind.setdefault((b.gpu_id, b.platform_id), {}).setdefault(name, []).append(b)
    for group in owned_groups(wl):
        hosts = list(group.hosts)  # Linux host names: a rack-scale system's are its compute trays, in system order
        per_system = group.platform.hosts
        used = 0
        users: set[str] = set()  # deployments on this group's servers
        # hosts go to the pools in the order of their deployments in the workload, which a deployment added after them
        # does not move (newuser66 item 7: a re-index job added at the end took r760-01 from the LoRA job's pool)
        for k in sorted(range(len(out)), key=lambda k: min(order.get(d, len(order)) for d in out[k].deployments or ("",))):
            pool = out[k]
            if (pool.node.platform_id, pool.node.gpu_id, pool.node.gpus) != group.key or not pool.owned_nodes:
                continue
            take = min(pool.owned_nodes, group.count - used)
            owned_hosts = tuple(hosts[used * per_system : (used + take) * per_system])
            out[k] = pool._replace(owned_nodes=take, owned_hosts=owned_hosts)
            used += take
            if take:
                users.update(pool.deployments)
        free = group.count - used
        free_hosts = hosts[used * per_system :]
        report.append(
            {
                "platform": group.platform.id,
                "gpu": group.gpu.id,
                "gpus_per_server": group.gpus_per_node,
                "owned": group.count,
                "used": used,
                "free": free,
                "free_hosts": free_hosts,
                "not_bought": not_bought.get(group.key[:2]),
            }
        )
        reason = not_bought.get(group.key[:2])
        if reason and not group.platform.custom and wl.hardware.buy:  # buy: false says it of every owned kind
            findings.append(
                Finding(
                    "info",
                    "inventory-not-bought",
                    f"owned {group.platform.id} ({group.gpus_per_node} x {group.gpu.id}): {used} of {group.count} used; "
                    f"owned servers are always usable, but {reason}",
                    "hardware.inventory",
                )
            )
        if free:
            feasible = feasible_on.get(group.key, set())
            here = on_kind.get((group.gpu.id, group.platform.id), {})
            why = why_left_free(group.gpu.id, group.platform.id, here, users, feasible, build=owned_build(report[-1]))
            # newuser64 item 10: owned servers the site's racks cannot power or hold are a facilities problem, not a note
            unracked = any(b.code in (RACK_POWER, RACK_HEIGHT) for found in here.values() for b in found)
            said = left_free_message(report[-1], why)
            findings.append(Finding("warning" if unracked else "info", "inventory-free", said, "hardware.inventory"))
            findings += _owned_idle_while_bought(wl, group.key, report[-1], out, consts)
    out = [pool._replace(build_assumed=build_assumed(wl, pool)) for pool in out]
    findings += owned_build_findings(wl, out)
    for pool in out:
        bought = pool.nodes - pool.owned_nodes
        circuit = wl.hardware.wall_circuit
        outlet = wall_circuit_advice(f"pool {pool.name}: the owned {pool.node.platform_id}", pool.node.power_w, circuit)
        if pool.owned_nodes and pool.node.kind == "workstation" and outlet is not None:
            # an owned workstation stays in its office or home (tco.in_colocation): a wall outlet feeds it (newuser27 item 8)
            findings.append(Finding("warning", "wall-circuit", outlet, _owned_entry(wl, pool.node.platform_id)))
        home = bought_on_outlet(circuit is not None, consts.colocation_usd_per_kw_month)
        if bought and not pool.owned_nodes and pool.rented is None and pool.node.kind == "workstation" and home:
            on_outlet = wall_circuit_advice(f"pool {pool.name}: the {pool.node.platform_id} {home},", pool.node.power_w, circuit)
            if on_outlet is not None:
                where = "hardware.wall_circuit" if circuit is not None else "constants.colocation_usd_per_kw_month"
                findings.append(Finding("warning", "wall-circuit", on_outlet, where))
        if pool.owned_nodes and bought:
            findings.append(
                Finding(
                    "info",
                    "inventory-shortfall",
                    f"pool {pool.name}: {pool.owned_nodes} owned server(s) used, {bought} more to buy",
                    "hardware.inventory",
                )
            )
    return out, report
