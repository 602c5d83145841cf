"""Replicas that span nodes: the spot reclaim they are exposed to, the near tie that keeps them in one node, and EFA.

newuser81 items 5 and 6 (fix141). Figures (catalog us-east-1 on-demand rates, 730 h a month):

- Qwen3-30B-A3B BF16 at 40 req/s: 2 x TP1 PP2 on 4 x p5.4xlarge ($6.88/h, $20,090 a month) against 8 x TP1 on
  8 x p5.4xlarge ($40,179): one H100 holds the 56.9 GiB of weights with little KV cache left, so the single-GPU
  replicas sustain a fraction as much; the layout over two nodes a replica is chosen by a margin the near tie
  leaves alone, and on spot each replica stops with either of its two nodes reclaimed.
- Llama-3.3-70B FP8 at 12 req/s, nodes_down_tolerated 1: 9 x TP1 PP2 on 18 x p5.4xlarge, 18 x $6.88 x 730 =
  $90,403.20, against 8 x TP2 on 2 x p5en.48xlarge, 2 x $63.296 x 730 = $92,412.16 (2.2% more), and at a given
  $62.50/h 2 x $62.50 x 730 = $91,250.00, 0.93% more: within the near tie's 1%, where the layout in one node wins.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from ruamel.yaml import YAML

from generator.planner import plan_workload
from generator.planner.plan import DeploymentPlan, Pool
from generator.planner.spot import reclaim_span
from generator.planner.spread import replicas_a_node_holds
from generator.render import deployed, render_plan
from generator.render.eks import PATH as EKS_PATH
from generator.render.karpenter_aws import network_interfaces
from generator.workload import load_workload

QWEN = """version: 1
name: qwen
deployments:
  - name: qwen-batch
    model: Qwen/Qwen3-30B-A3B
    capacity_type: spot
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: 40
{extra}      slo: {{ttft_p95_ms: 10000, tpot_ms: 100}}
hardware:
  provider: aws
  gpus: [h100-sxm5-80gb]
  platforms: [aws-p5-4xlarge]
outputs: [terraform]
"""

CHAT = """version: 1
name: chat70
deployments:
  - name: chat70b
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 12
      p95_input_tokens: 8000
      nodes_down_tolerated: 1
      slo: {{ttft_p95_ms: 1500, tpot_ms: 50}}
hardware:
  provider: aws
  gpus: [h100-sxm5-80gb, h200-sxm-141gb]
  platforms: [aws-p5-4xlarge, aws-p5-48xlarge, aws-p5en-48xlarge]
kubernetes: {{location: us-east-1}}
outputs: [terraform, kubernetes]
{prices}"""


def _plan(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "workload.yaml"
    path.write_text(text)
    loaded = load_workload(str(path))
    return loaded, deployed(plan_workload(loaded), loaded.workload)


def _messages(plan: Any, code: str) -> list[str]:
    return [f.message for f in plan.findings if f.code == code]


@pytest.mark.parametrize(
    ("node_gpus", "hosts", "nodes", "width", "replicas", "expected"),
    [
        (1, 1, 4, 2, 2, (2, 1, 4)),  # TP1 PP2 over single-GPU p5.4xlarge: each of 4 nodes stops one replica
        (8, 1, 4, 16, 2, (2, 1, 4)),  # TP8 PP2 over two 8-GPU servers each
        (4, 1, 6, 6, 3, (2, 1, 6)),  # 6 GPUs on 4-GPU instances: whole nodes a replica, 2 idle GPUs each
        (72, 18, 1, 6, 3, (2, 2, 5)),  # 6-GPU replicas packed over an NVL72's 4-GPU trays: a tray holds two replicas' ranks
        (8, 1, 1, 8, 1, None),  # TP8 in one 8-GPU node
        (1, 1, 2, 1, 2, None),  # one GPU a replica
    ],
)
def test_reclaim_span_counts_the_nodes_a_replica_needs(
    node_gpus: int, hosts: int, nodes: int, width: int, replicas: int, expected: tuple[int, int, int] | None
) -> None:
    pool = SimpleNamespace(node=SimpleNamespace(gpus=node_gpus, hosts=hosts), nodes=nodes)
    dep = SimpleNamespace(stage_gpus=width, pp=1, replicas=replicas)
    assert reclaim_span(cast("DeploymentPlan", dep), cast("Pool", pool)) == expected


@pytest.mark.parametrize(
    ("extra", "replicas", "headroom"),
    [
        ("", 2, "its 2 replica(s) are what the peak needs (2), none to spare for a reclaim"),
        (
            "      min_replicas: 3\n",
            3,
            "its 3 replica(s) are 1 more than the 2 the peak needs, which covers the replica one node's reclaim stops",
        ),
    ],
)
def test_serving_on_spot_counts_every_node_a_replica_spans(tmp_path: Path, extra: str, replicas: int, headroom: str) -> None:
    _, plan = _plan(tmp_path, QWEN.format(extra=extra))
    (dep,) = plan.deployments
    assert (dep.replicas, dep.pp, dep.stage_gpus, plan.pools[0].nodes) == (replicas, 2, 1, 2 * replicas)
    (message,) = _messages(plan, "serving-on-spot")
    # newuser81 item 5: "its 2 replica(s) are what the peak needs", nothing of the 4 nodes any of which stops one
    assert (
        f"each of its {replicas} replica(s) spans 2 spot nodes, so a reclaim of any one of their {2 * replicas} nodes "
        "stops the replica with a rank on it and leaves its other node(s) idle until a new one joins: a replica is 2 "
        "times as exposed to a reclaim as one on a single node"
    ) in message
    assert headroom in message
    assert "a layout whose replicas each fit one node (the deployment's platform and parallelism pin one" in message


def test_a_near_tie_on_cost_keeps_every_replica_in_one_node(tmp_path: Path) -> None:
    _, plan = _plan(tmp_path, CHAT.format(prices="prices:\n  aws-p5en-48xlarge: 62.5\n"))
    (dep,) = plan.deployments
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes, dep.replicas, dep.tp, dep.pp) == ("aws-p5en-48xlarge", 2, 8, 2, 1)
    chosen = next(r for r in dep.reasons if r.startswith("chosen by cost"))
    assert (
        "kept over 9 x TP1 PP2 on 18 x aws-p5-4xlarge (1 x h100-sxm5-80gb): $90,403.20 against $91,250.00 a month, 0.93% "
        "cheaper, within 1% of its cost (a near tie, closer than the serving model tells them apart), settled by replicas "
        "each within one node against 2 nodes each"
    ) in chosen
    assert not _messages(plan, "replica-spans-hosts")


def test_past_the_near_tie_the_cheaper_layout_over_nodes_names_the_one_within_a_node(tmp_path: Path) -> None:
    _, plan = _plan(tmp_path, CHAT.format(prices=""))
    (dep,) = plan.deployments
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes, dep.replicas, dep.pp) == ("aws-p5-4xlarge", 18, 9, 2)
    (message,) = _messages(plan, "replica-spans-hosts")
    assert (
        "the cheapest layout whose replicas each fit one node: 8 x TP2 on 2 x aws-p5en-48xlarge (8 x h200-sxm-141gb), "
        "$92,412 against $90,403 a month (2.2% more; within 1% it would have been chosen), which the deployment's "
        "platform: aws-p5en-48xlarge and parallelism: {tp: 2, pp: 1} pin"
    ) in message


def test_efa_is_attached_only_where_gpus_talk_across_nodes(tmp_path: Path) -> None:
    # 18 p5.4xlarge whose replicas span two each: EFA on; 2 p5en.48xlarge whose TP2 replicas stay in NVLink: off
    for prices, efa in (("", True), ("prices:\n  aws-p5en-48xlarge: 62.5\n", False)):
        loaded, plan = _plan(tmp_path, CHAT.format(prices=prices))
        files = render_plan(plan, loaded.workload)
        (group,) = json.loads(files[EKS_PATH])["eks_managed_node_groups"].values()
        assert ("enable_efa_support" in group, "create_placement_group" in group) == (efa, efa)
        (path,) = [p for p in files if "/ec2nodeclass-" in p]
        node_class = YAML(typ="safe", pure=True).load(files[path])
        assert ("networkInterfaces" in node_class["spec"]) == efa
        assert ("cluster/efa-device-plugin/values.yaml" in files) == efa
    (pool,) = plan.pools
    assert network_interfaces(pool, crosses=False) == []
    assert len(network_interfaces(pool)) == 1 + 16  # p5en.48xlarge: the ENA and 16 EFA-only interfaces where asked


@pytest.mark.parametrize(
    ("host_gpus", "width", "shares", "trays", "expected"),
    [
        (8, 2, None, False, 4),  # TP2 on an 8-GPU server: four replicas
        (1, 2, None, False, 1),  # TP1 PP2 over single-GPU instances: one replica's rank a node
        (4, 6, None, False, 1),  # 6 GPUs on 4-GPU instances: each replica takes whole nodes
        (4, 8, None, True, 1),  # TP8 over two NVL72 trays: whole trays
        (4, 6, None, True, 2),  # 6-GPU replicas packed over NVL72 trays: a tray holds ranks of two
    ],
)
def test_a_node_down_takes_every_replica_with_a_rank_on_it(
    host_gpus: int, width: int, shares: int | None, trays: bool, expected: int
) -> None:
    assert replicas_a_node_holds(host_gpus, width, shares, trays) == expected
