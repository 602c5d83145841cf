"""newuser102 (a buyer deciding to buy servers for a colocation rack or rent cloud GPUs for three years).

Item 1: on bare metal, where a server allowed has no catalog purchase price (a DGX B300), ``objective-fallback`` told
the buyer to "add their platforms under 'prices:' (USD per node-hour) to rank by cost"; on bare metal a rate under
``prices:`` rents the server from a provider (no capex, no rack, no colocation), so the advice turned a purchase into a
rental. It now names ``purchase_prices:`` and the configuration's key, and says what a ``prices:`` rate would do.
"""

from __future__ import annotations

from pathlib import Path

from generator.planner import plan_workload
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
