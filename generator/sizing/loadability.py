"""Whether a serving engine will load a model at a parallel layout: the checks vLLM and SGLang make.

Sources (vLLM ``vllm/config`` and ``model_executor/layers``; SGLang applies the same rules):
- attention heads must divide evenly over tensor-parallel ranks ("Total number of attention
  heads (H) must be divisible by tensor parallel size (T)");
- KV heads either divide over the ranks or, when fewer than the ranks, the ranks divide over them
  (each KV head is then replicated);
- block-quantized weights (FP8 with ``weight_block_size`` 128 x 128, DeepSeek-V3 style) must split
  into whole blocks on every rank: the column-parallel gate/up output and the row-parallel down
  input per rank must be multiples of the block ("... is not divisible by weight quantization
  block_n = 128"); routed experts split this way under tensor parallelism, whole under expert
  parallelism;
- group-quantized integer weights (GPTQ, AWQ, compressed-tensors ``group`` strategy, as the checkpoint's own
  ``group_size``) must split into whole groups on every rank: a row-parallel matrix's input per rank (o_proj,
  down_proj, a routed expert's down_proj under TP) must be a multiple of the group (vLLM's Marlin
  ``verify_marlin_supports_shape``: "Weight input_size_per_partition = 14784 is not divisible by group_size = 128";
  the non-Marlin GPTQ and AWQ kernels refuse the same shard: "The input size is not aligned with the quantized weight
  shape"); per-channel (-1) has no group to split;
- expert parallelism spreads whole experts: the routed experts must divide over the EP ranks, and
  an EP group is a multiple of the TP group;
- a recurrent-state layer's heads and conv channels divide over the TP ranks (``MambaStateShapeCalculator``'s
  ``divide``), and Mamba-2's groups too unless there is one (``MambaMixer2``: "If tensor parallel world size does not
  divide num_groups, then num_groups must equal 1").

Whether the engine has a kernel for a weight format on a GPU architecture (:func:`format_problems`)
follows vLLM's quantization hardware table (:data:`QUANTIZATION_HARDWARE_SOURCE`), only for the formats
that table (or the page it points to) states. SGLang's support is not separately sourced; the same
check is applied to it.
"""

from __future__ import annotations

from generator.catalog.records import GpuSpec
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import ATTENTION, EXPERT, Architecture
from generator.sizing.gguf_mixture import gguf_model, output_type, tensor_type, token_embd_type
from generator.sizing.memo import memoized
from generator.sizing.precision import WEIGHT_FORMATS, WeightFormat, same_storage, storage_family
from generator.sizing.weights import Parallelism, linear_names, replicated_on_every_rank

#: The MLP / expert matrices tensor parallelism splits (routers and norms are replicated).
_SPLIT_PROJECTIONS = ("gate_proj", "up_proj", "down_proj")
#: Row-parallel matrices (vLLM ``RowParallelLinear``): tensor parallelism splits their input; every other split matrix
#: is column parallel (its input whole on each rank).
_ROW_PARALLEL = ("o_proj", "out_proj", "down_proj", "output.dense")
#: Integer formats stored with one scale per group of input weights (GPTQ / AWQ / compressed-tensors WNA16).
_GROUP_QUANTIZED = ("int4", "int8-gptq")
#: vLLM's check of a group-quantized matrix's shard (Marlin, the kernel GPTQ, AWQ and compressed-tensors WNA16
#: checkpoints run on CUDA); MoE: "size_k must divisible by BLOCK_SIZE_K" for Qwen3-30B-A3B-AWQ at TP 4 and 8
#: (vllm#17604), "moe_intermediate_size // group_size = 6, so qwen3-30b-a3b gptq int4 cannot run with tp=4 or 8"
#: (vllm PR #28829); dense: Qwen2-VL-72B GPTQ/AWQ (intermediate 29,568) at TP 2, 4, 8 (QwenLM/Qwen2-VL#231).
MARLIN_SHAPE_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/utils/marlin_utils.py",
    "https://github.com/vllm-project/vllm/issues/17604",
    "https://github.com/vllm-project/vllm/pull/28829",
    "https://github.com/QwenLM/Qwen2-VL/issues/231",
)


#: vLLM's "Supported Hardware" table of quantization implementations by GPU architecture (v0.14.0).
QUANTIZATION_HARDWARE_SOURCE = "https://docs.vllm.ai/en/v0.14.0/features/quantization/"
#: vLLM's NVIDIA Model Optimizer page: NVFP4 checkpoints run on a native FP4 GEMM, else weight-only Marlin.
MODELOPT_SOURCE = "https://docs.vllm.ai/en/v0.29.0/features/quantization/modelopt/"

#: The catalog's architectures by the column of vLLM's table they fall in (Blackwell is not a column).
_TABLE_COLUMNS: dict[str, str] = {
    "volta": "Volta GPUs",
    "turing": "Turing GPUs",
    "cdna2": "AMD GPUs",
    "cdna3": "AMD GPUs",
    "rdna3": "AMD GPUs",
    "gaudi3": "Intel Gaudi",
}


class FormatRule(NamedTuple):
    """Architectures (by catalog name) on which the engine has no kernel for a format, and why.

    ``reason`` may name ``{column}``, the architecture's column of vLLM's table; ``where`` replaces that column in
    the refusal where the rule is narrower than the column (vLLM's single "AMD GPU" column is the MI300 era).
    """

    architectures: frozenset[str]
    reason: str
    where: str | None = None


_AMD_AND_GAUDI = frozenset({"cdna2", "cdna3", "rdna3", "gaudi3"})


#: vLLM's FP8 page: where FP8 checkpoints run, natively or as weight-only FP8 Marlin.
FP8_MARLIN_SOURCE = "https://docs.vllm.ai/en/v0.32.0/features/quantization/llm_compressor/fp8/"


def _table_marks_unsupported(implementation: str) -> str:
    return f"vLLM's quantization hardware table marks {implementation} unsupported on {{column}} ({QUANTIZATION_HARDWARE_SOURCE})"


#: AMD's table of its Radeon GPUs' matrix rates a clock a CU by type: RDNA 3's FP8 and BF8 rates are 0 (no FP8 type).
RDNA3_FP8_SOURCE = "https://gpuopen.com/learn/using_matrix_core_amd_rdna4/"

#: vLLM issues in which FP8 checkpoints fail on CDNA2 (gfx90a), whose matrix cores have no FP8 type.
CDNA2_FP8_SOURCES = (
    "https://github.com/vllm-project/vllm/issues/16394",
    "https://github.com/vllm-project/vllm/issues/10663",
)

_GPTQ_SUPPORT = (FormatRule(_AMD_AND_GAUDI, _table_marks_unsupported("AWQ and GPTQ")),)
_BNB_SUPPORT = (FormatRule(_AMD_AND_GAUDI, _table_marks_unsupported("bitsandbytes")),)
_GGUF_SUPPORT = (FormatRule(frozenset({"gaudi3"}), _table_marks_unsupported("GGUF")),)

#: Formats, by storage family, whose kernels vLLM's table (or its ModelOpt page, or vLLM's issues) rule out on
#: some architecture; formats not listed (bf16, mxfp4, ...) are not checked, since the table does not state them
#: for every column.
FORMAT_SUPPORT: dict[str, tuple[FormatRule, ...]] = {
    "fp8": (
        # neither FP8 W8A8 nor the FP8 Marlin (weight-only) kernel on Volta (fuzz13 item 6); Turing and Ampere run FP8
        # checkpoints as weight-only W8A16 through FP8 Marlin ("FP8 models will run on compute capability >= 7.5
        # (Turing) as weight-only W8A16", FP8_MARLIN_SOURCE; the v0.14 table still marked Turing: review 17 item M4)
        FormatRule(
            frozenset({"volta"}),
            "FP8 runs on compute capability 7.5 and up, as weight-only W8A16 through FP8 Marlin below 8.9 "
            f"({FP8_MARLIN_SOURCE}); {{column}} are 7.0",
        ),
        # the table's AMD column is CDNA3's; CDNA2 has no FP8 type (newuser21 item 6)
        FormatRule(
            frozenset({"cdna2"}),
            "CDNA2 (gfx90a) has no FP8 matrix type: vLLM's FP8 kernels fail there (\"type fp8e4b8 not supported in "
            f'this architecture" on an MI210, {CDNA2_FP8_SOURCES[0]}; an FP8 checkpoint on MI250, '
            f"{CDNA2_FP8_SOURCES[1]}); the AMD GPU column of vLLM's quantization hardware table, where FP8 (W8A8) "
            f"is supported, is the MI300 series (CDNA3) ({QUANTIZATION_HARDWARE_SOURCE})",
            where="CDNA2 GPUs (MI250X, MI210)",
        ),
        FormatRule(
            frozenset({"rdna3"}),
            f"RDNA 3 (gfx1100) has no FP8 matrix type (AMD GPUOpen's RDNA matrix-core table gives RDNA 3 no FP8 or BF8 "
            f"rate: {RDNA3_FP8_SOURCE}); the AMD GPU column of vLLM's quantization hardware table, where FP8 (W8A8) "
            f"is supported, is the MI300 series (CDNA3) ({QUANTIZATION_HARDWARE_SOURCE})",
            where="RDNA 3 GPUs (Radeon RX 7900 XTX, Radeon PRO W7900)",
        ),
    ),
    # INT8 W8A8 (newuser21 item 7)
    "int8": (FormatRule(frozenset({"volta", "cdna2", "cdna3", "rdna3", "gaudi3"}), _table_marks_unsupported("INT8 (W8A8)")),),
    "nvfp4": (
        FormatRule(
            frozenset({"volta", "turing", "cdna2", "cdna3", "rdna3", "gaudi3"}),
            "NVFP4 (ModelOpt) has NVIDIA kernels only: a native FP4 GEMM on Blackwell, else weight-only Marlin "
            f"({MODELOPT_SOURCE}), which vLLM's quantization hardware table lists for Ampere, Ada and Hopper, "
            f"not on {{column}} ({QUANTIZATION_HARDWARE_SOURCE})",
        ),
    ),
    "int4": _GPTQ_SUPPORT,
    "int8-gptq": _GPTQ_SUPPORT,
    "nf4": _BNB_SUPPORT,
    "nf4-no-double-quant": _BNB_SUPPORT,
    **{fmt.name: _GGUF_SUPPORT for fmt in WEIGHT_FORMATS.values() if fmt.gguf},
}


def format_problems(fmt: WeightFormat, architecture: str) -> tuple[str, ...]:
    """Why the serving engine has no kernel for ``fmt`` on a GPU of ``architecture`` (empty when it has one)."""
    for rule in FORMAT_SUPPORT.get(storage_family(fmt.name), ()):
        if architecture in rule.architectures:
            column = _TABLE_COLUMNS[architecture]
            where = rule.where or column
            return (f"{fmt.name} weights cannot be served on {where}: " + rule.reason.format(column=column),)
    return ()


#: The ggml tensor types vLLM's GGUF loader has a kernel for (``UNQUANTIZED_TYPES`` and ``DEQUANT_TYPES``); a tensor of
#: another type fails as the model loads ("Unsupported GGUF quantization type MXFP4 in layer ...",
#: ``GGUFLinearMethod.process_weights_after_loading``). SGLang's GGUF method lists the same types.
ENGINE_GGUF_TYPES = frozenset(
    {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ1_M",
     "IQ1_S", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS", "IQ4_NL"}
)  # fmt: skip
#: Where those lists are (vLLM at v0.10-era main; SGLang's port).
ENGINE_GGUF_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/00620f91ea186ca295a1eb69f4acba9d0efaaaaa/vllm/model_executor/layers/"
    "quantization/gguf.py",
    "https://github.com/sgl-project/sglang/blob/0137a1e736a63cc3bc7c81f7084dc3f049d34b15/python/sglang/srt/layers/"
    "quantization/gguf.py",
)


def gguf_tensor_types(fmt: WeightFormat, arch: Architecture) -> frozenset[str]:
    """The ggml types a GGUF of ``arch`` at ``fmt`` stores its matrices in (empty for a format that is no GGUF type).

    llama.cpp's choice per tensor (:mod:`generator.sizing.gguf_mixture`), and MXFP4 where the model is an MXFP4
    checkpoint, whose MXFP4 tensors every GGUF keeps (gpt-oss's routed experts; :mod:`generator.sizing.weights`).
    """
    if not fmt.gguf:
        return frozenset()
    model = gguf_model(arch)
    types = {
        tensor_type(fmt.gguf, linear, layer.number, arch.num_layers, model) for layer in arch.layers for linear in layer.linears
    }
    types |= {output_type(fmt.gguf, arch.hidden_size), token_embd_type(fmt.gguf, arch.hidden_size)}
    if arch.quantization is not None and arch.quantization.precision == "mxfp4":
        types.add("MXFP4")
    return frozenset(types)


def engine_gguf_problem(fmt: WeightFormat, arch: Architecture, machine_field: str = "hardware.fixed") -> str | None:
    """Why vLLM and SGLang cannot load a GGUF of ``arch`` at ``fmt``: a tensor type their GGUF loaders lack.

    ``machine_field``: what plans a machine of the user's instead (the workload's field, or the estimate's flag).

    MXFP4 (ggml type 39): llama.cpp's MXFP4_MOE file type, and any GGUF of an MXFP4 checkpoint (review26 item 3:
    gpt-oss-120b at mxfp4_moe was planned under vLLM on H100s). llama.cpp runs them, on a machine of yours.
    """
    missing = sorted(gguf_tensor_types(fmt, arch) - ENGINE_GGUF_TYPES)
    if not missing:
        return None
    mxfp4_checkpoint = arch.quantization is not None and arch.quantization.precision == "mxfp4"
    served = (
        "they serve the checkpoint itself, precision mxfp4 (their MXFP4 method)"
        if mxfp4_checkpoint
        else "they serve checkpoint formats (fp8, int4, ...) and the GGUF types whose tensors they have kernels for (q4_k_m, ...)"
    )
    return (
        f"a GGUF of this model at {fmt.name} holds {', '.join(missing)} tensors, which vLLM's and SGLang's GGUF loaders "
        f"have no kernel for ({ENGINE_GGUF_SOURCES[0]}): llama.cpp runs it, on a machine of yours ({machine_field}); "
        f"{served}"
    )


def dense_format_problem(fmt: WeightFormat, arch: Architecture) -> str | None:
    """Why ``fmt`` cannot hold a dense model: MXFP4 is applied to a mixture of experts' routed experts only.

    vLLM's and SGLang's MXFP4 method quantizes the fused MoE layers (gpt-oss), and llama.cpp's quantize type is
    MXFP4_MOE: a dense model's linear layers stay 16-bit, so the 4-bit sizes are not what runs (newuser20 item 7).
    """
    if fmt.name in ("mxfp4", "mxfp4_moe") and not arch.is_moe:
        return (
            "MXFP4 holds a mixture of experts' routed experts only (vLLM, SGLang, llama.cpp's MXFP4_MOE); a dense model has none"
        )
    return None


def head_split_problems(arch: Architecture, tp: int) -> list[str]:
    """Why vLLM / SGLang refuse to split ``arch``'s attention heads over ``tp`` GPUs (empty where they split)."""
    problems = []
    heads = arch.num_attention_heads
    if heads % tp:
        problems.append(f"attention heads ({heads}) must be divisible by the tensor parallel size ({tp})")
    kv = arch.num_kv_heads
    if kv and (kv % tp if kv >= tp else tp % kv):
        problems.append(f"KV heads ({kv}) and tensor parallel size ({tp}) must divide one another")
    return problems


@memoized
def loadability_problems(arch: Architecture, fmt: WeightFormat, par: Parallelism) -> tuple[str, ...]:
    """Reasons a vLLM/SGLang-style engine refuses this layout (empty when it loads).

    Kept per input: every GPU's layouts of one TP x PP ask it alike (speed100).
    """
    tp = par.tp
    problems = head_split_problems(arch, tp)
    # a recurrent-state layer's heads and channels split evenly (vLLM's divide), Mamba-2's groups too unless one
    state_problems = {problem for layer in arch.layers if layer.state and (problem := layer.state.tp_problem(tp))}
    problems.extend(sorted(state_problems))
    experts, _top_k = arch.routed_experts
    if par.ep > 1:
        if par.ep % tp:
            problems.append(f"expert parallel size ({par.ep}) must be a multiple of the tensor parallel size ({tp})")
        if experts and experts % par.ep:
            problems.append(f"routed experts ({experts}) must be divisible by the expert parallel size ({par.ep})")
    if (dense := dense_format_problem(fmt, arch)) is not None:
        problems.append(dense)
    if fmt.block:
        quant = arch.quantization
        own = quant.block if quant is not None and same_storage(quant.precision, fmt.name) else None
        problems.extend(_block_problems(arch, own or fmt.block, par))  # the checkpoint's own weight_block_size first
    if (group := checkpoint_group(arch, fmt)) is not None:
        problems.extend(_group_problems(arch, group, par))
    return tuple(problems)


def checkpoint_group(arch: Architecture, fmt: WeightFormat) -> int | None:
    """The scale group of a group-quantized integer checkpoint held as it is stored (None: none, or per channel).

    Only a checkpoint's own: quantizing a 16-bit model oneself picks a group that splits (Qwen publishes its 72B AWQ and
    GPTQ builds with the intermediate size padded to 29,696 for this), so a format asked of a 16-bit model is not held
    to its default group (newuser32 item 3).
    """
    quant = arch.quantization
    if storage_family(fmt.name) not in _GROUP_QUANTIZED or quant is None or not same_storage(quant.precision, fmt.name):
        return None
    group = fmt.group_size if quant.group_size is None else quant.group_size
    return group or None  # 0: one scale per output row (GPTQ's -1)


def default_group_problem(arch: Architecture, fmt: WeightFormat, par: Parallelism) -> str | None:
    """Why a checkpoint at the format's default group would not load at this layout, where the model is not one.

    None when it would, or where the model already is such a checkpoint (:func:`loadability_problems` refuses that).

    Quantizing a 16-bit model oneself may pick a group that splits, so the layout stays allowed (newuser32 item 3); but
    the builds published are at the default group (Qwen3-235B-A22B-GPTQ-Int4 and Qwen3-30B-A3B-GPTQ-Int4: 128), and those
    fail at the layouts whose shard it does not divide (vllm PR #28829, vllm#17604): newuser41 item 3.
    """
    if storage_family(fmt.name) not in _GROUP_QUANTIZED or not fmt.group_size or checkpoint_group(arch, fmt) is not None:
        return None
    quant = arch.quantization
    if quant is not None and same_storage(quant.precision, fmt.name):
        return None  # the checkpoint's own format, per channel: nothing to split
    problems = _group_problems(arch, fmt.group_size, par)
    if not problems:
        return None
    return (
        f"a checkpoint in {fmt.name} at the usual group of {fmt.group_size} (the GPTQ / AWQ builds published, such as "
        f"Qwen's own) would not load at TP {par.tp} / EP {par.ep}: {problems[0]}; sized here as quantized to a group "
        f"that splits ({', '.join(MARLIN_SHAPE_SOURCES[1:3])})"
    )


def _group_problems(arch: Architecture, group: int, par: Parallelism) -> list[str]:
    """A row-parallel matrix whose input shard is not a whole number of scale groups (empty when every one is).

    Expert parallelism keeps a routed expert whole (vLLM's FusedMoE: "In EP, each device owns a set of experts fully.
    There is no tensor parallel", fused_moe/config.py), so only TP splits its down_proj; matrices the checkpoint keeps
    16-bit have no groups.
    """
    quant = arch.quantization
    for layer in arch.layers:
        for lin in layer.linears:
            if replicated_on_every_rank(lin) or not lin.name.endswith(_ROW_PARALLEL):
                continue
            ranks = 1 if (lin.group == EXPERT and par.ep > 1) else par.tp
            width = lin.in_features
            if ranks == 1 or group >= width:  # Marlin: "group_size < input_size and ..."
                continue
            if not width % ranks and not (width // ranks) % group:
                continue
            if quant is not None and quant.keeps(*linear_names(arch, layer.number, lin)):
                continue
            kind = "expert intermediate size" if lin.group == EXPERT else "input width"
            experts = arch.routed_experts[0]
            whole = lin.group == EXPERT and experts and not experts % par.tp
            said = (
                'its fused MoE kernel fails: "size_k must divisible by BLOCK_SIZE_K", vllm#17604'
                if lin.group == EXPERT
                else f'"Weight input_size_per_partition = {width / ranks:g} is not divisible by group_size = {group}"'
            )
            return [
                f"{lin.name} {kind} {width} / TP {ranks} = {width / ranks:g} is not divisible by the checkpoint's "
                f"quantization group ({group}): vLLM refuses to load it ({said}); use a TP whose shard is a multiple of "
                f"{group}" + (", or expert parallelism" if whole else ", or pipeline parallelism")
            ]
    return []


def _block_problems(arch: Architecture, block: int, par: Parallelism) -> list[str]:
    """Column/row shards of block-quantized matrices that do not hold whole blocks."""
    seen: set[str] = set()
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == ATTENTION or lin.name in seen or not lin.name.endswith(_SPLIT_PROJECTIONS):
                continue
            ranks = 1 if (lin.group == EXPERT and par.ep > 1) else par.tp
            if ranks == 1:
                continue
            # gate/up split their output (column parallel), down its input (row parallel)
            width = lin.in_features if lin.name.endswith("down_proj") else lin.out_features
            shard, rest = divmod(width, ranks)
            if rest or shard % block:
                seen.add(lin.name)
                kind = "expert intermediate size" if lin.group == EXPERT else "intermediate size"
                which = "input" if lin.name.endswith("down_proj") else "output"
                # expert parallelism keeps an expert whole, where the experts divide over the ranks (fuzz16 item 5)
                experts = arch.routed_experts[0]
                whole = lin.group == EXPERT and experts and not experts % par.tp
                return [
                    f"{lin.name} {which} width {width} / TP {ranks} = {width / ranks:g} is not divisible by the "
                    f"weight quantization block ({block}): the {kind} does not split into whole {block}-wide "
                    f"blocks per rank (vLLM and SGLang refuse to load it); use a TP whose shard is a multiple "
                    f"of {block}" + (", or expert parallelism" if whole else "")
                ]
    return []


#: Catalog architectures without bf16 compute, and their compute capability.
NO_BF16: dict[str, str] = {"volta": "7.0", "turing": "7.5"}


def computes_bf16(architecture: str) -> bool:
    """Whether a GPU of this catalog architecture computes bf16 (Ampere and newer, CDNA2 and newer, Gaudi 3)."""
    return architecture not in NO_BF16


#: Model types vLLM will not run in float16 ("Numerical instability. Please use bfloat16 or float32 instead.":
#: ``_FLOAT16_NOT_SUPPORTED_MODELS`` beside ``_resolve_auto_dtype`` in vllm/config), so that on a GPU without bf16 it
#: takes float32.
FP16_REFUSED_MODEL_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4", "plamo2"})


#: vLLM's dtype resolution (``_resolve_auto_dtype`` in vllm/config/model.py, v0.14.0 the last release whose installation
#: page lists Volta): ``dtype: auto`` keeps the platform's supported dtypes (float16 and float32 below compute capability
#: 8.0) that the model type takes (``_is_valid_dtype`` drops float16 for :data:`FP16_REFUSED_MODEL_TYPES`), and serves
#: the checkpoint's dtype where it is among them, else the first of them: float16, or float32 for those model types.
VLLM_AUTO_DTYPE_SOURCE = "https://github.com/vllm-project/vllm/blob/v0.14.0/vllm/config/model.py"


def half_format(architecture: str) -> str:
    """The 16-bit float a GPU of ``architecture`` computes and caches in: bf16, or fp16 where it has no bf16."""
    return "bf16" if computes_bf16(architecture) else "fp16"


def served_float_format(model_type: str, name: str, architecture: str, engine: str) -> str:
    """The format a service of ``name`` weights runs in on a GPU of ``architecture``: ``name`` but for bf16 there.

    A GPU without bf16 (V100, T4) runs bf16 weights cast to float16, two bytes as sized (vLLM's ``dtype: auto``, and
    any engine: there is no bf16 arithmetic to run), or, under vLLM, in float32 for a model type it refuses in float16
    (:data:`VLLM_AUTO_DTYPE_SOURCE`): four bytes a weight and the scalar fp32 rate (fix68 items 2 and 3: Gemma 2 on a
    V100 was sized in two bytes a weight, and every bf16 model there was said to run in bf16).
    """
    if name != "bf16" or computes_bf16(architecture):
        return name
    return "fp32" if engine == "vllm" and model_type in FP16_REFUSED_MODEL_TYPES else "fp16"


def float16_problem(model_type: str, fmt: WeightFormat, gpu: GpuSpec, engine: str) -> str | None:
    """Why vLLM would not serve 16-bit weights of ``model_type`` on ``gpu`` as sized; else None.

    vLLM refuses such a model type in float16 (``_check_valid_dtype`` raises for it), and on a GPU without bf16 serves
    its bf16 in float32, twice the bytes and at the scalar fp32 rate. review34 item 7: Gemma 3 1B was planned on a T4,
    sized in two bytes a weight, beside a warning that vLLM runs it in float32 there; review35 item 3: ``precision:
    fp16`` took it there without a word.
    """
    if engine != "vllm" or model_type not in FP16_REFUSED_MODEL_TYPES:
        return None
    if fmt.name == "fp16":
        return f"vLLM refuses {model_type} in float16 (numerical instability): serve it in bf16, on a GPU with bf16"
    if fmt.name != "bf16" or computes_bf16(gpu.architecture):
        return None
    return (
        f"{gpu.id} has no bf16 and vLLM refuses {model_type} in float16 (numerical instability), so it would serve it in "
        "float32, twice the bytes and at the scalar fp32 rate: a GPU with bf16 serves it as sized"
    )
