"""GGUF files as llama.cpp writes them: the bits of each ggml block type and the type of each tensor per file type.

Block sizes are ggml's block structs and their ``static_assert`` sizes (``ggml/src/ggml-common.h``,
https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-common.h; ``QK_K`` = 256): Q8_0 34 B per 32 weights,
Q4_0 and IQ4_NL 18 B / 32, Q5_0 22 B / 32, Q5_1 24 B / 32, MXFP4 17 B / 32; per 256 weights Q2_K 84 B, Q3_K 110,
Q4_K 144, Q5_K 176, Q6_K 210, IQ1_S 50 (1.5625 bits a weight), IQ1_M 56 (1.75), IQ2_XXS 66 (2.0625), IQ2_XS 74
(2.3125), IQ2_S 82 (2.5625), IQ3_XXS 98 (3.0625), IQ3_S 110 (3.4375), IQ4_XS 136 (4.25).

The type of each tensor under a file type (``llama-quantize``'s ftype) is ``llama_tensor_get_type`` of
https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp, ported for the tensors specgen's architectures
hold:

- the ftype's default type (``llama_ftype_get_default_type``: IQ2_S files default to IQ2_XS, IQ2_M to IQ2_S, IQ3_XS
  and IQ3_M to IQ3_S, MXFP4_MOE to MXFP4), raised for the tensors quantization hurts most: ``attn_v`` and
  ``ffn_down`` in some layers, ``attn_output``, ``attn_k`` of 8-expert models, and in a 70B model (llama.cpp's
  ``LLM_TYPE_70B``: a Llama or Qwen2 of 80 layers) ``attn_v`` of Q3_K / Q4_K to Q5_K; the _S / _L variants of a
  K-quant share its default type and differ in those raises (Q3_K_S none; Q3_K_L ``attn_v``, ``attn_output`` and
  ``ffn_down`` Q5_K; Q4_K_S the first four ``attn_v`` and the first eighth's ``ffn_down`` Q5_K; Q5_K_S none; Q2_K_S,
  Q2_K's default, ``attn_v`` Q4_K where 4 or more query heads share a KV head and the first eighth's ``ffn_down``
  Q4_K, where Q2_K raises ``attn_v``, every ``ffn_down`` and ``attn_output`` to Q3_K at least), and
  Q4_1 / Q5_0 / Q5_1 are their one type throughout (Q5_0 made without an importance matrix, as Q4_0);
- ``output.weight`` Q6_K (Q5_K for the 1- and 2-bit i-quants and IQ3_XXS, Q8_0 for Q8_0 and MXFP4_MOE); an untied
  ``token_embd`` the default type, Q2_K for IQ1_S / IQ1_M / IQ2_XXS / IQ2_XS and IQ3_S for IQ2_S / IQ2_M / IQ3_XXS,
  Q8_0 for MXFP4_MOE; a tied one the output's type;
- MXFP4_MOE (llama.cpp's gpt-oss file type): routed experts (3-D tensors) MXFP4, every other matrix Q8_0;
- routers (``ffn_gate_inp``) are never quantized: F32 as ``convert_hf_to_gguf.py`` writes them; norms and biases F32;
- a row no block of the type divides falls back (``tensor_type_fallback``): 256-weight i-quants to IQ4_NL, Q2_K /
  Q3_K to a 4.5-bit 32-weight type (Q4_0 now, IQ4_NL before: the same 18 B), Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0,
  and F16 where 32 does not divide the row either.

The 1- to 3-bit i-quants need an importance matrix (``tensor_requires_imatrix``), and published IQ4_XS / IQ4_NL files
are made with one, so the i-quants are sized as made with it (it keeps IQ3_XXS's ``attn_v`` IQ3_XXS and the first
eighth of IQ4_XS's ``ffn_down`` at IQ4_XS); the K-quants and Q4_0 as made without (Q4_0 with one makes the first
eighth's ``ffn_down`` Q4_1). DeepSeek's ``attn_kv_b`` is sized at the default type, as llama.cpp quantized it when the
published DeepSeek-V3 Q4_K_M (376.65 GiB in llama-bench, https://github.com/ggml-org/llama.cpp/issues/10981) was made.
"""

from __future__ import annotations

from fractions import Fraction

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import EXPERT, ROUTER, SHARED_EXPERT, Architecture, Linear
from generator.sizing.memo import memoized

#: (weights per block, bytes per block) of each ggml type (ggml-common.h).
GGUF_BLOCKS: dict[str, tuple[int, int]] = {
    "F32": (1, 4),
    "F16": (1, 2),
    "Q8_0": (32, 34),
    "Q6_K": (256, 210),
    "Q5_K": (256, 176),
    "Q4_K": (256, 144),
    "Q4_0": (32, 18),
    "Q4_1": (32, 20),
    "Q3_K": (256, 110),
    "Q2_K": (256, 84),
    "Q5_0": (32, 22),
    "Q5_1": (32, 24),
    "IQ4_NL": (32, 18),
    "IQ4_XS": (256, 136),
    "IQ3_S": (256, 110),
    "IQ3_XXS": (256, 98),
    "IQ2_S": (256, 82),
    "IQ2_XS": (256, 74),
    "IQ2_XXS": (256, 66),
    "IQ1_M": (256, 56),
    "IQ1_S": (256, 50),
    "MXFP4": (32, 17),
}
#: Bits per weight of each ggml type (bytes per block x 8 / weights per block).
GGUF_TYPE_BITS: dict[str, Fraction] = {name: Fraction(size * 8, weights) for name, (weights, size) in GGUF_BLOCKS.items()}

#: The type a tensor of an unsuited row length falls back to (``tensor_type_fallback``).
_FALLBACK = {
    **dict.fromkeys(("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS"), "IQ4_NL"),
    "Q2_K": "Q4_0",
    "Q3_K": "Q4_0",
    "Q4_K": "Q5_0",
    "Q5_K": "Q5_1",
    "Q6_K": "Q8_0",
}

#: Each file type specgen sizes (``LLAMA_FTYPE_MOSTLY_<name>``) and its default tensor type.
FTYPE_DEFAULTS: dict[str, str] = {
    "Q8_0": "Q8_0",
    "Q6_K": "Q6_K",
    "Q5_K_M": "Q5_K",
    "Q5_K_S": "Q5_K",
    "Q5_1": "Q5_1",
    "Q5_0": "Q5_0",
    "Q4_K_M": "Q4_K",
    "Q4_K_S": "Q4_K",
    "Q4_1": "Q4_1",
    "Q4_0": "Q4_0",
    "Q3_K_L": "Q3_K",
    "Q3_K_M": "Q3_K",
    "Q3_K_S": "Q3_K",
    "Q2_K": "Q2_K",
    "Q2_K_S": "Q2_K",
    "IQ4_NL": "IQ4_NL",
    "IQ4_XS": "IQ4_XS",
    "IQ3_M": "IQ3_S",
    "IQ3_S": "IQ3_S",
    "IQ3_XS": "IQ3_S",
    "IQ3_XXS": "IQ3_XXS",
    "IQ2_M": "IQ2_S",
    "IQ2_S": "IQ2_XS",
    "IQ2_XS": "IQ2_XS",
    "IQ2_XXS": "IQ2_XXS",
    "IQ1_M": "IQ1_M",
    "IQ1_S": "IQ1_S",
    "MXFP4_MOE": "MXFP4",
}
#: The 1- and 2-bit i-quant file types, which llama.cpp raises by rules of their own.
_LOW_IQ = frozenset({"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ1_S", "IQ1_M"})
#: File types whose output tensor is Q5_K rather than Q6_K.
_Q5_K_OUTPUT = _LOW_IQ | {"IQ3_XXS"}
#: File types whose attn_output llama.cpp raises to Q5_K in an 8-expert model (Mixtral).
_EIGHT_EXPERT_Q5_K_OUTPUT = frozenset(
    {"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS"}
)


class GgufModel(NamedTuple):
    """What ``llama_tensor_get_type`` reads of the model besides the tensor itself."""

    #: Query heads per KV head (``n_gqa``); 1 where it has none (MLA).
    gqa: int = 1
    #: Routed experts of a MoE layer (``n_expert``); 0 for a dense model.
    experts: int = 0
    #: llama.cpp names the model 70B (``LLM_TYPE_70B``).
    is_70b: bool = False
    #: ``ffn_down`` tensors in the layers before each layer, as the 1- and 2-bit i-quants count them (in llama.cpp's
    #: tensor order: by layer, then name); empty: one per layer.
    downs_before: tuple[int, ...] = ()

    def down_index(self, layer: int, linear: Linear) -> int:
        """The counter llama.cpp's i-quant rules give this ``ffn_down`` tensor (``qs.i_ffn_down``).

        In a layer, ``ffn_down_exps`` sorts before ``ffn_down_shexp``.
        """
        if not self.downs_before:
            return layer
        return self.downs_before[layer] + (1 if linear.group == SHARED_EXPERT else 0)


#: No facts of a model: a dense one with one KV head per query head.
NO_MODEL_FACTS = GgufModel()


def gguf_base(ftype: str) -> str:
    """The default tensor type of a file type."""
    return FTYPE_DEFAULTS[ftype]


def row_type(block_type: str, row: int) -> str:
    """The type a tensor of rows ``row`` weights long is stored in when ``block_type`` is wanted."""
    weights = GGUF_BLOCKS[block_type][0]
    if row % weights == 0:
        return block_type
    fallback = _FALLBACK.get(block_type, "F16")
    return fallback if row % GGUF_BLOCKS[fallback][0] == 0 else "F16"


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp's ``use_more_bits``: the first and last eighth of layers, and every third between."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def output_type(ftype: str, row: int) -> str:
    """The type of ``output.weight`` (and of a ``token_embd`` tied to it), rows of ``row`` weights."""
    base = gguf_base(ftype)
    if ftype == "MXFP4_MOE" or row % GGUF_BLOCKS[base][0]:
        kind = "Q8_0"
    elif ftype in _Q5_K_OUTPUT:
        kind = "Q5_K"
    else:
        kind = "Q8_0" if base == "Q8_0" else "Q6_K"
    return row_type(kind, row)


def token_embd_type(ftype: str, row: int) -> str:
    """The type of an untied ``token_embd.weight``."""
    if ftype == "MXFP4_MOE":
        kind = "Q8_0"
    elif ftype in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
        kind = "Q2_K"
    elif ftype in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
        kind = "IQ3_S"
    else:
        kind = gguf_base(ftype)
    return row_type(kind, row)


#: llama.cpp's tensor category of a matrix by its name's last part (``tensor_get_category``); "other" for the rest.
_CATEGORIES = {
    "v_proj": "attn_v",
    "k_proj": "attn_k",
    "q_proj": "attn_q",
    "o_proj": "attn_output",
    "down_proj": "ffn_down",
    "gate_proj": "ffn_gate",
    "up_proj": "ffn_up",
}


def _category(linear: Linear) -> str:
    """llama.cpp's tensor category of a matrix (``tensor_get_category``)."""
    return _CATEGORIES.get(linear.name.rsplit(".", 1)[-1], "other")


def tensor_type(ftype: str, linear: Linear, layer: int, n_layers: int, model: GgufModel) -> str:
    """The ggml type llama.cpp stores a decoder-layer matrix in under file type ``ftype`` (its row fallback applied)."""
    if linear.group == ROUTER:
        return "F32"
    return row_type(_chosen_type(ftype, linear, layer, n_layers, model), linear.in_features)


def _chosen_type(ftype: str, linear: Linear, i: int, n: int, model: GgufModel) -> str:
    base = gguf_base(ftype)
    category = _category(linear)
    if ftype == "MXFP4_MOE":
        return "MXFP4" if linear.group == EXPERT else "Q8_0"
    if ftype in _LOW_IQ:
        return _low_iq_type(ftype, base, category, linear, i, n, model)
    if category == "attn_v":
        return _attn_v_type(ftype, base, i, n, model)
    if category == "attn_k":
        if model.experts == 8:
            return "Q8_0"
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(ftype, base)
    if category == "attn_q":
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(ftype, base)
    if category == "ffn_down":
        return _ffn_down_type(ftype, base, i, n, model)
    if category == "attn_output":
        if model.experts == 8:
            return "Q5_K" if ftype in _EIGHT_EXPERT_Q5_K_OUTPUT else base
        return {"Q2_K": "Q3_K", "IQ3_XXS": "IQ3_S", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K", "IQ3_M": "Q4_K"}.get(ftype, base)
    if category in ("ffn_gate", "ffn_up") and ftype == "IQ3_XS" and n // 8 <= i < 7 * n // 8:
        return "IQ3_XXS"
    return base


def _low_iq_type(ftype: str, base: str, category: str, linear: Linear, i: int, n: int, model: GgufModel) -> str:
    """The 1- and 2-bit i-quants' own rules."""
    raised = "IQ3_S" if ftype in ("IQ2_S", "IQ2_M") else "Q2_K"
    if category == "attn_v":
        return "Q4_K" if model.gqa >= 4 or model.experts >= 4 else raised
    if category == "attn_k" and model.experts == 8:
        return "Q4_K"
    if category == "ffn_down":
        return raised if model.down_index(i, linear) < n // 8 else base
    if category == "attn_output":
        if model.experts == 8:
            return "Q5_K"
        return {"IQ1_S": "IQ2_XXS", "IQ1_M": "IQ2_XXS", "IQ2_S": "IQ3_S", "IQ2_M": "IQ3_S"}.get(ftype, base)
    return base


def _attn_v_type(ftype: str, base: str, i: int, n: int, model: GgufModel) -> str:
    kind = base
    wide = model.gqa >= 4
    if ftype == "Q2_K":
        kind = "Q4_K" if wide else "Q3_K"
    elif ftype == "Q2_K_S" and wide:
        kind = "Q4_K"
    elif ftype == "IQ3_XXS":
        kind = "Q4_K" if wide else "IQ3_XXS"  # IQ3_S without an importance matrix
    elif (ftype in ("IQ3_XS", "IQ3_S") and wide) or ftype == "IQ3_M":
        kind = "Q4_K"
    elif ftype == "Q3_K_M":
        kind = "Q5_K" if i < 2 else "Q4_K"
    elif ftype == "Q3_K_L" or (ftype in ("IQ4_NL", "IQ4_XS") and wide):
        kind = "Q5_K"
    elif ftype in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
        kind = "Q6_K"
    elif ftype == "Q4_K_S" and i < 4:
        kind = "Q5_K"
    if model.is_70b and kind in ("Q3_K", "Q4_K"):
        kind = "Q5_K"
    return "Q8_0" if model.experts == 8 else kind


def _ffn_down_type(ftype: str, base: str, i: int, n: int, model: GgufModel) -> str:
    if ftype == "Q2_K":
        return "Q3_K"
    if ftype == "Q2_K_S":
        return "Q4_K" if i < n // 8 else base
    if ftype == "Q4_K_S":
        return "Q5_K" if i < n // 8 else base
    if ftype == "Q3_K_M":
        return "Q5_K" if i < n // 16 else "Q4_K"  # Q3_K only on Falcon
    if ftype == "Q3_K_L":
        return "Q5_K"  # Q4_K on Falcon
    if ftype == "IQ3_M" and (i < n // 8 or (model.experts == 8 and use_more_bits(i, n))):
        return "Q4_K"
    if ftype in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
        return "Q6_K"
    return base


#: Model types llama.cpp loads as an architecture that names 80 layers 70B (``LLM_ARCH_LLAMA`` with GQA, and
#: ``LLM_ARCH_QWEN2``: ``case 80: type = LLM_TYPE_70B`` in llama-model.cpp's ``load_hparams``).
_SEVENTY_B_TYPES = {"llama": True, "mistral": True, "qwen2": False}


@memoized
def gguf_model(arch: Architecture) -> GgufModel:
    """What llama.cpp's type choice reads of ``arch``."""
    heads, kv_heads = arch.num_attention_heads, arch.num_kv_heads
    experts = max((lin.copies for layer in arch.layers for lin in layer.linears if lin.group == EXPERT), default=0)
    needs_gqa = _SEVENTY_B_TYPES.get(arch.model_type)
    is_70b = arch.num_layers == 80 and needs_gqa is not None and (not needs_gqa or kv_heads != heads)
    downs = [sum(1 for lin in layer.linears if _category(lin) == "ffn_down") for layer in arch.layers]
    before = [0]
    for count in downs[:-1]:
        before.append(before[-1] + count)
    return GgufModel(heads // kv_heads if kv_heads else 1, experts, is_70b, tuple(before) if any(c != 1 for c in downs) else ())
