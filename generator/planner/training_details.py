"""A training job's details in the plan: its techniques, paged optimizer reason and split frameworks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.planner.host_ram_reason import host_ram_reason
from generator.planner.multi_host import replica_hosts
from generator.planner.option import Option
from generator.planner.reason_text import _gib
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.training_hardware import flash_attention_note, fp16_note, launches_flash_attention, stack_note
from generator.units import hours_text

if TYPE_CHECKING:
    from generator.sizing.training import TrainingSetup


def _technique_details(setup: TrainingSetup) -> dict[str, Any]:
    """What a training job's launcher must be configured with beside its layout (newuser23 item 10).

    The framework, the memory techniques the job is sized with (its own, else its framework's) and a LoRA job's adapters.
    """
    loss, activation_offload, in_backward = setup.techniques()
    details: dict[str, Any] = {
        "framework": setup.framework,
        "loss": loss,
        "activation_offload": activation_offload,
        "optimizer_in_backward": in_backward,
        "fused_kernels": setup.kernels_fused(),
        "flash_attention": setup.flash_attention,
    }
    if setup.compute_precision != "bf16":
        # FP8 training: the launcher's --fp8-format hybrid (Megatron-LM) or float8 converter (torchtitan / torchao)
        details["compute_precision"] = setup.compute_precision
    if setup.paged_optimizer:
        # the recipe's paged optimizer, which the launcher must name (newuser25 item 3)
        details["paged_optimizer"] = True
    if setup.method != "full":
        details.update(lora_rank=setup.lora_rank, lora_dropout=setup.lora_dropout, lora_target_modules=list(setup.lora_targets))
    return details


def paged_reason(setup: TrainingSetup, paged_bytes: int) -> str:
    """What a job's paged optimizer is and where its states are sized (newuser25 item 3): ``paged_bytes`` of them."""
    from generator.sizing.frameworks import job_recipe

    recipe = job_recipe(setup.framework, setup.method, 1, setup.zero_stage, setup.offload_params)
    source = "bitsandbytes' paged AdamW, as the job asks"
    if recipe is not None and recipe.paged_optimizer and setup.optimizer == recipe.optimizer:
        source = f"{setup.framework}'s {recipe.name} recipe: {recipe.optimizer_class}"
    return (
        f"optimizer states paged to host RAM ({source}, bitsandbytes pages them out of GPU memory under pressure): "
        f"{_gib(paged_bytes)} of host RAM per GPU holds them; where they do not all fit beside the step's memory, every one "
        "migrates in and out over the host link each step, timed in the step"
    )


def _split_frameworks_reason(method: str, tp: int, pp: int) -> str:
    """Which frameworks run a layout that splits layers, where the job names none."""
    from generator.sizing.frameworks import frameworks_running

    running = " or ".join(frameworks_running(tp, pp, method))
    what = "split no layers" + (" or run no pipeline" if pp > 1 else "")
    return (
        f"no framework given: TP{tp} x PP{pp} runs under {running} only (the other frameworks {what}); set "
        "training.framework to plan for the one you launch"
    )


def _training_details(
    opt: Option, rest: list[Option], consts: Constants, runs: float | None = None, arch: Architecture | None = None
) -> tuple[dict[str, Any], list[str]]:
    from generator.planner.sharding_settings import sharding_settings
    from generator.planner.training import TrainingShape  # the training modules load only for a training deployment
    from generator.planner.training_report import (
        near_tie_text,
        pipeline_schedule_details,
        pipeline_schedule_text,
        step_split_text,
        training_runner_up,
    )
    from generator.sizing.training_mfu import MFU_BASIS, MFU_BASIS_FP8, fp8_casts_text

    shape = opt.shape
    assert isinstance(shape, TrainingShape)
    setup, mem = shape.setup, shape.memory
    hosts = replica_hosts(opt.hardware.platform, opt.candidate.gpus_per_node, shape.world)
    details = {
        "method": setup.method,
        "optimizer": setup.optimizer,
        "zero_stage": setup.zero_stage,
        "data_parallel": setup.data_parallel,
        "world_size": shape.world,
        "micro_batch_size": setup.micro_batch_size,
        "sequence_length": setup.sequence_length,
        "gradient_checkpointing": setup.checkpointing,
        "offload_optimizer": setup.offload_optimizer,
        "offload_params": setup.offload_params,
        "trainable_params": mem.trainable_params,
        "total_flops": shape.total_flops,
        "hours": round(shape.hours, 2) if shape.hours is not None else None,
        "host_ram_bytes_per_gpu": mem.host_ram_bytes_per_gpu,
        # the hard host RAM of a node beyond the OS reserve (host_os_ram_bytes, said in the host RAM reason, fix154): the
        # checkpoint as it loads, or what is offloaded
        "host_ram_bytes_per_node": opt.needs.host_ram_bytes,
        "checkpoint_bytes_per_node": opt.needs.checkpoint_bytes,
        "checkpoints_kept": consts.checkpoints_kept,
        "checkpoint_write_s": round(
            opt.needs.checkpoint_bytes / consts.checkpoints_kept / (opt.node.nvme_write_gb_per_s * 1e9), 1
        )
        if opt.node.nvme_write_gb_per_s
        else None,
    }
    per = mem.per_gpu
    reasons = [
        f"{setup.method} training with {setup.optimizer}, ZeRO-{setup.zero_stage} over {setup.data_parallel} "
        f"data-parallel GPU(s) x TP{shape.par.tp}",
        f"per GPU: weights {_gib(per.weights)} + gradients {_gib(per.gradients)} + optimizer {_gib(per.optimizer)} + activations "
        f"{_gib(per.activations)} + overhead {_gib(per.overhead)} = {_gib(per.total)} of {_gib(shape.hardware.gpu.memory_bytes)}",
    ]
    if setup.compute_precision == "fp8":
        cache = dict(mem.weight_parts).get("fp8_weight_cache", 0)
        held = f"; the weights hold Transformer Engine's FP8 copies of the linear weights, {_gib(cache)}" if cache else ""
        reasons.append(
            "FP8 training: the linear layers' GEMMs (forward and both backward) timed at the GPU's dense FP8 rate, the LM "
            f"head's at bf16's (neither framework runs it in FP8){fp8_casts_text(setup.framework)}; attention, norms, the "
            f"optimizer and the gradient all-reduce as in bf16{held}"
        )
    if opt.needs.host_ram_text:
        reasons.append(host_ram_reason(consts.host_os_ram_bytes, opt.needs.host_ram_bytes, opt.needs.host_ram_text))
    if setup.offload_params:
        reasons.append(
            f"parameters offloaded: {_gib(mem.host_ram_bytes_per_gpu)} of host RAM per GPU holds what is offloaded (FSDP CPU "
            "offload / ZeRO-3 offload_param); each GPU copies its shard from host RAM before each layer's forward and backward "
            "gathers, counted in the step time where they outlast the compute (the step's CPU offload term)"
        )
    if setup.paged_optimizer:
        reasons.append(paged_reason(setup, mem.paged_state_bytes))
    gpu = shape.hardware.gpu
    if half := fp16_note(gpu.id, gpu.architecture):
        reasons.append(half)
    if stack := stack_note(gpu.id, gpu.vendor, setup.method, setup.framework):
        reasons.append(stack)
    details["tensor_parallel"] = shape.par.tp
    details["pipeline_parallel"] = shape.par.pp
    if hosts > 1:  # launched multi-node (job-spans-hosts); absent means one host
        details["hosts"] = hosts
    details["gradient_accumulation_steps"] = shape.accumulation
    details["global_batch_size"] = shape.global_batch_size
    details.update(_technique_details(setup))
    # the settings a sharded job's sizing relies on that the frameworks leave off (newuser76 item 7)
    if arch is not None:
        sharded_reasons, sharded_details = sharding_settings(arch, setup)
        reasons += sharded_reasons
        details.update(sharded_details)
    if no_flash := flash_attention_note(gpu.id, gpu.architecture, setup.flash_attention):
        # what the launcher runs (its memory sized as FlashAttention's)
        details["flash_attention"] = launches_flash_attention(gpu.architecture, setup.flash_attention)
        reasons.append(no_flash)
    if setup.framework is None and (shape.par.tp > 1 or shape.par.pp > 1):  # newuser23 item 10
        reasons.append(_split_frameworks_reason(setup.method, shape.par.tp, shape.par.pp))
    comm = opt.comm
    if comm is not None:
        step = comm.step
        details["inter_node_link"] = comm.link
        details["comm_between_nodes_s_per_step"] = round(comm.comm_s, 4)
        details["compute_s_per_step"] = round(comm.compute_s, 4)
        details["step_time"] = step.as_dict()
        details["dp_zero_bytes_per_gpu"] = round(step.dp_bytes)
        details["step_links"] = {"data_parallel": comm.link, "pipeline_stages": comm.stage_link, "tensor_parallel": comm.tp_link}
        reasons.append(
            f"layout TP{shape.par.tp} x PP{shape.par.pp} x DP{setup.data_parallel}, ZeRO-{setup.zero_stage}, micro-batch "
            f"{setup.micro_batch_size:,} x {shape.accumulation:,} accumulation step(s) = {shape.global_batch_size:,} "
            f"{'sequence' if shape.global_batch_size == 1 else 'sequences'} per step"
        )
        reasons.append(step_split_text(comm, shape.par.tp, shape.par.pp, setup.data_parallel))
        if step.pipeline_virtual_stages > 1:  # newuser70 item 4: the schedule timed, which Megatron-LM leaves off
            details["pipeline_schedule"] = pipeline_schedule_details(step)
            reasons.append(pipeline_schedule_text(step))
        if opt.candidate.nodes > 1:
            reasons.append(
                f"data parallel across {opt.candidate.nodes} nodes sends {comm.bytes_per_gpu / 1e9:.2f} GB per GPU per step over "
                f"{comm.dp_link_text}: {comm.comm_s:.2f} s between nodes against {comm.compute_s:.2f} s of compute"
                + (" (communication bounds the step)" if comm.dominates else "")
            )
    if shape.hours is not None:
        # the steps run training_goodput of the wall clock (restarts after failures, checkpoints, evaluation)
        goodput = f" ({hours_text(shape.hours * consts.training_goodput, 1)} of steps / {consts.training_goodput:g} goodput)"
        flops = f"{shape.total_flops:.3g} FLOPs"
        if shape.model_flops is not None and shape.total_flops is not None and shape.model_flops < shape.total_flops:
            flops += f" ({shape.model_flops:.3g} model FLOPs, the rest the forward passes activation checkpointing recomputes)"
        reasons.append(
            f"{flops} take {hours_text(shape.hours, 1)}{goodput} on {shape.world} GPU(s) at {shape.step_mfu:.1%} MFU "
            "(model FLOPs: the weights' 6N a token, 4N for LoRA, without attention's, over "
            f"{MFU_BASIS_FP8 if setup.compute_precision == 'fp8' else MFU_BASIS}), communication and pipeline bubble included"
            if shape.step is not None
            else f"{flops} take {hours_text(shape.hours, 1)}{goodput} on {shape.world} GPU(s) at the planned MFU"
        )
    if kept := near_tie_text(shape, opt.candidate.run_hours):
        reasons.append(kept)
    runner = training_runner_up(opt, rest, runs)
    if runner:
        reasons.append(runner)
    return details, reasons
