"""Memory traffic a QLoRA step spends turning its NF4 base back into bf16 before each matmul.

Neither NF4 library QLoRA runs on has a 4-bit training matmul or keeps a 16-bit copy of the weights: every matmul
that uses a frozen NF4 weight first dequantizes the whole matrix to the compute dtype.

- bitsandbytes (Hugging Face PEFT / TRL / axolotl / LLaMA-Factory / Unsloth): ``MatMul4Bit.forward`` runs
  ``linear(A, dequantize_4bit(B, quant_state).to(A.dtype).t())`` and its ``backward`` computes the input gradient as
  ``matmul(grad_output, dequantize_4bit(B, ctx.state).to(grad_output.dtype).t())``; the frozen base gets no weight
  gradient (https://github.com/bitsandbytes-foundation/bitsandbytes/blob/012c660699ccb92bfa97916f1a18bed0980eae00/
  bitsandbytes/autograd/_functions.py).
- torchao (torchtune): ``LinearNF4.forward`` runs ``F.linear(input, weight.to(input.dtype))`` and its ``backward``
  ``grad_output @ weight.to(grad_output.dtype)``, where ``.to(dtype)`` of an ``NF4Tensor`` is
  ``get_original_weight()`` (https://github.com/pytorch/ao/blob/0598012907d6f6e88734088a65f788c38d294a65/torchao/
  dtypes/nf4tensor.py).

So each micro-batch dequantizes every NF4 weight once in its forward, once more in the forward that full activation
checkpointing recomputes, and once for the backward's input gradient. Each time the GPU reads the stored 4-bit weight
with its scales, writes a bf16 copy and reads that copy back into the matmul: ``stored bits / 8 + 2 + 2`` bytes per
weight, whatever the micro-batch's token count, at the GPU's memory bandwidth x ``nf4_dequant_bandwidth_efficiency``.
Both libraries quantize the decoder layers' linear weights and keep the embeddings and the LM head in 16 bits
(transformers' ``llm_int8_skip_modules`` default; torchtune's ``output`` is an ``nn.Linear``).
"""

from __future__ import annotations

from generator.sizing.architecture import Architecture
from generator.sizing.memo import memoized
from generator.sizing.precision import WeightFormat

#: Bytes of one bf16 element: the dequantized copy is written once and read back once by the matmul.
BF16_BYTES = 2
#: Formats stored as bitsandbytes / torchao NF4, which dequantize to bf16 before every matmul.
NF4_FORMATS = frozenset({"nf4", "nf4-no-double-quant"})


def dequant_passes(checkpointing: str) -> int:
    """Dequantizations of each NF4 weight per micro-batch: forward, the recomputed forward, the input gradient."""
    return 3 if checkpointing == "full" else 2


@memoized
def quantized_weight_params(arch: Architecture) -> int:
    """Weights QLoRA stores as NF4: every linear weight of the decoder layers (routed experts included)."""
    return sum(linear.weight_params for layer in arch.layers for linear in layer.linears)


def dequant_bytes_per_param(fmt: WeightFormat) -> float:
    """HBM bytes one dequantization moves per weight: the stored bits and scales read, bf16 written and read back."""
    group = fmt.group_size or 1
    stored_bits = fmt.bits + fmt.scale_bits / group
    return float(stored_bits) / 8 + 2 * BF16_BYTES


def dequant_bytes_per_micro_batch(arch: Architecture, fmt: WeightFormat, checkpointing: str, model_parallel: int) -> float:
    """HBM bytes one GPU moves per micro-batch dequantizing its share of an NF4 base; 0 for any other base.

    ``model_parallel`` (TP x PP) splits the layers; ZeRO-3 / FSDP does not: each rank gathers a whole layer and
    dequantizes all of it.
    """
    if fmt.name not in NF4_FORMATS:
        return 0.0
    params = quantized_weight_params(arch) / max(1, model_parallel)
    return params * dequant_bytes_per_param(fmt) * dequant_passes(checkpointing)
