"""How old the catalog's purchase prices a plan buys at are (newuser61 item 7).

The catalog dates every purchase price (``purchases.json`` ``as_of``: the day it was published or read), and a plan
prints the dates inside each pool's cost basis; nothing said that a DGX H100 bought in December 2026 was priced at
its May 2023 figure. specgen reads no clock (a plan is the same bytes whenever it is made), so the reference a price's
age is counted from is the catalog's own newest purchase-price date: the day the catalog's prices were last looked at.
"""

from __future__ import annotations

from datetime import date
from functools import cache

from generator import catalog
from generator.catalog.records import PriceRecord, PurchaseRecord
from generator.planner.plan import Finding, Pool
from generator.planner.tco import given_purchase, priced_from
from generator.workload.capacity_type import spot_key
from generator.workload.models import Workload

#: A purchase price dated more than this many days before the reference is said. NVIDIA moved its data-centre GPUs to
#: a new generation every year at Computex 2024 ("a new AI chip generation every year, a notable increase from the
#: previous two-year cycle": Blackwell Ultra in 2025, Rubin in 2026, Rubin Ultra in 2027;
#: https://www.smbom.com/news/13673), and a new generation reprices the one before it, so a price older than one such
#: cycle may not be what the server costs now.
PRICE_DATED_DAYS = 365


@cache
def reference_date() -> date:
    """The newest ``as_of`` of the catalog's purchase prices: the "now" a price's age is counted from."""
    return max(date.fromisoformat(rec.as_of) for rec in catalog.purchases().values())


def _months(then: date, now: date) -> int:
    """Whole months from ``then`` to ``now``."""
    return (now.year - then.year) * 12 + now.month - then.month - (now.day < then.day)


def _dated(rec: PurchaseRecord | PriceRecord) -> str | None:
    """How old the record is where it is older than :data:`PRICE_DATED_DAYS` before the reference, or undated; else None.

    A legacy purchase price (``prices.json``, whose ``as_of`` is optional) with no date is said so (newuser102): its age
    is not known, so it was bought in silence where a dated one of any age is named.
    """
    if rec.as_of is None:
        return "undated (its record gives no date)"
    then = date.fromisoformat(rec.as_of)
    months = _months(then, reference_date())
    return f"as of {then.isoformat()} ({months} months)" if (reference_date() - then).days > PRICE_DATED_DAYS else None


def price_dated_finding(wl: Workload, pools: list[Pool]) -> Finding | None:
    """An info naming the servers bought at catalog purchase prices more than a year older than the catalog's newest.

    A server bought at the workload's quote (``purchase_prices``) is not the catalog's; a record is named only where the
    pool's cost basis cites it.
    """
    platforms = catalog.platforms()
    said: list[str] = []
    keys: list[str] = []
    undated = False  # a record with no date among those named (newuser102)
    for pool in pools:
        node, platform = pool.node, platforms.get(pool.node.platform_id)
        if not pool.capex_usd or pool.rented or platform is None:
            continue
        if given_purchase(wl, node.platform_id, node.gpu_id, node.gpus) is not None:
            continue
        basis = pool.price_basis or ""
        old = [
            (rec, age)
            for rec in priced_from(platform.id, max(platform.gpu_counts), node.gpu_id, node.gpus).used
            if rec.id in basis and (age := _dated(rec)) is not None
        ]
        if old:
            records = ", ".join(f"{rec.id} ${rec.usd:,.0f} {age}" for rec, age in old)
            said.append(f"{pool.name}: {records}")
            keys.append(f"{node.platform_id}/{node.gpu_id}x{node.gpus}")  # the configuration's key (tco.given_purchase)
            undated = undated or any(rec.as_of is None for rec, _ in old)
    if not said:
        return None
    return Finding(
        "info",
        "price-dated",
        f"servers bought at catalog purchase prices dated more than a year before {reference_date().isoformat()}, the "
        "catalog's newest purchase price (specgen reads no clock: its prices are as old as that)"
        + (", or undated" if undated else "")
        + f": {'; '.join(said)}; "
        "a new GPU generation a year reprices the last, so get a current quote and give it under purchase_prices, USD "
        f"a server ({{{keys[0]}: ...}})",
    )


#: Where each provider publishes its own on-demand prices (the page a third-party price is to be checked on).
PROVIDER_PRICE_PAGES = {
    "aws": "https://aws.amazon.com/ec2/pricing/on-demand/",
    "azure": "https://azure.microsoft.com/pricing/details/virtual-machines/linux/",
    "gcp": "https://cloud.google.com/compute/vm-instance-pricing",
    "Lambda": "https://lambda.ai/pricing",
}


def _third_party_price(pool: Pool) -> PriceRecord | None:
    """The catalog price ``pool`` is costed at where a third party's table, not the provider's page, sources it."""
    basis = pool.price_basis or ""
    if "catalog " not in basis:  # no catalog price named (perf13: every pool walked every price record)
        return None
    return next(
        (
            rec
            for rec in (*catalog.prices().values(), *catalog.spot_prices().values())
            if (rec.third_party or rec.usd_unsourced) and f"catalog {rec.id} (" in basis
        ),
        None,
    )


def price_third_party_finding(pools: list[Pool]) -> Finding | None:
    """An info naming the pools costed at catalog prices whose source is a third party's, not the provider's page.

    newuser73 items 2 and 12: a Lambda price sourced to a personal notes repository, AWS and GCP list prices to a FinOps
    tool and a report script; the catalog marks them (``third_party_source``) where no provider page stating the figure
    was found, and a plan that rents at one says so, with the page to check it on and the key a rate goes under. A
    figure no source a user can open states (``unsourced_fields`` holds ``usd``: read only in third parties' tables no
    link reaches; src97) is named the same way, as unsourced.
    """
    platforms = catalog.platforms()
    by_record: dict[str, tuple[PriceRecord, list[str]]] = {}
    for pool in pools:
        if (rec := _third_party_price(pool)) is not None and rec.platform_id in platforms:
            by_record.setdefault(rec.id, (rec, []))[1].append(pool.name)
    said: list[str] = []
    keys: list[str] = []
    pages: list[str] = []
    for rec, names in by_record.values():
        dated = f" as of {rec.as_of}" if rec.as_of else ", undated"
        # src97: a figure read only in a third party's table no link reaches is unsourced, and its source is where to check
        where = f"unsourced: no source states it; check {rec.source[0]}" if rec.usd_unsourced else rec.source[0]
        said.append(f"{', '.join(names)}: {rec.id} ${rec.usd:,.2f}/{rec.unit}{dated} ({where})")
        keys.append(spot_key(rec.platform_id) if rec.spot else rec.platform_id)  # a spot rate's key (review80 item 14)
        page = PROVIDER_PRICE_PAGES.get(catalog.price_seller(rec, platforms[rec.platform_id]))
        pages += [page] if page and page not in pages else []
    if not said:
        return None
    check = f" (on {', '.join(pages)})" if pages else ""
    return Finding(
        "info",
        "price-third-party",
        "pools rented at catalog prices sourced to a third party's table, not the provider's own page (no provider "
        f"page stating the figure was found): {'; '.join(said)}; check the provider's current price{check} and give "
        f"it under prices, USD a node-hour ({{{keys[0]}: ...}})",
    )
