"""A type the catalog rents only in other regions ranks after the priced layouts (newuser28 item 8).

Moving a GKE cluster to us-east4, where the catalog prices a3-megagpu-8g but not a3-highgpu-8g (us-central1 only),
switched every deployment's ranking to nameplate power: the chat service went to 3 x a3-highgpu-2g, a type Google
sells only as Spot and Flex-start, and `diff` read "-" for the fleet's month. The plan now ranks the priced layouts by
cost and sets the unpriced type's layout, at its other region's rate, beside the cheapest priced one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.fleet_diff import diff_plans, markdown_diff

GKE = """\
version: 1
name: startup-ai
deployments:
  - {{name: moe-chat, model: Qwen/Qwen3-30B-A3B, inference: {{precision: fp8, max_context_tokens: 16384,
     avg_input_tokens: 3000, avg_output_tokens: 400, requests_per_second: 40, slo: {{ttft_p95_ms: 1500, tpot_ms: 40}}}}}}
  - {{name: nightly-lora, model: meta-llama/Llama-3.1-70B-Instruct, training: {{method: lora, lora_rank: 16,
     sequence_length: 4096, dataset_tokens: 100000000, epochs: 1, deadline_hours: 6, runs_per_month: 30}}}}
hardware: {{provider: gcp, gpus: [h100-sxm5-80gb, h200-sxm-141gb]}}
kubernetes: {{gcp_project: startup-ml, location: {region}, zone: {region}-a}}
"""


def _plan(tmp_path: Path, region: str) -> dict[str, Any]:
    path = tmp_path / f"{region}.yaml"
    path.write_text(GKE.format(region=region), encoding="utf-8")
    plan: dict[str, Any] = plan_file(str(path))[1].to_dict()
    return plan


def test_a_type_priced_only_elsewhere_ranks_after_the_priced_ones(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "us-east4")
    assert {p["node"]["platform_id"] for p in plan["pools"]} == {"gcp-a3-megagpu-8g"}  # the type priced in us-east4
    assert [d["details"]["objective_used"] for d in plan["deployments"]] == ["cost", "cost"]
    assert plan["totals"]["usd_per_month"] is not None and plan["totals"]["training_usd_per_job"] is not None
    said = [f for f in plan["findings"] if f["code"] == "priced-elsewhere-ranked"]
    assert not [f for f in plan["findings"] if f["code"] == "objective-fallback"]
    assert [f["path"] for f in said] == ["deployments[0]", "deployments[1]"]
    # at us-central1's $88.49 a node-hour the a3-highgpu-8g layout is cheaper than the priced A3 Mega: a warning
    month, run = (f["message"] for f in said)
    assert month.startswith("gcp-a3-highgpu-8g has no us-east4 price, so layouts there are ranked after priced ones")
    assert "on 1 x gcp-a3-highgpu-8g (8 x h100-sxm5-80gb) at the us-central1 rate, would cost $64,598/month" in month
    assert "against $67,844/month for the cheapest priced, " in month
    assert " per run against $" in run and "per run for the cheapest priced" in run
    assert all(f["level"] == "warning" and "cheaper at another region's rate: give the type's USD per node-hour in "
               "us-east4 under 'prices:'" in f["message"] for f in said)  # fmt: skip


def test_where_every_type_is_priced_nothing_is_said(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "us-central1")  # a3-megagpu-8g is unpriced here but dominated by the priced a3-highgpu-8g
    codes = {f["code"] for f in plan["findings"]}
    assert "priced-elsewhere-ranked" not in codes and "objective-fallback" not in codes
    assert {p["node"]["platform_id"] for p in plan["pools"]} == {"gcp-a3-highgpu-8g"}


@pytest.mark.parametrize("side", ["old", "new"])
def test_a_diff_names_the_pools_without_a_price(side: str) -> None:
    priced = {"name": "chat", "node": {"gpu_id": "h100-sxm5-80gb", "gpus": 8}, "nodes": 1, "power_w": 10200}
    unpriced = priced | {"name": "chat_rtx", "usd_per_hour": None, "price_basis": "no purchase price for dell-xe7740"}

    def plan(pool: dict[str, Any], usd: float | None) -> dict[str, Any]:
        totals = {"gpus": 8, "nodes": 1, "racks": 1, "power_w": 10200, "usd_per_month": usd}
        return {"provider": "baremetal", "totals": totals, "pools": [pool], "deployments": []}

    sides = {"old": plan(priced | {"usd_per_hour": 14.0}, 10220.0), "new": plan(unpriced, None)}
    if side == "old":
        sides = {"old": sides["new"], "new": sides["old"]}
    result = diff_plans(sides["old"], sides["new"])
    assert result["unpriced"] == {side: [{"pool": "chat_rtx", "why": "no purchase price for dell-xe7740"}]}
    assert (
        f"{side.upper()}'s fleet has no price for `chat_rtx` (no purchase price for dell-xe7740): its cost rows read `-`."
        in markdown_diff(result)
    )
