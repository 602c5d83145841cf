"""What a bought fleet's capex holds: the servers alone, and what else buying them costs that no figure has.

The catalog prices servers (a whole system, or a host and its GPUs); nothing else a rack of bought servers needs
has a sourced price in it. A rented node's price includes all of it, so a buy-vs-rent comparison that leaves it out
always favours buying (newuser39 item 6). The plan says what capex leaves out; it prices none of it.
"""

from __future__ import annotations

from generator.planner.plan import Finding, Pool

#: What capex leaves out, each something a rack of bought servers needs and the catalog has no sourced price for.
CAPEX_EXCLUDES = (
    "the top-of-rack and management switches",
    "optics and cables",
    "PDUs",
    "installation and remote hands",
    "support or warranty beyond what comes with each server",
    "spares",
    "the cost of capital (no discount rate)",
)


def capex_excludes_text() -> str:
    """The things capex leaves out, as one phrase."""
    return ", ".join(CAPEX_EXCLUDES[:-1]) + " or " + CAPEX_EXCLUDES[-1]


def capex_excludes_finding(pools: list[Pool]) -> Finding | None:
    """An info on a fleet that buys servers: its capex is theirs alone; None where nothing is bought."""
    bought = [p for p in pools if p.capex_usd]
    if not bought:
        return None
    capex = sum(p.capex_usd or 0.0 for p in bought)
    servers = sum(p.nodes - p.owned_nodes for p in bought)
    return Finding(
        "info",
        "capex-excludes",
        f"capex ${capex:,.0f} is the price of the {servers} server(s) bought and nothing else: it leaves out "
        f"{capex_excludes_text()}: the catalog has no sourced price for them, and a rented node's price includes them "
        "(with no discount rate the price paid up front is set against rent paid month by month at 0%); get them "
        "quoted before setting the purchase against a rent",
    )
