"""Which modules ``precision: nvfp4`` keeps in BF16: a known checkpoint's list, or the layout assumed (fix196).

No engine quantizes a 16-bit or FP8 checkpoint to NVFP4 at load: NVFP4 is served from a ModelOpt (or
compressed-tensors) checkpoint, whose ``exclude_modules`` / ``ignore`` list says what it left unquantized. NVIDIA's
DeepSeek-R1-FP4 keeps every attention projection, the LM head and the MTP layer in BF16 (its recipe, ModelOpt's
examples/deepseek/ptq.py, disables ``*attn*`` and ``*head*``), 15.3 GiB more than every linear layer in NVFP4.
"""

from __future__ import annotations

from generator import catalog
from generator.sizing.architecture import Architecture
from generator.sizing.precision import WEIGHT_FORMAT_ALIASES

#: The modules the assumed layout keeps in BF16 where no checkpoint's list is known.
ASSUMED_KEPT = "the embeddings, the LM head and any MoE router"


def nvfp4_layout_note(model_id: str, arch: Architecture, precision: str) -> tuple[str, str] | None:
    """``(code, text)`` of what sizes ``precision`` nvfp4 of ``model_id``; None for another precision or its own list.

    ``nvfp4-checkpoint-layout``: the catalog's NVFP4 checkpoint of the model gives the list (its id and page named);
    ``nvfp4-layout-assumed``: none is known, and the layout sized is said, with how to give the real one.
    """
    if WEIGHT_FORMAT_ALIASES.get(precision, precision) != "nvfp4":
        return None
    own = arch.quantization
    if own is not None and own.precision == "nvfp4":
        return None  # the checkpoint's own quantization_config sizes it
    record = catalog.models().get(model_id)
    checkpoint = record.nvfp4_checkpoint if record is not None else None
    if checkpoint is not None and arch.published is not None:
        page = catalog.models()[checkpoint].source[0]
        kept = ", ".join(arch.published.keep_patterns) or "none"
        return (
            "nvfp4-checkpoint-layout",
            f"nvfp4 of {model_id} is sized as its NVFP4 checkpoint {checkpoint} ({page}) holds it: the modules its "
            f"quantization config leaves unquantized ({kept}) in BF16, as are {ASSUMED_KEPT}; serve that checkpoint "
            "(no engine quantizes to NVFP4 at load)",
        )
    return (
        "nvfp4-layout-assumed",
        f"nvfp4 of {model_id} assumes every decoder linear layer (attention, MLP, experts) in NVFP4 and {ASSUMED_KEPT} "
        "in BF16: specgen knows no NVFP4 checkpoint of it, and a real one may keep more in BF16 (NVIDIA's "
        "DeepSeek-R1-FP4 keeps every attention projection); point model at the checkpoint's config.json, whose "
        "quantization_config (or hf_quant_config.json's exclude_modules) then sizes its own list",
    )
