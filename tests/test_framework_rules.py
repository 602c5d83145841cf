"""Combinations a real training framework refuses are refused at their field, and the planner never picks one (fuzz20).

Each rule cites the framework's own check: torchtune's recipes raise on optimizer-in-backward with gradient accumulation
and on activation offload without checkpointing; DeepSpeed's pipeline engine asserts ZeRO < 2 and its engine refuses MoE
at stage 3; DeepSpeed's offload_optimizer is valid for ZeRO stages 1-3; torchtune's LoRA builders adapt the MLP as a
whole and every layer alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.calculator.model_source import resolve_model
from generator.errors import InputError
from generator.planner.options import Hardware
from generator.planner.training import TrainingShape, training_shapes
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingMemory, TrainingSetup, size_training
from generator.sizing.training_conflicts import training_conflicts
from generator.sizing.weights import Parallelism
from generator.units import GIB
from generator.workload.models import ParallelismPin, TrainingSpec
from tests.helpers import call_cli, run_estimate


def _size(setup: TrainingSetup, par: Parallelism | None = None, model: str = "meta-llama/Llama-3.1-8B") -> TrainingMemory:
    arch = resolve_model(model).architecture
    return size_training(arch, setup, par or Parallelism(), Constants(), nvlink=True)


@pytest.mark.parametrize(
    ("settings", "field", "message"),
    [
        pytest.param(
            {"framework": "torchtune", "optimizer_in_backward": True, "accumulation_steps": 4},
            "optimizer_in_backward",
            "'Gradient accumulation is not supported with optimizer in bwd'",
            id="in-backward-accumulating",
        ),
        pytest.param(
            {"optimizer_in_backward": True, "accumulation_steps": 2},
            "optimizer_in_backward",
            "2 micro-batches cannot accumulate",
            id="in-backward-accumulating-no-framework",
        ),
        pytest.param(
            {"framework": "deepspeed", "optimizer_in_backward": True},
            "optimizer_in_backward",
            "deepspeed steps the optimizer after the whole backward",
            id="in-backward-deepspeed",
        ),
        pytest.param(
            {"framework": "hf", "optimizer_in_backward": True}, "optimizer_in_backward", "hf steps", id="in-backward-hf"
        ),
        pytest.param(
            {"framework": "megatron", "optimizer_in_backward": True},
            "optimizer_in_backward",
            "megatron steps",
            id="in-backward-megatron",
        ),
        pytest.param(
            {"zero_stage": 3, "pipeline_parallel": 2},
            "zero_stage",
            "'ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism'",
            id="pp-zero3",
        ),
        pytest.param(
            {"zero_stage": 2, "pipeline_parallel": 4},
            "zero_stage",
            "a pipeline (PP4) runs with ZeRO-0 or ZeRO-1 only",
            id="pp-zero2",
        ),
        # Megatron-LM's distributed optimizer shards the optimizer states only: no ZeRO-2/3, with or without a pipeline
        # (https://docs.nvidia.com/megatron-core/developer-guide/latest/distrib_optimizer.html, newuser35 item 2)
        pytest.param(
            {"framework": "megatron", "zero_stage": 2, "pipeline_parallel": 4},
            "zero_stage",
            "megatron has no ZeRO-2: its distributed optimizer (--use-distributed-optimizer) shards the optimizer states",
            id="pp-zero2-megatron",
        ),
        pytest.param(
            {"framework": "megatron", "zero_stage": 3, "data_parallel": 8},
            "zero_stage",
            "Megatron-FSDP (--use-megatron-fsdp), which specgen does not model",
            id="zero3-megatron",
        ),
        pytest.param(
            {"framework": "deepspeed", "zero_stage": 3, "expert_parallel": 8},
            "zero_stage",
            "'MoE not supported with Stage 3'",
            id="deepspeed-ep-zero3",
        ),
        pytest.param(
            {"framework": "torchtune", "activation_offload": True, "checkpointing": "none"},
            "activation_offload",
            "'enable_activation_offloading should only be True when enable_activation_checkpointing is True'",
            id="torchtune-offload-no-checkpointing",
        ),
        pytest.param(
            {"framework": "unsloth", "activation_offload": True, "checkpointing": "none"},
            "activation_offload",
            "unsloth's activation offload moves the checkpointed layer inputs",
            id="unsloth-offload-no-checkpointing",
        ),
        pytest.param(
            {"zero_stage": 0, "data_parallel": 8, "offload_optimizer": True},
            "offload_optimizer",
            "'Valid for ZeRO stage 1, 2, 3'",
            id="offload-optimizer-zero0-dp8",
        ),
        pytest.param(  # newuser43 item 7: on one GPU as on several, and in a workload (data parallel not known)
            {"framework": "axolotl", "zero_stage": 0, "data_parallel": 1, "offload_optimizer": True},
            "offload_optimizer",
            "axolotl offloads the optimizer through DeepSpeed's ZeRO-Offload, which DeepSpeed runs at ZeRO stage 1, 2 or 3",
            id="offload-optimizer-zero0-one-gpu",
        ),
        pytest.param(
            {"framework": "llama-factory", "zero_stage": 0, "offload_optimizer": True},
            "offload_optimizer",
            "llama-factory offloads the optimizer through DeepSpeed's ZeRO-Offload",
            id="offload-optimizer-zero0-workload",
        ),
        pytest.param(
            {"framework": "torchtune", "optimizer": "adamw"},
            "optimizer",
            "torchtune has no 'adamw' regime",
            id="torchtune-mixed-precision",
        ),
        pytest.param(
            {"framework": "torchtune", "optimizer": "adamw-torch-amp"},
            "optimizer",
            "give one of adamw-bf16, adamw-8bit-bf16",
            id="torchtune-amp",
        ),
        pytest.param(
            {"framework": "megatron", "optimizer": "adamw-8bit"},
            "optimizer",
            "megatron has no 'adamw-8bit' regime",
            id="megatron-8bit",
        ),
        pytest.param(
            {"framework": "megatron", "optimizer": "adafactor"}, "optimizer", "give one of adamw, sgd", id="megatron-adafactor"
        ),
    ],
)
def test_a_combination_a_framework_refuses_is_a_conflict(settings: dict[str, object], field: str, message: str) -> None:
    conflicts = training_conflicts(method="full", **settings)  # type: ignore[arg-type]
    assert [f for f, _ in conflicts] == [field]
    assert message in conflicts[0][1]


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({"framework": "torchtune", "optimizer_in_backward": True, "accumulation_steps": 1}, id="tt-in-bwd"),
        pytest.param({"framework": "fsdp2", "optimizer_in_backward": True}, id="fsdp2-in-bwd-hooks"),
        pytest.param({"optimizer_in_backward": True}, id="own-loop-in-bwd"),
        pytest.param({"framework": "megatron", "zero_stage": 1, "pipeline_parallel": 8}, id="pp-distributed-optimizer"),
        pytest.param({"zero_stage": 3, "pipeline_parallel": 1}, id="zero3-no-pipeline"),
        pytest.param({"framework": "deepspeed", "zero_stage": 2, "expert_parallel": 8}, id="deepspeed-ep-zero2"),
        pytest.param({"framework": "megatron", "zero_stage": 1, "expert_parallel": 8}, id="megatron-ep"),
        pytest.param({"framework": "torchtune", "activation_offload": True, "checkpointing": "full"}, id="tt-offload"),
        pytest.param({"framework": "trl", "activation_offload": True, "checkpointing": "none"}, id="trl-saved-tensors"),
        pytest.param(  # torchao's CPUOffloadOptimizer in torchtune's single-device recipe (newuser43 item 7)
            {"framework": "torchtune", "zero_stage": 0, "data_parallel": 1, "offload_optimizer": True}, id="torchtune-one-gpu"
        ),
        pytest.param({"zero_stage": 1, "data_parallel": 8, "offload_optimizer": True}, id="zero-offload"),
        pytest.param({"framework": "torchtune", "optimizer": "adamw-8bit-bf16"}, id="tt-8bit"),
        pytest.param({"framework": "megatron", "optimizer": "sgd"}, id="megatron-sgd"),
        pytest.param({"framework": "hf", "optimizer": "adafactor"}, id="hf-adafactor"),
    ],
)
def test_a_combination_the_framework_runs_is_no_conflict(settings: dict[str, object]) -> None:
    assert training_conflicts(method="full", **settings) == []  # type: ignore[arg-type]


def test_unsloth_offloads_nothing_with_checkpointing_off() -> None:
    """fuzz20 item 11: Unsloth's offload is a checkpointing mode; with checkpointing off an 8B QLoRA at 8k tokens was
    sized 2.6 GiB of activations (every activation in host RAM) instead of about 34 GiB on the GPU."""
    setup = TrainingSetup(method="qlora", framework="unsloth", checkpointing="none", sequence_length=8192)
    default = _size(setup)
    resident = _size(setup._replace(activation_offload=False))
    assert default.per_gpu.activations == resident.per_gpu.activations
    assert default.per_gpu.activations > 30 * GIB
    assert default.host_ram_bytes_per_gpu == resident.host_ram_bytes_per_gpu
    # with checkpointing on, its offload still moves the checkpoints to the host
    checkpointed = _size(setup._replace(checkpointing="full"))
    assert checkpointed.host_ram_bytes_per_gpu > default.host_ram_bytes_per_gpu


@pytest.mark.parametrize(
    ("setup", "par", "message"),
    [
        pytest.param(
            TrainingSetup(framework="torchtune", optimizer="adamw-bf16", optimizer_in_backward=True, accumulation_steps=4),
            Parallelism(),
            "cannot accumulate",
            id="in-backward-accumulating",
        ),
        pytest.param(
            TrainingSetup(framework="deepspeed", optimizer_in_backward=True, zero_stage=2, data_parallel=4),
            Parallelism(),
            "deepspeed steps the optimizer after the whole backward",
            id="in-backward-deepspeed",
        ),
        pytest.param(TrainingSetup(zero_stage=3, data_parallel=2), Parallelism(4, 4), "PP4", id="pp-zero3"),
        pytest.param(
            TrainingSetup(framework="megatron", zero_stage=3, data_parallel=2), Parallelism(4), "no ZeRO-3", id="megatron-zero3"
        ),
        pytest.param(
            TrainingSetup(zero_stage=0, data_parallel=8, offload_optimizer=True),
            Parallelism(),
            "ZeRO-Offload",
            id="offload-zero0",
        ),
        pytest.param(TrainingSetup(method="lora", lora_targets=()), Parallelism(), "no module names given", id="no-targets"),
    ],
)
def test_the_sizing_core_refuses_what_no_framework_runs(setup: TrainingSetup, par: Parallelism, message: str) -> None:
    """Before: in-backward with accumulation and under DeepSpeed ZeRO-2 took the gradients as 0.41 GiB (3.74 GiB
    without it), PP4 x ZeRO-3 sharded a pipeline's gradients and weights, ZeRO-0 x DP8 offload put 120 GiB of host RAM
    on each GPU, and no LoRA target planned 0 trainable parameters."""
    with pytest.raises(InputError, match=message):
        _size(setup, par)


def test_deepspeed_moe_at_zero_3_is_refused() -> None:
    setup = TrainingSetup(framework="deepspeed", zero_stage=3, data_parallel=16, expert_parallel=8)
    with pytest.raises(InputError, match="MoE not supported with Stage 3"):
        _size(setup, model="mistralai/Mixtral-8x7B-v0.1")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--framework", "torchtune", "--optimizer-in-backward", "--accumulation", "4"), "cannot accumulate", id="accum"
        ),
        pytest.param(("--framework", "hf", "--optimizer-in-backward"), "hf steps the optimizer", id="hf-in-bwd"),
        pytest.param(("--zero", "0", "--gpus", "8", "--offload-optimizer"), "ZeRO-Offload", id="zero0-offload"),
        pytest.param(("--framework", "torchtune", "--optimizer", "adamw", "--gpus", "8"), "no 'adamw' regime", id="tt-amp"),
        pytest.param(("--tp", "4", "--pp", "4", "--gpus", "32", "--zero", "3"), "PP4", id="pp-zero3"),
    ],
)
def test_the_estimate_refuses_them(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str) -> None:
    code, _ = run_estimate("llama-3.1-8b", "--train", "full", "--gpu", "h100-sxm5-80gb", *args)
    assert code == 1
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("targets", "exit_code", "message"),
    [
        # fix172: an empty list is a usage error (exit 2) at the schema's limits, before any framework rule
        pytest.param(",", 2, "--lora-targets takes 1 to 64 module names, got 0", id="empty"),
        pytest.param("w1", 1, "torchtune adapts the MLP as a whole", id="w1-alone"),
        pytest.param("q_proj,gate_proj", 1, "not w1 alone", id="gate-alone"),
        pytest.param("model.layers.0.self_attn.q_proj", 1, "not to a module path", id="one-layer"),
    ],
)
def test_lora_targets_torchtune_cannot_express_are_refused(
    capsys: pytest.CaptureFixture[str], targets: str, exit_code: int, message: str
) -> None:
    """fuzz20 items 3 and 4: '--lora-targets ,' planned 0 trainable parameters; w1 alone 9,437,184 under torchtune."""
    args = ("--train", "lora", "--framework", "torchtune", "--gpu", "h100-sxm5-80gb", "--lora-targets", targets)
    code, _ = run_estimate("llama-3.1-8b", *args)
    assert code == exit_code
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("targets", ["q_proj,v_proj", "w1,w2,w3,output", "gate_proj,up_proj,down_proj,lm_head", "all-linear"])
def test_lora_targets_torchtune_builds_are_sized(capsys: pytest.CaptureFixture[str], targets: str) -> None:
    args = ("--train", "lora", "--framework", "torchtune", "--gpu", "h100-sxm5-80gb", "--lora-targets", targets)
    assert run_estimate("llama-3.1-8b", *args)[0] == 0, capsys.readouterr().err


WORKLOAD = """\
version: 1
name: rules
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: {method}
      sequence_length: 4096
      dataset_tokens: 100000000
{extra}hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


@pytest.mark.parametrize(
    ("method", "extra", "where"),
    [
        pytest.param(
            "full",
            "      framework: deepspeed\n      optimizer_in_backward: true\n",
            "11:30: deployments[0].training.optimizer_in_backward: deepspeed steps the optimizer",
            id="in-backward-deepspeed",
        ),
        pytest.param(
            "full",
            "      framework: megatron\n      zero_stage: 3\n    parallelism: {pp: 4}\n",
            "11:19: deployments[0].training.zero_stage: megatron has no ZeRO-3",
            id="megatron-zero3-pp",
        ),
        pytest.param(
            "lora",
            "      framework: torchtune\n      gradient_checkpointing: none\n      activation_offload: true\n",
            "12:27: deployments[0].training.activation_offload: torchtune's activation offload",
            id="offload-no-checkpointing",
        ),
        pytest.param(
            "full",
            "      framework: torchtune\n      optimizer: adamw\n",
            "11:18: deployments[0].training.optimizer: torchtune has no 'adamw' regime",
            id="torchtune-adamw",
        ),
        pytest.param(
            "lora",
            "      framework: torchtune\n      lora_target_modules: [w1]\n",
            "11:28: deployments[0].training.lora_target_modules: torchtune adapts the MLP as a whole",
            id="torchtune-w1",
        ),
    ],
)
def test_a_workload_is_refused_at_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str, extra: str, where: str
) -> None:
    (tmp_path / "workload.yaml").write_text(WORKLOAD.format(method=method, extra=extra))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    assert capsys.readouterr().err.startswith(f"specgen: error: workload.yaml:{where}")


def _details(tmp_path: Path, method: str, extra: str, model: str = "meta-llama/Llama-3.1-8B") -> dict[str, Any]:
    """The chosen layout's details of the one training deployment the workload holds."""
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(method=method, extra=extra).replace("meta-llama/Llama-3.1-8B", model))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    return dict(dep.details)


def test_the_planner_steps_in_backward_without_accumulating(tmp_path: Path) -> None:
    """fuzz20 item 1: torchtune with optimizer_in_backward was planned as DP4 x 16 accumulation steps."""
    extra = (
        "      framework: torchtune\n      optimizer_in_backward: true\n      global_batch_size: 64\n      micro_batch_size: 1\n"
    )
    job = _details(tmp_path, "full", extra)
    assert job["gradient_accumulation_steps"] == 1
    assert job["data_parallel"] * job["micro_batch_size"] == 64


def _shapes(spec: TrainingSpec, model: str, pin: ParallelismPin | None = None) -> list[TrainingShape]:
    hw = Hardware(catalog.platforms()["dgx-h100"], catalog.gpus()["h100-sxm5-80gb"])
    shapes, blocked = training_shapes(resolve_model(model), spec, hw, Constants(), pin)
    assert shapes, blocked
    return shapes


def test_the_planner_picks_no_pipeline_with_zero_2_or_3() -> None:
    """fuzz20 item 9: a pinned pipeline was searched at every stage (a 405B chosen as TP4 x PP2 x DP16 at ZeRO-3)."""
    spec = TrainingSpec(method="full", framework="megatron", sequence_length=4096, global_batch_size=64)
    shapes = _shapes(spec, "meta-llama/Llama-3.3-70B-Instruct", ParallelismPin(pp=4))
    assert {s.par.pp for s in shapes} == {4}
    assert {s.setup.zero_stage for s in shapes} <= {0, 1}


def test_the_planner_offloads_the_optimizer_with_zero_offload() -> None:
    """fuzz20 item 15: optimizer offload at ZeRO-0 over several ranks kept a whole optimizer per rank in host RAM."""
    spec = TrainingSpec(method="full", sequence_length=4096, offload_optimizer=True, dataset_tokens=10**9, deadline_hours=2)
    shapes = _shapes(spec, "meta-llama/Llama-3.1-8B")
    assert any(s.setup.data_parallel > 1 for s in shapes)
    assert all(s.setup.zero_stage >= 1 for s in shapes if s.setup.data_parallel > 1)


def test_the_planner_finds_the_ranks_that_take_the_batch_without_accumulating() -> None:
    """fuzz20 item 1: with the micro-batch left to the planner, a 70B torchtune job stepping in backward was sized at one
    sequence on the fewest ranks, then refused its whole 64-sequence share as one micro-batch (no feasible plan)."""
    spec = TrainingSpec(
        method="full", framework="torchtune", optimizer_in_backward=True, sequence_length=4096, global_batch_size=64
    )
    shapes = _shapes(spec, "meta-llama/Llama-3.3-70B-Instruct")
    assert {s.accumulation for s in shapes} == {1}
    assert all(s.setup.data_parallel * s.setup.micro_batch_size == 64 for s in shapes)
