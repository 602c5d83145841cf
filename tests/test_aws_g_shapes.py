"""The AWS G5 / G6 / G6e sizes a platform team runs small services on (newuser26 item 12).

Figures: vCPU and memory from torchx's named_resources_aws.py (G5, G6e) and AWS's G6 / G6e tables as copied in
kiyoka/Sumibi benchmark/README.md (G6 xlarge-4xlarge; network of G6 and G6e 2xlarge / 4xlarge); hourly prices from
getnable/finopsmcp aws_prices.py (us-east-1 on-demand Linux, checked against the AWS Price List offer files of
2026-09-24). Expected costs are hand computations: nodes x price per hour x 730 h/month.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.conftest import catalog_json
from tests.test_cloud_shapes import LLAMA_8B, WORKLOAD
from tests.test_planner_budget_and_fabric import OBJECTIVE

TORCHX = (
    "https://github.com/meta-pytorch/torchx/blob/3297a6e2d0be496feaa688980e2b5ed5175f06ab/torchx/specs/named_resources_aws.py"
)
SUMIBI = "https://github.com/kiyoka/Sumibi/blob/089c41f42c0108585c3c23d4c443eff228e34cf9/benchmark/README.md"
FINOPS = "https://github.com/getnable/finopsmcp/blob/0bc99d535b46eb782a8e7f663adea81b40eed4e9/src/finops/aws_prices.py"
NVME = ["nvme.count", "nvme.total_tb"]
NET = ["nics.network_gbps_total"]
G6_BELIEFS = ["gpu_counts", "vcpus", "ram_gib"]


@pytest.mark.parametrize(
    ("platform", "gpu", "gpus", "vcpus", "ram_gib", "gbps", "usd_per_hour", "source", "unsourced"),
    [
        ("aws-g5-2xlarge", "a10g-24gb", 1, 8, 32, 10, 1.212, TORCHX, NVME + NET),
        ("aws-g5-4xlarge", "a10g-24gb", 1, 16, 64, 25, 1.624, TORCHX, NVME + NET),
        ("aws-g5-8xlarge", "a10g-24gb", 1, 32, 128, 25, 2.448, TORCHX, NVME + NET),
        ("aws-g5-16xlarge", "a10g-24gb", 1, 64, 256, 25, 4.096, TORCHX, NVME + NET),
        ("aws-g5-24xlarge", "a10g-24gb", 4, 96, 384, 50, 8.144, TORCHX, NVME + NET),
        ("aws-g6-xlarge", "l4-24gb", 1, 4, 16, 10, 0.8048, SUMIBI, NVME),
        ("aws-g6-2xlarge", "l4-24gb", 1, 8, 32, 10, 0.9776, SUMIBI, NVME),
        ("aws-g6-4xlarge", "l4-24gb", 1, 16, 64, 25, 1.3232, SUMIBI, NVME),
        # the cited README version stops at g6.4xlarge and no other citable page was found: the larger sizes are
        # unsourced records (GPU count included), priced from the sourced price list
        ("aws-g6-8xlarge", "l4-24gb", 1, 32, 128, 25, 2.0144, None, [*G6_BELIEFS, *NVME, *NET]),
        ("aws-g6-16xlarge", "l4-24gb", 1, 64, 256, 25, 3.3968, None, [*G6_BELIEFS, *NVME, *NET]),
        ("aws-g6-24xlarge", "l4-24gb", 4, 96, 384, 50, 6.6752, None, [*G6_BELIEFS, *NVME, *NET]),
        ("aws-g6-48xlarge", "l4-24gb", 8, 192, 768, 100, 13.3504, None, [*G6_BELIEFS, *NVME, *NET]),
        ("aws-g6e-2xlarge", "l40s-48gb", 1, 8, 64, 20, 2.24208, TORCHX, NVME),
        ("aws-g6e-4xlarge", "l40s-48gb", 1, 16, 128, 20, 3.00424, TORCHX, NVME),
        ("aws-g6e-8xlarge", "l40s-48gb", 1, 32, 256, 25, 4.52856, TORCHX, NVME + NET),
        ("aws-g6e-16xlarge", "l40s-48gb", 1, 64, 512, 35, 7.57719, TORCHX, NVME + NET),
        ("aws-g6e-24xlarge", "l40s-48gb", 4, 96, 768, 200, 15.06559, TORCHX, NVME + NET),
    ],
)
def test_aws_g_sizes_carry_their_sourced_figures(
    platform: str,
    gpu: str,
    gpus: int,
    vcpus: int,
    ram_gib: int,
    gbps: int,
    usd_per_hour: float,
    source: str | None,
    unsourced: list[str],
) -> None:
    (rec,) = [p for p in catalog_json("platforms")["platforms"] if p["id"] == platform]
    instance_type = platform.removeprefix("aws-").replace("-", ".", 1)
    assert (rec["instance_type"], rec["provider"], rec["kind"]) == (instance_type, "aws", "cloud-instance")
    assert (rec["gpu_ids"], rec["gpu_counts"], rec["vcpus"], rec["ram_gib"]) == ([gpu], [gpus], vcpus, ram_gib)
    assert (rec["nics"]["network_gbps_total"], rec["unsourced_fields"]) == (gbps, unsourced)
    if source is None:
        assert rec["unsourced"] is True and "source" not in rec and rec["research_notes"]
    else:
        assert source in rec["source"]
    (price,) = [p for p in catalog_json("prices")["prices"] if p["platform_id"] == platform]
    assert (price["usd"], price["unit"], price["region"], price["as_of"]) == (usd_per_hour, "hour", "us-east-1", "2026-09-24")
    assert (price["source"], price["unsourced_fields"]) == ([FINOPS], [])


def test_g6e_24xlarge_has_two_efa_devices() -> None:
    # torchx: aws_g6e_24xlarge devices={EFA_DEVICE: 2}; the 48xlarge's 4 devices are 4 x aws-efa-100g
    (rec,) = [p for p in catalog_json("platforms")["platforms"] if p["id"] == "aws-g6e-24xlarge"]
    assert rec["nics"]["fabric"] == {"count": 2, "nic_id": "aws-efa-100g"}


def _plan(tmp_path: Path, gpu: str, precision: str, rps: float, platforms: str = "") -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider="aws", gpu=gpu, model=LLAMA_8B, precision=precision, rps=rps, platforms=platforms))
    return plan_workload(load_workload(str(path)))


def test_one_l4_rents_a_g6_xlarge_not_a_four_gpu_g6_12xlarge(tmp_path: Path) -> None:
    # before the G6 single-GPU sizes the only L4 shape was g6.12xlarge: 4 GPUs at $4.6016/h for a 1-GPU service
    plan = _plan(tmp_path, "l4-24gb", "fp8", 0.2)
    (pool,) = plan.pools
    details = plan.deployments[0].details
    assert (pool.node.platform_id, pool.nodes, details["gpus_bought"]) == ("aws-g6-xlarge", 1, 1)
    assert details["usd_per_month"] == pytest.approx(0.8048 * 730, abs=0.005)


@pytest.mark.parametrize(
    ("platform", "usd_per_hour", "few_cores"),
    [
        # g6e.xlarge: 4 vCPUs = 2 cores for an L40S that wants 8 (the newuser26 finding)
        ("aws-g6e-xlarge", 1.861, True),
        ("aws-g6e-2xlarge", 2.24208, True),  # 8 vCPUs = 4 cores
        ("aws-g6e-4xlarge", 3.00424, False),  # 16 vCPUs = 8 cores
    ],
)
def test_a_pinned_larger_g6e_size_clears_few_cpu_cores(
    tmp_path: Path, platform: str, usd_per_hour: float, few_cores: bool
) -> None:
    plan = _plan(tmp_path, "l40s-48gb", "bf16", 1, f"  platforms: [{platform}]\n")
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes) == (platform, 1)
    assert plan.deployments[0].details["usd_per_month"] == pytest.approx(usd_per_hour * 730, abs=0.005)
    assert any(f.code == "few-cpu-cores" for f in plan.findings) is few_cores


def test_the_dear_g6e_xlarge_loses_to_a_g6e_2xlarge_not_to_four_l4s(tmp_path: Path) -> None:
    # test_planner_budget_and_fabric's workload on the whole catalog: with g6e.xlarge priced at $50/h the cheapest
    # layout is now one g6e.2xlarge ($2.24208/h), not the 4 x L4 g6.12xlarge ($4.6016/h, $3,359/month)
    text = OBJECTIVE.format(objective="cost", cap="").replace("  platforms: [", "  # platforms: [")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes) == ("aws-g6e-2xlarge", 1)
    assert plan.deployments[0].details["usd_per_month"] == pytest.approx(2.24208 * 730, abs=0.005)
