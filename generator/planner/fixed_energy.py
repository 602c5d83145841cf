"""What the cost constants a ``hardware.fixed`` workload gives come to: the machine's energy a month, said, not priced.

newuser95 item 1: a home user who set ``constants: {energy_usd_per_kwh: 0.25}`` beside ``hardware.fixed`` to learn what
the machine costs a month in electricity read ``unpriced`` and not a word on the constant. The machine is had, so its
plan prices nothing (its totals stay unpriced, as ``prices:`` under it is ``setting-unused``); the energy a month is
said from the same formula an owned workstation's running cost takes (:func:`generator.planner.tco.owned_opex_usd_per_month`:
wall power x ``power_utilization`` x PUE 1, at home or in an office, x ``energy_usd_per_kwh`` x 730 h), and the
constants nothing reads for it (what is bought, what is racked) are ``setting-unused``.
"""

from __future__ import annotations

from generator.planner.plan import Finding
from generator.planner.tco import energy_usd_per_month
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH
from generator.workload.models import Workload

#: The cost constants of a machine at home or in an office that set its energy figure.
ENERGY_CONSTANTS = ("energy_usd_per_kwh", "power_utilization")
#: Cost constants a machine you have never reads: nothing is bought (amortisation) and nothing is racked (PUE, rent).
UNREAD_CONSTANTS = {
    "amortization_months": "spreads the price of servers bought, and the machine is had: nothing is bought",
    "pue": "counts a data centre's cooling and losses for racked servers, and the machine stands at home or in an office (PUE 1)",
    "colocation_usd_per_kw_month": "is a colocation rent for racked servers, and the machine stands at home or in an office",
}


def fixed_energy_findings(wl: Workload, power_w: int, consts: Constants) -> list[Finding]:
    """The machine's energy a month where the workload gives an energy constant; the cost constants it never reads."""
    given = [key for key in (*ENERGY_CONSTANTS, *UNREAD_CONSTANTS) if key in wl.constants]
    out: list[Finding] = []
    if any(key in ENERGY_CONSTANTS for key in given):
        kw = power_w / 1000
        month = energy_usd_per_month(kw, consts)
        at_full = energy_usd_per_month(kw, consts._replace(power_utilization=1.0))
        out.append(
            Finding(
                "info",
                "fixed-energy",
                f"the machine's energy: {kw:.2f} kW at the wall x {consts.power_utilization:g} utilisation "
                f"(power_utilization) x PUE 1 (at home or in an office) x ${consts.energy_usd_per_kwh:g}/kWh x "
                f"{HOURS_PER_MONTH:g} h = ${month:,.2f}/month (${at_full:,.2f} at full power all month); the plan "
                "prices no machine you have, so its totals stay unpriced",
                f"constants.{next(k for k in given if k in ENERGY_CONSTANTS)}",
            )
        )
    out += [
        Finding(
            "warning",
            "setting-unused",
            f"constants.{key} {UNREAD_CONSTANTS[key]}: with hardware.fixed it has no effect; remove it",
            f"constants.{key}",
        )
        for key in given
        if key in UNREAD_CONSTANTS
    ]
    return out
