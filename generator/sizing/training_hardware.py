"""Whether a GPU computes what a training job runs in: bf16 (Ampere and newer) and an FP8 base (compute capability 8.9).

bf16 is computed from compute capability 8.0 (Ampere) on; Volta (7.0) and Turing (7.5) have FP16 tensor cores only
(the catalog's ``dense_tflops.bf16`` is null there). What a trainer does on such a GPU:

- the Hugging Face Trainer (and every framework built on it: TRL, axolotl, LLaMA-Factory, DeepSpeed through it)
  refuses ``bf16=True`` ("Your setup doesn't support bf16/gpu", ``TrainingArguments.__post_init__``,
  https://github.com/huggingface/transformers/blob/main/src/transformers/training_args.py); with ``fp16=True`` it
  trains fp16 mixed precision with loss scaling, whose weights, gradients, fp32 master copy and moments take the
  same bytes as bf16 mixed precision. Unsloth picks fp16 there itself (``fp16 = not is_bfloat16_supported()``);
  Megatron-LM has ``--fp16``. Such a job is sized as fp16 mixed precision, and says so.
- torchtune trains ``dtype: bf16`` or fp32 only: its recipes raise ``RuntimeError`` when bf16 is asked on a GPU
  without it, refuse fp16 ("full fp16 training is not supported with this recipe"), and have no mixed precision
  (``recipes/lora_finetune_distributed.py``, https://github.com/pytorch/torchtune/blob/main/recipes/lora_finetune_distributed.py).
  Its fp32 run holds 4-byte weights, gradients, states and activations, which specgen does not size: refused.
- pure bf16 regimes (``adamw-bf16``, ``adamw-8bit-bf16``: no fp32 master copy) have no fp16 counterpart that trains
  (fp16's range without a master copy and loss scaling underflows the updates): refused, naming the mixed-precision
  optimizers that run as fp16.

An FP8 base (LoRA over FP8 weights) needs FP8 matrix compute: compute capability 8.9 or higher ("FP8 computation is
supported on NVIDIA GPUs with compute capability >= 8.9", https://docs.vllm.ai/en/latest/features/quantization/fp8/).
Below it vLLM serves FP8 checkpoints through weight-only FP8 Marlin, an inference kernel
(:data:`~generator.sizing.loadability.FP8_MARLIN_SOURCE`), and Transformers' FP8 loader dequantizes the checkpoint to
bf16 ("FP8 quantized models is only supported on GPUs with compute capability >= 8.9 ... We will default to
dequantizing the model to bf16", ``quantizers/quantizer_finegrained_fp8.py``,
https://github.com/huggingface/transformers/blob/main/src/transformers/quantizers/quantizer_finegrained_fp8.py): the
base would take bf16's bytes, not FP8's. Refused there, as on the GPUs the serving rule refuses FP8 outright
(:func:`~generator.sizing.loadability.format_problems`: Volta, CDNA2).

Some frameworks run their own Triton kernels, built for some accelerators only (newuser31 item 11: an Unsloth QLoRA job
was planned on Gaudi 3): Unsloth runs on "NVIDIA, AMD, Intel GPUs, CPUs" (its README), and Liger Kernel's backends are
CUDA, ROCm and Intel XPU; neither on Gaudi's HPU (:data:`NOT_RUN_ON`). The QLoRA base of the frameworks built on
PEFT is bitsandbytes' NF4, which serving engines do not run on AMD or Gaudi (vLLM's table) but training does: its
documentation lists Intel Gaudi as supported from v0.48 and AMD GPUs from v0.50 (experimental before), which such a
plan says (:func:`stack_note`).
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.loadability import NO_BF16, format_problems
from generator.sizing.precision import storage_family, weight_format

#: NVIDIA catalog architectures below compute capability 8.9 (no FP8 matrix compute), and their compute capability.
BELOW_FP8_COMPUTE: dict[str, str] = {**NO_BF16, "ampere": "8.0 or 8.6"}
#: Optimizer regimes that hold no fp32 master copy (pure bf16 training).
PURE_BF16_OPTIMIZERS = frozenset({"adamw-bf16", "adamw-8bit-bf16"})
#: Frameworks that train bf16 or fp32 only (no fp16, no mixed precision).
BF16_OR_FP32_ONLY = frozenset({"torchtune"})
#: Mixed-precision optimizers a GPU without bf16 runs as fp16 AMP with loss scaling.
FP16_RUNNABLE = "adamw, adamw-8bit, adamw-torch-amp, sgd or adafactor"


class NotRunOn(NamedTuple):
    """Accelerator architectures a framework's kernels are not built for, with what says where they run."""

    architectures: frozenset[str]
    #: Where the framework runs, as its source says it, and the accelerators of ``architectures`` by name.
    runs_on: str
    source: str
    not_on: str = "Intel Gaudi's HPU"


_UNSLOTH_README = "https://github.com/unslothai/unsloth/blob/aca403f00e6e8f4babdaf339f94d8ad0656fc88c/README.md"
_LIGER_BACKENDS = NotRunOn(
    frozenset({"gaudi3"}),
    "Liger Kernel's Triton kernels are built for CUDA, ROCm and Intel XPU",
    "https://huggingface.co/kernels-community/liger-kernels/blob/main/README.md",
)
#: Frameworks whose kernels do not run on some catalog architectures (Intel Gaudi's HPU runs no Triton kernels of theirs).
NOT_RUN_ON: dict[str, NotRunOn] = {
    "unsloth": NotRunOn(frozenset({"gaudi3"}), "Unsloth runs on NVIDIA, AMD and Intel GPUs and on CPUs", _UNSLOTH_README),
    "trl+liger": _LIGER_BACKENDS,
    "axolotl+liger": _LIGER_BACKENDS,
}
#: bitsandbytes' installation guide of the first release that lists each vendor's accelerators as supported.
BNB_SUPPORT = {
    "amd": ("0.50", "https://huggingface.co/docs/bitsandbytes/v0.50.0/installation"),
    "intel": ("0.48", "https://huggingface.co/docs/bitsandbytes/v0.48.1/installation"),
}

#: Where each framework's FP8 training path runs, for the architectures whose FP8 rate it does not use (review71 item 6).
#: Intel Gaudi trains in FP8 through Intel's own Transformer Engine (``habana_frameworks.torch.hpex.experimental.
#: transformer_engine``, https://docs.habana.ai/en/latest/PyTorch/PyTorch_FP8_Training/index.html) under Optimum Habana
#: / Megatron-DeepSpeed, which is neither framework here: Megatron-LM's FP8 is NVIDIA's Transformer Engine ("a library
#: for accelerating Transformer models on NVIDIA GPUs", https://github.com/NVIDIA/TransformerEngine, with AMD's ROCm
#: port) and torchao's float8 ``torch._scaled_mm`` "supports both NVIDIA and AMD hardware"
#: (https://github.com/pytorch/ao/blob/main/torchao/float8/README.md).
FP8_NOT_RUN_ON: dict[str, NotRunOn] = {
    "megatron": NotRunOn(
        frozenset({"gaudi3"}),
        "Megatron-LM trains FP8 through NVIDIA's Transformer Engine, built for NVIDIA GPUs (and AMD's ROCm port)",
        "https://github.com/NVIDIA/TransformerEngine",
    ),
    "fsdp2": NotRunOn(
        frozenset({"gaudi3"}),
        "torchao's float8 training (torch._scaled_mm) supports NVIDIA and AMD GPUs",
        "https://github.com/pytorch/ao/blob/main/torchao/float8/README.md",
    ),
}
#: FP8 matrix compute by vendor, for the refusal's hint (the catalog's architecture names).
FP8_ARCHITECTURES = {
    "nvidia": "compute capability 8.9 or higher: Ada, Hopper, Blackwell",
    "amd": "CDNA 3 or later: MI300X, MI325X, MI355X",
}

#: The words of an FP8 training job's refusal on a GPU without FP8 (the planner's unblock advice matches them).
FP8_NEEDS_TENSOR_CORES = "FP8 training (compute_precision fp8) needs FP8 tensor cores"
FP8_UNBLOCK = "choose a GPU with FP8, or compute_precision bf16"
#: The words of its refusal on an accelerator the framework's FP8 path does not run on (:data:`FP8_NOT_RUN_ON`).
FP8_NOT_RUN_HERE = "FP8 training (compute_precision fp8) under"
#: The words of a framework's refusal on an accelerator its kernels are not built for (:data:`NOT_RUN_ON`).
FRAMEWORK_NOT_RUN_HERE = "choose another GPU, or a framework that runs there"


def precision_problem(
    gpu_id: str,
    architecture: str,
    *,
    framework: str | None,
    optimizer: str,
    base_precision: str | None = None,
    fp8_dense_tflops: float | None = None,
    compute_precision: str = "bf16",
) -> str | None:
    """Why a training job cannot run on this GPU in the precision it is sized for; None where it can.

    ``framework`` is a resolved profile name (or None), ``optimizer`` the regime, ``base_precision`` the frozen base's
    format of LoRA (None for full training). ``compute_precision`` fp8 (FP8 training) needs FP8 tensor cores: the
    catalog's dense FP8 rate, ``fp8_dense_tflops`` (null below Ada / Hopper; Transformer Engine's ``check_fp8_support``
    refuses "Device compute capability 8.9 or higher required for FP8", ``transformer_engine/pytorch/fp8.py`` of
    https://github.com/NVIDIA/TransformerEngine).
    """
    if compute_precision == "fp8" and not fp8_dense_tflops:
        amd = architecture.startswith(("cdna", "rdna"))
        where = FP8_ARCHITECTURES["amd" if amd else "nvidia"]
        return (
            f"{FP8_NEEDS_TENSOR_CORES}, and {gpu_id} ({architecture}) has no dense FP8 rate in the catalog "
            f"(FP8 matrix compute is {where}): {FP8_UNBLOCK}"
        )
    fp8_reach = FP8_NOT_RUN_ON.get(framework or "") if compute_precision == "fp8" else None
    if fp8_reach is not None and architecture in fp8_reach.architectures:
        return (
            f"{FP8_NOT_RUN_HERE} {framework} does not run on {gpu_id}: {fp8_reach.runs_on} "
            f"({fp8_reach.source}), not {fp8_reach.not_on}, whose FP8 training is Intel's own Transformer Engine "
            "(Optimum Habana, https://docs.habana.ai/en/latest/PyTorch/PyTorch_FP8_Training/index.html); choose another "
            "GPU, or compute_precision bf16"
        )
    reach = NOT_RUN_ON.get(framework or "")
    if reach is not None and architecture in reach.architectures:
        return (
            f"{framework} does not run on {gpu_id}: {reach.runs_on} ({reach.source}), not on {reach.not_on}; "
            f"{FRAMEWORK_NOT_RUN_HERE} (hf, trl or deepspeed through Optimum for Intel Gaudi)"
        )
    if base_precision is not None and storage_family(weight_format(base_precision).name) == "fp8":
        if capability := BELOW_FP8_COMPUTE.get(architecture):
            return (
                f"LoRA over an FP8 base needs FP8 compute, compute capability 8.9 or higher (Ada, Hopper, Blackwell); "
                f"{gpu_id} is {architecture.capitalize()}, compute capability {capability}: Transformers dequantizes an "
                "FP8 checkpoint to bf16 there, so the base would hold bf16's bytes, not FP8's. Train lora over a bf16 base, "
                "or qlora (nf4), or choose a GPU with FP8"
            )
        if served := format_problems(weight_format(base_precision), architecture):
            return f"LoRA over an FP8 base cannot run here: {served[0]}"
    capability = NO_BF16.get(architecture)
    if capability is None:
        return None
    if framework in BF16_OR_FP32_ONLY:
        return (
            f"{gpu_id} (compute capability {capability}) has no bf16: torchtune trains dtype bf16 or fp32 only, and raises "
            "RuntimeError for bf16 on it (it has no fp16 or mixed-precision training); its fp32 run holds 4-byte "
            "weights, gradients, optimizer states and activations, which specgen does not size. Choose a GPU with bf16 "
            f"(Ampere or newer), or a framework with fp16 mixed precision (hf, trl, axolotl, llama-factory, deepspeed, "
            "unsloth)"
        )
    if optimizer in PURE_BF16_OPTIMIZERS:
        return (
            f"{gpu_id} (compute capability {capability}) has no bf16, and {optimizer} trains pure bf16 with no fp32 "
            f"master copy, which fp16 cannot stand in for: choose a mixed-precision optimizer ({FP16_RUNNABLE}), "
            "which runs as fp16 with loss scaling in the same bytes, or a GPU with bf16 (Ampere or newer)"
        )
    return None


def stack_note(gpu_id: str, vendor: str, method: str, framework: str | None) -> str | None:
    """What a QLoRA job's bitsandbytes NF4 base needs on a GPU not NVIDIA's; None where nothing is to be said.

    ``framework``: a profile name or None (PEFT's bitsandbytes, as the sizing assumes); torchtune's NF4 is torchao's.
    """
    if method != "qlora":
        return None
    from generator.sizing.frameworks import framework_profile  # a QLoRA job's alone (the estimate's cold start)

    bnb = framework is None or framework_profile(framework).nf4_library == "bitsandbytes"
    supported = BNB_SUPPORT.get(vendor) if bnb else None
    if supported is None:
        return None
    release, source = supported
    return (
        f"the NF4 base is bitsandbytes', which supports {gpu_id} from release {release} on ({source}): install a "
        f"bitsandbytes {release} or later built for it (serving engines do not run bitsandbytes there)"
    )


#: FlashAttention-2's README: "FlashAttention-2 with CUDA currently supports: Ampere, Ada, or Hopper GPUs (e.g., A100,
#: RTX 3090, RTX 4090, H100)", Turing through a separate repository of a subset; Volta not at all.
FLASH_ATTENTION_2_DOCS = "https://github.com/Dao-AILab/flash-attention"
#: NVIDIA architectures (the catalog's) FlashAttention-2 does not run on: those below Ampere.
NO_FLASH_ATTENTION_2 = frozenset({"volta", "turing"})


def launches_flash_attention(architecture: str, asked: bool) -> bool:
    """Whether a job asked (or not) to use FlashAttention is launched with it on a GPU of ``architecture``.

    What the planner renders (``flash_attention: false`` below Ampere) and the estimate reports (fix68 item 4: ``estimate
    --train`` on a V100 or T4 said ``flash_attention: true`` where the plan launches it false).
    """
    return asked and architecture not in NO_FLASH_ATTENTION_2


def flash_attention_note(gpu_id: str, architecture: str, asked: bool) -> str | None:
    """How a job asked to use FlashAttention runs on a GPU FlashAttention-2 does not support; None elsewhere.

    newuser67 item 4: an axolotl job on V100 was rendered with ``flash_attention: true``, which fails at start-up
    there. PyTorch's scaled-dot-product attention picks its memory-efficient kernel on such a GPU, which keeps no
    sequence-squared scores either: the memory is sized the same.
    """
    if not asked or launches_flash_attention(architecture, asked):
        return None
    return (
        f"FlashAttention-2 runs on Ampere, Ada and Hopper ({FLASH_ATTENTION_2_DOCS}), not on {gpu_id} "
        f"({architecture.title()}): the launcher gets flash_attention: false, and PyTorch's scaled-dot-product "
        "attention runs its memory-efficient kernel, which keeps no sequence-squared scores either (the memory is "
        "sized so)"
    )


def fp16_note(gpu_id: str, architecture: str) -> str | None:
    """How a mixed-precision job runs on a GPU without bf16 (fp16 with loss scaling, the same bytes); None with bf16."""
    capability = NO_BF16.get(architecture)
    if capability is None:
        return None
    return (
        f"{gpu_id} (compute capability {capability}) has no bf16: sized as fp16 mixed precision with loss scaling, "
        "which holds the same bytes (the Hugging Face Trainer refuses bf16=True there: set fp16=True)"
    )
