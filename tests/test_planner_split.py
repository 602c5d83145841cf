"""A service split over two server kinds: as many replicas as the free owned servers hold, the rest bought elsewhere.

The team owns two DGX A100 (8 x A100 SXM4 80GB) and now buys only H100 (``hardware.gpus``), so no more A100
servers are bought. A 70B bf16 chat service at 24 req/s (TTFT p95 <= 2 s, TPOT <= 60 ms):

- one TP8 replica sustains 3.205 req/s on A100; on H100 a TP4 replica sustains 4.466 req/s, two of them per
  server more than one TP8 replica's 8.658 (the plan's own per-replica figures);
- the two owned A100 servers hold 2 x TP8 = 6.41 req/s, too few for 24;
- the rest, 24 - 6.41 = 17.59 req/s, needs ceil(17.59 / 4.466) = 4 H100 TP4 replicas: 2 DGX H100 bought;
- without the owned servers the service needs ceil(24 / 4.466) = 6 TP4 replicas: 3 servers bought.

The objective decides: by cost and by GPUs bought the split wins (owned servers cost only their upkeep and
their GPUs are not bought); by power it loses (2 x 6.5 kW of A100 servers draw more than the third H100 server
it saves), so the service goes to bought H100 servers and the owned ones stay free.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from generator.api import render_file
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.planner.split import TRAINING_NOT_SPLIT
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: split
objective: {objective}
deployments:
{deployment}
hardware:
{allowed}  provider: baremetal
  inventory:
    - platform: {owned}
{gpu}      count: 2
      hosts: [{{name: own-01}}, {{name: own-02}}]
outputs: [terraform, ansible, kubernetes]
"""

CHAT = """\
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: {rps}
      slo: {{ttft_p95_ms: 2000, tpot_ms: 60}}"""

TUNE = """\
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: full
      sequence_length: 4096
      global_batch_size: 64
      dataset_tokens: 2000000000
      epochs: 1
      deadline_hours: {hours}"""

H100_ONLY = "  gpus: [h100-sxm5-80gb]\n"
A100 = ("dgx-a100", "      gpu: a100-sxm4-80gb\n")


def _write(
    tmp_path: Path,
    deployment: str,
    objective: str = "cost",
    allowed: str = H100_ONLY,
    owned: tuple[str, str] = A100,
) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(objective=objective, deployment=deployment, allowed=allowed, owned=owned[0], gpu=owned[1]))
    return path


def _plan(path: Path) -> Plan:
    return plan_workload(load_workload(str(path)))


# (objective, request rate, allowed, owned kind, pools as (platform, servers, owned), split parts as
#  (platform, TP, PP, replicas, servers, owned servers)); see the module docstring for the arithmetic
CASES = [
    pytest.param(
        "cost",
        24,
        H100_ONLY,
        A100,
        [("dgx-a100", 2, 2), ("dgx-h100", 2, 0)],
        [("dgx-a100", 8, 1, 2, 2, 2), ("dgx-h100", 4, 1, 4, 2, 0)],
        id="owned-excluded-too-few-split-wins-on-cost",
    ),
    pytest.param(
        "gpus",
        24,
        H100_ONLY,
        A100,
        # 16 GPUs bought against 24; the H100 server is the first of the 8-GPU H100 boards alike on GPUs, servers, power
        [("dgx-a100", 2, 2), ("supermicro-as-8125gs-tnhr", 2, 0)],
        [("dgx-a100", 8, 1, 2, 2, 2), ("supermicro-as-8125gs-tnhr", 4, 1, 4, 2, 0)],
        id="owned-excluded-too-few-split-wins-on-gpus-bought",
    ),
    pytest.param(
        "power",
        24,
        H100_ONLY,
        A100,
        [("supermicro-as-8125gs-tnhr", 3, 0)],
        [],
        id="split-loses-on-power-owned-stay-free",
    ),
    pytest.param("cost", 3, H100_ONLY, A100, [("dgx-a100", 1, 1)], [], id="owned-hold-all-no-split"),
    pytest.param(
        "cost",
        60,
        "  platforms: [dgx-h100]\n",
        ("dgx-h100", ""),
        # 60 / 8.658 = 6.9 -> 7 TP8 replicas on 7 DGX H100: the 2 owned and 5 bought
        [("dgx-h100", 7, 2)],
        [],
        id="owned-allowed-only-buyable-kind-buys-the-shortfall",
    ),
]


@pytest.mark.parametrize(("objective", "rps", "allowed", "owned", "pools", "parts"), CASES)
def test_a_service_splits_over_server_kinds_only_where_it_wins(
    tmp_path: Path,
    objective: str,
    rps: float,
    allowed: str,
    owned: tuple[str, str],
    pools: list[tuple[str, int, int]],
    parts: list[tuple[str, int, int, int, int, int]],
) -> None:
    plan = _plan(_write(tmp_path, CHAT.format(rps=rps), objective, allowed, owned))
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == pools
    (dep,) = plan.deployments
    assert [(s.platform_id, s.tp, s.pp, s.replicas, s.servers, s.owned_servers) for s in dep.split] == parts
    assert dep.replicas == (sum(s.replicas for s in dep.split) or dep.replicas)
    assert any(f.code == "deployment-split" for f in plan.findings) == bool(parts)


def test_each_part_is_sized_from_its_own_capacity_and_meets_the_slos(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path, CHAT.format(rps=24)))
    (dep,) = plan.deployments
    owned, rest = dep.split
    assert (owned.requests_per_s_per_replica_max, rest.requests_per_s_per_replica_max) == (3.205, 4.466)
    assert owned.replicas == owned.servers * 8 // owned.tp  # every owned GPU in use
    held = owned.replicas * owned.requests_per_s_per_replica_max
    assert rest.replicas == math.ceil((24 - held) / rest.requests_per_s_per_replica_max) == 4
    # the rate is routed in proportion to capacity: 24 x 6.41 / (6.41 + 17.864) = 6.338, and 17.662
    assert (owned.requests_per_s, rest.requests_per_s) == (6.338, 17.662)
    for part in dep.split:
        assert part.requests_per_s <= part.replicas * part.requests_per_s_per_replica_max
        assert part.ttft_p95_s <= 2.0 and part.tpot_s <= 0.060
    assert (dep.replicas, dep.gpus) == (6, 32)


def test_the_plan_says_what_runs_where_and_counts_both_pools(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path, CHAT.format(rps=24)))
    (dep,) = plan.deployments
    assert dep.reasons[0].startswith(
        "split over two server kinds: 2 replica(s) (16 GPUs, TP8) on 2 owned dgx-a100 (a100-sxm4-80gb) in pool "
        "chat_a100_sxm4_80gb, 4 replica(s) (16 GPUs, TP4) on 2 bought dgx-h100 (h100-sxm5-80gb) in pool chat_h100_sxm5_80gb"
    )
    assert dep.pools == ("chat_a100_sxm4_80gb", "chat_h100_sxm5_80gb")
    assert (dep.in_pool("chat_a100_sxm4_80gb"), dep.in_pool("chat_h100_sxm5_80gb")) == ((8, 1, 2, 16), (4, 1, 4, 16))
    t = plan.totals
    assert (t["gpus"], t["nodes"], t["idle_gpus"]) == (32, 4, 0)
    assert t["capex_usd"] == 2 * 270_000  # the two DGX H100 bought (dgx-h100-system, catalog purchases); the owned cost 0
    (group,) = t["inventory"]
    assert (group["used"], group["free"]) == (2, 0)
    assert not any(f.code == "idle-gpus" for f in plan.findings)


def test_the_split_costs_less_than_buying_every_replica(tmp_path: Path) -> None:
    split = _plan(_write(tmp_path, CHAT.format(rps=24)))
    alone = tmp_path / "alone"
    alone.mkdir()
    path = _write(alone, CHAT.format(rps=24))
    path.write_text(path.read_text().split("  inventory:")[0])
    bought = _plan(path)
    assert [(p.node.platform_id, p.nodes) for p in bought.pools] == [("dgx-h100", 3)]
    assert split.totals["usd_per_month"] < bought.totals["usd_per_month"]
    assert split.totals["capex_usd"] < bought.totals["capex_usd"]


# (deadline in hours, pools as (platform, servers, owned)): 2B tokens take 36.9 h on one owned A100 server and
# 18.5 h on both; past a 12 h deadline the whole job goes to one bought DGX H100, never A100s beside H100s
TRAINING = [
    pytest.param(48, [("dgx-a100", 1, 1)], id="fits-owned"),
    pytest.param(12, [("dgx-h100", 1, 0)], id="owned-too-slow-never-split-whole-job-bought"),
]


@pytest.mark.parametrize(("hours", "pools"), TRAINING)
def test_a_training_job_is_never_split_over_server_kinds(tmp_path: Path, hours: int, pools: list[tuple[str, int, int]]) -> None:
    plan = _plan(_write(tmp_path, TUNE.format(hours=hours)))
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == pools
    (dep,) = plan.deployments
    assert dep.split == ()
    assert (TRAINING_NOT_SPLIT in dep.reasons) == (pools[0][0] != "dgx-a100")


def test_the_rendered_tree_carries_both_pools(tmp_path: Path) -> None:
    files = render_file(str(_write(tmp_path, CHAT.format(rps=24))))
    pools = ("chat_a100_sxm4_80gb", "chat_h100_sxm5_80gb")
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert sorted(tfvars["gpu_pools"]) == list(pools)
    assert [tfvars["gpu_pools"][p]["node_count"] for p in pools] == [2, 2]
    assert all(tfvars["gpu_pools"][p]["deployments"] == ["chat"] for p in pools)
    device_plugin = files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"]
    assert all(p.replace("_", "-") in device_plugin for p in pools)
    inventory = files["ansible/inventory.yml"]
    assert all(f"    {p}:" in inventory for p in pools)
    assert "own-01: null" in inventory and "own-02: null" in inventory
    for pool, (replicas, tp) in zip(pools, [(2, 8), (4, 4)], strict=True):
        group_vars = files[f"ansible/group_vars/{pool}.yml"]
        assert f"replicas: {replicas}" in group_vars and f"tensor_parallel: {tp}" in group_vars
        assert f"kubeadm/join-{pool}.yaml" in files
    assert "split over two server kinds" in files["SPEC.md"]
    spec = json.loads(files["spec.json"])["plan"]["deployments"][0]
    assert [part["pool"] for part in spec["split"]] == list(pools)
