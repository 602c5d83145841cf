"""Weight bytes of a model under a format, whole and per GPU under tensor / pipeline / expert parallelism.

Sharding follows vLLM / Megatron: column- and row-parallel matrices split by TP; K/V projections
are replicated when TP exceeds the KV heads (each rank keeps ``ceil(kv_heads / tp)`` heads);
MLA's down-projections (``q_a_proj``, ``kv_a_proj_with_mqa``) and MoE routers are replicated;
routed experts split over ``max(tp, ep)`` GPUs; norms are replicated (a Mamba-2 mixer's conv1d, A / D / dt_bias and
gated norm split as ``MambaMixer2`` splits them, its one group's B / C rows whole on each rank). Pipeline stages get
contiguous layer ranges, the remainder layers where the engine puts them (:func:`stage_layers`); the first stage
also holds the embeddings (and a vision tower), the last the LM head and final norm.
"""

from __future__ import annotations

import math
from fractions import Fraction

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import ATTENTION, EXPERT, ROUTER, Architecture, Layer, Linear
from generator.sizing.file_weights import FileWeights
from generator.sizing.gguf_mixture import GGUF_TYPE_BITS, NO_MODEL_FACTS, gguf_model
from generator.sizing.linear_attention import MAMBA2_SHARED_GROUP_PROJ
from generator.sizing.memo import memoized
from generator.sizing.precision import WeightFormat, same_storage
from generator.sizing.quantization import QuantizationConfig

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: MLA's down-projections, and a one-group Mamba-2 ``in_proj``'s B / C rows (review71 item 5: documented as whole on
#: every rank but split 1/TP, 66,060,288 B short a GPU for granite-4.0-h-small at TP8).
_REPLICATED = {"q_a_proj", "kv_a_proj_with_mqa", MAMBA2_SHARED_GROUP_PROJ}
#: GGUF ``MXFP4``: 32 E2M1 weights and one E8M0 scale in 17 bytes (ggml-common.h ``block_mxfp4``), as OCP MXFP4.
MXFP4_GGUF_BITS = GGUF_TYPE_BITS["MXFP4"]


class Parallelism(NamedTuple):
    """How one model replica is split over GPUs.

    ``ep`` > 1 is DeepSeek-style expert parallelism: each pipeline stage has ``ep`` GPUs (a
    multiple of ``tp``); routed experts are spread over all of them while attention is
    tensor-parallel over ``tp`` and data-parallel over ``ep / tp`` groups, which split the sequences.
    """

    tp: int = 1
    pp: int = 1
    ep: int = 1
    #: Which stages get the layers ``pp`` leaves over (:data:`STAGE_RULES`): the engine's rule.
    stages: str = "first"
    #: The vision tower's layers are split over the TP ranks (vLLM's default ``mm_encoder_tp_mode`` "weights": "split
    #: the weights of each layer across TP ranks", vllm/config/multimodal.py; its towers' linears are
    #: ``QKVParallelLinear`` / ``RowParallelLinear`` with ``disable_tp`` only in "data" mode). False: held whole on each
    #: GPU (SGLang, kept so: not checked tower by tower). The patch embedding and norms, which vLLM keeps whole, are
    #: split with the rest: under 0.3% of a tower (Qwen2.5-VL-7B: 1.6 M of 676.6 M).
    vision_tp: bool = False

    @property
    def vision_split(self) -> int:
        """GPUs the vision tower is split over (1: held whole on each)."""
        return self.tp if self.vision_tp else 1

    @property
    def gpus(self) -> int:
        """GPUs in one replica."""
        tp, ep = self.tp, self.ep  # max(tp, ep) without the call: asked about a million times a render of many files
        return (tp if tp >= ep else ep) * self.pp

    @property
    def attention_dp(self) -> int:
        """Data-parallel attention groups inside an expert-parallel stage (each holds its own sequences)."""
        groups = self.ep // self.tp  # max(1, ...) without the call: asked some thousands of times a plan
        return groups if groups > 1 else 1


class WeightSizes(NamedTuple):
    """Weight bytes of one model: whole, per layer, and per GPU (the fullest GPU)."""

    total_bytes: int
    per_gpu_bytes: int
    #: Bytes a forward pass streams on the GPU whose stage streams the most: its stage less what a step only
    #: looks rows up in (the input embedding, unless the LM head multiplies by the same tied table on that stage)
    #: and less the vision tower (run once per image, not per token).
    per_gpu_read_bytes: int
    #: Whole-model bytes of each decoder layer, in order.
    layer_bytes: tuple[int, ...]
    embedding_bytes: int
    lm_head_bytes: int
    #: Bytes of routed experts, whole model.
    expert_bytes: int
    #: Bytes kept outside the decoder layers (final norm, vision tower).
    other_bytes: int
    #: Routed-expert bytes of each decoder layer (0 for dense layers).
    layer_expert_bytes: tuple[int, ...] = ()


#: Where multimodal checkpoints put the text model: Llama 4, LLaVA and older Gemma 3 / Mistral 3 checkpoints under
#: ``language_model.`` (``language_model.model.layers.0.self_attn.q_proj``, ``language_model.lm_head``), Transformers
#: 4.52 and later under ``model.language_model.`` (``model.language_model.layers.0...``); vLLM maps both onto the
#: modules it builds (``hf_to_vllm_mapper``), so a checkpoint's ignore list names them so (newuser32 item 8).
_WRAPPERS = (("model.", "language_model.model."), ("model.", "model.language_model."), ("lm_head", "language_model.lm_head"))


def checkpoint_names(name: str) -> tuple[str, ...]:
    """The names a checkpoint may give the text model's module ``name`` (``model.layers.3.mlp.down_proj``, ``lm_head``).

    The text model's own, and the same under a multimodal wrapper (:data:`_WRAPPERS`).
    """
    names = [name]
    for text, wrapped in _WRAPPERS:
        if name.startswith(text):
            names.append(wrapped + name[len(text) :])
    return tuple(names)


def linear_names(arch: Architecture, layer: int, linear: Linear) -> tuple[str, ...]:
    """One matrix's names as checkpoints give them (:func:`checkpoint_names`).

    Llama 4 names its feed-forward block ``feed_forward`` and its one shared expert ``shared_expert``
    (``feed_forward.shared_expert.down_proj``, ``feed_forward.router``, ``feed_forward.experts``: transformers'
    modeling_llama4.py ``Llama4TextMoe``, vLLM's llama4.py), not ``mlp`` / ``shared_experts``.
    """
    if arch.model_type.startswith("llama4"):
        part = "self_attn" if linear.group == ATTENTION else "feed_forward"
        name = linear.name.replace("shared_experts.", "shared_expert.")
    else:
        part = "self_attn" if linear.group == ATTENTION else "mlp"
        name = linear.name
    return checkpoint_names(f"model.layers.{layer}.{part}.{name}")


def _linear_bits(fmt: WeightFormat, arch: Architecture, layer: Layer, linear: Linear) -> Fraction:
    quant = arch.quantization
    if (
        fmt.gguf
        and quant is not None
        and quant.precision == "mxfp4"
        and not quant.keeps(*linear_names(arch, layer.number, linear))
    ):
        # a GGUF of any type keeps an MXFP4 checkpoint's MXFP4 tensors (gpt-oss's routed experts, over 90% of its
        # weights): llama.cpp's converter writes them as GGUF MXFP4 blocks unchanged (GptOssModel's repack_mxfp4, in
        # https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py) and llama-quantize re-quantizes
        # only the others (attention, embeddings, output); "All quants keep the feed forward networks at mxfp4"
        # (https://huggingface.co/bartowski/openai_gpt-oss-20b-GGUF). newuser29 item 2: gpt-oss-120b "Q4_K_M" was
        # 81.76 GiB, "Q8_0" 115.72 GiB, where the published files of every type are 58-61 GiB.
        return MXFP4_GGUF_BITS
    quant = listing(arch, fmt)
    if quant is not None:
        if quant.keeps(*linear_names(arch, layer.number, linear)):
            return Fraction(fmt.high_bits)
        # the checkpoint's own list of 16-bit modules, not a recipe's, says what it quantized
        fmt = fmt._replace(fbgemm_recipe=False)
        if quant.group_size is not None:
            fmt = fmt._replace(group_size=quant.group_size or None)
        if not quant.zero_point and fmt.zero_bits:  # a symmetric compressed-tensors scheme stores no zero point
            fmt = fmt._replace(scale_bits=fmt.scale_bits - fmt.zero_bits, zero_bits=Fraction(0))
        if quant.block is not None and fmt.block:  # its own weight_block_size (fuzz25 L1: [1, 1] was sized as 128 x 128)
            fmt = fmt._replace(block=quant.block)
    return fmt.linear_bits(linear, layer.number, arch.num_layers, gguf_model(arch) if fmt.gguf else NO_MODEL_FACTS)


@memoized
def dequantized_flop_shares(arch: Architecture, fmt: WeightFormat) -> tuple[float, float, float]:
    """Shares of a token's multiply-adds in the (dense, replicated, routed-expert) matrices that ``fmt`` stores quantized.

    What a kernel that dequantizes in the GEMM's main loop multiplies: the matrices the checkpoint's keep-list and the
    format leave at 16 bits (gpt-oss keeps its attention BF16, every format its routers) run as plain GEMMs. Dense and
    replicated matrices as :func:`generator.sizing.performance.gemm_seconds` splits them; the LM head is neither (its bits
    are the embedding's, 16 but in GGUF).
    """
    totals = [0, 0, 0]
    quantized = [0, 0, 0]
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT:
                kind, params = 2, lin.in_features * lin.out_features * layer.experts_per_token
            else:
                kind, params = (1 if replicated_on_every_rank(lin) else 0), lin.in_features * lin.out_features * lin.copies
            totals[kind] += params
            if _linear_bits(fmt, arch, layer, lin) < fmt.high_bits:
                quantized[kind] += params
    dense, replicated, expert = (q / t if t else 0.0 for q, t in zip(quantized, totals, strict=True))
    return dense, replicated, expert


def replicated_on_every_rank(linear: Linear) -> bool:
    """Whether every tensor-parallel rank holds (and multiplies) the whole matrix: MLA's down-projections, routers.

    vLLM builds ``q_a_proj`` and ``kv_a_proj_with_mqa`` as ``ReplicatedLinear`` (or fused with ``disable_tp=True``)
    and the MoE gate as ``ReplicatedLinear`` (vllm/model_executor/models/deepseek_v2.py). A one-group Mamba-2 mixer's
    B / C rows of ``in_proj``: ``MambaMixer2`` pads the groups to the TP size (``extra_groups_for_head_shards``: one
    group becomes ``tp``), so its ``ColumnParallelLinear`` gives each rank ``2 x d_state`` B / C rows, and
    ``mamba_v2_sharded_weight_loader`` fills every rank's from the one group (vllm/model_executor/layers/mamba/
    mamba_mixer2.py): the whole matrix on each.
    """
    return linear.group == ROUTER or linear.name in _REPLICATED


def _shard(linear: Linear, arch: Architecture, par: Parallelism) -> Fraction:
    """Fraction of a matrix one GPU holds."""
    if replicated_on_every_rank(linear):
        return Fraction(1)
    if linear.group == EXPERT:
        return Fraction(1, max(par.tp, par.ep))
    if linear.name in ("k_proj", "v_proj") and arch.num_kv_heads:
        return Fraction(math.ceil(arch.num_kv_heads / par.tp), arch.num_kv_heads)
    return Fraction(1, par.tp)


def linear_params_per_gpu(arch: Architecture, par: Parallelism) -> int:
    """The decoder linear layers' weight parameters on the fullest pipeline stage's GPU.

    Each matrix's share as :func:`_shard` gives it (TP; routed experts over ``max(tp, ep)``); the embeddings, norms
    and LM head not counted.
    """
    stages = stage_layers(arch.num_layers, par.pp, par.stages)
    return max(
        math.ceil(sum(lin.weight_params * _shard(lin, arch, par) for i in layers for lin in arch.layers[i].linears))
        for layers in stages
    )


def _padding(fmt: WeightFormat, linear: Linear, par: Parallelism) -> Fraction:
    """How much larger a GPU holds its share of a routed-expert matrix than stored; 1 elsewhere.

    The engine's padding of the rank's intermediate size and of the hidden size (``fmt.expert_padding``); the
    checkpoint's bytes (the whole model's) are unpadded.
    """
    if fmt.expert_padding is None or linear.group != EXPERT:
        return Fraction(1)
    inter_multiple, hidden_multiple = fmt.expert_padding
    down = linear.name.endswith(("down_proj", "w2"))  # in: the intermediate size; gate / up (w1, w3): out
    inter, hidden = (linear.in_features, linear.out_features) if down else (linear.out_features, linear.in_features)
    rank_inter = -(-inter // (par.tp if par.ep <= 1 else 1))  # expert parallelism keeps each expert whole
    return Fraction(-(-rank_inter // inter_multiple) * inter_multiple, rank_inter) * Fraction(
        -(-hidden // hidden_multiple) * hidden_multiple, hidden
    )


def _layer_bits(fmt: WeightFormat, arch: Architecture, layer: Layer, par: Parallelism) -> tuple[Fraction, Fraction, Fraction]:
    """(bits of the whole layer, bits of the layer on one GPU, bits of its routed experts)."""
    whole = Fraction(layer.other_params) * fmt.other_bits()
    shard = whole
    mixer = layer.state.mixer_small_params(1) if layer.state is not None else None
    held = layer.state.mixer_small_params(par.tp) if layer.state is not None else None
    if mixer is not None and held is not None:
        # a Mamba-2 mixer's conv1d, A / D / dt_bias and gated norm split over TP as MambaMixer2 builds them (the layer's
        # norms and the rest of its small tensors stay whole on each rank)
        shard -= (mixer - held) * fmt.other_bits()
    experts = Fraction(0)
    for lin in layer.linears:
        bits = lin.weight_params * _linear_bits(fmt, arch, layer, lin) + lin.bias_params * fmt.other_bits()
        whole += bits
        shard += bits * _shard(lin, arch, par) * _padding(fmt, lin, par)
        if lin.group == EXPERT:
            experts += bits
    return whole, shard, experts


def listing(arch: Architecture, fmt: WeightFormat) -> QuantizationConfig | None:
    """The checkpoint whose list of unquantized modules sizes ``fmt`` of ``arch``; None: the format's own layout.

    The model's own checkpoint where it is stored in ``fmt``; else a published checkpoint of it in ``fmt`` (fix196:
    ``precision: nvfp4`` of deepseek-ai/DeepSeek-R1 is NVIDIA's DeepSeek-R1-FP4, whose attention stays BF16).
    """
    for quant in (arch.quantization, arch.published):
        if quant is not None and same_storage(quant.precision, fmt.name):
            return quant
    return None


def _position_dependent(arch: Architecture, fmt: WeightFormat) -> bool:
    """Whether a layer's bits depend on its index (GGUF mixtures, checkpoint keep-lists)."""
    quant = listing(arch, fmt)
    if quant is not None:
        return bool(fmt.gguf) or bool(quant.keep_patterns)
    return bool(fmt.gguf) or fmt.fbgemm_recipe


def _bytes(bits: Fraction) -> int:
    return math.ceil(bits / 8)


#: Where each engine puts the ``num_layers % pp`` layers an even split leaves over:
#: - ``vllm``: from the second-to-last stage backwards, never the last, nor the first while the middle ones suffice
#:   (``get_pp_indices``, vllm/distributed/utils.py: ``partitions = [n // pp] * pp; for i in range(2, remaining + 2):
#:   partitions[-i] += 1``; "The first and last partitions are excluded because they contain the input and output
#:   embeddings ... we are attempting to reduce maximum memory consumption across partitions"): 61 layers over 4 stages
#:   [15, 15, 16, 15];
#: - ``sglang``: the last ones ("the last N partitions will have one extra layer, where N = remainder", ``get_pp_indices``
#:   in python/sglang/srt/distributed/utils.py): [15, 15, 15, 16];
#: - ``first``: the first ones, as ``torch.tensor_split`` (TensorRT-LLM ``Mapping.pp_layers``: "If num_layers % pp_size =
#:   n != 0, first n ranks get one extra layer", tensorrt_llm/mapping.py): [16, 15, 15, 15]; also what training layouts
#:   and llama.cpp's layer split are sized with here (their own splits are not modelled).
STAGE_RULES = ("vllm", "sglang", "first")
STAGE_RULES_SOURCES = (
    "https://github.com/vllm-project/vllm/blob/main/vllm/distributed/utils.py",
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/distributed/utils.py",
    "https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/mapping.py",
)


def engine_stages(engine: str) -> str:
    """The :data:`STAGE_RULES` entry of a serving engine (vLLM's and SGLang's own; TensorRT-LLM and others ``first``)."""
    return engine if engine in ("vllm", "sglang") else "first"


def stage_layers(num_layers: int, pp: int, rule: str = "first") -> list[range]:
    """Contiguous layer ranges of each pipeline stage, the remainder placed by ``rule`` (:data:`STAGE_RULES`)."""
    base, extra = divmod(num_layers, pp)
    sizes = [base] * pp
    if rule == "vllm":
        for i in range(2, extra + 2):
            sizes[-i] += 1
    elif rule == "sglang":
        for i in range(1, extra + 1):
            sizes[-i] += 1
    elif rule == "first":
        for i in range(extra):
            sizes[i] += 1
    else:  # a caller's typo would otherwise read as "first" (review24 L6)
        raise ValueError(f"unknown pipeline stage rule {rule!r}")
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


@memoized
def size_weights(arch: Architecture, fmt: WeightFormat, par: Parallelism = Parallelism(), lm_head: bool = True) -> WeightSizes:
    """Weight bytes of ``arch`` stored as ``fmt`` and split by ``par``.

    ``lm_head=False``: the model as a pooling engine loads it (an embedding or scoring service), without the LM head:
    vLLM's pooling adapter deletes ``lm_head`` after building the model and skips its weights when loading
    (``_create_pooling_model_cls`` in ``vllm/model_executor/models/adapters.py``); a tied table is then a lookup alone.
    """
    # identical layers (the usual case) are computed once, and summed as one value times a count
    if _position_dependent(arch, fmt):
        alike, kind_of = _layer_kinds_by_bits(arch, fmt)  # per layer: its entry in ``kinds``
    else:
        alike, kind_of = _layer_kinds(arch, False)
    kinds = [_layer_bits(fmt, arch, layer, par) for layer in alike]
    expert_bits = _counted_sum(kind_of, [k[2] for k in kinds])
    embedding = fmt.embedding_bits(arch.hidden_size, tied=arch.tie_word_embeddings)
    embed_bits = arch.embedding_params * _top_bits(arch, fmt, "model.embed_tokens", embedding)
    head_params = arch.lm_head_params if lm_head else 0
    head_bits = head_params * _top_bits(arch, fmt, "lm_head", fmt.lm_head_bits(arch.hidden_size))
    other_bits = arch.other_params * fmt.other_bits() + arch.vision_params * 16
    files = arch.file_weights
    if files is not None and files.precision == fmt.name and len(files.layer_bytes) == arch.num_layers:
        shares = [kinds[k][1] / kinds[k][0] if kinds[k][0] else Fraction(1) for k in kind_of]
        return _sizes_from_files(files, arch, par, shares, lm_head)
    total = _counted_sum(kind_of, [k[0] for k in kinds]) + embed_bits + head_bits + other_bits
    held, read = _fullest_stage(
        arch,
        par,
        lambda layers: _counted_sum(kind_of[layers.start : layers.stop], [k[1] for k in kinds]),
        _Edges(
            embed_bits / par.tp,
            head_bits / par.tp,
            arch.other_params * fmt.other_bits(),
            Fraction(arch.vision_params * 16, par.vision_split),
        ),
        lm_head,
    )
    whole_bytes = [_bytes(k[0]) for k in kinds]
    expert_layer_bytes = [_bytes(k[2]) for k in kinds]
    return WeightSizes(
        total_bytes=_bytes(total),
        per_gpu_bytes=_bytes(held),
        per_gpu_read_bytes=_bytes(read),
        layer_bytes=tuple(whole_bytes[k] for k in kind_of),
        embedding_bytes=_bytes(embed_bits),
        lm_head_bytes=_bytes(head_bits),
        expert_bytes=_bytes(expert_bits),
        other_bytes=_bytes(other_bits),
        layer_expert_bytes=tuple(expert_layer_bytes[k] for k in kind_of),
    )


@memoized
def _layer_kinds(arch: Architecture, by_position: bool) -> tuple[tuple[Layer, ...], tuple[int, ...]]:
    """``arch``'s distinct layers (the first of each kind) and each layer's kind: its index among them.

    Layers are alike where their linears and other parameters are (and, ``by_position``, their index: a layer's bits
    then depend on it). Found once per architecture: :func:`size_weights` sizes each TP x PP layout of it, and hashing
    every layer's linears again took a large share of each (speed100).
    """
    seen: dict[object, int] = {}
    alike: list[Layer] = []
    kind_of: list[int] = []
    for layer in arch.layers:
        key = (layer.linears, layer.other_params, layer.number if by_position else None)
        if key not in seen:
            seen[key] = len(alike)
            alike.append(layer)
        kind_of.append(seen[key])
    return tuple(alike), tuple(kind_of)


@memoized
def _layer_kinds_by_bits(arch: Architecture, fmt: WeightFormat) -> tuple[tuple[Layer, ...], tuple[int, ...]]:
    """:func:`_layer_kinds` where a layer's bits depend on its index (:func:`_position_dependent`): alike by their bits.

    Layers are alike where everything :func:`_layer_bits` reads of them is: their linears, other parameters and state,
    and each linear's bits at that index (:func:`_linear_bits`: a GGUF mixture's type, a checkpoint's keep-list). A
    GGUF mixture gives most layers one of a few types (llama.cpp's ``use_more_bits`` layers apart), so a model's 94
    layers are sized as two or three kinds, not 94 (speed101: each layer's Fraction sums were most of sizing a GGUF).
    """
    seen: dict[object, int] = {}
    alike: list[Layer] = []
    kind_of: list[int] = []
    for layer in arch.layers:
        bits = tuple(_linear_bits(fmt, arch, layer, lin) for lin in layer.linears)
        key = (layer.linears, layer.other_params, layer.state, bits)
        if key not in seen:
            seen[key] = len(alike)
            alike.append(layer)
        kind_of.append(seen[key])
    return tuple(alike), tuple(kind_of)


class _Edges(NamedTuple):
    """What the first and last pipeline stages hold besides their decoder layers (one GPU's share, any unit)."""

    embedding: Fraction
    lm_head: Fraction
    #: The final norm (last stage).
    other: Fraction
    #: The vision tower (first stage).
    vision: Fraction


def _fullest_stage(
    arch: Architecture, par: Parallelism, layer_sum: Callable[[range], Fraction], edges: _Edges, lm_head: bool
) -> tuple[Fraction, Fraction]:
    """(held, streamed): the most any stage's GPU holds and the most any streams (two stages may differ under PP).

    Each stage holds its layers (``layer_sum`` of their range) and, on the first and last stage, the edges.

    The input embedding is a lookup (one row per token) and the vision tower runs once per image, so a forward
    pass does not stream them; tied to the LM head, the same table is multiplied by every token that needs
    logits, and with ``pp > 1`` the last stage holds a copy of its own (``lm_head``: the model has one).
    """
    tied_head = arch.tie_word_embeddings and lm_head
    held, read = [], []
    for stage, layers in enumerate(stage_layers(arch.num_layers, par.pp, par.stages)):
        stage_held = layer_sum(layers)
        lookup = Fraction(0)
        if stage == 0:
            stage_held += edges.embedding + edges.vision
            streamed_table = tied_head and par.pp == 1
            lookup = (0 if streamed_table else edges.embedding) + edges.vision
        if stage == par.pp - 1:
            stage_held += edges.lm_head + edges.other
            if tied_head and par.pp > 1:
                stage_held += edges.embedding  # the last stage needs its own copy of tied weights
        held.append(stage_held)
        read.append(stage_held - lookup)
    return max(held), max(read)


def _counted_sum(kind_of: Sequence[int], values: list[Fraction]) -> Fraction:
    """The sum of ``values[k]`` over ``kind_of``, exactly: each distinct value times how often it occurs."""
    counts = [0] * len(values)
    for k in kind_of:
        counts[k] += 1
    return sum((value * n for value, n in zip(values, counts, strict=True) if n), Fraction(0))


def _sizes_from_files(
    files: FileWeights, arch: Architecture, par: Parallelism, shard: list[Fraction], lm_head: bool
) -> WeightSizes:
    """The checkpoint's own bytes; each layer split over GPUs in the share the config's layout gives it."""
    head_bytes = files.lm_head_bytes if lm_head else 0
    held, read = _fullest_stage(
        arch,
        par,
        lambda layers: sum((files.layer_bytes[i] * shard[i] for i in layers), Fraction(0)),
        _Edges(
            Fraction(files.embedding_bytes, par.tp),
            Fraction(head_bytes, par.tp),
            Fraction(files.other_bytes),
            Fraction(files.vision_bytes, par.vision_split),
        ),
        lm_head,
    )
    return WeightSizes(
        total_bytes=files.total_bytes - files.lm_head_bytes + head_bytes,
        per_gpu_bytes=math.ceil(held),
        per_gpu_read_bytes=math.ceil(read),
        layer_bytes=files.layer_bytes,
        embedding_bytes=files.embedding_bytes,
        lm_head_bytes=head_bytes,
        expert_bytes=sum(files.layer_expert_bytes),
        other_bytes=files.other_bytes + files.vision_bytes,
        layer_expert_bytes=files.layer_expert_bytes,
    )


def _top_bits(arch: Architecture, fmt: WeightFormat, module: str, default: Fraction) -> Fraction:
    quant = listing(arch, fmt)
    if quant is not None and quant.keeps(*checkpoint_names(module)):
        return Fraction(fmt.high_bits)
    return default
