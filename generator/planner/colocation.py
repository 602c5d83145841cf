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

from collections.abc import Sequence

from generator.planner.plan import Finding, Pool
from generator.planner.racks import Rack
from generator.planner.tco import HOURS_PER_MONTH, colocation_scope
from generator.sizing.constants import Constants


def undrawn_contract_usd(
    pools: list[Pool], racks: list[Rack], usable_kw: float, consts: Constants, priced: frozenset[str]
) -> dict[str, float]:
    """Pool name -> USD a month of the racks' contracted kW its servers leave undrawn, its share by the kW it draws."""
    by_name = {p.name: p for p in pools}
    out: dict[str, float] = {}
    for rack in racks:
        # a pool priced by prices: is all-in (its price holds its own rack space and power): the contract is billed to
        # the other pools as if they stood alone, so an all-in server's size never moves the others' bill
        own = {n: c * by_name[n].node.power_w for n, c in rack.pools.items() if by_name[n].node.platform_id not in priced}
        drawn_w = sum(own.values())
        if not drawn_w:
            continue
        undrawn_kw = max(0.0, usable_kw - drawn_w / 1000)
        for name, watts in sorted(own.items()):
            out[name] = out.get(name, 0.0) + undrawn_kw * watts / drawn_w * consts.colocation_usd_per_kw_month
    return {name: usd for name, usd in out.items() if usd > 0}


def billed_per_rack(pools: list[Pool], undrawn: dict[str, float]) -> list[Pool]:
    """``pools`` with each one's share of its racks' undrawn contracted kW added to its running cost and price basis."""
    out = []
    for pool in pools:
        usd = undrawn.get(pool.name)
        if not usd or pool.usd_per_hour is None or pool.opex_usd_per_month is None:
            out.append(pool)
            continue
        basis = (
            f"{pool.price_basis}; colocation billed per rack at its circuits' usable kW (hardware.rack_circuits): "
            f"+${usd:,.0f}/month, this pool's share of the contracted kW its racks leave undrawn"
        )
        out.append(
            pool._replace(
                usd_per_hour=pool.usd_per_hour + usd / HOURS_PER_MONTH,
                opex_usd_per_month=round(pool.opex_usd_per_month + usd, 2),
                price_basis=basis,
            )
        )
    return out


def colocation_findings(
    racks: list[Rack],
    rack_kw: float,
    circuits: bool,
    consts: Constants,
    pools: Sequence[Pool] = (),
    priced: frozenset[str] = frozenset(),
) -> list[Finding]:
    """How the fleet's colocation is billed, with the figures: per rack (circuits given) or per kW drawn.

    A racked pool priced by ``prices:`` (``priced``: platform ids; an owned platform's all-in rate) pays no colocation
    of the plan's: its kW are left out of the figures, as the pools' costs leave them out (fuzz32 item 2: the line
    claimed $2,392/month of colocation that the $7,300 total did not hold).
    """
    rate = consts.colocation_usd_per_kw_month
    all_in = {p.name: p.node.power_w for p in pools if p.node.platform_id in priced}
    drawn_kw = sum(r.power_w - sum(c * all_in.get(n, 0) for n, c in r.pools.items()) for r in racks) / 1000
    if not racks or rate <= 0 or drawn_kw <= 0:
        return []
    drawn_usd = drawn_kw * rate
    contract_usd = len(racks) * rack_kw * rate
    scope = colocation_scope(consts)
    rate_text = f"${rate:g}/kW-month{scope}"
    quote = "; a quote for your site goes in constants.colocation_usd_per_kw_month"
    if circuits:
        message = (
            f"colocation is billed per rack at its circuits' usable kW (hardware.rack_circuits, the contract): "
            f"{len(racks)} rack(s) x {rack_kw:g} kW x {rate_text} = ${contract_usd:,.2f}/month; the servers draw "
            f"{drawn_kw:.3f} kW (${drawn_usd:,.2f}), and the pools' costs carry the ${contract_usd - drawn_usd:,.2f} "
            f"the racks leave undrawn{quote}"
        )
        return [Finding("info", "colocation-per-rack", message, "hardware.rack_circuits")]
    message = (
        f"colocation is billed per kW the servers draw: {drawn_kw:.3f} kW x {rate_text} = ${drawn_usd:,.2f}/month; a "
        f"contract per rack at this rate would cost {len(racks)} rack(s) x {rack_kw:g} kW = ${contract_usd:,.2f}/month "
        f"(give hardware.rack_circuits to bill the racks' circuits){quote}"
    )
    return [Finding("info", "colocation-per-kw-drawn", message, "hardware.rack_power_kw")]
