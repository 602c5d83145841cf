"""The finding that a cloud plan is priced at the catalog's on-demand list prices of one region (newuser24 item 14).

A buy-vs-rent comparison reads the rent side as what the cloud would bill; the catalog's hourly prices are the
pay-as-you-go (on-demand) rate of the one region each record names, not a reserved, savings-plan, capacity-block or
spot rate, nor another region's. The workload's top-level ``prices`` replaces them.
"""

from __future__ import annotations

from generator.catalog.records import PriceRecord
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.planner.tco import costed_catalog_price
from generator.workload.capacity_type import spot_key

#: Providers whose catalog prices are hourly list prices of one region.
CLOUD_PROVIDERS = ("aws", "azure", "gcp")


def catalog_hourly_price(pool: Pool) -> PriceRecord | None:
    """The catalog's hourly price record ``pool`` is costed with (None: the workload's own price, or none)."""
    record = costed_catalog_price(pool)  # a spot pool's catalog spot rate too (review80 item 14)
    return record if record is not None and record.unit == "hour" and record.region else None


def list_price_finding(plan: Plan) -> Finding | None:
    """What the cloud pools' prices are, and how to give the ones the buyer would pay; None where none is a list price."""
    if plan.provider not in CLOUD_PROVIDERS:
        return None
    by_region: dict[str, dict[str, PriceRecord]] = {}
    for pool in plan.pools:
        if (record := catalog_hourly_price(pool)) is not None:
            key = spot_key(record.platform_id) if record.spot else record.platform_id
            by_region.setdefault(str(record.region), {})[key] = record
    if not by_region:
        return None
    first = min(min(rates) for rates in by_region.values())

    def said(key: str, record: PriceRecord) -> str:
        # an undated price says so (review34 item 15: the Azure T4 prices' source gives no date); a dated one its date
        # (newuser83 item 4: the plan quoted $84.80/h for an ND H200 v5 with no day, the record's 2026-10-07 unsaid)
        return f"{key} ${record.usd:,.2f}/h" + (
            " (its source gives no date)" if record.as_of is None else f" as of {record.as_of}"
        )

    listed = "; ".join(
        f"in {region}: " + ", ".join(said(key, record) for key, record in sorted(rates.items()))
        for region, rates in sorted(by_region.items())
    )
    spot = any(r.spot for rates in by_region.values() for r in rates.values())
    taken = "its on-demand (pay-as-you-go) list price of one region" + (
        ", a spot pool its spot rate there (an @spot key)" if spot else ""
    )
    return Finding(
        "info",
        "cloud-list-prices",
        f"pools priced from the catalog take {taken} ({listed}); "
        f"reserved instances, savings plans, capacity blocks, {'spot at a later rate' if spot else 'spot'} and other "
        "regions bill differently, and against a "
        "purchase amortized over years a commitment of the same term is the fair rent side: give the rates you would "
        f"pay as top-level prices, USD per node-hour by platform id (prices: {{{first}: ...}}; README, Costs)",
        "prices",
    )


def with_list_price_finding(plan: Plan) -> Plan:
    """The plan with :func:`list_price_finding`, where it has one."""
    found = list_price_finding(plan)
    return plan._replace(findings=sorted_findings([*plan.findings, found])) if found else plan
