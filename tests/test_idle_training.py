"""A training job on a serving pool's idle GPUs (newuser44 item 4): ``training-fits-idle-gpus`` quantifies it.

The plan keeps a training job on a pool of its own (its memory, interconnect and power peaks could break a service's
latency targets); the finding says, at the job, what running it on the idle GPUs of a serving pool would take and
save, from the planner's own figures: the job re-timed on that GPU by its training search, its runs a month against
the month's hours, and its own pool's cost against $0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload

#: An 8B service pinned to TP1 on one 8-GPU p5.48xlarge, whose rate needs 7 replicas (the eighth H100 runs one past the
#: rate's need: newuser46 item 2), and an 8B LoRA job.
WORKLOAD = """\
version: 1
name: idle-lora
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: aws-p5-48xlarge
    parallelism: {tp: 1, pp: 1}
    inference: {precision: bf16, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200,
                requests_per_second: 150, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}
  - name: lora
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: lora, lora_rank: 16, sequence_length: 4096, micro_batch_size: 2,
               dataset_tokens: 100000000, epochs: 1, deadline_hours: 8, runs_per_month: 4}
hardware: {provider: aws}
kubernetes: {location: us-east-1}
"""

HEAD = (
    "deployment lora: a run fits the 1 GPU(s) of serving pool small_h100_sxm5_80gb its rates do not need (of its 8 "
    "rented, 1 x 8-GPU aws-p5-48xlarge; 1 GPU(s) running replicas past the rate's need (replicas_past_rate), whose "
    "place the job would take): TP1 ZeRO-0 x DP1, micro-batch 2 x 1 accumulation step, no "
    "activation checkpointing (searched) on 1 h100-sxm5-80gb on one node, 74.8 GiB per GPU of 79.6 GiB, 2.56 h a run "
    # acc138: 0.14 -> 0.15 h on the B200 at its measured BF16 GEMM rate (MAMF 1,745 of 2,250 TFLOPS: 2,172 sustained)
    "as the planner's training model times it there (0.15 h on its own pool lora_b200_sxm_180gb), 2 sequences an "
    "optimizer step there against 16 (global_batch_size not set)"
)
TAIL = (
    "The plan keeps its own pool: co-locating would have small_h100_sxm5_80gb's nodes run the job's pod (its node "
    "selector and toleration, nvidia.com/gpu: 1) beside small, whose latency targets its memory, interconnect and "
    "power peaks could break, the risk the plan avoids"
)


def _plan(tmp_path: Path, *edits: tuple[str, str]) -> Plan:
    text = WORKLOAD
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return plan_workload(load_workload(path))


def _codes(plan: Plan) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in plan.findings:
        out.setdefault(f.code, []).append(f.message)
    return out


@pytest.mark.parametrize(
    ("edits", "middle", "end"),
    [
        (
            (),
            "; its 4 runs a month take 10.23 h of the 730 h a month those GPUs are spare. There it adds $0 to the fleet's "
            # $15.99 before acc104's optimizer step; $16.00 ($64.00) before acc138's measured B200 GEMM rate
            "month, against its own pool's $16.53 a run ($66.12 a month at 4 runs). ",
            "",
        ),
        (
            # no runs a month given: how many runs the idle hours hold; a rate that varies: its freed replicas not counted
            (
                (", runs_per_month: 4", ""),
                ("requests_per_second: 150,", "requests_per_second: 150, average_requests_per_second: 100,"),
            ),
            "; runs_per_month not set: the 730 h a month those GPUs are spare hold up to 285 runs. There it adds $0 to the "
            "fleet's month, against its own pool's $16.53 a run. ",
            "; the replicas freed between the average and the peak rate (small) are not counted: the plan models the "
            "average rate, not how many hours of the month it holds",
        ),
    ],
)
def test_lora_fits_one_idle_h100(tmp_path: Path, edits: tuple[tuple[str, str], ...], middle: str, end: str) -> None:
    plan = _plan(tmp_path, *edits)
    codes = _codes(plan)
    # the eighth GPU runs a replica past the rate's need, not idle (newuser46 item 2), and the job may take its place
    assert "idle-gpus" not in codes
    small = next(d for d in plan.deployments if d.name == "small")
    assert (small.replicas, small.details["replicas_past_rate"]) == (8, 1)
    assert codes["training-fits-idle-gpus"] == [HEAD + middle + TAIL + end]
    found = next(f for f in plan.findings if f.code == "training-fits-idle-gpus")
    assert (found.level, found.path) == ("info", "deployments[1]")
    # the policy stands: the job keeps its own rented B200 node, the fleet unchanged
    lora = next(d for d in plan.deployments if d.name == "lora")
    # acc138: $16.00 -> $16.53 a run, the B200 at its measured BF16 GEMM rate (2,172 sustained, not 2,250)
    assert (lora.pool, lora.gpus, lora.details["usd_per_job"]) == ("lora_b200_sxm_180gb", 8, 16.53)
    assert [(p.name, p.nodes) for p in plan.pools] == [("small_h100_sxm5_80gb", 1), ("lora_b200_sxm_180gb", 1)]


@pytest.mark.parametrize(
    ("edits", "past_rate"),
    [
        # one H100 takes 2.56 h, past a 1 h deadline: the job needs more GPUs than the one spare
        ((("deadline_hours: 8", "deadline_hours: 1"),), 1),
        # a full fine-tune of 8B does not fit one H100's memory
        ((("method: lora, lora_rank: 16", "method: full"),), 1),
        # 300 runs of 2.56 h take 767 h, more than the month the spare GPU has
        ((("runs_per_month: 4", "runs_per_month: 300"),), 1),
        # the rate needs all 8 replicas: no GPU spare
        ((("requests_per_second: 150", "requests_per_second: 180"),), None),
    ],
)
def test_no_finding_where_the_job_does_not_fit(tmp_path: Path, edits: tuple[tuple[str, str], ...], past_rate: int | None) -> None:
    plan = _plan(tmp_path, *edits)
    codes = _codes(plan)
    small = next(d for d in plan.deployments if d.name == "small")
    assert (small.replicas, small.details.get("replicas_past_rate")) == (8, past_rate)
    assert "idle-gpus" not in codes
    assert "training-fits-idle-gpus" not in codes


@pytest.mark.parametrize(
    ("gpus_per_node", "nodes", "gpus", "fabric", "idle", "nics", "fits"),
    [
        (8, 1, 1, False, [0, 1], (), True),  # one GPU on the node with one idle
        (8, 1, 2, False, [1, 1], (), False),  # two idle GPUs, but on two nodes: a one-node layout does not span them
        (8, 1, 2, False, [0, 2], (), True),
        (4, 1, 1, False, [0, 1], (), False),  # a layout of another server size
        (8, 2, 16, False, [8, 8, 0], (), True),  # over two nodes: two whole idle nodes
        (8, 2, 16, False, [8, 7, 0], (), False),
        (8, 2, 16, True, [8, 8], (), False),  # it asks for a GPU fabric the pool's nodes lack
        (8, 2, 16, True, [8, 8], ("fabric",), True),
    ],
)
def test_layout_fits_idle_gpus(
    gpus_per_node: int, nodes: int, gpus: int, fabric: bool, idle: list[int], nics: tuple[str, ...], fits: bool
) -> None:
    from types import SimpleNamespace
    from typing import Any, cast

    from generator.planner.idle_training import _fits

    opt = SimpleNamespace(
        candidate=SimpleNamespace(gpus_per_node=gpus_per_node, nodes=nodes, gpus=gpus),
        needs=SimpleNamespace(needs_fabric=fabric),
    )
    pool = SimpleNamespace(node=SimpleNamespace(gpus=8, nics=tuple(SimpleNamespace(role=r) for r in nics)))
    assert _fits(cast(Any, opt), idle, cast(Any, pool)) is fits


@pytest.mark.parametrize(
    ("idle", "replica_gpus", "start", "gbs", "degrees"),
    [
        # fix178 (newuser97 item 2): 4 of a DGX H100's 8 idle, the search's own degree DP1: DP2 to DP4 timed too
        ((4, 0, 8), 1, 1, 64, [2, 4]),  # a batch of 64 splits over no DP3
        ((4, 0, 8), 1, 1, None, [2, 3, 4]),
        ((6, 0, 8), 1, 1, 32, [2, 4]),  # newuser94's lab: 6 idle, a batch of 32
        ((6, 0, 8), 2, 1, None, [2, 3]),  # TP2 replicas: 3 of them on the 6
        ((4, 0, 8), 1, 4, None, []),  # the search's own degree takes them all
        ((8, 3, 8), 1, 1, None, [2, 3, 4, 5, 6, 7, 8, 16, 24]),  # past one node only whole idle nodes
        ((8, 3, 8), 16, 0, None, [1]),  # a 16-GPU replica on two of the three whole idle nodes
        ((0, 2, 8), 1, 8, None, [16]),  # no GPU idle on a node in use, two whole idle nodes
        ((1, 1, 8), 1, 1, None, []),  # one whole idle node is one node: its 8 GPUs are on_one_node's
        ((8, 40, 8), 8, 1, None, [2, 7, 12, 18, 23, 29, 34, 40]),  # at most 8 over several nodes, the most kept
        ((8, 3, 8), 1, 1, 4096, [2, 4, 8, 16]),  # over the nodes DP16 splits a batch of 4,096, DP24 does not
    ],
)
def test_the_degrees_timed_on_idle_gpus(
    idle: tuple[int, int, int], replica_gpus: int, start: int, gbs: int | None, degrees: list[int]
) -> None:
    from generator.planner.idle_degrees import IdleGpus

    assert IdleGpus(*idle).degrees(replica_gpus, start, 4096, gbs) == degrees


@pytest.mark.parametrize(
    ("serving", "job", "offered"),
    [
        ("on-demand", "on-demand", True),
        ("spot", "spot", True),
        ("spot", "on-demand", False),  # review30 item 5: a job is offered no pool of the other capacity type
        ("on-demand", "spot", False),
    ],
)
def test_a_job_is_offered_idle_gpus_of_its_own_capacity_type_only(tmp_path: Path, serving: str, job: str, offered: bool) -> None:
    plan = _plan(
        tmp_path,
        ("    platform: aws-p5-48xlarge\n", f"    platform: aws-p5-48xlarge\n    capacity_type: {serving}\n"),
        ("  - name: lora\n", f"  - name: lora\n    capacity_type: {job}\n"),
    )
    said = _codes(plan).get("training-fits-idle-gpus", [])
    assert [m.split(" (of its ")[0] for m in said] == (
        ["deployment lora: a run fits the 1 GPU(s) of serving pool small_h100_sxm5_80gb its rates do not need"] if offered else []
    )


def test_replicas_past_the_rate_count_an_attention_dp_replicas_gpus(tmp_path: Path) -> None:
    """review72 item 4: Qwen3-30B-A3B pinned {tp: 1, ep: 2} at 0.5 req/s needs 1 replica; 3 more of 2 GPUs each fill the
    8-GPU server, so 6 GPUs run replicas past the rate and none is idle (TP x PP counted them as 3, and said "3 idle all
    month")."""
    path = tmp_path / "idle-train-dp2.yaml"
    path.write_text(IDLE_DP2)
    plan = plan_workload(load_workload(str(path)))
    codes = _codes(plan)
    assert "idle-gpus" not in codes
    q30 = next(d for d in plan.deployments if d.name == "q30")
    assert (q30.replicas, q30.details["replicas_past_rate"], q30.stage_gpus, q30.gpus) == (4, 3, 2, 8)
    (message,) = codes["training-fits-idle-gpus"]
    assert "a run fits the 6 GPU(s) of serving pool q30_h200_sxm_141gb" in message
    assert "(of its 8 bought, 1 x 8-GPU supermicro-as-8125gs-tnhr; 6 GPU(s) running replicas past the rate's need" in message
    assert "idle all month" not in message


#: review72's idle-train-dp2.yaml: an attention-DP 2 service on one 8-GPU H200 server and a QLoRA job.
IDLE_DP2 = """\
version: 1
name: idle-train-dp2
deployments:
  - name: q30
    model: Qwen/Qwen3-30B-A3B
    parallelism: {tp: 1, ep: 2}
    inference: {precision: fp8, max_context_tokens: 32768, avg_input_tokens: 1000, avg_output_tokens: 1000,
                requests_per_second: 0.5, slo: {ttft_p95_ms: 5000, tpot_ms: 60}}
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training: {method: qlora, lora_rank: 16, sequence_length: 8192, global_batch_size: 64, dataset_tokens: 20000000,
               epochs: 1, deadline_hours: 48}
hardware: {gpus: [h200-sxm-141gb], platforms: [supermicro-as-8125gs-tnhr], provider: baremetal}
"""
