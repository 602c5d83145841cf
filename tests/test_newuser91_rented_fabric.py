"""newuser91 (a startup CTO weighing buying servers against renting for Llama 3.3 70B and Qwen3-32B chat).

Item 1: on bare metal with Lambda's hourly GH200 (1 GPU a server) the cheapest 70B FP8 layout is TP1 x PP3 over three
rented servers. The plan gave each a 400 Gb/s ConnectX-7 and said ``fabric-unpriced``: "the GPU fabric fitted to its
3 server(s) ... and the fabric's switches are not in capex", as of servers bought, for servers nobody buys or fits;
Lambda's rental record states no fabric between its instances. A rented pool so joined now gets the warning
``fabric-rented-unstated`` at the deployment, naming the provider and its price record, and no capex wording.
"""

from __future__ import annotations

from pathlib import Path

from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: startup-chat
deployments:
  - name: llama
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 2000
      avg_output_tokens: 300
      requests_per_second: 5
      slo: {ttft_p95_ms: 1000}
hardware:
  provider: baremetal
  gpus: [gh200-96gb]
"""


def test_rented_servers_spanned_get_no_capex_fabric_wording(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert pool.rented == "hour" and pool.nodes > 1 and any(n.role == "fabric" for n in pool.node.nics)
    codes = {f.code for f in plan.findings}
    # a rented server is not bought: neither the "not in capex" finding nor the switches' capex advice applies
    assert "fabric-unpriced" not in codes
    assert "fabric-switches-unpriced" not in codes
    (rented,) = [f for f in plan.findings if f.code == "fabric-rented-unstated"]
    assert rented.level == "warning"
    assert rented.path == "deployments[0]"
    assert f"pool {pool.name}: its {pool.nodes} server(s) are rented from Lambda" in rented.message
    assert "supermicro-ars-111gl-nhr-lambda-on-demand" in rented.message
    assert "capex" not in rented.message.replace("no capex of yours", "")


#: Two rented HGX A100 servers at the workload's own rate, each TP4 replica on one server: nothing spans them.
RENTED_WHOLE_REPLICAS = """\
version: 1
name: bmrent
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      {precision: fp8, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 5}
hardware:
  provider: baremetal
  gpus: [a100-sxm4-80gb]
prices: {hgx-a100-8gpu-oem: 5}
"""


def test_rented_servers_no_replica_spans_get_no_fabric_finding(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(RENTED_WHOLE_REPLICAS)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    (dep,) = plan.deployments
    assert pool.rented and pool.nodes > 1
    assert dep.tp * dep.pp <= pool.node.gpus, "a replica spans servers: the test's premise is gone"
    assert not [f for f in plan.findings if f.code.startswith("fabric-")]
