"""newuser45 items 8, 9 and 11: what a fine-tuning plan is timed over, near ties, and how a searched level reads.

Item 8: a full fine-tune on GCP was planned on two a3-highgpu-8g timed over their 4 x 200 Gb/s GPU NICs, which the GKE
node pools rendered do not attach (the plan warned so); over the 200 Gb/s primary NIC they have, the single node wins.
Item 9: ZeRO-3 at 93% of the GPU's memory won over plain data parallelism at 65% for 0.1% less GPU time.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.near_tie import NEAR_TIE_FRACTION
from generator.workload import load_workload
from tests.test_training_alone import LAB

CALIBRATION = Path(__file__).parent / "data" / "calibration.json"

FULL_ON_GCP = """\
version: 1
name: full-8b
deployments:
  - name: sft-8b
    model: meta-llama/Llama-3.1-8B
    training: {method: full, framework: trl, sequence_length: 8192, global_batch_size: 64,
      dataset_tokens: 1000000000, epochs: 1, deadline_hours: 24}
hardware: {provider: gcp, gpus: [h100-sxm5-80gb, h200-sxm-141gb]}
kubernetes: {gcp_project: my-ml-project, location: us-central1-a}
"""

#: Rented per run, the job costs about the same on 2 x p5.4xlarge at DP2 (8.5 h) as on one p5.48xlarge at DP8 (2.1 h):
#: the GPU's optimizer step (acc104, replicated at ZeRO-0) makes the fewer replicas 0.02% cheaper, a near tie on cost
#: that fewer servers settle (acc104 item 4, fix118); the near tie of item 9 is on that one server's layouts.
LORA_ON_AWS = """\
version: 1
name: weekly-lora
deployments:
  - name: lora-8b
    model: meta-llama/Llama-3.1-8B
    training: {method: lora, framework: hf, lora_rank: 16, lora_target_modules: [all-linear], sequence_length: 4096,
      global_batch_size: 32, dataset_tokens: 300000000, epochs: 2, deadline_hours: 12, runs_per_month: 4}
hardware: {provider: aws, gpus: [h100-sxm5-80gb, h200-sxm-141gb]}
"""


def _plan(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_workload(load_workload(str(path)))


def test_a_gke_job_is_timed_over_the_network_its_rendered_pool_has(tmp_path: Path) -> None:
    """Item 8: before, 2 x a3-highgpu-8g at $377 a run over GPU NICs not rendered; now one node at $495, its
    ZeRO traffic inside the node."""
    plan = _plan(tmp_path, FULL_ON_GCP)
    (dep,) = plan.deployments
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes) == ("gcp-a3-highgpu-8g", 1)
    assert dep.details["inter_node_link"].endswith("inside one node")
    assert not [f for f in plan.findings if f.code == "gke-gpu-networks"]
    # $495 before acc104: TRL's ZeRO-1 reduction (DeepSpeed, no overlap_comm) now in series, 0.076 s a step, and the
    # GPU's optimizer step over its shard, 0.009 s
    # acc107: 499 -> 578.27
    # (eager elementwise operators / NF4 0.5): TRL is a Trainer-family framework, its eager operators now in the step
    # acc113: 578.27 -> 582.98, the eager cross-entropy's passes over Llama's fp32 logits (36 B a logit) in TRL's step
    # acc198: 582.98 -> 556.87, TRL's non-reentrant recompute leaves each block's down projection out
    assert dep.details["usd_per_job"] == pytest.approx(556.87, abs=1)
    # the memory left against the model's error: 61.0 GiB of the 75.7 usable (was 75.5 at ZeRO-3 over two nodes), at
    # ZeRO-1 kept over a ZeRO-2 layout 0.1% faster at 64.9 (item 9)
    assert dep.memory_per_gpu["total"] / 2**30 == pytest.approx(61.0, abs=0.1)
    assert (dep.details["zero_stage"], dep.details["data_parallel"]) == (1, 8)


def test_a_near_tie_keeps_the_simpler_layout_with_more_headroom(tmp_path: Path) -> None:
    """Item 9: within 1% of the hours and price on the same servers, plain data parallelism is kept over ZeRO-3,
    and the plan says which layout it was kept over and what that one asks."""
    # The H100 pool this pin was taken on: since acc113's eager loss passes met main's near-tie rule (session 42 merge),
    # the two-GPU workload takes 1 x p5en.48xlarge (H200) instead, $142.68 and 2.25 h a run against the cheapest
    # option's $141.31 (2 x p5.4xlarge) and 1 x p5.48xlarge's $141.33, 2.57 h: within 1% of the cheapest's cost
    # (142.68 <= 141.31 x 1.01 = 142.72), on one server, the shorter run (cost_near_ties_settled; 139.55 / 141 before
    # acc113, 1.04% apart, outside the band). There ZeRO-0 has less headroom than ZeRO-3 (85.1 GiB a GPU), so item 9's
    # headroom is pinned on the H100 alone, and the cross-GPU near tie below.
    both = _plan(tmp_path, LORA_ON_AWS)
    (pool,) = both.pools
    assert (pool.node.platform_id, pool.nodes) == ("aws-p5en-48xlarge", 1)
    assert both.deployments[0].details["usd_per_job"] == pytest.approx(142.68, abs=0.005)
    plan = _plan(tmp_path, LORA_ON_AWS.replace("gpus: [h100-sxm5-80gb, h200-sxm-141gb]", "gpus: [h100-sxm5-80gb]"))
    (dep,) = plan.deployments
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes) == ("aws-p5-48xlarge", 1)  # the cross-server near tie: test_cost_near_tie
    assert dep.details["usd_per_job"] == pytest.approx(141.33, abs=0.005)
    assert (dep.details["zero_stage"], dep.details["micro_batch_size"]) == (0, 1)
    assert dep.memory_per_gpu["total"] / 2**30 == pytest.approx(51.9, abs=0.1)  # was 73.8 GiB of 79.6 at ZeRO-3
    (kept,) = [r for r in dep.reasons if r.startswith("kept over ")]
    assert kept.startswith("kept over TP1 ZeRO-3 x DP8, micro-batch 2 x 2 accumulation steps, no activation checkpointing")
    assert "within 1% of its hours, price and power" in kept
    assert "ZeRO-3 against ZeRO-0 (a DeepSpeed or FSDP configuration plain data parallelism does not need)" in kept
    assert "73.8 GiB a GPU against 51.9" in kept
    faster = re.search(r", ([\d.]+)% faster \(", kept)
    assert faster is not None and 0 < float(faster[1]) / 100 <= NEAR_TIE_FRACTION


def test_a_searched_level_of_none_reads_as_no_checkpointing(tmp_path: Path) -> None:
    """Item 11: "none activation checkpointing (searched)" read oddly."""
    (dep,) = _plan(tmp_path, LORA_ON_AWS).deployments
    assert not [r for r in dep.reasons if "none activation checkpointing" in r]
    assert [r for r in dep.reasons if "no activation checkpointing (searched)" in r]


def test_the_full_fine_tune_note_states_what_the_runs_measured() -> None:
    """Item 1: the figures the headroom warning quotes are the H200 full runs' reserved peaks against the estimate."""
    from generator.sizing.frameworks import FULL_FINETUNE_RESERVED_NOTE, FULL_FINETUNE_RESERVED_OVER
    from tests.conftest import calibration_report

    report = calibration_report()
    errors = [
        predict(row) / measured - 1
        for group, _, measured, predict, row in report._rows()
        if group.startswith("memory hf h200-sxm-141gb (specgen's") and "allocated" not in group and row["method"] == "full"
    ]
    over = [-e for e in errors if e < 0]  # the estimate under the reserved peak
    assert (len(errors), len(over)) == (12, 9)
    assert max(over) == pytest.approx(FULL_FINETUNE_RESERVED_OVER, abs=0.0005)
    assert f"in {len(over)} of them, by up to {max(over):.1%} (the median of all 12: {-statistics.median(errors):.1%})" in (
        FULL_FINETUNE_RESERVED_NOTE
    )
    reserves = [row["measured_gb"] - row["allocated_gb"] for row in json.loads(CALIBRATION.read_text())["training_memory"]
                if row.get("measured_by") == "specgen" and row["method"] == "full"]  # fmt: skip
    assert f"up to {max(reserves):.1f} GB beyond what they allocated" in FULL_FINETUNE_RESERVED_NOTE


#: The owned A100 server's full fine-tune of tests/test_training_alone.py held to ZeRO-1: 70.5 GiB of the 76.0 usable
#: (left free, ZeRO-2 at 59.3 GiB is kept, review32 item 1).
FULL_AT_THE_LINE = LAB.format(objective="cost").replace(
    "gradient_checkpointing: full,", "gradient_checkpointing: full, zero_stage: 1,"
)


def test_a_full_fine_tune_near_the_usable_line_is_warned(tmp_path: Path) -> None:
    """Item 1: 70.5 GiB a GPU against 75.2 usable leaves 6.3%, less than the 9.2% the runs reserved over the estimate;
    its checkpointing is already full, so the micro-batch and a larger margin are offered; the LoRA job at 65% gets no
    warning. (76.0 usable, 95% of nvidia-smi's 81,920 MiB, until fix135 sized the A100 80GB at CUDA's 81,051.)"""
    plan = _plan(tmp_path, FULL_AT_THE_LINE)
    (finding,) = [f for f in plan.findings if f.code == "full-finetune-headroom"]
    assert (finding.level, finding.path) == ("warning", "deployments[0].training")
    assert finding.message.startswith("deployment full8 (full fine-tune) holds 70.5 GiB a GPU, 4.7 GiB under the 75.2 GiB")
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in finding.message
    # 1 - 0.95 / 1.092 = 0.130: a margin under which the reserved peak, 9.2% over the estimate, stays within 95%
    assert finding.message.endswith(
        "or give micro_batch_size below 2 or constants: {safety_margin_fraction: 0.14}, which plans every layout with "
        "that headroom"
    )
    # and that lever is enough: planned so, the warning is gone
    with_margin = FULL_AT_THE_LINE + "constants: {safety_margin_fraction: 0.14}\n"
    assert not [f for f in _plan(tmp_path, with_margin).findings if f.code == "full-finetune-headroom"]
    assert not [f for f in _plan(tmp_path, LORA_ON_AWS).findings if f.code == "full-finetune-headroom"]
    # the full fine-tune on GCP at 61.0 GiB of 75.7 usable: 24% headroom, no warning
    assert not [f for f in _plan(tmp_path, FULL_ON_GCP).findings if f.code == "full-finetune-headroom"]


@pytest.mark.parametrize(
    ("typed", "resolved"),
    [("rtx-4090", "rtx-4090-24gb"), ("RTX-4090", "rtx-4090-24gb"), ("h100-sxm5-80gb", "h100-sxm5-80gb"), ("h100", "h100"),
     ("rtx-40", "rtx-40"), ("nope", "nope")],
)  # fmt: skip
def test_estimate_takes_the_start_of_one_gpu_id(typed: str, resolved: str) -> None:
    """Item 11: ``--gpu rtx-4090`` was refused while models take short names; a start several ids share (``h100``)
    or that ends inside a word (``rtx-40``) is left to the lookup's error, which lists them."""
    from generator.catalog import gpu_id_for

    assert gpu_id_for(typed) == resolved


def test_a_near_tie_keeps_a_full_fine_tune_with_the_headroom_it_was_measured_to_need(tmp_path: Path) -> None:
    """review32 item 1: the owned A100's full fine-tune kept ZeRO-1 at 70.5 GiB (stage before memory), then warned that
    it was short of headroom, where ZeRO-2 at 59.3 GiB ran as fast and ZeRO-3 at 67.3 GiB 0.1% faster. The headroom a
    full fine-tune's reserve needs then came first: ZeRO-2, no warning. acc104: the job names no framework, so its ZeRO
    collectives are DeepSpeed's, and DeepSpeed runs ZeRO-1/2's reductions on the compute stream without overlap_comm
    (3.4 s of a 26.9 s step over the A100s' PCIe): ZeRO-2 is no longer a near tie, ZeRO-3 (overlapped, 67.3 GiB, 84% of
    the GPU) wins outright, still without the headroom warning."""
    plan = _plan(tmp_path, LAB.format(objective="cost"))
    (dep,) = plan.deployments
    assert (dep.details["zero_stage"], round(dep.memory_per_gpu["total"] / 2**30, 1)) == (3, 67.3)
    assert not [f for f in plan.findings if f.code == "full-finetune-headroom"]
    assert not [r for r in dep.reasons if r.startswith("kept over ")]
    (runner,) = [r for r in dep.reasons if r.startswith("runner-up layout on the same servers")]
    assert "TP1 ZeRO-1 x DP4" in runner and "mostly exposed DP/ZeRO communication" in runner


def test_an_unknown_base_model_is_offered_its_catalog_variants() -> None:
    """Item 11: 'meta-llama/Llama-3.1-70B' (the base model, offline) was offered the 8B, 3B and 1B, not the 70B
    Instruct the catalog has; an id that extends the name comes first, close matches where none does."""
    from generator.catalog import find_model
    from generator.errors import UnknownIdError

    with pytest.raises(UnknownIdError) as base:
        find_model("meta-llama/Llama-3.1-70B")
    assert "did you mean 'meta-llama/Llama-3.1-70B-Instruct'?" in str(base.value)
    with pytest.raises(UnknownIdError) as typo:
        find_model("meta-llama/Llama-3.1-7B")
    assert "did you mean 'meta-llama/Llama-3.1-8B'" in str(typo.value)
