"""``specgen diff`` and a pool's minimum (``min_nodes``): the nodes it scales down to at the average rate.

With ``inference.average_requests_per_second`` a cloud pool scales between the average's nodes and the peak's (EKS
min_size, GKE autoscaling minNodeCount). A change of the average that moves the minimum alone read "No change to the
fleet"; the diff now reports it as a change of the pool, in place, minimum before -> after, and its nodes cell says
the range each side scales over.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.fleet_diff import diff_plans, markdown_diff
from tests.helpers import specgen_in_process as specgen


def _pool(nodes: int = 3, **extra: Any) -> dict[str, Any]:
    return {"name": "chat", "nodes": nodes, "power_w": 8000 * nodes, "usd_per_hour": 55.04 * nodes,
            "node": {"gpu_id": "h100-sxm5-80gb", "gpus": 8, "platform_id": "aws-p5-48xlarge"}, **extra}  # fmt: skip


def _fleet(pool: dict[str, Any]) -> dict[str, Any]:
    return {"provider": "aws", "totals": {}, "pools": [pool], "deployments": []}


@pytest.mark.parametrize(
    ("old", "new", "status", "nodes"),
    [
        pytest.param(_pool(min_nodes=1), _pool(min_nodes=2), "changed (minimum nodes 1 → 2, in place)", "1–3 → 2–3",
                     id="minimum-raised"),
        pytest.param(_pool(), _pool(min_nodes=1), "changed (minimum nodes 3 → 1, in place)", "3 → 1–3",
                     id="fixed-size-now-scales"),
        pytest.param(_pool(min_nodes=2), _pool(), "changed (minimum nodes 2 → 3, in place)", "2–3 → 3",
                     id="scaling-now-fixed"),
        pytest.param(_pool(min_nodes=1), _pool(nodes=4, min_nodes=2), "changed (minimum nodes 1 → 2, in place)",
                     "1–3 → 2–4", id="peak-and-minimum"),
        # newuser73 item 16: a fixed-size pool (a GKE nodeCount, no autoscaling) has no minimum: it is resized
        pytest.param(_pool(), _pool(nodes=4), "changed (nodes 3 → 4, resized in place)", "3 → 4", id="fixed-size-resized"),
    ],
)  # fmt: skip
def test_a_change_of_the_minimum_is_a_pool_change(old: dict[str, Any], new: dict[str, Any], status: str, nodes: str) -> None:
    result = diff_plans(_fleet(old), _fleet(new))
    (pool,) = result["pools"]
    assert pool["status"] == "changed"
    assert (pool["old"].get("min_nodes"), pool["new"].get("min_nodes")) == (old.get("min_nodes"), new.get("min_nodes"))
    text = markdown_diff(result)
    assert f"| `chat` | {status} | h100-sxm5-80gb | {nodes} |" in text
    assert "No change to the fleet" not in text


def test_the_same_minimum_is_no_change() -> None:
    result = diff_plans(_fleet(_pool(min_nodes=1)), _fleet(_pool(min_nodes=1)))
    assert result["pools"] == []
    assert "No change to the fleet." in markdown_diff(result)


@pytest.mark.parametrize("value", ["two", True, None])
def test_a_hand_edited_minimum_that_is_no_number_is_left_out(value: Any) -> None:
    """A spec.json given to diff may hold anything there: it is not compared, never a traceback."""
    result = diff_plans(_fleet(_pool(min_nodes=value)), _fleet(_pool()))
    assert result["pools"] == []


#: One 70B FP8 service on AWS at a 40 req/s peak: 3 nodes of 8 H100 at the peak; the average sets the minimum.
WORKLOAD = """\
version: 1
name: chat
deployments:
  - name: chat70
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: 40
      average_requests_per_second: {average}
      min_replicas: 2
      slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}
hardware:
  provider: aws
outputs: [terraform]
"""


def test_specgen_diff_reports_the_minimum_of_two_workloads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """12 -> 34 req/s average: the peak's 3 nodes stay, the minimum rises 2 -> 3 (min_replicas 2 hold 2 nodes at 12;
    34 req/s need 5 x TP4 of 8.29 req/s, on 3 nodes of 8 GPUs)."""
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(WORKLOAD.format(average=12))
    new.write_text(WORKLOAD.format(average=34))
    code, out, err = specgen(capsys, "diff", str(old), str(new), "--format", "json")
    assert code == 0, err
    (pool,) = json.loads(out)["pools"]
    low, high = pool["old"]["min_nodes"], pool["new"].get("min_nodes", pool["new"]["nodes"])
    assert pool["old"]["nodes"] == pool["new"]["nodes"] and low < high
    code, out, err = specgen(capsys, "diff", str(old), str(new))
    assert code == 0, err
    assert f"changed (minimum nodes {low} → {high}, in place)" in out
    assert "No change to the fleet" not in out
