"""vLLM's memory reservation as a mechanism: what its start-up profiling takes before the KV cache.

After loading the weights, vLLM (``gpu_worker.determine_available_memory``) measures
- the PyTorch peak of a profiling run: a dummy forward pass over ``max_num_batched_tokens`` tokens
  (``_dummy_run``) and then a dummy sampler run over ``max_num_seqs`` rows (``_dummy_sampler_run``),
  which keeps the forward's hidden states alive; the peak is the larger of the two phases;
- non-torch memory: CUDA context, cuBLAS workspaces and, with several GPUs, NCCL / custom all-reduce buffers;
- since v0.21 (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``, on by default) the CUDA-graph pool, by capturing
  its batch sizes ("Profiling CUDA graph memory: PIECEWISE=51 (largest=512)"); before, graphs were captured
  after the KV cache and came out of the headroom above ``gpu_memory_utilization``.

``available KV = total x gpu_memory_utilization - weights - profiling peak - non-torch - CUDA graphs``.

The forward phase holds, per token, the widest layer's transients (:func:`forward_bytes_per_token`): the
residual stream and hidden-size tensors, and the larger of the MLP's ``gate_up`` output with its activation
(``activation_mlp_copies`` intermediate widths) and attention's QKV output with the attention output. The
sampler phase holds the fp32 logits of every row and what top-k/top-p sampling derives from them
(``sampler_bytes_per_logit``: the sort's values and int64 indices, softmax, cumulative sum, mask, scatter
back; ``vllm/v1/sample/ops/topk_topp_sampler.py``); the logits are gathered whole on the first rank.
The graph pool holds the forward transients of the largest captured batch (graphs share one pool and are
captured largest first) plus a fixed cost per captured size (``cuda_graph_bytes_per_size``).
Pure: no I/O.
"""

from __future__ import annotations

import math

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import multi_gpu_runtime_bytes
from generator.sizing.memo import memoized
from generator.sizing.memory import ffn_width_per_token
from generator.sizing.weights import Parallelism


class VllmReservation(NamedTuple):
    """What vLLM's start-up profiling takes on the fullest GPU, bytes; each field is one line of its log."""

    #: Dummy forward over ``max_num_batched_tokens`` tokens: the widest layer's transients.
    forward_bytes: int
    #: Dummy sampler run: hidden states of the forward plus ``max_num_seqs`` rows of logits and sampling buffers.
    sampler_bytes: int
    #: "torch peak memory increase" / "PyTorch activation peak memory": the larger phase.
    activation_peak_bytes: int
    #: "Estimated CUDA graph memory: X GiB total" (zero with ``enforce_eager``).
    cuda_graph_bytes: int
    #: CUDA context and workspaces, plus NCCL buffers when the replica spans GPUs.
    non_torch_bytes: int

    @property
    def total(self) -> int:
        """Everything reserved besides weights and the KV cache."""
        return self.activation_peak_bytes + self.cuda_graph_bytes + self.non_torch_bytes


def capture_sizes(max_num_seqs: int) -> tuple[int, ...]:
    """The default piecewise ``cudagraph_capture_sizes`` of vLLM V1.

    1, 2, 4, then every 8 to 256, then every 16 up to ``min(2 x max_num_seqs, 512)``
    (``vllm/config/compilation.py``; 51 sizes at the default 256 sequences).
    """
    largest = min(2 * max_num_seqs, 512)
    sizes = [1, 2, 4, *range(8, 256, 8), *range(256, largest + 1, 16)]
    return tuple(s for s in sizes if s <= largest)


def captured_graphs(max_num_seqs: int) -> int:
    """Graphs vLLM captures by default (``FULL_AND_PIECEWISE``).

    Every piecewise size, and a full graph for each decode size up to ``max_num_seqs`` (the log's
    "PIECEWISE=51 (largest=512), FULL=35 (largest=256)").
    """
    sizes = capture_sizes(max_num_seqs)
    return len(sizes) + sum(1 for s in sizes if s <= max_num_seqs)


def forward_bytes_per_token(arch: Architecture, par: Parallelism, act_bits: int, consts: Constants) -> int:
    """Transient bytes per token of the widest layer in a forward pass (one GPU of a TP group)."""
    mlp = consts.activation_mlp_copies * math.ceil(ffn_width_per_token(arch) / par.tp)
    q_width = arch.num_attention_heads * arch.head_dim
    attention = math.ceil((2 * q_width + 2 * arch.num_kv_heads * arch.head_dim) / par.tp)  # QKV output + attention output
    return (consts.activation_hidden_copies * arch.hidden_size + max(mlp, attention)) * act_bits // 8


@memoized  # sized once per model, layout and chunk: every GPU a layout is tried on shares it
def vllm_reservation(
    arch: Architecture,
    par: Parallelism,
    consts: Constants,
    max_num_batched_tokens: int,
    act_bits: int = 16,
    cuda_graphs: bool = True,
    *,
    nvlink: bool,
    gathered_moe_bytes: int = 0,
) -> VllmReservation:
    """The reservation of vLLM's profiling on the fullest GPU of one replica.

    ``nvlink``: the replica's TP group has NVLink peers (:func:`~generator.sizing.distributed_runtime.nvlink_replica`);
    required, so that no caller falls back to the PCIe figure by omission.

    ``gathered_moe_bytes``: what the MoE op of the profiling pass holds over every attention-DP rank's tokens gathered
    (:func:`~generator.sizing.moe_workspace.gathered_moe_bytes`); at that layer the rank's own hidden-size tensors stay
    live beside it, and the pass's peak is the larger of that and the widest other layer's transients.
    """
    forward = max_num_batched_tokens * forward_bytes_per_token(arch, par, act_bits, consts)
    if gathered_moe_bytes:
        rank_hidden = max_num_batched_tokens * consts.activation_hidden_copies * arch.hidden_size * act_bits // 8
        forward = max(forward, rank_hidden + gathered_moe_bytes)
    rows = min(consts.max_num_seqs, max_num_batched_tokens)
    hidden = max_num_batched_tokens * arch.hidden_size * act_bits // 8
    sampler = hidden + rows * arch.vocab_size * consts.sampler_bytes_per_logit
    graphs = 0
    if cuda_graphs:
        pool = max(capture_sizes(consts.max_num_seqs)) * forward_bytes_per_token(arch, par, act_bits, consts)
        graphs = pool + captured_graphs(consts.max_num_seqs) * consts.cuda_graph_bytes_per_size
    non_torch = consts.non_torch_bytes + multi_gpu_runtime_bytes(par.gpus, consts, nvlink=nvlink)
    return VllmReservation(forward, sampler, max(forward, sampler), graphs, non_torch)
