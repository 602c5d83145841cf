"""Model FLOPs utilization of a training step: a small model of its own, not one constant.

MFU here is ``6 N`` (``4 N`` for adapters) FLOPs per token over the GPU's dense peak, the way the
Llama 3 paper and Megatron-LM report it. It is the product of:

- **GEMM size and memory-bound operators**: the largest GEMM dimension of a layer is the hidden size; small hidden
  sizes keep tensor cores below their peak, and the step's norms, activations and residual adds move bytes per token
  in proportion to the hidden size against GEMM FLOPs in its square: ``hidden / (hidden + training_gemm_half_hidden x
  operator_bytes_scale)`` of ``training_mfu`` (the utilization of very large GEMMs). ``operator_bytes_scale`` is the
  GPU's sustained FLOPs per byte of HBM over the reference GPU's (the H100 SXM the constant is fitted on), so a GPU
  with more bandwidth per FLOP loses less of its step to those operators (an A100 SXM4 80GB 0.60 of the H100's:
  llm-foundry's A100 table loses less from its 7B to its 760M model at 2,048 tokens, 11.5%, than its H100 table, 18-25%;
  "Data Movement Is All You Need", https://arxiv.org/abs/2007.00072, finds a transformer's training step bound by
  such data movement, its normalizations and element-wise operators, not its GEMMs);
- **attention share**: causal attention adds ``6 L w s`` FLOPs per token (scores and values,
  forward and backward, half the square masked; ``8 L w s`` when full checkpointing recomputes the forward; ``w`` the
  attention's width, ``heads x head_dim``, which is not the hidden size in every model) that
  ``6 N`` does not count, whatever the method (a LoRA backward still computes the attention's input gradients:
  only the frozen weights' gradients are skipped), run by FlashAttention
  kernels at ``training_attention_mfu`` of the peak (below the GEMMs' rate at long sequences), fitted on
  Hopper; on another architecture scaled by FlashAttention-2's published share of its peak against
  Hopper's (:func:`attention_kernel_scale`). That fitted rate is the MPT rows' kernel (llm-foundry's pretraining
  yamls set ``attn_impl: triton``, its Triton FlashAttention); a framework that runs FlashAttention-2 itself (the
  flash-attn package, or PyTorch SDPA's flash backend, FlashAttention-2 since PyTorch 2.2) runs attention at
  FlashAttention-2's published share of the peak where one is published (:func:`flash_attention_2_share`): the
  fine-tuning rows' long sequences (Unsloth, LLaMA-Factory with FlashAttention-2 on A100) imply 51-70% of the A100's
  peak for their attention, the 50-73% FlashAttention-2 publishes, where the Triton kernel's fitted rate gave 23%;
- **tensor parallelism**: four all-reduces of a token's hidden state per layer (two forward, two
  backward) over the GPU's link, of which ``training_tp_exposed_fraction`` is not overlapped;
- **pipeline bubble**: ``(pp - 1) / (v microbatches + pp - 1)`` of the step is idle (``v``:
  ``training_pipeline_virtual_stages``);

Data parallelism is no factor here: the step (:func:`generator.sizing.training_step.training_step`) times the DP /
ZeRO traffic over its link and exposes what the compute cannot hide (:attr:`StepTime.dp_exposed_s
<generator.sizing.training_step.StepTime.dp_exposed_s>`). A ``training_dp_exposed_fraction`` of that traffic (0.5) was
a factor here that no caller fed (newuser70 item 3); exposing that share of ZeRO-2/3's traffic in the step makes every
FSDP MFU group worse, so it was removed rather than wired (benchmarks/CALIBRATION.md, newuser70 entry).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.sizing.architecture import EXPERT, Architecture
from generator.sizing.constants import Constants
from generator.sizing.frameworks import framework_profile
from generator.sizing.linear_attention import layer_state_flops
from generator.sizing.memo import memoized
from generator.sizing.performance import causal_pairs_per_token, layer_prompt_pair_flops
from generator.sizing.pipeline_schedule import pipeline_bubble_fraction as pipeline_bubble
from generator.sizing.pipeline_schedule import virtual_stages_for

#: Bytes per activation element on a tensor-parallel wire (bf16).
TP_WIRE_BYTES = 2
#: All-reduces of the hidden state per layer and token in a training step (Megatron: 2 forward + 2 backward).
TP_ALLREDUCES_PER_LAYER = 4
#: Dense FLOPs per token of one layer's weights per parameter in forward + backward.
FLOPS_PER_PARAM = 6.0
#: Causal attention FLOPs per token, layer, unit of attention width (heads x head_dim) and sequence position: forward
#: 2 (scores and values, half the square masked), backward 4 (twice the forward: the gradients of the queries, keys
#: and values).
ATTENTION_FLOPS_FORWARD = 2.0
ATTENTION_FLOPS_BACKWARD = 4.0


#: FlashAttention-2's share of the dense peak by GPU architecture: "50-73% of the theoretical maximum FLOPs/s on
#: A100" (FlashAttention-2, https://arxiv.org/abs/2307.08691, abstract; taken for every Ampere GPU: none is published
#: for GA10x) and "only 35% utilization on H100" (FlashAttention-3, https://arxiv.org/abs/2407.08608, abstract). The
#: A100's 0.65 is fitted within that published range over every group it moves at once (the eleven Ampere training
#: groups of benchmarks/CALIBRATION.md, thirty-third entry: the sum of their median and p90 |error| 4.19 at the range's
#: low end, 3.88 at 0.60, 3.86 at 0.65, 3.89 at 0.70); the range's ends bound it, no group's figure is fitted apart.
FLASH_ATTENTION_PEAK_FRACTION = {"ampere": 0.65, "hopper": 0.35}
#: The architecture ``training_attention_mfu`` is fitted on: the llm-foundry and Llama 3 MFU rows ran on H100.
ATTENTION_FITTED_ON = "hopper"


def flash_attention_2_share(architecture: str, peak_over_sustained: float) -> float | None:
    """FlashAttention-2's published share of ``architecture``'s dense peak, as a share of the rate the step runs at.

    The step runs at the GPU's sustained rate (:meth:`~generator.catalog.records.GpuSpec.sustained_tflops`);
    ``peak_over_sustained`` turns a share of the datasheet peak into one of it. None where no share is published.
    """
    fraction = FLASH_ATTENTION_PEAK_FRACTION.get(architecture)
    return fraction * peak_over_sustained if fraction else None


#: Model types whose attention adds a learned sink logit a head to the softmax (:func:`attention_layer_equivalents`).
SINK_MODEL_TYPES = ("gpt_oss",)


#: Frameworks whose attention runs Transformer Engine's fused (cuDNN) kernels: Megatron-LM / Megatron-Core, and the
#: Megatron-Bridge and NeMo recipes built on it (``TransformerEngine``'s ``DotProductAttention``, FusedAttention backend).
CUDNN_ATTENTION_FRAMEWORKS = ("megatron",)
#: The architecture whose FlashAttention-2 share stands for cuDNN's on an architecture with none published: cuDNN's
#: SDPA supports Blackwell (B200 / B300) with the same algorithm (its support matrix), FlashAttention-2 publishes no
#: Blackwell figure, and the engine already takes Hopper's attention rate where none is published
#: (:func:`attention_kernel_scale`).
CUDNN_ATTENTION_FALLBACK = "hopper"


def cudnn_attention_share(
    framework: str | None, architecture: str, peak_over_sustained: float, model_type: str | None = None
) -> float | None:
    """The attention kernels' share of the step's rate under a framework that runs Transformer Engine's cuDNN attention.

    cuDNN's scaled-dot-product attention computes "using the FlashAttention-2 algorithm as described in the paper
    FlashAttention-2" (https://docs.nvidia.com/deeplearning/cudnn/frontend/latest/operations/Attention.html, its
    support matrix Ampere to Blackwell B200 / B300), so it runs at FlashAttention-2's published share of the peak
    (:data:`FLASH_ATTENTION_PEAK_FRACTION`; Hopper's on an architecture with none published,
    :data:`CUDNN_ATTENTION_FALLBACK`), not the llm-foundry Triton kernel's fitted ``training_attention_mfu``: the
    Megatron-Bridge FP8 Llama 3 rows at 8,192 tokens, whose attention is a fifth of the step at the fitted rate, are
    under-predicted by 18-31% on every GPU without it (benchmarks/CALIBRATION.md, issue 9 entry).

    None (the fitted rate) for any other framework, and for a model with attention sinks
    (:data:`SINK_MODEL_TYPES`): Transformer Engine's FusedAttention takes sinks only from cuDNN 9.13.1 (BSHD / SBHD;
    packed THD from 9.18) and otherwise falls back to its unfused attention
    (https://github.com/NVIDIA/TransformerEngine/pull/2148, https://github.com/NVIDIA/TransformerEngine/issues/2318).
    The Megatron-Bridge perf summary's containers meet that gate (25.11's NeMo image ships cuDNN 9.13.1,
    https://github.com/NVIDIA-NeMo/RL/issues/1685; 26.02 moved to 9.18, Megatron-Bridge issues 1724 / 2340), so its
    gpt-oss rows run fused sinks: the fitted rate kept here stands below an unmodelled gpt-oss residual, which the
    cuDNN share would widen by 8-32 points (benchmarks/CALIBRATION.md, acc145 entry), not for the unfused fallback.

    The fallback's share is of the sustained rate, not the peak (acc138): Hopper's was measured on an H100, the
    catalog's reference GPU, so it is a share of a GPU running at the reference's own share of its peak; a Blackwell
    part measured to sustain less of its peak (the GB200's 1,822 of 2,500 BF16 TFLOPS against the H100's 794.5 of 989,
    stas00/ml-engineering's MAMF table) runs its attention at that clock too, which the sustained rate already carries.
    An architecture's own published share (measured on that architecture) stays a share of its peak.
    """
    if framework not in CUDNN_ATTENTION_FRAMEWORKS or model_type in SINK_MODEL_TYPES:
        return None
    fraction = FLASH_ATTENTION_PEAK_FRACTION.get(architecture)
    if fraction is None and architecture == "blackwell":
        return FLASH_ATTENTION_PEAK_FRACTION[CUDNN_ATTENTION_FALLBACK]
    return fraction * peak_over_sustained if fraction else None


def attention_kernel_scale(architecture: str) -> float:
    """The factor on ``training_attention_mfu`` that attention kernels reach on ``architecture``.

    FlashAttention-2's share of that architecture's peak over its share of Hopper's; 1 where none is published.
    """
    fraction = FLASH_ATTENTION_PEAK_FRACTION.get(architecture)
    return fraction / FLASH_ATTENTION_PEAK_FRACTION[ATTENTION_FITTED_ON] if fraction else 1.0


@dataclass(frozen=True)
class TrainingUtilisation:
    """The modelled MFU and the factors it is made of (each in (0, 1]; ``gemm`` above 1 where FP8 GEMMs outrun bf16's peak)."""

    gemm: float
    attention: float
    tensor_parallel: float
    pipeline: float
    peak: float

    @property
    def compute(self) -> float:
        """The compute ceiling before communication: large-GEMM MFU x GEMM size x the attention share."""
        return self.peak * self.gemm * self.attention

    @property
    def mfu(self) -> float:
        """Model FLOPs per second over the dense peak, before the data-parallel traffic (timed by the step)."""
        return self.compute * self.tensor_parallel * self.pipeline


def training_utilisation(
    hidden_size: int,
    num_layers: int,
    flop_params: int,
    sequence_length: int,
    consts: Constants,
    *,
    tp: int = 1,
    pp: int = 1,
    microbatches: int = 1,
    tp_link_gbps: float = 0.0,
    dense_tflops: float = 0.0,
    attention_scale: float = 1.0,
    gemm_flops_per_param: float = FLOPS_PER_PARAM,
    recompute: bool = False,
    attention_mfu: float | None = None,
    operator_bytes_scale: float = 1.0,
    attention_layers: float | None = None,
    attention_width: float | None = None,
    gemm_rate_ratio: float = 1.0,
    fp8_gemm_share: float = 1.0,
    cast_bytes_per_token: float = 0.0,
    flops_per_byte: float = 0.0,
) -> TrainingUtilisation:
    """The MFU of one layout; every argument is a plain number, so calls are cheap and hashable.

    ``attention_scale``: :func:`attention_kernel_scale` of the GPU's architecture. ``gemm_flops_per_param``: the
    step's weight-GEMM FLOPs per parameter and token (6 full, 4 with a frozen base, up to 2 more under full
    checkpointing, which recomputes the decoder blocks and not the LM head:
    :func:`generator.sizing.performance.training_flops_per_token` over N), the work the attention share is set
    against; ``recompute``: full checkpointing reruns the forward, its attention included. The defaults (6, no
    recompute) give a full step's share; a caller scaling that ceiling by the step's own FLOPs per token counts a full
    step's recomputed attention in proportion (8 N / 6 N), but would count a LoRA step's attention at 4/6 of its
    FLOPs (its backward still computes the attention's input gradients). ``attention_mfu``: the attention kernels'
    share of the rate where the framework's kernel has a published one (:func:`flash_attention_2_share`); None: the
    fitted ``training_attention_mfu`` x ``attention_scale``. ``operator_bytes_scale``: the GPU's sustained FLOPs per
    byte over the reference GPU's (:func:`generator.planner.training.operator_bytes_scale`), the factor on
    ``training_gemm_half_hidden``; 1 on the reference. ``attention_layers``: the step's attention work in full causal
    layers (:func:`attention_layer_equivalents`: a sliding-window layer's kernel skipping the keys outside its window,
    a masked one computing the whole square, a linear-attention layer's recurrence); None: ``num_layers`` of them.
    ``attention_width``: the width the attention's QK^T and PV run at
    (:func:`generator.sizing.performance.training_attention_width`, ``heads x head_dim``); None: ``hidden_size``, a
    model whose heads span it. ``gemm_rate_ratio``: the linear layers' GEMM rate over the bf16 rate the step is timed
    at (:func:`linear_gemm_rate_ratio`: the GPU's dense FP8 rate over its dense bf16 rate under FP8 training, 1 in
    bf16): it divides the GEMMs' share of the GEMM-size term and nothing else, so the memory-bound operators
    (``training_gemm_half_hidden``), attention and communication keep their bf16 time, and ``training_mfu`` is the same
    large-GEMM efficiency at either rate (no constant of its own). ``fp8_gemm_share``: the share of the weight-GEMM
    FLOPs that runs at that ratio (:func:`fp8_gemm_share`: the decoder blocks' linears; the LM head stays bf16 under
    both frameworks), the rest at bf16's. ``cast_bytes_per_token``: the bytes an FP8 framework's own scaling and
    casting passes move per token where they are not fused into neighbouring kernels (:func:`fp8_cast_bytes_per_token`;
    0 where they are), timed at the GPU's HBM rate: ``flops_per_byte`` is its sustained FLOPs per byte of HBM, so the
    passes cost ``cast_bytes_per_token x flops_per_byte`` FLOPs of the step's time at its rate.
    """
    # the GEMM-size term: time per GEMM FLOP at the bf16 peak, the GEMMs' own (1 / ratio for the FP8 share) and the
    # memory-bound operators' beside them; ``gemm`` > 1 where the GEMMs run faster than bf16's peak (FP8 training)
    own = fp8_gemm_share / gemm_rate_ratio + (1.0 - fp8_gemm_share)
    gemm = hidden_size / (hidden_size * own + consts.training_gemm_half_hidden * operator_bytes_scale)
    gemm_flops = gemm_flops_per_param * max(1, flop_params)
    if cast_bytes_per_token > 0 and flops_per_byte > 0:
        # the FP8 casts' memory-bound passes: their bytes at the HBM rate, as FLOPs of time at the step's rate, beside
        # the GEMMs' (folded into ``gemm`` so the TP term sees the same per-FLOP rate)
        cast_time = cast_bytes_per_token * flops_per_byte
        gemm = gemm_flops / (gemm_flops / gemm + consts.training_mfu * cast_time)
    # each term as its time per token in FLOPs at the peak: GEMMs at training_mfu x gemm, attention kernels at their
    # own fraction of it
    gemm_time = gemm_flops / (consts.training_mfu * gemm)
    if attention_mfu is None:
        attention_mfu = consts.training_attention_mfu * attention_scale
    if attention_layers is None:
        attention_layers = num_layers
    width = hidden_size if attention_width is None else attention_width
    attention_time = attention_flops_per_token(attention_layers, width, sequence_length, recompute) / attention_mfu
    attention = gemm_time / (gemm_time + attention_time)
    tensor = 1.0
    if tp > 1 and tp_link_gbps > 0 and dense_tflops > 0:
        # per token and layer on one GPU: compute 6 * 12 h^2 / tp FLOPs; traffic 4 ring all-reduces of h values
        compute_s = FLOPS_PER_PARAM * 12 * hidden_size**2 / tp / (dense_tflops * 1e12 * consts.training_mfu * gemm)
        wire = TP_ALLREDUCES_PER_LAYER * 2 * (tp - 1) / tp * hidden_size * TP_WIRE_BYTES
        comm_s = wire * 8 / (tp_link_gbps * 1e9)
        tensor = 1.0 / (1.0 + consts.training_tp_exposed_fraction * comm_s / compute_s)
    virtual = virtual_stages_for(num_layers, pp, consts.training_pipeline_virtual_stages, microbatches)
    pipeline = 1.0 - pipeline_bubble(pp, microbatches, virtual)
    return TrainingUtilisation(gemm, attention, tensor, pipeline, consts.training_mfu)


def linear_gemm_rate_ratio(compute_precision: str, fp8_dense_tflops: float | None, bf16_dense_tflops: float | None) -> float:
    """The linear layers' GEMM rate over bf16's under ``compute_precision``: 1 in bf16, FP8's over bf16's in fp8.

    The datasheet dense FP8 rate over the dense bf16 rate (Transformer Engine's and torchao's FP8 GEMMs, forward and
    both backward GEMMs). A GPU that publishes no FP8 rate is refused for FP8 training
    (:func:`generator.sizing.training_hardware.precision_problem`); here it runs at 1.
    """
    if compute_precision != "fp8" or not fp8_dense_tflops or not bf16_dense_tflops:
        return 1.0
    return fp8_dense_tflops / bf16_dense_tflops


#: What an MFU figure is over: the GPUs' dense (bf16) peak.
MFU_BASIS = "the GPUs' dense peak"
#: The same for an FP8 job (review71 item 13): still the bf16 peak (benchmarks/CALIBRATION.md's FP8 rows count it so),
#: which the FP8 GEMMs run past, so the figure reads high against the FP8 peak users expect and can pass 100%.
MFU_BASIS_FP8 = "the GPUs' dense bf16 peak, not their FP8 peak: an FP8 step's MFU can pass 100%"
#: The short form, after a figure: "92% MFU (of the bf16 dense peak, FP8 training)".
FP8_MFU_NOTE = " (of the dense bf16 peak: FP8 training's GEMMs run past it)"

#: Bytes per element of a bf16 tensor an FP8 cast reads and of the float8 (e4m3 / e5m2) tensor it writes.
BF16_BYTES = 2
FP8_BYTES = 1


def fp8_gemm_share(flops_per_token: float, logits_params: int, method: str = "full") -> float:
    """The share of a training step's weight-GEMM FLOPs that FP8 training runs at the FP8 rate: the decoder blocks'.

    The LM head's GEMMs (``6 x vocab x hidden`` a token, not recomputed under checkpointing) stay bf16 under both
    frameworks that train FP8 here: torchtitan's float8 converter skips the ``output`` projection (its
    ``filter_fqns`` default ``["output"]``, https://github.com/pytorch/torchtitan/blob/main/docs/float8.md), and
    Megatron-Core's ``output_layer`` is a plain ``tensor_parallel.ColumnParallelLinear`` outside Transformer Engine's
    ``fp8_autocast`` over the transformer block (https://github.com/NVIDIA/Megatron-LM,
    ``megatron/core/models/gpt/gpt_model.py``). The input embedding is a lookup, no GEMM. The decoder blocks' norms
    (a few thousand parameters a layer) are counted with their linears.
    """
    if flops_per_token <= 0:
        return 1.0
    head = (6.0 if method == "full" else 4.0) * logits_params
    return max(0.0, 1.0 - head / flops_per_token)


def fp8_cast_bytes_per_token(arch: Architecture, tokens_per_micro_batch: int) -> float:
    """Bytes per token that torchao's dynamic tensorwise float8 scaling moves outside the GEMMs, over every FP8 linear.

    torchao's own roofline of a ``Float8Linear`` (``get_tensor_memory_traffic_ovhd_s`` in
    https://github.com/pytorch/ao/blob/main/torchao/testing/training/roofline_utils.py, tensorwise, no fusion with the
    previous op), per linear of ``K`` inputs and ``N`` outputs:

    - the input (``M x K``): an amax pass reading it in bf16 (2 B an element), then a cast reading it again and writing
      it twice in float8, row- and column-major for the forward and weight-gradient GEMMs (2 + 2 x 1 B): 6 B an input
      element a token;
    - the gradient of the output (``M x N``): the same, 6 B an output element a token;
    - the weight (``K x N``) once a micro-batch: an amax pass (2 B), a forward cast (2 + 1 B) and a backward cast in
      the transposed layout (2 + 1 B): 8 B a weight element over the micro-batch's tokens.

    The decoder blocks' linears only (the LM head stays bf16, :func:`fp8_gemm_share`); a routed expert's input and
    output gradient for the tokens routed to it (``experts_per_token`` of its copies a token), its weights every
    micro-batch. The same for the whole model as per GPU: tensor parallelism splits the bytes as it splits the FLOPs.
    """
    tokens = max(1, tokens_per_micro_batch)
    per_token = 0.0
    for layer in arch.layers:
        for lin in layer.linears:
            routed = lin.group == EXPERT and lin.copies > 1
            used = min(lin.copies, layer.experts_per_token) if routed and layer.experts_per_token else lin.copies
            activations = (BF16_BYTES + BF16_BYTES + 2 * FP8_BYTES) * (lin.in_features + lin.out_features)
            per_token += used * activations
            weight = (BF16_BYTES + 2 * (BF16_BYTES + FP8_BYTES)) * lin.in_features * lin.out_features * lin.copies
            per_token += weight / tokens
    return per_token


def fp8_casts_text(framework: str | None) -> str:
    """What an FP8 job's reason says of its framework's casts: torchao's timed as memory traffic; '' where fused."""
    if framework is None or framework_profile(framework).fp8_casts_fused:
        return ""
    return (
        ", and torchao's amax and cast passes over each linear's input, weight and output gradient as memory traffic "
        "at the GPU's HBM rate (Transformer Engine under megatron fuses them; torchao's own README measures 1.25x on "
        "H100 and 1.15x on MI300X for Llama 3 8B, which this still over-predicts)"
    )


def fp8_step_shape(
    arch: Architecture,
    compute_precision: str,
    casts_fused: bool,
    fp8_dense_tflops: float | None,
    bf16_dense_tflops: float | None,
    flops_per_token: float,
    tokens_per_micro_batch: int,
    flops_per_byte: float,
    method: str = "full",
) -> dict[str, float]:
    """What :func:`training_utilisation` takes for a step's precision.

    Its GEMM rate ratio, the share of the GEMM FLOPs at it, and (where the framework's FP8 casts are not fused,
    ``casts_fused`` False) their bytes a token and the GPU's FLOPs per byte. A bf16 step: ratio 1 and nothing else
    (the bf16 figure unchanged).
    """
    ratio = linear_gemm_rate_ratio(compute_precision, fp8_dense_tflops, bf16_dense_tflops)
    if ratio == 1.0:
        return {"gemm_rate_ratio": 1.0}
    shape = {"gemm_rate_ratio": ratio, "fp8_gemm_share": fp8_gemm_share(flops_per_token, arch.logits_params, method)}
    if not casts_fused:
        shape["cast_bytes_per_token"] = fp8_cast_bytes_per_token(arch, tokens_per_micro_batch)
        shape["flops_per_byte"] = flops_per_byte
    return shape


@memoized
def attention_layer_equivalents(
    arch: Architecture,
    sequence_length: int,
    framework: str | None,
    flash_attention: bool = True,
    masked_kernel_rate: float = 1.0,
) -> float:
    """A training step's attention work in full causal layers of the model's mean width (:func:`training_utilisation`).

    A full-attention layer is one, weighted by its (query, key) pair's FLOPs over the mean layer's
    (:func:`generator.sizing.performance.layer_prompt_pair_flops`: MLA's widths). A sliding-window layer whose kernel
    skips the key blocks outside its window (FlashAttention's ``window_size``, which axolotl's flash-attn recipes,
    Unsloth, torchtune's flex attention and Megatron-LM's Transformer Engine pass the layer's window to) computes its
    mean ``min(p, W)`` pairs a token, not ``p`` (:func:`generator.sizing.performance.causal_pairs_per_token`: Gemma 3's
    window-1,024 layers at 16,384 tokens 0.12 of a full layer; newuser76 item 2), as the serving prefill counts it; under
    a framework whose ``sdpa`` hands the kernel an explicit mask (:attr:`FrameworkProfile.sdpa_window_masks`), or
    ``flash_attention`` off (eager attention over the score matrix), such a layer whose keys reach its window computes
    the whole square, two, at ``masked_kernel_rate`` of the flash kernel's rate (``training_masked_attention_rate``: SDPA's
    kernel under a mask reads the mask a tile at a time and skips no block; 1, the default, times it at the flash rate).
    A linear-attention layer (Gated DeltaNet, Mamba-2) has no pairs: its recurrence's FLOPs a
    token (:func:`generator.sizing.linear_attention.layer_state_flops`, the recurrent form's; the chunked form training
    runs adds a chunk's intra-chunk pairs, left out) over a full layer's.

    A model with attention sinks (gpt-oss: a learned logit a head, :data:`SINK_MODEL_TYPES`) keeps its window layers
    counted full: FlashAttention 2 / 3 have no sink backward (Transformers trains it with eager attention) and
    Transformer Engine runs sinks in its fused kernel only from cuDNN 9.13, falling back to its unfused attention over
    the whole square before (https://github.com/NVIDIA/TransformerEngine/issues/2318); Megatron-Bridge's gpt-oss-120b
    runs measure slower than even the full count (benchmarks/CALIBRATION.md). Unsloth's flex attention takes both,
    left out.
    """
    masks = not flash_attention or (framework is not None and framework_profile(framework).sdpa_window_masks)
    kernel_window = arch.model_type not in SINK_MODEL_TYPES
    pair_flops = [layer_prompt_pair_flops(arch, layer) for layer in arch.layers]
    mean_pair_flops = sum(pair_flops) / max(1, len(pair_flops))
    full_pairs = causal_pairs_per_token(sequence_length)
    if not mean_pair_flops or not full_pairs:
        return float(arch.num_layers)
    total = 0.0
    for layer, flops in zip(arch.layers, pair_flops, strict=True):
        window = layer.window_tokens
        if layer.state is not None:
            total += layer_state_flops(layer) / (mean_pair_flops * full_pairs)
        elif window is None or sequence_length < window:
            total += flops / mean_pair_flops
        else:
            if masks:  # the whole square, at the masked kernel's rate (SDPA's memory-efficient kernel)
                share = 2.0 / masked_kernel_rate
            elif kernel_window:
                share = causal_pairs_per_token(sequence_length, window) / full_pairs
            else:
                share = 1.0
            total += share * flops / mean_pair_flops
    return total


def attention_flops_per_token(num_layers: float, width: float, sequence_length: int, recompute: bool) -> float:
    """Causal attention FLOPs per token of a training step: forward, backward, and the recomputed forward if any.

    ``width``: the attention's ``heads x head_dim`` (:func:`generator.sizing.performance.training_attention_width`).
    """
    per_position = ATTENTION_FLOPS_FORWARD * (2 if recompute else 1) + ATTENTION_FLOPS_BACKWARD
    return per_position * num_layers * width * sequence_length


def mtp_flop_params(arch: Architecture, mtp_layers: int) -> int:
    """Parameters a token's multi-token-prediction (MTP) modules multiply in a training step; 0 without MTP.

    DeepSeek-V3's MTP (https://arxiv.org/abs/2412.19437, section 2.2; Megatron-Core's ``mtp_num_layers``) chains
    ``mtp_layers`` modules after the main model, each predicting one more future token: a projection of the
    concatenated hidden state and next-token embedding (``2 h x h``), one decoder layer (counted at the model's last
    layer's active parameters: DeepSeek-V3's module is one of its MoE layers) and the output head shared with the main
    model, whose ``vocab x hidden`` logits it computes again. The embedding it shares is a lookup. A run that trains
    with MTP does this work on every token beside the main model's ``6 N``, so its throughput is that of
    ``6 (N + mtp_flop_params)`` FLOPs a token (the MTP loss's own softmax left out, as the main loss's is).
    """
    if mtp_layers <= 0 or not arch.layers:
        return 0
    last = arch.layers[-1]
    layer = last.params - last.inactive_params
    return mtp_layers * (2 * arch.hidden_size**2 + layer + arch.logits_params)
