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

#: llama.cpp's own measure of what a GGUF type costs in quality: the perplexity it adds to Llama-3-8B's at F16, as
#: ``llama-quantize`` lists its types (``QUANT_OPTIONS``: "Q2_K : 2.96G, +3.5199 ppl @ Llama-3-8B", "Q3_K_M : 3.74G,
#: +0.6569 ppl", "Q4_K_M : 4.58G, +0.1754 ppl", ...,
#: https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp, read at commit 03161a4e). One model,
#: one text: a guide to the order and size of the loss, not a figure for another model. (newuser68 item 10: the note
#: quoted the table's old LLaMA-1 7B figures, q2_k +0.67, where the current table gives Q2_K +3.52.)
GGUF_PERPLEXITY_ADDED = {
    "q8_0": 0.0026,
    "q6_k": 0.0217,
    "q5_k_m": 0.0569,
    "q5_1": 0.1062,
    "q5_k_s": 0.1049,
    "q5_0": 0.1316,
    "q4_k_m": 0.1754,
    "q4_k_s": 0.2689,
    "q4_1": 0.4511,
    "q4_0": 0.4685,
    "q3_k_l": 0.5562,
    "q3_k_m": 0.6569,
    "q3_k_s": 1.6321,
    "q2_k": 3.5199,
    "q2_k_s": 3.1836,  # "Q2_K_S : 2.96G, +3.1836 ppl": the size repeats Q2_K's; its rules make a 2.78 GiB file (fix153)
}
#: The same table gives llama.cpp's i-quants their bits a weight and no perplexity ("IQ3_XS : 3.3 bpw quantization").
GGUF_BPW_LISTED = {
    "iq4_nl": "4.50",
    "iq4_xs": "4.25",
    "iq3_m": "3.66",
    "iq3_s": "3.44",
    "iq3_xs": "3.3",
    "iq3_xxs": "3.06",
    "iq2_m": "2.7",
    "iq2_s": "2.5",
    "iq2_xs": "2.31",
    "iq2_xxs": "2.06",
    "iq1_m": "1.75",
    "iq1_s": "1.56",
}
#: The type the notes are read against: llama.cpp's common default. A type that adds no more than it is not noted.
NOTED_AGAINST = "q4_k_m"


def _table_text(*names: str) -> str:
    return ", ".join(f"{n} {GGUF_PERPLEXITY_ADDED[n]:.2f}" for n in names)


def quality_note(name: str) -> str:
    """What a GGUF type costs in quality by llama-quantize's table, where it costs more than :data:`NOTED_AGAINST`; else ''.

    An i-quant, for which the table has no perplexity figure, says so with the bits a weight it lists.
    """
    check = "check the quality on your task"
    added = GGUF_PERPLEXITY_ADDED.get(name)
    if added is not None:
        if added <= GGUF_PERPLEXITY_ADDED[NOTED_AGAINST]:
            return ""
        beside = [n for n in ("q3_k_m", NOTED_AGAINST) if n != name and GGUF_PERPLEXITY_ADDED[n] < added]
        return f" ({name} adds {added:.2f} to Llama-3-8B's perplexity in llama-quantize's table, {_table_text(*beside)}: {check})"
    if name in GGUF_BPW_LISTED:
        return (
            f" ({name}: llama-quantize's table gives no perplexity figure for it, only {GGUF_BPW_LISTED[name]} bits a "
            f"weight; the perplexity it adds to Llama-3-8B's is {_table_text(NOTED_AGAINST, 'q3_k_m', 'q2_k')}: {check})"
        )
    return ""


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
