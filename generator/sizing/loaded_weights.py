"""Weights as an engine holds them on a GPU, where that differs from the checkpoint's bytes.

vLLM serves MXFP4 mixture-of-experts checkpoints (gpt-oss) through Marlin on GPUs below compute capability 9.0
(Ampere, Ada), where neither ``triton_kernels`` nor FlashInfer's MXFP4 path runs. Marlin's ``create_weights``
rounds each rank's expert intermediate size up to a multiple of 128 and the hidden size up to 256 before it
allocates the experts, and keeps the padding after repacking
(https://github.com/vllm-project/vllm/blob/007d50058a06dec0f82472d63c819244d460c40d/vllm/model_executor/layers/quantization/mxfp4.py).
gpt-oss-120b (hidden and expert width 2,880) then holds 65.90 GiB on one GPU where its checkpoint is 60.77; vLLM
logged 65.97 (benchmarks/CALIBRATION.md, vllm_weights). On Hopper the newest Triton path loads about the
checkpoint (61.29 logged); Blackwell's FlashInfer paddings have no log to check them against, so they are left out.

llama.cpp runs no safetensors checkpoint: it runs the GGUF its converter writes. Of an MXFP4 checkpoint that is the
MXFP4_MOE file type, the routed experts MXFP4 as stored and every other matrix (attention, embeddings, output) Q8_0
where the checkpoint holds them in BF16: ggml-org/gpt-oss-120b-GGUF's file is 63,387,346,208 bytes, 59.02 GiB of
tensors in llama-bench, where the checkpoint is 60.77 GiB (newuser38 item 5).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.sizing.precision import WEIGHT_FORMATS, WeightFormat
from generator.sizing.quantization import QuantizationConfig

#: GPU architectures (catalog names) on which vLLM runs MXFP4 experts through Marlin.
MARLIN_MXFP4_ARCHITECTURES = frozenset({"ampere", "ada-lovelace"})
#: Marlin's rounding of a rank's expert matrices: (intermediate size multiple, hidden size multiple).
MARLIN_MXFP4_EXPERT_PADDING = (128, 256)


def loaded_format(fmt: WeightFormat, gpu_architecture: str, engine: str, quant: QuantizationConfig | None = None) -> WeightFormat:
    """``fmt`` as ``engine`` holds it on a GPU of ``gpu_architecture`` (the padding its kernels add, where known).

    ``quant``: the checkpoint's own quantization (``Architecture.quantization``); where it is ``fmt`` and asymmetric
    (AWQ), the format is marked as multiplied with zero points (``kernel_zero_points``), which picks its kernel.
    """
    if engine == "vllm" and fmt.name == "mxfp4" and gpu_architecture in MARLIN_MXFP4_ARCHITECTURES:
        return fmt._replace(expert_padding=MARLIN_MXFP4_EXPERT_PADDING)
    if quant is not None and quant.asymmetric and quant.precision == fmt.name:
        return fmt._replace(kernel_zero_points=True)
    return fmt


def runs_marlin_moe(fmt: WeightFormat) -> bool:
    """Whether ``fmt`` is a format as vLLM holds it for Marlin's MoE kernel (:func:`loaded_format`'s padding)."""
    return fmt.expert_padding == MARLIN_MXFP4_EXPERT_PADDING


def llama_cpp_format(fmt: WeightFormat) -> WeightFormat:
    """``fmt`` as llama.cpp holds it: an MXFP4 checkpoint as its MXFP4_MOE GGUF; any other format as it is."""
    return WEIGHT_FORMATS["mxfp4_moe"] if fmt.name == "mxfp4" else fmt


def llama_cpp_formats(first: WeightFormat, allowed: Iterable[WeightFormat]) -> list[WeightFormat]:
    """The formats a machine of yours is planned at: ``first``, then each of ``allowed``, as llama.cpp holds them.

    :func:`llama_cpp_format` of each, each once (an alias, ``fp4`` for ``nvfp4``, or ``mxfp4`` beside ``mxfp4_moe``, names a
    format already listed).
    """
    formats = [llama_cpp_format(first)]
    for fmt in map(llama_cpp_format, allowed):
        if all(fmt.name != f.name for f in formats):
            formats.append(fmt)
    return formats
