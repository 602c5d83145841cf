"""Bare metal under ``kubernetes.data_residency: eu`` costed at US defaults (newuser114).

A European colocation (Frankfurt) was costed at the US EIA's commercial electricity price and CBRE North America's
colocation rent, the defaults of ``constants.energy_usd_per_kwh`` and ``colocation_usd_per_kw_month``, and the plan's
cost lines named CBRE's figure without its continent. Where the workload says its data stays in the EU and leaves
either at its default, an info says so, names the US source and the constant to give the site's quote in.
"""

from __future__ import annotations

from generator.planner.plan import Finding
from generator.sizing.constants import Constants
from generator.workload.models import Workload

#: The constants an owned or bought server's month reads whose defaults are US figures, with the source's words.
US_DEFAULTS = {
    "energy_usd_per_kwh": "the US EIA's commercial-sector average",
    "colocation_usd_per_kw_month": "CBRE's North America average asking rent",
}


def residency_cost_findings(wl: Workload) -> list[Finding]:
    """One info where an EU-resident bare-metal workload leaves a US-sourced cost constant at its default."""
    if wl.kubernetes.data_residency != "eu" or wl.hardware.provider != "baremetal":
        return []
    left = [key for key in US_DEFAULTS if key not in wl.constants]
    if not left:
        return []
    defaults = Constants()
    said = "; ".join(f"constants.{key} {getattr(defaults, key):g} ({US_DEFAULTS[key]})" for key in left)
    return [
        Finding(
            "info",
            "us-cost-defaults",
            f"the servers' running costs are at US figures although kubernetes.data_residency is eu: {said}; give "
            "your site's electricity price and colocation quote (USD, as every figure of the plan) under constants",
            "constants",
        )
    ]
