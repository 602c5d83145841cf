"""The compute ceiling of a training step on a GPU whose bf16 MMAs issue at half its tensor cores' rate.

A GeForce card (NVIDIA's consumer RTX 30 / 40 / 50 series, the catalog's ``consumer`` NVIDIA cards) runs FP16 and
BF16 tensor math with FP32 accumulate at half the rate it runs FP16 with FP16 accumulate: the RTX 4090 165.2 against
330.3 dense TFLOPS, the RTX 3090 71 against 142 (NVIDIA Ada whitepaper v2.1 appendix A and the GA102 whitepaper; the
catalog's ``notes`` of each card). BF16 always accumulates in FP32, so a bf16 training step runs its MMAs at the halved
rate, while the rest of the SM (its schedulers, load / store and shared-memory paths, FP32 and special-function pipes)
is provisioned for the full one. Profiled on Ada (https://github.com/triton-lang/triton/issues/10851: an RTX 4060,
NCU): with FP32 accumulate the tensor pipe is 95.7% busy while the SM's throughput is 47% of its peak; with FP16
accumulate the SM's throughput (86.9%) binds and the tensor pipe drops to 89.9%. The professional cards of the same
chips (RTX A6000, A40, RTX 6000 Ada) and the data-centre parts run FP32 accumulate at the full rate: no slack.

The fitted ceiling (:func:`generator.sizing.training_mfu.training_utilisation`, ``training_mfu`` x the GEMM size x the
attention share) is what a step keeps of the reference GPU's rate; over the GPU's own best GEMM it is
``ceiling / reference_share``. What it loses beyond that best GEMM (the real shapes' tiles, the work issued between
the MMAs: address math, shared-memory loads, softmax and its exponentials, epilogues, the kernels between the GEMMs)
is set per MMA instruction by the SM's other pipes; where each MMA takes twice the cycles that work hides in half the
time relative to the MMAs:

    own = ceiling / reference_share
    own' = 1 / (1 + (1 / own - 1) x issue_share)

with ``issue_share`` the MMAs' issue rate over the full one (0.5 on a GeForce card, 1 elsewhere: unchanged). The
memory-bound operators inside the GEMM-size term are taken with the rest (an overstatement for them: compiled
frameworks fuse most of them). No constant is fitted: the issue share is the datasheet's ratio.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from generator.catalog.records import GpuSpec

#: A GeForce card's FP32-accumulate tensor rate over its FP16-accumulate rate (the datasheets' halved column).
GEFORCE_FP32_ACCUMULATE_SHARE = 0.5


def mma_issue_share(gpu: GpuSpec) -> float:
    """The rate ``gpu`` issues bf16 (FP32-accumulate) MMAs at over its tensor cores' full rate: 0.5 on a GeForce card."""
    return GEFORCE_FP32_ACCUMULATE_SHARE if gpu.vendor == "nvidia" and gpu.consumer else 1.0


def issue_slack_efficiency(ceiling: float, reference_share: float, issue_share: float) -> float:
    """The step's compute ceiling with the losses beside the MMAs scaled by ``issue_share`` (see the module docstring).

    ``ceiling``: the fitted ceiling over the rate the step is timed at (the reference-normalised sustained rate);
    ``reference_share``: the reference GPU's measured share of its peak that rate is normalised by
    (:meth:`generator.catalog.records.GpuSpec.reference_share`). Unchanged where ``issue_share`` >= 1.
    """
    if issue_share >= 1.0 or ceiling <= 0.0 or reference_share <= 0.0 or ceiling >= reference_share:
        return ceiling  # at or past the card's best GEMM (FP8 GEMMs timed at the bf16 rate): nothing lost to hide
    own = ceiling / reference_share
    return reference_share / (1.0 + (1.0 / own - 1.0) * issue_share)


def step_compute_ceiling(ceiling: float, gpu: GpuSpec) -> float:
    """``ceiling`` on ``gpu`` in bf16: :func:`issue_slack_efficiency` with the GPU's own issue share."""
    return issue_slack_efficiency(ceiling, gpu.reference_share("bf16"), mma_issue_share(gpu))
