"""A shared GPU's replica at its planned load, its GPUs counted idle or in use, and what a share too small names.

fuzz32 items 1, 5, 6 and 13. Facts: the H100 SXM5's 3.35 TB/s of memory bandwidth
(https://www.nvidia.com/en-us/data-center/h100/, "GPU Memory Bandwidth 3.35TB/s"); the MIG user guide's slices
(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html: 2g.20gb 2 of 8 memory slices,
3 instances a GPU; 3g.40gb 4 of 8, 2 a GPU); Llama-3.1-8B's 8.03 B parameters, one byte each in fp8.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.api import plan_file, render_file
from generator.catalog import gpus
from generator.planner.candidates import shared_gpus_held
from generator.sizing.gpu_share import gpu_share
from generator.workload.models import GpuSharing

H100_BANDWIDTH_GB_PER_S = 3350.0

DGX = """\
version: 1
name: invsh
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200, \
requests_per_second: {rate}}}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  inventory:
    - {{platform: dgx-h100, count: 1, hosts: [{{name: dgx-01}}]}}
outputs: [terraform, ansible, kubernetes]
kubernetes:
  gpu_sharing: {sharing}
"""


def write(tmp_path: Path, text: str, name: str = "w.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("sharing", "bandwidth_share"),
    [
        ("{strategy: mig, mig_profile: 2g.20gb}", 2 / 8),
        ("{strategy: time-slicing, replicas_per_gpu: 4}", 1 / 4),
        ("{strategy: mps, replicas_per_gpu: 2}", 1 / 2),
    ],
)
def test_the_planned_loads_latencies_are_the_shares(tmp_path: Path, sharing: str, bandwidth_share: float) -> None:
    """item 1: a 2g.20gb replica at its planned load reported TPOT 6.4 ms, the whole GPU's, where reading the 8.03 GB
    of fp8 weights once at a quarter of 3.35 TB/s takes 9.6 ms a step."""
    _, plan = plan_file(str(write(tmp_path, DGX.format(rate=60, sharing=sharing))))
    (dep,) = plan.deployments
    assert plan.pools[0].shares_per_gpu  # sized in shares
    details = dep.details
    weights_read_s = details["weights_bytes"] / (H100_BANDWIDTH_GB_PER_S * 1e9 * bandwidth_share)
    assert details["tpot_s"] > weights_read_s
    assert details["tpot_s"] * 1000 <= details["slo_tpot_ms"]  # the capacity within the SLO holds the planned rate
    # a replica at its rate holds at least the sequences decoding (Little's law over the decode alone)
    assert details["batch_per_replica"] >= details["requests_per_s_per_replica"] * 200 * details["tpot_s"]
    # the plan text says the figures spec.json keeps
    planned = next(r for r in dep.reasons if r.startswith("at the planned load: "))
    found = re.match(r"at the planned load: batch (\d+), TTFT p95 (\d+) ms, TPOT ([\d.]+) ms", planned)
    assert found is not None, planned
    assert int(found[1]) == details["batch_per_replica"]
    assert found[2] == f"{details['ttft_p95_s'] * 1000:.0f}" and found[3] == f"{details['tpot_s'] * 1000:.1f}"


def test_a_shared_replica_is_slower_than_on_the_whole_gpu(tmp_path: Path) -> None:
    """item 1: one replica at 2 req/s on an A100 80GB (3g.40gb: half its memory bandwidth) and on the whole GPU; the
    share's TPOT at that load was the whole GPU's, 15.8 ms, on both."""
    base = DGX.format(rate=2, sharing="{strategy: mig, mig_profile: 3g.40gb}")
    _, shared = plan_file(str(write(tmp_path, base, "shared.yaml")))
    _, whole = plan_file(str(write(tmp_path, base.replace("3g.40gb", "7g.80gb"), "whole.yaml")))
    (share_dep,), (whole_dep,) = shared.deployments, whole.deployments
    assert (share_dep.replicas, whole_dep.replicas) == (1, 1)
    assert share_dep.details["tpot_s"] > 1.5 * whole_dep.details["tpot_s"]
    assert share_dep.details["ttft_p95_s"] > whole_dep.details["ttft_p95_s"]


@pytest.mark.parametrize(
    ("shares", "per_gpu", "layout", "held"),
    [
        (2, 2, (1, 2), 2),  # item 5: min_replicas 2 on two 1-GPU nodes, one replica each
        (2, 2, (1, 1), 1),
        (9, 3, (8, 1), 3),
        (8, 3, (8, 1), 3),
        (3, 2, (2, 2), 2),  # spread 2 + 1: one GPU on each node
        (10, 4, (4, 2), 4),  # spread 5 + 5: two GPUs on each node
        (57, 7, (8, 2), 9),  # packed: two nodes are what 9 GPUs fill
    ],
)
def test_gpus_holding_shares(shares: int, per_gpu: int, layout: tuple[int, int], held: int) -> None:
    assert shared_gpus_held(shares, per_gpu, layout) == held


GKE = """\
version: 1
name: small-models-gke
deployments:
  - name: assistant
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: 2
      min_replicas: 2
      slo: {ttft_p95_ms: 2000, tpot_ms: 50}
hardware:
  provider: gcp
  gpus: [a100-sxm4-80gb]
objective: cost
outputs: [terraform, ansible, kubernetes]
kubernetes:
  gcp_project: acme-inference
  location: us-central1
  zone: us-central1-a
  gpu_sharing: {strategy: mig, mig_profile: 3g.40gb}
"""


def test_spread_shares_leave_no_gpu_idle(tmp_path: Path) -> None:
    """item 5: two 3g.40gb replicas spread over two 1-GPU nodes (min_replicas 2) were "2 GPUs (1 idle)"."""
    files = render_file(str(write(tmp_path, GKE)))
    spec = json.loads(files["spec.json"])["plan"]
    (pool,) = spec["pools"]
    assert (pool["nodes"], pool["node"]["gpus"], pool["shares_per_gpu"]) == (2, 1, 2)
    assert pool["idle_gpus"] == 0 and spec["totals"]["idle_gpus"] == 0
    assert "idle-gpus" not in {f["code"] for f in spec["findings"]}


def test_unused_shares_are_said_apart_from_idle_gpus(tmp_path: Path) -> None:
    """item 5: 8 replicas of 2g.20gb (3 a GPU) on an 8-GPU server: 3 GPUs in use, one of their 9 instances unused."""
    _, plan = plan_file(str(write(tmp_path, DGX.format(rate=55, sharing="{strategy: mig, mig_profile: 2g.20gb}"))))
    (dep,) = plan.deployments
    (pool,) = plan.pools
    assert (dep.replicas, pool.shares_per_gpu, pool.idle_gpus) == (8, 3, 5)
    idle = next(f.message for f in plan.findings if f.code == "idle-gpus")
    assert idle.startswith("pool small_h100_sxm5_80gb: 5 of 8 GPUs owned are idle")
    assert idle.endswith("; the 3 GPU(s) in use hold 8 of their 9 shares (3 a GPU), 1 unused")


AWS = """\
version: 1
name: shaws
deployments:
  - name: a
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200, \
requests_per_second: 6}
hardware:
  provider: aws
  gpus: [h100-sxm5-80gb]
objective: cost
outputs: [terraform, kubernetes]
kubernetes:
  location: us-east-1
  gpu_sharing: {strategy: mig, mig_profile: 2g.20gb}
"""


def test_a_share_too_small_names_no_server_the_plan_did_not_choose(tmp_path: Path) -> None:
    """item 6: the warning named aws-p5-48xlarge where the plan chose a p5.4xlarge; the share is the GPU's."""
    _, plan = plan_file(str(write(tmp_path, AWS)))
    (pool,) = plan.pools
    assert pool.node.platform_id == "aws-p5-4xlarge" and not pool.shares_per_gpu
    small = next(f.message for f in plan.findings if f.code == "gpu-share-too-small")
    assert "(in one 2g.20gb MIG instance of one h100-sxm5-80gb (3 a GPU): 19.62 GiB (nvidia-smi mig -lgip)" in small
    assert " on aws-" not in small


def test_a_whole_gpu_instance_is_worded_as_all_of_its_memory() -> None:
    """item 13: the A100 80GB's 7g.80gb (no sourced -lgip figure) read "1 of the GPU's memory"."""
    share = gpu_share(gpus()["a100-sxm4-80gb"], GpuSharing("mig", mig_profile="7g.80gb"))
    assert share is not None
    assert share.memory_basis == "all of the GPU's memory, less what measured GPUs' instances lack"
    half = gpu_share(gpus()["a100-sxm4-80gb"], GpuSharing("mig", mig_profile="3g.40gb"))
    assert half is not None and half.memory_basis.startswith("1/2 of the GPU's memory")
