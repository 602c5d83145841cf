"""newuser61 item 7: purchase prices two to three and a half years old were used for a December 2026 purchase unsaid.

The catalog's figures (generator/catalog/purchases.json): dgx-h100-system $270,000 as of 2023-05-01,
h100-sxm5-80gb-gpu $30,000 as of 2023-08-16, dell-xe8640-host $77,000 as of 2024-08-22; the newest purchase price is
dated 2026-12-01, the reference (specgen reads no clock). dell-r760-host and l40s-48gb-gpu are dated within the year.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.planner.price_dates import _months, reference_date
from generator.workload import load_workload

CHAT = """\
version: 1
name: dated
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: baremetal
  gpus: [{gpu}]
  platforms: [{platform}]
{more}"""


def _plan(tmp_path: Path, gpu: str, platform: str, more: str = "") -> Plan:
    path = tmp_path / "workload.yaml"
    path.write_text(CHAT.format(gpu=gpu, platform=platform, more=more))
    return plan_workload(load_workload(str(path)))


def _dated(plan: Plan) -> str | None:
    return next((f.message for f in plan.findings if f.code == "price-dated"), None)


def test_the_reference_is_the_catalogs_newest_purchase_price() -> None:
    assert reference_date() == max(date.fromisoformat(r.as_of) for r in catalog.purchases().values())
    assert reference_date() == date(2026, 12, 1)


@pytest.mark.parametrize(
    ("then", "months"),
    [
        pytest.param(date(2023, 5, 1), 43, id="dgx-h100"),
        pytest.param(date(2024, 8, 22), 27, id="day-not-yet-reached"),
        pytest.param(date(2025, 12, 1), 12, id="a-year-to-the-day"),
    ],
)
def test_months_are_whole_months(then: date, months: int) -> None:
    assert _months(then, date(2026, 12, 1)) == months


def test_a_server_bought_at_old_prices_names_each_record_and_its_age(tmp_path: Path) -> None:
    said = _dated(_plan(tmp_path, "h100-sxm5-80gb", "dgx-h100"))
    assert said is not None
    assert "dated more than a year before 2026-12-01, the catalog's newest purchase price" in said
    assert "chat_h100_sxm5_80gb: dgx-h100-system $270,000 as of 2023-05-01 (43 months)" in said
    assert said.endswith("give it under purchase_prices, USD a server ({dgx-h100/h100-sxm5-80gbx8: ...})")


def test_a_component_estimate_names_its_old_parts(tmp_path: Path) -> None:
    said = _dated(_plan(tmp_path, "h100-sxm5-80gb", "dell-xe8640"))
    assert said is not None
    assert (
        "dell-xe8640-host $77,000 as of 2024-08-22 (27 months), h100-sxm5-80gb-gpu $30,000 as of 2023-08-16 (39 months)"
    ) in said


@pytest.mark.parametrize(
    ("gpu", "platform", "more"),
    [
        pytest.param("l40s-48gb", "dell-r760", "", id="prices-within-the-year"),
        pytest.param("h100-sxm5-80gb", "dgx-h100", "purchase_prices: {dgx-h100: 250000}\n", id="the-workloads-quote"),
    ],
)
def test_no_dated_price_says_nothing(tmp_path: Path, gpu: str, platform: str, more: str) -> None:
    plan = _plan(tmp_path, gpu, platform, more)
    assert plan.totals["capex_usd"] and _dated(plan) is None
