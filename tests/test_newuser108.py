"""newuser108: a startup's pre-training rented per run against servers bought for a colocation rack."""

from __future__ import annotations

from typing import Any

from generator.fleet_diff import diff_plans
from generator.fleet_diff_markdown import markdown_diff
from generator.fleet_diff_run_break_even import runs_break_even


def _side(**totals: Any) -> dict[str, Any]:
    provider = "baremetal" if totals.get("capex_usd") else "aws"
    return {"provider": provider, "totals": totals, "pools": [], "deployments": []}


#: examples/pretrain-colo-h100.yaml bought (6 x DGX H100) and the same file with provider: aws (p5.48xlarge per run)
BOUGHT = _side(capex_usd=1620000.0, opex_usd_per_month=16696.98, usd_per_month=61696.98, training_usd_per_job=None)
RENTED = _side(capex_usd=None, opex_usd_per_month=0, usd_per_month=0, training_usd_per_job=146957.68)


def test_runs_rented_per_run_alone_get_the_runs_a_month_buying_must_carry() -> None:
    """Item 1: the diff gave the capex beside the run's rent and no break-even at all (the rent has no month)."""
    payback = diff_plans(RENTED, BOUGHT)["buy_vs_rent"]
    # 1,620,000 / 36 + 16,696.98 = 61,696.98 a month; / 146,957.68 a run = 0.42 runs a month, one every 2.4 months
    assert payback["runs_break_even"] == {
        "rent_usd_per_run": 146957.68,
        "bought_usd_per_month_over_amortization": 61696.98,
        "break_even_runs_per_month": 0.42,
        "break_even_months_between_runs": 2.4,
    }
    assert payback["break_even_months"] is None and payback["rent_usd_per_month"] is None
    text = markdown_diff(diff_plans(RENTED, BOUGHT))
    assert "never pays back" not in text  # a $0 month rented read as renting costing less than running the servers
    assert "buying costs less from 0.42 runs a month (one run every 2.4 months) at $146,958 a run rented" in text


def test_the_break_even_reads_the_bought_sides_amortisation() -> None:
    # over 60 months: 1,620,000 / 60 + 16,696.98 = 43,696.98; / 146,957.68 = 0.297 -> 0.3, one every 3.4 months
    figures = runs_break_even(1620000.0, 16696.98, 146957.68, 60)
    assert (figures["break_even_runs_per_month"], figures["break_even_months_between_runs"]) == (0.3, 3.4)
