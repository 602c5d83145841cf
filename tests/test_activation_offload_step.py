"""Activation offload's copies are timed in the training step (acc127, issue 9).

Each micro-batch, every layer of the GPU's stage copies its saved tensors (under full activation checkpointing, its
input: tokens x hidden x bytes, the GPU's TP share) to host RAM in the forward pass and back in the backward pass, over
the GPU's host link at the pinned-copy rate. torchtune's ``OffloadActivations`` and Unsloth's offloaded checkpointing
copy on a side stream, so the copies out hide behind the forward phase's GPU work and the copies in behind the
backward phase's; DeepSpeed's ``cpu_checkpointing`` copies on the compute stream, in series. Before, a plan that
offloaded activations claimed the step of one that did not. Figures worked by hand below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.training_offload import NO_OFFLOAD, HostOffload, OffloadBytes, offload_bytes
from generator.sizing.training_step import NO_DP, StepLayout, StepLinks, StepTime, training_step
from generator.sizing.weights import Parallelism

CONSTS = Constants()
GB = 1e9
#: Llama 3.1 8B's config: hidden 4,096, 32 layers.
HIDDEN, LAYERS = 4096, 32
#: The host link the unit steps copy over, GB/s one direction.
LINK_GB_PER_S = 25.0


def _run(host: HostOffload) -> StepTime:
    """A step of 1e15 FLOPs at 100 TFLOPS: 10 s / fill of compute, a third of it the forward (no forward FLOPs given)."""
    return training_step(
        StepLayout(1, 1, 1, 1, 1, 4096),
        StepLinks(tp_gbps=0.0, stage_gbps=0.0),
        CONSTS,
        hidden_size=HIDDEN,
        num_layers=LAYERS,
        flops_per_token=1e15 / 4096,
        base_efficiency=1.0,
        dense_tflops=100.0,
        dp_traffic=NO_DP,
        host=host,
    )


COMPUTE_S = _run(NO_OFFLOAD).compute_s


@pytest.mark.parametrize(
    ("copy_share", "in_series", "exposed_share"),
    [
        # one direction's copies (a share of the compute): out behind the forward (1/3), in behind the backward (2/3)
        pytest.param(0.25, False, 0.0, id="hidden"),
        pytest.param(0.5, False, 0.5 - 1 / 3, id="outlasts-forward"),
        pytest.param(0.8, False, (0.8 - 1 / 3) + (0.8 - 2 / 3), id="outlasts-both"),
        # DeepSpeed's cpu_checkpointing: both directions in full, on the compute stream
        pytest.param(0.25, True, 0.5, id="in-series"),
    ],
)
def test_the_copies_show_only_beyond_their_phase(copy_share: float, in_series: bool, exposed_share: float) -> None:
    nbytes = copy_share * COMPUTE_S * LINK_GB_PER_S * GB
    host = HostOffload(OffloadBytes(activation_bytes=nbytes, activations_in_series=in_series), LINK_GB_PER_S)
    step, plain = _run(host), _run(NO_OFFLOAD)
    assert step.activation_offload_s == pytest.approx(copy_share * COMPUTE_S)
    assert step.activation_offload_exposed_s == pytest.approx(exposed_share * COMPUTE_S)
    assert step.total_s - plain.total_s == pytest.approx(exposed_share * COMPUTE_S)
    said = step.as_dict()
    assert said["activation_offload_copies_s"] == round(2 * copy_share * COMPUTE_S, 4)
    assert "activation_offload_copies_s" not in plain.as_dict()


def _arch() -> Architecture:
    return parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)


@pytest.mark.parametrize(
    ("setup", "par", "per_token_hidden"),
    [
        # each of the 32 layers' bf16 input: 32 x 2 bytes a token and hidden element
        pytest.param({"method": "full"}, Parallelism(), LAYERS * 2, id="full"),
        # the first of 2 stages' 16 layers, its TP half of the tokens (sequence parallel)
        pytest.param({"method": "full"}, Parallelism(tp=2, pp=2), LAYERS // 2 * 2 // 2, id="tp2-pp2"),
        # PEFT's kbit preparation makes the residual stream fp32 (4 bytes) under the Trainer
        pytest.param({"method": "qlora", "framework": "hf"}, Parallelism(), LAYERS * 4, id="qlora-fp32-residual"),
        pytest.param({"method": "full", "activation_offload": False}, Parallelism(), 0, id="not-offloaded"),
    ],
)
def test_the_bytes_are_each_layers_input(setup: dict[str, Any], par: Parallelism, per_token_hidden: int) -> None:
    tokens = 2 * 4096
    job = TrainingSetup(sequence_length=4096, micro_batch_size=2, checkpointing="full", activation_offload=True)
    job = job._replace(**setup)
    mem = size_training(_arch(), job, par, CONSTS, nvlink=False)
    assert mem.offloaded_activation_bytes == per_token_hidden * tokens * HIDDEN
    moved = offload_bytes(_arch(), job, par, 4, offloaded_activations=mem.offloaded_activation_bytes)
    assert moved.activation_bytes == 4 * mem.offloaded_activation_bytes  # each micro-batch of the step's 4
    assert moved.any == bool(per_token_hidden)


@pytest.mark.parametrize(
    ("framework", "in_series"), [(None, False), ("torchtune", False), ("unsloth", False), ("deepspeed", True)]
)
def test_only_deepspeed_copies_on_the_compute_stream(framework: str | None, in_series: bool) -> None:
    job = TrainingSetup(method="lora", checkpointing="full", activation_offload=True, framework=framework)
    assert offload_bytes(_arch(), job, Parallelism(), 1, offloaded_activations=1.0).activations_in_series is in_series


WORKLOAD = """version: 1
name: edge
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: qlora
      sequence_length: 4096
      dataset_tokens: 200000000
      epochs: 1
      deadline_hours: 336
hardware:
  gpus: [l4-24gb]
  provider: baremetal
"""


def test_the_l4_seventy_b_at_the_memory_edge_hides_its_copies(tmp_path: Path) -> None:
    """80 layers x 4,096 tokens x 8,192 x 2 bytes = 5.37 GB each way a micro-batch, 0.213 s at PCIe Gen4 x16's 31.5 GB/s
    x 0.8, behind a ~12 s forward: none exposed. (fix145's 1 x XE7740 at DP8, 92.6 h, kept its 49.147 s step with the
    copies timed; the layout is now a 4-GPU R760xa at DP4 with the parameters offloaded too, 185.2 h: test_memory_edge.)"""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    (job,) = plan_file(str(path))[1].deployments
    assert job.details["activation_offload"] is True and job.details["data_parallel"] == 4
    step = job.details["step_time"]
    one_way = 80 * 4096 * 8192 * 2 / (31.5 * GB * CONSTS.pcie_efficiency)
    assert step["activation_offload_copies_s"] == pytest.approx(2 * one_way, abs=1e-4)
    assert step["activation_offload_exposed_s"] == 0.0
    assert job.details["hours"] == pytest.approx(185.2, abs=0.05)
    said = " ".join(job.reasons)
    assert "activation offload 0.000 s exposed of 0.426 s (5.4 GB per GPU to host RAM and back" in said
