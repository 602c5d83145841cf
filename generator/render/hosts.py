"""Host names of a pool's nodes: the team's own (``hardware.inventory[].hosts``) where given, else placeholders."""

from __future__ import annotations

from generator.planner.plan import Plan, Pool
from generator.workload.models import InventoryHost, Workload


def placeholder_names(pool: Pool) -> list[str]:
    """``<pool>-NN`` with dashes (valid DNS labels), for nodes the inventory does not name."""
    base = pool.name.replace("_", "-")
    width = max(2, len(str(pool.nodes)))
    return [f"{base}-{i:0{width}d}" for i in range(1, pool.nodes + 1)]


def known_hosts(plan: Plan, workload: Workload) -> dict[str, list[InventoryHost]]:
    """Inventory hosts per pool: hosts of the groups on the pool's platform, handed out to pools in plan order."""
    free: dict[str, list[InventoryHost]] = {}
    for group in workload.hardware.inventory:
        free.setdefault(group.platform_id, []).extend(group.hosts)
    assigned: dict[str, list[InventoryHost]] = {}
    for pool in plan.pools:
        hosts = free.get(pool.node.platform_id, [])
        assigned[pool.name], free[pool.node.platform_id] = hosts[: pool.nodes], hosts[pool.nodes :]
    return assigned
