"""Training-step details: interleaved-pipeline activation memory and per-collective latency."""

from __future__ import annotations

import dataclasses
import math

import pytest

from generator import catalog
from generator.calculator.model_source import resolve_model
from generator.planner.training_comm import StepComm, dp_bytes_per_gpu, dp_traffic, gpu_link_latency_s, links_between
from generator.planner.training_report import step_split_text
from generator.sizing.constants import Constants
from generator.sizing.pipeline_schedule import interleaved_activation_factor
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.training_step import (
    DDP_BUCKET_BYTES,
    DpTraffic,
    StepLayout,
    StepLinks,
    StepTime,
    collectives_per_step,
    training_step,
)
from generator.sizing.weights import Parallelism

CONSTS = Constants()
#: DP collectives of the steps below: 1e9 bytes per GPU, one all-reduce per bucket.
DP_CALLS = math.ceil(1e9 / DDP_BUCKET_BYTES)


@pytest.mark.parametrize(
    ("pp", "virtual", "factor"),
    [
        pytest.param(1, 8, 1.0, id="no-pipeline"),
        pytest.param(4, 1, 1.0, id="plain-1f1b"),
        # Korthikanti et al. section 4.2.3: 1 + (p - 1) / (p v)
        pytest.param(4, 2, 1 + 3 / 8, id="pp4-v2"),
        pytest.param(8, 5, 1 + 7 / 40, id="pp8-v5"),
        pytest.param(16, 4, 1 + 15 / 64, id="pp16-v4"),
    ],
)
def test_interleaved_first_stage_holds_more_activations(pp: int, virtual: int, factor: float) -> None:
    assert interleaved_activation_factor(pp, virtual) == pytest.approx(factor)
    if pp > 1 and virtual > 1:
        # Megatron's interleaved warm-up: 2 (p - 1) + (v - 1) p chunk micro-batches, then one more in flight
        chunks = 2 * (pp - 1) + (virtual - 1) * pp + 1
        assert chunks / (pp * virtual) == pytest.approx(factor)


@pytest.mark.parametrize(("pp", "grows"), [(1, False), (4, True), (8, True)])
def test_size_training_counts_the_interleaved_activations(pp: int, grows: bool) -> None:
    arch = resolve_model("meta-llama/Llama-3.1-70B-Instruct").architecture
    setup = TrainingSetup(method="full", micro_batch_size=1, sequence_length=4096, checkpointing="none")
    par = Parallelism(8, pp)
    plain = size_training(arch, setup, par, CONSTS._replace(training_pipeline_virtual_stages=1), nvlink=False)
    interleaved = size_training(arch, setup, par, CONSTS._replace(training_pipeline_virtual_stages=2), nvlink=False)
    assert (interleaved.per_gpu.activations > plain.per_gpu.activations) is grows
    assert (interleaved.per_gpu.total > plain.per_gpu.total) is grows
    deeper = size_training(arch, setup, par, CONSTS._replace(training_pipeline_virtual_stages=5), nvlink=False)
    # more chunks per GPU: a smaller bubble, and less extra memory than two chunks (1 + (p - 1) / (p v))
    assert (deeper.per_gpu.activations < interleaved.per_gpu.activations) is grows


# --- per-collective latency --------------------------------------------------------------------------


def _step(links: StepLinks, tp: int = 8, pp: int = 2, dp: int = 4, acc: int = 8, dp_bytes: float = 1e9) -> StepTime:
    step = training_step(
        StepLayout(tp, pp, dp, 1, acc, 4096),
        links,
        CONSTS,
        hidden_size=8192,
        num_layers=80,
        flops_per_token=6 * 70e9,
        base_efficiency=0.3,
        dense_tflops=989.0,
        dp_traffic=DpTraffic(dp_bytes, DP_CALLS),
    )
    return step


BANDWIDTH = StepLinks(tp_gbps=3600.0, stage_gbps=3600.0, dp_intra_gbps=3600.0)


@pytest.mark.parametrize(
    ("pp", "acc", "bubble"),
    [
        # interleaved over 8 virtual stages (80 layers / PP2 = 40 a stage): (p - 1) / (v m + p - 1)
        pytest.param(2, 8, 1 / (8 * 8 + 1), id="pp2-m8-interleaved"),
        # newuser12 item 4: fewer micro-batches than stages, or not a multiple of them, cannot interleave: plain 1F1B
        pytest.param(2, 1, 1 / (1 + 1), id="pp2-m1-plain"),
        pytest.param(4, 6, 3 / (6 + 3), id="pp4-m6-plain"),
    ],
)
def test_the_bubble_interleaves_only_a_whole_multiple_of_the_stages_in_micro_batches(pp: int, acc: int, bubble: float) -> None:
    step = _step(BANDWIDTH, pp=pp, acc=acc)
    busy = step.compute_s + step.tp_allreduce_s + step.pp_transfer_s
    assert step.pp_bubble_s / (busy + step.pp_bubble_s) == pytest.approx(bubble)


@pytest.mark.parametrize(
    ("tp", "pp", "acc", "calls"),
    [
        pytest.param(8, 1, 8, (4 * 80 * 8, 0), id="tp8-four-all-reduces-per-layer-and-micro-batch"),
        pytest.param(8, 2, 8, (4 * 40 * 8, 2 * 8 * 8), id="pp2-sends-per-chunk-boundary"),
        pytest.param(1, 1, 1, (0, 0), id="one-gpu-per-replica-no-collectives"),
    ],
)
def test_collectives_per_step(tp: int, pp: int, acc: int, calls: tuple[int, int]) -> None:
    layout = StepLayout(tp, pp, 4, 1, acc, 4096)
    virtual = 8 if pp == 2 else 1  # 80 layers over 2 stages: 40 per stage, interleaved 8 deep
    assert collectives_per_step(layout, 80, virtual) == calls


GRADS_1E9 = 500_000_000  # trainable parameters whose bf16 gradients are 1e9 bytes


@pytest.mark.parametrize(
    ("zero", "dp", "acc", "passes"),
    [
        pytest.param(0, 4, 4, 1, id="zero0-one-all-reduce-per-bucket"),
        pytest.param(1, 4, 4, 1, id="zero1-as-zero0"),
        pytest.param(2, 4, 4, 4 + 1, id="zero2-reduce-scatter-per-micro-batch-then-all-gather"),
        pytest.param(3, 4, 4, 3 * 4, id="zero3-reduce-scatter-and-two-all-gathers-per-micro-batch"),
        pytest.param(3, 1, 4, 0, id="one-replica-none"),
    ],
)
def test_dp_collectives_count_gradient_buckets_not_wire_bytes(zero: int, dp: int, acc: int, passes: int) -> None:
    traffic = dp_traffic(GRADS_1E9, 2 * GRADS_1E9, zero, dp, acc)
    assert traffic.collectives == math.ceil(1e9 / DDP_BUCKET_BYTES) * passes
    assert traffic.bytes_per_gpu == dp_bytes_per_gpu(GRADS_1E9, 2 * GRADS_1E9, zero, dp, acc)


def test_each_collective_adds_its_link_latency() -> None:
    latency = 30e-6
    slow = dataclasses.replace(BANDWIDTH, tp_latency_s=latency, stage_latency_s=latency, dp_latency_s=latency)
    fast, delayed = _step(BANDWIDTH), _step(slow)
    tp_calls, pp_calls = collectives_per_step(StepLayout(8, 2, 4, 1, 8, 4096), 80, 8)
    dp_calls = DP_CALLS
    assert delayed.tp_allreduce_s - fast.tp_allreduce_s == pytest.approx(CONSTS.training_tp_exposed_fraction * tp_calls * latency)
    assert delayed.pp_transfer_s - fast.pp_transfer_s == pytest.approx(pp_calls * latency)
    assert delayed.dp_comm_s - fast.dp_comm_s == pytest.approx(dp_calls * latency)
    assert delayed.latency_s == pytest.approx((CONSTS.training_tp_exposed_fraction * tp_calls + pp_calls + dp_calls) * latency)
    assert delayed.total_s > fast.total_s and fast.latency_s == 0.0


@pytest.mark.parametrize(
    ("gpu", "group", "constant"),
    [
        pytest.param("h100-sxm5-80gb", 8, "allreduce_latency_nvlink_s", id="nvlink"),
        pytest.param("l40s-48gb", 2, "allreduce_latency_pcie_s", id="pcie"),
    ],
)
def test_links_carry_the_named_latency_of_their_gpu_link(gpu: str, group: int, constant: str) -> None:
    spec = catalog.gpus()[gpu]
    assert gpu_link_latency_s(spec, group, CONSTS) == getattr(CONSTS, constant)
    tp_links = links_between(spec, group, 2, 400.0, group, 1, 2, CONSTS)
    dp_links = links_between(spec, group, 1, 0.0, 1, 1, group, CONSTS)  # one node: no network step
    assert tp_links.tp_latency_s == dp_links.dp_latency_s == getattr(CONSTS, constant)


#: One node's 8-GPU collective (the fitted 32 us) plus NCCL's tuning model across nodes (src/graph/tuning.cc):
#: a ring adds, per further node, 7 NVLink steps of 3.4 us and a network step of 14 us (37.8 us); a tree all-reduce
#: two network hops of 28 us per level of log2(nodes).
@pytest.mark.parametrize(
    ("tp", "dp", "nodes", "zero", "micro_s"),
    [
        (1, 8, 1, 3, 32.0),  # one node: the fitted latency
        (1, 16, 2, 3, 32.0 + 37.8),
        (1, 24, 3, 3, 32.0 + 2 * 37.8),
        (1, 752, 94, 3, 32.0 + 93 * 37.8),  # newuser28 item 1: 94 nodes were timed at 32 us
        (8, 4, 4, 3, 32.0 + 3 * 14.0),  # a TP8 replica a node: one DP rank a node, network steps alone
        (1, 752, 94, 1, 32.0 + 2 * 6 * 28.0),  # ZeRO-1 all-reduces run as trees: log2(94) = 6 levels
        (1, 16, 2, 0, 32.0 + 2 * 1 * 28.0),
    ],
)
def test_a_data_parallel_collective_across_nodes_takes_nccls_steps(tp: int, dp: int, nodes: int, zero: int,
                                                                   micro_s: float) -> None:  # fmt: skip
    links = links_between(catalog.gpus()["h100-sxm5-80gb"], 8, nodes, 3200.0, tp, 1, dp, CONSTS, zero)
    assert links.dp_latency_s * 1e6 == pytest.approx(micro_s)


def test_the_step_line_names_the_collective_latency_when_it_counts() -> None:
    latency = 30e-6
    slow = dataclasses.replace(BANDWIDTH, tp_latency_s=latency, stage_latency_s=latency, dp_latency_s=latency)
    with_latency = step_split_text(StepComm(_step(slow), "fabric", "nvlink", "nvlink"), 8, 2, 4)
    without = step_split_text(StepComm(_step(BANDWIDTH), "fabric", "nvlink", "nvlink"), 8, 2, 4)
    assert "per-collective latency" in with_latency and "per-collective latency" not in without


@pytest.mark.parametrize(
    ("platform", "gbps"),
    [("gcp-a3-highgpu-8g", 200.0), ("gcp-a3-megagpu-8g", 200.0), ("aws-p5-48xlarge", 3200.0), ("aws-g6e-xlarge", 20.0)],
)
def test_a_cloud_node_sends_over_the_nics_its_rendered_pool_attaches(platform: str, gbps: float) -> None:
    """newuser28 item 7: NCCL's traffic takes a P5's EFA cards alone, not its ENA; an instance without GPU NICs sends
    over its network. newuser45 item 8: an A3's GPU NICs (4 x 200 Gb/s on A3 High, 8 on A3 Mega,
    https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx) need additional node networks
    the GKE render does not attach, so its 1,000 / 1,800 Gb/s leave the 200 Gb/s primary NIC."""
    from generator.planner.nodes import node_link

    spec = catalog.platforms()[platform]
    assert node_link(spec, catalog.gpus()[spec.gpu_ids[0]], spec.gpu_counts[0], True)[0] == gbps


@pytest.mark.parametrize(
    ("layers", "pp", "head", "factor"),
    [
        pytest.param(36, 1, 4.6, 1.0, id="no-pipeline"),
        pytest.param(36, 4, 0.0, 1.0, id="no-head"),
        # layers divide over the stages: Megatron-Core's even split, 9 layers + the head on the last stage
        pytest.param(36, 4, 4.6, (9 + 4.6) / ((36 + 4.6) / 4), id="even-split-gpt-oss"),
        pytest.param(80, 8, 1.22, (10 + 1.22) / ((80 + 1.22) / 8), id="even-split-llama-70b"),
        # 61 layers over 4 stages (Megatron-Core refuses the even split): placed at their best, n on the last stage,
        # the slowest min over n of max(ceil((61 - n) / 3), n + 1.5): n = 14 -> max(16, 15.5) = 16
        pytest.param(61, 4, 1.5, 16 / ((61 + 1.5) / 4), id="uneven-best-placement"),
        # 126 layers over 16: n = 7 -> max(ceil(119 / 15) = 8, 7.65) = 8
        pytest.param(126, 16, 0.65, 8 / ((126 + 0.65) / 16), id="uneven-llama-405b"),
    ],
)
def test_slowest_stage_factor(layers: int, pp: int, head: float, factor: float) -> None:
    """acc110: a pipeline runs at its slowest stage's pace; the last stage runs the LM head beside its layers.

    FLOPs a token in units of one decoder layer's (the head's share given in the same units).
    """
    from generator.sizing.pipeline_schedule import slowest_stage_factor

    assert slowest_stage_factor(layers, pp, head, layers + head) == pytest.approx(factor)


def _simulated_1f1b(forward: list[float], microbatches: int) -> float:
    """Wall-clock of a plain 1F1B step: stage ``s`` runs ``pp - s - 1`` warm-up forwards, then one forward one backward
    (backward twice its forward); F(s) waits on F(s - 1), B(s) on B(s + 1) and its own F (Megatron-LM's
    ``forward_backward_pipelining_without_interleaving``)."""
    pp = len(forward)
    order = []
    for s in range(pp):
        warm = min(pp - s - 1, microbatches)
        ops, f = [("F", j) for j in range(warm)], warm
        for b in range(microbatches):
            if f < microbatches:
                ops.append(("F", f))
                f += 1
            ops.append(("B", b))
        order.append(ops)
    end: dict[tuple[str, int, int], float] = {}
    at, free = [0] * pp, [0.0] * pp
    while any(at[s] < len(order[s]) for s in range(pp)):
        for s in range(pp):
            while at[s] < len(order[s]):
                kind, j = order[s][at[s]]
                deps = [("F", s - 1, j)] if kind == "F" and s else []
                if kind == "B":
                    deps = [("F", s, j)] + ([("B", s + 1, j)] if s < pp - 1 else [])
                if any(d not in end for d in deps):
                    break
                free[s] = max([free[s]] + [end[d] for d in deps]) + forward[s] * (1 if kind == "F" else 2)
                end[(kind, s, j)] = free[s]
                at[s] += 1
    return max(free)


def test_slowest_last_stage_bubble_is_the_other_stages_time() -> None:
    """review79 item 5: a 1F1B bubble slot lasts the other stages' time, not the slowest's.

    By hand, pp 2, 2 micro-batches, 2 layers of 1 unit (a forward) and a head of 1 unit on the last stage: forwards
    (1, 2), backwards (2, 4). Stage 0: F0 0-1, F1 1-2; stage 1: F0 1-3, B0 3-7; stage 0: B0 7-9; stage 1: F1 7-9, B1 9-13;
    stage 0: B1 13-15. The step is 15 units: 2 micro-batches of the slowest stage's 6 and the other stage's 3 (the
    bubble), not (pp - 1) = 1 slot of the slowest's 6 (a step of 18). The even pipeline (1.5, 1.5): 2 x 4.5 + 4.5.
    """
    assert _simulated_1f1b([1.0, 2.0], 2) == 15.0
    assert _simulated_1f1b([1.5, 1.5], 2) == 13.5
    layout = StepLayout(1, 2, 1, 1, 2, 4096)
    links = StepLinks(tp_gbps=0.0, stage_gbps=math.inf)

    def step(head: float, flops: float) -> StepTime:
        return training_step(
            layout, links, CONSTS, hidden_size=4096, num_layers=2, flops_per_token=flops, base_efficiency=0.5,
            dense_tflops=989.0, dp_traffic=DpTraffic(), head_flops_per_token=head,
        )  # fmt: skip

    even, headed = step(0.0, 3e9), step(1e9, 3e9)  # 1e9 FLOPs a unit: 2 layers + the head
    unit = even.compute_s / (2 * 4.5)  # even: 2 micro-batches of a 4.5-unit stage (forward 1.5 + backward 3)
    assert even.pp_bubble_s == pytest.approx(4.5 * unit)
    assert headed.slowest_stage_factor == pytest.approx(4 / 3)
    assert headed.compute_s == pytest.approx(12 * unit)
    assert headed.pp_bubble_s == pytest.approx(3 * unit)
    assert headed.plain_pp_bubble_s == pytest.approx(3 * unit)
    assert headed.compute_s + headed.pp_bubble_s == pytest.approx(15 * unit)


@pytest.mark.parametrize(
    ("pp", "microbatches", "slowest"),
    [(4, 8, 1.26), (4, 32, 1.26), (4, 8, 1.34), (8, 8, 1.10), (8, 16, 1.5)],
)
def test_bubble_compute_factor_against_a_1f1b_simulation(pp: int, microbatches: int, slowest: float) -> None:
    """The step at the slowest (last) stage's pace plus a bubble of ``bubble_compute_factor``: the simulated 1F1B step
    (review79's onef1b.py cases: pp 4, m 8, 1.26 x the mean gives a bubble of 3 x (4 - 1.26) = 8.22, not 11.34)."""
    from generator.sizing.pipeline_schedule import bubble_compute_factor, pipeline_bubble_fraction

    other = (pp - slowest) / (pp - 1)
    simulated = _simulated_1f1b([other] * (pp - 1) + [slowest], microbatches)
    compute = microbatches * 3 * slowest
    fraction = pipeline_bubble_fraction(pp, microbatches)
    bubble = compute * bubble_compute_factor(pp, slowest) * fraction / (1 - fraction)
    assert compute + bubble == pytest.approx(simulated)
    assert bubble == pytest.approx(3 * (pp - slowest))
