"""Whole servers on the cloud (#8): small deployments rent the 1-, 2- or 4-GPU shape that fits, not an 8-GPU one.

Expected costs are hand computations: nodes x the sourced on-demand price per hour (prices.json) x 730 h/month.
GCP prices: Cyclenerd pricing.yml, us-central1 'hour' field; AWS prices: getnable/finopsmcp aws_prices.py, us-east-1;
Azure prices: the Azure Retail Prices API, Linux pay-as-you-go, eastus2 (2026-10-07).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.calculator.report import plan_text
from generator.planner import plan_workload
from generator.workload import load_workload
from tests.conftest import REPO, catalog_json

#: One chat deployment on one provider and GPU (``platforms`` is an optional ``  platforms: [...]`` line).
WORKLOAD = """\
version: 1
name: shapes
deployments:
  - name: chat
    model: {model}
    inference:
      precision: {precision}
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: {rps}
      slo:
        ttft_p95_ms: 2000
        tpot_ms: 50
hardware:
  provider: {provider}
  gpus: [{gpu}]
{platforms}objective: cost
"""

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


def _outputs(provider: str) -> str:
    """The outputs line of a plan-only GCP workload: GKE's node pools would need the cluster (fuzz35 item 6)."""
    return "outputs: [terraform, ansible]\n" if provider == "gcp" else ""


#: Microsoft's earlier NCads H100 v5 page: 'Temp Disk NVMe (GiB)', 'NVIDIA NVLink Interconnect: Supported'.
OLD_NCADS_H100_PAGE = (
    "https://github.com/MicrosoftDocs/azure-compute-docs/blob/680de9713fdd3fde858f4083d88145627149ebeb/"
    "articles/virtual-machines/ncads-h100-v5.md"
)
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


@pytest.mark.parametrize(
    ("provider", "gpu", "model", "precision", "rps", "platform", "nodes", "gpus_bought", "usd_per_hour"),
    [
        # the case: 8B at 2 req/s fits one A100 80GB, so one a2-ultragpu-1g ($5.06879789041096/h)
        pytest.param(
            "gcp", "a100-sxm4-80gb", LLAMA_8B, "bf16", 2, "gcp-a2-ultragpu-1g", 1, 1, 5.06879789041096, id="gcp-a100-80gb"
        ),
        pytest.param("gcp", "a100-sxm4-40gb", LLAMA_8B, "bf16", 2, "gcp-a2-highgpu-1g", 1, 1, 3.673385, id="gcp-a100-40gb"),
        # a 70B at FP8 needs four A100 80GB: the 4-GPU shape, not half an a2-ultragpu-8g
        pytest.param(
            "gcp", "a100-sxm4-80gb", LLAMA_70B, "fp8", 1, "gcp-a2-ultragpu-4g", 1, 4, 20.2751915616438, id="gcp-a100-80gb-x4"
        ),
        pytest.param("gcp", "l4-24gb", LLAMA_8B, "fp8", 0.2, "gcp-g2-standard-4", 1, 1, 0.706832255, id="gcp-l4-x1"),
        # two TP1 replicas: two 1-GPU g2-standard-4 ($0.707/h each) undercut one 2-GPU g2-standard-24 ($2.001/h)
        pytest.param("gcp", "l4-24gb", LLAMA_8B, "fp8", 1, "gcp-g2-standard-4", 2, 2, 0.706832255, id="gcp-l4-x2"),
        # three 1-GPU g5.xlarge ($1.006/h each, $3.018/h) undercut one 4-GPU g5.12xlarge ($5.672/h). fix74: a replica
        # holds 7 places, a request 10.33 s; two replicas' 14 places at 1 req/s are 74% busy: 21% of requests wait, p95
        # 4.06 s past the 1.05 s slack (2 s TTFT target - 946 ms TTFT p95 at the most load). fix90: at 0.5 req/s each a
        # replica runs 15 places (a request 10.29 s): two (30 places, 34% busy) wait 0.0%, so two g5.xlarge
        pytest.param("aws", "a10g-24gb", LLAMA_8B, "bf16", 1, "aws-g5-xlarge", 2, 2, 1.006, id="aws-a10g-x1"),
        # Azure NC A100 v4 (A100 80GB PCIe) and NCads H100 v5 (H100 NVL): the 1-, 2- and 4-GPU sizes
        pytest.param(
            "azure", "a100-pcie-80gb", LLAMA_8B, "bf16", 2, "azure-standard-nc24ads-a100-v4", 1, 1, 3.673, id="azure-a100-x1"
        ),
        # fix74: at 0.9 req/s (1 before), one TP4 replica (16 places, a request 10.21 s) is 57% busy: 3.0% of requests
        # wait, p95 0. At 1 req/s it is 64% busy, 6.7% wait, p95 0.52 s past the 0.31 s slack (2 s - 1,688 ms TTFT p95
        # at batch 16), and two TP2 on it (12 places, 87%) wait 16 s, so 1 req/s takes the 2-GPU size (next case)
        pytest.param(
            "azure", "a100-pcie-80gb", LLAMA_70B, "fp8", 0.9, "azure-standard-nc96ads-a100-v4", 1, 4, 14.692, id="azure-a100-x4"
        ),
        # fix74: three TP2 (18 places, a request 10.46 s, 58% busy: 2.4% wait, p95 0, within the 16 ms slack: 2 s -
        # 1,984 ms TTFT p95 at batch 6) on three 2-GPU NC48ads ($7.346/h each, $16,088/month) undercut two TP4 on two
        # NC96ads ($21,450). fix90: two TP2 at 0.5 req/s each run 16 places (32 at 33% busy, 0.0% wait, a request
        # 10.58 s), on one 4-GPU NC96ads ($10,725/month): the 2-GPU size is no longer the cheapest at 1 req/s
        pytest.param(
            "azure", "a100-pcie-80gb", LLAMA_70B, "fp8", 1, "azure-standard-nc96ads-a100-v4", 1, 4, 14.692, id="azure-a100-x2"
        ),
        pytest.param(
            "azure", "h100-nvl-94gb", LLAMA_8B, "bf16", 2, "azure-standard-nc40ads-h100-v5", 1, 1, 6.98, id="azure-h100nvl-x1"
        ),
        pytest.param(
            "azure", "h100-nvl-94gb", LLAMA_70B, "fp8", 3, "azure-standard-nc80adis-h100-v5", 1, 2, 13.96, id="azure-h100nvl-x2"
        ),
    ],
)
def test_small_deployments_rent_the_shape_that_fits(
    tmp_path: Path,
    provider: str,
    gpu: str,
    model: str,
    precision: str,
    rps: float,
    platform: str,
    nodes: int,
    gpus_bought: int,
    usd_per_hour: float,
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        WORKLOAD.format(provider=provider, gpu=gpu, model=model, precision=precision, rps=rps, platforms=_outputs(provider))
    )
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    details = plan.deployments[0].details
    assert (pool.node.platform_id, pool.nodes) == (platform, nodes)
    assert (details["gpus_bought"], details["idle_gpus"]) == (gpus_bought, 0)
    assert details["usd_per_month"] == pytest.approx(nodes * usd_per_hour * 730, abs=0.005)


def test_gke_sharing_example_renders_a_one_gpu_mig_node_pool() -> None:
    # a2-ultragpu-1g: one nvidia-a100-80gb and one bundled 375 GiB local SSD (GCP GPU machine types page)
    files = render_file(str(REPO / "examples" / "small-models-gke-sharing.yaml"))
    (text,) = [t for p, t in files.items() if p.startswith("kubernetes/gcp/containernodepool-")]
    node = YAML(typ="safe").load(text)["spec"]["nodeConfig"]
    assert node["machineType"] == "a2-ultragpu-1g"
    assert node["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 1}
    (accelerator,) = node["guestAccelerator"]
    assert (accelerator["type"], accelerator["count"], accelerator["gpuPartitionSize"]) == ("nvidia-a100-80gb", 1, "3g.40gb")


@pytest.mark.parametrize(
    ("provider", "gpu", "chosen", "runner_up"),
    [
        # cloud GPUs are rented: one a2-ultragpu-1g chosen, the 2-GPU shape the runner-up
        (
            "gcp",
            "a100-sxm4-80gb",
            "$3,700/month, 1 GPU rented (0 idle), 1 server(s)",
            "  runner-up: 2 x TP1 on 1 x gcp-a2-ultragpu-2g (2 x a100-sxm4-80gb) (2 GPUs rented, 2 used, 1.2 kW, $7,400/month)",
        ),
        # bare-metal GPUs are bought: one Dell R760 with one L40S
        (
            "baremetal",
            "l40s-48gb",
            "$987/month, 1 GPU bought (0 idle), 1 server(s)",
            "  runner-up: 1 x TP1 on 1 x dell-r760xa (1 x l40s-48gb) (1 GPU bought, 1 used, 1.4 kW, $1,088/month)",
        ),
    ],
)
def test_cloud_gpus_are_rented_and_bare_metal_ones_bought(
    tmp_path: Path, provider: str, gpu: str, chosen: str, runner_up: str
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        WORKLOAD.format(provider=provider, gpu=gpu, model=LLAMA_8B, precision="bf16", rps=1, platforms=_outputs(provider))
    )
    plan = plan_workload(load_workload(str(path)))
    (reason,) = [r for r in plan.deployments[0].reasons if r.startswith("chosen by cost")]
    other = "bought" if provider != "baremetal" else "rented"
    assert chosen in reason and f"GPUs {other}" not in reason
    lines = plan_text(plan).splitlines()
    assert lines[lines.index(runner_up)] == runner_up and not any(f"GPUs {other}" in line for line in lines)


@pytest.mark.parametrize(
    ("platform", "nvme_count", "nvme_total_tb", "unsourced"),
    [
        # one rule for both Azure NC series: local NVMe counted, other temp disks not
        ("azure-standard-nc40ads-h100-v5", 1, 3.84, []),  # 3,576 GiB 'Temp Disk NVMe' = 3.84 TB
        ("azure-standard-nc80adis-h100-v5", 1, 7.68, []),  # 7,152 GiB = 7.68 TB
        ("azure-standard-nc24ads-a100-v4", 1, 1.03, ["nvme.count", "nvme.total_tb"]),  # 960 GiB NVMe per GPU: a belief
        ("azure-standard-nc96ads-a100-v4", 4, 4.12, ["nvme.count", "nvme.total_tb"]),
    ],
)
def test_azure_nc_local_disks_follow_one_rule(platform: str, nvme_count: int, nvme_total_tb: float, unsourced: list[str]) -> None:
    (rec,) = [p for p in catalog_json("platforms")["platforms"] if p["id"] == platform]
    assert (rec["nvme"]["count"], rec["nvme"]["total_tb"], rec["unsourced_fields"]) == (nvme_count, nvme_total_tb, unsourced)
    assert "local NVMe drives are counted as the instance store, other temp disks are not" in rec["notes"]
    if "h100" in platform:  # the page that names the temp disk NVMe
        assert OLD_NCADS_H100_PAGE in rec["source"]
