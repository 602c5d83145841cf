"""Training and fine-tuning memory per GPU: model states, activations, LoRA / QLoRA, ZeRO / FSDP.

Model states (bytes per trainable parameter; ZeRO paper, arXiv:1910.02054 §3.1):

==================  =======  =====  ==========================================================
optimizer           weights  grads  optimizer states
==================  =======  =====  ==========================================================
adamw               2        2      12 = fp32 master + m + v. Mixed precision as DeepSpeed,
                                    Megatron and FSDP MixedPrecision keep it: 16 bytes/param.
adamw-torch-amp     4        4      8 = m + v, plus a 2-byte bf16 copy of every weight that
                                    autocast caches for the forward pass: 18 bytes/param (the
                                    "~18 bytes" of Hugging Face's guide, and the seed article).
adamw-bf16          2        2      4 = m + v in bf16 (pure bf16 training): 8 bytes/param.
adamw-8bit          2        2      6 = fp32 master + 8-bit m + v (bitsandbytes): 10.
adamw-8bit-bf16     2        2      2 = 8-bit m + v over bf16 parameters (torchtune ``dtype: bf16``
                                    with bitsandbytes AdamW8bit): 6 bytes/param.
sgd                 2        2      8 = fp32 master + momentum: 12.
adafactor           2        2      4 (fp32 master) + factored second moment (rows + cols per
                                    matrix, fp32), no first moment: ~8.
==================  =======  =====  ==========================================================

Megatron-LM keeps fp32 main gradients under ``--bf16`` whatever the regime (4 bytes, not 2: 18 bytes/param for
adamw, 6 + 12/d with its distributed optimizer, ZeRO-1; :attr:`FrameworkProfile.main_grad_bytes`).

LoRA adapters are kept in fp32 (PEFT's default under autocast): 4 + 4 + the optimizer's moment
bytes. ZeRO-1 shards optimizer states, ZeRO-2 also gradients, ZeRO-3 / FSDP full-shard also
weights (the frozen base of LoRA too), over the data-parallel GPUs; ZeRO-3 then holds
``zero3_live_layers`` gathered layers.

Expert parallelism in training (``expert_parallel``, Megatron-Core ``expert_model_parallel_size``,
DeepSpeed-MoE ``ep_size``) is carved out of the data-parallel group, not added to the model-parallel
one: with ``tp x pp x dp`` GPUs, each group of ``ep`` data-parallel ranks splits the routed experts
``ep`` ways (each expert keeps its tensor-parallel split: Megatron-Core's ``expert_tensor_parallel_size``
defaults to ``tensor_model_parallel_size``,
https://docs.nvidia.com/megatron-core/developer-guide/latest/apidocs/core/core.model_parallel_config.html). The other
parameters stay replicated over all ``dp`` ranks and ZeRO shards their states over ``dp``; an expert's
states are sharded over the ``dp / ep`` ranks that hold it. Under ZeRO a GPU's sharded states are
therefore the same as without EP; what EP removes is the unsharded expert copies (ZeRO stage 0, the
weights below ZeRO-3, and the experts of each gathered ZeRO-3 layer). LoRA adapters follow their matrices: those
on routed experts are split EP ways, those on attention and dense layers are held on every GPU.

Activations per layer and token follow Korthikanti et al. (arXiv:2205.05198) generalised to
GQA and gated MLPs: the tensors autograd saves are the norm inputs, the attention input, Q, K,
V, the attention output, the MLP input, and three intermediate-width tensors (gate, up, product);
without FlashAttention the ``heads x seq`` score and probability matrices too. Eager kernels add
RMSNorm's fp32 input copies and SwiGLU's activation output (:func:`eager_kernel_bytes_per_token_per_layer`);
fused kernels (torch.compile, Liger, Unsloth) do not. Full activation
checkpointing keeps only each layer's input plus one layer being recomputed. Gradients replace
activations during backward, so the peak holds the larger of the two, not their sum. Tensor parallelism
with sequence parallelism divides activations by TP.
"""

from __future__ import annotations

import math
from fractions import Fraction

from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.sizing import op_checkpointing
from generator.sizing.architecture import ATTENTION, EXPERT, Architecture, Linear
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import multi_gpu_runtime_bytes
from generator.sizing.expert_parallel import check_ep_divides_data_parallel, check_expert_parallel_model, training_weight_layout
from generator.sizing.frameworks import (
    COMPILED_CHUNKED_LOGITS_BYTES_PER_ELEMENT,
    VISION_LANGUAGE,
    FrameworkProfile,
    Recipe,
    compiles_loss,
    default_loss,
    fp32_logits_share,
    framework_profile,
    logits_bytes_per_element,
    recomputes_ops,
)
from generator.sizing.linear_attention import check_sized_use
from generator.sizing.lora_modules import (
    EMBED_TOKENS,
    LM_HEAD,
    LORA_ALL,
    TORCHTUNE_NAMES,
    TORCHTUNE_NAMES_TEXT,
    adapted_in_layers,
    from_torchtune_names,
    matches_embedding,
    matches_lm_head,
    module_names,
    torchtune_granularity_problem,
    torchtune_names_in,
    unmatched,
)
from generator.sizing.memo import memoized
from generator.sizing.memory import MemoryBreakdown, ffn_width_per_token
from generator.sizing.peft_lora import (
    ACT_BYTES,
    FP32_BYTES,
    peft_cast_copy_bytes_per_token_per_layer,
    peft_traffic_bytes_per_token,
)
from generator.sizing.pipeline_schedule import interleaved_activation_factor, virtual_stages_for
from generator.sizing.precision import WeightFormat, weight_format
from generator.sizing.training_conflicts import paged_refusal, training_conflicts
from generator.sizing.training_elementwise import eager_bytes_per_token, kernels_per_micro_batch, loss_bytes_per_token
from generator.sizing.weights import Parallelism, WeightSizes, linear_params_per_gpu, size_weights


class Optimizer(NamedTuple):
    """Bytes per trainable parameter of one optimizer in its precision regime."""

    name: str
    weight_bytes: int
    grad_bytes: int
    #: Optimizer states including any fp32 master copy.
    state_bytes: int
    #: Moment bytes alone (what fp32 LoRA adapters need beside weights and grads).
    moment_bytes: int
    #: Transient bf16 weight copies cached by autocast, per parameter.
    cast_cache_bytes: int = 0
    factored: bool = False
    #: Bytes per LoRA adapter parameter (and per its gradient): fp32 under PEFT's autocast, the working
    #: precision when the whole model trains in bf16 (torchtune ``dtype: bf16``).
    adapter_bytes: int = 4


OPTIMIZERS: dict[str, Optimizer] = {
    o.name: o
    for o in (
        Optimizer("adamw", 2, 2, 12, 8),
        Optimizer("adamw-torch-amp", 4, 4, 8, 8, cast_cache_bytes=2),
        Optimizer("adamw-bf16", 2, 2, 4, 4, adapter_bytes=2),
        Optimizer("adamw-8bit", 2, 2, 6, 2),
        Optimizer("adamw-8bit-bf16", 2, 2, 2, 2, adapter_bytes=2),
        Optimizer("sgd", 2, 2, 8, 4),
        Optimizer("adafactor", 2, 2, 4, 0, factored=True),
    )
}

METHODS = ("full", "lora", "qlora")
CHECKPOINTING = ("none", "selective", "full")


#: DeepSpeed ZeRO's ``reduce_bucket_size`` default, elements (https://www.deepspeed.ai/docs/config-json/, "Optimizer
#: offloading" and "reduce_bucket_size": 5e8): with the optimizer offloaded, the gradients a GPU holds at once.
ZERO_REDUCE_BUCKET_ELEMENTS = 500_000_000


class TrainingSetup(NamedTuple):
    """One training job's shape."""

    method: str = "full"
    optimizer: str = "adamw"
    zero_stage: int = 0
    data_parallel: int = 1
    micro_batch_size: int = 1
    sequence_length: int = 2048
    checkpointing: str = "full"
    flash_attention: bool = True
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = (LORA_ALL,)
    #: PEFT ``lora_dropout``; above zero each adapted module saves its dropped-out input.
    lora_dropout: float = 0.0
    offload_optimizer: bool = False
    offload_params: bool = False
    #: Precision of the frozen base for LoRA (QLoRA: nf4).
    base_precision: str | None = None
    #: A fine-tuning framework whose defaults fill the techniques left unset (:mod:`generator.sizing.frameworks`).
    framework: str | None = None
    #: Cross-entropy: ``standard`` (full logits), ``chunked`` or ``fused``; None: the framework's.
    loss: str | None = None
    #: Checkpointed activations kept in host RAM; None: the framework's.
    activation_offload: bool | None = None
    #: Optimizer step fused into backward (no whole-model gradients); None: the framework's.
    optimizer_in_backward: bool | None = None
    #: RMSNorm and SwiGLU run as fused kernels (torch.compile, Liger, Unsloth); None: the framework's.
    fused_kernels: bool | None = None
    #: Expert-parallel group size, carved out of ``data_parallel`` (which it must divide); MoE models only.
    expert_parallel: int = 1
    #: Micro-batches a rank runs before each optimizer step (gradient accumulation, or a pipeline's micro-batches).
    accumulation_steps: int = 1
    #: Optimizer states in bitsandbytes' paged memory, which pages them to host RAM under GPU memory pressure (its
    #: recipe's ``PagedAdamW8bit``: :attr:`~generator.sizing.frameworks.Recipe.paged_optimizer`); sized in host RAM.
    paged_optimizer: bool = False
    #: The model's config ``model_type``, where a framework's defaults differ by model family (:func:`default_loss`);
    #: None: not known yet (:func:`size_training` takes its architecture's).
    model_type: str | None = None
    #: What the linear layers' GEMMs run in: ``bf16``, or ``fp8`` (FP8 training; under a framework in
    #: :data:`FP8_WEIGHT_CACHE_FRAMEWORKS` the GPU holds FP8 copies of its linear weights, :func:`fp8_weight_cache_bytes`).
    compute_precision: str = "bf16"
    #: The forward runs under ``torch.autocast`` (every framework's trainer with ``bf16``); False: a plain loop over a
    #: bf16 model (PEFT's MetaMathQA suite, ``use_amp: false``), where fp32 adapters keep their fp32 input copies.
    autocast: bool = True
    #: PEFT's ``prepare_model_for_kbit_training`` over a bitsandbytes base (its fp32 upcast, :meth:`upcasts_unquantized`);
    #: None: the framework's (:attr:`~generator.sizing.frameworks.FrameworkProfile.kbit_fp32_upcast`). False: a loop
    #: that never calls it (Answer.AI's fsdp_qlora ``train.py``, its ``ddp`` mode too: FSDP's NO_SHARD, acc176).
    kbit_preparation: bool | None = None

    def techniques(self) -> tuple[str, bool, bool]:
        """(loss, activation offload, optimizer in backward): the setup's own, else its framework's defaults.

        A framework's default activation offload moves the checkpointed layer inputs (Unsloth's
        ``use_gradient_checkpointing="unsloth"`` is a checkpointing mode): with checkpointing off it offloads nothing,
        and every activation stays on the GPU (fuzz20 item 11: an 8B at 8k tokens was sized 2.6 GiB of activations,
        not about 34).
        """
        profile = framework_profile(self.framework) if self.framework else FrameworkProfile("none", "")
        default_offload = profile.activation_offload and self.checkpointing != "none"
        return (
            self.loss if self.loss is not None else default_loss(profile, self.model_type, self.method, self.base_precision_name),
            self.activation_offload if self.activation_offload is not None else default_offload,
            self.optimizer_in_backward if self.optimizer_in_backward is not None else profile.optimizer_in_backward,
        )

    def adapter_copy_bytes(self) -> int:
        """Bytes an element of the input copy PEFT casts for each adapted layer takes (:func:`peft_casts_inputs`).

        Autocast casts it back to bf16; without autocast fp32 adapters over a 16-bit base keep it in fp32.
        """
        return FP32_BYTES if not self.autocast and self.casts_to_fp32_adapters() else ACT_BYTES

    def casts_to_fp32_adapters(self) -> bool:
        """Whether PEFT casts each adapted layer's input to fp32: the regime's adapters in fp32 over a 16-bit base."""
        fp32_adapters = OPTIMIZERS[self.optimizer].adapter_bytes == FP32_BYTES
        return fp32_adapters and not weight_format(self.base_precision_name).is_quantized

    def upcasts_unquantized(self) -> bool:
        """Whether the non-quantized parameters of a bitsandbytes base are held in fp32 (PEFT's kbit preparation).

        Its framework's choice, on one unsharded copy of the base: sharded QLoRA (ZeRO-3 / FSDP) skips the cast.
        PEFT casts for every k-bit base but GPTQ, AQLM, EETQ, HQQ and torchao ones; of specgen's formats that is
        bitsandbytes' (nf4, and int8 as LLM.int8). ``int4`` stands for GPTQ and AWQ alike and is sized as GPTQ
        (review 14 item 2: int8 had lost the cast).
        """
        if self.method == "full" or self.zero_stage >= 3 or not self.framework:
            return False
        prepares = self.kbit_preparation
        if prepares is None:
            prepares = framework_profile(self.framework).kbit_fp32_upcast
        return prepares and self.base_precision_name in PEFT_UPCAST_FORMATS

    def offloads_optimizer(self) -> bool:
        """Whether the optimizer states and fp32 gradients live on the host.

        Asked (``offload_optimizer``), or brought by an FSDP framework's parameter offload
        (:attr:`~generator.sizing.frameworks.FrameworkProfile.fsdp_cpu_offload`).
        """
        fsdp = self.framework is not None and framework_profile(self.framework).fsdp_cpu_offload
        return self.offload_optimizer or (self.offload_params and fsdp)

    def recomputes_ops(self) -> bool:
        """Whether its ``selective`` checkpointing is op-level, as its framework's (:mod:`~generator.sizing.op_checkpointing`)."""
        return recomputes_ops(self.framework, self.checkpointing)

    def kernels_fused(self) -> bool:
        """Whether RMSNorm and SwiGLU save only their inputs: the setup's own choice, else its framework's default."""
        if self.fused_kernels is not None:
            return self.fused_kernels
        return framework_profile(self.framework).fused_kernels if self.framework else False

    @property
    def base_precision_name(self) -> str:
        """Weight format of the model being trained: bf16 for full training and LoRA, nf4 for QLoRA, unless given."""
        if self.method == "full":
            return "bf16"
        return self.base_precision or ("nf4" if self.method == "qlora" else "bf16")


def framework_model_type(arch: Architecture) -> str:
    """The model type a framework's per-family defaults dispatch on (:attr:`TrainingSetup.model_type`).

    The text model's, or :data:`~generator.sizing.frameworks.VISION_LANGUAGE` where the config has a vision tower
    specgen counts (review40 item 4: LLaVA's Llama text model took Unsloth's Llama path).
    """
    return VISION_LANGUAGE if arch.vision is not None else arch.model_type


def with_recipe(setup: TrainingSetup, recipe: Recipe | None, optimizer_given: bool, paged: bool | None = None) -> TrainingSetup:
    """``setup`` with the defaults of the framework recipe it runs in the fields the job left unset (newuser25 item 3).

    The recipe's optimizer is chosen where the regime is resolved (:func:`~generator.sizing.frameworks.resolved_regime`);
    here its optimizer-in-backward applies where the job leaves it unset and runs one micro-batch a step (torchtune:
    "Requires gradient_accumulation_steps=1"), and its paged states where the job names no optimizer of its own and
    offloads none; ``paged``: the job's own choice of paged states (None: the recipe's).
    """
    in_backward = setup.optimizer_in_backward
    if recipe is not None and in_backward is None and setup.accumulation_steps == 1:
        in_backward = recipe.optimizer_in_backward
    if paged is None:
        paged = recipe is not None and recipe.paged_optimizer and not optimizer_given and not setup.offload_optimizer
    return setup._replace(optimizer_in_backward=in_backward, paged_optimizer=paged)


class TrainingMemory(NamedTuple):
    """Per-GPU memory of a training job, trainable parameter count and host RAM for offload."""

    per_gpu: MemoryBreakdown
    trainable_params: int
    host_ram_bytes_per_gpu: int
    activation_bytes_per_token: int
    #: ``per_gpu.weights`` by part, (name, bytes) in :data:`WEIGHT_PARTS` order; they sum to it.
    weight_parts: tuple[tuple[str, int], ...] = ()
    #: The part of ``per_gpu.overhead`` PyTorch's caching allocator holds reserved beyond the allocated peak.
    allocator_reserve_bytes: int = 0
    #: The activations and logits of a micro-batch at the end of its forward pass, whole (``per_gpu.activations`` may
    #: count them beyond the gradients: :func:`activations_beyond_gradients`).
    activation_peak_bytes: int = 0
    #: Of ``host_ram_bytes_per_gpu``, the optimizer states paged there (``paged_optimizer``).
    paged_state_bytes: int = 0
    #: Bytes activation offload copies to host RAM each micro-batch in forward, and back in backward: the saved
    #: tensors of every layer of the GPU's stage (each layer's input where it is recomputed), its TP share
    #: (:func:`~generator.sizing.training_offload.offload_bytes`; 0 without activation offload).
    offloaded_activation_bytes: int = 0


#: Parts of a training job's per-GPU weights: the model (full training) or the frozen base (LoRA / QLoRA) as held
#: after ZeRO-3 sharding or offload, autocast's bf16 weight copies (``adamw-torch-amp``), the LoRA adapters, and
#: the bf16 buffer one quantized matrix is dequantized into for its matmul (QLoRA).
WEIGHT_PARTS = ("model", "base", "autocast_copy", "fp8_weight_cache", "adapters", "dequant_buffer")

#: Frameworks whose FP8 training keeps an FP8 copy of each linear weight, and its transpose, through the step:
#: Transformer Engine's modules under Megatron-LM. TE's ``Linear.forward(is_first_microbatch=...)``: "during FP8
#: training, it allows caching of the FP8 versions of the weights"
#: (https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/api/pytorch.html), which Megatron-Core sets on
#: every step's first micro-batch (``set_is_first_microbatch``), so the "fp8 weight (transpose) cache" is refreshed
#: once a step and held through it (https://github.com/NVIDIA/Megatron-LM/pull/5642); an FP8 GEMM reads its weight
#: row-wise in forward and column-wise (the transpose) for the input gradient, one byte each. Megatron-LM's weights
#: are not sharded over data parallelism (its distributed optimizer is ZeRO-1), so the cache is the GPU's TP x PP (x EP)
#: share of the linear weights. torchao's float8 (fsdp2) casts each weight as its GEMM runs; its memory is sized as
#: bf16's (no source found for a resident copy).
FP8_WEIGHT_CACHE_FRAMEWORKS = ("megatron",)
#: Bytes a linear parameter's FP8 copies take: the row-wise weight and its column-wise transpose, one byte each.
FP8_WEIGHT_CACHE_BYTES = 2


def _validate(setup: TrainingSetup, pipeline_parallel: int = 1) -> Optimizer:
    if setup.method not in METHODS:
        raise InputError(f"unknown training method '{setup.method}'; choose one of {', '.join(METHODS)}")
    if setup.checkpointing not in CHECKPOINTING:
        raise InputError(f"unknown activation checkpointing '{setup.checkpointing}'; choose one of {', '.join(CHECKPOINTING)}")
    if setup.zero_stage not in (0, 1, 2, 3):
        raise InputError(f"ZeRO stage must be 0, 1, 2 or 3, got {setup.zero_stage}")
    if setup.framework is not None:
        framework_profile(setup.framework)
    if min(setup.data_parallel, setup.micro_batch_size, setup.sequence_length, setup.lora_rank, setup.expert_parallel) < 1:
        raise InputError("data_parallel, micro_batch_size, sequence_length, lora_rank and expert_parallel must be positive")
    check_ep_divides_data_parallel(setup.expert_parallel, setup.data_parallel)
    if setup.base_precision is not None and weight_format(setup.base_precision).gguf is not None:
        # no trainer adapts GGUF-packed weights: Transformers (PEFT, TRL, Unsloth...) dequantizes the file on load
        raise InputError(
            f"a {setup.base_precision} GGUF base is for inference (llama.cpp): trainers load it dequantized to 16-bit "
            "floats, so LoRA trains over a bf16 base and QLoRA over nf4; give one of those (or no --precision)"
        )
    conflicts = training_conflicts(
        method=setup.method,
        framework=setup.framework,
        zero_stage=setup.zero_stage,
        data_parallel=setup.data_parallel,
        base_precision=setup.base_precision,
        offload_params=setup.offload_params,
        pipeline_parallel=pipeline_parallel,
        expert_parallel=setup.expert_parallel,
        accumulation_steps=setup.accumulation_steps,
        optimizer_in_backward=setup.optimizer_in_backward,
        activation_offload=setup.activation_offload,
        checkpointing=setup.checkpointing,
        offload_optimizer=setup.offload_optimizer,
        compute_precision=setup.compute_precision,
    )
    if conflicts:
        raise InputError(conflicts[0][1])
    profile = framework_profile(setup.framework) if setup.framework else None
    if setup.paged_optimizer and (why := paged_refusal(profile, setup.optimizer, setup.offload_optimizer, setup.offload_params)):
        raise InputError(why)
    try:
        return OPTIMIZERS[setup.optimizer]
    except KeyError:
        raise InputError(f"unknown optimizer '{setup.optimizer}'; choose one of {', '.join(sorted(OPTIMIZERS))}") from None


#: Unmatched LoRA target names an error names (each cut to 60 characters).
MAX_ENTRIES_SAID = 3


def lora_targets(arch: Architecture, targets: tuple[str, ...]) -> list[Linear]:
    """The matrices LoRA adapts, for ``all-linear`` or named modules; a name that matches none is refused.

    PEFT adapts the modules whose names match and ignores the rest, so a misspelt name would only shrink the adapters
    (fuzz14 item 5: ``v_porj`` beside ``q_proj`` counted the parameters of ``q_proj`` alone). Names are Transformers'
    full module names for the model type, matched as PEFT matches them (:mod:`generator.sizing.lora_modules`): a
    dotted entry selects the modules whose name ends with it, so its parents, layer and expert numbers count
    (``model.layers.3.self_attn.q_proj``, ``shared_experts.gate_proj``, ``experts.0.down_proj``); a routed expert's
    matrix is returned with ``copies`` the experts adapted. ``all-linear`` is PEFT's value for the whole list: beside
    names it matches nothing (fuzz16 item 8), so it is refused there.
    """
    if not targets:
        # fuzz20 item 3: ``--lora-targets ,`` left no name and planned 0 trainable parameters
        raise InputError(f"LoRA target modules: no module names given; give names such as q_proj,v_proj, or {LORA_ALL}")
    _check_all_linear(targets)
    if LORA_ALL in targets:
        return [module.linear for _, module, _ in adapted_in_layers(arch, targets)]
    unknown = unmatched(arch, targets)
    if unknown:
        # the first few entries, each cut to 60 characters (fuzz25 L7: 64 long names made a 2,045-character line)
        shown = {
            entry if len(entry) <= 60 else entry[:60] + "...": why for entry, why in list(unknown.items())[:MAX_ENTRIES_SAID]
        }
        reasons = "; ".join(f"'{entry}': {why}" for entry, why in shown.items())
        more = f" and {len(unknown) - len(shown):,} more" if len(unknown) > len(shown) else ""
        raise InputError(
            f"LoRA target modules {list(shown)}{more} match no linear layer of this model (its layers: "
            f"{', '.join(sorted(module_names(arch) | {LM_HEAD, EMBED_TOKENS}))}, or {LORA_ALL}): {reasons}. PEFT adapts a "
            "module whose "
            "full name equals an entry or ends with '.' and the entry: model.layers.N.self_attn.q_proj matches q_proj, "
            "self_attn.q_proj or the whole name"
        )
    picked = [module.linear._replace(copies=copies) for _, module, copies in adapted_in_layers(arch, targets)]
    if any(matches_lm_head(entry) for entry in targets):
        # the output layer is a linear module PEFT adapts when named (its all-linear leaves it out; review 14 item 8)
        picked.append(Linear(LM_HEAD, arch.hidden_size, arch.vocab_size, LM_HEAD))
    if any(matches_embedding(entry) for entry in targets):
        # PEFT's LoRA Embedding: A is r x vocab, B hidden x r (lora_modules.EMBED_TOKENS), as a linear vocab -> hidden
        picked.append(Linear(EMBED_TOKENS, arch.vocab_size, arch.hidden_size, EMBED_TOKENS))
    return picked


def _check_all_linear(targets: tuple[str, ...]) -> None:
    """Refuse ``all-linear`` in a list beside module names, where PEFT matches it to nothing."""
    if LORA_ALL in targets and len(targets) > 1:
        raise InputError(
            f"'{LORA_ALL}' is PEFT's target_modules value on its own: in a list beside module names it matches no "
            "module; give it alone, or list the modules"
        )


@memoized  # checked once per job: the planner sizes a job's every layout with the same names
def adapter_targets(arch: Architecture, targets: tuple[str, ...], framework: str | None) -> tuple[str, ...]:
    """``targets`` in Transformers' names, checked (:func:`lora_targets`); under torchtune its own names are taken.

    torchtune's configs name the adapted modules its way (``output_proj``, ``w1``, ``w2``, ``w3``, ``output``): under
    ``framework`` torchtune they are mapped to the model's names (:data:`~generator.sizing.lora_modules.TORCHTUNE_NAMES`,
    newuser22 item 10). A refusal says which names work: torchtune's under torchtune, and where torchtune's names are
    given without it, that they are torchtune's.
    """
    torchtune = framework is not None and framework_profile(framework).name == "torchtune"
    if torchtune and (why := torchtune_granularity_problem(targets)):
        raise InputError(why)
    named = from_torchtune_names(arch, targets) if torchtune else targets
    try:
        lora_targets(arch, named)
    except InputError as exc:
        if torchtune:
            raise InputError(f"{exc.message}; under torchtune its own names work too: {TORCHTUNE_NAMES_TEXT}") from None
        if foreign := [t for t in torchtune_names_in(targets) if t not in module_names(arch) | {LM_HEAD}]:
            mapped = ", ".join(f"{TORCHTUNE_NAMES[t]} for {t}" for t in foreign)
            raise InputError(
                f"{exc.message}; {', '.join(foreign)} are torchtune's names: set framework torchtune (--framework "
                f"torchtune), or give this model's ({mapped})"
            ) from None
        raise
    return named


@memoized
def lora_params(arch: Architecture, rank: int, targets: tuple[str, ...]) -> int:
    """Trainable adapter parameters: ``rank * (in + out)`` per adapted matrix (and per expert)."""
    return sum(lora_params_split(arch, rank, targets))


@memoized
def lora_params_split(arch: Architecture, rank: int, targets: tuple[str, ...]) -> tuple[int, int]:
    """Adapter parameters on routed-expert matrices (which EP spreads) and on all the others (which it does not)."""
    expert = other = 0
    for lin in lora_targets(arch, targets):
        params = rank * (lin.in_features + lin.out_features) * lin.copies
        if lin.group == EXPERT:
            expert += params
        else:
            other += params
    return expert, other


@memoized
def activation_bytes_per_token_per_layer(arch: Architecture, seq_len: int, flash_attention: bool, act_bytes: int = 2) -> int:
    """Bytes autograd saves per token in the widest decoder layer (no checkpointing)."""
    h = arch.hidden_size
    widest = 0
    for layer in arch.layers:
        attn = 2 * h  # norm input and attention input
        for lin in layer.linears:
            if lin.group == ATTENTION:
                # every projection output is saved; o_proj saves its input, the attention output
                attn += lin.in_features if lin.name == "o_proj" else lin.out_features
        widest = max(widest, attn)
    attn = widest
    if not flash_attention:
        attn += 2 * arch.num_attention_heads * seq_len  # scores and probabilities
    mlp = 2 * h + 3 * ffn_width_per_token(arch)
    return (attn + mlp) * act_bytes


def eager_kernel_bytes_per_token_per_layer(arch: Architecture, trainable_norms: bool, act_bytes: int = 2) -> int:
    """What eager PyTorch saves beyond fused kernels, per token and layer.

    Eager RMSNorm (Hugging Face ``LlamaRMSNorm``, torchtune ``RMSNorm``) saves its fp32 upcast instead of
    the bf16 input (``2h`` bytes more per norm, two norms per layer) and, when the norm weight trains, the
    bf16 normalised tensor for the weight's gradient (``2h`` more); eager SwiGLU saves ``silu(gate)`` beside
    gate and up (one more intermediate-width tensor). torch.compile, Liger and Unsloth's Triton kernels
    save the inputs only.
    """
    per_norm = arch.hidden_size * (2 if trainable_norms else 1)
    return (2 * per_norm + ffn_width_per_token(arch)) * act_bytes


def backward_transient_bytes_per_token(arch: Architecture, act_bytes: int = 2) -> int:
    """Gradients that exist only while one layer's backward runs, beside everything saved.

    The MLP's backward holds d(product) from ``down_proj`` and computes d(gate) and d(up) from it: three
    intermediate-width tensors at once. FlashAttention's backward holds an fp32 dQ accumulator with dQ, dK
    and dV. The larger of the two sets the transient.
    """
    kv_width = 2 * arch.num_kv_heads * arch.head_dim
    attention = 2 * arch.num_attention_heads * arch.head_dim * 2 + kv_width  # fp32 dQ accumulator and bf16 dQ, then dK, dV
    return max(3 * ffn_width_per_token(arch), attention) * act_bytes


def lora_traffic_bytes_per_token(arch: Architecture, setup: TrainingSetup) -> float:
    """HBM bytes a token moves through the job's LoRA layers outside their matmuls, whole model.

    PEFT's, where the job's framework trains LoRA through PEFT
    (:attr:`~generator.sizing.frameworks.FrameworkProfile.peft_lora`); 0 otherwise (full training, no framework named,
    or LoRA layers of the framework's own). PEFT casts a layer's input to fp32 where the adapters are fp32 (the
    optimizer regime's ``adapter_bytes``) over a 16-bit base; over a quantized base it leaves the input to autocast,
    and clones a bitsandbytes 4-bit layer's output.
    """
    if not _trains_peft_lora(setup):
        return 0.0
    return peft_traffic_bytes_per_token(
        arch,
        setup.lora_targets,
        checkpointing=setup.checkpointing,
        cast_input=peft_casts_inputs(setup),
        clone_output=setup.base_precision_name in BNB_QUANT_STATE_FORMATS,
        dropout=setup.lora_dropout > 0,
    )


def eager_elementwise_bytes_per_token(arch: Architecture, setup: TrainingSetup) -> float:
    """HBM bytes a token moves through the layers' eager norms, rotary embedding, gating and residual adds, whole model.

    Where the job's framework runs them as eager PyTorch operators
    (:attr:`~generator.sizing.frameworks.FrameworkProfile.eager_elementwise`) and its kernels are not fused; 0 otherwise
    (no framework named, or one that compiles or fuses them).
    """
    if setup.framework is None or not framework_profile(setup.framework).eager_elementwise or setup.kernels_fused():
        return 0.0
    return eager_bytes_per_token(arch, setup.checkpointing) + loss_bytes_per_token(arch, setup.techniques()[0])


def eager_kernels_per_micro_batch(arch: Architecture, setup: TrainingSetup) -> tuple[int, int]:
    """Kernels a micro-batch launches one at a time through the layers where the framework runs them eagerly.

    The frameworks whose layers run as eager PyTorch operators (:attr:`~generator.sizing.frameworks.FrameworkProfile.
    eager_elementwise`, kernels not fused), with PEFT's LoRA layers where it trains through PEFT
    (:func:`generator.sizing.training_elementwise.kernels_per_micro_batch`); 0 otherwise: a framework that compiles or
    fuses its layers launches few, long kernels, and no framework named times none. (forward, backward) kernels.
    """
    if setup.framework is None or not framework_profile(setup.framework).eager_elementwise or setup.kernels_fused():
        return 0, 0
    adapted = sum(1 for _ in adapted_in_layers(arch, setup.lora_targets)) if _trains_peft_lora(setup) else 0
    cast = _trains_peft_lora(setup) and peft_casts_inputs(setup)
    return kernels_per_micro_batch(arch, setup.checkpointing, adapted, cast)


def runs_grouped_mm_experts(setup: TrainingSetup) -> bool:
    """Whether the job's framework runs an MoE model's routed experts through ``torch._grouped_mm``.

    Transformers 5's ``grouped_mm`` experts under the frameworks whose layers run eagerly, the ones whose grouped_mm
    block's launches and routing passes the step counts (:func:`eager_kernels_per_micro_batch`); the step times their
    grouped GEMMs at ``grouped_mm_half_tokens`` (:func:`generator.sizing.training_moe.expert_fill`).
    """
    return setup.framework is not None and framework_profile(setup.framework).eager_elementwise and not setup.kernels_fused()


def _trains_peft_lora(setup: TrainingSetup) -> bool:
    """Whether the job trains LoRA or QLoRA through PEFT's layers (its framework's)."""
    return setup.method != "full" and setup.framework is not None and framework_profile(setup.framework).peft_lora


def peft_casts_inputs(setup: TrainingSetup) -> bool:
    """Whether each adapted layer's ``lora_A`` gets an input of its own cast.

    PEFT's fp32 cast where fp32 adapters (the regime's) sit over a 16-bit base; or, over a bitsandbytes base its
    framework prepares with PEFT's ``prepare_model_for_kbit_training`` (norms in fp32, so the layers' inputs arrive in
    fp32), autocast's bf16 copy for each module (review31 item 3; timed as the cast path, a little over).
    """
    return _trains_peft_lora(setup) and (setup.casts_to_fp32_adapters() or setup.upcasts_unquantized())


def lora_dropout_bytes_per_token_per_layer(arch: Architecture, targets: tuple[str, ...]) -> int:
    """PEFT's LoRA dropout: each adapted module saves ``dropout(x)`` (bf16) and its mask (1 byte) per input feature.

    Modules that share an input (q/k/v, gate/up) each draw their own dropout, so each keeps its own copy.
    Zero when ``lora_dropout`` is 0 (PEFT then passes ``x`` through unchanged).
    """
    lora_targets(arch, targets)  # refuses targets that match nothing
    per_layer = [0] * arch.num_layers
    for index, module, copies in adapted_in_layers(arch, targets):
        lin = module.linear
        # a token passes through its routed experts only: at most experts_per_token of those adapted
        routed = min(copies, arch.layers[index].experts_per_token)
        per_layer[index] += lin.in_features * (routed if lin.group == EXPERT else copies)
    return max(per_layer) * (2 + 1)


@memoized  # the planner sizes a job's setups on every GPU kind and step split: 110,808 calls, 448 distinct (fuzz27 M7)
def size_training(
    arch: Architecture, setup: TrainingSetup, par: Parallelism, consts: Constants, *, nvlink: bool
) -> TrainingMemory:
    """Per-GPU memory of a training or fine-tuning job (the sum of every component).

    ``nvlink``: the job's GPUs have NVLink peers in their node
    (:func:`~generator.sizing.distributed_runtime.nvlink_collectives` over all ``data_parallel x tp x pp`` GPUs);
    the distributed runtime takes the same link-dependent memory as in serving
    (:func:`~generator.sizing.distributed_runtime.multi_gpu_runtime_bytes`). Training's NCCL holds at least what
    serving's does there: PyTorch's process groups build the same P2P channels, and leave NCCL's NVLink SHARP
    buffers on where the board has NVSwitches (SGLang turns them off; NeMo and JAX-Toolbox turn them off
    to save memory). Required, so that no caller gets the PCIe figure by omission.
    """
    # the activations counted here are attention layers' (Korthikanti et al.); a Gated DeltaNet layer saves others
    check_sized_use(arch, "training")
    if setup.model_type is None:
        setup = setup._replace(model_type=framework_model_type(arch))
    opt = _validate(setup, par.pp)
    if setup.method != "full":
        setup = setup._replace(lora_targets=adapter_targets(arch, setup.lora_targets, setup.framework))
    setup = setup._replace(offload_optimizer=setup.offloads_optimizer())
    if par.ep != 1:
        raise InputError("a training job's expert parallelism is TrainingSetup.expert_parallel, carved out of data parallel")
    ep = setup.expert_parallel
    check_expert_parallel_model(arch, ep)
    experts, _top_k = arch.routed_experts
    if experts and experts % ep:
        raise InputError(f"routed experts ({experts}) must be divisible by the expert parallel size ({ep})")
    loss, activation_offload, optimizer_in_backward = setup.techniques()
    upcast = setup.upcasts_unquantized()
    dp = setup.data_parallel
    tokens = setup.micro_batch_size * setup.sequence_length
    ep_layout = training_weight_layout(par, ep)
    full_shard = size_weights(arch, weight_format("bf16"), par)
    # Fraction of all parameters on the fullest GPU of a model-parallel group: without EP (what ZeRO shards over
    # dp, experts included: dp / ep ranks hold each expert shard) and with EP (what a GPU holds unsharded).
    mp_fraction = full_shard.per_gpu_bytes / full_shard.total_bytes
    ep_shard = full_shard if ep == 1 else size_weights(arch, weight_format("bf16"), ep_layout)
    ep_fraction = mp_fraction if ep == 1 else ep_shard.per_gpu_bytes / full_shard.total_bytes
    largest_layer = _largest_gathered_layer(full_shard, par.tp, ep)

    def zero3(replica_weights: float, sharded_weights: float, root_bytes: float, layer_bytes: float) -> float:
        # sharded over data parallel, plus the gathered layers in flight (``layer_bytes`` each, as stored: a QLoRA
        # base gathers its packed 4-bit data) and the root unit, which FSDP keeps gathered from forward through
        # backward; never more than the whole replica
        gathered = consts.zero3_live_layers * layer_bytes + root_bytes * (1 - 1 / dp)
        return min(replica_weights, sharded_weights + gathered)

    def held(local: float, without_ep: float, sharded: bool) -> float:
        """Bytes of a model state on one GPU: its ZeRO shard when ``sharded``, else its whole EP-split copy ``local``.

        ``without_ep`` is the state's model-parallel shard without EP: ZeRO shards the non-expert part over all ``dp``
        ranks and an expert's over the ``dp / ep`` ranks that hold it, so the shard is ``without_ep / dp`` either way.
        """
        return without_ep / dp if sharded else local

    host = paged = 0.0
    weights: float
    grads: float
    states: float
    parts: dict[str, float] = {}
    if setup.method == "full":
        params = arch.params_total * ep_fraction
        unsplit = arch.params_total * mp_fraction  # the GPU's parameters without EP
        trainable = arch.params_total
        weights = params * opt.weight_bytes
        if setup.zero_stage >= 3:
            weights = zero3(weights, unsplit * opt.weight_bytes / dp, root_unit_bytes(full_shard, par), largest_layer)
        # a framework's own main gradients where it keeps them (Megatron-LM's fp32 grad buffer under --bf16)
        grad_bytes = (framework_profile(setup.framework).main_grad_bytes if setup.framework else None) or opt.grad_bytes
        grads = held(params * grad_bytes, unsplit * grad_bytes, setup.zero_stage >= 2)
        states = held(params * opt.state_bytes, unsplit * opt.state_bytes, setup.zero_stage >= 1)
        if opt.factored:
            factored = _factored_state_bytes(arch)
            states += held(factored * ep_fraction, factored * mp_fraction, setup.zero_stage >= 1)
        if setup.offload_optimizer:
            host += states + held(params * 4, unsplit * 4, setup.zero_stage >= 2)  # states + fp32 grads on the host
            states = 0
            # ZeRO-Offload moves each reduced gradient bucket to the host as backward fills it: the GPU holds a
            # bucket, not the model's gradients
            grads = min(grads, ZERO_REDUCE_BUCKET_ELEMENTS * opt.grad_bytes)
        elif setup.paged_optimizer:
            # paged states wait in host RAM; the gradients stay on the GPU, where the optimizer steps
            host += states
            paged, states = states, 0
        parts = {"model": weights, "autocast_copy": params * opt.cast_cache_bytes}
        parts["fp8_weight_cache"] = fp8_weight_cache_bytes(arch, setup, ep_layout)
        if setup.offload_params:
            # the GPU keeps the gathered layers and FSDP's root unit (embeddings, LM head, final norm), as for a
            # LoRA base; the rest, autocast's copies with it, waits in host RAM
            live = consts.zero3_live_layers * largest_layer + root_unit_bytes(full_shard, par)
            host += max(0.0, weights + parts["autocast_copy"] - live)
            parts = {"model": live}
    else:
        base_fmt: WeightFormat = weight_format(setup.base_precision_name)
        base_shard = size_weights(arch, base_fmt, par)
        base = base_shard if ep == 1 else size_weights(arch, base_fmt, ep_layout)
        root = root_unit_bytes(base_shard, par)
        # bitsandbytes keeps absmax and its nested scales in each layer's quant_state, which is neither a
        # parameter nor a buffer: ZeRO-3 / FSDP shards and offloads only the packed 4-bit data, and every GPU
        # holds the whole model's quant_state (see bnb_quant_state_bytes)
        bnb = not setup.framework or framework_profile(setup.framework).nf4_library == "bitsandbytes"
        quant_state = bnb_quant_state_bytes(arch, base_fmt, ep_layout) if setup.zero_stage >= 3 and bnb else 0
        packed = base.per_gpu_bytes - quant_state
        sharded_packed = (base_shard.per_gpu_bytes - (bnb_quant_state_bytes(arch, base_fmt, par) if bnb else 0)) / dp
        # a base layer is gathered as stored (bitsandbytes' scales stay in every rank's quant_state)
        gathered_base = size_weights(arch, packed_only(base_fmt), par) if quant_state else base_shard
        base_layer = _largest_gathered_layer(gathered_base, par.tp, ep)
        frozen = zero3(packed, sharded_packed, root, base_layer) + quant_state if setup.zero_stage >= 3 else base.per_gpu_bytes
        expert_adapters, other_adapters = lora_params_split(arch, setup.lora_rank, setup.lora_targets)
        trainable = expert_adapters + other_adapters
        # the GPU's model-parallel share of the adapters (as of the weights); EP spreads only the experts' adapters
        adapters = (other_adapters + expert_adapters / ep) * mp_fraction
        unsplit_adapters = trainable * mp_fraction
        grads = held(adapters * opt.adapter_bytes, unsplit_adapters * opt.adapter_bytes, setup.zero_stage >= 2)
        states = held(adapters * opt.moment_bytes, unsplit_adapters * opt.moment_bytes, setup.zero_stage >= 1)
        if setup.offload_optimizer or setup.paged_optimizer:
            host += states
            paged, states = (states if setup.paged_optimizer else 0), 0
        if setup.offload_params:
            # FSDP / ZeRO-3 CPU offload of the frozen base: the GPU holds only the layers being gathered
            # FSDP gathers the root unit (embeddings, LM head, final norm) onto the GPU as well
            offloadable = frozen - quant_state
            live = min(offloadable, consts.zero3_live_layers * base_layer + root)
            host += offloadable - live
            frozen = live + quant_state
        # one matrix is dequantized to bf16 at a time for the matmul
        dequant = (
            max(lin.in_features * lin.out_features for layer in arch.layers for lin in layer.linears) * 2 / par.tp
            if base_fmt.is_quantized
            else 0
        )
        # ZeRO-3 / FSDP shard the trainable adapters with the frozen base they sit in (as their gradients and states)
        adapter_bytes = held(adapters * opt.adapter_bytes, unsplit_adapters * opt.adapter_bytes, setup.zero_stage >= 3)
        parts = {"base": frozen, "adapters": adapter_bytes, "dequant_buffer": dequant}
        if upcast:
            # the 16-bit parameters outside the quantized layers take 4 bytes, and the LM head's matmul saves its
            # bf16 cast of the head for backward
            parts["base"] += (base_shard.embedding_bytes + base_shard.lm_head_bytes + base_shard.other_bytes) / par.tp
            parts["autocast_copy"] = arch.vocab_size * arch.hidden_size * 2 / par.tp
    weights = sum(parts.values())

    # selective recomputation (Korthikanti et al.; op-level too, which saves the attention kernel's output) drops the
    # attention scores, as FlashAttention does
    per_layer = activation_bytes_per_token_per_layer(
        arch, setup.sequence_length, setup.flash_attention or setup.checkpointing == "selective"
    )
    if not setup.kernels_fused():
        per_layer += eager_kernel_bytes_per_token_per_layer(arch, trainable_norms=setup.method == "full")
    if setup.method != "full" and setup.lora_dropout > 0:
        per_layer += lora_dropout_bytes_per_token_per_layer(arch, setup.lora_targets)
    elif peft_casts_inputs(setup):
        per_layer += peft_cast_copy_bytes_per_token_per_layer(arch, setup.lora_targets, setup.adapter_copy_bytes())
    layers_on_first_stage = math.ceil(arch.num_layers / par.pp)
    # 1F1B keeps pp micro-batches in flight on the first stage: layers/pp x pp = all layers' worth.
    in_flight = layers_on_first_stage * min(par.pp, math.ceil(arch.num_layers / layers_on_first_stage))
    # an interleaved schedule keeps more chunk micro-batches in flight there; the micro-batch count is not known here,
    # so the deeper schedule's memory is counted (the step time interleaves only a whole multiple of the stages)
    virtual = virtual_stages_for(arch.num_layers, par.pp, consts.training_pipeline_virtual_stages)
    in_flight = math.ceil(in_flight * interleaved_activation_factor(par.pp, virtual))
    # full checkpointing keeps each layer's input (bf16; fp32 where fp32 embeddings make the residual stream fp32),
    # op-level selective checkpointing what its policy saves; either plus one layer being recomputed
    residual_bytes = 4 if upcast else 2
    checkpoint = arch.hidden_size * residual_bytes
    if setup.recomputes_ops():
        adapted: op_checkpointing.Adapted = frozenset()
        if setup.method != "full":
            adapted = frozenset((i, m.linear.name) for i, m, _ in adapted_in_layers(arch, setup.lora_targets))
        checkpoint = op_checkpointing.saved_bytes_per_token_per_layer(arch, adapted, setup.lora_rank if adapted else 0)
    recomputing = setup.checkpointing == "full" or setup.recomputes_ops()
    kept = in_flight * checkpoint + per_layer if recomputing else in_flight * per_layer
    offloaded = 0.0
    if activation_offload:
        # saved tensors go to host RAM; the GPU keeps the layer in flight and the one being fetched back
        on_host = kept
        kept = 2 * checkpoint + per_layer if recomputing else 2 * per_layer
        host += (on_host - kept) * tokens / par.tp
        # each of the stage's layers copies its saved tensors out in forward and back in backward, a micro-batch each
        offloaded = layers_on_first_stage * (checkpoint if recomputing else per_layer) * tokens / par.tp
    vocab_per_gpu = math.ceil(arch.vocab_size / par.tp)
    # a frozen LM head's loss phase holds the logits alone; a trained one's also its weight gradient, not sized apart
    frozen_head = setup.method != "full" and not any(matches_lm_head(t) for t in setup.lora_targets)
    compiled_loss = frozen_head and compiles_loss(setup.framework, setup.kernels_fused(), loss)
    if compiled_loss:
        # a compiled chunked loss holds its bf16 logits to the end of forward, and its backward (every chunk's, their
        # gradients joined before the final norm's backward) frees them before the last layer is recomputed and its
        # backward allocates its transients: the logits and that working set never coexist; what stays through both
        # is the rest of ``kept`` (the layer inputs)
        recomputed = per_layer if recomputing else 0
        logits = math.ceil(vocab_per_gpu * COMPILED_CHUNKED_LOGITS_BYTES_PER_ELEMENT)
        working = (recomputed + backward_transient_bytes_per_token(arch)) // par.tp
        act_per_token = (kept - recomputed) // par.tp + max(working, logits)
    else:
        logits = math.ceil(vocab_per_gpu * logits_bytes_per_element(loss, consts.logits_bytes_per_element))
        act_per_token = (kept + backward_transient_bytes_per_token(arch)) // par.tp + logits
    activations = peak = tokens * act_per_token
    if optimizer_in_backward:
        # each parameter steps as its gradient arrives: one layer's gradients at a time
        grads = min(grads, largest_layer / 2 * opt.grad_bytes)
    # The breakdown shows the gradients whole and the activations beyond them. With one micro-batch a step, backward
    # frees each layer's saved activations as it allocates that layer's gradients: the step peaks at its start
    # (every activation, no gradient yet) or at its end (every gradient, the first layer's working set), never
    # holding both in full. Accumulating, the gradients of earlier micro-batches are held through every later one.
    # DDP (ZeRO-0 over several GPUs) also holds its flat gradient buckets all along, beside the parameters' own
    # gradients (PyTorch's default, gradient_as_bucket_view=False): at the end of backward, and, accumulating, through
    # every later micro-batch beside the gradients accumulated so far (review 9 H2). Megatron's DDP allocates its one
    # grad buffer (main_grad, no second copy) whole when it wraps the model, at every ZeRO stage it runs: resident
    # beside every activation from the first forward on (newuser51 item 1: at ZeRO-1 with one micro-batch a 70B layout
    # was shown at 72.8 GiB a GPU where it holds about 104 GiB; Megatron's theoretical_memory_usage.py sums them too).
    end_of_backward = tokens * ((per_layer + backward_transient_bytes_per_token(arch)) // par.tp)
    if activations_beyond_gradients(setup, dp):
        activations = max(activations, math.ceil(grads) + end_of_backward) - math.ceil(grads)
    elif setup.zero_stage == 0 and dp > 1 and not _megatron(setup):
        buckets = math.ceil(grads)
        accumulated = buckets if setup.accumulation_steps > 1 else 0
        activations = max(activations + accumulated, buckets + end_of_backward)

    # the caching allocator keeps a freed fp32-logits-sized block reserved through the allocated peak (no part of an
    # allocated or active count: the report subtracts the overhead from those)
    fp32_logits = 0 if compiled_loss else tokens * vocab_per_gpu * 4 * fp32_logits_share(loss)
    reserve = math.ceil(fp32_logits * consts.training_allocator_slack_logits_fraction)
    overhead = consts.training_overhead_bytes + multi_gpu_runtime_bytes(dp * par.gpus, consts, nvlink=nvlink) + reserve
    per_gpu = MemoryBreakdown(
        weights=math.ceil(weights),
        kv_cache=0,
        activations=activations,
        gradients=math.ceil(grads),
        optimizer=math.ceil(states),
        overhead=overhead,
    )
    return TrainingMemory(
        per_gpu,
        trainable,
        math.ceil(host),
        act_per_token,
        _weight_parts(parts, per_gpu.weights),
        reserve,
        peak,
        math.ceil(paged),
        math.ceil(offloaded),
    )


def _megatron(setup: TrainingSetup) -> bool:
    return setup.framework is not None and framework_profile(setup.framework).name == "megatron"


def activations_beyond_gradients(setup: TrainingSetup, dp: int) -> bool:
    """Whether a step's activations are counted beyond its gradients.

    One micro-batch, whose backward frees a layer's activations as it makes that layer's gradients, outside DDP's
    buckets and Megatron's grad buffer (both held whole from the start).
    """
    return setup.accumulation_steps == 1 and not _megatron(setup) and not (setup.zero_stage == 0 and dp > 1)


def fp8_weight_cache_bytes(arch: Architecture, setup: TrainingSetup, layout: Parallelism) -> float:
    """Bytes on the GPU of FP8 training's cached weight copies; 0 in bf16 and for other frameworks.

    ``FP8_WEIGHT_CACHE_BYTES`` a parameter of the GPU's own decoder linear weights under ``layout`` (its TP share, its
    pipeline stage's layers, its EP rank's routed experts: :func:`generator.sizing.weights.linear_params_per_gpu`),
    under :data:`FP8_WEIGHT_CACHE_FRAMEWORKS`. The embeddings, norms and LM head stay bf16 and get no copy: under
    expert parallelism a GPU holds the whole embedding and LM head beside its experts, so a whole-model ratio of linear
    to all parameters applied to its parameters counted copies of them (review71 item 9: Qwen3-30B-A3B EP8 9.42 GiB
    printed where its 4,542,431,232 linear parameters a GPU need 8.46 GiB).
    """
    if setup.compute_precision != "fp8" or setup.framework is None:
        return 0.0
    if framework_profile(setup.framework).name not in FP8_WEIGHT_CACHE_FRAMEWORKS:
        return 0.0
    return float(FP8_WEIGHT_CACHE_BYTES * linear_params_per_gpu(arch, layout))


def _weight_parts(parts: dict[str, float], total_bytes: int) -> tuple[tuple[str, int], ...]:
    """Each non-zero part in whole bytes, in :data:`WEIGHT_PARTS` order; the first takes the rounding so they sum to the total."""
    rounded = [(name, math.ceil(parts[name])) for name in WEIGHT_PARTS if parts.get(name)]
    if not rounded:
        return ()
    (first, _), *rest = rounded
    return ((first, total_bytes - sum(b for _, b in rest)), *rest)


def _largest_gathered_layer(shard: WeightSizes, tp: int, ep: int) -> float:
    """Bytes of the largest decoder layer one GPU gathers: its TP split, and of its routed experts only the EP rank's."""
    expert_bytes = shard.layer_expert_bytes or (0,) * len(shard.layer_bytes)
    return max(whole - experts * (ep - 1) / ep for whole, experts in zip(shard.layer_bytes, expert_bytes, strict=True)) / tp


#: Formats bitsandbytes stores as ``Params4bit`` with a ``quant_state`` (absmax, nested absmax, code).
BNB_QUANT_STATE_FORMATS = frozenset({"nf4", "nf4-no-double-quant"})
#: Bases whose other parameters PEFT's ``prepare_model_for_kbit_training`` casts to fp32: bitsandbytes 4- and 8-bit
#: (it skips GPTQ, AQLM, EETQ, HQQ and torchao; peft ``utils/other.py``).
PEFT_UPCAST_FORMATS = BNB_QUANT_STATE_FORMATS | {"int8"}


def bnb_quant_state_bytes(arch: Architecture, fmt: WeightFormat, par: Parallelism) -> int:
    """Bytes of bitsandbytes' quantization state (absmax per 64 weights, nested scales) on one GPU, all layers.

    FSDP shards, gathers and CPU-offloads parameters and buffers only; bitsandbytes keeps a ``Linear4bit``'s
    scales in its ``quant_state``, so under FSDP-QLoRA (``bnb_4bit_quant_storage``) only the packed 4-bit
    storage is sharded and every rank keeps the whole model's quant_state on its GPU (bitsandbytes
    https://github.com/bitsandbytes-foundation/bitsandbytes/pull/970; Answer.AI
    https://github.com/AnswerDotAI/fsdp_qlora/pull/4: "leaves the quant_state dictionary attached to all
    rank's Linear4bit layers"). Zero for formats that are not bitsandbytes 4-bit.
    """
    if fmt.name not in BNB_QUANT_STATE_FORMATS:
        return 0
    return size_weights(arch, fmt, par).per_gpu_bytes - size_weights(arch, packed_only(fmt), par).per_gpu_bytes


def packed_only(fmt: WeightFormat) -> WeightFormat:
    """``fmt`` without its scales: the packed weights alone, what FSDP / ZeRO-3 shard and gather of a bitsandbytes base."""
    return fmt._replace(scale_bits=Fraction(0))


def root_unit_bytes(sizes: WeightSizes, par: Parallelism) -> float:
    """Bytes of FSDP's root unit on one GPU: what is not inside a decoder layer (embeddings, LM head, final norm).

    FSDP wraps each decoder layer; the rest is the root's flat parameter, which FSDP1 does not reshard
    after forward (it is used again at once in backward) - it stays gathered for the whole step.
    """
    return (sizes.embedding_bytes + sizes.lm_head_bytes + sizes.other_bytes) / par.tp


def _factored_state_bytes(arch: Architecture) -> int:
    """Adafactor's factored second moment: one fp32 row and column vector per matrix."""
    total = 0
    for layer in arch.layers:
        total += sum((lin.in_features + lin.out_features) * lin.copies for lin in layer.linears) * 4
    return total + 2 * (arch.vocab_size + arch.hidden_size) * 4
