"""newuser66 item 1: services sharing a partly owned pool counted more owned servers than the workload owns.

A chat service with ``min_replicas: 2`` on the two owned DGX H100 and a batch service beside it in one pool of five:
the pool counted 3 owned and 2 bought (capex $540,000) where 2 are owned and 3 bought ($810,000 at the catalog's
$270,000 a DGX H100), so adding the chat service lowered the bill.
"""

from __future__ import annotations

from pathlib import Path

from generator.api import plan_as_deployed

TWO_SERVICES = """\
version: 1
name: acme-ml
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1200
      avg_output_tokens: 350
      requests_per_second: 4
      average_requests_per_second: 1.5
      min_replicas: 2
      slo: {ttft_p95_ms: 1500, tpot_ms: 50}
  - name: nightly-eval
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      service_class: batch
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 400
      requests_per_second: 92.6
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
  rack_power_kw: 20
  inventory:
    - platform: dgx-h100
      count: 2
      hosts: [{name: dgx-01}, {name: dgx-02}]
"""


def test_a_shared_pool_counts_no_more_owned_servers_than_are_owned(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(TWO_SERVICES)
    plan = plan_as_deployed(str(path))[1]
    owned = [p for p in plan.pools if p.owned_nodes]
    assert sum(p.owned_nodes for p in owned) == 2
    bought = sum(p.nodes - p.owned_nodes for p in plan.pools if p.node.platform_id == "dgx-h100")
    assert plan.totals["capex_usd"] == bought * 270_000
    assert all(f"{p.owned_nodes} owned server(s)" in (p.price_basis or "") for p in owned)
