"""A training job's findings: MoE training, the trainer's speed, a full fine-tune's headroom and the job's other findings."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from generator import catalog
from generator.calculator.model_source import ResolvedModel
from generator.planner.checkpoint_shared import shared_checkpoint_finding
from generator.planner.checkpoint_storage import DURABLE_STORAGE, _checkpoints_deleted
from generator.planner.multi_host import job_hosts_text, unsloth_one_host_text
from generator.planner.plan import Candidate, Finding
from generator.sizing.loadability import FP16_REFUSED_MODEL_TYPES, computes_bf16
from generator.units import HOURS_PER_YEAR
from generator.words import listed
from generator.workload.models import TrainingDeployment

if TYPE_CHECKING:
    from generator.planner.training import TrainingShape


def moe_training_findings(index: int, dep: TrainingDeployment, model: ResolvedModel) -> list[Finding]:
    """What the step of a mixture-of-experts training job assumes and leaves out (newuser43 item 5).

    A warning where the framework's per-expert loop is left out of the step (the step can take several times the time
    given: a framework choice to act on); an info where it only says how the experts are timed (newuser89 item 7: a
    warning on every MoE job was noise).
    """
    from generator.sizing.frameworks import framework_profile
    from generator.sizing.training_moe import EXPERT_LOOP_NOT_COUNTED, moe_step, moe_step_assumptions

    said = moe_step_assumptions(moe_step(model.architecture))
    if not said:
        return []
    framework = dep.training.framework
    loop = bool(framework and framework_profile(framework).expert_loop)
    if loop:
        said.append(f"not counted under {framework}: {EXPERT_LOOP_NOT_COUNTED}")
    text = f"deployment {dep.name}: " + "; ".join(said)
    return [Finding("warning" if loop else "info", "moe-training-step", text, f"deployments[{index}].training")]


def trainer_speed_findings(index: int, dep: TrainingDeployment, details: dict[str, Any]) -> list[Finding]:
    """What specgen's own runs of the Hugging Face Trainer measured against the step a job of its family is timed at.

    And of torchtune's LoRA / QLoRA recipes, what its own published rows measured against specgen's figures.

    newuser45 item 3: a plan met a 2.2 h deadline at 2.1 h with no word that the Trainer ran 15-34% slower at the
    median on the one GPU specgen measured it on. The plan's hours stay the model's; the finding says the measured
    range and the deadline's slack, so a tight plan is seen as one.
    """
    from generator.sizing.frameworks import TORCHTUNE_ADAPTER_NOTE, TRAINER_SPEED_NOTE, framework_profile

    framework, hours = dep.training.framework, details.get("hours")
    if framework and framework_profile(framework).name == "torchtune" and dep.training.method != "full":
        # newuser54 item 5: its recipes' own published rows, which specgen's figures miss
        text = f"deployment {dep.name} ({framework} {dep.training.method}): {TORCHTUNE_ADAPTER_NOTE}"
        return [Finding("info", "framework-rows-missed", text, f"deployments[{index}].training")]
    if not framework or not framework_profile(framework).peft_lora or hours is None:
        return []
    deadline = dep.training.deadline_hours
    slack = f"; it plans {hours:,.2f} h a run against the {deadline:g} h deadline" if deadline else ""
    text = f"deployment {dep.name} ({framework}): {TRAINER_SPEED_NOTE}{slack}"
    return [Finding("warning" if deadline else "info", "trainer-speed-measured", text, f"deployments[{index}].training")]


def full_finetune_headroom_findings(index: int, dep: TrainingDeployment, shape: TrainingShape) -> list[Finding]:
    """A full fine-tune planned closer to the 95% line than its reserved peak was measured to exceed the estimate.

    newuser45 item 1: a full fine-tune was planned 0.17 GiB under the usable line while specgen's own full runs
    reserved up to 9.2% more than estimated (the caching allocator's reserve, no mechanism found for its size). Held
    against the default margin's line whatever margin the workload plans at: a larger margin is one of the levers.
    """
    from generator.sizing.frameworks import (
        FULL_FINETUNE_RESERVED_NOTE,
        FULL_FINETUNE_RESERVED_OVER,
        RESERVE_LINE_FRACTION,
        reserve_short,
    )

    total, memory = shape.memory.per_gpu.total, shape.hardware.gpu.memory_bytes
    if not reserve_short(shape.setup.method, total, memory):
        return []
    line = memory * RESERVE_LINE_FRACTION
    # the margin under which a layout's reserved peak, up to the measured excess over it, stays within that line
    margin = math.ceil((1 - RESERVE_LINE_FRACTION / (1 + FULL_FINETUNE_RESERVED_OVER)) * 100) / 100
    levers = [f"micro_batch_size below {shape.setup.micro_batch_size}"] * (shape.setup.micro_batch_size > 1)
    levers += ["gradient_checkpointing: full"] * (shape.setup.checkpointing != "full")
    levers.append(f"constants: {{safety_margin_fraction: {margin:g}}}, which plans every layout with that headroom")
    gap = f"{(line - total) / 2**30:.1f} GiB under" if total <= line else f"{(total - line) / 2**30:.1f} GiB over"
    text = (
        f"deployment {dep.name} (full fine-tune) holds {total / 2**30:.1f} GiB a GPU, {gap} the {line / 2**30:.1f} GiB of "
        f"{RESERVE_LINE_FRACTION:.0%} of its memory: {FULL_FINETUNE_RESERVED_NOTE}, more than that headroom; run it "
        "with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which lets the allocator grow its segments instead of "
        f"fragmenting them (https://docs.pytorch.org/docs/stable/notes/cuda.html), or give {listed(levers, 'or')}"
    )
    return [Finding("warning", "full-finetune-headroom", text, f"deployments[{index}].training")]


def _training_findings(
    index: int,
    dep: TrainingDeployment,
    model: ResolvedModel,
    details: dict[str, Any],
    job: Candidate,
    provider: str,
    disk: str | None = None,
) -> list[Finding]:
    """What a planned training job's own figures say about it.

    A sequence past the model's context, a dataset below one optimizer step, a run longer than a year without a
    deadline, checkpoints a cloud deletes with its nodes (on ``disk``: :func:`checkpoint_disk`).
    """
    from generator.planner.training_report import context_extension_finding

    spec, where = dep.training, f"deployments[{index}].training"
    extension = context_extension_finding(index, spec.sequence_length, model.name, model.architecture.max_model_len)
    out = [extension] if extension else []
    gpu = catalog.gpus().get(job.gpu_id)
    model_type = model.architecture.model_type
    if gpu is not None and model_type in FP16_REFUSED_MODEL_TYPES and not computes_bf16(gpu.architecture):
        # newuser67 item 5: Gemma 2 was refused for serving on a V100 in fp16 but planned for fp16 training unsaid
        out.append(
            Finding(
                "warning",
                "fp16-training-unstable",
                f"deployment {dep.name}: {model.name} ({model_type}) trains in fp16 mixed precision on {gpu.id}, which has "
                f"no bf16, while vLLM refuses {model_type} in float16 for numerical instability, which lies in the "
                "forward pass's activations that a mixed-precision step runs in fp16 too (loss scaling guards the "
                "gradients, not them): train it on a GPU with bf16, or in fp32 at twice the memory",
                where,
            )
        )
    # fuzz15 item 11: a dataset smaller than one global batch runs a fraction of one optimizer step
    batch, sequence = details["global_batch_size"], details["sequence_length"]
    if spec.dataset_tokens is not None and (tokens := spec.dataset_tokens * spec.epochs) < batch * sequence:
        out.append(
            Finding(
                "warning",
                "dataset-below-one-step",
                f"deployment {dep.name}: {tokens:,.0f} tokens to train (dataset_tokens x epochs) are less than one "
                f"optimizer step's {batch * sequence:,} ({batch:,} sequences of {sequence:,} tokens): no full step runs; "
                "lower global_batch_size or sequence_length, or add data",
                where,
            )
        )
    out += moe_training_findings(index, dep, model)
    out += trainer_speed_findings(index, dep, details)
    if (hosts := details.get("hosts", 1)) > 1:
        text = job_hosts_text(details["world_size"], hosts, dep.training.framework)
        out.append(Finding("warning", "job-spans-hosts", f"deployment {dep.name}: {text}", f"deployments[{index}]"))
    elif dep.training.framework == "unsloth" and details["world_size"] > 1:
        text = unsloth_one_host_text(details["world_size"], int(details.get("zero_stage") or 0))
        out.append(Finding("warning", "unsloth-multi-gpu", f"deployment {dep.name}: {text}", f"deployments[{index}]"))
    hours = details.get("hours")
    dp, micro = details["data_parallel"], details["micro_batch_size"]
    if spec.global_batch_size is None and dp > 1:  # newuser28 item 1: a deadline took DP24 to DP752, the batch with it
        out.append(
            Finding(
                "info",
                "global-batch-from-layout",
                f"deployment {dep.name}: without global_batch_size the optimizer step holds what the layout runs, "
                f"{batch:,} sequences ({batch * sequence:,} tokens: DP{dp} x micro-batch {micro} x "
                f"{details['gradient_accumulation_steps']} accumulation step(s)), and moves with the GPUs a deadline "
                "takes; a recipe tuned at another batch (learning rate, warm-up) wants global_batch_size set to it",
                where,
            )
        )
    if spec.optimizer_in_backward and spec.global_batch_size and dp > 1 and dp * micro == spec.global_batch_size:
        # no accumulation: the batch alone sets the data-parallel width (fuzz21 item 7: 256 GPUs for a minute's run)
        out.append(
            Finding(
                "warning",
                "batch-sets-the-gpus",
                f"deployment {dep.name}: optimizer_in_backward runs no gradient accumulation, so global_batch_size "
                f"{spec.global_batch_size:,} at micro-batch {micro} takes {dp:,} data-parallel ranks ({job.gpus:,} GPUs); "
                "with optimizer_in_backward: false the batch accumulates over fewer GPUs, or lower global_batch_size",
                f"{where}.optimizer_in_backward",
            )
        )
    if provider in DURABLE_STORAGE and (kept := details.get("checkpoint_bytes_per_node")):
        count = int(details.get("checkpoints_kept") or 1)
        whole = (kept, count, job.nodes, spec.method == "full")
        out.append(_checkpoints_deleted(index, dep.name, whole, DURABLE_STORAGE[provider], disk))
    elif shared := shared_checkpoint_finding(index, dep.name, details):  # servers bought or owned (newuser108 item 2)
        out.append(shared)
    if hours and hours > HOURS_PER_YEAR and spec.deadline_hours is None:  # fuzz14 item 7
        out.append(
            Finding(
                "warning",
                "training-longer-than-a-year",
                f"deployment {dep.name} runs {hours:,.0f} h ({hours / HOURS_PER_YEAR:,.1f} years) on the planned "
                f"{job.gpus} GPU(s): set training.deadline_hours to plan the GPUs that finish it in time",
                where,
            )
        )
    return out
