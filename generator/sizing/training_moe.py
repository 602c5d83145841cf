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

Not counted: the host time of frameworks that run the experts as a Python loop over ``nn.Linear`` modules
(Hugging Face Transformers 4.x's MoE blocks, which Unsloth puts 12-30x behind its grouped-GEMM kernels with
Transformers 5's ``torch._grouped_mm``, https://unsloth.ai/docs/basics/faster-moe): no published per-expert figure
fixes it (:func:`moe_step_assumptions` says so on the estimate). Transformers 5's ``grouped_mm`` blocks are timed by
their kernel launches and routing passes (:mod:`generator.sizing.training_elementwise`), their grouped GEMMs at the
dense GEMMs' ceiling: CUTLASS's SM90 grouped GEMMs ran Qwen3-30B-A3B's ``up_proj`` at 512 tokens an expert at 134-161
TFLOPS on an H100, 14-16% of its dense peak (https://github.com/tgale96/grouped_gemm/pull/37), which the step does not
apply (one shape, one GPU).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.sizing.architecture import EXPERT, Architecture
from generator.sizing.constants import Constants
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

    @property
    def routed(self) -> bool:
        """Whether the model has routed experts."""
        return self.expert_share > 0 and self.experts > 0 and self.top_k > 0


#: A dense model.
NO_MOE = MoeStep()


def routed_expert_params(arch: Architecture) -> int:
    """Routed-expert parameters a token multiplies: ``top_k`` experts' matrices in each MoE layer."""
    total = 0
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT and lin.copies:
                per_expert = (lin.weight_params + lin.bias_params) // lin.copies
                total += per_expert * min(layer.experts_per_token, lin.copies)
    return total


def routed_total_params(arch: Architecture) -> int:
    """Every routed expert's parameters (all copies): what expert parallelism splits.

    Their gradients are what the expert-data-parallel group reduces
    (:attr:`~generator.sizing.training_step.StepLinks.expert_dp_gbps`).
    """
    return sum(lin.weight_params + lin.bias_params for layer in arch.layers for lin in layer.linears if lin.group == EXPERT)


def moe_step(
    arch: Architecture,
    *,
    expert_parallel: int = 1,
    link_gbps: float = 0.0,
    latency_s: float = 0.0,
    recompute: bool = False,
) -> MoeStep:
    """``arch``'s routed experts as the step times them (:data:`NO_MOE` for a dense model)."""
    experts, top_k = arch.routed_experts
    if not experts:
        return NO_MOE
    return MoeStep(
        expert_share=routed_expert_params(arch) / max(1, arch.flop_params),
        experts=experts,
        top_k=top_k,
        moe_layers=sum(1 for layer in arch.layers if layer.is_moe),
        hidden_size=arch.hidden_size,
        expert_parallel=max(1, expert_parallel),
        link_gbps=link_gbps,
        latency_s=latency_s,
        recompute=recompute,
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


def expert_compute_factor(moe: MoeStep, micro_batch_tokens: int, consts: Constants) -> float:
    """The step's compute time over a dense model's of the same FLOPs at the same micro-batch (1 for a dense model).

    The routed share runs at the fill of its tokens per expert, times the busiest rank's load, where the dense model's
    GEMMs run at the micro-batch's fill.
    """
    if not moe.routed:
        return 1.0
    dense_fill = gemm_fill(micro_batch_tokens, consts)
    expert_fill = gemm_fill(tokens_per_expert(moe, micro_batch_tokens), consts)
    share = moe.expert_share
    return (1.0 - share) + share * busiest_rank(moe, micro_batch_tokens) * dense_fill / expert_fill


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
    "kernel launches and routing passes, their grouped GEMMs at the dense GEMMs' rate, which small experts do not reach "
    "(specgen's Trainer runs of Qwen3-30B-A3B on an H200 ran at the time given at 2,048 tokens and took 1.4x it at 8,192)"
)
