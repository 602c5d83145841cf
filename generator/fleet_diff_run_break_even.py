"""Buy against rent where the rented side is training runs alone, paid per run, with no runs a month given.

newuser108 item 1: a startup pre-training a 3B and continuing an 8B on 48 H100s compared renting p5.48xlarge per run
($146,958 a run of both jobs) with buying six DGX H100 ($1,620,000, $16,697/month to run): ``diff`` printed the
capex beside the run's cost and nothing else, no break-even at all, since the rented side has no month (no standing
servers, no ``runs_per_month``). A pre-training run is no monthly habit, so the month cannot be asked for; what
decides is how many runs a month buying must carry to cost less: the bought fleet's month over the amortisation
(capex / ``amortization_months`` + its running cost, the month the plan itself counts) over the rent of one run.
"""

from __future__ import annotations

from typing import Any

from generator.units import dollars_text


def runs_break_even(
    capex_usd: float, running_usd_per_month: float, usd_per_run: float, amortization_months: float
) -> dict[str, Any]:
    """The runs a month from which buying costs less than renting each run, over ``amortization_months``.

    Bought: ``capex_usd`` / ``amortization_months`` + ``running_usd_per_month`` each month whatever runs; rented:
    ``usd_per_run`` each run. They cost the same at (capex / amortization_months + running) / usd_per_run runs a month.
    """
    bought_usd_per_month = capex_usd / amortization_months + running_usd_per_month
    runs_per_month = bought_usd_per_month / usd_per_run
    return {
        "rent_usd_per_run": round(usd_per_run, 2),
        "bought_usd_per_month_over_amortization": round(bought_usd_per_month, 2),
        "break_even_runs_per_month": round(runs_per_month, 2),
        # one run every this many months at the break-even, where that is under one a month (a pre-training run is no
        # monthly habit)
        "break_even_months_between_runs": round(1 / runs_per_month, 1) if 0 < runs_per_month < 1 else None,
    }


def runs_break_even_text(payback: dict[str, Any], months_text: str) -> str:
    """What the comment says of :func:`runs_break_even`'s figures (``payback["runs_break_even"]``)."""
    runs = payback["runs_break_even"]
    every = runs["break_even_months_between_runs"]
    cadence = f" (one run every {every:,} months)" if every is not None else ""
    return (
        f"the rented side pays per run and the workload gives no runs_per_month, so it has no month to pay back "
        f"against: over the {months_text}-month amortisation the servers bought cost "
        f"{dollars_text(runs['bought_usd_per_month_over_amortization'])}/month (capex / {months_text} + running), "
        f"so buying costs less from {runs['break_even_runs_per_month']:,} runs a month{cadence} at "
        f"{dollars_text(runs['rent_usd_per_run'])} a run rented; give runs_per_month for the months it takes to pay back"
    )
