"""Weight bytes read from a checkpoint's own files (safetensors headers, GGUF tensor tables).

A checkpoint says exactly how many bytes each tensor takes (safetensors ``data_offsets``, a GGUF
tensor's type and element count); grouped by decoder layer these replace the bytes computed from
the config whenever a plan holds the weights in the checkpoint's own format. Pure: the caller
reads the files and passes ``(tensor name, bytes)`` pairs.

Tensor names follow Hugging Face (``model.layers.3.mlp.experts.7.up_proj.weight``) or GGUF
(``blk.3.ffn_up_exps.weight``) conventions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.named_tuple import NamedTuple

_LAYER = re.compile(r"(?:^|\.)(?:layers|blk|h)\.([^.]+)\.")
_VISION = ("vision", "visual", "multi_modal_projector", "mm_projector", "image_newline")
_EMBEDDING = ("embed_tokens.", "token_embd.", "wte.", "tok_embeddings.")
#: The LM head: ``lm_head.`` at the top (``*ForCausalLM``) or under the module a multimodal checkpoint nests its language
#: model in, whatever that module is called (newuser71 item 1): ``language_model.lm_head.`` (LLaVA, Mistral 3, Llama 4,
#: PaliGemma in the pre-4.52 Transformers layout, whose ``_checkpoint_conversion_mapping`` maps
#: ``^language_model.lm_head`` to ``lm_head``), ``thinker.lm_head.`` (Qwen2.5/3-Omni), ``language.lm_head.``
#: (DeepSeek-VL2), ``llm.lm_head.`` (MiniCPM-V); ``output.weight`` in GGUF and Mistral's own format.
_LM_HEAD = re.compile(r"(?:^|\.)lm_head\.|^output\.weight$")


class FileWeights(NamedTuple):
    """Bytes of a checkpoint's tensors, grouped as the sizing engine places them."""

    #: The weight-format name these bytes are (``bf16``, ``int4``, ``q4_k_m``, ``gguf-iq2_xxs``...).
    precision: str
    #: Where the bytes were read (shown to the user).
    source: str
    layer_bytes: tuple[int, ...]
    layer_expert_bytes: tuple[int, ...]
    embedding_bytes: int
    lm_head_bytes: int
    #: Final norm and other top-level tensors outside the decoder layers.
    other_bytes: int
    vision_bytes: int = 0
    #: Bytes of tensors of layers past ``num_hidden_layers`` (multi-token prediction), not counted.
    extra_layer_bytes: int = 0
    #: The file is run as stored, in no other format (a GGUF: llama.cpp computes with each tensor's own type, and no
    #: engine re-quantizes it as it loads); a safetensors checkpoint can be cast or quantized online.
    fixed_format: bool = False
    #: Files the checkpoint is split into where an engine must be given them all (a GGUF split by llama-gguf-split).
    split_parts: int = 1

    @property
    def total_bytes(self) -> int:
        """Every counted byte."""
        return sum(self.layer_bytes) + self.embedding_bytes + self.lm_head_bytes + self.other_bytes + self.vision_bytes

    def missing_layers_text(self, most: int = 8) -> str:
        """The layers no tensor of the files belongs to, for a refusal (``3, 7``; the first ``most``, then ``...``).

        "" where every layer has a tensor. An engine refuses such files (llama.cpp: missing tensor; vLLM: weights not
        initialized from checkpoint), so the GGUF and safetensors readers both say so.
        """
        missing = [str(i) for i, size in enumerate(self.layer_bytes) if not size]
        return ", ".join(missing[:most]) + (", ..." if len(missing) > most else "")


def _is_routed_expert(name: str) -> bool:
    return ".experts." in name or "_exps." in name


def group_tensor_bytes(
    tensors: Iterable[tuple[str, int]], num_layers: int, precision: str, source: str, tied_embeddings: bool
) -> FileWeights:
    """Sum ``(tensor name, bytes)`` pairs per decoder layer, routed experts, embedding, LM head and the rest.

    With ``tied_embeddings`` a separate ``lm_head`` tensor (some checkpoints store the tied copy
    too) is not counted: the runtime loads one matrix.
    """
    layers = [0] * num_layers
    experts = [0] * num_layers
    embedding = lm_head = other = vision = extra = 0
    for name, size in tensors:
        match = _LAYER.search(name)
        if any(v in name for v in _VISION):
            vision += size
        elif match is not None:
            digits = match.group(1)
            # a 5,000-digit index is past every layer (and int()); so is one not a count (review70 item 9: blk.-1 was
            # counted as a top-level tensor, where llama.cpp refuses the file)
            whole = digits.isascii() and digits.isdigit() and len(digits) <= 9
            index = int(digits) if whole else num_layers
            if index >= num_layers:
                extra += size
                continue
            layers[index] += size
            if _is_routed_expert(name):
                experts[index] += size
        elif name.startswith(_EMBEDDING) or any(f".{e}" in name for e in _EMBEDDING):
            embedding += size
        elif _LM_HEAD.search(name):
            lm_head += 0 if tied_embeddings else size
        else:
            other += size
    return FileWeights(
        precision=precision,
        source=source,
        layer_bytes=tuple(layers),
        layer_expert_bytes=tuple(experts),
        embedding_bytes=embedding,
        lm_head_bytes=lm_head,
        other_bytes=other,
        vision_bytes=vision,
        extra_layer_bytes=extra,
    )
