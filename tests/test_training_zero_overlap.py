"""Issue 9: DeepSpeed ZeRO-1/2 reduce their gradients on the compute stream unless ``overlap_comm`` is on.

DeepSpeed's ``overlap_comm`` defaults to false at ZeRO-1/2 (true at ZeRO-3; https://www.deepspeed.ai/docs/config-json/),
and the rendered ds_config.json leaves it unset; without it ``average_tensor`` (deepspeed/runtime/zero/stage_1_and_2.py)
reduces each bucket on the current stream inside the backward hook. The step exposes that traffic in full there, and
still hides torch DDP's (ZeRO-0), FSDP's, Megatron's and ZeRO-3's behind the backward pass. Figures worked by hand.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_model
from generator.planner.training_comm import dp_traffic, job_dp_traffic
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingSetup
from generator.sizing.training_step import DpTraffic, StepLayout, StepLinks, training_step

CONSTS = Constants()
GB = 1e9


@pytest.mark.parametrize(
    ("framework", "zero", "in_series"),
    [
        pytest.param("hf", 0, False, id="hf-zero0-torch-ddp-overlaps"),
        pytest.param("hf", 1, True, id="hf-zero1-deepspeed-no-overlap-comm"),
        pytest.param("hf", 2, True, id="hf-zero2-deepspeed-no-overlap-comm"),
        pytest.param("hf", 3, False, id="hf-zero3-overlap-comm-default-true"),
        pytest.param("deepspeed", 2, True, id="deepspeed-zero2"),
        pytest.param("llama-factory", 1, True, id="llama-factory-zero1"),
        pytest.param("fsdp2", 3, False, id="fsdp2-overlaps"),
        pytest.param("megatron", 1, False, id="megatron-distributed-optimizer-overlaps"),
        pytest.param(None, 2, True, id="no-framework-timed-as-deepspeed"),
    ],
)
def test_which_frameworks_reduce_in_series(framework: str | None, zero: int, in_series: bool) -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
    setup = TrainingSetup(method="full", zero_stage=zero, data_parallel=8, framework=framework)
    traffic = job_dp_traffic(arch, setup, arch.params_total, 1, 2)
    assert traffic.bytes_per_gpu > 0
    assert traffic.in_series is in_series


def test_one_replica_has_no_traffic_to_expose() -> None:
    assert dp_traffic(8_000_000_000, 16 * 10**9, 2, 1, kind="deepspeed").in_series is False


def _step(traffic: DpTraffic, accumulation: int = 1) -> float:
    """1e15 FLOPs a micro-batch at 100 TFLOPS x efficiency 1 (10 s / fill of compute each), DP 8 over 100 GB/s."""
    step = training_step(
        StepLayout(1, 1, 8, 1, accumulation, 4096),
        StepLinks(tp_gbps=0.0, stage_gbps=0.0, dp_intra_gbps=8 * 100.0),
        CONSTS,
        hidden_size=4096,
        num_layers=32,
        flops_per_token=1e15 / 4096,
        forward_flops_per_token=1e15 / 4096 / 3,
        base_efficiency=1.0,
        dense_tflops=100.0,
        dp_traffic=traffic,
    )
    return step.total_s - step.compute_s


@pytest.mark.parametrize("accumulation", [1, 4])
def test_zero2_without_overlap_comm_exposes_its_reduction(accumulation: int) -> None:
    # 200 GB at 100 GB/s: 2 s of traffic against 10+ s of compute a micro-batch
    hidden = DpTraffic(200 * GB, 0)  # ZeRO-2/3 under FSDP or with overlap_comm: hidden behind the busy time
    serial = DpTraffic(200 * GB, 0, in_series=True)
    assert _step(hidden, accumulation) == 0.0
    assert _step(serial, accumulation) == pytest.approx(2.0)


def test_zero1_without_overlap_comm_exposes_what_the_last_backward_hid() -> None:
    # ZeRO-1's one gradient pass hides behind the last micro-batch's backward (2/3 of ~10 s) under torch DDP's overlap;
    # DeepSpeed's without overlap_comm runs all 2 s on the compute stream
    overlapped = DpTraffic(200 * GB, 0, once_after_backward=True)
    serial = DpTraffic(200 * GB, 0, once_after_backward=True, in_series=True)
    assert _step(overlapped, 4) == 0.0
    assert _step(serial, 4) == pytest.approx(2.0)
