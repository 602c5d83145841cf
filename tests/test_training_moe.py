"""A mixture-of-experts training step is not a dense model's of its active parameters (newuser43 items 5 and 3).

The routed experts' GEMMs run at their tokens per expert, expert parallelism adds its all-to-alls over the EP group's
link, a Hugging Face family framework's per-expert loop is named as not counted, and the speed block says what the
framework changes in the step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture, routed_expert_params
from generator.sizing.constants import Constants, with_overrides
from generator.sizing.training_moe import (
    NO_MOE,
    MoeStep,
    alltoall_bytes,
    alltoall_calls,
    expert_compute_factor,
    expert_fill,
    moe_step,
    tokens_per_expert,
)
from generator.sizing.training_step import NO_DP, StepLayout, StepLinks, StepTime, training_step
from tests.conftest import calibration_report as _report
from tests.helpers import run_estimate

REPO = Path(__file__).resolve().parents[1]
MOE = "Qwen/Qwen3-30B-A3B"


@pytest.fixture(scope="module")
def arch() -> Architecture:
    return parse_architecture(find_model(MOE).config)


def _step(
    arch: Architecture, moe: MoeStep, micro_batch: int = 1, seq: int = 4096, accumulation: int = 1, dp: int = 1
) -> StepTime:
    layout = StepLayout(1, 1, dp, micro_batch, accumulation, seq)
    return training_step(
        layout,
        StepLinks(tp_gbps=0.0, stage_gbps=0.0),
        with_overrides({}),
        hidden_size=arch.hidden_size,
        num_layers=arch.num_layers,
        flops_per_token=6.0 * arch.flop_params,
        base_efficiency=0.4,
        dense_tflops=312.0,
        dp_traffic=NO_DP,
        moe=moe,
    )


def test_routed_share_and_tokens_per_expert(arch: Architecture) -> None:
    moe = moe_step(arch)
    # 48 MoE layers x 8 of 128 experts x (gate, up, down: 3 x 2048 x 768)
    assert routed_expert_params(arch) == 48 * 8 * 3 * 2048 * 768
    assert moe.moe_layers == 48 and (moe.experts, moe.top_k) == (128, 8)
    assert tokens_per_expert(moe, 4096) == 256.0
    assert tokens_per_expert(moe_step(arch, expert_parallel=8), 4096) == 2048.0


@pytest.mark.parametrize(
    ("micro_tokens", "factor"),
    [(4096, 1.0347665), (1024, 1.1374615), (256, 1.5255883)],
)
def test_moe_slower_per_token_than_dense_of_its_active_size(arch: Architecture, micro_tokens: int, factor: float) -> None:
    """The same FLOPs at the same micro-batch take longer: the experts' GEMMs see tokens x 8 / 128 rows each."""
    consts = with_overrides({})
    assert expert_compute_factor(moe_step(arch), micro_tokens, consts) == pytest.approx(factor, abs=1e-6)
    dense = _step(arch, NO_MOE, seq=micro_tokens)
    moe = _step(arch, moe_step(arch), seq=micro_tokens)
    assert moe.compute_s / dense.compute_s == pytest.approx(factor, abs=1e-6)
    assert expert_compute_factor(NO_MOE, micro_tokens, consts) == 1.0


def test_alltoall_scales_with_ep_and_link(arch: Architecture) -> None:
    assert alltoall_bytes(moe_step(arch), 4096) == 0.0  # no EP: no all-to-all
    by_ep = {ep: alltoall_bytes(moe_step(arch, expert_parallel=ep), 4096) for ep in (2, 4, 8)}
    assert by_ep == pytest.approx({2: 12926859174.39, 4: 19439368118.02, 8: 22727228691.97}, abs=1.0)
    # four a MoE layer (dispatch and combine, forward and backward), six when full checkpointing reruns the forward
    assert alltoall_calls(moe_step(arch, expert_parallel=8)) == 4 * 48
    assert alltoall_calls(moe_step(arch, expert_parallel=8, recompute=True)) == 6 * 48
    slow = _step(arch, moe_step(arch, expert_parallel=8, link_gbps=1920.0), dp=8)
    fast = _step(arch, moe_step(arch, expert_parallel=8, link_gbps=3840.0), dp=8)
    assert slow.expert_alltoall_s == pytest.approx(22727228691.97 * 8 / 1920e9)
    assert fast.expert_alltoall_s == pytest.approx(slow.expert_alltoall_s / 2)
    assert slow.total_s - fast.total_s == pytest.approx(slow.expert_alltoall_s / 2)
    assert slow.as_dict()["expert_alltoall_s"] == round(slow.expert_alltoall_s, 4)
    assert "expert_alltoall_s" not in _step(arch, NO_MOE).as_dict()  # a dense step's split is unchanged


def test_ep_link_is_chosen_once() -> None:
    """Review 28 item 1: an EP group past one node crosses the fabric at a GPU's share, else the node's GPU link.

    acc145: past one node only the peers on other nodes cross it; EP 16 on 8-GPU nodes sends 8 of 15 peers' bytes at
    400 Gb/s a GPU, 750 Gb/s for all of them (400 before: every byte over the fabric)."""
    from generator.catalog import find_gpu
    from generator.planner.training_comm import ep_link_name, links_between

    gpu, consts = find_gpu("h100-sxm5-80gb"), with_overrides({})
    nvlink = "NVLink 370.8 GB/s per GPU"
    cases = [(16, 750.0, True, f"fabric for 8 of 15 peers, {nvlink} for the 7 in its node"), (2, 2966.4, False, nvlink)]
    for ep, gbps, crosses, name in cases:
        links = links_between(gpu, 8, 2, 3200.0, 1, 1, 16, consts, 3, ep)
        assert links.ep_gbps == pytest.approx(gbps)
        assert links.ep_crosses_nodes is crosses
        assert ep_link_name(gpu, links, min(ep, 8), "fabric", ep) == name
        latency = links.dp_latency_s if crosses else consts.allreduce_latency_nvlink_s
        assert links.ep_latency_s == latency


@pytest.mark.parametrize(
    ("ep", "said"),
    [
        # 18.37 GB over 400 Gb/s a GPU (3,200 Gb/s a node / 8 GPUs) = 0.367 s + its collectives' latency; 0.070 s at
        # NVLink before; acc145: 0.387 -> 0.216 s, only the 8 of 15 peers on the other node over the fabric (18.37 x
        # 8 / 15 GB at 50 GB/s = 0.196 s, the 7 in the node's 8.57 GB over NVLink 0.023 s, at once) + 0.020 s latency
        (
            "16",
            "EP all-to-all 0.216 s (18.37 GB per GPU over 8 x 400 Gb/s GPU fabric for 8 of 15 peers, NVLink 370.8 GB/s"
            " per GPU for the 7 in its node)",
        ),
        # EP 2 inside a server: its GPU link, not the DP's fabric (which the text named before)
        ("2", "EP all-to-all 0.035 s (9.71 GB per GPU over NVLink 370.8 GB/s per GPU)"),
    ],
)
def test_multi_server_ep_alltoall_link(ep: str, said: str) -> None:
    # fix194: at full, as pinned (left out, the level a plan sizes: none fits and is faster)
    out = _estimate(
        "Qwen/Qwen3-30B-A3B", "--train", "full", "--zero", "3", "--gpu", "h100-sxm5-80gb", "--gpus", "16", "--ep", ep,
        "--gradient-checkpointing", "full",
    )  # fmt: skip
    assert said in out


def _estimate(*args: str) -> str:
    code, out = run_estimate(*args)
    assert code == 0, out
    return out


def test_estimate_counts_the_ep_alltoall() -> None:
    out = _estimate(
        MOE, "--train", "full", "--framework", "deepspeed", "--zero", "2", "--ep", "8",
        "--gpu", "a100-sxm4-80gb", "--gpus", "8", "--seq-len", "4096",
    )  # fmt: skip
    # newuser43 item 5: 48,361 tokens/s at 35.4% MFU with the all-to-all "not counted"
    # 0.834 s, 39,308 tokens/s before FlashAttention-2's A100 share fitted in its range, thirty-third entry; 0.814 s,
    # 40,262 tokens/s before newuser70 item 1 counted the attention 32 x 128 = 4,096 wide, not the 2,048 hidden: the
    # compute's 0.065 s more is 8 x 48 x 2,048 x 4,096 x 4,096 FLOPs (recomputed) at 0.65 of the A100's 312 TFLOPS
    # 0.880 s, 37,251 tokens/s before acc104: DeepSpeed ZeRO-2 without overlap_comm reduces on the compute stream, so
    # its 5.39 GB a GPU over the A100's NVLink (0.023 s) no longer hide behind the backward pass, and the GPU's AdamW
    # over its 1 / 8 of the 30.5B parameters (30 bytes each at the A100's HBM rate, 0.060 s) runs after it
    # 0.962 s, 34,059 tokens/s, 24.9% MFU before acc107 counted the Trainer's eager norm, rotary, gating (each token's
    # 8 routed experts) and residual operators: 269.0 GB a GPU and step at the A100's sustained HBM rate
    # 1.102 s, 29,725 tokens/s, 21.7% MFU before acc111 counted the grouped_mm block's routing passes: each token's 8
    # copies gathered, sorted, weighted, unsorted and summed, 18 B a copied hidden element (+235.1 GB a GPU and step)
    # 1.225 s, 26,749 tokens/s, 19.6% MFU before acc113 counted Qwen3's q_norm and k_norm (an RMSNorm over each head of q
    # and k) and the eager cross-entropy's passes over the fp32 logits (36 B a logit): +152.9 GB a GPU and step
    # 1.305 s, 25,115 tokens/s, 18.4% MFU before acc117's torch._grouped_mm rate met acc113 (session 42 merge): DeepSpeed
    # runs the Trainer's Transformers 5 experts, 4,096 x EP 8 x top 8 / 128 = 2,048 tokens an expert at
    # 2,048 / (2,048 + 512) = 0.8 of the dense rate, not 2,048 / 2,064 = 0.992; with the routed share 0.5957 and the
    # busiest rank 1.0079: compute factor (1 - 0.5957) + 0.5957 x 1.0079 x (4,096 / 4,112) / 0.8 = 1.1519 against 1.0071,
    # 0.728 x 1.1519 / 1.0071 = 0.833 s (+0.105 s), 32,768 / 1.409 = 23,256 tokens/s (23,248 unrounded)
    assert "one step takes 1.409 s: compute 0.833 s + eager norm, rotary, gating and residual operators 0.343 s" in out
    assert "+ EP all-to-all 0.151 s (34.09 GB per GPU over NVLink" in out
    assert "DP/ZeRO 0.023 s exposed of 0.023 s" in out
    assert "+ optimizer step 0.060 s (114.5 GB per GPU" in out
    assert "23,248 tokens/s (2,906 per GPU), 17.0% MFU" in out
    assert "all-to-all exchanges" not in out
    assert "EP 8's all-to-alls counted in series" in out
    assert "per-expert Python loop" in out  # DeepSpeed through the Hugging Face Trainer


@pytest.mark.parametrize(("framework", "loop"), [("trl", True), ("hf", True), ("unsloth", False), ("fsdp2", False)])
def test_expert_loop_named_where_the_framework_runs_one(framework: str, loop: bool) -> None:
    args = ["--train", "lora", "--framework", framework, "--gpu", "a100-sxm4-80gb", "--seq-len", "2048"]
    out = _estimate(MOE, *args)
    assert ("not counted: the host time of running the routed experts as a per-expert Python loop" in out) is loop
    assert "note: mixture of experts: 128 routed experts, top 8; the experts' GEMMs are timed at their tokens" in out


def test_speed_block_says_the_framework_is_not_timed() -> None:
    """newuser43 item 3: every framework gave the same tokens/s, and nothing said so. Since the H200 runs of 2026-12-04
    PEFT's passes over the activations are timed, and since acc107 the Trainer's eager norm, rotary, gating and residual
    operators (Unsloth's Triton kernels fuse them): the Trainer's QLoRA is slower than Unsloth's by those two alone."""
    rates = []
    for framework in ("hf", "unsloth"):
        out = _estimate(
            "meta-llama/Llama-3.1-8B", "--train", "qlora", "--framework", framework,
            "--gpu", "rtx-4090-24gb", "--seq-len", "2048",
        )  # fmt: skip
        assert "note: step time depends on --framework only through what is modelled" in out
        assert "so frameworks are not compared on this line" in out
        assert "mixture of experts" not in out
        assert "PEFT's passes over the activations" in out
        # the Trainer runs them eager, Unsloth's kernels fuse them
        assert ("eager norm, rotary, gating and residual operators" in out) is (framework == "hf")
        line = next(line for line in out.splitlines() if "tokens/s (" in line)
        rates.append(float(line.split(" tokens/s (")[0].split()[-1].replace(",", "")))
    # 1,520 against 2,174 tokens/s (1,314 / 1,763 before acc135's GeForce MMA slack sped the 4090's GEMMs 1.27x and left
    # the Trainer's memory-bound eager operators as they were: 1.34x -> 1.43x; under 1.2x before acc107)
    assert rates[0] < rates[1] < 1.5 * rates[0]


def test_calibration_moe_row_needs_the_mechanism(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Megatron-Core Qwen3-235B-A22B row: -12.9% with the experts' terms, +2.2% timed as a dense model.

    Review 28 item 1: its EP 8 sits inside a node (ETP 1), so its all-to-alls pay the node's collective latency; they
    paid the ZeRO-3 ring's over 64 nodes before (-7.5%). Its full recomputation reruns each layer's TP collectives
    (newuser51 item 6: +1.5% and +22.6% before). Newuser70 item 1 counts its attention at 64 heads x 128 = 8,192 wide,
    not the 4,096 hidden (+1.1% and +22.0% before): the width the row's own "Per GPU TF" 276 counts (6 N plus
    Megatron's causal 6 L s x 8,192 a token: 241 x 1.146 = 276; at 4,096 it would read 259). The experts' terms are
    the step's own (the all-to-all's bytes, the expert GEMMs' fill); with the attention right, the row is 12.9% slow,
    which no constant was refitted to hide (benchmarks/CALIBRATION.md, newuser70 entry). Issue 9 (acc134): Megatron-Core
    runs Transformer Engine's cuDNN attention, FlashAttention-2's algorithm, at FlashAttention-2's published 35% of the
    H100's peak rather than the llm-foundry Triton kernel's fitted rate: -12.9% -> +3.4%, and timed as a dense model
    +2.2% -> +16.5% (the experts' terms still cost it 11%).
    """
    calibration_report = _report()
    rows = json.loads((REPO / "tests" / "data" / "calibration_training_mfu.json").read_text())["rows"]
    row = next(r for r in rows if r.get("ep"))
    assert row["mfu"] == 0.2436
    assert calibration_report.predict_training_mfu(row) / row["mfu"] - 1 == pytest.approx(0.0341, abs=0.001)
    monkeypatch.setattr(calibration_report, "moe_step", lambda *a, **k: NO_MOE)
    assert calibration_report.predict_training_mfu(row) / row["mfu"] - 1 == pytest.approx(0.1651, abs=0.001)


PLAN = """version: 1
name: moe
deployments:
  - name: qwen-moe-lora
    model: MODEL
    training: {method: lora, framework: FRAMEWORK, sequence_length: 4096, dataset_tokens: 100000000, epochs: 1}
hardware:
  gpus: [a100-sxm4-80gb]
  provider: baremetal
  buy: false
  inventory:
    - {platform: dgx-a100, gpu: a100-sxm4-80gb, count: 2, hosts: [{name: a100-01}, {name: a100-02}]}
"""


@pytest.mark.parametrize(
    ("model", "framework", "said"),
    [
        (MOE, "trl", "loop"),
        (MOE, "unsloth", "model"),
        ("meta-llama/Llama-3.1-8B", "trl", None),
    ],
)
def test_plan_warns_of_the_moe_step(tmp_path: Path, model: str, framework: str, said: str | None) -> None:
    """newuser43 item 5: the plan's MoE LoRA (w1.yaml) said nothing of what its 0.5 h leaves out."""
    from generator.api import plan_file

    path = tmp_path / "w.yaml"
    path.write_text(PLAN.replace("MODEL", model).replace("FRAMEWORK", framework))
    found = [f for f in plan_file(str(path))[1].findings if f.code == "moe-training-step"]
    if said is None:
        assert not found
        return
    (finding,) = found
    # newuser89 item 7: a warning only where the per-expert loop is left out; how the experts are timed informs
    assert finding.level == ("warning" if said == "loop" else "info") and finding.path == "deployments[0].training"
    assert finding.message.startswith(
        "deployment qwen-moe-lora: mixture of experts: 128 routed experts, top 8; the experts' GEMMs are timed at their "
        "tokens per expert"
    )
    assert ("not counted under trl: the host time of running the routed experts as a per-expert" in finding.message) is (
        said == "loop"
    )


@pytest.mark.parametrize(
    ("nodes", "dp", "ep", "gbps", "crosses"),
    [
        # EP 8 fills a node: each rank of an expert-data-parallel group sits on a node of its own, on its own 400 Gb/s
        # NIC, where the dense gradients' ring (8 replicas a node) has all 3,200 Gb/s of the node
        (8, 64, 8, 400.0, True),
        # EP 4: two ranks of each group a node, two NICs' worth
        (8, 64, 4, 800.0, True),
        # EP = DP: every expert on one rank, no group to reduce over
        (8, 64, 64, 0.0, False),
        # one node: the GPU link
        (1, 8, 2, 2966.4, False),
    ],
)
def test_expert_data_parallel_link(nodes: int, dp: int, ep: int, gbps: float, crosses: bool) -> None:
    """acc93: the routed experts' gradients are reduced over one rank of each EP group, not every data-parallel rank."""
    from generator.catalog import find_gpu
    from generator.planner.training_comm import links_between

    gpu, consts = find_gpu("h100-sxm5-80gb"), with_overrides({})
    links = links_between(gpu, 8, nodes, 3200.0, 1, 1, dp, consts, 1, ep)
    assert links.expert_dp_gbps == pytest.approx(gbps)
    assert links.expert_dp_crosses_nodes == crosses
    if nodes > 1:
        assert links.dp_inter_gbps == 3200.0  # the dense gradients' share is unchanged
    assert (links.expert_dp_latency_s > 0) == (gbps > 0)


def test_expert_gradients_time_after_the_dense_ones(arch: Architecture) -> None:
    """The experts' traffic adds its bytes at the expert-data-parallel link and its collectives' latency to the DP term."""
    from generator.sizing.training_step import DpTraffic

    layout = StepLayout(1, 1, 64, 1, 2, 4096)
    links = StepLinks(
        tp_gbps=0.0, stage_gbps=0.0, dp_inter_gbps=3200.0, expert_dp_gbps=400.0, expert_dp_latency_s=1e-4,
        expert_dp_crosses_nodes=True,
    )  # fmt: skip
    dense, experts = DpTraffic(1e9, 4, True), DpTraffic(8e9, 10, True)

    def step(expert_dp: DpTraffic) -> StepTime:
        return training_step(
            layout, links, with_overrides({}), hidden_size=arch.hidden_size, num_layers=arch.num_layers,
            flops_per_token=6.0 * arch.flop_params, base_efficiency=0.4, dense_tflops=312.0, dp_traffic=dense,
            expert_dp_traffic=expert_dp,
        )  # fmt: skip

    alone, both = step(NO_DP), step(experts)
    assert both.expert_dp_s == pytest.approx(8e9 * 8 / 400e9 + 10 * 1e-4)
    assert both.dp_comm_s == pytest.approx(alone.dp_comm_s + both.expert_dp_s)
    assert both.dp_inter_node_s == pytest.approx(alone.dp_inter_node_s + both.expert_dp_s)
    assert (both.expert_dp_bytes, alone.expert_dp_s) == (8e9, 0.0)
    assert "expert_dp_s" in both.as_dict() and "expert_dp_s" not in alone.as_dict()


def test_full_ep_job_splits_its_gradients(arch: Architecture) -> None:
    """A full EP job's experts go to their own group (1 / ep of them a GPU, dp / ep ranks); an adapter job's do not."""
    from generator.planner.training_comm import dp_bytes_per_gpu, job_dp_traffic, job_dp_traffic_split
    from generator.sizing.training import TrainingSetup
    from generator.sizing.training_moe import routed_total_params

    full = TrainingSetup(method="full", data_parallel=16, zero_stage=1, expert_parallel=8)
    dense, experts = job_dp_traffic_split(arch, full, arch.params_total, 1, 2)
    routed = routed_total_params(arch)
    assert dense.bytes_per_gpu == dp_bytes_per_gpu(arch.params_total - routed, 0, 1, 16, 2)
    assert experts.bytes_per_gpu == dp_bytes_per_gpu(routed // 8, 0, 1, 2, 2)
    lora = TrainingSetup(method="lora", data_parallel=16, zero_stage=1, expert_parallel=8)
    assert job_dp_traffic_split(arch, lora, 10_000_000, 1, 2) == (job_dp_traffic(arch, lora, 10_000_000, 1, 2), NO_DP)
    assert job_dp_traffic_split(arch, TrainingSetup(method="full", data_parallel=16), arch.params_total, 1, 2)[1] == NO_DP


def test_estimate_names_the_expert_gradients() -> None:
    """acc93: gpt-oss-120b EP 8 on 64 B200 (Megatron-Bridge's 25.11 layout): 75 GB of expert gradients a GPU over its own
    NIC, 1.6 s, where the dense parameters' 12.6 GB take 0.03 s over the node's 8 NICs."""
    out = _estimate(
        "openai/gpt-oss-120b", "--train", "full", "--framework", "megatron", "--zero", "1", "--gpus", "64", "--ep", "8",
        "--gpu", "b200-sxm-180gb", "--micro-batch", "4", "--accumulation", "2", "--seq-len", "4096",
    )  # fmt: skip
    assert (
        "(12.57 GB per GPU over 8 x 400 Gb/s GPU fabric, then the routed experts' 75.27 GB per GPU over their "
        "expert-data-parallel group, one rank an EP group, over a GPU's own share of the nodes' network: 1.577 s of it)"
    ) in out


def test_a_trainer_moe_run_is_timed_at_its_kernel_launches() -> None:
    # acc111 (issue 9): specgen's own Trainer run of this job (Transformers 5 grouped_mm experts, H200, LoRA on q/k/v/o,
    # 2,048 tokens, checkpointing on) measured 3,446 tokens/s, a 0.594 s step; 13,863 modelled before the CPU's
    # one-at-a-time launches were timed. 48 layers x (56 kernels + 4 PEFT layers x 8) = 4,224 a forward: twice that
    # forward (recomputed) at 65 us and twice that backward at 5 us = 0.591 s of CPU, 0.419 s of it beyond the GPU's work.
    # acc113: Qwen3's q_norm and k_norm, 16 kernels more a layer (72 + 32 = 104 x 48 = 4,992 a forward), and the launch
    # costs refitted with them (45 us / 15 us): 0.599 s of CPU, 3,418 tokens/s (-0.8%)
    # 0.410 s beyond the GPU's work before acc117's torch._grouped_mm rate met acc113 (session 42 merge): at
    # 2,048 x 8 / 128 = 128 tokens an expert the experts run at 128 / (128 + 512) = 0.2 of the dense rate, not
    # 128 / 144 = 0.889: compute 0.103 -> 0.325 s, GPU work 0.325 + PEFT 0.016 + eager operators 0.070 = 0.411 s.
    # Per phase (fix126), both still wait on the CPU: the forward's 4,992 x 45 us = 0.2246 s against a third of
    # 0.411 s (0.137 s), the backward's 4,992 x 45 us recomputed + 9,984 x 15 us = 0.3744 s against 0.274 s:
    # 0.0876 + 0.1004 = 0.188 s beyond (0.599 - 0.411, rounded from the unrounded terms to 0.189), the step the CPU's 0.599 s
    out = _estimate(
        MOE, "--train", "lora", "--framework", "hf", "--gpu", "h200-sxm-141gb", "--seq-len", "2048",
        "--lora-targets", "q_proj,k_proj,v_proj,o_proj", "--gradient-checkpointing", "full",  # fix194: at full, as pinned
    )  # fmt: skip
    assert "compute 0.325 s" in out
    assert "kernel launches 0.189 s beyond the GPU's work (19,968 kernels launched one at a time by eager PyTorch, " in out
    assert "0.599 s of CPU)" in out and "one step takes 0.599 s" in out
    assert "3,418 tokens/s (3,418 per GPU)" in out
    # the same job under Unsloth launches none counted: its Triton kernels are not eager PyTorch
    assert "kernel launches" not in _estimate(
        MOE, "--train", "lora", "--framework", "unsloth", "--gpu", "h200-sxm-141gb", "--seq-len", "2048",
    )  # fmt: skip


def test_a_trainer_moe_run_is_timed_at_its_grouped_gemms_rate() -> None:
    # acc117 (issue 9): the same run at 8,192 tokens measured 6,494 tokens/s, a 1.261 s step; 9,082 modelled (+39.9%)
    # while its grouped GEMMs ran at the dense GEMMs' rate. 8,192 x 8 / 128 = 512 tokens an expert: torch._grouped_mm at
    # 512 / (512 + 512) = half that rate (CUTLASS's SM90 grouped GEMMs run this model's up_proj at 512 rows an expert at
    # 134-161 TFLOPS on an H100, https://github.com/tgale96/grouped_gemm/pull/37): compute 0.624 -> 0.978 s, which now
    # outlasts the CPU's launches
    # 1.255 s, 6,526 tokens/s (+0.5%) before acc113's q_norm / k_norm and the eager loss's fp32 logits passes met acc117
    # (session 42 merge): the eager operators 1,008.2 -> 1,314.0 GB a step at the H200's sustained HBM rate, 0.215 ->
    # 0.281 s: 0.978 + PEFT 0.062 + 0.281 = 1.321 s, 8,192 / 1.321 = 6,203 tokens/s (-4.5% against the 6,494 measured;
    # the joint refit's score takes this row with the rest)
    out = _estimate(
        MOE, "--train", "lora", "--framework", "hf", "--gpu", "h200-sxm-141gb", "--seq-len", "8192",
        "--lora-targets", "q_proj,k_proj,v_proj,o_proj", "--gradient-checkpointing", "full",  # fix194: at full, as pinned
    )  # fmt: skip
    assert "one step takes 1.321 s: compute 0.978 s" in out
    assert "eager norm, rotary, gating and residual operators 0.281 s (1314.0 GB per GPU" in out
    assert "beyond the GPU's work" not in out  # the launches hide behind it
    assert "6,203 tokens/s (6,203 per GPU)" in out
    # Unsloth's own grouped-GEMM kernels are not torch._grouped_mm: their experts keep the dense GEMMs' fill
    unsloth = _estimate(
        MOE, "--train", "lora", "--framework", "unsloth", "--gpu", "h200-sxm-141gb", "--seq-len", "8192",
        "--lora-targets", "q_proj,k_proj,v_proj,o_proj",
    )  # fmt: skip
    assert "one step takes 0.624 s: compute 0.624 s" in unsloth


@pytest.mark.parametrize(
    ("grouped", "micro_tokens", "fill"),
    [
        # torch._grouped_mm: t / (t + 512), t = tokens x top 8 / 128 experts
        (True, 8192, 512 / 1024),
        (True, 2048, 128 / 640),
        (True, 32768, 2048 / 2560),
        # any other experts' kernels: the dense GEMMs' fill, t / (t + 16)
        (False, 8192, 512 / 528),
        (False, 2048, 128 / 144),
    ],
)
def test_expert_fill_by_hand(grouped: bool, micro_tokens: int, fill: float) -> None:
    arch = parse_architecture(find_model(MOE).config)
    moe = moe_step(arch, grouped_mm=grouped)
    assert expert_fill(moe, micro_tokens, Constants()) == pytest.approx(fill)


@pytest.mark.parametrize(
    ("gpus_per_node", "nodes", "tp", "pp", "ep", "gbps", "crosses"),
    [
        # acc110: H100 PP 4 x EP 8 (Megatron-Bridge's gpt-oss-120b layout): the EP group is 8 consecutive GPUs of one
        # stage, one node, NVLink; it was placed on ep x pp = 32 GPUs, over InfiniBand at 400 Gb/s a GPU
        (8, 8, 1, 4, 8, 2966.4, False),
        # GB200 NVL72, PP 4 x EP 64 on 256 GPUs (DeepSeek-V3's layout): 64 GPUs of a stage, inside the 72-GPU domain
        (72, 4, 1, 4, 64, 5760.0, False),
        # EP 16 x TP 1 still spans two 8-GPU nodes whatever the pipeline (acc145: 8 of 15 peers over 400 Gb/s a GPU,
        # 750 Gb/s for all the bytes; 400 when all crossed)
        (8, 8, 1, 4, 16, 750.0, True),
        # TP 2 x EP 4 (ETP = TP): 8 GPUs, one node
        (8, 8, 2, 4, 4, 2966.4, False),
    ],
)
def test_ep_group_sits_inside_one_pipeline_stage(
    gpus_per_node: int, nodes: int, tp: int, pp: int, ep: int, gbps: float, crosses: bool
) -> None:
    """Megatron-Core's rank order tp-cp-ep-dp-pp puts the pipeline outermost: an EP group is ep x tp GPUs of a stage."""
    from generator.catalog import find_gpu
    from generator.planner.training_comm import links_between

    gpu = find_gpu("gb200-186gb" if gpus_per_node == 72 else "h100-sxm5-80gb")
    world = gpus_per_node * nodes
    node_gbps = 28800.0 if gpus_per_node == 72 else 3200.0
    links = links_between(gpu, gpus_per_node, nodes, node_gbps, tp, pp, world // (tp * pp), with_overrides({}), 1, ep)
    assert links.ep_gbps == pytest.approx(gbps)
    assert links.ep_crosses_nodes is crosses


@pytest.mark.parametrize(
    ("model", "gpu", "pp", "ep", "error"),
    [
        # acc110: -61.4% / -73.4% with their EP groups over the racks' 400 Gb/s a GPU. fix126 (review79 items 4-5):
        # +3.9% / -11.2% before the stages were placed Megatron's way (256 GPUs over 72-GPU racks: some stage's sends
        # cross the racks' 400 Gb/s a GPU, +3.2% / -12.2%) and the bubble timed at the other stages' pace (+0.03 / +0.1
        # points: their last stages run 1.0x-1.1x the mean); acc134: +3.2% / -12.1% -> +22.6% / +1.8% with Megatron-Core's
        # cuDNN attention at FlashAttention-2's share of the peak (Hopper's 35% on Blackwell); acc138: +22.6% / +1.8% ->
        # +13.7% / -4.3% with the GB200 at its measured GEMM rate (MAMF 1,822 of 2,500 BF16 TFLOPS) and Hopper's
        # borrowed attention share of that sustained rate; acc188: +13.7% -> +8.2% with the recipe's MTP module
        # (mtp_layers 1: its projection, MoE layer and second LM-head pass on the last stage)
        ("deepseek-ai/DeepSeek-V3", "gb200-186gb", 4, 64, 0.082),
        ("Qwen/Qwen3-235B-A22B", "gb200-186gb", 8, 32, -0.043),
        # +0.8% with its all-to-alls over InfiniBand; +57.6% over NVLink with the last stage's LM head left out; fix126:
        # +20.7% -> +20.0% with its PP sends over InfiniBand (a stage is 16 GPUs, two nodes), -> +24.2% with the bubble
        # of the other stages' pace (last stage 1.26x the mean: slots 0.91x the mean's, not 1.26x)
        ("openai/gpt-oss-120b", "h100-sxm5-80gb", 4, 8, 0.242),
    ],
)
def test_megatron_bridge_pipeline_rows(model: str, gpu: str, pp: int, ep: int, error: float) -> None:
    """The Megatron-Bridge PP > 1 MoE rows with the EP group on one stage and the pipeline at its slowest stage."""
    calibration_report = _report()
    rows = json.loads((REPO / "tests" / "data" / "calibration_training_mfu.json").read_text())["rows"]
    row = next(r for r in rows if (r.get("model"), r["gpu"], r["pp"], r.get("ep")) == (model, gpu, pp, ep))
    assert calibration_report.predict_training_mfu(row) / row["mfu"] - 1 == pytest.approx(error, abs=0.002)


def _b200_gpt_oss_rows() -> list[dict[str, Any]]:
    rows = json.loads((REPO / "tests" / "data" / "calibration_training_mfu.json").read_text())["rows"]
    return [r for r in rows if (r.get("model"), r["gpu"]) == ("openai/gpt-oss-120b", "b200-sxm-180gb")]


def test_b200_gpt_oss_rows_run_the_presets_ep64() -> None:
    """Megatron-Bridge's 25.11 DGX-B200 gpt-oss-120b row ran EP 64, not its table's EP 8 (acc168, issue 9).

    Every stored revision of the gpt-oss performance preset that gives the B200 a micro-batch of 4 sets
    ``expert_model_parallel_size=64``; the table's "EP 8 | GA 2" cells repeat the DGX-H100 row's, whose GA 2 contradicts
    its own GBS 512 / MBS 4 / DP 16. The runs' own figures agree: a 4 x 4,096-token micro-batch takes 1.995 s at 25.11
    and 2.037 s at 26.02 (EP 64 in its table), the same recipe's time within 2%, where the 26.02 GB200 (EP 64 inside
    one NVLink domain) takes 1.038 s. Read at EP 8 the 25.11 row was +75.4%, its all-to-all inside the node; at EP 64
    it is +19.9% beside the 26.02 row's +22.5%: one residual (gpt-oss's, CALIBRATION.md acc143), not two.
    """
    calibration_report = _report()
    rows = _b200_gpt_oss_rows()
    assert len(rows) == 2
    seconds = [r["micro_batch"] * r["sequence_length"] / (r["mfu"] * 2250e12 / (6 * 5_132_849_472)) for r in rows]
    assert seconds == pytest.approx([1.995, 2.037], abs=0.01)
    assert [(r["ep"], r.get("ep_as_reported")) for r in rows] == [(64, 8), (64, None)]
    errors = [calibration_report.predict_training_mfu(r) / r["mfu"] - 1 for r in rows]
    assert errors == pytest.approx([0.199, 0.225], abs=0.002)
    at_ep8 = {**rows[0], "ep": 8}
    assert calibration_report.predict_training_mfu(at_ep8) / at_ep8["mfu"] - 1 == pytest.approx(0.754, abs=0.002)


def test_estimate_says_the_slowest_stage_and_the_ep_link() -> None:
    """acc110: gpt-oss-120b PP 4 x EP 8 on 64 H100: its all-to-alls over NVLink inside a stage's node (over the 8 x
    400 Gb/s fabric before, 4.268 s of an 8.641 s step), its compute at the last stage's pace: 9 layers and the
    201,088 x 2,880 LM head (6 x 579M FLOPs a token, never recomputed: 3.45 fully recomputed layers' worth), 12.45
    layers' worth against a mean stage's 9.86."""
    out = _estimate(
        "openai/gpt-oss-120b", "--train", "full", "--gpu", "h100-sxm5-80gb", "--gpus", "64", "--pp", "4", "--ep", "8",
        "--micro-batch", "1", "--accumulation", "32", "--seq-len", "4096", "--zero", "1", "--gradient-checkpointing", "full",
    )  # fmt: skip
    assert "EP all-to-all 0.610 s (144.29 GB per GPU over NVLink 370.8 GB/s per GPU)" in out
    assert "compute 4.950 s (the pipeline's last stage, its layers and the LM head: 1.26x the mean stage's compute" in out
