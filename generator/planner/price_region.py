"""Which region a cloud plan's rents are priced in: one region for every option, so that options compare.

The catalog prices a cloud instance type per region (``prices.json`` ``region``), most of a provider's types in one
region (its reference region: us-central1, us-east-1, eastus2) and some only elsewhere (gcp-a3-megagpu-8g in
us-east4: Google's billing catalog has no us-central1 price for its GPU). Pricing each option at whichever region
has a price compared a us-central1 rent with a us-east4 one (user report: GKE in us-central1). Here every option of
a plan is priced in one region (:func:`pricing_region`). A type with no price in that region is unpriced, and the
plan names the regions the catalog prices it in.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import cache

from generator import catalog
from generator.catalog.gpu_zones import offering_zones, zone_source
from generator.planner.azure_region_price import retail_price_hint
from generator.planner.plan import Finding, Pool
from generator.planner.region_offer_clause import region_offer_clause
from generator.workload.capacity_type import SPOT, given_rate
from generator.workload.data_residency import location_region
from generator.workload.gke_zone import is_zone, planned_place
from generator.workload.models import Workload


@cache
def _hourly_regions(provider: str) -> dict[str, tuple[str, ...]]:
    """Platform id -> the regions the catalog has an hourly price of it in (sorted), for one cloud provider."""
    platforms = catalog.platforms()
    out: dict[str, set[str]] = {}
    for price in catalog.prices().values():
        platform = platforms.get(price.platform_id)
        if platform is not None and platform.provider == provider and price.unit == "hour" and price.region:
            out.setdefault(price.platform_id, set()).add(price.region)
    return {platform_id: tuple(sorted(regions)) for platform_id, regions in sorted(out.items())}


def priced_regions(provider: str, platform_id: str) -> tuple[str, ...]:
    """The regions the catalog has an hourly price of ``platform_id`` in (empty: none)."""
    return _hourly_regions(provider).get(platform_id, ())


@cache
def reference_region(provider: str) -> str | None:
    """The region most of a cloud provider's types are priced in (ties: the first by name); None: no hourly prices.

    Bare metal has none: its hourly records are rentals (Lambda's), each priced where the provider is, not regions.
    """
    if provider == "baremetal":
        return None
    counts = Counter(region for regions in _hourly_regions(provider).values() for region in regions)
    if not counts:
        return None
    return min(counts, key=lambda region: (-counts[region], region))


def asked_region(wl: Workload) -> str | None:
    """The region the workload runs in, where it says one: ``kubernetes.location`` (a GKE zone's region)."""
    provider, location = wl.hardware.provider, wl.kubernetes.location
    if location is None or provider == "baremetal":
        return None
    return location_region(provider, location)


#: The last workload asked about and its region: every node's and fleet's cost asks, tens of thousands of times a plan.
_last: list[tuple[Workload, str | None]] = []


def pricing_region(wl: Workload) -> str | None:
    """:func:`_pricing_region` of ``wl``, formed once while the same workload is planned."""
    if not (_last and _last[0][0] is wl):
        _last[:] = [(wl, _pricing_region(wl))]
    return _last[0][1]


def _pricing_region(wl: Workload) -> str | None:
    """The one region every rented option of the plan is priced in; None for bare metal (bought, not rented).

    The workload's region where the catalog prices at least half as many of the types it allows as any region; else
    (no region named, or one the catalog prices few of them in) the region that prices the types deployments pin and
    then the most of the types the workload allows, the provider's reference region on a tie: an A100 40GB workload on
    Azure is priced in eastus, where alone ND96asr_v4 is listed.
    """
    provider = wl.hardware.provider
    if provider == "baremetal":
        return None
    asked = asked_region(wl)
    gpus, platforms = _lowered(wl.hardware.gpus), _lowered(wl.hardware.platforms)
    priced = frozenset(wl.prices)
    if asked is not None and _prices_enough(provider, gpus, platforms, asked, priced):
        return asked
    return _most_priced_region(provider, gpus, platforms, _pins(wl), priced)


def _pins(wl: Workload) -> frozenset[str]:
    """The types deployments pin (``platform``) that need a catalog region.

    Those the workload prices (``prices:``) are priced in every region and choose none (fuzz22 item 3: one such pin
    moved an Azure plan to eastus, where the catalog prices 1 of its 10 types).
    """
    return frozenset(
        pin
        for d in wl.deployments
        if d.platform and given_rate(wl.prices, pin := d.platform.lower(), d.capacity_type == SPOT) is None
    )


def _prices_enough(
    provider: str, gpus: frozenset[str] | None, platforms: frozenset[str] | None, region: str, priced: frozenset[str]
) -> bool:
    """Whether ``region`` prices at least half as many of the allowed types as the region that prices the most.

    review22 item 3: us-east4, where the catalog prices a3-megagpu-8g alone, left every other type of an 8B service
    unpriced and the plan ranked by power; such a region is named, and the plan priced where the types are.
    """
    counts = _priced_counts(provider, gpus, platforms, priced)
    return bool(counts) and 2 * counts[region] >= max(counts.values())


def _lowered(ids: tuple[str, ...] | None) -> frozenset[str] | None:
    return None if not ids else frozenset(i.lower() for i in ids)


@cache
def _most_priced_region(
    provider: str,
    gpus: frozenset[str] | None,
    platforms: frozenset[str] | None,
    pinned: frozenset[str] = frozenset(),
    priced: frozenset[str] = frozenset(),
) -> str | None:
    """The region that prices the most of a provider's types the GPU and platform lists allow (ties: the reference).

    The types deployments pin (``platform:``) come first: a pinned type is what runs (review22 item 2: ND96asr_v4,
    pinned and listed in eastus alone, was left unpriced in eastus2).
    """
    counts = _priced_counts(provider, gpus, platforms, priced)
    on_pins = Counter(region for platform_id in pinned for region in priced_regions(provider, platform_id))
    reference = reference_region(provider)
    if not counts:
        return reference
    return min(counts, key=lambda region: (-on_pins[region], -counts[region], region != reference, region))


def _allowed(provider: str, gpus: frozenset[str] | None, platforms: frozenset[str] | None) -> list[str]:
    """The ids of a provider's types the GPU and platform lists allow."""
    return [
        platform.id
        for platform in catalog.platforms().values()
        if platform.provider == provider
        and (gpus is None or gpus.intersection(platform.gpu_ids))
        and (platforms is None or platform.id in platforms)
    ]


@cache
def _priced_counts(
    provider: str, gpus: frozenset[str] | None, platforms: frozenset[str] | None, priced: frozenset[str] = frozenset()
) -> Counter[str]:
    """Per region, how many of a provider's types the GPU and platform lists allow are priced there.

    A type the workload prices (``priced``: its ``prices:`` ids) is priced in every region the catalog knows for the
    provider (fuzz22 item 3); any other in the regions the catalog prices it in.
    """
    allowed = _allowed(provider, gpus, platforms)
    everywhere = sum(1 for platform_id in allowed if platform_id in priced)
    counts = Counter(
        region for platform_id in allowed if platform_id not in priced for region in priced_regions(provider, platform_id)
    )
    regions = {region for regions in _hourly_regions(provider).values() for region in regions}
    return Counter({region: counts[region] + everywhere for region in regions if counts[region] + everywhere})


def _region_basis(wl: Workload, region: str) -> str:
    """Why the plan is priced in ``region``, as the finding says it: the rule that chose it, with its counts."""
    provider = wl.hardware.provider
    asked = asked_region(wl)
    if asked == region:
        return "kubernetes.location"
    gpus, platforms = _lowered(wl.hardware.gpus), _lowered(wl.hardware.platforms)
    counts = _priced_counts(provider, gpus, platforms, frozenset(wl.prices))
    share = f"{counts[region]} of the {len(_allowed(provider, gpus, platforms))} types allowed"
    best = max(counts.values(), default=0)
    if counts[region] < best:
        share += f"; {min(r for r in counts if counts[r] == best)} prices {best}"
    pins = sorted(pin for pin in _pins(wl) if region in priced_regions(provider, pin))
    rule = (
        f"{region} prices the type{'s' if len(pins) > 1 else ''} deployments pin ({', '.join(pins)}), which come "
        f"first; it prices {share}"
        if pins
        else f"{region} prices the most of the types allowed ({share})"
    )
    if asked is not None:
        return f"{counts[asked]} of the allowed types are priced in {asked}; {rule}"
    return f"kubernetes.location names no region; {rule}"


@cache
def least_rate_elsewhere(platform_id: str) -> tuple[str, float] | None:
    """The region where the catalog rents cloud type ``platform_id`` for the least per node-hour, and that rate.

    None where no region prices it by the hour (bare metal, a custom server). Not a price of the plan's region: a
    yardstick for a type unpriced there (newuser28 item 8); formed once per type (the ranking asks per layout).
    """
    platform = catalog.platforms().get(platform_id)
    regions = priced_regions(platform.provider, platform_id) if platform is not None else ()
    rates = [
        (price.usd, price.region)
        for price in catalog.prices().values()
        if price.platform_id == platform_id and price.unit == "hour" and price.region in regions
    ]
    if not rates:
        return None
    usd, region = min(rates)
    return region, usd


def unpriced_in_region_why(provider: str, platform_id: str, region: str) -> str | None:
    """Why a type priced elsewhere has no rent in ``region``; None where it is priced there or nowhere."""
    regions = priced_regions(provider, platform_id)
    if not regions or region in regions:
        return None
    return f"no {region} price for {platform_id} in the catalog (it is priced in {', '.join(regions)} only)"


def price_region_findings(wl: Workload, platform_ids: list[str]) -> list[Finding]:
    """The allowed instance types left unpriced because the catalog prices them only outside the plan's region."""
    region = pricing_region(wl)
    provider = wl.hardware.provider
    if region is None:
        return []
    # a type priced only at its ``@spot`` rate is priced where every deployment is spot (review30 item 4)
    all_spot = all(d.capacity_type == SPOT for d in wl.deployments)
    elsewhere = [
        f"{platform_id} (priced in {', '.join(priced_regions(provider, platform_id))} only)"
        for platform_id in sorted(set(platform_ids))
        if given_rate(wl.prices, platform_id, all_spot) is None and unpriced_in_region_why(provider, platform_id, region)
    ]
    if not elsewhere:
        return []
    where = _region_basis(wl, region)
    one = len(elsewhere) == 1
    return [
        Finding(
            "info",
            "priced-elsewhere",
            f"every option is priced at {region} on-demand rates ({where}); the catalog has no {region} price for "
            f"{', '.join(elsewhere)}, so {'it is' if one else 'they are'} unpriced here: ranked after the priced "
            "layouts (by what they buy where none is priced), not by another region's rent; give "
            f"{'its' if one else 'their'} USD per node-hour in {region} under 'prices:' to rank {'it' if one else 'them'} "
            "by cost",
            "hardware",
        )
    ]


#: How the ``price-region`` finding opens: the pool, the region whose rate it carries, its instance type (``diff`` and
#: the plan's headline read them back).
PRICED_AT = re.compile(r"pool (\S+) is priced at the (\S+) on-demand rate of ")


def pool_region_findings(wl: Workload, pools: Iterable[Pool]) -> list[Finding]:
    """Pools priced at another region's rate than the one ``kubernetes.location`` names, one per catalog-priced pool.

    The catalog has no GPU VM prices in that region; a pool the workload prices is priced for its own region. A warning
    (newuser74 MED, item 9: an ``info`` let a plan for brazilsouth show eastus2 dollars, which ``--fail-on warning``
    passed): the plan's cost is another region's. Whether the cluster sells the type is checked only for a GKE zone
    and a type with a sourced zone list (``gpu_zones.json``, fix164); elsewhere the finding says it is not.
    """
    region, priced_in = asked_region(wl), pricing_region(wl)
    if region is None or priced_in is None or priced_in == region:
        return []
    return [
        Finding(
            "warning",
            "price-region",
            f"pool {pool.name} is priced at the {priced_in} on-demand rate of {pool.node.platform_id}; the "
            f"cluster is in {region}, {_region_rates(wl, pool.node.platform_id, region, priced_in)}: the plan's "
            f"dollars for it are {priced_in}'s, not {region}'s (give its USD per node-hour in {region} under 'prices:'"
            f"{_where_listed(wl, pool, region)}), and "
            f"{_offer_clause(wl, pool, region)}",
            "kubernetes.location",
        )
        for pool in pools
        if given_rate(wl.prices, pool.node.platform_id, pool.spot) is None and pool.usd_per_hour is not None
    ]


def _region_rates(wl: Workload, platform_id: str, region: str, priced_in: str) -> str:
    """What the catalog holds of the cluster's region, as ``price-region`` says it.

    newuser114: eu-north-1 priced p5.48xlarge and p5en.48xlarge, too few of the types an H100 workload allows to price
    the plan there, and the finding said eu-north-1's prices were "not in the catalog" beside a pool whose type had one.
    """
    if region not in priced_regions(wl.hardware.provider, platform_id):
        return "whose GPU VM prices differ and are not in the catalog"
    counts = _priced_counts(
        wl.hardware.provider, _lowered(wl.hardware.gpus), _lowered(wl.hardware.platforms), frozenset(wl.prices)
    )
    return (
        f"whose rate of {platform_id} the catalog holds but does not use: it prices {counts[region]} of the "
        f"types the workload allows in {region}, fewer than half of the {counts[priced_in]} it prices in "
        f"{priced_in}, so every option is priced at {priced_in}'s rates, to compare"
    )


def _where_listed(wl: Workload, pool: Pool, region: str) -> str:
    """Where the provider publishes the rate to give (newuser109: Azure's Retail Prices API), "" elsewhere."""
    if wl.hardware.provider != "azure" or pool.node.instance_type is None:
        return ""
    return "; " + retail_price_hint(region, pool.node.instance_type)


def _offer_clause(wl: Workload, pool: Pool, region: str) -> str:
    """Whether the cluster offers the pool's type, as ``price-region`` says it: a GKE zone's checked offer (fix164)."""
    machine = pool.node.instance_type or pool.node.platform_id
    place = planned_place(wl)  # a GKE zone, or a regional location (fix169: any of its zones)
    if place is not None and offering_zones(pool.node.platform_id) is not None:  # a type the place lacks is not planned
        where = f"zone {place}" if is_zone(place) else f"region {place} (a zone of it)"
        return f"{where} offers {machine} (generator/catalog/gpu_zones.json: {zone_source(pool.node.platform_id)})"
    return region_offer_clause(wl.hardware.provider, pool.node.platform_id, machine, region)


def priced_at(findings: Iterable[Finding]) -> list[str]:
    """The regions whose rates the ``price-region`` findings say pools carry, sorted (empty: none)."""
    return sorted({m[2] for f in findings if f.code == "price-region" and (m := PRICED_AT.match(f.message))})


def budget_basis(wl: Workload, pools: Iterable[Pool] | None = None) -> str:
    """Which rates a month held against ``max_budget_usd_per_month`` is at, where another region's (newuser79 item 2).

    A budget held at us-central1 list prices for a europe-west4 cluster passed in silence. "" where every rate is the
    cluster's region's or the workload's (``pools``: those of the fleet; None: any rented option of the plan).
    """
    region, priced_in = asked_region(wl), pricing_region(wl)
    if region is None or priced_in is None or priced_in == region:
        return ""
    if pools is not None and not any(
        given_rate(wl.prices, pool.node.platform_id, pool.spot) is None and pool.usd_per_hour is not None for pool in pools
    ):
        return ""
    return (
        f" at {priced_in} on-demand list prices (the cluster is in {region}, whose GPU VM prices the catalog does not "
        f"hold: give them under prices: to hold the budget against them)"
    )


def catalog_spot_rated(region: str | None) -> frozenset[str]:
    """The instance types the catalog holds a spot rate of in ``region`` (None: in any), review80 item 14."""
    return frozenset(p.platform_id for p in catalog.spot_prices().values() if region is None or p.region == region)
