"""newuser70 (an ML research lead budgeting fine-tunes and continued pre-training).

Item 2: ``specgen diff`` of a training-only workload whose job moved from on-demand to spot raised a KeyError in
``pool_replacements`` (its per-job pool left out there, but not by ``capacity_changes``), exit 1 with a traceback.

Item 1: a training step's causal attention was counted at ``hidden_size`` wide where its QK^T and PV run at
``heads x head_dim`` (Qwen3-30B-A3B: 2,048 against 32 x 128 = 4,096): a QLoRA step at 32k tokens was timed at
4.165 s, less than its attention alone takes at FlashAttention-2's published 35% of the H100's peak (4.88 s).

Item 3: ``training_dp_exposed_fraction`` was a documented tunable that changed nothing (``--set`` of it accepted, the
step the same): the step exposes DP / ZeRO traffic only beyond what the compute hides, which the FSDP MFU rows support
(half of it exposed makes every one of those groups worse). Removed: setting it is now refused as unknown.

Item 4: a Megatron-LM pipeline layout is timed with the interleaved 1F1B schedule (``training_pipeline_virtual_stages``),
which Megatron-LM runs only under ``--num-layers-per-virtual-pipeline-stage``; nothing in the plan, ``spec.json`` or
the Ansible group vars said so. The plan's reasons, ``spec.json`` and the group vars now carry the schedule and flag.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.catalog import find_gpu, find_model
from generator.errors import InfeasibleError
from generator.planner.training import framework_attention_mfu
from generator.sizing.architecture import parse_architecture
from generator.sizing.performance import training_attention_width
from generator.sizing.training_mfu import attention_flops_per_token
from tests.helpers import ansible_reader, call_cli

TRAIN = """\
version: 1
name: ft8b
deployments:
  - name: ft8b
    model: meta-llama/Llama-3.1-8B-Instruct
CAPACITY    training:
      method: lora
      framework: hf
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 100000000
      epochs: 1
      deadline_hours: 72
      runs_per_month: 1
hardware:
  gpus: [h100-sxm5-80gb]
  provider: aws
outputs: [terraform]
"""


def _pair(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(TRAIN.replace("CAPACITY", ""))
    (tmp_path / "new.yaml").write_text(TRAIN.replace("CAPACITY", "    capacity_type: spot\n"))


def test_a_training_pool_moved_to_spot_is_said_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pair(tmp_path)
    assert call_cli(tmp_path, ("diff", "old.yaml", "new.yaml")) == 0
    out = capsys.readouterr().out
    row = next(r for r in out.splitlines() if r.startswith("| `ft8b_h100_sxm5_80gb` |"))
    # rented per run, it rests on no node: nothing is replaced, the move is said on its row
    assert row.split(" | ")[1] == "changed (on-demand → spot)"
    assert "replaced" not in out


def test_a_training_pool_moved_to_spot_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pair(tmp_path)
    assert call_cli(tmp_path, ("diff", "old.yaml", "new.yaml", "--format", "json")) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["replacements"] == []
    (pool,) = result["pools"]
    assert (pool["status"], "capacity_type" in pool["old"], pool["new"]["capacity_type"]) == ("changed", False, "spot")


@pytest.mark.parametrize(
    ("model", "hidden", "width"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", 4096, 4096),  # 32 heads x 128: the hidden size
        ("Qwen/Qwen3-30B-A3B", 2048, 4096),  # 32 x 128
        ("Qwen/Qwen3-32B", 5120, 8192),  # 64 x 128
        ("google/gemma-2-9b-it", 3584, 4096),  # 16 x 256
        ("deepseek-ai/DeepSeek-V3", 7168, 20480),  # MLA materialized: 128 heads x (192 query-key + 128 value) / 2
    ],
)
def test_training_attention_runs_at_heads_by_head_dim(model: str, hidden: int, width: int) -> None:
    arch = parse_architecture(find_model(model).config)
    assert (arch.hidden_size, training_attention_width(arch)) == (hidden, width)


def test_a_step_takes_at_least_its_attention(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ("estimate", "Qwen/Qwen3-30B-A3B", "--train", "qlora", "--gpu", "h100-sxm5-80gb", "--gpus", "1")
    assert call_cli(tmp_path, (*args, "--framework", "unsloth", "--seq-len", "32768", "--json")) == 0
    speed = json.loads(capsys.readouterr().out)["training_speed"]
    gpu = find_gpu("h100-sxm5-80gb")
    share = framework_attention_mfu("unsloth", True, gpu)
    assert share == 0.35  # FlashAttention-2 on H100 (FlashAttention-3, https://arxiv.org/abs/2407.08608)
    # 48 layers x 32 heads x 128 x 32,768 positions, fwd + bwd + the recomputed fwd (Unsloth checkpoints): 4.88 s
    attention_s = attention_flops_per_token(48, 32 * 128, 32768, True) * 32768 / (share * 989e12)
    assert speed["tokens_per_step"] == 32768
    assert attention_s == pytest.approx(4.879, abs=1e-3)
    assert speed["step_time"]["compute_s"] > attention_s


def test_the_dead_dp_exposed_fraction_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("estimate", "meta-llama/Llama-3.1-8B", "--train", "full", "--gpu", "h100-sxm5-80gb", "--gpus", "8")
    assert call_cli(tmp_path, (*args, "--zero", "3", "--set", "training_dp_exposed_fraction=0.9")) == 2
    assert "unknown constant 'training_dp_exposed_fraction'" in capsys.readouterr().err


PIPELINE = """\
version: 1
name: ft70b-pp
deployments:
  - name: ft70b
    model: meta-llama/Llama-3.1-70B-Instruct
    parallelism: {tp: 8, pp: 4}
    training:
      method: full
      framework: megatron
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 2000000000
      epochs: 1
      deadline_hours: 72
hardware:
  gpus: [h100-sxm5-80gb]
  platforms: [dgx-h100]
  provider: baremetal
outputs: [ansible]
"""


def test_a_pipeline_says_the_interleaved_schedule_it_is_timed_with(tmp_path: Path) -> None:
    (tmp_path / "pp.yaml").write_text(PIPELINE)
    assert call_cli(tmp_path, ("render", "pp.yaml", "-o", "out")) == 0
    spec = json.loads((tmp_path / "out" / "spec.json").read_text())
    (job,) = [d for d in spec["plan"]["deployments"] if d["name"] == "ft70b"]
    schedule = job["details"]["pipeline_schedule"]
    # Llama 3.1 70B: 80 layers over PP4 = 20 a stage, split into the most chunks <= 8 that divide them: 5 of 4 layers
    assert (schedule["virtual_stages"], schedule["layers_per_virtual_stage"]) == (5, 4)
    assert schedule["megatron_args"] == "--num-layers-per-virtual-pipeline-stage 4"
    # (p - 1) / (v m + p - 1) against (p - 1) / (m + p - 1): the bubble over the same work is v times smaller
    assert schedule["plain_1f1b_pp_bubble_s"] == pytest.approx(5 * schedule["pp_bubble_s"], rel=1e-3)
    assert schedule["pp_bubble_s"] == job["details"]["step_time"]["pp_bubble_s"]
    assert any("--num-layers-per-virtual-pipeline-stage 4" in r for r in job["reasons"])
    group_vars = ansible_reader().load(tmp_path / "out" / "ansible" / "group_vars" / "ft70b_h100_sxm5_80gb.yml")
    (entry,) = [e for e in group_vars["specgen_deployments"] if e["name"] == "ft70b"]
    assert entry["training"]["pipeline_schedule"]["megatron_args"] == "--num-layers-per-virtual-pipeline-stage 4"


def test_the_estimate_says_the_schedule_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("estimate", "meta-llama/Llama-3.1-70B-Instruct", "--train", "full", "--gpu", "h100-sxm5-80gb", "--gpus", "128")
    layout = ("--tp", "8", "--pp", "8", "--zero", "0", "--micro-batch", "1", "--accumulation", "32", "--seq-len", "8192")
    assert call_cli(tmp_path, (*args, *layout, "--framework", "megatron", "--gradient-checkpointing", "none", "--json")) == 0
    speed = json.loads(capsys.readouterr().out)["training_speed"]
    # 10 layers a stage: 5 chunks of 2; 32 micro-batches: bubble 7 / (5 x 32 + 7) of the step, plain 7 / (32 + 7)
    schedule = speed["pipeline_schedule"]
    assert (schedule["virtual_stages"], schedule["megatron_args"]) == (5, "--num-layers-per-virtual-pipeline-stage 2")
    # of the step's pipelined part: the GPU's optimizer step after it (acc104) is no stage's work
    staged = speed["step_seconds"] - speed["step_time"].get("optimizer_step_s", 0.0)
    # fix126 (review79 item 5): a bubble slot lasts the other stages' time. The last stage runs its 10 layers and the
    # LM head (8,192 x 128,256: 1.0507B of 69.503B parameters a token), (10 x 0.85566 + 1.0507) / 8.6879 = 1.1058x the
    # mean stage, which the compute is timed at; the other 7 stages' time a micro-batch is (8 - 1.1058) / 7 = 0.9849 of
    # the mean, 0.8906 of the slowest: the bubble is 7 / (5 x 32) of the stages' work with the compute at 0.8906 of its
    # time, no longer 7 / 167 of the step
    work = staged - schedule["pp_bubble_s"]
    compute = speed["step_time"]["compute_s"]
    assert schedule["pp_bubble_s"] == pytest.approx((work - compute * (1 - 0.8906)) * 7 / 160, rel=1e-3)
    assert schedule["pp_bubble_s"] / staged < 7 / 167
    assert any("--num-layers-per-virtual-pipeline-stage 2" in note for note in speed["notes"])


def test_a_deadline_no_data_parallel_width_meets_is_refused_as_the_deadline(tmp_path: Path) -> None:
    """newuser70 item 6: a 70B full fine-tune in 8 h needs DP92 where its global batch of 64 allows 64; the refusal
    named no deadline and led with 'a GPU with more memory', which the H200 (the H100's compute) would not help."""
    path = tmp_path / "ft.yaml"
    path.write_text(
        "version: 1\nname: ft70b\ndeployments:\n  - name: ft70b\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    training:\n      method: full\n      framework: deepspeed\n      sequence_length: 8192\n"
        "      global_batch_size: 64\n      dataset_tokens: 2000000000\n      epochs: 1\n      deadline_hours: 8\n"
        "hardware:\n  gpus: [h100-sxm5-80gb, h200-sxm-141gb]\n  provider: aws\noutputs: [terraform]\n"
    )
    with pytest.raises(InfeasibleError) as refused:
        plan_file(str(path))
    said = str(refused.value)
    assert re.search(r"TP1 ZeRO-3: the 8 h deadline needs DP\d+, more ranks than the global batch of 64 sequences", said)
    unblock = said[said.index("to unblock: ") :]
    assert unblock.startswith("to unblock: for the global batch of 64: ") and "more memory" not in unblock
    assert "for the deadline: a later deadline_hours" in unblock
