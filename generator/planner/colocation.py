"""What the colocation racks of a bare-metal fleet are billed: per kW drawn, or per rack at its circuits' usable kW.

The servers' cost lines charge colocation per kW they draw (:func:`generator.planner.tco.owned_opex_usd_per_month`),
which is how the search ranks layouts. A colocation contract sold as circuits (``hardware.rack_circuits``) bills each
rack's circuits whatever its servers draw (newuser39 item 5: one rack fed by 2 x 32 A 415 V 2N, 17.48 kW usable, was
billed 7.64 kW). Where the workload gives the circuits, each rack is billed at its usable kW once the racks are packed:
the contracted kW its servers leave undrawn are added to the pools in it, split by the kW each draws there (a pool
priced by ``prices:`` is all-in: it takes none, and the others are billed as if it were not there). Where it gives
only ``rack_power_kw`` (or its default), colocation stays per kW drawn and a finding says what a per-rack contract
at the same rate would cost.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.planner.plan import Finding, Pool
from generator.planner.racks import Rack
from generator.planner.tco import colocation_scope
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH


class RackBill(NamedTuple):
    """What this plan bills of its racks' colocation: one computation feeds the pools' costs and the finding.

    review 27 item 2: the finding took the whole contract less every server's draw, all-in ones included, and said
    the pools carried the difference, while the pools carried the contract less the draw of those not all-in
    ($2,890.27 a month said, nothing carried, where the rack held only an all-in pool).
    """

    #: Racks holding a server whose colocation this plan bills (one not priced all-in under ``prices:``).
    racks: int
    #: What those servers draw, in kW (all-in servers left out: their price holds their power).
    drawn_kw: float
    #: Billed per rack (``hardware.rack_circuits``): pool -> USD a month of its racks' contracted kW left undrawn, its
    #: share by the kW it draws there, for the pools whose cost carries it (priced); empty where billed per kW drawn.
    undrawn_usd: dict[str, float]
    #: USD a month of the undrawn contract that falls to pools without a price (in no cost of the plan).
    unpriced_usd: float
    #: The racked pools priced all-in under ``prices:``, which this plan bills no colocation.
    all_in: tuple[str, ...]
    #: Racks that hold only such pools.
    all_in_racks: int


def rack_bill(
    pools: list[Pool], racks: list[Rack], usable_kw: float, consts: Constants, priced: frozenset[str], per_rack: bool
) -> RackBill:
    """The racks' colocation this plan bills (``per_rack``: the contract's circuits, drawn or not; else per kW drawn).

    Per rack, the contracted kW the billed servers leave undrawn go to their pools, each its share by the kW it draws.
    A pool priced by prices: is all-in (its price holds its own rack space and power): it takes none, and the others
    are billed as if it were not there, so an all-in server's size never moves the others' bill. Servers bought beyond
    the owned ones of such a pool are billed like any bought server (:func:`_bought_share`).
    """
    by_name = {p.name: p for p in pools}
    undrawn: dict[str, float] = {}
    billed_racks, all_in_racks = 0, 0
    drawn_w = 0.0
    all_in = sorted({n for r in racks for n in r.pools if _bought_share(by_name[n], priced) == 0})
    for rack in racks:
        own = {
            n: c * by_name[n].node.power_w * _bought_share(by_name[n], priced) for n, c in rack.pools.items() if n not in all_in
        }
        rack_w = sum(own.values())
        if not rack_w:
            all_in_racks += 1
            continue
        billed_racks += 1
        drawn_w += rack_w
        undrawn_kw = max(0.0, usable_kw - rack_w / 1000) if per_rack else 0.0
        for name, watts in sorted(own.items()):
            undrawn[name] = undrawn.get(name, 0.0) + undrawn_kw * watts / rack_w * consts.colocation_usd_per_kw_month

    def carries(name: str) -> bool:
        return by_name[name].usd_per_hour is not None and by_name[name].opex_usd_per_month is not None

    return RackBill(
        racks=billed_racks,
        drawn_kw=drawn_w / 1000,
        undrawn_usd={n: usd for n, usd in undrawn.items() if usd > 0 and carries(n)},
        unpriced_usd=sum(usd for n, usd in undrawn.items() if usd > 0 and not carries(n)),
        all_in=tuple(all_in),
        all_in_racks=all_in_racks,
    )


def _bought_share(pool: Pool, priced: frozenset[str]) -> float:
    """The share of ``pool``'s servers whose colocation the plan bills.

    All of them, but on a platform priced all-in under ``prices:`` only those bought beyond the owned ones (fuzz33
    item 1: they are bought at the catalog's purchase price and racked).
    """
    if pool.node.platform_id not in priced or pool.nodes == 0:
        return 1.0
    return (pool.nodes - pool.owned_nodes) / pool.nodes


def billed_per_rack(pools: list[Pool], undrawn: dict[str, float]) -> list[Pool]:
    """``pools`` with each one's share of its racks' undrawn contracted kW added to its running cost and price basis.

    ``undrawn`` is :attr:`RackBill.undrawn_usd`: only pools with a price are in it, so each is added whole.
    """
    out = []
    for pool in pools:
        usd = undrawn.get(pool.name)
        if not usd or pool.usd_per_hour is None or pool.opex_usd_per_month is None:
            out.append(pool)
            continue
        basis = f"{pool.price_basis}; {undrawn_clause(usd)}"
        out.append(
            pool._replace(
                usd_per_hour=pool.usd_per_hour + usd / HOURS_PER_MONTH,
                opex_usd_per_month=round(pool.opex_usd_per_month + usd, 2),
                price_basis=basis,
            )
        )
    return out


def undrawn_clause(usd: float) -> str:
    """A pool's cost line: its share of its racks' undrawn contracted kW a month (``usd``), added to its running cost."""
    return (
        f"colocation billed per rack at its circuits' usable kW (hardware.rack_circuits): +${usd:,.0f}/month, this "
        "pool's share of the contracted kW its racks leave undrawn"
    )


def _all_in_text(bill: RackBill) -> str:
    """Which racked pools are priced all-in and billed no colocation here, or ``''``."""
    if not bill.all_in:
        return ""
    alone = f"; {bill.all_in_racks} rack(s) hold only them" if bill.all_in_racks else ""
    return (
        f"; pool(s) {', '.join(bill.all_in)}, priced all-in under prices: (their price holds their rack space and "
        f"power), are billed no colocation here and left out of these figures{alone}"
    )


def colocation_findings(bill: RackBill, rack_kw: float, circuits: bool, consts: Constants) -> list[Finding]:
    """How the fleet's colocation is billed, with the figures the pools carry: per rack (circuits given) or per kW drawn."""
    rate = consts.colocation_usd_per_kw_month
    if not (bill.racks or bill.all_in_racks) or rate <= 0:
        return []
    drawn_usd = bill.drawn_kw * rate
    contract_usd = bill.racks * rack_kw * rate
    scope = colocation_scope(consts)
    rate_text = f"${rate:g}/kW-month{scope}"
    quote = "; a quote for your site goes in constants.colocation_usd_per_kw_month"
    all_in = _all_in_text(bill)
    if circuits:
        carried = sum(bill.undrawn_usd.values())
        unpriced = f" (and ${bill.unpriced_usd:,.2f} falls to unpriced pools)" if bill.unpriced_usd else ""
        billed = (
            f"{bill.racks} rack(s) x {rack_kw:g} kW x {rate_text} = ${contract_usd:,.2f}/month; the servers billed here "
            f"draw {bill.drawn_kw:.3f} kW (${drawn_usd:,.2f}), and the pools' costs carry the ${carried:,.2f} the racks "
            f"leave undrawn{unpriced}"
            if bill.racks
            else "no rack holds a server billed here"
        )
        message = (
            f"colocation is billed per rack at its circuits' usable kW (hardware.rack_circuits, the contract): "
            f"{billed}{all_in}{quote}"
        )
        return [Finding("info", "colocation-per-rack", message, "hardware.rack_circuits")]
    billed = (
        f"{bill.drawn_kw:.3f} kW x {rate_text} = ${drawn_usd:,.2f}/month; a contract per rack at this rate would cost "
        f"{bill.racks} rack(s) x {rack_kw:g} kW = ${contract_usd:,.2f}/month (give hardware.rack_circuits to bill the "
        "racks' circuits)"
        if bill.racks
        else "no rack holds a server billed here"
    )
    message = f"colocation is billed per kW the servers draw: {billed}{all_in}{quote}"
    return [Finding("info", "colocation-per-kw-drawn", message, "hardware.rack_power_kw")]
