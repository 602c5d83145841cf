"""The sub-node H100 cloud shapes: AWS p5.4xlarge (1 GPU) and GCP a3-highgpu-1g/2g/4g (1, 2, 4 GPUs).

Facts (catalog rows) and where they come from:

- p5.4xlarge: 16 vCPU, 256 GiB, 1 EFA device (Karpenter's generated instance-type table, aws/karpenter-provider-aws
  at 0c5e7d81, website/content/en/docs/reference/instance-types.md: instance-cpu 16, instance-memory 262144,
  vpc.amazonaws.com/efa 1), 100 Gbps and $6.88/h on demand in us-east-1 (instances.vantage.sh export in
  tsaol/aws-gpu data/all_gpu_instances.js, 'Last updated: 2025-11-30'), 3.84 TB NVMe (the 2025-08-15 launch
  write-up). EC2 DescribeInstanceTypes reports 0 GPUs for it (same Karpenter table: instance-gpu-count 0;
  aws/karpenter-provider-aws#8368, open).
- a3-highgpu-1g/2g/4g: the A3 High table of https://docs.cloud.google.com/compute/docs/gpus (vCPU 26/52/104, memory
  234/468/936 GB, Local SSD 750/1,500/3,000 GiB, 1 physical NIC, 25/50/100 Gbps) and its note that they are created
  only as Spot or Flex-start VMs: not on demand, so no on-demand price.

Expected costs are hand computations: nodes x USD per hour x 730 h/month.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.api import render_file
from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.workload import load_workload
from tests.conftest import REPO

WORKLOAD = """\
version: 1
name: shapes
deployments:
  - name: chat
    model: {model}
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: {rps}
      slo:
        ttft_p95_ms: 2000
        tpot_ms: {tpot}
hardware:
  provider: {provider}
  gpus: [h100-sxm5-80gb]
{platforms}objective: cost
{outputs}{prices}"""

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"
LLAMA_405B = "meta-llama/Llama-3.1-405B-Instruct"


def _write(
    tmp_path: Path,
    provider: str,
    model: str = LLAMA_8B,
    rps: float = 1,
    tpot: int = 50,
    platforms: str = "",
    prices: str = "",
) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(
        WORKLOAD.format(
            provider=provider,
            model=model,
            rps=rps,
            tpot=tpot,
            platforms=f"  platforms: [{platforms}]\n" if platforms else "",
            prices=f"prices: {{{prices}}}\n" if prices else "",
            # planned only: GKE's node pools would need the cluster (fuzz35 item 6)
            outputs="outputs: [terraform, ansible]\n" if provider == "gcp" else "",
        )
    )
    return path


# ---------------------------------------------------------------- catalog rows


@pytest.mark.parametrize(
    ("platform_id", "gpus", "vcpus", "ram_gib", "nvme", "network_gbps", "fabric", "sold_through"),
    [
        pytest.param("aws-p5-4xlarge", 1, 16, 256, (1, 3.84), 100, ("aws-efa-100g", 1), None, id="p5.4xlarge"),
        # Local SSD: 750 GiB = 0.81 TB, 1,500 GiB = 1.61 TB, 3,000 GiB = 3.22 TB (375 GiB disks)
        pytest.param("gcp-a3-highgpu-1g", 1, 26, 234, (2, 0.81), 25, None, "Spot VMs and Flex-start VMs", id="a3-1g"),
        pytest.param("gcp-a3-highgpu-2g", 2, 52, 468, (4, 1.61), 50, None, "Spot VMs and Flex-start VMs", id="a3-2g"),
        pytest.param("gcp-a3-highgpu-4g", 4, 104, 936, (8, 3.22), 100, None, "Spot VMs and Flex-start VMs", id="a3-4g"),
    ],
)
def test_sub_node_shape_rows(
    platform_id: str,
    gpus: int,
    vcpus: int,
    ram_gib: int,
    nvme: tuple[int, float],
    network_gbps: int,
    fabric: tuple[str, int] | None,
    sold_through: str | None,
) -> None:
    p = catalog.platforms()[platform_id]
    assert (p.gpu_ids, p.gpu_counts, p.vcpus, p.ram_gib) == (("h100-sxm5-80gb",), (gpus,), vcpus, ram_gib)
    assert (p.nvme_count, p.nvme_total_tb, p.network_gbps_total) == (*nvme, network_gbps)
    assert ((p.fabric_nic_id, p.fabric_nic_count) if p.fabric_nic_id else None) == fabric
    assert p.not_on_demand == sold_through
    assert p.source and all(s.startswith("https://") for s in p.source)
    # the A3 High slices' ("nvme.count",) before fix123: the accelerator-optimized machine page's disk table sources
    # their disk counts (p5.4xlarge's is still a belief)
    assert p.unsourced_fields == (("nvme.count",) if platform_id == "aws-p5-4xlarge" else ())


def test_p5_4xlarge_is_priced_on_demand_and_the_a3_slices_are_not() -> None:
    priced = {(r.platform_id, r.region): r.usd for r in catalog.prices().values()}
    assert priced[("aws-p5-4xlarge", "us-east-1")] == 6.88  # 1/8 of p5.48xlarge's 55.04
    assert priced[("aws-p5-48xlarge", "us-east-1")] == 55.04
    assert not [pid for pid, _ in priced if pid in {"gcp-a3-highgpu-1g", "gcp-a3-highgpu-2g", "gcp-a3-highgpu-4g"}]


def test_only_p5_4xlarge_reports_a_wrong_gpu_count_to_the_ec2_api() -> None:
    wrong = {p.id: p.ec2_api_gpus for p in catalog.platforms().values() if p.ec2_api_gpus is not None}
    assert wrong == {"aws-p5-4xlarge": 0}


# ---------------------------------------------------------------- planning


@pytest.mark.parametrize(
    ("platforms", "platform_id", "usd_per_month"),
    [
        # AWS at large: one p5.4xlarge, $6.88/h x 730 = $5,022.40 a month
        pytest.param("", "aws-p5-4xlarge", 5022.40, id="aws-rents-the-1-gpu-shape"),
        # before the shape was in the catalog: the 8-GPU p5.48xlarge, $55.04/h x 730 = $40,179.20
        pytest.param("aws-p5-48xlarge", "aws-p5-48xlarge", 40179.20, id="aws-8-gpu-shape-pinned"),
    ],
)
def test_8b_chat_on_aws_h100_rents_one_p5_4xlarge(tmp_path: Path, platforms: str, platform_id: str, usd_per_month: float) -> None:
    plan = plan_workload(load_workload(str(_write(tmp_path, "aws", platforms=platforms))))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes) == (platform_id, 1)
    assert plan.deployments[0].details["usd_per_month"] == pytest.approx(usd_per_month, abs=0.005)
    assert plan.totals["usd_per_month"] == pytest.approx(usd_per_month, abs=0.005)


@pytest.mark.parametrize(
    ("outputs", "platforms", "platform_id", "left_out"),
    [
        # Karpenter the only provisioner: the shape it cannot launch is left out, and said; p5.48xlarge at $40,179.20
        pytest.param("outputs: [kubernetes]\n", "", "aws-p5-48xlarge", True, id="karpenter-alone"),
        pytest.param("outputs: [terraform, kubernetes]\n", "", "aws-p5-4xlarge", False, id="eks-node-groups-rendered"),
        pytest.param("outputs: [ansible]\n", "", "aws-p5-4xlarge", False, id="no-node-pools"),
        # named in hardware.platforms: planned anyway (karpenter-api-gpu-count still warns)
        pytest.param("outputs: [kubernetes]\n", "aws-p5-4xlarge", "aws-p5-4xlarge", False, id="named"),
        # review81 item 4: hardware.platforms left p5.4xlarge out already; adding terraform would not plan it, so
        # nothing is said (before: "aws-p5-4xlarge left out of the plan ... add terraform to outputs ...")
        pytest.param("outputs: [kubernetes]\n", "aws-p5-48xlarge", "aws-p5-48xlarge", False, id="platforms-left-it-out"),
    ],
)
def test_karpenter_alone_leaves_out_what_it_cannot_launch(
    tmp_path: Path, outputs: str, platforms: str, platform_id: str, left_out: bool
) -> None:
    # newuser81 item 1: with outputs: [kubernetes] the planner rented p5.4xlarge (EC2's API: 0 GPUs, so Karpenter
    # launches none) and warned karpenter-api-gpu-count about its own choice
    path = _write(tmp_path, "aws", platforms=platforms)
    path.write_text(path.read_text() + outputs)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert pool.node.platform_id == platform_id
    said = [f.message for f in plan.findings if f.code == "karpenter-unlaunchable-left-out"]
    assert bool(said) is left_out
    if said:
        assert said[0].startswith("aws-p5-4xlarge left out of the plan: the Karpenter NodePools are the only provisioner")
        assert plan.totals["usd_per_month"] == pytest.approx(40179.20, abs=0.005)


def test_gcp_a3_slices_rank_after_priced_shapes_until_a_price_is_given(tmp_path: Path) -> None:
    # no on-demand price: the priced a3-highgpu-8g ($88.49/h, whole instance) is chosen, the slices named
    plan = plan_workload(load_workload(str(_write(tmp_path, "gcp"))))
    (pool,) = plan.pools
    assert pool.node.platform_id == "gcp-a3-highgpu-8g"
    (ranked,) = [f.message for f in plan.findings if f.code == "not-on-demand-ranked"]
    assert "gcp-a3-highgpu-1g is sold through Spot VMs and Flex-start VMs, not on demand" in ranked
    # a Spot price given by the workload ranks it: one a3-highgpu-1g at $3.50/h x 730 = $2,555
    plan = plan_workload(load_workload(str(_write(tmp_path, "gcp", prices="gcp-a3-highgpu-1g: 3.5"))))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes, plan.totals["usd_per_month"]) == ("gcp-a3-highgpu-1g", 1, pytest.approx(2555.0))
    assert any(f.code == "not-on-demand" and f.level == "warning" for f in plan.findings)


@pytest.mark.parametrize(
    ("model", "platform", "price", "nodes", "refusal"),
    [
        # 70B BF16 needs two H100s: PP2 over two p5.4xlarge's 100 Gb/s EFA cards ($6.88/h x 2 x 730 = $10,044.80)
        pytest.param(LLAMA_70B, "aws-p5-4xlarge", "", 2, None, id="p5.4xlarge-efa-100g"),
        # ... but not over two a3-highgpu-1g's 25 Gbps VM network
        pytest.param(LLAMA_70B, "gcp-a3-highgpu-1g", "gcp-a3-highgpu-1g: 3.5", 0, "has 25 Gb/s between nodes", id="a3-1g"),
        # 405B BF16 needs twelve: not over a3-highgpu-2g's 50 Gbps, over a3-highgpu-4g's 100 Gbps (3 nodes)
        pytest.param(LLAMA_405B, "gcp-a3-highgpu-2g", "gcp-a3-highgpu-2g: 7", 0, "has 50 Gb/s between nodes", id="a3-2g"),
        pytest.param(LLAMA_405B, "gcp-a3-highgpu-4g", "gcp-a3-highgpu-4g: 14", 3, None, id="a3-4g"),
    ],
)
def test_a_replica_spans_sub_node_shapes_only_over_100_gbps(
    tmp_path: Path, model: str, platform: str, price: str, nodes: int, refusal: str | None
) -> None:
    path = _write(tmp_path, platform.partition("-")[0], model=model, rps=0.1, tpot=500, platforms=platform, prices=price)
    if refusal is not None:
        with pytest.raises(InfeasibleError, match=f"{refusal}; multi-node work needs at least 100 Gb/s"):
            plan_workload(load_workload(str(path)))
        return
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes, plan.deployments[0].gpus) == (platform, nodes, nodes * pool.node.gpus)


# ---------------------------------------------------------------- renderers


def _findings(files: dict[str, str]) -> dict[str, str]:
    return {f["code"]: f["message"] for f in json.loads(files["spec.json"])["plan"]["findings"]}


def test_karpenter_nodepool_of_p5_4xlarge_is_said_not_to_launch() -> None:
    # examples/mixed.yaml's coder service rents one p5.4xlarge (1 H100), which EC2's API reports with 0 GPUs. fix74 had
    # assistant on a p5.4xlarge too; fix90: 3 x TP1 on g6e.xlarge at 2 req/s each run 34 places (102 at 71% busy, 0.1%
    # wait), $4,076/month under the p5.4xlarge's $5,022, so only coder's pool is named
    files = render_file(str(REPO / "examples" / "mixed.yaml"))
    message = _findings(files)["karpenter-api-gpu-count"]
    assert "(coder-h100-sxm5-80gb: p5.4xlarge has 1, the API says 0)" in message
    assert "assistant-" not in message
    assert "https://github.com/aws/karpenter-provider-aws/issues/8368" in message
    assert "terraform/eks-managed-node-groups.tfvars.json" in message
    assert '"p5.4xlarge"' in files["terraform/eks-managed-node-groups.tfvars.json"]
    # a p5.48xlarge pool (8 GPUs, and 8 in the API) gets no such finding
    assert "karpenter-api-gpu-count" not in _findings(render_file(str(REPO / "examples" / "chat-70b-fp8-aws.yaml")))


@pytest.mark.parametrize(
    ("outputs", "node_groups"),
    [
        pytest.param("outputs: [kubernetes]\n", False, id="karpenter-alone"),
        pytest.param("outputs: [terraform, kubernetes]\n", True, id="with-eks-node-groups"),
    ],
)
def test_karpenter_gpu_count_finding_names_only_what_the_render_writes(tmp_path: Path, outputs: str, node_groups: bool) -> None:
    # newuser81 item 1: an 8B service on one p5.4xlarge (the cheapest H100 shape, $5,022.40/month) rendered with
    # outputs: [kubernetes] alone told the user to run the pool as the EKS managed node groups of
    # terraform/eks-managed-node-groups.tfvars.json, a file that render did not write
    path = _write(tmp_path, "aws", platforms="aws-p5-4xlarge, aws-p5-48xlarge")
    path.write_text(path.read_text() + outputs)
    files = render_file(str(path))
    message = _findings(files)["karpenter-api-gpu-count"]
    assert "(chat-h100-sxm5-80gb: p5.4xlarge has 1, the API says 0)" in message
    assert ("terraform/eks-managed-node-groups.tfvars.json" in files) is node_groups
    said_to_run_them = "Run these pools as the EKS managed node groups of terraform/eks-managed-node-groups.tfvars.json"
    assert (said_to_run_them in message) is node_groups
    assert ("add terraform to outputs" in message) is not node_groups
    assert ("list the platforms allowed in hardware.platforms without aws-p5-4xlarge" in message) is not node_groups


def test_gke_a3_slices_have_no_gpudirect(tmp_path: Path) -> None:
    # a3-highgpu-4g has one physical NIC (the gVNIC): none of a3-highgpu-8g's GPU NICs that GPUDirect-TCPX drives
    path = _write(
        tmp_path, "gcp", model=LLAMA_405B, rps=0.1, tpot=500, platforms="gcp-a3-highgpu-4g", prices="gcp-a3-highgpu-4g: 14"
    )
    path.write_text(path.read_text() + "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1-b\n")
    files = render_file(str(path))
    (group_vars,) = [t for p, t in files.items() if p.startswith("ansible/group_vars/chat_")]
    assert "  gpudirect: null\n" in group_vars
    golden_8g = (
        REPO / "tests" / "golden" / "chat-70b-fp8-gcp" / "ansible" / "group_vars" / "chat_h100_sxm5_80gb.yml"
    ).read_text()
    assert "  gpudirect: !unsafe 'tcpx'\n" in golden_8g
