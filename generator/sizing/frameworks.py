"""Fine-tuning frameworks as profiles: the memory techniques each turns on by default.

Each technique is also a field of :class:`~generator.sizing.training.TrainingSetup` of its own;
a profile only fills the fields a user left at their defaults (:func:`apply_framework`).

Techniques and what they change in the memory sum:
- ``loss``: ``standard`` materialises the logits of every token (bf16, an fp32 upcast and the fp32
  log-softmax saved for backward: ``logits_bytes_per_element``); ``chunked`` computes the output
  projection and the fp32 loss in chunks (torchtune ``CEWithChunkedOutputLoss``, 8 chunks: the bf16
  logits stay, the fp32 copies exist for one chunk); ``fused`` never materialises them (Liger
  ``FusedLinearCrossEntropy``, Unsloth's fused CE, Cut Cross-Entropy).
- ``activation_offload``: checkpointed layer inputs live in host RAM (torchtune
  ``enable_activation_offloading``, Unsloth's ``use_gradient_checkpointing="unsloth"``); the GPU
  keeps the layer being recomputed.
- ``optimizer_in_backward``: each parameter's step runs as soon as its gradient exists, so the
  gradients of the whole model never coexist (torchtune ``optimizer_in_bwd``).
- ``fused_kernels``: RMSNorm and SwiGLU run fused and save only their inputs (torch.compile,
  torchtune ``compile: True``; Liger's ``LigerRMSNorm``/``LigerSwiGLUMLP``; Unsloth's Triton kernels);
  eager PyTorch also saves RMSNorm's fp32 upcast and SwiGLU's activation output.
- ``eager_elementwise``: the framework runs a layer's norms, rotary embedding, gating and residual adds as eager
  PyTorch operators, each a pass over the activations in HBM (:mod:`generator.sizing.training_elementwise`): the
  Hugging Face Trainer family and DeepSpeed through it (``torch_compile`` off by default), unless the job's kernels are
  fused. Not torchtune (specgen's torchtune rows are its README's compiled runs), not Megatron-LM (Transformer Engine's
  fused kernels), not a plain FSDP2 loop (torchtitan's rows compile), not Unsloth or Liger (Triton kernels).
- ``kbit_fp32_upcast`` (QLoRA over bitsandbytes): PEFT's ``prepare_model_for_kbit_training`` holds the
  embeddings, LM head and norms in fp32 (peft ``utils/other.py``: every fp16/bf16 parameter that is not
  ``Params4bit`` is cast to fp32). Under bf16 autocast the LM head's matmul saves its bf16 cast of the head for
  backward, and the fp32 embedding output makes the residual stream fp32 (an fp32 plus a bf16 tensor is fp32), so
  each checkpointed layer input takes 4 bytes per element, not 2 (modelled for those inputs only).
- ``inplace`` loss: the bf16 logits are materialised and the loss kernel writes their gradient in
  place (Unsloth's ``Fast_CrossEntropyLoss`` before it adopted chunked/cut cross-entropy): 2 bytes.

Sources of the defaults: torchtune recipe configs (``recipes/configs``: chunked CE since v0.3,
activation checkpointing on, offloading off, ``dtype: bf16`` with no fp32 master copy, so AdamW's moments are
bf16 too; its distributed recipes wrap the model with FSDP2 ``fully_shard``, the ZeRO-3 layout; its single-device
full fine-tune steps bitsandbytes' PagedAdamW8bit in backward: :data:`TORCHTUNE_SINGLE_DEVICE_FULL`); Unsloth README
("unsloth" gradient checkpointing, fused CE; its quick start and notebooks train with ``optim = "adamw_8bit"``,
https://github.com/unslothai/unsloth#-quickstart); Liger Kernel README (``use_liger_kernel`` / axolotl
``liger_fused_linear_cross_entropy``); Hugging Face Trainer/PEFT/TRL, LLaMA-Factory, axolotl, DeepSpeed and FSDP2
use PyTorch's cross-entropy over full logits unless Liger is enabled; Megatron-LM's vocab-parallel cross-entropy
materialises fp32 logits (``standard``).
"""

from __future__ import annotations

from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.sizing.constants import Constants
from generator.sizing.precision import lookup

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Literal

    Checkpointing = Literal["none", "selective", "full"]

LOSSES = ("standard", "chunked", "inplace", "fused")

#: Unsloth: "Unsloth currently supports multi-GPU setups through libraries like Accelerate and DeepSpeed ... the
#: process can be complex and requires manual setup" (its DDP guide launches on one machine).
UNSLOTH_MULTI_GPU_URL = "https://unsloth.ai/docs/basics/multi-gpu-training-with-unsloth"
#: How an Unsloth job over several GPUs launches: the plan's ``unsloth-multi-gpu`` / ``job-spans-hosts`` warnings and
#: ``estimate``'s fit hint say it (newuser96 item 1, fix170 item 2).
UNSLOTH_MULTI_GPU = f"Unsloth runs on several GPUs only through Accelerate or DeepSpeed, set up by hand ({UNSLOTH_MULTI_GPU_URL})"


class Recipe(NamedTuple):
    """The defaults of one of a framework's recipes that differ from its profile's (newuser25 item 3).

    A framework whose one-GPU recipe sets other defaults than its distributed one (torchtune's
    ``full_finetune_single_device`` configs against ``full_finetune_distributed``) has them here; each applies only where
    the job leaves its own field unset.
    """

    #: The recipe as the framework names it.
    name: str
    #: Optimizer regime (:data:`~generator.sizing.training.OPTIMIZERS`) where none is given.
    optimizer: str
    #: The optimizer class its configs name, for the output.
    optimizer_class: str
    #: Whether the optimizer steps inside backward where the job leaves it unset (and does not accumulate).
    optimizer_in_backward: bool
    #: Whether that optimizer's states are paged: bitsandbytes' paged optimizers "take advantage of CUDAs unified memory
    #: to transfer memory from the GPU to the CPU when GPU memory is exhausted"
    #: (https://huggingface.co/docs/bitsandbytes/v0.50.1/reference/optim/adam), outside PyTorch's allocator; sized as
    #: states in host RAM. Only with the recipe's own optimizer (a regime given by name is not paged).
    paged_optimizer: bool
    #: Where the defaults are read.
    source: str
    #: ZeRO stages it runs at (None: any): past them another engine holds the states (DeepSpeed's fp32 master copy).
    zero_stages: tuple[int, ...] | None = None
    #: Optimizer regimes its model can train in (None: any): a bf16-loaded model has no fp32 master copy to step.
    regimes: tuple[str, ...] | None = None


#: torchtune's single-device full fine-tune: ``recipes/configs/llama3_1/8B_full_single_device.yaml`` (likewise
#: llama3/8B_full_single_device, llama3_2/1B_full_single_device) sets ``optimizer: bitsandbytes.optim.PagedAdamW8bit``,
#: ``optimizer_in_bwd: True`` ("True saves memory. Requires gradient_accumulation_steps=1"),
#: ``enable_activation_checkpointing: True``, ``enable_activation_offloading: False`` and ``dtype: bf16``; its
#: distributed config (``llama3_1/8B_full.yaml``, "best to use 8B_full_single_device.yaml" for one device) keeps
#: ``torch.optim.AdamW`` over FSDP. Some models' configs differ (qwen2_5/7B_full_single_device: 32-bit
#: ``PagedAdamW``; llama3_2/1B: checkpointing off), which the job's own fields say.
TORCHTUNE_SINGLE_DEVICE_FULL = Recipe(
    name="full_finetune_single_device",
    optimizer="adamw-8bit-bf16",
    optimizer_class="bitsandbytes.optim.PagedAdamW8bit",
    optimizer_in_backward=True,
    paged_optimizer=True,
    source="https://github.com/pytorch/torchtune/blob/main/recipes/configs/llama3_1/8B_full_single_device.yaml",
)

#: axolotl's full fine-tune: ``bf16: true`` (or ``auto`` on a GPU with bf16) sets ``cfg.torch_dtype = torch.bfloat16``
#: (src/axolotl/utils/config/__init__.py ``normalize_config``) and the model loads in it
#: (src/axolotl/loaders/model.py: ``model_kwargs["torch_dtype"] = cfg.torch_dtype``): the Trainer steps bf16
#: parameters, whose gradients and AdamW states are bf16 too, with no fp32 master copy (newuser60 item 3: its
#: examples/llama-3/fft-8b.yaml, "Single GPU @ 48GB", was sized 92.7 GiB as fp32-master AMP). Its optimizer where none
#: is named is the Trainer's ``adamw_torch``; its examples name ``paged_adamw_8bit`` (a paged optimizer of its own flag).
#: At ZeRO 1-3 its runs go through DeepSpeed (its ``deepspeed_configs/zero{1,2,3}_bf16.json``), whose bf16 optimizer
#: builds an fp32 copy of each partition to step (deepspeed/runtime/zero/stage_1_and_2.py
#: ``single_partition_of_fp32_groups``; stage3.py ``fp32_partitioned_groups_flat``): the profile's mixed-precision
#: AdamW there (review40 item 1).
AXOLOTL_FULL = Recipe(
    name="bf16 full fine-tune",
    optimizer="adamw-bf16",
    optimizer_class="torch.optim.AdamW over the bf16 model",
    optimizer_in_backward=False,
    paged_optimizer=False,
    source="https://github.com/axolotl-ai-cloud/axolotl/blob/main/src/axolotl/utils/config/__init__.py",
    zero_stages=(0,),
    regimes=("adamw-bf16", "adamw-8bit-bf16"),
)

#: Chunks of torchtune's ``CEWithChunkedOutputLoss``.
CHUNKED_LOSS_CHUNKS = 8


class FrameworkProfile(NamedTuple):
    """The memory techniques a framework applies by default."""

    name: str
    description: str
    loss: str = "standard"
    activation_offload: bool = False
    optimizer_in_backward: bool = False
    fused_kernels: bool = False
    #: Whether its layers' norms, rotary embedding, gating and residual adds run as eager PyTorch operators, one pass over
    #: the activations each, where the job's kernels are not fused (:mod:`generator.sizing.training_elementwise`); the
    #: step also times the CPU launching its layers' kernels one at a time (``kernels_per_micro_batch``).
    eager_elementwise: bool = False
    #: Library behind QLoRA's NF4: ``bitsandbytes`` (Params4bit, scales in a quant_state FSDP does not shard)
    #: or ``torchao`` (torchtune's NF4Tensor, a tensor subclass FSDP2 shards scales and all).
    nf4_library: str = "bitsandbytes"
    #: Optimizer and precision regime where none is given (``adamw``: mixed precision with fp32 master weights).
    optimizer: str = "adamw"
    #: ZeRO stage its data-parallel runs shard to where none is given (None: the user's choice, no default).
    zero_stage: int | None = None
    #: Whether it splits layers tensor-parallel (Megatron-LM; torchtune's ``tensor_parallel_dim``); the Hugging Face
    #: Trainer family, Unsloth, DeepSpeed ZeRO and a plain FSDP2 loop scale by data parallelism only.
    tensor_parallel: bool = False
    #: Whether it runs the layers as pipeline stages with a micro-batch schedule (Megatron-LM); torchtune's recipes
    #: shard with FSDP2 and tensor parallelism, and the data-parallel frameworks have no pipeline schedule.
    pipeline_parallel: bool = False
    #: Whether it spreads routed experts over data-parallel ranks (Megatron-Core's expert parallelism, DeepSpeed-MoE);
    #: the Hugging Face family, Unsloth, torchtune's recipes and a plain FSDP2 loop keep every expert on every rank.
    expert_parallel: bool = False
    #: Whether a bitsandbytes base stays as PEFT's ``prepare_model_for_kbit_training`` leaves it: every 16-bit
    #: parameter that is not quantized (embeddings, LM head, norms) in fp32. The Hugging Face Trainer with PEFT's own
    #: recipe does; TRL's SFTTrainer (``peft_module_casting_to_bf16``) and axolotl (``convert_embedding_modules_dtype``)
    #: cast the embeddings and LM head back to bf16 under bf16 training; LLaMA-Factory, Unsloth, torchtune and
    #: Answer.AI's fsdp_qlora never cast them (review 13 item 1).
    kbit_fp32_upcast: bool = False
    #: Whether its parameter offload is FSDP's CPU offload, which moves the gradients and the optimizer states (the
    #: optimizer step) to the host with the parameters: FSDP's ``CPUOffload(offload_params=True)`` "implicitly enables
    #: gradient offloading to CPU in order for params and grads to be on same device to work with optimizer"
    #: (https://docs.pytorch.org/2.0/fsdp.html), FSDP2's ``CPUOffloadPolicy`` likewise; DeepSpeed's ``offload_param``
    #: leaves them to ``offload_optimizer`` (fuzz19 item 3).
    fsdp_cpu_offload: bool = False
    #: Whether it can step the optimizer inside backward: torchtune's ``optimizer_in_bwd``
    #: (``torchtune.training.register_optim_in_bwd_hooks``), or a plain FSDP2 loop with PyTorch's post-accumulate-grad
    #: hooks (https://docs.pytorch.org/tutorials/intermediate/optimizer_step_in_backward_tutorial.html). The Hugging Face
    #: Trainer family, DeepSpeed and Megatron-LM step after the whole backward (fuzz20 item 7).
    has_optimizer_in_backward: bool = False
    #: Whether its activation offload moves checkpointed layer inputs only, so that it needs checkpointing on:
    #: torchtune raises "enable_activation_offloading should only be True when enable_activation_checkpointing is True"
    #: (recipes/lora_finetune_single_device.py, full_finetune_distributed.py ``_setup_model``); Unsloth's offload is a
    #: checkpointing mode (``use_gradient_checkpointing="unsloth"``); DeepSpeed's ``cpu_checkpointing`` is part of
    #: its ``activation_checkpointing`` block (https://www.deepspeed.ai/docs/config-json/#activation-checkpointing)
    #: (fuzz20 item 11).
    offload_needs_checkpointing: bool = False
    #: Whether its attention runs FlashAttention-2's kernels: the flash-attn package (LLaMA-Factory's and axolotl's
    #: ``flash_attention_2``, Unsloth's, transformers' ``attn_implementation="flash_attention_2"``) or PyTorch SDPA's
    #: flash backend, FlashAttention-2 since PyTorch 2.2 ("scaled_dot_product_attention (SDPA) now supports
    #: FlashAttention-2", https://pytorch.org/blog/pytorch2-2/; torchtune, transformers' default ``sdpa``, a plain
    #: FSDP2 loop). Megatron-LM runs Transformer Engine's fused attention (cuDNN), whose share is not published.
    flash_attention_2: bool = True
    #: Optimizer regimes (:data:`~generator.sizing.training.OPTIMIZERS`) it trains in; None: any of them.
    regimes: tuple[str, ...] | None = None
    #: Why only :attr:`regimes`, for the refusal.
    regimes_note: str = ""
    #: Defaults of its one-GPU full fine-tune recipe where they differ from the profile's (None: the profile's apply).
    single_device_full: Recipe | None = None
    #: Defaults of its full fine-tunes at any GPU count where they differ from the profile's (None: the profile's apply;
    #: a one-GPU job takes :attr:`single_device_full` where there is one).
    full: Recipe | None = None
    #: ZeRO stages it runs (None: 0-3). Megatron-LM's distributed optimizer (``--use-distributed-optimizer``) shards the
    #: optimizer states only: "[yes] distribute all 'non-overlapping' optimizer state ... [no] distribute model
    #: gradients, [no] distribute model parameters"
    #: (https://docs.nvidia.com/megatron-core/developer-guide/latest/distrib_optimizer.html); gradient and parameter
    #: sharding is Megatron-FSDP (``--use-megatron-fsdp``), another data-parallel engine, not modelled (newuser35 item 2).
    zero_stages: tuple[int, ...] | None = None
    #: Bytes of each full fine-tune's gradient where the framework keeps its own main gradients (None: the optimizer
    #: regime's). Megatron-LM under ``--bf16`` accumulates and reduces gradients in fp32: "bfloat16 requires gradient
    #: accumulation and all-reduce to be done in fp32" sets ``accumulate_allreduce_grads_in_fp32 = True`` unless
    #: ``--grad-reduce-in-bf16`` (https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py,
    #: ``validate_args``): bf16 params with fp32 grads take 18 bytes a parameter, 6 + 12/d with the distributed
    #: optimizer (the table of the distributed-optimizer page above).
    main_grad_bytes: int | None = None
    #: How its data-parallel traffic is cut into collectives (:func:`generator.planner.training_comm.dp_calls`):
    #: ``deepspeed`` (ZeRO's reduce / prefetch buckets; torch DDP's 25 MiB buckets at ZeRO-0), ``fsdp`` (one all-gather
    #: forward, one backward and one reduce-scatter per ``fully_shard`` unit, a decoder layer), ``megatron`` (Megatron
    #: DDP's grad-buffer buckets).
    dp_collectives: str = "deepspeed"
    #: Activation checkpointing its recipes turn on where a job leaves ``gradient_checkpointing`` out (None: none by
    #: default, so the planner searches none / selective / full). torchtune's configs set
    #: ``enable_activation_checkpointing: True``; Unsloth's ``use_gradient_checkpointing="unsloth"`` is its offloaded
    #: checkpointing; TRL's ``SFTConfig`` sets ``gradient_checkpointing`` "Defaults to `True` instead of `False`"
    #: (https://github.com/huggingface/trl/blob/main/trl/trainer/sft_config.py; newuser45 item 5). The Hugging Face
    #: Trainer's ``gradient_checkpointing`` defaults to False and Megatron-LM recomputes nothing without
    #: ``--recompute-granularity`` (newuser35 item 6).
    checkpointing: str | None = None
    #: The model types (config ``model_type``) its ``loss`` applies to (None: every model); others take
    #: :attr:`other_loss`. Unsloth's fused cross-entropy is its ``FastLanguageModel``'s own model classes'
    #: (``unsloth/models/loader.py`` dispatches llama, mistral, gemma, gemma2, qwen2 and qwen3 to them); any other model
    #: goes to ``FastModel``, whose loss unsloth_zoo compiles over the logits a chunk at a time (newuser60 item 2:
    #: gpt-oss's longest context on one H100 was sized 3.3-4.4x Unsloth's published 60K / 81K tokens with the fused loss,
    #: -27% / -4% chunked).
    loss_model_types: tuple[str, ...] | None = None
    #: The loss of a model outside :attr:`loss_model_types`.
    other_loss: str = "standard"
    #: Whether its ``selective`` activation checkpointing is op-level (:mod:`generator.sizing.op_checkpointing`:
    #: torchtitan's default ``selective_ac_option = "op"``, a plain FSDP2 loop's ``create_selective_checkpoint_contexts``
    #: policy), not Megatron-LM's recomputation of the attention core (newuser60 item 1: torchtitan's Llama 3.1 8B at
    #: 82.4 GiB a GPU was sized 141.6).
    selective_ops: bool = False
    #: Whether it trains the linear layers' GEMMs in FP8 (``training.compute_precision: fp8``): Megatron-LM through
    #: Transformer Engine (``--fp8-format hybrid`` with ``--fp8-recipe delayed`` or ``tensorwise`` current scaling,
    #: ``mxfp8`` on Blackwell: https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py; NeMo and
    #: Megatron-Bridge run it, https://docs.nvidia.com/nemo/megatron-bridge/latest/performance-summary.html), and a
    #: plain FSDP2 loop through torchao's float8 training (``convert_to_float8_training``, "composable with key systems
    #: such as autograd, torch.compile and distributed", https://github.com/pytorch/ao/blob/main/torchao/float8/README.md;
    #: torchtitan's ``--model.converters="float8"`` with FSDP's float8 all-gather,
    #: https://github.com/pytorch/torchtitan/blob/main/docs/float8.md). The Hugging Face
    #: Trainer family, DeepSpeed, Unsloth and torchtune's recipes train their GEMMs in bf16.
    fp8_training: bool = False
    #: Whether its FP8 linears' scaling and casting (the amax of each input, weight and output gradient, and its cast
    #: to float8) run fused into neighbouring kernels, so they add no memory-bound passes of their own. Megatron-LM's
    #: Transformer Engine modules emit the FP8 copy from the kernel before the GEMM (``LayerNormLinear`` /
    #: ``LayerNormMLP`` fuse the norm with the cast, and its cast kernels compute the amax as they cast,
    #: https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/api/pytorch.html). torchao's dynamic
    #: tensorwise scaling (``fsdp2``, torchtitan's float8) runs an amax pass and a cast pass over each tensor, its own
    #: roofline counts them as memory traffic per linear (``get_tensor_memory_traffic_ovhd_s``,
    #: https://github.com/pytorch/ao/blob/main/torchao/testing/training/roofline_utils.py), and its README names them
    #: the ``fp8_overhead_time`` "bounded by memory bandwidth" (https://github.com/pytorch/ao/blob/main/torchao/float8/README.md).
    fp8_casts_fused: bool = False
    #: Whether it runs a mixture-of-experts model's routed experts as a Python loop over per-expert ``nn.Linear``
    #: modules: the Hugging Face Transformers 4.x MoE blocks the Trainer family trains ("notoriously slow, because it
    #: uses a for loop to access the experts", https://github.com/woct0rdho/transformers-qwen3-moe-fused; Unsloth's
    #: grouped-GEMM kernels and Transformers 5's ``torch._grouped_mm`` replace it, https://unsloth.ai/docs/basics/faster-moe;
    #: the step times Transformers 5's grouped_mm block, its launches, routing passes and grouped GEMMs' rate, where the
    #: framework is eager).
    #: Megatron-Core (``--moe-grouped-gemm``) and Unsloth run grouped GEMMs; torchtune and a plain FSDP2 loop depend on
    #: the model code they are given (not stated).
    expert_loop: bool = False
    #: Whether it trains LoRA through PEFT's layers (``peft.get_peft_model``), whose passes over the activations
    #: outside the adapters' matmuls the step counts (:mod:`generator.sizing.peft_lora`): the Hugging Face Trainer
    #: family and DeepSpeed through it. torchtune (its own ``LoRALinear``), Unsloth (fused LoRA kernels), Megatron-LM
    #: and a plain FSDP2 loop do not.
    peft_lora: bool = False
    #: Whether its attention is Transformers' default ``sdpa``, which hands PyTorch an explicit mask for a sliding-window
    #: layer whose keys reach its window (``masking_utils._ignore_causal_mask_sdpa``: no skip when ``kv_length >=
    #: local_attention_size``): SDPA cannot run its flash kernel with a mask, and its memory-efficient kernel computes
    #: the whole square of positions, twice a causal kernel's FLOPs, at ``training_masked_attention_rate`` of the flash
    #: kernel's rate (acc113). The Trainer and TRL (and DeepSpeed through the
    #: Trainer) take ``sdpa`` unless told otherwise, as LLaMA-Factory does under its default ``flash_attn: auto``
    #: (review31 item 4); axolotl's recipes name flash-attn's kernels, which take the window, and torchtune, Unsloth and
    #: Megatron-LM run kernels of their own.
    sdpa_window_masks: bool = False
    #: Whether its fused-kernel mode compiles the loss too: torchtune's ``compile: True`` passes the loss to
    #: ``training.compile_loss`` (each chunk's ``compute_cross_entropy`` of ``CEWithChunkedOutputLoss``), whose graph
    #: saves its bf16 logits for backward and never materialises their fp32 upcast
    #: (:data:`COMPILED_CHUNKED_LOGITS_BYTES_PER_ELEMENT`).
    compiles_loss: bool = False
    #: Whether its full activation checkpointing is PyTorch's non-reentrant ``torch.utils.checkpoint``, whose recompute
    #: stops "as soon as it has computed all needed Tensors" (``early_stop``, on by default:
    #: https://docs.pytorch.org/docs/stable/checkpoint.html): a block's last matmul, whose output no backward needs,
    #: never runs again (:func:`generator.sizing.op_checkpointing.early_stop_skipped_params`). Transformers 5 and TRL
    #: default ``gradient_checkpointing_kwargs`` to ``use_reentrant=False`` (huggingface/transformers#43203,
    #: huggingface/trl#4811; the Trainer family, DeepSpeed through it); a plain FSDP2 loop's ``checkpoint_wrapper``
    #: (``CheckpointImpl.NO_REENTRANT`` by default; torchtitan compiles the wrapped block, whose partitioner recomputes
    #: only what the backward reads, the same matmuls). torchtune wraps each layer so too, but its ``compile: True``
    #: (the profile's: :attr:`compiles_loss`) compiles the layer inside the wrapper (``training.compile_model``: each
    #: ``TransformerSelfAttentionLayer.compile()``), one autograd node that saves its tensors after its whole forward,
    #: so the recompute runs it all: its flag table's checkpointing costs 9,174 -> 7,210 tokens/s (0.786), the whole
    #: layer's recompute predicts 0.771, without the last matmul 0.816. LLaMA-Factory (``use_reentrant_gc: true``),
    #: Unsloth's offloaded checkpointing and Megatron-LM's recompute rerun the whole block; axolotl's default is not
    #: stated here.
    checkpoint_stops_early: bool = False


#: torchtune trains ``dtype: bf16`` (or fp32) with no fp32 master copy and no autocast (recipes/configs; its
#: ``training.get_dtype`` takes bf16 or fp32 only): AdamW in bf16, or bitsandbytes' 8-bit AdamW over bf16 (fuzz20 item 18).
TORCHTUNE_REGIMES = ("adamw-bf16", "adamw-8bit-bf16")
#: Megatron-LM's ``--optimizer`` takes adam or sgd (megatron/training/arguments.py, newer releases add Muon), over fp32
#: main parameters under ``--bf16``: neither bitsandbytes' 8-bit AdamW nor Adafactor (fuzz20 item 18).
MEGATRON_REGIMES = ("adamw", "sgd")


#: The model types Unsloth's ``FastLanguageModel`` runs through model classes of its own (fused cross-entropy, Triton
#: kernels): https://github.com/unslothai/unsloth/blob/main/unsloth/models/loader.py (``qwen3_moe`` is commented out
#: there, and goes to ``FastModel`` with every other type).
UNSLOTH_OWN_MODEL_TYPES = ("llama", "mistral", "gemma", "gemma2", "qwen2", "qwen3")


FRAMEWORKS: dict[str, FrameworkProfile] = {
    f.name: f
    for f in (
        FrameworkProfile(
            "hf",
            "Hugging Face Trainer / PEFT",
            eager_elementwise=True,
            kbit_fp32_upcast=True,
            expert_loop=True,
            peft_lora=True,
            sdpa_window_masks=True,
            checkpoint_stops_early=True,
        ),
        FrameworkProfile(
            "trl",
            "TRL SFTTrainer (Hugging Face Trainer underneath)",
            eager_elementwise=True,
            expert_loop=True,
            peft_lora=True,
            sdpa_window_masks=True,
            checkpointing="full",
            checkpoint_stops_early=True,
        ),
        FrameworkProfile(
            "trl+liger",
            "TRL with use_liger_kernel=True",
            loss="fused",
            fused_kernels=True,
            expert_loop=True,
            peft_lora=True,
            sdpa_window_masks=True,
            checkpointing="full",
            checkpoint_stops_early=True,
        ),
        FrameworkProfile(
            "torchtune",
            "torchtune recipes (CEWithChunkedOutputLoss, pure bf16 weights and AdamW states, FSDP2 full sharding)",
            loss="chunked",
            nf4_library="torchao",
            optimizer="adamw-bf16",
            zero_stage=3,
            tensor_parallel=True,
            fsdp_cpu_offload=True,
            dp_collectives="fsdp",
            has_optimizer_in_backward=True,
            offload_needs_checkpointing=True,
            checkpointing="full",
            regimes=TORCHTUNE_REGIMES,
            regimes_note="it trains pure bf16 weights and states, with no fp32 master copy or autocast",
            single_device_full=TORCHTUNE_SINGLE_DEVICE_FULL,
            compiles_loss=True,
        ),
        FrameworkProfile(
            "unsloth",
            "Unsloth (fused CE, 'unsloth' offloaded gradient checkpointing, Triton kernels, 8-bit AdamW)",
            "fused",
            True,
            fused_kernels=True,
            optimizer="adamw-8bit",
            offload_needs_checkpointing=True,
            checkpointing="full",
            loss_model_types=UNSLOTH_OWN_MODEL_TYPES,
            other_loss="chunked",
        ),
        FrameworkProfile(
            "axolotl",
            "axolotl without Liger",
            eager_elementwise=True,
            expert_loop=True,
            peft_lora=True,
            full=AXOLOTL_FULL,
        ),
        FrameworkProfile(
            "axolotl+liger",
            "axolotl with the Liger plugin (fused linear cross-entropy)",
            loss="fused",
            fused_kernels=True,
            expert_loop=True,
            peft_lora=True,
            full=AXOLOTL_FULL,
        ),
        FrameworkProfile(
            "llama-factory",
            "LLaMA-Factory (Hugging Face Trainer)",
            eager_elementwise=True,
            expert_loop=True,
            peft_lora=True,
            sdpa_window_masks=True,
        ),
        FrameworkProfile(
            "deepspeed",
            "DeepSpeed ZeRO through the Hugging Face Trainer",
            eager_elementwise=True,
            expert_parallel=True,
            offload_needs_checkpointing=True,
            expert_loop=True,
            peft_lora=True,
            sdpa_window_masks=True,
            checkpoint_stops_early=True,
        ),
        FrameworkProfile(
            "fsdp2",
            "PyTorch FSDP2 (fully_shard) with a plain training loop",
            zero_stage=3,
            fsdp_cpu_offload=True,
            dp_collectives="fsdp",
            has_optimizer_in_backward=True,
            selective_ops=True,
            fp8_training=True,
            checkpoint_stops_early=True,
        ),
        FrameworkProfile(
            "megatron",
            "Megatron-LM (vocab-parallel cross-entropy over fp32 logits)",
            tensor_parallel=True,
            pipeline_parallel=True,
            expert_parallel=True,
            flash_attention_2=False,
            regimes=MEGATRON_REGIMES,
            regimes_note="its --optimizer is adam or sgd over fp32 main parameters",
            zero_stages=(0, 1),
            main_grad_bytes=4,
            dp_collectives="megatron",
            fp8_training=True,
            fp8_casts_fused=True,
        ),
    )
}

#: Other names users write.
FRAMEWORK_ALIASES: dict[str, str] = {
    "peft": "hf",
    "transformers": "hf",
    "hf-trainer": "hf",
    "liger": "trl+liger",
    "fsdp": "fsdp2",
    "llamafactory": "llama-factory",
    "megatron-lm": "megatron",
}


def framework_profile(name: str) -> FrameworkProfile:
    """Look up a framework by name; raises :class:`InputError` listing the choices."""
    return lookup(FRAMEWORKS, name, "framework", FRAMEWORK_ALIASES)


#: Activation checkpointing levels, least recompute first: the order a job that gives none is sized at, by the planner
#: (:func:`generator.planner.training.checkpointing_levels`) and the estimate
#: (:mod:`generator.calculator.lighter_checkpointing`) alike.
CHECKPOINTING_LEVELS: tuple[Checkpointing, ...] = ("none", "selective", "full")


def own_checkpointing_levels(framework: str | None) -> tuple[Checkpointing, ...] | None:
    """The framework's own level, alone, where its recipes set one (torchtune, Unsloth: full); None: left to the job."""
    own = framework_profile(framework).checkpointing if framework else None
    return None if own is None else tuple(level for level in CHECKPOINTING_LEVELS if level == own)


#: Why QLoRA scales by data parallelism only, whatever the framework (newuser22 item 6).
QLORA_DATA_PARALLEL_ONLY = (
    "QLoRA scales by data parallelism only: no QLoRA stack splits its 4-bit layers (PEFT's bitsandbytes NF4 layers "
    "under hf, trl, unsloth, axolotl, llama-factory and deepspeed, and torchtune's NF4 tensors are sharded by "
    "ZeRO-3 / FSDP, never tensor- or pipeline-parallel; megatron loads no 4-bit base)"
)


#: What a model with a vision tower dispatches as (:func:`default_loss`): Unsloth's loader reads the config's top-level
#: ``model_type`` (``llava``, ``gemma3``, ``qwen2_5_vl``), none of its own text classes.
VISION_LANGUAGE = "vision-language"


def default_loss(profile: FrameworkProfile, model_type: str | None, method: str = "lora", base: str = "bf16") -> str:
    """The loss ``profile`` runs a job with where none is given (:attr:`FrameworkProfile.loss_model_types`).

    Unsloth's ``FastLanguageModel.from_pretrained`` hands a full fine-tune and an 8-bit base to ``FastModel`` before it
    dispatches on the model type (``if load_in_8bit or full_finetuning ...: return FastModel.from_pretrained``,
    unsloth/models/loader.py; review40 item 4): those take :attr:`FrameworkProfile.other_loss` too. ``base``: the
    frozen base's format (``int8``: bitsandbytes' 8-bit).
    """
    own = profile.loss_model_types
    if own is None or (model_type in own and method != "full" and base != "int8"):
        return profile.loss
    return profile.other_loss


def checkpoint_stops_early(framework: str | None, checkpointing: str) -> bool:
    """Whether ``checkpointing`` is full under a framework whose recompute stops early.

    :attr:`FrameworkProfile.checkpoint_stops_early`: PyTorch's non-reentrant checkpoint.
    """
    return checkpointing == "full" and framework is not None and framework_profile(framework).checkpoint_stops_early


def recomputes_ops(framework: str | None, checkpointing: str) -> bool:
    """Whether ``checkpointing`` under ``framework`` recomputes ops selectively (:attr:`FrameworkProfile.selective_ops`)."""
    return checkpointing == "selective" and framework is not None and framework_profile(framework).selective_ops


def data_parallel_only(framework: str | None, method: str) -> bool:
    """Whether a training job never splits a layer or runs a pipeline: QLoRA always, else its framework's profile.

    With no framework a full or LoRA job may take any layout (Megatron-LM's); a QLoRA job may not, since no framework
    that loads a 4-bit base splits it.
    """
    if method == "qlora":
        return True
    profile = framework_profile(framework) if framework else None
    return profile is not None and not profile.tensor_parallel


def layout_refusal(name: str | None, tp: int, pp: int, ep: int, method: str = "full") -> tuple[str, str] | None:
    """The degree (``tp``, ``pp`` or ``ep``) a job cannot run and why; None where it runs all three.

    One statement for the estimate's flags and the workload's pins (review 14 item 10); the planner's search tries only
    the degrees a profile runs. A pipeline is refused for what specgen's profile runs, not for the library (fuzz15
    item 7: DeepSpeed has a pipeline engine, which the Hugging Face Trainer integration does not use and which takes
    ZeRO-1 at most). QLoRA (``method``) is refused a TP or PP above 1 with or without a framework
    (:data:`QLORA_DATA_PARALLEL_ONLY`), before the framework's own refusal: no framework runs it split, so pointing
    to one that splits layers would be wrong (fuzz19 item 4).
    """
    if method == "qlora" and (tp > 1 or pp > 1):
        return ("tp" if tp > 1 else "pp"), QLORA_DATA_PARALLEL_ONLY
    if name is not None:
        profile = framework_profile(name)
        if tp > 1 and not profile.tensor_parallel:
            return "tp", f"{name} scales by data parallelism only (it does not split layers)"
        if pp > 1 and not profile.pipeline_parallel:
            return "pp", f"{name} as specgen models it ({profile.description}) runs no pipeline schedule"
        if ep > 1 and not profile.expert_parallel:
            return "ep", f"{name} keeps every expert on every rank (no expert parallelism)"
    return None


def frameworks_running(tp: int, pp: int, method: str) -> list[str]:
    """The frameworks that run a job split ``tp`` x ``pp`` (:func:`layout_refusal`), in the catalog's order."""
    return [name for name in FRAMEWORKS if layout_refusal(name, tp, pp, 1, method) is None]


def logits_bytes_per_element(loss: str, standard_bytes: int) -> float:
    """Bytes per (token x vocab) element a loss keeps at its peak."""
    if loss == "standard":
        return float(standard_bytes)
    if loss == "chunked":
        # bf16 logits of every chunk stay for backward; the fp32 upcast and log-softmax of one chunk at a time
        return 2.0 + (standard_bytes - 2.0) / CHUNKED_LOSS_CHUNKS
    if loss == "inplace":
        return 2.0
    if loss == "fused":
        return 0.0
    raise InputError(f"unknown loss '{loss}'; choose one of {', '.join(LOSSES)}")


#: What specgen's own runs of the Hugging Face Trainer measured against this step (newuser45 item 3: the README said
#: it, the estimate did not): benchmarks/CALIBRATION.md, 2026-12-04 H200 entry, 40 dense runs; the figures since the
#: step counts the Trainer's eager operators (acc107 entry; 15% (-7% to +65%) and 34% (+16% to +68%) before) and the
#: CPU's launches of their kernels (acc111 entry; 1% (-17% to +44%) and 14% (-3% to +38%) before), and since the step
#: counts Gemma's and Qwen3's extra norms, the loss's passes over the logits and SDPA's masked window kernel (acc113
#: entry; 2% faster (-17% to +35%) and 8% (-3% to +38%) before), and since fix126 set each phase's launches against
#: that phase's GPU work (session 42 merge; -7% to +27% without checkpointing before: the forward's launches of
#: Llama 3.1 8B LoRA s2048 now show beyond its forward's GPU work, -2.2% -> -7.8%; acc121's one stream synced at the
#: micro-batch's end, the Trainer's own sync, moved none of these rows), from the calibration report's dense
#: H200 Trainer rows by checkpointing (predicted / measured - 1).
TRAINER_SPEED_NOTE = (
    "specgen's own Hugging Face Trainer runs on one H200 (40 dense models and settings, benchmarks/CALIBRATION.md, "
    "2026-12-04) ran at this step's speed with full checkpointing (median 2% faster, 17% faster to 11% slower) and "
    "slower without it (median 5%, -8% to +27%); leave that margin on a deadline"
)

#: How specgen's figures for torchtune's LoRA and QLoRA recipes compare with torchtune's own published rows (newuser54
#: item 5: nothing said so where the estimate was 36% over the README's QLoRA memory and 25-31% under its speed):
#: benchmarks/CALIBRATION.md, the memory and training-throughput torchtune groups (a test checks the ranges against
#: the rows).
TORCHTUNE_ADAPTER_NOTE = (
    "against torchtune's own published runs of its LoRA and QLoRA recipes (benchmarks/CALIBRATION.md), specgen's memory "
    "was 3-17% over on its Llama 3.x rows (3B and 8B, one GPU) and 10-34% under on its older Llama 2 7B rows, and its "
    "tokens/s from 0% to 46% under (most on the RTX 4090 and RTX A6000, compiled); its Llama 3.x full fine-tunes are within 9% "
    "of memory"
)

#: The most the reserved peak of specgen's own full fine-tunes exceeded the estimate (newuser45 item 1), and what they
#: measured: benchmarks/CALIBRATION.md, 2026-12-04 H200 entry, the 12 full runs (tests check both against the rows).
FULL_FINETUNE_RESERVED_OVER = 0.092
FULL_FINETUNE_RESERVED_NOTE = (
    "specgen's own full fine-tunes under the Hugging Face Trainer on one H200 (12 runs, benchmarks/CALIBRATION.md, "
    "2026-12-04) reserved more GPU memory than estimated in 9 of them, by up to 9.2% (the median of all 12: 5.3%), "
    "PyTorch's caching allocator holding up to 11.5 GB beyond what they allocated, more than the logits' share the "
    "estimate reserves"
)

#: The line a full fine-tune's reserved peak is held against: the GPU's memory less the default planning margin.
RESERVE_LINE_FRACTION = 1 - Constants._field_defaults["safety_margin_fraction"]


def reserve_short(method: str, per_gpu_bytes: float, gpu_memory_bytes: float) -> bool:
    """Whether a full fine-tune of ``per_gpu_bytes`` estimated a GPU is short of headroom under the 95% line.

    Its reserved peak, up to :data:`FULL_FINETUNE_RESERVED_OVER` over the estimate, could pass the line.
    """
    return method == "full" and per_gpu_bytes * (1 + FULL_FINETUNE_RESERVED_OVER) > gpu_memory_bytes * RESERVE_LINE_FRACTION


#: Bytes per (token x vocab) element a compiled chunked loss holds at its peak (:attr:`FrameworkProfile.compiles_loss`):
#: each chunk's graph saves the bf16 logits it takes (2 bytes) and fuses the fp32 upcast and log-softmax into its
#: reductions; its backward emits one chunk's bf16 gradient at a time.
COMPILED_CHUNKED_LOGITS_BYTES_PER_ELEMENT = 2.0 + 2.0 / CHUNKED_LOSS_CHUNKS


def compiles_loss(framework: str | None, fused_kernels: bool, loss: str) -> bool:
    """Whether a job's loss runs compiled in bf16 chunks.

    Its framework compiles the loss with the model (``fused_kernels``: torchtune's ``compile: True``) and the loss is
    chunked (torchtune's unchunked output is upcast to fp32 before its loss, ``self.output(h).float()``, so the fp32
    logits exist there as in eager).
    """
    compiled = framework is not None and framework_profile(framework).compiles_loss
    return compiled and fused_kernels and loss == "chunked"


def fp32_logits_share(loss: str) -> float:
    """Share of the whole fp32 (token x vocab) logits a loss materialises at once.

    All of them for the standard loss, one chunk's for a chunked one, none where the logits stay in bf16 (``inplace``)
    or never form (``fused``).
    """
    return {"standard": 1.0, "chunked": 1.0 / CHUNKED_LOSS_CHUNKS, "inplace": 0.0, "fused": 0.0}[loss]


def job_recipe(
    framework: str | None, method: str, gpus: int | None, zero_stage: int = 0, offload_params: bool = False
) -> Recipe | None:
    """The recipe whose defaults a job takes beside its framework's profile; None where the profile's apply.

    ``gpus`` counts every GPU of the job (TP x PP x DP; None: not known yet): a full fine-tune on one GPU runs the
    framework's single-device recipe (torchtune's ``full_finetune_single_device``), one on more its distributed recipe; a
    framework whose full fine-tunes differ from its profile at any count (axolotl's bf16 model) has
    :attr:`FrameworkProfile.full`, at the ZeRO stages it runs at (``zero_stage``: the job's).

    ``offload_params``: a job whose parameters FSDP offloads to the CPU (:attr:`FrameworkProfile.fsdp_cpu_offload`) runs
    the distributed recipe on one GPU too: torchtune's ``fsdp_cpu_offload`` is ``full_finetune_distributed``'s, which
    "can be run on a single node (1 to 8 GPUs)"; its single-device recipe wraps no FSDP (newuser76 item 15: the
    single-device recipe's paged optimizer was sized beside the offload, a pair no recipe runs, and refused).
    """
    if framework is None or method != "full":
        return None
    profile = framework_profile(framework)
    fsdp_offload = offload_params and profile.fsdp_cpu_offload
    if gpus == 1 and profile.single_device_full is not None and not fsdp_offload:
        return profile.single_device_full
    full = profile.full
    return full if full is not None and (full.zero_stages is None or zero_stage in full.zero_stages) else None


def resolved_regime(
    framework: str | None, optimizer: str | None, zero_stage: int | None, data_parallel: int, recipe: Recipe | None = None
) -> tuple[str, int]:
    """(optimizer, ZeRO stage) of a job: those given, else its recipe's or framework's defaults (a stage only when data-parallel).

    An optimizer regime its framework has not is refused here, where the estimate and the planner resolve it (a
    workload's is refused at its field first).
    """
    profile = framework_profile(framework) if framework else None
    if why := regime_refusal(profile, optimizer) or recipe_regime_refusal(profile, recipe, optimizer):
        raise InputError(why)
    chosen = optimizer or (recipe.optimizer if recipe else profile.optimizer if profile else "adamw")
    if zero_stage is not None:
        return chosen, zero_stage
    return chosen, (profile.zero_stage or 0) if profile and data_parallel > 1 else 0


def recipe_regime_refusal(profile: FrameworkProfile | None, recipe: Recipe | None, optimizer: str | None) -> str | None:
    """Why a job's recipe cannot train in the regime ``optimizer`` (review40 item 7); None where it can or none is given.

    axolotl's bf16 full fine-tune at ZeRO-0 has no fp32 master copy, so a mixed-precision regime would size one it
    never holds.
    """
    if profile is None or recipe is None or optimizer is None or recipe.regimes is None or optimizer in recipe.regimes:
        return None
    return (
        f"{profile.name}'s {recipe.name} trains the model as it loads it, with no fp32 master copy: give one of "
        f"{', '.join(recipe.regimes)} (its paged_adamw_8bit is adamw-8bit-bf16 with paged_optimizer), or leave "
        "optimizer out"
    )


def regime_refusal(profile: FrameworkProfile | None, optimizer: str | None) -> str | None:
    """Why a framework cannot train in the optimizer regime ``optimizer``; None where it can (or either is not given)."""
    if profile is None or optimizer is None or profile.regimes is None or optimizer in profile.regimes:
        return None
    return (
        f"{profile.name} has no '{optimizer}' regime ({profile.regimes_note}): give one of "
        f"{', '.join(profile.regimes)}, or leave optimizer out"
    )
