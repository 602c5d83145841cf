"""Issue 9 (acc107): the layers' norms, rotary embedding, gating and residual adds where eager PyTorch runs them.

Per token and layer, forward, bf16: two RMSNorms at 36 B a hidden element, two residual adds at 6, rotary q and k at 20
B an element, the attention output's transpose copy at 4 B a q element, the MLP's activation and gating at 10 B a
``down_proj`` input element; backward twice that, full checkpointing a forward more. Llama 3.1 8B (hidden 4,096, q
4,096 wide, k 1,024, intermediate 14,336, 32 layers) by hand: 84 x 4,096 + 24 x 4,096 + 20 x 1,024 + 10 x 14,336 =
606,208 B a layer, 19,398,656 B a token forward.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.frameworks import FRAMEWORKS
from generator.sizing.training import TrainingSetup, eager_elementwise_bytes_per_token, eager_kernels_per_micro_batch
from generator.sizing.training_elementwise import (
    eager_bytes_per_token,
    forward_bytes_per_token,
    forward_kernels,
    loss_bytes_per_token,
)
from generator.sizing.training_step import NO_DP, StepLayout, StepLinks, StepTime, training_step

CONSTS = Constants()
LLAMA_8B = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
QWEN3_MOE = parse_architecture(find_model("Qwen/Qwen3-30B-A3B").config)
LLAMA_8B_FORWARD = 32 * (84 * 4096 + 24 * 4096 + 20 * 1024 + 10 * 14336)


def test_llama_forward_bytes_by_hand() -> None:
    assert LLAMA_8B_FORWARD == 19_398_656
    assert forward_bytes_per_token(LLAMA_8B) == LLAMA_8B_FORWARD


@pytest.mark.parametrize(("checkpointing", "passes"), [("full", 4), ("none", 3), ("selective", 3)])
def test_backward_doubles_it_and_full_recompute_adds_a_forward(checkpointing: str, passes: int) -> None:
    assert eager_bytes_per_token(LLAMA_8B, checkpointing) == LLAMA_8B_FORWARD * passes


def test_a_moe_token_gates_only_its_routed_experts() -> None:
    # Qwen3-30B-A3B: hidden 2,048, q 32 x 128, k 4 x 128, 8 of 128 experts a token at 768 wide, 48 layers; acc111: the
    # grouped_mm block's routing, 18 B a copied hidden element (gather, sort, weight, unsort: 4 each; the sum's read 2)
    # over the token's 8 copies plus the sum's 2 B write a hidden element (342,016 B a layer before); acc113: Qwen3's
    # q_norm and k_norm, an RMSNorm over each head of q and k, 36 B an element of the 36 heads x 128 (641,024 before)
    per_layer = 84 * 2048 + 24 * 4096 + 20 * 512 + 10 * 8 * 768 + (18 * 8 + 2) * 2048 + 36 * 36 * 128
    assert per_layer == 806_912
    assert forward_bytes_per_token(QWEN3_MOE) == 48 * per_layer


#: Which frameworks run the operators eager by default: the Hugging Face Trainer family and DeepSpeed through it; the
#: compiled (torchtune's README rows, torchtitan's FSDP2), Transformer Engine's (Megatron-LM) and Triton-fused
#: (Unsloth, Liger) ones do not.
EAGER = {"hf", "trl", "axolotl", "llama-factory", "deepspeed"}


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_which_frameworks_run_them_eager(framework: str) -> None:
    # acc113: with the eager cross-entropy's 36 B a logit over Llama 3's 128,256-token vocabulary (4,617,216 B a token)
    setup = TrainingSetup(method="lora", framework=framework, checkpointing="full")
    expected = LLAMA_8B_FORWARD * 4 + 36 * 128_256 if framework in EAGER else 0.0
    assert eager_elementwise_bytes_per_token(LLAMA_8B, setup) == expected


# acc113 (issue 9): Gemma 3 1B's layer by hand (hidden 1,152, q 4 x 256, k 1 x 256, intermediate 6,912, 26 layers): four
# sandwich RMSNorms (input, post-attention, pre- and post-feed-forward) and q_norm / k_norm over q and k, 36 B an element
# each; two residual adds; rotary q and k; the transpose; the gating. Its loss: Transformers' ForCausalLMLoss upcasts
# the 262,144-wide bf16 logits to fp32 and runs cross_entropy, 36 B a logit, 9,437,184 B a token, more than the 26
# layers' forward passes together.
GEMMA3_1B = parse_architecture(find_model("google/gemma-3-1b-it").config)
GEMMA3_LAYER = (4 * 36 + 2 * 6) * 1152 + 20 * (1024 + 256) + 4 * 1024 + 10 * 6912 + 36 * (1024 + 256)


def test_gemma3_sandwich_and_qk_norms_by_hand() -> None:
    assert GEMMA3_LAYER == 324_608
    assert forward_bytes_per_token(GEMMA3_1B) == 26 * GEMMA3_LAYER == 8_439_808
    # kernels: four norms of 8, q_norm and k_norm of 8, two adds, rotary 10, attention and transpose 2, 7 GEMMs, gating 2
    assert forward_kernels(GEMMA3_1B) == 26 * (4 * 8 + 2 * 8 + 2 + 10 + 2 + 7 + 2) == 1846


def test_the_eager_loss_moves_the_logits_outside_the_checkpointed_layers() -> None:
    for checkpointing, passes in (("full", 4), ("none", 3)):
        setup = TrainingSetup(method="full", framework="hf", checkpointing=checkpointing)
        assert eager_elementwise_bytes_per_token(GEMMA3_1B, setup) == 26 * GEMMA3_LAYER * passes + 36 * 262_144
    assert loss_bytes_per_token(GEMMA3_1B, "standard") == loss_bytes_per_token(GEMMA3_1B, "chunked") == 9_437_184
    assert loss_bytes_per_token(GEMMA3_1B, "fused") == 0.0


def test_fused_kernels_or_no_framework_count_none() -> None:
    assert eager_elementwise_bytes_per_token(LLAMA_8B, TrainingSetup(method="full", framework="hf", fused_kernels=True)) == 0
    assert eager_elementwise_bytes_per_token(LLAMA_8B, TrainingSetup(method="full")) == 0


def _step(elementwise_bytes_per_token: float) -> float:
    return training_step(
        StepLayout(1, 1, 1, 2, 2, 4096),
        StepLinks(tp_gbps=0.0, stage_gbps=0.0),
        CONSTS,
        hidden_size=4096,
        num_layers=32,
        flops_per_token=1e15 / 4096,
        base_efficiency=1.0,
        dense_tflops=100.0,
        dp_traffic=NO_DP,
        memory_gb_per_s=4000.0,
        elementwise_bytes_per_token=elementwise_bytes_per_token,
    ).total_s


def test_the_step_adds_them_in_series_at_the_hbm_rate() -> None:
    # 2 x 2 x 4,096 tokens x 77,594,624 B (Llama 3.1 8B, full checkpointing) = 1,271 GB at 4,000 GB/s: 0.318 s more
    extra = _step(LLAMA_8B_FORWARD * 4) - _step(0.0)
    assert extra == pytest.approx(4 * 4096 * LLAMA_8B_FORWARD * 4 / 4000e9)
    assert extra == pytest.approx(0.3178, abs=1e-4)


# acc111 (issue 9): the kernels eager PyTorch launches one at a time. Llama 3.1 8B's layer by hand: two RMSNorms of 8
# kernels, two residual adds, rotary q and k 10, the attention and its transpose 2, seven GEMMs, the gating 2 = 39.
# Qwen3-30B-A3B's: 16 + 2 + 12, q_norm and k_norm 16 (acc113), four attention GEMMs and the router's, the grouped_mm
# block's 19, the gating 2 = 72.
def test_forward_kernels_by_hand() -> None:
    assert forward_kernels(LLAMA_8B) == 32 * (2 * 8 + 2 + 10 + 2 + 7 + 2) == 1248
    assert forward_kernels(QWEN3_MOE) == 48 * (2 * 8 + 2 + 10 + 2 + 16 + 5 + 19 + 2) == 3456


@pytest.mark.parametrize(
    ("framework", "checkpointing", "expected"),
    [
        # PEFT on all seven linears a layer, fp32 adapters over bf16 (cast): 1,248 + 224 x (4 + 4) = 3,040 a forward
        ("hf", "full", (2 * 3040, 2 * 3040)),
        ("hf", "none", (3040, 2 * 3040)),
        ("unsloth", "full", (0, 0)),
        ("torchtune", "full", (0, 0)),
        ("megatron", "full", (0, 0)),
    ],
)
def test_eager_kernels_per_micro_batch(framework: str, checkpointing: str, expected: tuple[int, int]) -> None:
    setup = TrainingSetup(method="lora", framework=framework, checkpointing=checkpointing)
    assert eager_kernels_per_micro_batch(LLAMA_8B, setup) == expected


def test_fused_kernels_launch_none_eagerly() -> None:
    assert eager_kernels_per_micro_batch(LLAMA_8B, TrainingSetup(method="full", framework="hf", fused_kernels=True)) == (0, 0)
    assert eager_kernels_per_micro_batch(LLAMA_8B, TrainingSetup(method="full")) == (0, 0)


def _launch_step(kernels: tuple[int, int], flops_per_token: float, *, recompute: bool = False) -> StepTime:
    return training_step(
        StepLayout(1, 1, 1, 1, 2, 2048, recompute),
        StepLinks(tp_gbps=0.0, stage_gbps=0.0),
        CONSTS,
        hidden_size=4096,
        num_layers=32,
        flops_per_token=flops_per_token,
        base_efficiency=1.0,
        dense_tflops=100.0,
        dp_traffic=NO_DP,
        memory_gb_per_s=4000.0,
        eager_kernels_per_micro_batch=kernels,
    )


def test_launches_show_only_beyond_the_gpus_work() -> None:
    """review79 item 2: each phase's launches against that phase's GPU work, never the whole step's against the whole.

    By hand, 2 micro-batches of 6,080 forward kernels at 45 us (0.2736 s each) and 6,080 backward at 15 us (0.0912 s);
    the GPU's work, 2 x 2,048 tokens at 1e10 FLOPs over 100 TFLOPS at 2,048 tokens' GEMM fill (0.992), 0.4128 s, a third
    of it forward (no forward FLOPs given: BACKWARD_SHARE), 0.0688 s a micro-batch's forward, 0.1376 s its backward.
    The forward waits on its launches, 0.2736 - 0.0688 = 0.2048 s a micro-batch; the backward's launches (0.0912 s)
    hide behind its GPU work (0.1376 s): 0.4096 s exposed a step, where the whole step's launches against its whole GPU
    work gave 2 x 0.3648 - 0.4128 = 0.3168 s. (0.6528 s before the session-42 refit of the launch costs, 65 / 5 us.)
    """
    kernels = (6080, 6080)
    host = 2 * (6080 * CONSTS.eager_forward_kernel_host_s + 6080 * CONSTS.eager_backward_kernel_host_s)  # 2 micro-batches
    assert host == pytest.approx(2 * 6080 * 60e-6)
    short = _launch_step(kernels, 1e10)
    assert short.compute_s == pytest.approx(0.4096 / (2048 / (2048 + 16)))
    assert short.host_dispatch_s == pytest.approx(host) and short.host_kernels == 2 * 12160
    assert short.host_backward_dispatch_s == pytest.approx(2 * 6080 * 15e-6)
    assert short.forward_busy_s == pytest.approx(short.compute_s / 3)
    assert short.compute_s / 3 > 6080 * 15e-6  # a micro-batch's backward launches hide behind its backward's GPU work
    exposed = 2 * (6080 * 45e-6 - short.compute_s / 6)
    assert exposed == pytest.approx(0.4096, abs=1e-4)
    assert short.host_exposed_s == pytest.approx(exposed)
    assert short.total_s == pytest.approx(short.compute_s + exposed)
    assert short.as_dict()["host_dispatch_exposed_s"] == round(exposed, 4)
    # a long one: 4.13 s of GPU work, 1.376 s of it forward, hides every launch in both phases
    long = _launch_step(kernels, 1e11)
    assert long.host_exposed_s == 0.0 and long.total_s == pytest.approx(long.compute_s)
    assert "host_dispatch_exposed_s" not in long.as_dict()
    none = _launch_step((0, 0), 1e10)
    assert none.host_dispatch_s == 0.0 and none.total_s == pytest.approx(short.compute_s)


def test_recomputed_forward_launches_in_the_backward_phase() -> None:
    """Full checkpointing: the second half of the forward kernels (the recompute) is launched inside the backward.

    By hand, 2 micro-batches of 3,040 plain forward kernels + 3,040 recomputed (45 us) and 6,080 backward (15 us): the
    forward phase launches 0.1368 s against a sixth of 0.4128 s of GPU work (0.0688 s), 0.0680 s exposed; the backward
    phase 0.1368 + 0.0912 = 0.2280 s against 0.1376 s, 0.0904 s exposed: 2 x 0.1584 = 0.3168 s a step.
    (0.4384 s before the session-42 refit of the launch costs, 65 / 5 us: the forward phase then exposed 0.1288 s.)
    """
    step = _launch_step((6080, 6080), 1e10, recompute=True)
    gpu_forward = step.compute_s / 6  # a micro-batch's third
    assert step.host_backward_dispatch_s == pytest.approx(2 * (3040 * 45e-6 + 6080 * 15e-6))
    expected = 2 * ((3040 * 45e-6 - gpu_forward) + (3040 * 45e-6 + 6080 * 15e-6 - 2 * gpu_forward))
    assert expected == pytest.approx(0.3168, abs=1e-4)
    assert step.host_exposed_s == pytest.approx(expected)


def _simulated_idle_s(phases: list[tuple[int, float, float]], micro_batches: int) -> float:
    """GPU idle seconds of one CPU launching kernels in order onto one GPU stream, synced at each micro-batch's end.

    ``phases``: (kernels, CPU seconds a launch, GPU seconds a kernel) of a micro-batch, in launch order. A kernel starts
    once the CPU has launched it and the stream has run the one before; the CPU launches on without waiting; at the
    micro-batch's end the CPU waits for the stream (the HF Trainer's ``torch.isnan(tr_loss_step)`` after the backward).
    """
    clock = work = 0.0
    for _ in range(micro_batches):
        cpu = stream = clock
        for kernels, launch_s, kernel_s in phases:
            for _ in range(kernels):
                cpu += launch_s
                stream = max(cpu, stream) + kernel_s
                work += kernel_s
        clock = stream  # the sync: the next micro-batch's first launch waits for this one's last kernel
    return clock - work


@pytest.mark.parametrize(
    ("launch_forward", "gpu_forward", "launch_backward", "gpu_backward", "by_hand", "phase_by_phase"),
    [
        # (seconds a micro-batch) the forward launch-bound, the backward's launches hidden: both forms agree
        (0.27, 0.07, 0.09, 0.14, 0.20, 0.20),
        # both launch-bound: the two phases' excesses add up, both forms agree
        (0.14, 0.07, 0.23, 0.14, 0.16, 0.16),
        # the forward GPU-bound, the backward launch-bound: the backward's launches start behind the forward's GPU
        # work, which hides 0.05 s of them (review80 item 8: phase by phase overstated it by min(0.05, 0.08))
        (0.05, 0.10, 0.20, 0.12, 0.03, 0.08),
        # ... and all of them where the forward's slack exceeds the backward's excess
        (0.02, 0.10, 0.15, 0.10, 0.0, 0.05),
        # GPU-bound throughout
        (0.05, 0.10, 0.05, 0.20, 0.0, 0.0),
    ],
)
def test_launch_exposure_matches_one_stream_synced_after_the_backward(
    launch_forward: float,
    gpu_forward: float,
    launch_backward: float,
    gpu_backward: float,
    by_hand: float,
    phase_by_phase: float,
) -> None:
    """review80 item 8: the exposure is an event simulation's, one CPU launching ahead of one stream, synced once a
    micro-batch after the backward, not each phase's launches against that phase's GPU work alone.

    2 micro-batches of 2,000 forward and 2,000 backward kernels; the simulation differs from the closed form by at
    most one kernel's launch and run a micro-batch (the first launch the GPU waits for, the last kernel after the
    last launch).
    """
    kernels, micro_batches = 2000, 2
    phases = [
        (kernels, launch_forward / kernels, gpu_forward / kernels),
        (kernels, launch_backward / kernels, gpu_backward / kernels),
    ]
    simulated = _simulated_idle_s(phases, micro_batches)
    grain = micro_batches * max(launch + run for _, launch, run in phases)
    step = StepTime(
        compute_s=micro_batches * (gpu_forward + gpu_backward),
        tp_allreduce_s=0.0,
        pp_transfer_s=0.0,
        pp_bubble_s=0.0,
        dp_comm_s=0.0,
        dp_inter_node_s=0.0,
        tp_bytes=0.0,
        pp_bytes=0.0,
        dp_bytes=0.0,
        host_dispatch_s=micro_batches * (launch_forward + launch_backward),
        host_backward_dispatch_s=micro_batches * launch_backward,
        forward_busy_s=micro_batches * gpu_forward,
    )
    assert step.host_exposed_s == pytest.approx(micro_batches * by_hand, abs=1e-12)
    assert abs(simulated - step.host_exposed_s) <= grain
    # the phase-by-phase form, for the record: off the simulation by more than the grain where the two differ
    if phase_by_phase != by_hand:
        assert abs(simulated - micro_batches * phase_by_phase) > 10 * grain


def test_recomputed_backward_launches_start_behind_a_gpu_bound_forward() -> None:
    """review80 item 8, through the step: full checkpointing puts the recompute's Python launches in the backward.

    By hand, 2 micro-batches of 1,000 plain forward kernels + 1,000 recomputed (45 us) and 12,000 backward (15 us): the
    forward phase launches 0.045 s against 0.0688 s of GPU work (GPU-bound, 0.0238 s to spare), the backward phase
    0.045 + 0.18 = 0.225 s against 0.1376 s; the stream ends 0.045 + 0.225 - 0.2064 = 0.0636 s after its work a
    micro-batch, 0.1272 s a step (0.1748 s phase by phase, the backward's 0.0874 s a micro-batch with none of the
    forward's slack).
    """
    step = _launch_step((2000, 12000), 1e10, recompute=True)
    gpu_forward = step.compute_s / 6
    assert gpu_forward == pytest.approx(0.0688, abs=1e-4) and gpu_forward > 1000 * 45e-6
    expected = 2 * (1000 * 45e-6 + 1000 * 45e-6 + 12000 * 15e-6 - 3 * gpu_forward)
    assert expected == pytest.approx(0.1272, abs=1e-4)
    assert step.host_exposed_s == pytest.approx(expected)
