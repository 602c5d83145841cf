"""A service quantized as its engine loads it (online), and the checkpoint files its nodes then hold.

vLLM quantizes a 16-bit checkpoint's weights to FP8 as it loads them when started with ``--quantization fp8``
(dynamic per-tensor scales, no calibration: https://docs.vllm.ai/en/v0.5.4/quantization/fp8.html "Quick Start with
Online Dynamic Quantization", https://docs.vllm.ai/en/stable/features/quantization/fp8/); SGLang does the same ("add
--quantization fp8 on a fp16 checkpoint", https://docs.sglang.io/advanced_features/server_arguments.html). Without
it either engine serves the checkpoint's own 16-bit weights, and the plan's weight and KV memory are not what runs.
The node still downloads and keeps the 16-bit files: its disk holds the checkpoint's bytes, not the served ones.
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel, default_precision, model_weight_format
from generator.sizing.weights import size_weights

#: Served formats an engine makes from a 16-bit checkpoint as it loads it (each is also its ``--quantization`` value).
ONLINE_FORMATS = ("fp8",)
#: Checkpoint formats online quantization starts from.
SIXTEEN_BIT = ("bf16", "fp16")


def quantized_online_from(model: ResolvedModel, served: str) -> str | None:
    """The checkpoint's own format where the engine quantizes it to ``served`` as it loads it; None otherwise."""
    own = default_precision(model)
    return own if served in ONLINE_FORMATS and own in SIXTEEN_BIT else None


def served_file_bytes(model: ResolvedModel, served: str, served_bytes: int) -> int:
    """Bytes of the model files a node serving ``model`` as ``served`` keeps: the checkpoint's own where quantized online."""
    own = quantized_online_from(model, served)
    if own is None:
        return served_bytes
    arch = model.architecture
    return size_weights(arch, model_weight_format(arch, own)).total_bytes
