"""TensorRT-LLM's CUTLASS MoE under attention data parallelism: the gathered rows its MoE layer holds at once.

With attention DP, TensorRT-LLM's ``CutlassFusedMoE`` all-gathers every rank's tokens before the fused MoE op and
sizes its MoE for ``max_num_tokens x world_size`` rows ("The maximum number of tokens in MoE are multiplied by DP size
when attention DP is enabled", ``moe_max_num_tokens``: no chunking below that,
https://github.com/NVIDIA/TensorRT-LLM/blob/000a01de66f0eab4ab05640711f0253f50f5209c/tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py).
The start-up profiling forward runs ``max_num_tokens`` tokens on every rank, so the MoE op of that pass takes, for
``R = max_num_tokens x dp`` gathered rows:

- the gathered input (``R x hidden`` at the activation's bytes) and the op's output (``R x hidden``, bf16);
- the op's workspace, ``CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes`` with ``num_moe_inputs = top_k x R``
  (https://github.com/NVIDIA/TensorRT-LLM/blob/000dea273b339cd5074b3e9b03d5c2c1b10171ba/cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu):
  ``overlapped_gemm1_gemm2_inputs = max(permuted_data, fc2_result, fc1_result)`` and
  ``overlapped_gemm1_gemm2_outputs = max(glu_inter, fc2_result, fc1_result)``, where ``permuted_data`` is
  ``top_k R x hidden`` and ``fc1_result`` ``top_k R x inter`` at the activation's bytes (``dtype_size``: 0.5 for FP4,
  else ``sizeof(T)``), ``fc2_result`` ``top_k R x hidden`` and ``glu_inter`` ``2 x top_k R x inter`` at the GEMM output's
  (bf16); DeepSeek FP8 block scaling (T = bf16) takes ``max(permuted_data, fc1_result, fc2 output)`` and
  ``2 x top_k R x inter`` instead; plus the index arrays (``permuted_row_to_unpermuted_row``,
  ``permuted_token_selected_experts``, ``permuted_token_final_scales``: 4 bytes each pair;
  ``blocked_row_to_unpermuted_row``: 4 bytes a row and local expert). The GEMM workspaces and per-expert arrays
  (no factor of the rows) are left out.

The activation's bytes (``dtype_size``): 0.5 for NVFP4 / MXFP4 computed in FP4, 1 for per-tensor FP8 (W8A8), 2 for
block FP8 (its GEMMs take bf16 activations, ``use_deepseek_fp8_block_scale``) and every other format. Both
overlapped buffers hold at least one bf16 ``top_k R x hidden`` tensor, so the activation's bytes (2 or less) change
only the gathered input. TensorRT-LLM's torch op allocates the workspace as a torch tensor
(``FusedMoeRunner::getWorkspaceInfo``, ``torch::empty``, with ``src_to_dest_map``: ``top_k R`` ints,
https://github.com/NVIDIA/TensorRT-LLM/blob/01503f5535c0379da60bfd282d225626813781ab/cpp/tensorrt_llm/thop/moeOp.cpp),
so the profiling pass's peak, measured before the KV cache is sized, holds it.
Pure: no I/O.
"""

from __future__ import annotations

from generator.sizing.architecture import EXPERT, Architecture
from generator.sizing.memo import memoized
from generator.sizing.precision import WeightFormat
from generator.sizing.weights import Parallelism

#: Bytes of an element of the MoE GEMMs' unfused output (``UnfusedGemmOutputType``: bf16 here).
GEMM_OUTPUT_BYTES = 2
#: Bytes of each index a routed (token, expert) pair takes: ``permuted_row_to_unpermuted_row``,
#: ``permuted_token_selected_experts``, ``permuted_token_final_scales`` and the op's ``src_to_dest_map`` (int32 / fp32).
PAIR_INDEX_BYTES = 4 * 4


def moe_intermediate(arch: Architecture) -> int:
    """One routed expert's intermediate width (its ``gate_proj`` rows); 0 without routed experts."""
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT and lin.name.endswith("gate_proj"):
                return int(lin.out_features)
    return 0


def activation_bytes(fmt: WeightFormat) -> float:
    """The MoE op's activation bytes an element (``dtype_size``) for weights of ``fmt`` (the module docstring)."""
    if fmt.compute == "fp4":
        return 0.5
    if fmt.compute == "fp8" and not fmt.block:
        return 1.0
    return 2.0


def cutlass_moe_workspace_bytes(arch: Architecture, par: Parallelism, rows: int, act_bytes: float, block_fp8: bool) -> int:
    """Bytes of TensorRT-LLM's CUTLASS MoE workspace for ``rows`` tokens on one EP rank (the module docstring).

    Under attention DP the MoE's TP is 1 (the EP ranks are the stage's GPUs), so each expert's intermediate is whole.
    """
    experts, top_k = arch.routed_experts
    inter = moe_intermediate(arch)
    if not experts or not top_k or not inter:
        return 0
    pairs = top_k * rows
    hidden = arch.hidden_size
    permuted_data = pairs * hidden * act_bytes
    fc1_result = pairs * inter * act_bytes
    fc2_result = pairs * hidden * GEMM_OUTPUT_BYTES
    glu_inter = 2 * pairs * inter * GEMM_OUTPUT_BYTES  # gated: gate and up of each pair
    inputs = max(permuted_data, fc2_result, fc1_result)
    outputs = glu_inter if block_fp8 else max(glu_inter, fc2_result, fc1_result)
    local_experts = experts // max(1, par.ep)
    index = pairs * PAIR_INDEX_BYTES + local_experts * rows * 4  # and blocked_row_to_unpermuted_row
    return int(inputs + outputs + index)


@memoized  # once per model, layout, chunk and format: every GPU a layout is tried on shares it
def gathered_moe_bytes(arch: Architecture, par: Parallelism, rank_tokens: int, fmt: WeightFormat) -> int:
    """What the MoE op of a pass of ``rank_tokens`` tokens on every rank holds on one GPU under attention DP; else 0.

    The gathered input (at the activation's bytes) and the op's output (bf16) of ``rank_tokens x dp`` rows, and its
    workspace (:func:`cutlass_moe_workspace_bytes`).
    """
    if par.attention_dp <= 1 or not arch.routed_experts[0]:
        return 0
    rows = rank_tokens * par.attention_dp
    act = activation_bytes(fmt)
    gathered = rows * arch.hidden_size * (act + GEMM_OUTPUT_BYTES)
    return int(gathered + cutlass_moe_workspace_bytes(arch, par, rows, act, fmt.block is not None))
