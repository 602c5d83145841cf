"""``training/<job>/ds_config.json``: the DeepSpeed config a training job's memory and step time are sized for.

For serving, the engine flags its KV sizing rests on are rendered; for a training job that runs DeepSpeed the settings
the plan sized are its DeepSpeed config (newuser76 item 14: the group vars listed ``zero_stage: 3`` and
``offload_optimizer: true`` as plain values, and a user who re-typed them and missed a default, a bucket size or
``pin_memory``, ran another memory than the one planned). Every key below is DeepSpeed's, as its config reference
documents it (https://www.deepspeed.ai/docs/config-json/):

- ``train_micro_batch_size_per_gpu``, ``gradient_accumulation_steps``, ``train_batch_size`` ("Batch Size Related
  Parameters": ``train_batch_size`` = micro-batch x accumulation x the number of data-parallel GPUs);
- ``bf16.enabled`` ("BFLOAT16 training options") on a GPU that computes bf16, else ``fp16.enabled`` ("FP16 training
  options": DeepSpeed's dynamic loss scaling, its default) where the plan sized the job as fp16 mixed precision
  (a V100 or T4: :func:`~generator.sizing.loadability.computes_bf16`; review77 item 1: bf16 was written there too, which
  the GPU cannot run and the Trainer, told ``fp16=True`` as the plan says, refuses as a mismatch);
- ``zero_optimization.stage`` ("ZeRO Optimizations for FP16 Training": 0-3);
- ``zero_optimization.reduce_bucket_size`` and ``allgather_bucket_size`` (same section, default 5e8 elements each),
  which ZeRO-1/2's collectives are timed with (:data:`~generator.planner.training_comm.DEEPSPEED_BUCKET_ELEMENTS`) and
  ZeRO-Offload's gradient row is sized with (:data:`~generator.sizing.training.ZERO_REDUCE_BUCKET_ELEMENTS`): written
  out although they are the defaults, so an override shows;
- ``zero_optimization.stage3_prefetch_bucket_size`` and ``reduce_bucket_size`` under ZeRO-3 as ``"auto"``: the Hugging
  Face Trainer (the integration every framework here launches DeepSpeed through) fills them with 0.9 h^2 and h^2 for a
  model of hidden size h (transformers ``HfTrainerDeepSpeedConfig.trainer_config_finalize``,
  https://huggingface.co/docs/transformers/deepspeed), the buckets ZeRO-3's collectives are timed with
  (:data:`~generator.planner.training_comm.ZERO3_PREFETCH_SHARE`); DeepSpeed's own defaults (5e8 elements each in its
  config reference) are not them. Smaller than the 5e8 the ZeRO-Offload gradient row is bounded with, so the memory
  sized holds. DeepSpeed reading the file without the Trainer refuses ``"auto"`` (its fields are integers): loudly,
  not another memory;
- ``zero_optimization.offload_optimizer`` / ``offload_param`` with ``device: cpu`` ("Optimizer offloading",
  "Parameter offloading": ZeRO-2/3 and ZeRO-3), and ``pin_memory: true`` (default false there): the host-link copies
  of an offloaded job are timed at the pinned copy rate (:attr:`~generator.sizing.constants.Constants.pcie_efficiency`,
  "reached by pinned host-to-device copies");
- ``optimizer`` ``{"type": "AdamW", "params": {"lr": "auto", ...}}`` where the optimizer is offloaded in the ``adamw``
  regime ("Optimizer Parameters": DeepSpeed's own AdamW, which under ZeRO-Offload is its CPU Adam, the optimizer step
  the plan times on the CPU). Without it the Trainer hands DeepSpeed a torch AdamW, which DeepSpeed refuses under
  ZeRO-Offload while ``zero_force_ds_cpu_optimizer`` keeps its default, true ("ZeRO-Offload with a client provided
  optimizer"); the ``"auto"`` hyper-parameters are the Trainer's own (``TrainingArguments``), not the plan's.

Left out as not sized: the optimizer block elsewhere and the scheduler (the Trainer builds its own; learning rates are
not the plan's), gradient clipping (the sizing assumes none: no memory or step term of it), ``contiguous_gradients`` (left at
DeepSpeed's default, true), activation checkpointing (the Trainer's ``gradient_checkpointing``, in the group vars, is
what the sizing counts), and ``stage3_max_live_parameters`` (the memory counts ``zero3_live_layers`` gathered layers,
not DeepSpeed's parameter cap). ``overlap_comm`` stays at DeepSpeed's default (false at ZeRO-1/2, true at ZeRO-3:
``DeepSpeedZeroConfig.overlap_comm_valid``): at ZeRO-1/2 it would allocate buffers of several buckets that the memory
does not count (the Trainer's DeepSpeed guide puts them at 4.5x the two bucket sizes,
https://huggingface.co/docs/transformers/deepspeed), and the step time exposes those stages' gradient reductions and
weight all-gather in full, in series with the compute, as DeepSpeed runs them without it
(:attr:`~generator.sizing.training_step.DpTraffic.in_series`).
"""

from __future__ import annotations

import json
from typing import Any

from generator import catalog
from generator.planner.plan import DeploymentPlan, Plan
from generator.sizing.loadability import computes_bf16
from generator.sizing.training_conflicts import DEEPSPEED_FRAMEWORKS

#: DeepSpeed's default ``reduce_bucket_size`` and ``allgather_bucket_size``, elements (5e8,
#: https://www.deepspeed.ai/docs/config-json/, "ZeRO Optimizations for FP16 Training").
DEEPSPEED_DEFAULT_BUCKET_ELEMENTS = 500_000_000

#: The Hugging Face Trainer's placeholder it fills from the model and its ``TrainingArguments``.
HF_AUTO = "auto"


def runs_deepspeed(d: DeploymentPlan) -> bool:
    """Whether a deployment is a training job the plan sized under DeepSpeed.

    Framework ``deepspeed`` always; the Trainer family where the plan uses ZeRO (a stage of 1 or more) or ZeRO-Offload
    (at ZeRO-0 without offload the Trainer runs PyTorch DDP, no DeepSpeed). A job with no framework given is not rendered:
    which engine it launches is the user's.
    """
    if d.kind != "training":
        return False
    framework = d.details.get("framework")
    if framework not in DEEPSPEED_FRAMEWORKS:
        return False
    zero = int(d.details.get("zero_stage") or 0)
    offload = bool(d.details.get("offload_optimizer")) or bool(d.details.get("offload_params"))
    return framework == "deepspeed" or zero >= 1 or offload


def ds_config_path(d: DeploymentPlan) -> str:
    """The job's DeepSpeed config, relative to the workload's tree."""
    return f"training/{d.name}/ds_config.json"


def half_precision(plan: Plan, d: DeploymentPlan) -> str:
    """The half precision a training job computes in: ``bf16``, or ``fp16`` on its pool's GPU where that has no bf16.

    As the plan sizes it (``fp16 mixed precision with loss scaling, which holds the same bytes``), whatever the base's
    format (``precision``: ``nf4`` for QLoRA).
    """
    pool = next(p for p in plan.pools if p.name == d.pool)
    return "bf16" if computes_bf16(catalog.gpus()[pool.node.gpu_id].architecture) else "fp16"


def ds_config(d: DeploymentPlan, half: str) -> dict[str, Any]:
    """The DeepSpeed config of a job :func:`runs_deepspeed` says runs it: what the plan sized, keys as the module says.

    ``half``: the job's :func:`half_precision`, ``bf16`` or ``fp16``.
    """
    details = d.details
    micro = int(details["micro_batch_size"])
    accumulation = int(details["gradient_accumulation_steps"])
    dp = int(details["data_parallel"])
    zero = int(details.get("zero_stage") or 0)
    stage: dict[str, Any] = {"stage": zero}
    if zero in (1, 2):
        stage["reduce_bucket_size"] = DEEPSPEED_DEFAULT_BUCKET_ELEMENTS
        stage["allgather_bucket_size"] = DEEPSPEED_DEFAULT_BUCKET_ELEMENTS
    elif zero == 3:
        stage["reduce_bucket_size"] = HF_AUTO
        stage["stage3_prefetch_bucket_size"] = HF_AUTO
    if details.get("offload_optimizer"):
        stage["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if details.get("offload_params"):
        stage["offload_param"] = {"device": "cpu", "pin_memory": True}
    offloaded_adamw: dict[str, Any] = {}
    if details.get("offload_optimizer") and details.get("optimizer") == "adamw":
        params = dict.fromkeys(("lr", "betas", "eps", "weight_decay"), HF_AUTO)
        offloaded_adamw = {"optimizer": {"type": "AdamW", "params": params}}
    return {
        **offloaded_adamw,
        half: {"enabled": True},
        "gradient_accumulation_steps": accumulation,
        "train_batch_size": micro * accumulation * dp,
        "train_micro_batch_size_per_gpu": micro,
        "zero_optimization": stage,
    }


def render_deepspeed_configs(plan: Plan) -> dict[str, str]:
    """Each DeepSpeed training job's ``ds_config.json`` (sorted keys, two-space indent, a newline at the end)."""
    return {
        ds_config_path(d): json.dumps(ds_config(d, half_precision(plan, d)), indent=2, sort_keys=True) + "\n"
        for d in plan.deployments
        if runs_deepspeed(d)
    }
