"""Tie-breaks of the objective (#8): idle bought GPUs must be paid for by a better objective value."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.options import rank
from generator.planner.plan import Candidate
from generator.workload import load_workload
from tests.conftest import REPO

# 12 GPUs bought on three 4-GPU servers, all in use (3 x TP4)
BASE = Candidate(
    gpu_id="h100-sxm5-80gb",
    platform_id="dell-xe8640",
    gpus_per_node=4,
    tp=4,
    pp=1,
    replicas=3,
    gpus=12,
    nodes=3,
    usd_per_hour=12.0,
    power_w=12700,
    summary="full",
    gpus_bought=12,
    idle_gpus=0,
    latency_s=0.03,
    power_compared_w=12700,
)


def _with(**changes: object) -> Candidate:
    return BASE._replace(summary="other", **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("objective", "other", "other_wins"),
    [
        # the same bill, but 5 x TP2 uses 10 of the 12 GPUs: the idle-free plan wins the tie
        pytest.param("cost", _with(tp=2, replicas=5, gpus=10, idle_gpus=2), False, id="cost-tie-idle-loses"),
        pytest.param("gpus", _with(tp=2, replicas=5, gpus=10, idle_gpus=2), False, id="gpus-tie-idle-loses"),
        pytest.param("power", _with(tp=2, replicas=5, gpus=10, idle_gpus=2), False, id="power-tie-idle-loses"),
        # idle GPUs are acceptable when the plan wins on the objective itself
        pytest.param("cost", _with(usd_per_hour=11.0, gpus=10, idle_gpus=2), True, id="cost-idle-but-cheaper-wins"),
        pytest.param("gpus", _with(gpus_bought=8, gpus=6, idle_gpus=2, nodes=1), True, id="gpus-idle-but-fewer-bought"),
        pytest.param("power", _with(power_compared_w=12000, gpus=10, idle_gpus=2), True, id="power-idle-but-less-power"),
        # fewer idle GPUs before fewer servers
        pytest.param(
            "cost", _with(nodes=2, gpus_per_node=8, gpus=12, gpus_bought=16, idle_gpus=4), False, id="idle-before-servers"
        ),
        # then fewer servers, then less power, then lower latency
        pytest.param("cost", _with(nodes=2, gpus_per_node=6), True, id="fewer-servers"),
        pytest.param("cost", _with(power_compared_w=12000), True, id="less-power"),
        pytest.param("cost", _with(latency_s=0.02, tp=2, replicas=6), True, id="lower-latency"),
        pytest.param("cost", _with(latency_s=0.04), False, id="higher-latency"),
        pytest.param("gpus", _with(nodes=2, gpus_per_node=6), True, id="gpus-fewer-servers"),
        pytest.param("power", _with(nodes=2, gpus_per_node=6), True, id="power-fewer-servers"),
    ],
)
def test_tie_breaks(objective: str, other: Candidate, other_wins: bool) -> None:
    assert (rank(objective, other) < rank(objective, BASE)) is other_wins
    assert (rank(objective, BASE) < rank(objective, other)) is not other_wins


def test_chat_70b_maas_does_not_leave_bought_gpus_idle_on_a_cost_tie(tmp_path: Path) -> None:
    # The example at 13 req/s (at its own 12 req/s the recalibrated throughput fits the two owned
    # servers, so no tie is left to break): 3 x TP4 and 5 x TP2 both need three 4-GPU servers at
    # the same price; TP2 would leave 2 bought GPUs idle, so TP4 wins the tie.
    # fix74: 13, not 14 req/s. A TP2 replica sustains 2.48 req/s with 50 places, a request holding one 20.12 s: at 14 req/s
    # 6 x 50 = 300 places run 93.9% busy, 20% of requests wait, p95 1.51 s past the 0.73 s slack (1,500 ms TTFT target -
    # 767 ms TTFT p95 at the most load), so TP2 takes 7 replicas on 4 servers and no layout ties 3 x TP4 on 3; at 13 the
    # 6 x TP2 run 87.2% busy, 1.2% wait (p95 0), on the same three servers, and 3 x TP4 (366 places, 71%) still win the tie
    text = (REPO / "examples" / "chat-70b-maas.yaml").read_text().replace("requests_per_second: 12", "requests_per_second: 13")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    plan = plan_workload(load_workload(str(path)))
    dep = plan.deployments[0]
    assert (dep.tp, dep.details["idle_gpus"], plan.pools[0].nodes) == (4, 0, 3)
    # the same three servers are no other purchase: that layout is said beside the runners-up (newuser18 item 2)
    # (fuzz22 item 1: PP inside a server is searched at TP2 too; newuser30 item 1: a TP2 pair of the XE8640's 4-GPU
    # board reaches a third of each H100's NVLinks, so its replicas are slower and 6 x TP2 is that layout)
    assert dep.reasons[-2].startswith("the best other layout on the same purchase: 6 x TP2 on 3 x dell-xe8640")
    assert dep.reasons[-2].endswith(", 0 idle GPU(s))")


@pytest.mark.parametrize(
    ("sharing", "tp", "idle"),
    [
        # whole GPUs: the 8-GPU instance is paid for either way, and 8 x TP1 fill it with the most capacity (newuser46
        # item 2: before, the idle-free 1 x TP8 won the tie over 1 x TP1 and 7 GPUs idle)
        pytest.param(False, 1, 0, id="whole-gpus"),
        # MIG gives each pod one instance with no GPU-to-GPU P2P: a replica stays on one GPU
        pytest.param(True, 1, 7, id="mig-one-instance-per-pod"),
    ],
)
def test_mig_sharing_keeps_each_replica_on_one_gpu(tmp_path: Path, sharing: bool, tp: int, idle: int) -> None:
    # limited to the 8-GPU a2-ultragpu-8g: with the 1-GPU shape allowed, both rent one a2-ultragpu-1g (TP1, 0 idle)
    text = (REPO / "examples" / "small-models-gke-sharing.yaml").read_text()
    text = text.replace("hardware:\n", "hardware:\n  platforms: [gcp-a2-ultragpu-8g]\n")
    if not sharing:
        text = text[: text.index("  gpu_sharing:")]
    path = tmp_path / "w.yaml"
    path.write_text(text)
    dep = plan_workload(load_workload(str(path))).deployments[0]
    assert (dep.tp, dep.details["idle_gpus"]) == (tp, idle)


MIXED_SMALL = """\
version: 1
name: mixed
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 0.5}
  - name: other
    model: Qwen/Qwen2.5-7B-Instruct
    inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 0.5}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: aws
  platforms: [aws-p5-48xlarge]
"""


@pytest.mark.parametrize(
    ("text", "servers", "co_located"),
    [
        # two small services on the 8-GPU p5.48xlarge (pinned: AWS rents each a 1-GPU p5.4xlarge): one shared (6 GPUs
        # idle) beats two filled ones on cost
        pytest.param(MIXED_SMALL, 1, True, id="sharing-wins-on-cost"),
        # different platforms: nothing to share, so the idle-free layouts stand.
        # fix74: the example's chat at 56, not 60 req/s. At 60 its 5 x TP8 (12.15 req/s, 122 places a replica, a request
        # holding one 10.04 s) run 610 places 98.8% busy: 67% of requests wait, p95 3.46 s past the 1.20 s slack (1,500 ms
        # TTFT target - 296 ms TTFT p95 at the most load); the chat then plans 11 x TP4 on 6 DGX H100, and the helper
        # takes their 4 left-over GPUs (something to share). At 56 the 5 x TP8 run 92.2% busy, 2.9% wait (p95 0): 5 DGX
        # H100 filled and the helper on an L40S server of its own, the case this one is about
        pytest.param(
            (REPO / "examples" / "rack-density.yaml").read_text().replace("requests_per_second: 60", "requests_per_second: 56"),
            6,
            False,
            id="nothing-to-share",
        ),
    ],
)
def test_a_fleet_with_idle_gpus_is_kept_only_when_it_wins_on_the_objective(
    tmp_path: Path, text: str, servers: int, co_located: bool
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    plan = plan_workload(load_workload(str(path)))
    assert plan.totals["nodes"] == servers
    assert any(d.details["co_located"] for d in plan.deployments) is co_located
    if not co_located:
        assert plan.totals["idle_gpus"] == 0


MIXED_WITH_JOB = MIXED_SMALL.replace(
    "hardware:",
    """  - name: tune
    model: meta-llama/Llama-3.1-8B
    training: {method: qlora, lora_rank: 16, sequence_length: 4096, global_batch_size: 64,
               dataset_tokens: 200000000, epochs: 1, deadline_hours: 48}
hardware:""",
).replace("name: mixed", "name: mixed\nobjective: gpus")


def test_the_sharing_pass_leaves_training_jobs_as_the_first_pass_chose_them(tmp_path: Path) -> None:
    # training always gets a pool of its own: packing it onto few GPUs would only leave bought ones idle
    path = tmp_path / "w.yaml"
    path.write_text(MIXED_WITH_JOB)
    plan = plan_workload(load_workload(str(path)))
    job = next(d for d in plan.deployments if d.name == "tune")
    assert job.details["idle_gpus"] == 0
