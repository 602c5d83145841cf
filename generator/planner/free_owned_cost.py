"""What owned servers left free cost, said in the ``inventory-free`` finding (newuser84 item 4).

With ``hardware.buy: false`` two owned XE9680 in colocation, one used, read "$2,783/month" beside "1 of 2 owned ...
left free: gpu-b02": the free server's $1,877 a month of colocation is paid whether it runs or not, and the plan's
month leaves it out (every fleet owning it pays the same). ``owned-idle-while-bought`` says it where the plan also
buys more of the kind; the ``inventory-free`` finding of a kind says it otherwise. Added last, after the passes that
rewrite that finding by its message (:mod:`generator.planner.left_free`, ``_capped_said``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.planner.inventory import free_cost_clause, owned_idle_usd

if TYPE_CHECKING:
    from generator.planner.inventory import ServerKey
    from generator.planner.plan import Plan
    from generator.sizing.constants import Constants
    from generator.workload.models import Workload


def free_owned_cost_said(wl: Workload, consts: Constants, plan: Plan) -> Plan:
    """``plan`` with each kind's ``inventory-free`` finding saying what its free servers cost a month, where they do."""
    clauses: dict[str, str] = {}
    for entry in plan.totals.get("inventory", ()):
        if not entry["free"]:
            continue
        key: ServerKey = (entry["platform"], entry["gpu"], entry["gpus_per_server"])
        head = f" owned {key[0]} server(s) ({key[2]} x {key[1]})"
        if any(f.code == "owned-idle-while-bought" and head in f.message for f in plan.findings):
            continue  # said there
        clause = free_cost_clause(wl, key, owned_idle_usd(wl, key, entry["free"], lambda: consts))
        if clause:  # after the hosts and why they are free: "; the free ones' colocation, ..."
            clauses[head + " left free"] = "; " + clause.removeprefix(": ")
    if not clauses:
        return plan
    findings = tuple(
        f._replace(message=f.message + next(c for h, c in clauses.items() if h in f.message))
        if f.code == "inventory-free" and any(h in f.message for h in clauses)
        else f
        for f in plan.findings
    )
    return plan._replace(findings=findings)
