"""How far a derived host price decides a service's choice over its runner-up (newuser80 item 4).

A host priced by derivation (``purchases.json`` ``derived_from``: another system's quote less parts) is not a quote
for the chassis it prices; where the choice of fleet rests on it, the plan says by how much that price would have to
move for the runner-up to win, so a buyer knows whether a real quote for the chassis could change the choice.
"""

from __future__ import annotations

from generator.catalog.records import PurchaseRecord
from generator.planner.option import Option
from generator.planner.tco import given_purchase, priced_from
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH
from generator.workload.models import Workload


def _derived_host(wl: Workload, opt: Option) -> tuple[PurchaseRecord, int] | None:
    """(the derived host record, servers bought on it) where ``opt``'s month rests on one; None otherwise.

    Only a service of one server kind, bought outright at the catalog's price (no ``purchase_prices`` of the
    workload's, no rented server) counts: there its month moves with the host price as capex over the amortisation.
    """
    c = opt.candidate
    bought = c.nodes - c.owned_nodes
    if (
        opt.parts
        or opt.sequence
        or c.run_hours is not None
        or c.busy_hours_per_month is not None
        or c.rented is not None
        or c.usd_per_hour is None
        or bought <= 0
        or opt.hardware.platform.provider != "baremetal"
        or given_purchase(wl, c.platform_id, c.gpu_id, c.gpus_per_node) is not None
    ):
        return None
    priced = priced_from(c.platform_id, max(opt.hardware.platform.gpu_counts), c.gpu_id, c.gpus_per_node)
    host = priced.host if priced.system is None and priced.legacy is None else None
    if host is None or host.derived_from is None:
        return None
    return host, bought


def derived_price_margin(wl: Workload, consts: Constants, opt: Option, rest: list[Option]) -> str | None:
    """What the choice over the first runner-up needs of a derived host price, said; None where none decides it.

    The choice's month is lower by ``gap``; a host bought ``n`` times adds ``n / amortization_months`` of each dollar
    its price moves to its fleet's month. So the choice's derived host would have to cost ``gap x months / n`` more for
    the runner-up to match it (the runner-up's, as much less); a host both fleets are priced from moves both months,
    and only the difference in servers counts. Said only where that move is less than the host price itself: a
    derivation off by more than its whole figure is not what decides the choice. w1 of newuser80: 3 x dell-xe8640
    at $19,879/month against 2 x dgx-h100 at $20,566/month, a $687/month gap resting on dell-xe8640-host $77,000,
    derived from an 8-GPU quote.
    """
    if not rest:
        return None
    runner = rest[0]
    ours, theirs = opt.candidate.usd_per_hour, runner.candidate.usd_per_hour
    if ours is None or theirs is None:
        return None
    gap = (theirs - ours) * HOURS_PER_MONTH
    if gap <= 0:
        return None
    net: dict[str, tuple[PurchaseRecord, int]] = {}  # by host record: servers the choice buys on it less the runner-up's
    for found, sign in ((_derived_host(wl, opt), 1), (_derived_host(wl, runner), -1)):
        if found is not None:
            host, bought = found
            net[host.id] = (host, net.get(host.id, (host, 0))[1] + sign * bought)
    said = []
    for host, servers in net.values():
        if servers == 0:  # one record prices both fleets alike: its price moves both months the same
            continue
        move = gap * consts.amortization_months / abs(servers)
        if move >= host.usd:  # a host price would have to double, or fall below nothing: the derivation does not decide
            continue
        said.append(
            f"{host.id} ${host.usd:,.0f} ({host.derived_from}): the runner-up would win were it ${move:,.0f} "
            f"({move / host.usd:.0%}) {'more' if servers > 0 else 'less'} a server"
        )
    if not said:
        return None
    month = ours * HOURS_PER_MONTH
    return (
        f"the choice's ${gap:,.0f}/month ({gap / month:.1%}) lead over runner-up {runner.candidate.summary} rests on a "
        "derived host price, which no quote for the chassis bounds: "
        + "; ".join(said)
        + "; get the chassis quoted and give it under purchase_prices before buying"
    )
