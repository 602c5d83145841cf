"""newuser102 (a buyer deciding to buy servers for a colocation rack or rent cloud GPUs for three years).

Item 1: on bare metal, where a server allowed has no catalog purchase price (a DGX B300), ``objective-fallback`` told
the buyer to "add their platforms under 'prices:' (USD per node-hour) to rank by cost"; on bare metal a rate under
``prices:`` rents the server from a provider (no capex, no rack, no colocation), so the advice turned a purchase into a
rental. It now names ``purchase_prices:`` and the configuration's key, and says what a ``prices:`` rate would do.

Item 2: a catalog purchase price with no date (a legacy ``prices.json`` record of ``unit: purchase``, whose ``as_of``
the schema leaves optional) was bought in silence: ``price-dated`` names every dated one over a year old, and skipped
an undated one, whose age is not known at all. It is now named as undated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload, tco
from generator.planner.plan import Plan
from generator.workload import load_workload

BUY = """\
version: 1
name: buyer
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 3000
      avg_output_tokens: 400
      requests_per_second: 15
      slo: {ttft_p95_ms: 2000, tpot_ms: 50}
hardware: {provider: baremetal, gpus: [h100-sxm5-80gb, b300-sxm-270gb]}
"""


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return plan_workload(load_workload(str(path)))


def test_a_buyer_is_told_to_quote_the_unpriced_server_under_purchase_prices(tmp_path: Path) -> None:
    """Item 1: the fallback's advice names purchase_prices and the key it takes, not a rental rate alone."""
    plan = _plan(tmp_path, BUY)
    (message,) = [f.message for f in plan.findings if f.code == "objective-fallback"]
    assert "no price could be formed for dgx-b300 with b300-sxm-270gb" in message
    assert "under 'purchase_prices:' (USD a server bought, key 'dgx-b300/b300-sxm-270gbx8'" in message
    assert "rents a server from a provider instead of buying it" in message
    assert "; add their platforms under 'prices:'" not in message


def test_the_key_the_advice_names_prices_the_server_bought(tmp_path: Path) -> None:
    """Item 1: the key named is one the workload takes: with it the plan ranks by cost again, nothing unpriced."""
    plan = _plan(tmp_path, BUY + "purchase_prices: {dgx-b300/b300-sxm-270gbx8: 550000}\n")
    assert not any(f.code == "objective-fallback" for f in plan.findings)
    assert plan.deployments[0].details["objective_used"] == "cost"


A100 = """\
version: 1
name: a100buy
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 40}
hardware: {provider: baremetal, gpus: [a100-sxm4-40gb], platforms: [dgx-a100]}
"""


@pytest.fixture
def undated_dgx_a100(monkeypatch: pytest.MonkeyPatch) -> object:
    """The catalog's one legacy purchase price (the DGX A100's 2020 list price) with its date taken off."""
    prices = catalog.prices()
    rec = prices["dgx-a100-list-purchase-2020"]
    monkeypatch.setitem(prices, rec.id, rec._replace(as_of=None))
    tco.priced_from.cache_clear()
    yield rec
    tco.priced_from.cache_clear()


def test_a_dated_legacy_purchase_price_is_said_with_its_age(tmp_path: Path) -> None:
    """Item 2: the record as the catalog holds it, $199,000 as of 2020-05-14, 78 months before 2026-12-01."""
    plan = _plan(tmp_path, A100)
    assert plan.pools[0].capex_usd == 199_000
    (message,) = [f.message for f in plan.findings if f.code == "price-dated"]
    assert "dgx-a100-list-purchase-2020 $199,000 as of 2020-05-14 (78 months)" in message
    assert "undated" not in message


def test_an_undated_purchase_price_is_named_not_bought_in_silence(tmp_path: Path, undated_dgx_a100: object) -> None:
    """Item 2: before, no price-dated finding at all; the server was bought at $199,000 of unknown age."""
    plan = _plan(tmp_path, A100)
    assert plan.pools[0].capex_usd == 199_000
    (message,) = [f.message for f in plan.findings if f.code == "price-dated"]
    assert "(specgen reads no clock: its prices are as old as that), or undated: " in message
    assert "chat_a100_sxm4_40gb: dgx-a100-list-purchase-2020 $199,000 undated (its record gives no date)" in message
    assert "{dgx-a100/a100-sxm4-40gbx8: ...}" in message
