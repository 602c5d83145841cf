"""A service split over two server kinds: as many replicas as the free owned servers hold, the rest bought elsewhere.

Requests are counted at an even share a replica (the slower part bounds it; a router filling free places sends each
part its places' share), so a split needs N = ceil(rate / the slower part's per-replica capacity) replicas, each serving rate / N.

The team owns two DGX H100 (8 x H100 SXM5 80GB) and now buys only H200 (``hardware.gpus``), so no more H100
servers are bought. A 70B bf16 chat service at 24 req/s (TTFT p95 <= 2 s, TPOT <= 60 ms):

- one TP8 replica sustains 8.688 req/s on H100 and 9.261 req/s on H200 (the plan's own per-replica figures);
- the two owned H100 servers hold 2 x TP8 = 17.3 req/s, too few for 24;
- even routing needs ceil(24 / min(8.688, 9.261)) = ceil(2.76) = 3 replicas of 24 / 3 = 8.0 req/s each: 2 on the
  owned servers (16.0 req/s) and 1 on one bought H200 server (8.0 req/s);
- at 40 req/s: ceil(40 / 8.688) = ceil(4.60) = 5 replicas of 8.0 req/s: 2 owned (16.0) and 3 bought (24.0);
- without the owned servers the service needs ceil(24 / 9.261) = 3 H200 servers bought.

The objective decides: by cost and by GPUs bought (8 against 24) the split wins; by power it loses: the same three
servers, but two DGX H100 summed from components (2 x 8,741 W) plus one H200 server (8,373 W) are 25,855 W against
3 x 8,373 = 25,119 W on the basis compared, so the service goes to three bought H200 servers.

Owned servers slower per replica do not pay: two owned DGX A100 (TP8: 3.205 req/s per replica) beside bought H100
(TP4: 4.466 req/s) need ceil(24 / 3.205) = ceil(7.49) = 8 replicas, 2 on the A100s and 6 TP4 on 3 DGX H100: as many
H100 servers as the service needs alone (ceil(24 / 8.688) = 3 TP8), plus the A100s' upkeep, so nothing is split.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from generator.api import render_file
from generator.calculator.report import plan_text
from generator.fleet_diff import diff_plans, markdown_diff
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.planner.split import TRAINING_NOT_SPLIT
from generator.pr_diff import pool_memory
from generator.units import GIB
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
#: The chat service pinned to TP8, whose per-replica figures the arithmetic above uses: unpinned, at the same cost,
#: GPUs and power the planner takes twice as many TP4 replicas for their capacity (4 x 4.483 + 2 x 5.159 req/s
#: against 2 x 8.688 + 1 x 9.248; newuser24 item 4), as the fleet-split golden shows.
CHAT_TP8 = CHAT + "\n    parallelism: {{tp: 8}}"

TUNE = """\
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: full
      gradient_checkpointing: full
      sequence_length: 4096
      global_batch_size: 64
      dataset_tokens: 2000000000
      epochs: 1
      deadline_hours: {hours}"""

H100_ONLY = "  gpus: [h100-sxm5-80gb]\n"
H200_ONLY = "  gpus: [h200-sxm-141gb]\n"
A100 = ("dgx-a100", "      gpu: a100-sxm4-80gb\n")
H100 = ("dgx-h100", "      gpu: h100-sxm5-80gb\n")
H200_SERVER = "supermicro-as-8125gs-tnhr"  # the H200 server the cost objective picks (an estimated purchase)


def _write(
    tmp_path: Path,
    deployment: str,
    objective: str = "cost",
    allowed: str = H200_ONLY,
    owned: tuple[str, str] = H100,
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
        H200_ONLY,
        H100,
        [("dgx-h100", 2, 2), (H200_SERVER, 1, 0)],
        [("dgx-h100", 8, 1, 2, 2, 2), (H200_SERVER, 8, 1, 1, 1, 0)],
        id="owned-excluded-too-few-split-wins-on-cost",
    ),
    pytest.param(
        "gpus",
        24,
        H200_ONLY,
        H100,
        [("dgx-h100", 2, 2), (H200_SERVER, 1, 0)],
        [("dgx-h100", 8, 1, 2, 2, 2), (H200_SERVER, 8, 1, 1, 1, 0)],
        id="owned-excluded-too-few-split-wins-on-gpus-bought",
    ),
    pytest.param(
        "cost",
        40,
        H200_ONLY,
        H100,
        [("dgx-h100", 2, 2), (H200_SERVER, 3, 0)],
        [("dgx-h100", 8, 1, 2, 2, 2), (H200_SERVER, 8, 1, 3, 3, 0)],
        id="five-replicas-two-owned-three-bought",
    ),
    pytest.param("power", 24, H200_ONLY, H100, [(H200_SERVER, 3, 0)], [], id="split-loses-on-power-owned-stay-free"),
    pytest.param("cost", 16, H200_ONLY, H100, [("dgx-h100", 2, 2)], [], id="owned-hold-all-no-split"),
    pytest.param(
        "cost",
        24,
        H100_ONLY,
        A100,
        # even routing: 8 replicas at the A100's 3.205 req/s; the H100 part alone is as big as buying it all
        [("dgx-h100", 3, 0)],
        [],
        id="owned-slower-per-replica-no-split-under-even-routing",
    ),
    pytest.param(
        "cost",
        60,
        "  platforms: [dgx-h100]\n",
        ("dgx-h100", ""),
        # 60 / 8.63 = 6.95 -> 7 TP8 replicas by the rate; fix74: 8, on 8 DGX H100, the 2 owned and 6 bought. A replica
        # holds 156 places, a request one for 18.08 s: 7 x 156 = 1,092 places at 99.3% busy, 75% of requests wait, p95
        # 6.81 s past the 1.57 s slack (2,000 ms TTFT target - 430 ms TTFT p95 at the most load); 8 x 156 = 1,248 at
        # 86.9%, p95 0. One server kind, so no split: the slot wait alone moved it
        [("dgx-h100", 8, 2)],
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
    chat = CHAT if owned == A100 else CHAT_TP8  # the A100 case weighs TP4 on bought H100 against TP8 on the A100s
    plan = _plan(_write(tmp_path, chat.format(rps=rps), objective, allowed, owned))
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == pools
    (dep,) = plan.deployments
    assert [(s.platform_id, s.tp, s.pp, s.replicas, s.servers, s.owned_servers) for s in dep.split] == parts
    assert dep.replicas == (sum(s.replicas for s in dep.split) or dep.replicas)
    assert any(f.code == "deployment-split" for f in plan.findings) == bool(parts)


# (request rate, replicas, owned replicas, bought replicas, req/s per part, req/s per replica): N = ceil(rate / 8.688)
EVEN = [
    pytest.param(24, 3, 2, 1, (16.0, 8.0), 8.0, id="24-req-s"),
    pytest.param(30, 4, 2, 2, (15.0, 15.0), 7.5, id="30-req-s"),
    pytest.param(40, 5, 2, 3, (16.0, 24.0), 8.0, id="40-req-s"),
]


@pytest.mark.parametrize(("rps", "replicas", "owned_replicas", "bought_replicas", "part_rates", "per_replica"), EVEN)
def test_a_split_is_sized_for_requests_routed_evenly_over_all_replicas(
    tmp_path: Path,
    rps: float,
    replicas: int,
    owned_replicas: int,
    bought_replicas: int,
    part_rates: tuple[float, float],
    per_replica: float,
) -> None:
    plan = _plan(_write(tmp_path, CHAT_TP8.format(rps=rps)))
    (dep,) = plan.deployments
    owned, rest = dep.split
    # 9.19 before fix73: a prompt token's (N + 1) / 2 pairs, not N / 2
    assert (owned.requests_per_s_per_replica_max, rest.requests_per_s_per_replica_max) == (8.629, 9.189)
    slowest = min(owned.requests_per_s_per_replica_max, rest.requests_per_s_per_replica_max)
    assert dep.replicas == math.ceil(rps / slowest) == replicas
    assert (owned.replicas, rest.replicas) == (owned_replicas, bought_replicas)
    assert owned.replicas == owned.servers * 8 // owned.tp  # every owned GPU in use
    assert (owned.requests_per_s, rest.requests_per_s) == part_rates
    assert owned.requests_per_s_per_replica == rest.requests_per_s_per_replica == per_replica
    for part in dep.split:
        assert part.requests_per_s_per_replica <= part.requests_per_s_per_replica_max
        assert part.ttft_p95_s <= 2.0 and part.tpot_s <= 0.060
    assert "the replicas are counted at an even share of the requests each" in dep.reasons[0]


def test_a_split_deployment_reports_each_part_on_its_own(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path, CHAT_TP8.format(rps=24)))
    (dep,) = plan.deployments
    assert (dep.replicas, dep.gpus) == (3, 24)
    owned, rest = dep.split
    # the KV cache of a TP8 replica: the H200's 141 GB hold 2,700,400 tokens, the H100's 80 GB 1,267,040 (vLLM's
    # default of 1,024 sequences on both: its profiling run samples that many rows of logits)
    assert (owned.kv_cache_tokens_per_replica, rest.kv_cache_tokens_per_replica) == (1_267_040, 2_700_400)
    assert owned.weights_bytes == rest.weights_bytes == 141_107_412_992  # 70.55 B parameters x 2 bytes (bf16)
    for part in dep.split:
        assert part.memory_per_gpu["total"] == sum(
            v for k, v in part.memory_per_gpu.items() if k not in ("total", "kv_cache_pool")
        )
    # details hold the whole deployment only; the per-replica sizing is each part's
    assert dep.details["requests_per_s"] == 24
    assert not {"weights_bytes", "kv_cache_tokens_per_replica", "batch_per_replica", "requests_per_s_per_replica"} & set(
        dep.details
    )
    assert dep.memory_per_gpu == owned.memory_per_gpu  # documented: the first part's, for readers of one pool
    text = plan_text(plan)
    for part in dep.split:
        assert f"  per GPU in {part.pool}: weights {part.memory_per_gpu['weights'] / GIB:.1f} GiB" in text
    assert "\n  per GPU: " not in text


def test_the_plan_says_what_runs_where_and_counts_both_pools(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path, CHAT_TP8.format(rps=24)))
    (dep,) = plan.deployments
    assert dep.reasons[0] == (
        "split over two server kinds: 2 replica(s) (16 GPUs, TP8) on 2 owned dgx-h100 (h100-sxm5-80gb) in pool "
        "chat_h100_sxm5_80gb, 1 replica(s) (8 GPUs, TP8) on 1 bought supermicro-as-8125gs-tnhr (h200-sxm-141gb) in pool "
        "chat_h200_sxm_141gb; the replicas are counted at an even share of the requests each, the slower part's rate "
        "bounding it (a router that holds each request until any replica has a place free, inference.routing "
        "free_place, sends each part about the share of the places it frees, which the wait for a place in the batch, "
        "below, counts), so the service needs ceil(24 / 8.629) = 3 replicas at the slower part's 8.629 "
        "req/s per replica, "
        "2 of them on the free owned dgx-h100 servers; each replica serves 8.000 req/s (16.00 and 8.00 req/s per part), "
        "within the SLOs on both parts"
    )
    # fix85 (m74b item 7): the split states the wait for a place over both parts' places, as a service of one layout
    # does: 2 x 156 + 166 = 478 places; a request 18.08 s on the DGX, 18.06 s on the H200, weighted by the places each
    # part frees a second (2 x 156 / 18.08 = 17.3, 166 / 18.06 = 9.19): 478 / 26.45 = 18.07 s; 24 x 18.07 = 434 of 478,
    # 91% busy, 2.2% wait (under one in twenty: p95 0): the rate's 3 replicas keep it, none added
    assert dep.reasons[1].startswith(
        "a request holds a place in the batch for 18.07 s: its TTFT and its output at the TPOT, each replica at its most "
        "load (18.08 s on dgx-h100 and 18.06 s on supermicro-as-8125gs-tnhr, weighted by the requests each part's places "
        "take with all of them busy: they free 17.3 and 9.19 places a second); 2 replica(s) x 156 places + 1 replica(s) x "
        "166 places = 478 (c), 91% busy at 24 req/s: 2.2% of requests wait for one (p95 wait 0) (Erlang C"
    )
    assert "more than the rate alone needs" not in dep.reasons[1]
    assert (dep.details["slot_wait_share"], dep.details["slot_wait_p95_s"]) == (0.022, 0.0)
    assert dep.pools == ("chat_h100_sxm5_80gb", "chat_h200_sxm_141gb")
    assert (dep.in_pool("chat_h100_sxm5_80gb"), dep.in_pool("chat_h200_sxm_141gb")) == ((8, 1, 2, 16), (8, 1, 1, 8))
    assert (dep.requests_per_s_in("chat_h100_sxm5_80gb"), dep.requests_per_s_in("chat_h200_sxm_141gb")) == (16.0, 8.0)
    t = plan.totals
    assert (t["gpus"], t["nodes"], t["idle_gpus"]) == (24, 3, 0)
    # the one H200 server bought: host $77,000 + 8 x $35,000 per GPU (an estimated purchase); the owned cost 0
    assert t["capex_usd"] == 77_000 + 8 * 35_000
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
    assert [(p.node.platform_id, p.nodes) for p in bought.pools] == [(H200_SERVER, 3)]
    assert split.totals["usd_per_month"] < bought.totals["usd_per_month"]
    assert split.totals["capex_usd"] < bought.totals["capex_usd"]


# (deployments, pools as (platform, servers, owned), whether the training job says it is never split): 2B tokens
# take 36.9 h on one owned A100 server and 18.5 h on both; past a 12 h deadline the whole job goes to one bought
# DGX H100, never A100s beside H100s. The note only where owned A100s are still free when the job is placed: a
# 5 req/s chat service first takes both (2 x TP8 at 3.205 req/s hold 6.41).
# fix74: 5, not 6 req/s. A TP8 replica on the A100s holds 58 places, a request one for 18.08 s: at 6 req/s 2 x 58 = 116
# places run 93.5% busy, 37% of requests wait, p95 4.81 s past the 0.97 s slack (2,000 ms TTFT target - 1,031 ms TTFT
# p95 at the most load), so the chat no longer fits the owned pair unsplit and is split over them and a bought XE8640
# (test_a_split_service_is_held_to_the_slot_wait_below); at 5 req/s the pair runs 78% busy, 0.6% wait (p95 0), as this
# case was written for.
TRAINING = [
    pytest.param([TUNE.format(hours=48)], [("dgx-a100", 1, 1)], False, id="fits-owned"),
    pytest.param([TUNE.format(hours=12)], [("dgx-h100", 1, 0)], True, id="owned-too-slow-never-split-whole-job-bought"),
    pytest.param(
        [CHAT.format(rps=5), TUNE.format(hours=12)],
        [("dgx-a100", 2, 2), ("dgx-h100", 1, 0)],
        False,
        id="owned-all-taken-no-note",
    ),
]


@pytest.mark.parametrize(("deployments", "pools", "note"), TRAINING)
def test_a_training_job_is_never_split_over_server_kinds(
    tmp_path: Path, deployments: list[str], pools: list[tuple[str, int, int]], note: bool
) -> None:
    plan = _plan(_write(tmp_path, "\n".join(deployments), allowed=H100_ONLY, owned=A100))
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == pools
    tune = plan.deployments[-1]
    assert tune.split == ()
    assert (TRAINING_NOT_SPLIT in tune.reasons) == note


@pytest.mark.parametrize("routing", ["even", "free_place"])
def test_a_split_service_is_held_to_the_slot_wait(tmp_path: Path, routing: str) -> None:
    """A split's places keep the TTFT and the wait within the target, by the routing it names (fix88, fix90).

    fix90: the rule is P(TTFT + wait > 2 s) <= 5% (the slot line states it); the old one, the p95 wait within the
    slack, is kept below as what the split's places also meet here (a necessary check, not the rule).

    ``even``: each part alone, an M/M/c of its replicas x the places a replica runs at its most load (the batch its
    reason gives; a request holding one batch / the most a replica sustains) at the part's share of the rate; ``free_place``
    (the default): one queue over both parts' places, a request's time weighted by the places each part frees a second.
    Each against the 2 s target less the part's TTFT p95 at the planned load (more than the slack at the most load, so the
    bound is loose): the rule the unsplit layouts are held to (test_slot_queue). m74c: before fix85 sized a split by the
    rate alone, at 6 req/s the split's A100 part ran 4 x 23 places 93.9% busy (p95 wait 7.0 s against at most 0.73 s of
    slack) where the unsplit 2 x TP8 refused for a 4.81 s wait would have waited less.
    """
    import re

    from generator.sizing.serving_queue import slot_wait

    # fix90: at 6 req/s the owned pair now holds the chat unsplit (2 replicas at 3.0 of their 3.205 req/s, the 19/20
    # rung, run more places than at the most load); at 6.2 (0.967 of the most: only the most load's places) it splits
    chat = CHAT.format(rps=6.2).replace("      requests_per_second:", f"      routing: {routing}\n      requests_per_second:")
    plan = _plan(_write(tmp_path, chat, allowed=H100_ONLY, owned=A100))
    (dep,) = plan.deployments
    assert [(p.platform_id, p.replicas) for p in dep.split] == (
        [("dgx-a100", 1), ("dell-xe8640", 1)] if routing == "free_place" else [("dgx-a100", 2), ("dell-xe8640", 1)]
    )
    (said,) = [r for r in dep.reasons if r.startswith("a request holds a place")]
    share = re.search(r"P\(TTFT \+ wait > 2,000 ms\) = ([\d.]+)%, within the 5%", said)
    assert share and float(share[1]) <= 5.0
    parts = []
    for part in dep.split:
        (line,) = [r for r in dep.reasons if r.startswith(f"{part.platform_id} part: one replica sustains ")]
        found = re.search(r"within the SLOs \(batch (\d+)", line)
        assert found, line
        places = int(found.group(1))
        parts.append((part, places, places / part.requests_per_s_per_replica_max))
    slack = min(2.0 - part.ttft_p95_s for part, _, _ in parts)
    if routing == "even":
        for part, places, request_s in parts:
            wait = slot_wait(part.replicas * places, part.requests_per_s * request_s, request_s)
            assert wait.p95_s <= slack, (part.platform_id, part.replicas, places, wait)
    else:
        servers = sum(part.replicas * places for part, places, _ in parts)
        request_s = servers / sum(part.replicas * places / s for part, places, s in parts)
        wait = slot_wait(servers, 6.2 * request_s, request_s)  # the service's 6.2 req/s over both parts' places
        assert wait.p95_s <= slack, (servers, request_s, wait)


def test_the_rendered_tree_carries_both_pools(tmp_path: Path) -> None:
    files = render_file(str(_write(tmp_path, CHAT_TP8.format(rps=24))))
    pools = ("chat_h100_sxm5_80gb", "chat_h200_sxm_141gb")
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert sorted(tfvars["gpu_pools"]) == list(pools)
    assert [tfvars["gpu_pools"][p]["node_count"] for p in pools] == [2, 1]
    assert all(tfvars["gpu_pools"][p]["deployments"] == ["chat"] for p in pools)
    # the rate each pool is sized for: 8.0 req/s per replica, 2 and 1 replicas
    assert [tfvars["gpu_pools"][p]["requests_per_s"] for p in pools] == [{"chat": 16.0}, {"chat": 8.0}]
    device_plugin = files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"]
    assert all(p.replace("_", "-") in device_plugin for p in pools)
    inventory = files["ansible/inventory.yml"]
    assert all(f"    {p}:" in inventory for p in pools)
    # the owned hosts, each with the rack it stands in (newuser30 item 5)
    assert all(f"{host}:\n          specgen_rack: !unsafe 'rack-" in inventory for host in ("own-01", "own-02"))
    for pool, (replicas, tp, rate) in zip(pools, [(2, 8, 16.0), (1, 8, 8.0)], strict=True):
        group_vars = files[f"ansible/group_vars/{pool}.yml"]
        assert f"replicas: {replicas}" in group_vars and f"tensor_parallel: {tp}" in group_vars
        assert f"requests_per_s: {rate}" in group_vars
        assert f"kubeadm/join-{pool}.yaml" in files
    spec_md = files["SPEC.md"]
    assert "split over two server kinds" in spec_md
    for pool, gpu in zip(pools, ("h100-sxm5-80gb", "h200-sxm-141gb"), strict=True):
        assert f"| per GPU in pool `{pool}` ({gpu}, TP 8 x PP 1) | GiB |" in spec_md
    assert "| per GPU | GiB |" not in spec_md
    spec = json.loads(files["spec.json"])["plan"]["deployments"][0]
    assert [part["pool"] for part in spec["split"]] == list(pools)


def test_diff_shows_the_parts_and_the_memory_of_each(tmp_path: Path) -> None:
    split = _plan(_write(tmp_path, CHAT_TP8.format(rps=24))).to_dict()
    alone = tmp_path / "alone"
    alone.mkdir()
    path = _write(alone, CHAT_TP8.format(rps=24))
    path.write_text(path.read_text().split("  inventory:")[0])
    bought = _plan(path).to_dict()
    result = diff_plans(bought, split)
    text = markdown_diff(result)
    # the whole service shows the engine settings it is sized with; a split one its parts' (where they differ, each
    # part's in the layout's order: fuzz34 item 2) and the slower part's latency;
    # both the rate and the share of capacity it takes (newuser24 item 3), the capacity the plan names, its replicas'
    # rate less the wait for a place in the batch (newuser79 item 9: requests_per_s_sustained): 24 / 26.543 = 90%
    # (87% before, 24 / (3 x 9.189)); split, the 24 req/s go evenly to 3 replicas, so the H100 part's 8.629 req/s a
    # replica binds, less the wait: 24 / 25.431 = 94% (93% before, 24 / (3 x 8.629))
    assert (
        "| `chat` | meta-llama/Llama-3.1-70B-Instruct bf16 TP8xPP1 x3 (24 GPUs); 24.00 req/s asked, 90% of capacity "
        "(TTFT p95 385 ms, TPOT 39.2 ms at that load); SLO TTFT p95 2,000 ms, TPOT 60 ms; vllm, KV bf16, max_model_len "
        "8,192 (329.64 such sequences a replica), max_num_seqs 1,024, max_num_batched_tokens 8,192, at most 9.19 req/s a "
        "replica | **changed: places a replica 166 → 156 / 166, layout TP8xPP1 x3 in chat_h200_sxm_141gb → TP8xPP1 x2 "
        "in chat_h100_sxm5_80gb + "
        "TP8xPP1 x1 in chat_h200_sxm_141gb**; "  # what moved, first (newuser44 item 2)
        "meta-llama/Llama-3.1-70B-Instruct bf16 TP8xPP1 x2 in chat_h100_sxm5_80gb + TP8xPP1 x1 in "
        "chat_h200_sxm_141gb (24 GPUs); 24.00 req/s asked, 94% of capacity (TTFT p95 394 ms, TPOT 48.8 ms at that load); "
        "SLO TTFT p95 2,000 ms, TPOT 60 ms; vllm, KV bf16, max_model_len 8,192, max_num_seqs 1,024, max_num_batched_tokens "
        "8,192, at most 8.63 / 9.19 req/s a replica |"
    ) in text
    memory = pool_memory(split, result)
    assert [(m["deployment"], m["pool"]) for m in memory] == [("chat", "chat_h100_sxm5_80gb"), ("chat", "chat_h200_sxm_141gb")]
    for entry, part in zip(memory, split["deployments"][0]["split"], strict=True):
        assert entry["gpu_memory_bytes"]["weights"] == part["memory_per_gpu"]["weights"]


# runner-ups print the GPUs they buy: fleet-existing's first chat runner-up buys 4 GPUs beside the owned ones
def test_runner_ups_count_only_the_gpus_bought() -> None:
    from tests.conftest import REPO

    text = plan_text(plan_workload(load_workload(str(REPO / "examples" / "fleet-existing.yaml"))))
    assert (
        "  runner-up: 8 x TP2 on 2 x dgx-h100 (8 x h100-sxm5-80gb) + 4 x TP2 on 2 x dell-xe8640 (4 x h100-sxm5-80gb) "
        "(4 GPUs bought, 24 used," in text
    )
    # another layout on the chosen purchase (the same owned servers, nothing bought) is no alternative to list
    assert "(0 GPUs bought, 20 used," not in text


def test_a_services_runners_up_are_other_purchases_before_other_layouts() -> None:
    """newuser18 item 2: three other TP degrees on the same two p5 at the same $80,358 hid every other instance."""
    from tests.conftest import REPO

    plan = plan_workload(load_workload(str(REPO / "examples" / "chat-70b-fp8-aws.yaml")))
    ((pool,), (dep,)) = plan.pools, plan.deployments
    kinds = [(c.platform_id, c.gpu_id) for c in dep.runners_up]
    assert len(set(kinds)) == len(kinds) == 3 and (pool.node.platform_id, pool.node.gpu_id) not in kinds


def test_diff_lists_a_service_whose_engine_settings_changed(tmp_path: Path) -> None:
    """newuser10 item 6: a new max_num_seqs changed every node's serving flags, and the diff said "No change"."""
    plans = []
    for name, limit in (("old", ""), ("new", "      max_num_seqs: 64\n      max_num_batched_tokens: 4096\n")):
        (tmp_path / name).mkdir()
        path = _write(tmp_path / name, CHAT.format(rps=24))
        path.write_text(path.read_text().split("  inventory:")[0].replace("    inference:\n", "    inference:\n" + limit, 1))
        plans.append(_plan(path).to_dict())
    text = markdown_diff(diff_plans(*plans))
    assert "No change to the fleet." not in text
    assert "max_num_seqs 1,024, max_num_batched_tokens 8,192," in text
    assert "max_num_seqs 64, max_num_batched_tokens 4,096," in text
