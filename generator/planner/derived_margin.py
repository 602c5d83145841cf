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
    """What the choice over its runners-up needs of a derived host price, said; None where none decides it.

    A runner-up's month is above the choice's by ``gap``; a host bought ``n`` times adds ``n / amortization_months`` of
    each dollar its price moves to its fleet's month. So the choice's derived host would have to cost
    ``gap x months / n`` more for that runner-up to match it (a runner-up's own, as much less); a host both fleets are
    priced from moves both months, and only the difference in servers counts. Each runner-up is priced as it is, and
    the least move of each host price (each way) over them is said, with the runner-up it lets win: review80 item 13,
    the first runner-up alone was weighed, where a later one buying fewer of the derived host (a larger gap over fewer
    servers' difference) wins at a smaller move. Said only where that move is less than the host price itself: a
    derivation off by more than its whole figure is not what decides the choice. w1 of newuser80: 3 x dell-xe8640 at
    $19,879/month against 2 x dgx-h100 at $20,566/month, a $687/month gap resting on dell-xe8640-host $77,000,
    derived from an 8-GPU quote.
    """
    ours = opt.candidate.usd_per_hour
    if ours is None:
        return None
    chosen = _derived_host(wl, opt)
    #: by (host record, whether it must cost more): the least move, the host, the runner-up it lets win, that one's gap
    least: dict[tuple[str, bool], tuple[float, PurchaseRecord, Option, float]] = {}
    for runner in rest:
        theirs = runner.candidate.usd_per_hour
        if theirs is None or (gap := (theirs - ours) * HOURS_PER_MONTH) <= 0:
            continue
        net: dict[str, tuple[PurchaseRecord, int]] = {}  # by host record: servers the choice buys on it less the runner-up's
        for found, sign in ((chosen, 1), (_derived_host(wl, runner), -1)):
            if found is not None:
                host, bought = found
                net[host.id] = (host, net.get(host.id, (host, 0))[1] + sign * bought)
        for host, servers in net.values():
            if servers == 0:  # one record prices both fleets alike: its price moves both months the same
                continue
            move = gap * consts.amortization_months / abs(servers)
            if move >= host.usd:  # a host price would have to double, or fall below nothing: the derivation does not decide
                continue
            key = (host.id, servers > 0)
            if key not in least or move < least[key][0]:
                least[key] = (move, host, runner, gap)
    if not least:
        return None
    month = ours * HOURS_PER_MONTH
    said = [
        f"{host.id} ${host.usd:,.0f} ({host.derived_from}): runner-up {runner.candidate.summary} "
        f"(${gap:,.0f}/month, {gap / month:.1%}, above the choice) would win were it ${move:,.0f} ({move / host.usd:.0%}) "
        f"{'more' if more else 'less'} a server"
        for (_, more), (move, host, runner, gap) in sorted(least.items(), key=lambda kv: (kv[1][0], kv[0]))
    ]
    which = "the least move over the runners-up" if len(rest) > 1 else "over the runner-up"
    return (
        "the choice's lead rests on a derived host price, which no quote for the chassis bounds: "
        + "; ".join(said)
        + f" ({which}); get the chassis quoted and give it under purchase_prices before buying"
    )
