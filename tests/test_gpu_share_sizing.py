"""Replicas of one GPU sized against their share under ``kubernetes.gpu_sharing``, and the shares packed onto GPUs.

newuser40 items 2, 5, 6: the planner sized and bought whole GPUs whatever the sharing, a MIG instance's memory was its
name's decimal GB, and MIG made a TP2 70B service infeasible. Facts: the H100 80GB ``nvidia-smi mig -lgip`` table
(https://jbarrow.ai/field_notes/nvidia-mig/: 3g.40gb 39.50 GiB, 1g.10gb 9.75 GiB), the MIG user guide's fractions
(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html: 3g.40gb 3/7 of the SMs, 4/8 of
the memory), Azure's NC24ads A100 v4 ($3.673/h in the catalog, one A100 80GB PCIe).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import plan_file, render_file
from generator.catalog import gpus, mig_profiles
from generator.sizing.gpu_share import gpu_share
from generator.units import GIB
from generator.workload.models import GpuSharing

LLAMA = (
    "  - name: llama8b\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
    "    inference: {{precision: fp8, max_context_tokens: {ctx}, avg_input_tokens: 800, avg_output_tokens: 200, "
    "requests_per_second: 1, slo: {{ttft_p95_ms: 2000, tpot_ms: 60}}}}\n"
)
EMBED = (
    "  - name: embed\n    model: BAAI/bge-m3\n    inference: {task: embed, precision: bf16, max_context_tokens: 8192, "
    "avg_input_tokens: 500, requests_per_second: 20, slo: {ttft_p95_ms: 500}}\n"
)
CHAT70 = (
    "  - name: chat70\n    model: meta-llama/Llama-3.3-70B-Instruct\n    inference: {precision: fp8, kv_cache_precision: fp8, "
    "max_context_tokens: 16384, avg_input_tokens: 1500, avg_output_tokens: 300, requests_per_second: 5, "
    "slo: {ttft_p95_ms: 2000, tpot_ms: 50}}\n"
)


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def workload(tmp_path: Path, deployments: str, gpu_list: str, sharing: str) -> Path:
    text = (
        f"version: 1\nname: shares\ndeployments:\n{deployments}hardware:\n  provider: azure\n  gpus: [{gpu_list}]\n"
        f"objective: cost\noutputs: [terraform, ansible, kubernetes]\nkubernetes:\n  location: eastus2\n"
        f"  gpu_sharing: {sharing}\n"
    )
    path = tmp_path / "shares.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_mig_instance_has_the_memory_nvidia_smi_reports() -> None:
    """item 6: 3g.40gb holds 39.50 GiB, not 40 decimal GB (37.25 GiB); 3/7 of the SMs and half the memory bandwidth."""
    share = gpu_share(gpus()["h100-sxm5-80gb"], GpuSharing("mig", mig_profile="3g.40gb"))
    assert share is not None
    assert share.memory_bytes == int(39.50 * GIB)
    assert (share.per_gpu, share.sm_fraction, share.bandwidth_fraction) == (2, "3/7", "1/2")
    small = gpu_share(gpus()["h100-sxm5-80gb"], GpuSharing("mig", mig_profile="1g.10gb"))
    assert small is not None and small.memory_bytes == int(9.75 * GIB) and small.per_gpu == 7


@pytest.mark.parametrize(
    ("gpu", "profiles"),
    [
        # item 7: the guide's H100 94GB and H100-on-GH200 96GB tables
        ("h100-nvl-94gb", ("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb")),
        ("gh200-96gb", ("1g.12gb", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb")),
    ],
)
def test_mig_profile_lists_of_h100_nvl_and_gh200(gpu: str, profiles: tuple[str, ...]) -> None:
    assert mig_profiles()[gpu] == profiles


def test_a_shares_kv_pool_is_what_vllm_has_left_in_it(tmp_path: Path) -> None:
    """item 2: a 3g.40gb pod's KV pool is 0.9 x 39.5 GiB less weights, activations and overheads (not 58.4 GiB)."""
    _, plan = plan_file(
        str(workload(tmp_path, LLAMA.format(ctx=8192), "h100-sxm5-80gb", "{strategy: mig, mig_profile: 3g.40gb}"))
    )
    (dep,) = plan.deployments
    mem = dep.memory_per_gpu
    by_hand = 0.9 * 39.5 * GIB - mem["weights"] - mem["activations"] - mem["overhead"]
    assert mem["kv_cache_pool"] == pytest.approx(by_hand, abs=2**20)
    assert 22 * GIB < mem["kv_cache_pool"] < 27 * GIB
    assert "3g.40gb MIG instance" in dep.details["gpu_share"]
    (pool,) = plan.pools
    assert pool.shares_per_gpu == 2


def test_shares_of_two_services_pack_onto_one_gpu(tmp_path: Path) -> None:
    """item 2: llama8b at 4k and bge-m3 under time-slicing x4 fit one A100 80GB: one NC24ads A100 v4, $2,681 a month
    (3.673 $/h x 730 h), not two GPUs at $5,363."""
    path = workload(
        tmp_path,
        LLAMA.format(ctx=4096) + EMBED,
        "a100-pcie-80gb, h100-sxm5-80gb",
        "{strategy: time-slicing, replicas_per_gpu: 4}",
    )
    _, plan = plan_file(str(path))
    (pool,) = plan.pools
    assert pool.node.platform_id == "azure-standard-nc24ads-a100-v4"
    assert (pool.nodes, pool.node.gpus, pool.shares_per_gpu, pool.idle_gpus) == (1, 1, 4, 0)
    assert plan.totals["usd_per_month"] == pytest.approx(3.673 * 730, abs=1.0)
    assert sorted(pool.deployments) == ["embed", "llama8b"]


def test_a_tp2_replica_keeps_whole_gpus_beside_mig_pools(tmp_path: Path) -> None:
    """item 5: a 70B service wider than one GPU was infeasible under MIG; it is planned on whole GPUs in a pool the
    render leaves unpartitioned. The 8B service is sized on a 3g.40gb instance where it shares, or takes an idle whole
    GPU of the 70B's server, whichever costs less (here the idle GPU: a MIG node of its own would add a server)."""
    path = workload(tmp_path, LLAMA.format(ctx=8192) + CHAT70, "h100-sxm5-80gb", "{strategy: mig, mig_profile: 3g.40gb}")
    _, plan = plan_file(str(path))
    by_name = {d.name: d for d in plan.deployments}
    assert by_name["chat70"].tp * by_name["chat70"].pp > 1
    pools = {p.name: p for p in plan.pools}
    assert pools[by_name["chat70"].pool].shares_per_gpu is None
    assert sum(p.nodes for p in plan.pools) == 1
    rendered = render_file(str(path))
    labels = [load(t)["spec"]["template"]["metadata"]["labels"] for p, t in rendered.items() if "nodepool-" in p]
    assert labels and all("nvidia.com/mig.config" not in each for each in labels)
    assert "gpu-sharing-whole-gpus" in rendered["SPEC.md"]
