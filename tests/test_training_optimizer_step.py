"""Issue 9: the GPU's optimizer step is a memory-bound pass in series with the compute, timed at the GPU's HBM rate.

Per trainable parameter it reads the gradient and reads and writes the weight and the states (an fp32 master copy
included): AdamW with an fp32 master 2 + 2 x (2 + 12) = 30 bytes, PyTorch AMP's fp32 weights 28, pure bf16 14, 8-bit
AdamW over bf16 weights 10; ZeRO-1 and above step each GPU's 1 / dp shard; an offloaded optimizer steps on the CPU.
Figures worked by hand below.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingSetup
from generator.sizing.training_optimizer import gpu_optimizer_step_bytes, optimizer_bytes_per_param
from generator.sizing.training_step import NO_DP, StepLayout, StepLinks, training_step
from generator.sizing.weights import Parallelism

CONSTS = Constants()
ARCH = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)


@pytest.mark.parametrize(
    ("optimizer", "per_param"),
    [
        pytest.param("adamw", 30, id="fp32-master-mixed-precision"),
        pytest.param("adamw-torch-amp", 28, id="torch-amp-fp32-weights"),
        pytest.param("adamw-bf16", 14, id="pure-bf16"),
        pytest.param("adamw-8bit-bf16", 10, id="8bit-states-bf16-weights"),
    ],
)
def test_full_fine_tune_moves_each_parameter_once(optimizer: str, per_param: int) -> None:
    setup = TrainingSetup(method="full", optimizer=optimizer)
    assert gpu_optimizer_step_bytes(ARCH, setup, Parallelism()) == pytest.approx(ARCH.params_total * per_param)


def test_zero_shards_the_step_and_tp_pp_split_it() -> None:
    whole = gpu_optimizer_step_bytes(ARCH, TrainingSetup(method="full"), Parallelism())
    assert gpu_optimizer_step_bytes(ARCH, TrainingSetup(method="full", data_parallel=8), Parallelism()) == whole
    for zero in (1, 2, 3):
        sharded = TrainingSetup(method="full", zero_stage=zero, data_parallel=8)
        assert gpu_optimizer_step_bytes(ARCH, sharded, Parallelism()) == pytest.approx(whole / 8)
    assert gpu_optimizer_step_bytes(ARCH, TrainingSetup(method="full"), Parallelism(tp=2, pp=2)) == pytest.approx(whole / 4)


def test_an_offloaded_optimizer_steps_on_the_cpu() -> None:
    setup = TrainingSetup(method="full", zero_stage=2, data_parallel=2, offload_optimizer=True)
    assert gpu_optimizer_step_bytes(ARCH, setup, Parallelism()) == 0.0


def test_lora_steps_its_adapters_only() -> None:
    # rank 16 on every linear of Llama 3.1 8B: 41,943,040 adapter parameters (PEFT's count), fp32 under autocast
    setup = TrainingSetup(method="lora", lora_rank=16)
    per_param = optimizer_bytes_per_param(4, 4, 8)
    assert per_param == 28
    assert gpu_optimizer_step_bytes(ARCH, setup, Parallelism()) == pytest.approx(41_943_040 * 28)


def test_the_step_adds_it_in_series_at_the_hbm_rate() -> None:
    # 1e15 FLOPs at 100 TFLOPS: 10 s / fill of compute; 240 GB of optimizer traffic at 4,000 GB/s: 0.060 s more
    def step(optimizer_bytes: float) -> float:
        return training_step(
            StepLayout(1, 1, 1, 1, 1, 4096),
            StepLinks(tp_gbps=0.0, stage_gbps=0.0),
            CONSTS,
            hidden_size=4096,
            num_layers=32,
            flops_per_token=1e15 / 4096,
            base_efficiency=1.0,
            dense_tflops=100.0,
            dp_traffic=NO_DP,
            memory_gb_per_s=4000.0,
            optimizer_bytes=optimizer_bytes,
        ).total_s

    assert step(240e9) - step(0.0) == pytest.approx(0.060)
