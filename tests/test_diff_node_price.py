"""``specgen diff`` and a pool whose price a node-hour moves (newuser77 item 2).

A rate given under ``prices:`` (a reservation's, say) changes only the cost cells of a pool: before, its row read a bare
"changed" beside equal nodes, GPUs and power, and the PR comment never said why. The status now says the rate, old and
new, a node-hour, beside whatever else it says (a resize); a resize at the same rate says nothing of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.fleet_diff import diff_plans, markdown_diff
from tests.helpers import specgen_in_process as specgen


def _pool(nodes: int = 1, rate: float = 48.0, **extra: Any) -> dict[str, Any]:
    return {"name": "chat", "nodes": nodes, "power_w": 8092 * nodes, "usd_per_hour": rate * nodes,
            "node": {"gpu_id": "mi300x-192gb", "gpus": 8, "platform_id": "azure-standard-nd96isr-mi300x-v5"},
            **extra}  # fmt: skip


def _fleet(pool: dict[str, Any]) -> dict[str, Any]:
    return {"provider": "azure", "totals": {}, "pools": [pool], "deployments": []}


@pytest.mark.parametrize(
    ("old", "new", "status"),
    [
        pytest.param(_pool(), _pool(rate=30.0), "changed (price $48.00 → $30.00 a node-hour)", id="rate-alone"),
        pytest.param(_pool(), _pool(nodes=3, rate=30.0),
                     "changed (nodes 1 → 3, resized in place, price $48.00 → $30.00 a node-hour)", id="rate-and-resize"),
        pytest.param(_pool(), _pool(nodes=3), "changed (nodes 1 → 3, resized in place)", id="resize-same-rate"),
        pytest.param(_pool(min_nodes=1), _pool(min_nodes=2, rate=40.0),
                     "changed (minimum nodes 1 → 2, in place, price $48.00 → $40.00 a node-hour)", id="minimum-and-rate"),
        # a replacement says what moves, as before: new nodes at another capacity bill another rate anyway
        pytest.param(_pool(capacity_type="on-demand"), _pool(capacity_type="spot", rate=20.0),
                     "replaced (on-demand → spot)", id="spot-replacement-as-before"),
    ],
)  # fmt: skip
def test_a_pool_row_says_its_rate_moved(old: dict[str, Any], new: dict[str, Any], status: str) -> None:
    result = diff_plans(_fleet(old), _fleet(new))
    (pool,) = result["pools"]
    assert pool["status"] == "changed"
    assert f"| `chat` | {status} | mi300x-192gb |" in markdown_diff(result)


def test_a_workload_given_a_reserved_rate(tmp_path: Path, capsys: Any) -> None:
    """The persona's diff: the AKS MI300X service, then the same with the rate its reservation bills."""
    text = """\
version: 1
name: llama70-aks-amd
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 10
      slo: {ttft_p95_ms: 2000, tpot_ms: 50}
hardware:
  provider: azure
  gpus: [mi300x-192gb]
kubernetes:
  location: eastus2
outputs: [terraform, kubernetes]
"""
    (tmp_path / "old.yaml").write_text(text)
    (tmp_path / "new.yaml").write_text(text + "prices: {azure-standard-nd96isr-mi300x-v5: 30.0}\n")
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"))
    assert code == 0, err
    # 8,092 W before fix123: a cloud VM's CPU power is its cores' share of the host CPU chosen, the VM's 96 physical
    # cores over EPYC 7742's 64 = 1.5 sockets (1 before): + 0.5 x 225 W x 1.10 (fans) / 0.94 (PSU) = +132 W
    assert (
        "| `chat_mi300x_192gb` | changed (price $48.00 → $30.00 a node-hour) | mi300x-192gb | 1 → 1 | 8 → 8 | "
        "8,224 → 8,224 | 35,040.00 → 21,900.00 |"
    ) in out
