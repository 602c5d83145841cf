"""newuser108: a startup's pre-training rented per run against servers bought for a colocation rack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.fleet_diff import diff_plans
from generator.fleet_diff_markdown import markdown_diff
from generator.fleet_diff_run_break_even import runs_break_even
from generator.planner.checkpoint_shared import SHARED_CHECKPOINT_SOURCES, shared_checkpoint_finding


def _side(**totals: Any) -> dict[str, Any]:
    provider = "baremetal" if totals.get("capex_usd") else "aws"
    return {"provider": provider, "totals": totals, "pools": [], "deployments": []}


#: examples/pretrain-colo-h100.yaml bought (6 x DGX H100) and the same file with provider: aws (p5.48xlarge per run)
BOUGHT = _side(capex_usd=1620000.0, opex_usd_per_month=16696.98, usd_per_month=61696.98, training_usd_per_job=None)
RENTED = _side(capex_usd=None, opex_usd_per_month=0, usd_per_month=0, training_usd_per_job=146957.68)


def test_runs_rented_per_run_alone_get_the_runs_a_month_buying_must_carry() -> None:
    """Item 1: the diff gave the capex beside the run's rent and no break-even at all (the rent has no month)."""
    payback = diff_plans(RENTED, BOUGHT)["buy_vs_rent"]
    # 1,620,000 / 36 + 16,696.98 = 61,696.98 a month; / 146,957.68 a run = 0.42 runs a month, one every 2.4 months
    assert payback["runs_break_even"] == {
        "rent_usd_per_run": 146957.68,
        "bought_usd_per_month_over_amortization": 61696.98,
        "break_even_runs_per_month": 0.42,
        "break_even_months_between_runs": 2.4,
    }
    assert payback["break_even_months"] is None and payback["rent_usd_per_month"] is None
    text = markdown_diff(diff_plans(RENTED, BOUGHT))
    assert "never pays back" not in text  # a $0 month rented read as renting costing less than running the servers
    assert "buying costs less from 0.42 runs a month (one run every 2.4 months) at $146,958 a run rented" in text


def test_the_break_even_reads_the_bought_sides_amortisation() -> None:
    # over 60 months: 1,620,000 / 60 + 16,696.98 = 43,696.98; / 146,957.68 = 0.297 -> 0.3, one every 3.4 months
    figures = runs_break_even(1620000.0, 16696.98, 146957.68, 60)
    assert (figures["break_even_runs_per_month"], figures["break_even_months_between_runs"]) == (0.3, 3.4)


# ---------------------------------------------------------------- item 2: multi-node checkpoints on bare metal

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pretrain-colo-h100.yaml"


def _job(**details: Any) -> dict[str, Any]:
    """The 8B job's figures in examples/pretrain-colo-h100.yaml: 2 kept, 56.2 GB a node each, over 2 DGX H100."""
    base = {"hosts": 2, "method": "full", "checkpoint_bytes_per_node": 112423657472, "checkpoints_kept": 2}
    return base | {"checkpoint_write_s": 2.0} | details


def test_a_checkpoint_sharded_over_bought_nodes_needs_storage_every_node_mounts() -> None:
    found = shared_checkpoint_finding(0, "cpt8b", _job())
    assert found is not None and (found.level, found.code) == ("warning", "checkpoints-need-shared-storage")
    # one checkpoint: 112,423,657,472 / 2 kept x 2 nodes = 112.4 GB; 112 s at 1 GB/s
    assert "2 kept, 112.4 GB a checkpoint over 2 nodes, which the nodes' NVMe write in 2.0 s" in found.message
    assert "a checkpoint takes 112 s at 1 GB/s of its writes" in found.message
    assert all(source in found.message for source in SHARED_CHECKPOINT_SOURCES)


@pytest.mark.parametrize(
    "details",
    [
        {"hosts": 1},  # one node: every rank reads the coordinator's .metadata on its own disk
        {"method": "lora"},  # adapters written whole by one rank
        {"checkpoint_bytes_per_node": 0},
    ],
)
def test_no_shared_storage_is_asked_of_one_node_or_adapters(details: dict[str, Any]) -> None:
    assert shared_checkpoint_finding(0, "job", _job(**details)) is None


def test_the_example_warns_each_multi_node_job_and_a_cloud_keeps_its_own_warning(tmp_path: Path) -> None:
    _, plan = plan_file(str(EXAMPLE))
    codes = [(f.code, f.path) for f in plan.findings if "checkpoint" in f.code]
    assert codes == [
        ("checkpoints-need-shared-storage", "deployments[0]"),
        ("checkpoints-need-shared-storage", "deployments[1]"),
    ]
    rented = tmp_path / "rented.yaml"
    text = EXAMPLE.read_text().replace("provider: baremetal\n  buy: true\n", "provider: aws\n")
    rented.write_text(text.replace("  platforms: [dgx-h100]\n", "").replace("  rack_power_kw: 21", "  # rack"))
    _, cloud = plan_file(str(rented))
    assert {f.code for f in cloud.findings if "checkpoint" in f.code} == {"checkpoints-on-instance-store"}
