"""Lower precisions that would shrink a model's weights: the precision advice of an infeasible plan.

A message that says what would unblock a plan suggests a lower precision only when the engine that runs
the plan knows one below every format the plan already tried, and says by what factor it shrinks this
model's weights (tensors a format leaves alone, such as embeddings and norms, keep their bits, so fp8 of
a bf16 checkpoint is a little more than half). A plan already at the lowest such format gets no
precision advice at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture
from generator.sizing.precision import WEIGHT_FORMATS, WeightFormat
from generator.sizing.weights import size_weights

#: Lower formats vLLM and SGLang serve from a quantized checkpoint: FP8 (w8a8) and INT4 GPTQ/AWQ.
SERVING_STEP_DOWNS = ("fp8", "int4")
#: Lower formats llama.cpp runs (GGUF), from more to fewer bits.
GGUF_STEP_DOWNS = ("q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k")

#: llama.cpp's own measure of what a GGUF type costs in quality: the perplexity it adds to LLaMA-1 7B's at F16 (about
#: 5.91), as ``llama-quantize`` lists its types (``QUANT_OPTIONS``,
#: https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp). One model, one text: a guide to the
#: order and size of the loss, not a figure for another model.
GGUF_PERPLEXITY_ADDED = {"q8_0": 0.0004, "q6_k": -0.0008, "q5_k_m": 0.0122, "q4_k_m": 0.0532, "q3_k_m": 0.2496, "q2_k": 0.6717}
#: Above this added perplexity a suggestion of the type says what it costs in quality.
NOTED_PERPLEXITY = 0.1


def quality_note(name: str) -> str:
    """What a GGUF type costs in quality, where llama.cpp's table puts it above :data:`NOTED_PERPLEXITY`; else ''."""
    added = GGUF_PERPLEXITY_ADDED.get(name)
    if added is None or added <= NOTED_PERPLEXITY:
        return ""
    return (
        f" ({name} adds {added:.2f} to LLaMA-1 7B's perplexity in llama.cpp's table, q4_k_m "
        f"{GGUF_PERPLEXITY_ADDED['q4_k_m']:.2f}: check the quality on your task)"
    )


class StepDown(NamedTuple):
    """A format below every tried one, with its weight bytes as a fraction of the smallest tried format's."""

    name: str
    weight_ratio: float


def lower_precisions(arch: Architecture, tried: Sequence[WeightFormat], known: Sequence[str]) -> list[StepDown]:
    """The formats of ``known`` (in its order) with fewer bits and fewer weight bytes than every ``tried`` format."""
    floor_bits = min(f.bits for f in tried)
    floor_bytes = min(size_weights(arch, f).total_bytes for f in tried)
    steps = []
    for name in known:
        fmt = WEIGHT_FORMATS[name]
        total_bytes = size_weights(arch, fmt).total_bytes
        if fmt.bits < floor_bits and total_bytes < floor_bytes:
            steps.append(StepDown(name, total_bytes / floor_bytes))
    return steps


def smallest_tried(arch: Architecture, tried: Sequence[WeightFormat]) -> str:
    """Name of the tried format with the fewest weight bytes (the first on a tie)."""
    return min(tried, key=lambda f: size_weights(arch, f).total_bytes).name


def step_down_phrase(arch: Architecture, tried: Sequence[WeightFormat], steps: Sequence[StepDown]) -> str:
    """``fp8 stores the bf16 weights in 0.50x the bytes, int4 in 0.27x`` (``steps`` not empty)."""
    first, *rest = steps
    head = f"{first.name} stores the {smallest_tried(arch, tried)} weights in {first.weight_ratio:.2f}x the bytes"
    return ", ".join([head, *(f"{s.name} in {s.weight_ratio:.2f}x" for s in rest)])


def serving_precision_advice(arch: Architecture, tried: Sequence[WeightFormat]) -> str:
    """``a lower precision (fp8 stores ...)`` for a vLLM / SGLang plan, or "" when none is lower than ``tried``."""
    steps = lower_precisions(arch, tried, SERVING_STEP_DOWNS)
    return f"a lower precision ({step_down_phrase(arch, tried, steps)})" if steps else ""
