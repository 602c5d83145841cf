"""Weight formats: bits per weight, with the real metadata overheads, counted exactly.

Every format says which tensors it quantizes. Bits are ``Fraction``s so that 4-bit sizes
never go through integer division (the ``4 // 8 == 0`` trap).

Sources for the metadata overheads:
- GPTQ / AWQ: one fp16 scale and one packed 4-bit zero point per group of ``group_size``
  input weights (AutoGPTQ ``qzeros`` / ``scales`` tensors; default group 128); GPTQ stores ``qzeros`` even when
  ``sym`` is true, AWQ's GEMM layout always. A symmetric compressed-tensors scheme (``pack-quantized``,
  ``"symmetric": true``) stores no zero point: 4 + 16 / group bits (vLLM ``CompressedTensorsWNA16.create_weights``
  registers ``weight_zero_point`` only ``if not self.symmetric``).
- NF4: one fp32 absmax per 64 weights; with double quantization an 8-bit absmax plus one
  fp32 second-level scale per 256 blocks = 0.127 bits/param (QLoRA paper, arXiv:2305.14314 §3).
- MXFP4: 4-bit E2M1 elements with one 8-bit E8M0 scale per block of 32 (OCP MX spec v1.0).
- NVFP4: 4-bit E2M1 elements with one 8-bit E4M3 scale per block of 16, plus one fp32 scale per
  tensor (NVIDIA, "Introducing NVFP4", developer.nvidia.com/blog/introducing-nvfp4-for-efficient-
  and-accurate-low-precision-inference; TensorRT Model Optimizer ``NVFP4`` / compressed-tensors
  ``nvfp4-pack-quantized``).
- FP8 per channel (``fbgemm_fp8``, compressed-tensors ``strategy: channel``): one fp32 scale per
  output row.

Compute path (``compute``): W8A8 and W4A4 formats (``fp8*``, ``int8``, ``nvfp4``) run at the GPU's
dense tensor rate of that precision when it has one; weight-only formats (GPTQ/AWQ, NF4, MXFP4 as
vLLM runs gpt-oss, GGUF) dequantize to bf16 and run at the bf16 rate. A GPU without the format's
rate (NVFP4 on Hopper: Marlin W4A16; FP8 on Ampere: W8A16) falls back to its bf16 rate. Where the
dequantization happens inside the GEMM's main loop (``dequantized_unless``: GPTQ/AWQ always, MXFP4
without FP4 tensor cores, and every fallback) the GEMM reaches ``dequant_gemm_efficiency_ratio`` of
the rate (:func:`generator.sizing.performance.accelerator_for`).
- FP8 block (DeepSeek-V3): one fp32 scale per 128x128 block (``weight_block_size``).
- GGUF: ggml's block sizes and llama.cpp's type of each tensor per file type (K-quants, i-quants, MXFP4_MOE), in
  :mod:`generator.sizing.gguf_mixture`; 1-D tensors stay F32.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.sizing import gguf_mixture
from generator.sizing.architecture import ATTENTION, EXPERT, ROUTER, Linear
from generator.sizing.gguf_mixture import (
    NO_MODEL_FACTS,
    GgufModel,
    gguf_base,
    output_type,
    tensor_type,
    token_embd_type,
)

#: Bits per weight of each ggml block type (:mod:`generator.sizing.gguf_mixture`'s, read from here as well).
GGUF_TYPE_BITS = gguf_mixture.GGUF_TYPE_BITS


class WeightFormat(NamedTuple):
    """How a checkpoint stores its weights."""

    name: str
    description: str
    #: Bits per quantized weight, before scales.
    bits: Fraction
    #: Metadata bits (scales, zero points) per group of ``group_size`` weights.
    scale_bits: Fraction = Fraction(0)
    #: Weights per scale group along the input dimension; ``None``: one scale per output row.
    group_size: int | None = None
    #: 2-D block (rows = cols) sharing one scale, for block-wise FP8.
    block: int | None = None
    #: Bits of tensors the format leaves alone (embeddings, norms, routers).
    high_bits: int = 16
    #: Which GGUF mixture this is, if any.
    gguf: str | None = None
    #: Precision the matmuls run in (the tensor-core rate of the roofline): ``fp8``/``fp4`` for W8A8/W4A4.
    compute: str = "bf16"
    #: Bits of one scale kept per whole matrix (NVFP4's fp32 tensor scale).
    tensor_scale_bits: int = 0
    #: Meta's FP8 recipe as vLLM's fbgemm_fp8 method holds it: attention, routed experts and every matrix of the first
    #: and last decoder layers stay 16-bit.
    fbgemm_recipe: bool = False
    #: An engine's padding of each rank's routed-expert matrices as loaded: (intermediate size multiple, hidden size
    #: multiple); None: held as stored (:mod:`generator.sizing.loaded_weights`).
    expert_padding: tuple[int, int] | None = None
    #: Of ``scale_bits``, the zero point's: what a checkpoint that stores none (a symmetric compressed-tensors
    #: scheme) does not hold.
    zero_bits: Fraction = Fraction(0)
    #: Weight-only formats the serving engines multiply with mixed-input kernels (Marlin, Machete, Triton
    #: ``matmul_ogs``): each weight tile is dequantized to 16-bit inside the GEMM's main loop, unless the GPU has the
    #: tensor rate named here, with which it multiplies the format as stored ("": on every GPU). None: the weights are
    #: multiplied as stored, or dequantized apart from the GEMM (bitsandbytes NF4, llama.cpp's GGUF kernels).
    dequantized_unless: str | None = None
    #: Whether the engine's mixed-input kernel applies zero points (an AWQ checkpoint, an asymmetric GPTQ or
    #: compressed-tensors one: :func:`generator.sizing.loaded_weights.loaded_format`), which Machete does not take.
    kernel_zero_points: bool = False

    def __hash__(self) -> int:
        """Hash of the name and group size, not the ``Fraction`` fields (slow to hash); equality compares every field."""
        return hash((self.name, self.group_size, self.gguf))

    @property
    def is_quantized(self) -> bool:
        """Whether linear weights are stored below 16 bit."""
        return self.bits < 16

    def linear_bits(self, linear: Linear, layer_index: int, n_layers: int, model: GgufModel = NO_MODEL_FACTS) -> Fraction:
        """Effective bits per weight of one matrix, metadata included (``model``: what a GGUF type reads of the model)."""
        if self.gguf:
            return GGUF_TYPE_BITS[tensor_type(self.gguf, linear, layer_index, n_layers, model)]
        if not self.is_quantized:
            return self.bits
        if linear.group == ROUTER:
            return Fraction(self.high_bits)
        edge = layer_index in (0, n_layers - 1)
        if self.fbgemm_recipe and (linear.group in (ATTENTION, EXPERT) or edge):
            # routed experts too: vLLM's fbgemm_fp8 method quantizes linear layers only, and FusedMoE then holds
            # 16-bit experts (fbgemm_fp8.py get_quant_method returns None for them; fuzz18 item 8)
            return Fraction(self.high_bits)
        if self.block:
            return self.bits + self.scale_bits / (self.block * self.block)
        group = self.group_size or linear.in_features
        return self.bits + self.scale_bits / group + Fraction(self.tensor_scale_bits, linear.in_features * linear.out_features)

    def embedding_bits(self, hidden: int, tied: bool = False) -> Fraction:
        """Bits per weight of the input embedding (rows of ``hidden``; ``tied``: it is the output projection too)."""
        if self.gguf and tied:  # llama.cpp quantizes a tied token_embd as the output tensor it also is
            return self.lm_head_bits(hidden)
        if self.gguf:
            return GGUF_TYPE_BITS[token_embd_type(self.gguf, hidden)]
        return Fraction(self.high_bits)  # GPTQ/AWQ, bitsandbytes, FP8 and MXFP4 checkpoints keep embeddings unquantized

    def lm_head_bits(self, hidden: int) -> Fraction:
        """Bits per weight of the output projection (rows of ``hidden``)."""
        if self.gguf:
            return GGUF_TYPE_BITS[output_type(self.gguf, hidden)]
        return self.embedding_bits(hidden)

    def other_bits(self) -> Fraction:
        """Bits per element of norms, biases and other 1-D tensors."""
        return Fraction(self.high_bits)


def _gguf(name: str, ftype: str, text: str) -> WeightFormat:
    """A GGUF file type (llama-quantize's), its bits those of its default tensor type."""
    return WeightFormat(name, text, GGUF_TYPE_BITS[gguf_base(ftype)], gguf=ftype, high_bits=32)


#: Every weight format specgen knows, by the name users write.
WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.name: f
    for f in (
        WeightFormat("fp32", "32-bit float", Fraction(32), high_bits=32, compute="fp32"),
        WeightFormat("bf16", "bfloat16", Fraction(16)),
        WeightFormat("fp16", "float16", Fraction(16), compute="fp16"),
        WeightFormat("fp8", "FP8 E4M3 weights, per-tensor scale (w8a8)", Fraction(8), compute="fp8"),
        WeightFormat(
            "fp8-channel",
            "FP8 E4M3 with one fp32 scale per output channel (w8a8, fbgemm_fp8)",
            Fraction(8),
            Fraction(32),
            compute="fp8",
        ),
        # what Meta's FP8 checkpoints quantize: "We do not quantize parameters in the self-attention layers" and "we do
        # not perform quantization in the first and last Transformer layers" (Llama 3 paper, section 6.2,
        # https://arxiv.org/abs/2407.21783); Llama-3.1-405B-Instruct-FP8's modules_to_not_convert lists exactly those
        WeightFormat(
            "fbgemm-fp8",
            "FP8 E4M3 per output channel, Meta's recipe: attention and the first and last decoder layers stay BF16",
            Fraction(8),
            Fraction(32),
            compute="fp8",
            fbgemm_recipe=True,
        ),
        WeightFormat(
            "fp8-block", "FP8 E4M3 with one fp32 scale per 128x128 block", Fraction(8), Fraction(32), block=128, compute="fp8"
        ),
        WeightFormat(
            "int8", "INT8 weights with one fp32 scale per output channel (w8a8)", Fraction(8), Fraction(32), compute="int8"
        ),
        WeightFormat(
            "int8-gptq",
            "GPTQ 8-bit, fp16 scale + 8-bit zero per 128 weights",
            Fraction(8),
            Fraction(24),
            128,
            zero_bits=Fraction(8),
            dequantized_unless="",
        ),
        WeightFormat(
            "int4",
            "INT4 GPTQ/AWQ, fp16 scale + 4-bit zero per group of 128",
            Fraction(4),
            Fraction(20),
            128,
            zero_bits=Fraction(4),
            dequantized_unless="",
        ),
        WeightFormat(
            "nf4", "bitsandbytes NF4 with double quantization (QLoRA)", Fraction(4), Fraction(8) + Fraction(32, 256), 64
        ),
        WeightFormat("nf4-no-double-quant", "bitsandbytes NF4, fp32 absmax per 64", Fraction(4), Fraction(32), 64),
        # Blackwell multiplies MXFP4 on its FP4 / FP8 tensor cores (TensorRT-LLM's W4A8_MXFP4_MXFP8); Hopper and CDNA3
        # dequantize it in the loop (Triton matmul_ogs, Marlin MXFP4, aiter's W4A16)
        WeightFormat("mxfp4", "OCP MXFP4: E2M1 + E8M0 scale per 32", Fraction(4), Fraction(8), 32, dequantized_unless="fp4"),
        WeightFormat(
            "nvfp4",
            "NVIDIA NVFP4: E2M1 + E4M3 scale per 16 + fp32 per tensor (w4a4)",
            Fraction(4),
            Fraction(8),
            16,
            compute="fp4",
            tensor_scale_bits=32,
        ),
        _gguf("q8_0", "Q8_0", "GGUF Q8_0"),
        _gguf("q6_k", "Q6_K", "GGUF Q6_K"),
        _gguf("q5_k_m", "Q5_K_M", "GGUF Q5_K_M mixture"),
        _gguf("q5_k_s", "Q5_K_S", "GGUF Q5_K_S (Q5_K throughout, output Q6_K)"),
        _gguf("q5_1", "Q5_1", "GGUF Q5_1"),
        _gguf("q5_0", "Q5_0", "GGUF Q5_0"),
        _gguf("q4_k_m", "Q4_K_M", "GGUF Q4_K_M mixture"),
        _gguf("q4_k_s", "Q4_K_S", "GGUF Q4_K_S mixture (Q4_K, the first eighth's ffn_down and four attn_v Q5_K)"),
        _gguf("q4_1", "Q4_1", "GGUF Q4_1"),
        _gguf("q4_0", "Q4_0", "GGUF Q4_0"),
        _gguf("q3_k_l", "Q3_K_L", "GGUF Q3_K_L mixture (Q3_K, attn_v / attn_output / ffn_down Q5_K)"),
        _gguf("q3_k_m", "Q3_K_M", "GGUF Q3_K_M mixture"),
        _gguf("q3_k_s", "Q3_K_S", "GGUF Q3_K_S (Q3_K throughout, output Q6_K)"),
        _gguf("q2_k", "Q2_K", "GGUF Q2_K mixture"),
        _gguf("q2_k_s", "Q2_K_S", "GGUF Q2_K_S mixture (Q2_K, the first eighth's ffn_down Q4_K)"),
        # llama.cpp's i-quants (importance-matrix quants), most bits first
        _gguf("iq4_nl", "IQ4_NL", "GGUF IQ4_NL mixture (4.5-bit non-linear blocks of 32)"),
        _gguf("iq4_xs", "IQ4_XS", "GGUF IQ4_XS mixture (4.25 bits)"),
        _gguf("iq3_m", "IQ3_M", "GGUF IQ3_M mixture (IQ3_S, attn_v and attn_output Q4_K)"),
        _gguf("iq3_s", "IQ3_S", "GGUF IQ3_S mixture (3.4375 bits)"),
        _gguf("iq3_xs", "IQ3_XS", "GGUF IQ3_XS mixture (IQ3_S with IQ3_XXS in the middle layers)"),
        _gguf("iq3_xxs", "IQ3_XXS", "GGUF IQ3_XXS mixture (3.0625 bits)"),
        _gguf("iq2_m", "IQ2_M", "GGUF IQ2_M mixture (IQ2_S, 2.5625 bits)"),
        _gguf("iq2_s", "IQ2_S", "GGUF IQ2_S mixture (IQ2_XS with IQ3_S ffn_down in the first eighth)"),
        _gguf("iq2_xs", "IQ2_XS", "GGUF IQ2_XS mixture (2.3125 bits)"),
        _gguf("iq2_xxs", "IQ2_XXS", "GGUF IQ2_XXS mixture (2.0625 bits)"),
        _gguf("iq1_m", "IQ1_M", "GGUF IQ1_M mixture (1.75 bits)"),
        _gguf("iq1_s", "IQ1_S", "GGUF IQ1_S mixture (1.5625 bits)"),
        # llama.cpp's gpt-oss file: routed experts MXFP4, every other matrix Q8_0
        _gguf("mxfp4_moe", "MXFP4_MOE", "GGUF MXFP4_MOE: MXFP4 routed experts, Q8_0 other matrices"),
    )
}

#: Other names users write for a format. ``q3_k`` / ``q4_k`` / ``q5_k`` are llama-quantize's own aliases
#: ("Q4_K : alias for Q4_K_M", QUANT_OPTIONS in https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp);
#: ``f16`` / ``f32`` are llama.cpp's names of the float files (llama-quantize's F16 / F32, fix152).
WEIGHT_FORMAT_ALIASES: dict[str, str] = {
    "fp4": "nvfp4",
    "modelopt-fp4": "nvfp4",
    "q3_k": "q3_k_m",
    "q4_k": "q4_k_m",
    "q5_k": "q5_k_m",
    "f16": "fp16",
    "f32": "fp32",
}

#: The aliases that are llama.cpp's names although their format is not a GGUF quantization.
_LLAMA_CPP_FLOAT_NAMES = frozenset({"f16", "f32"})

#: Formats that share one storage family: a checkpoint's keep-list holds for any of them.
_STORAGE_FAMILY: dict[str, str] = {"fp8": "fp8", "fp8-channel": "fp8", "fbgemm-fp8": "fp8", "fp8-block": "fp8"}


def storage_family(name: str) -> str:
    """The storage family of a format name (FP8 per tensor, channel or block all count as ``fp8``)."""
    return _STORAGE_FAMILY.get(name, name)


def same_storage(a: str, b: str) -> bool:
    """Whether two format names quantize the same way (FP8 per tensor, channel or block all count as FP8)."""
    return storage_family(a) == storage_family(b)


#: Precisions a KV cache can be stored in, bits per element.
KV_CACHE_BITS: dict[str, int] = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8}


TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import TypeVar

    _T = TypeVar("_T")


def lookup(
    table: Mapping[str, _T], name: str, what: str, aliases: Mapping[str, str] | None = None, *, suggested: bool = True
) -> _T:
    """``table[name]`` case-insensitively, through ``aliases``; raises :class:`InputError` listing the choices.

    ``suggested``: the error also says the close names (``llama_factory``: did you mean 'llama-factory'), as the
    workload's errors do; off where the caller tells what the name is instead.
    """
    aliases = aliases or {}
    key = name.lower()
    try:
        return table[aliases.get(key, key)]
    except KeyError:
        from generator.catalog import suggest  # the workload's own "did you mean" (newuser89 left item 2)

        names = sorted({*table, *aliases})
        raise InputError(
            f"unknown {what} '{name}'; choose one of {', '.join(names)}{suggest(name, names) if suggested else ''}"
        ) from None


def alias_note(name: str) -> str:
    """``q4_k is llama-quantize's name for q4_k_m: ...`` where ``name`` is an alias of another format; else ''."""
    canonical = WEIGHT_FORMAT_ALIASES.get(name.lower())
    if canonical is None:
        return ""
    whose = "llama-quantize's" if WEIGHT_FORMATS[canonical].gguf or name.lower() in _LLAMA_CPP_FLOAT_NAMES else "another"
    return f"precision {name} is {whose} name for {canonical}: sized and shown as {canonical}"


def weight_format(name: str) -> WeightFormat:
    """Look up a weight format by name; raises :class:`InputError` listing the choices."""
    return lookup(WEIGHT_FORMATS, name, "precision", WEIGHT_FORMAT_ALIASES)


def auto_kv_cache_precision(weights: str | None) -> str:
    """The KV cache precision vLLM's and SGLang's ``auto`` gives weights of format ``weights``.

    Their 16- or 32-bit float type, by any name (fix153: ``f16``, llama.cpp's name of fp16, was cached in bf16 where
    ``fp16`` was cached in fp16, while ``--dtype float16`` caches in float16 whatever it is called); bf16 for quantized
    (or unnamed) ones.
    """
    canonical = WEIGHT_FORMAT_ALIASES.get(weights, weights) if weights else weights
    return canonical if canonical in ("fp16", "fp32") else "bf16"


#: The 16-bit float formats and the ``torch_dtype`` a checkpoint's config names them by.
_HALF_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
_HALF_DTYPE_ALIASES = {"half": "float16"}


def float16_cast_note(checkpoint_dtype: str, weights: str) -> str | None:
    """The warning vLLM and SGLang log serving a checkpoint in the other 16-bit float, else None.

    ``checkpoint_dtype``: the config's ``torch_dtype``; ``weights``: the format served (``--dtype float16`` for fp16).
    Both engines' ``_get_and_verify_dtype`` allow the cast with a warning, ``Casting torch.bfloat16 to torch.float16.``
    (https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py; SGLang's
    python/sglang/srt/configs/model_config.py has the same branch): the same two bytes a weight, but bfloat16 has
    float32's 8-bit exponent and 8 bits of precision, float16 a 5-bit exponent (largest 65,504) and 11 bits.
    """
    served = _HALF_DTYPES.get(WEIGHT_FORMAT_ALIASES.get(weights, weights))
    stored = _HALF_DTYPE_ALIASES.get(checkpoint_dtype, checkpoint_dtype)
    if served is None or stored not in _HALF_DTYPES.values() or stored == served:
        return None
    risk = (
        "bfloat16 values past float16's largest (65,504) overflow to inf, so check the model's outputs in float16"
        if served == "float16"
        else "bfloat16 keeps 8 bits of mantissa where float16 keeps 11, so the weights lose precision"
    )
    return (
        f"warning: the checkpoint is {stored} (config.json torch_dtype) and {weights} serves it as {served}: vLLM and "
        f"SGLang cast it on load, logging 'Casting torch.{stored} to torch.{served}.' (the same bytes; {risk})"
    )


#: How vLLM and SGLang take a GGUF model: as the file, never made from a checkpoint (fix153).
_GGUF_SERVING = {
    "vllm": (
        "vLLM makes no GGUF of a checkpoint: it serves a .gguf file given as the model (vllm serve ./model-Q4_K_M.gguf "
        "--tokenizer <the base model>), one file only (merge a split one with llama-gguf-split --merge), its GGUF support "
        "'highly experimental and under-optimized' and now the vllm-gguf-plugin package "
        "(https://docs.vllm.ai/en/latest/features/quantization/gguf/)"
    ),
    "sglang": (
        "SGLang makes no GGUF of a checkpoint: it serves a .gguf file given as the model path, loaded by its gguf loader "
        "(--load-format gguf, detected from the path: https://docs.sglang.io/docs/advanced_features/model_loading.md)"
    ),
}


def gguf_serving_note(name: str, engine: str) -> str | None:
    """What ``engine`` (vllm / sglang) does with ``name`` where it is a GGUF type, and the way to serve one; else None.

    A workload's ``precision: q4_k_m`` on a 16-bit checkpoint was told to point ``model`` at "a local config.json with
    its quantization_config", which no GGUF has: the engines take the .gguf file itself.
    """
    fmt = WEIGHT_FORMATS.get(WEIGHT_FORMAT_ALIASES.get(name.lower(), name.lower()))
    if fmt is None or fmt.gguf is None or engine not in _GGUF_SERVING:
        return None
    return (
        f"{_GGUF_SERVING[engine]}; point model at a {fmt.gguf} .gguf file of it (sized as that file's tensors), or plan "
        "it on llama.cpp (hardware.fixed)"
    )


def no_int8_kv_cache(engine_name: str) -> str:
    """Why an int8 KV cache is refused for a serving engine (llama.cpp's q8_0 is the only int8 cache sized)."""
    return f"{engine_name} has no int8 KV cache (its cache dtypes are bf16 / fp16 and fp8)"


#: llama.cpp's cache type names (``-ctk``) and the KV cache precision each is here (newuser29 item 13).
LLAMA_CPP_KV_NAMES = {"q8_0": "int8", "f16": "fp16", "f32": "fp32"}


def kv_cache_bits(name: str) -> int:
    """Bits per KV element for a KV-cache precision name; llama.cpp's own names are told theirs here."""
    ours = LLAMA_CPP_KV_NAMES.get(name.lower())
    try:
        return lookup(KV_CACHE_BITS, name, "KV cache precision", suggested=ours is None)
    except InputError as exc:
        raise InputError(exc.message + (f" (llama.cpp's {name} cache is {ours} here)" if ours else "")) from None
