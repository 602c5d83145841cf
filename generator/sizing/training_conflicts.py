"""Training settings that contradict each other: each is refused at its field instead of being sized silently.

Sources:
- torchtune's distributed recipes wrap the model with FSDP2 (full shard, or ZeRO-2 with
  ``fsdp_reshard_after_forward: False``); a plain FSDP2 loop is the same: neither has a replicated (ZeRO-0) or
  optimizer-only (ZeRO-1) data-parallel path.
- QLoRA is LoRA over a base quantized to 4 or 8 bits (bitsandbytes ``load_in_4bit`` / ``load_in_8bit``); over a
  16-bit base it is LoRA.
- Megatron-LM loads no bitsandbytes base: its LoRA (NeMo / Megatron-Bridge PEFT) trains over bf16 or FP8 weights,
  so QLoRA's NF4 base runs through the Hugging Face stack (PEFT: hf, trl, unsloth, axolotl, llama-factory...).
"""

from __future__ import annotations

from generator.sizing.frameworks import (
    FrameworkProfile,
    framework_profile,
    job_recipe,
    recipe_regime_refusal,
    regime_refusal,
)
from generator.sizing.precision import weight_format

#: Frameworks that shard data-parallel ranks with FSDP2 only.
FSDP2_FRAMEWORKS = ("fsdp2", "torchtune")


def training_conflicts(
    *,
    method: str,
    framework: str | None = None,
    zero_stage: int | None = None,
    data_parallel: int | None = None,
    base_precision: str | None = None,
    offload_params: bool = False,
    pipeline_parallel: int | None = None,
    expert_parallel: int | None = None,
    accumulation_steps: int | None = None,
    optimizer_in_backward: bool | None = None,
    activation_offload: bool | None = None,
    checkpointing: str | None = None,
    offload_optimizer: bool = False,
    optimizer: str | None = None,
    paged_optimizer: bool = False,
    compute_precision: str = "bf16",
) -> list[tuple[str, str]]:
    """(field, why) for each contradiction among the settings given; None: not given (``data_parallel``: not known yet).

    Fields: ``precision``, ``framework``, ``zero_stage``, ``offload_params`` (parameter offload is ZeRO-3's: FSDP's
    ``CPUOffloadPolicy`` on a fully sharded model, DeepSpeed's ``offload_param`` at stage 3), ``optimizer_in_backward``,
    ``activation_offload``, ``offload_optimizer``, ``optimizer``, ``paged_optimizer`` and ``compute_precision`` (FP8
    training: full training under a framework that trains in FP8, :func:`fp8_training_refusal`). Optimizer offload at ZeRO-0
    is refused over several data-parallel ranks, and on one GPU too outside :data:`OWN_OPTIMIZER_OFFLOAD` (the Hugging
    Face Trainer family offloads through DeepSpeed's ZeRO-Offload, stage 1-3; a paged optimizer is sized apart from it).
    The layout's degrees (``pipeline_parallel``, ``expert_parallel``, ``accumulation_steps``) are checked where given:
    by the estimate and the sizing, and by the planner's search before it sizes a layout.
    """
    profile = framework_profile(framework) if framework is not None else None
    out = _precision_conflicts(method, profile, base_precision)
    if compute_precision == "fp8" and (why := fp8_training_refusal(method, profile)):
        out.append(("compute_precision", why))
    fsdp2 = profile is not None and profile.name in FSDP2_FRAMEWORKS
    if fsdp2 and zero_stage in (0, 1) and (data_parallel is None or data_parallel > 1):
        out.append(
            (
                "zero_stage",
                f"{framework} shards data-parallel ranks with FSDP2 (ZeRO-3, or ZeRO-2 without resharding after "
                f"forward); it has no ZeRO-{zero_stage} path: give 2 or 3, or leave it out",
            )
        )
    stages = profile.zero_stages if profile is not None else None
    if stages is not None and zero_stage is not None and zero_stage not in stages:
        # the framework's own refusal, before the pipeline's: dropping the pipeline would not give it the stage
        out.append(("zero_stage", ZERO_STAGES_OF.format(framework=framework, zero=zero_stage)))
    elif why := layout_stage_refusal(profile, zero_stage, pipeline_parallel or 1, expert_parallel or 1):
        out.append(("zero_stage", why))
    if offload_params and zero_stage is not None and zero_stage != 3:
        out.append(
            (
                "offload_params",
                f"parameter offload is ZeRO stage 3 / FSDP full shard (DeepSpeed offload_param, FSDP CPU offload), not "
                f"ZeRO-{zero_stage}: give zero_stage 3 (--zero 3) or leave the parameter offload out",
            )
        )
    deepspeed = profile is not None and profile.name == "deepspeed"
    if zero_stage == 0 and offload_optimizer and data_parallel is not None and data_parallel > 1:
        out.append(("offload_optimizer", OPTIMIZER_OFFLOAD_AT_ZERO_0.format(dp=data_parallel)))
    elif zero_stage == 0 and offload_optimizer and deepspeed:
        # DeepSpeed's rule is the stage's, whatever the GPU count (fuzz33 item 8: one GPU was sized as offloaded)
        out.append(("offload_optimizer", DEEPSPEED_OFFLOAD_AT_ZERO_0))
    elif zero_stage == 0 and offload_optimizer and (profile is None or profile.name not in OWN_OPTIMIZER_OFFLOAD):
        # newuser43 item 7: on one GPU it was sized and labelled ZeRO-0, a config DeepSpeed does not run
        out.append(("offload_optimizer", OFFLOAD_AT_ZERO_0_WITHOUT_DEEPSPEED.format(framework=profile.name if profile else "hf")))
    elif offload_optimizer and profile is not None and (why := zero_offload_regime_refusal(profile, optimizer)):
        out.append(("optimizer", why))
    out += _technique_conflicts(profile, optimizer_in_backward, accumulation_steps, activation_offload, checkpointing)
    if optimizer_in_backward and method in ("lora", "qlora") and profile is not None and profile.name == "torchtune":
        out.append(("optimizer_in_backward", TORCHTUNE_LORA_IN_BACKWARD))
    # the framework's regimes, then those of its full fine-tune's recipe at any GPU count (axolotl's bf16 model), at the
    # stage given (the GPU count is not known here)
    recipe = job_recipe(framework, method, None, zero_stage or 0, offload_params)
    if why := regime_refusal(profile, optimizer) or recipe_regime_refusal(profile, recipe, optimizer):
        out.append(("optimizer", why))
    if paged_optimizer and (why := paged_refusal(profile, optimizer, offload_optimizer, offload_params)):
        out.append(("paged_optimizer", why))
    return out


#: The frameworks that run ZeRO, and offload the optimizer, through DeepSpeed, launched by the Hugging Face Trainer's
#: integration (``TrainingArguments(deepspeed="ds_config.json")``, https://huggingface.co/docs/transformers/deepspeed):
#: ``deepspeed`` itself ("DeepSpeed ZeRO through the Hugging Face Trainer", :data:`~generator.sizing.frameworks.FRAMEWORKS`),
#: the Trainer and TRL, axolotl (its ``deepspeed:`` key, https://docs.axolotl.ai/docs/multi-gpu.html) and LLaMA-Factory
#: (its ``deepspeed:`` argument). torchtune, a plain FSDP2 loop and Megatron-LM shard with their own engines, and Unsloth
#: trains on one GPU.
DEEPSPEED_FRAMEWORKS = ("deepspeed", "hf", "trl", "trl+liger", "axolotl", "axolotl+liger", "llama-factory")

#: The optimizer regime DeepSpeed's ZeRO-Offload steps: its CPU Adam (``DeepSpeedCPUAdam``, AdamW with fp32 master
#: weights and fp32 moments on the host), the one regime whose states :data:`~generator.sizing.training.OPTIMIZERS` sizes
#: as DeepSpeed holds them there.
ZERO_OFFLOAD_REGIME = "adamw"


def zero_offload_regime_refusal(profile: FrameworkProfile, optimizer: str | None) -> str | None:
    """Why a job that offloads its optimizer through DeepSpeed's ZeRO-Offload cannot train in ``optimizer``; None: it can.

    review77 item 11: ``adamw-8bit`` offloaded was sized with 8-bit states in host RAM and rendered with no DeepSpeed
    optimizer block, so the Trainer handed DeepSpeed bitsandbytes' optimizer, a client optimizer DeepSpeed refuses
    under ZeRO-Offload while ``zero_force_ds_cpu_optimizer`` keeps its default, true
    (https://www.deepspeed.ai/docs/config-json/); what DeepSpeed steps there is its CPU Adam, with fp32 states.
    """
    regime = optimizer or profile.optimizer
    if profile.name not in DEEPSPEED_FRAMEWORKS or regime == ZERO_OFFLOAD_REGIME:
        return None
    return (
        f"{profile.name} offloads the optimizer through DeepSpeed's ZeRO-Offload, which steps it with DeepSpeed's CPU "
        f"Adam (fp32 master weights and moments in host RAM: optimizer '{ZERO_OFFLOAD_REGIME}'); it refuses the "
        f"'{regime}' optimizer the Trainer would hand it ('ZeRO-Offload with a client provided optimizer', "
        "zero_force_ds_cpu_optimizer, https://www.deepspeed.ai/docs/config-json/): give optimizer "
        f"{ZERO_OFFLOAD_REGIME}, or leave offload_optimizer out"
    )


#: The optimizer regimes bitsandbytes has a paged optimizer for: its ``PagedAdamW`` (32-bit states) and
#: ``PagedAdamW8bit`` (https://huggingface.co/docs/bitsandbytes/main/en/reference/optim/adamw); it pages no SGD and no
#: Adafactor.
PAGED_REGIMES = ("adamw", "adamw-torch-amp", "adamw-bf16", "adamw-8bit", "adamw-8bit-bf16")


def paged_refusal(
    profile: FrameworkProfile | None, optimizer: str | None, offload_optimizer: bool, offload_params: bool = False
) -> str | None:
    """Why a job cannot page its optimizer states; None where it can.

    FSDP's CPU offload of the parameters steps the optimizer on the CPU (:attr:`FrameworkProfile.fsdp_cpu_offload`), as
    an offloaded optimizer does: either puts the states in host RAM by another mechanism than bitsandbytes' paging.
    """
    fsdp_offload = offload_params and profile is not None and profile.fsdp_cpu_offload
    if offload_optimizer or fsdp_offload:
        by = (
            "FSDP's CPU offload of the parameters, which steps the optimizer on the CPU,"
            if fsdp_offload
            else ("an offloaded optimizer")
        )
        return f"paged states and {by} both put the states in host RAM, by two mechanisms a job runs one of: give one"
    if profile is not None and profile.name == "megatron":
        return "Megatron-LM steps its own distributed optimizer (adam or sgd), not a bitsandbytes paged one"
    if optimizer is not None and optimizer not in PAGED_REGIMES:
        return f"bitsandbytes pages AdamW's states ({', '.join(PAGED_REGIMES)}), not '{optimizer}'s"
    return None


#: The workload fields :func:`fp8_training_refusal` names, and the estimate's options that set them (review71 item 11c:
#: a workload's error named CLI flags; the estimate's names its options, :func:`as_estimate_options`).
ESTIMATE_OPTIONS = {
    "training.method": "--train",
    "training.framework": "--framework",
    "training.compute_precision": "--compute-precision",
}


def as_estimate_options(why: str) -> str:
    """A refusal's workload field names as the estimate's options (``training.method full`` -> ``--train full``)."""
    for field, option in ESTIMATE_OPTIONS.items():
        why = why.replace(field, option)
    return why


def fp8_training_refusal(method: str, profile: FrameworkProfile | None) -> str | None:
    """Why a job cannot train its GEMMs in FP8 (``compute_precision: fp8``); None where it can.

    FP8 training here is full training and pre-training: Transformer Engine's and torchao's FP8 recipes cast the
    trained weights, their activations and their gradients to FP8 for each GEMM, and specgen times a full step's
    three GEMMs a linear layer at the FP8 rate. A LoRA / QLoRA step's base is frozen (its format is the job's
    ``precision``: an FP8 base is LoRA over FP8 storage, not FP8 training), and a framework without FP8 training
    (:attr:`~generator.sizing.frameworks.FrameworkProfile.fp8_training`) runs its GEMMs in bf16.
    """
    if method != "full":
        return (
            f"FP8 training (compute_precision fp8) applies to full training and pre-training here (Megatron-LM / NeMo "
            f"through Transformer Engine, torchtitan / torchao float8), not to {method}: its base is frozen, and a base "
            "held in FP8 is the job's precision (LoRA over an FP8 base), not an FP8 step; give training.method full, "
            "or training.compute_precision bf16"
        )
    if profile is None or not profile.fp8_training:
        named = f"{profile.name} trains its GEMMs in bf16" if profile else "no framework is named"
        return (
            f"FP8 training (compute_precision fp8) needs a framework that trains in FP8, and {named}: give "
            "training.framework megatron (Megatron-LM / NeMo / Megatron-Bridge, Transformer Engine's --fp8-format hybrid) "
            "or fsdp2 (torchtitan / torchao float8 over FSDP2), or training.compute_precision bf16"
        )
    return None


def _precision_conflicts(method: str, profile: FrameworkProfile | None, base_precision: str | None) -> list[tuple[str, str]]:
    """QLoRA over a 16-bit base, and a 4-bit base under Megatron-LM."""
    out: list[tuple[str, str]] = []
    if method == "qlora" and base_precision is not None and weight_format(base_precision).bits >= 16:
        out.append(
            (
                "precision",
                f"QLoRA trains adapters over a base quantized to 4 or 8 bits; over a {base_precision} base it is LoRA: "
                "train lora, or give a 4- or 8-bit precision (nf4 by default)",
            )
        )
    four_bit = base_precision is not None and weight_format(base_precision).bits <= 4
    if (method == "qlora" or four_bit) and profile is not None and profile.name == "megatron":
        # a 4-bit base under lora is QLoRA by another name (fuzz18 item 9)
        out.append(
            (
                "framework",
                "megatron has no bitsandbytes 4-bit base (its LoRA trains over bf16 or FP8 weights): train qlora with a "
                "PEFT-based framework (hf, trl, unsloth, axolotl, llama-factory), or lora with megatron",
            )
        )
    return out


#: Why Megatron-LM runs no ZeRO-2/3 (newuser35 item 2): its distributed optimizer shards the optimizer states only
#: (https://docs.nvidia.com/megatron-core/developer-guide/latest/distrib_optimizer.html: "[no] distribute model
#: gradients, [no] distribute model parameters"); Megatron-FSDP (``--use-megatron-fsdp``) is another engine.
ZERO_STAGES_OF = (
    "{framework} has no ZeRO-{zero}: its distributed optimizer (--use-distributed-optimizer) shards the optimizer "
    "states only (ZeRO-1), with whole fp32 gradients and bf16 parameters on every rank; sharding those is "
    "Megatron-FSDP (--use-megatron-fsdp), which specgen does not model: give zero_stage 0 or 1 (--zero 0/1), or leave "
    "it out"
)

#: Why ZeRO-2/3 never runs under a pipeline (fuzz20 item 9). DeepSpeed's ``PipelineEngine.__init__`` asserts
#: ``zero_optimization_stage() < 2``, "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"
#: (deepspeed/runtime/pipe/engine.py): each micro-batch's backward would reduce-scatter (ZeRO-2) or re-gather (ZeRO-3)
#: the stage's gradients and weights. Megatron-LM's pipeline shards only the optimizer states (its distributed
#: optimizer, ZeRO-1); its gradient buffer stays whole on each rank.
PIPELINE_ZERO = (
    "a pipeline (PP{pp}) runs with ZeRO-0 or ZeRO-1 only: DeepSpeed's pipeline engine asserts 'ZeRO-2 and ZeRO-3 are "
    "incompatible with pipeline parallelism', and Megatron-LM's distributed optimizer under a pipeline shards the "
    "optimizer states (ZeRO-1) with whole gradients: give zero_stage 0 or 1 (--zero 0/1), or drop the pipeline (pp 1)"
)

#: DeepSpeed-MoE's expert parallelism stops at ZeRO-2: ``DeepSpeedEngine._configure_zero_optimizer`` asserts
#: ``not self.has_moe_layers``, "MoE not supported with Stage 3" (deepspeed/runtime/engine.py).
DEEPSPEED_MOE_ZERO_3 = (
    "DeepSpeed-MoE's expert parallelism (EP{ep}) runs at ZeRO-0 to ZeRO-2: DeepSpeed's engine asserts 'MoE not "
    "supported with Stage 3': give zero_stage 2 or lower (--zero 2), or expert parallelism 1"
)


def layout_stage_refusal(profile: FrameworkProfile | None, zero_stage: int | None, pp: int, ep: int) -> str | None:
    """Why ``zero_stage`` cannot run with a ``pp``-stage pipeline or DeepSpeed's ``ep``-way experts; None: it can.

    The planner's search asks it for each (layout, stage) before sizing one, so that it never picks one that no
    framework runs (a 405B was chosen as TP4 x PP2 x DP16 at ZeRO-3).
    """
    if zero_stage is not None and zero_stage >= 2 and pp > 1:
        return PIPELINE_ZERO.format(pp=pp)
    if zero_stage == 3 and ep > 1 and profile is not None and profile.name == "deepspeed":
        return DEEPSPEED_MOE_ZERO_3.format(ep=ep)
    return None


#: Optimizer offload over several data-parallel ranks is ZeRO-Offload: DeepSpeed's ``offload_optimizer`` is "Valid for
#: ZeRO stage 1, 2, 3" (https://www.deepspeed.ai/docs/config-json/, deepspeed/runtime/zero/config.py
#: ``DeepSpeedZeroConfig.offload_optimizer``). At ZeRO-0 every rank would keep a whole fp32 optimizer in host RAM
#: (fuzz20 item 15: 120 GiB a GPU for an 8B over eight).
OPTIMIZER_OFFLOAD_AT_ZERO_0 = (
    "optimizer offload over {dp} data-parallel ranks is ZeRO-Offload, which DeepSpeed runs at ZeRO stage 1, 2 or 3 "
    "(offload_optimizer is 'Valid for ZeRO stage 1, 2, 3'); at ZeRO-0 each rank would keep the whole optimizer in host "
    "RAM: give zero_stage 1-3 (--zero 1), or leave zero_stage out"
)

#: Under ``framework: deepspeed`` optimizer offload is its ``offload_optimizer``, refused at ZeRO-0 on any number of
#: GPUs (the same source as :data:`OPTIMIZER_OFFLOAD_AT_ZERO_0`; a paged 8-bit optimizer on one GPU is bitsandbytes',
#: which DeepSpeed's config does not set).
DEEPSPEED_OFFLOAD_AT_ZERO_0 = (
    "DeepSpeed's optimizer offload is ZeRO-Offload, which DeepSpeed runs at ZeRO stage 1, 2 or 3 (offload_optimizer "
    "is 'Valid for ZeRO stage 1, 2, 3'), on one GPU as on several: give zero_stage 1-3 (--zero 1), or leave zero_stage "
    "out"
)


#: Frameworks that offload the optimizer in one process at ZeRO-0: torchtune's single-device recipes take torchao's
#: ``CPUOffloadOptimizer`` (https://docs.pytorch.org/torchtune/stable/tutorials/memory_optimizations.html, "Optimizer
#: offloading"), which a plain PyTorch (FSDP2) loop can wrap its optimizer in as well. The Hugging Face Trainer family
#: (hf, trl, axolotl, llama-factory, unsloth) offloads the optimizer only through DeepSpeed's ZeRO-Offload.
OWN_OPTIMIZER_OFFLOAD = ("torchtune", "fsdp2")

#: Optimizer offload at ZeRO-0 on one GPU outside :data:`OWN_OPTIMIZER_OFFLOAD` (newuser43 item 7), as over several.
OFFLOAD_AT_ZERO_0_WITHOUT_DEEPSPEED = (
    "{framework} offloads the optimizer through DeepSpeed's ZeRO-Offload, which DeepSpeed runs at ZeRO stage 1, 2 or 3 "
    "(offload_optimizer is 'Valid for ZeRO stage 1, 2, 3'), on one GPU as on several: give zero_stage 1-3 (--zero 1; "
    "on one GPU it holds the same memory)"
)


def _technique_conflicts(
    profile: FrameworkProfile | None,
    optimizer_in_backward: bool | None,
    accumulation_steps: int | None,
    activation_offload: bool | None,
    checkpointing: str | None,
) -> list[tuple[str, str]]:
    """Optimizer in backward under a framework without it or with accumulation; activation offload with nothing checkpointed."""
    out: list[tuple[str, str]] = []
    in_backward = optimizer_in_backward if optimizer_in_backward is not None else bool(profile and profile.optimizer_in_backward)
    if optimizer_in_backward and profile is not None and not profile.has_optimizer_in_backward:
        out.append(
            (
                "optimizer_in_backward",
                f"{profile.name} steps the optimizer after the whole backward and has no optimizer-in-backward setting "
                "(torchtune's optimizer_in_bwd, or a plain PyTorch / FSDP2 loop with post-accumulate-grad hooks, has "
                "it): leave it out, or use framework torchtune or fsdp2",
            )
        )
    elif in_backward and accumulation_steps is not None and accumulation_steps > 1:
        out.append(("optimizer_in_backward", IN_BACKWARD_ACCUMULATION.format(steps=accumulation_steps)))
    if activation_offload and checkpointing == "none" and profile is not None and profile.offload_needs_checkpointing:
        out.append(
            (
                "activation_offload",
                f"{profile.name}'s activation offload moves the checkpointed layer inputs to host RAM, and with "
                "gradient_checkpointing none nothing is checkpointed (torchtune: 'enable_activation_offloading should "
                "only be True when enable_activation_checkpointing is True'): give gradient_checkpointing full, or "
                "leave the activation offload out",
            )
        )
    return out


#: fuzz23 item 8: the flag was taken and changed nothing. torchtune's optimizer_in_bwd is a setting of its
#: full_finetune_single_device / full_finetune_distributed recipes; its LoRA recipes (lora_finetune_single_device,
#: lora_finetune_distributed) build one optimizer over the adapters and step it after backward.
TORCHTUNE_LORA_IN_BACKWARD = (
    "torchtune steps the optimizer in backward (optimizer_in_bwd) only in its full fine-tuning recipes; its LoRA and "
    "QLoRA recipes step the adapters' optimizer after backward: leave it out"
)

#: torchtune's recipes raise "Gradient accumulation is not supported with optimizer in bwd. Please set
#: gradient_accumulation_steps=1, or optimizer_in_bwd=False." (recipes/full_finetune_single_device.py and
#: full_finetune_distributed.py, ``__init__``); each step consumes a parameter's gradient as backward produces it, so
#: no gradient is left to accumulate into (PyTorch's optimizer-step-in-backward tutorial: "if you do not need to do
#: gradient accumulation", https://docs.pytorch.org/tutorials/intermediate/optimizer_step_in_backward_tutorial.html).
IN_BACKWARD_ACCUMULATION = (
    "the optimizer steps inside backward, so {steps} micro-batches cannot accumulate into one step (torchtune: "
    "'Gradient accumulation is not supported with optimizer in bwd'): give one micro-batch a step (--accumulation 1, "
    "a global_batch_size the data-parallel ranks split without accumulating), or leave optimizer_in_backward out"
)
