"""An SGLang replica over several hosts is told SGLang's multi-node launch, not vLLM's (newuser90).

DeepSeek-R1 (FP8, 671B) does not fit one 8 x H100 server: the plan runs each replica TP8 x PP2 over two servers.
With ``engine: sglang`` the replica-spans-hosts finding and the deployment's Why said "vLLM over Ray or
multiprocessing across nodes" with vLLM's multi-node and LeaderWorkerSet pages, which an SGLang operator cannot
follow: SGLang starts one server a host with ``--nnodes``, ``--node-rank`` and ``--dist-init-addr host:port``
(https://docs.sglang.io/references/multi_node_deployment/multi_node.html) and has its own LeaderWorkerSet page.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.planner.multi_host import (
    LEADER_WORKER_SET_URL,
    SGLANG_DIST_INIT_PORT,
    SGLANG_LWS_URL,
    SGLANG_MULTI_NODE_URL,
    VLLM_MULTI_NODE_URL,
    multi_host_note,
)
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: r1-h100
deployments:
  - name: r1
    model: deepseek-ai/DeepSeek-R1
    inference:
      engine: sglang
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 3000
      avg_output_tokens: 1000
      requests_per_second: 5
      slo:
        ttft_p95_ms: 2000
        tpot_ms: 50
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  rack_power_kw: 40
"""

SGLANG_LAUNCH_TWO = (
    "launch the engine multi-node (SGLang on each host with --nnodes 2, its own --node-rank (0, 1) and "
    f"--dist-init-addr <the replica's first host>:{SGLANG_DIST_INIT_PORT}, {SGLANG_MULTI_NODE_URL}; "
    f"on Kubernetes one LeaderWorkerSet group of 2 pods per replica, {SGLANG_LWS_URL})"
)


@pytest.mark.parametrize(
    ("platform", "gpus_per_node", "replica_gpus", "hosts"),
    [("dell-xe9680-hgx-h100-h200", 8, 16, 2), ("dell-xe9680-hgx-h100-h200", 8, 24, 3), ("gb200-nvl72", 72, 8, 2)],
)
def test_sglang_note_names_sglang_launch(platform: str, gpus_per_node: int, replica_gpus: int, hosts: int) -> None:
    spec = catalog.platforms()[platform]
    note = multi_host_note(spec, gpus_per_node, replica_gpus, (), "sglang")
    assert note is not None
    ranks = ", ".join(str(rank) for rank in range(hosts))
    assert f"SGLang on each host with --nnodes {hosts}, its own --node-rank ({ranks})" in note
    assert SGLANG_MULTI_NODE_URL in note and SGLANG_LWS_URL in note
    assert "vLLM" not in note and VLLM_MULTI_NODE_URL not in note and LEADER_WORKER_SET_URL not in note
    # vLLM's note is unchanged
    vllm_note = multi_host_note(spec, gpus_per_node, replica_gpus, (), "vllm")
    assert vllm_note is not None and VLLM_MULTI_NODE_URL in vllm_note and "SGLang" not in vllm_note


def test_sglang_r1_over_two_h100_servers_finding(tmp_path: Path) -> None:
    path = tmp_path / "r1.yaml"
    path.write_text(WORKLOAD)
    plan = plan_workload(load_workload(str(path)))
    (deployment,) = plan.deployments
    assert (deployment.tp, deployment.pp) == (8, 2)
    (finding,) = [f for f in plan.findings if f.code == "replica-spans-hosts"]
    assert SGLANG_LAUNCH_TWO in finding.message
    assert "vLLM" not in finding.message
    assert any(SGLANG_LAUNCH_TWO in reason for reason in deployment.reasons)


def test_sglang_pipeline_hop_names_sglang(tmp_path: Path) -> None:
    """The hop between the two servers' stages: SGLang sends the hidden state and the residual (PPProxyTensors)."""
    path = tmp_path / "r1.yaml"
    path.write_text(WORKLOAD)
    plan = plan_workload(load_workload(str(path)))
    (deployment,) = plan.deployments
    (hop,) = [reason for reason in deployment.reasons if "the model times no hop" in reason]
    assert "(SGLang sends the hidden state and the residual, 16-bit)" in hop
    assert "vLLM" not in hop
