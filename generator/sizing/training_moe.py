"""What a mixture-of-experts model adds to a training step beyond a dense model of its active parameters.

A dense model's step multiplies every weight by the micro-batch's ``tokens``; a routed expert sees only the tokens
routed to it, ``tokens x top_k / experts`` of each rank's micro-batch, ``ep`` times that under expert parallelism (each
rank runs ``experts / ep`` experts over the tokens every rank of its EP group routes to them). Two terms follow:

- **expert GEMM size**: the routed experts' share of the step's GEMM FLOPs runs at the fill of those tokens per expert,
  ``t / (t + gemm_half_efficiency_tokens)`` (the inference roofline's GEMM efficiency,
  :mod:`generator.sizing.performance`), not the micro-batch's; under EP every MoE layer waits for the rank whose experts
  draw the most tokens (:func:`~generator.sizing.performance.busiest_expert_rank_load`). Training routers are trained
  with a load-balancing loss, so only routing's sampling spread is counted here (popularity ``cv`` 0); the serving
  side's fitted popularity (``expert_popularity_cv``, DeepSeek-R1 at inference) is not applied to training;
- **EP all-to-all**: each MoE layer dispatches every token's hidden state (bf16) to its ``top_k`` experts and combines
  the results back, in the forward and again (their gradients) in the backward, four all-to-alls a layer and
  micro-batch (six with full checkpointing, which reruns the forward's two), ``(ep - 1) / ep`` of the routed copies
  leaving the GPU, over the link of the EP group; timed in series with the compute (Megatron-Core overlaps them only
  with ``--overlap-moe-expert-parallel-comm``, https://docs.nvidia.com/megatron-core/developer-guide/latest/api-guide/moe.html).

Where the framework runs the routed experts through PyTorch's grouped GEMM (``torch._grouped_mm``: Transformers 5's
``grouped_mm`` experts under the eager Trainer family, :attr:`MoeStep.grouped_mm`), the routed share runs at
``t / (t + grouped_mm_half_tokens)`` of the dense GEMMs' rate instead. One kernel runs every expert's GEMM, each of
``t`` rows: CUTLASS's SM90 grouped GEMMs ran Qwen3-30B-A3B's ``up_proj`` at 512 rows an expert at 134-161 TFLOPS on an
H100, 14-16% of its dense peak, and a loop of cuBLAS calls at 130 (https://github.com/tgale96/grouped_gemm/pull/37);
``torch._grouped_mm``'s whole MoE forward of that model at 2,048 rows an expert ran at 242
(https://github.com/ByteDance-Seed/VeOmni/pull/460). A roofline does not explain it: each expert GEMM's arithmetic
intensity, ``2 t N K / (2 (t K + N K + t N))`` FLOPs a byte in bf16 (weights read once an expert and pass,
activations in and out), is 267 (``down_proj``) to 323 (``gate_up_proj``) at 512 rows for that model's shapes, about
an H100's ridge (295 FLOPs a byte at its peak) and above an H200's (206): a roofline leaves them at 90-100% of the
peak, so the kernels' own rate is what is short, not the bytes.
Megatron-Core's ``TEGroupedMLP`` (Transformer Engine's ``GroupedLinear``, per-expert cuBLAS GEMMs over several
streams) is not given it: its runs' experts see 1,024-32,768 rows, compute-bound by the same roofline (intensity
600-1,400 FLOPs a byte), and at ``grouped_mm_half_tokens`` DeepSeek-V3's and Qwen3-235B's rows would slow before
gpt-oss-120b's, the wrong order for what those rows measure (benchmarks/CALIBRATION.md, acc117 entry).

Not counted: the host time of frameworks that run the experts as a Python loop over ``nn.Linear`` modules
(Hugging Face Transformers 4.x's MoE blocks, which Unsloth puts 12-30x behind its grouped-GEMM kernels with
Transformers 5's ``torch._grouped_mm``, https://unsloth.ai/docs/basics/faster-moe): no published per-expert figure
fixes it (:func:`moe_step_assumptions` says so on the estimate). Transformers 5's ``grouped_mm`` blocks are timed by
their kernel launches and routing passes (:mod:`generator.sizing.training_elementwise`) and their grouped GEMMs as
above.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.sizing.architecture import EXPERT, Architecture, routed_expert_params
from generator.sizing.constants import Constants
from generator.sizing.memo import memoized
from generator.sizing.performance import busiest_expert_rank_load, gemm_fill

#: Bytes per activation element a token's dispatch and combine carry (bf16).
A2A_WIRE_BYTES = 2
#: All-to-alls per MoE layer and micro-batch: dispatch and combine forward, their gradients backward.
A2A_PER_LAYER = 4
#: Two more where full checkpointing recomputes the forward.
A2A_PER_LAYER_RECOMPUTED = 6


@dataclass(frozen=True)
class MoeStep:
    """A step's routed experts: their share of the GEMM FLOPs, routing, EP degree and the EP group's link."""

    #: Share of the step's weight-GEMM FLOPs in routed experts (0: a dense model).
    expert_share: float = 0.0
    experts: int = 0
    top_k: int = 0
    moe_layers: int = 0
    hidden_size: int = 0
    expert_parallel: int = 1
    #: Gb/s per GPU of the EP group's link, and its fixed seconds per collective.
    link_gbps: float = 0.0
    latency_s: float = 0.0
    #: Full checkpointing reruns the forward's dispatch and combine.
    recompute: bool = False
    #: The framework runs the routed experts through PyTorch's grouped GEMM (``torch._grouped_mm``), whose rate its
    #: tokens per expert set (``grouped_mm_half_tokens``), not the dense GEMMs' fill.
    grouped_mm: bool = False

    @property
    def routed(self) -> bool:
        """Whether the model has routed experts."""
        return self.expert_share > 0 and self.experts > 0 and self.top_k > 0


#: A dense model.
NO_MOE = MoeStep()


@memoized
def routed_total_params(arch: Architecture) -> int:
    """Every routed expert's parameters (all copies): what expert parallelism splits.

    Their gradients are what the expert-data-parallel group reduces
    (:attr:`~generator.sizing.training_step.StepLinks.expert_dp_gbps`).
    """
    return sum(lin.weight_params + lin.bias_params for layer in arch.layers for lin in layer.linears if lin.group == EXPERT)


@memoized
def moe_layer_count(arch: Architecture) -> int:
    """The decoder layers with routed experts."""
    return sum(1 for layer in arch.layers if layer.is_moe)


def moe_step(
    arch: Architecture,
    *,
    expert_parallel: int = 1,
    link_gbps: float = 0.0,
    latency_s: float = 0.0,
    recompute: bool = False,
    grouped_mm: bool = False,
) -> MoeStep:
    """``arch``'s routed experts as the step times them (:data:`NO_MOE` for a dense model).

    ``grouped_mm``: the framework runs them through ``torch._grouped_mm``
    (:func:`generator.sizing.training.runs_grouped_mm_experts`).
    """
    experts, top_k = arch.routed_experts
    if not experts:
        return NO_MOE
    return MoeStep(
        expert_share=routed_expert_params(arch) / max(1, arch.flop_params),
        experts=experts,
        top_k=top_k,
        moe_layers=moe_layer_count(arch),
        hidden_size=arch.hidden_size,
        expert_parallel=max(1, expert_parallel),
        link_gbps=link_gbps,
        latency_s=latency_s,
        recompute=recompute,
        grouped_mm=grouped_mm,
    )


def tokens_per_expert(moe: MoeStep, micro_batch_tokens: int) -> float:
    """Tokens one routed expert multiplies per micro-batch: its share of the EP group's routed pairs."""
    return micro_batch_tokens * moe.expert_parallel * moe.top_k / moe.experts


def busiest_rank(moe: MoeStep, micro_batch_tokens: int) -> float:
    """The busiest EP rank's routed tokens over the mean rank's (routing's sampling spread only; 1 without EP)."""
    if moe.expert_parallel <= 1:
        return 1.0
    tokens = micro_batch_tokens * moe.expert_parallel
    return busiest_expert_rank_load(moe.experts, moe.top_k, moe.expert_parallel, tokens, 0.0)


def expert_fill(moe: MoeStep, micro_batch_tokens: int, consts: Constants) -> float:
    """The routed experts' GEMM rate at their tokens per expert, as a share of a large GEMM's.

    A grouped GEMM (:attr:`MoeStep.grouped_mm`) at ``t / (t + grouped_mm_half_tokens)``; else the dense GEMMs' fill
    (:func:`~generator.sizing.performance.gemm_fill`).
    """
    tokens = tokens_per_expert(moe, micro_batch_tokens)
    if moe.grouped_mm and consts.grouped_mm_half_tokens > 0:
        return tokens / (tokens + consts.grouped_mm_half_tokens)
    return gemm_fill(tokens, consts)


def expert_compute_factor(moe: MoeStep, micro_batch_tokens: int, consts: Constants) -> float:
    """The step's compute time over a dense model's of the same FLOPs at the same micro-batch (1 for a dense model).

    The routed share runs at its fill (:func:`expert_fill`), times the busiest rank's load, where the dense model's
    GEMMs run at the micro-batch's fill.
    """
    if not moe.routed:
        return 1.0
    dense_fill = gemm_fill(micro_batch_tokens, consts)
    share = moe.expert_share
    routed = busiest_rank(moe, micro_batch_tokens) * dense_fill / expert_fill(moe, micro_batch_tokens, consts)
    return (1.0 - share) + share * routed


def alltoall_bytes(moe: MoeStep, micro_batch_tokens: int) -> float:
    """Bytes one GPU sends in a micro-batch's EP all-to-alls (the busiest rank's, which the collective waits for)."""
    ep = moe.expert_parallel
    if not moe.routed or ep <= 1:
        return 0.0
    calls = A2A_PER_LAYER_RECOMPUTED if moe.recompute else A2A_PER_LAYER
    routed = micro_batch_tokens * moe.top_k * moe.hidden_size * A2A_WIRE_BYTES * (ep - 1) / ep
    return calls * moe.moe_layers * routed * busiest_rank(moe, micro_batch_tokens)


def alltoall_calls(moe: MoeStep) -> int:
    """All-to-alls one GPU issues per micro-batch."""
    if not moe.routed or moe.expert_parallel <= 1:
        return 0
    return (A2A_PER_LAYER_RECOMPUTED if moe.recompute else A2A_PER_LAYER) * moe.moe_layers


def moe_step_assumptions(moe: MoeStep) -> list[str]:
    """What the estimate says an MoE step assumes (nothing for a dense model)."""
    if not moe.routed:
        return []
    ep = ""
    if moe.expert_parallel > 1:
        ep = (
            f", on the busiest EP rank's routing spread (balanced popularity assumed), and EP {moe.expert_parallel}'s "
            "all-to-alls counted in series"
        )
    return [
        f"mixture of experts: {moe.experts} routed experts, top {moe.top_k}; the experts' GEMMs are timed at their "
        f"tokens per expert{ep}"
    ]


#: What a framework that loops over experts adds and the step does not count.
EXPERT_LOOP_NOT_COUNTED = (
    "the host time of running the routed experts as a per-expert Python loop (Transformers 4.x MoE blocks; Unsloth's "
    "grouped-GEMM kernels and Transformers 5's torch._grouped_mm replace it, 12-30x faster by Unsloth's account): "
    "with that loop a step can take several times the time given; Transformers 5's grouped_mm blocks are timed by their "
    "kernel launches, routing passes and torch._grouped_mm's rate at their tokens per expert (specgen's Trainer runs of "
    "Qwen3-30B-A3B on an H200 ran at the time given at 2,048 and 8,192 tokens)"
)
