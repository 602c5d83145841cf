"""The distributed runtime's memory by link, for serving and training alike (generator/sizing/distributed_runtime.py).

Figures: ``nccl_bytes`` 256 MiB (PCIe), ``nccl_nvlink_bytes`` 2 GiB (NVLink peers), ``training_overhead_bytes`` 1 GiB.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import pytest

from generator import catalog
from generator.calculator.estimate import EstimateRequest, estimate, longest_training_sequence
from generator.calculator.model_source import resolve_model
from generator.catalog import find_gpu
from generator.planner.options import Hardware
from generator.planner.training import training_shapes
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import multi_gpu_runtime_bytes, nvlink_collectives, nvlink_replica
from generator.sizing.memory import size_inference
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.vllm_reservation import vllm_reservation
from generator.sizing.weights import Parallelism
from generator.units import GIB, MIB
from generator.workload.models import TrainingSpec

CONSTS = Constants()


def _reserve(tokens: int, tp: int = 1) -> int:
    """The caching allocator's reserve a micro-batch of ``tokens`` adds to the overhead: a share of Llama 3.1's fp32
    logits (standard loss, the vocabulary split ``tp`` ways), whatever the link."""
    return math.ceil(tokens * math.ceil(128256 / tp) * 4 * CONSTS.training_allocator_slack_logits_fraction)


@pytest.mark.parametrize("gpu", sorted(catalog.gpus()))
def test_per_gpu_runtime_never_falls_as_the_tp_group_grows(gpu: str) -> None:
    # a TP group beyond one NVLink domain still has NVLink peers in each node: it must not drop to PCIe's figure
    spec = find_gpu(gpu)
    sizes = (1, 2, 4, 8, 16, 32, 64, 128)
    got = [
        multi_gpu_runtime_bytes(
            tp, CONSTS, nvlink=nvlink_replica(spec.interconnect_kind, spec.nvlink_domain_gpus, Parallelism(tp))
        )
        for tp in sizes
    ]
    assert got == sorted(got)


@pytest.mark.parametrize(
    ("kind", "domain", "group", "nvlink"),
    [
        pytest.param("nvlink", 8, 1, False, id="one-gpu"),
        pytest.param("nvlink", 8, 2, True, id="pair-in-hgx"),
        pytest.param("nvlink", 8, 16, True, id="two-hgx-nodes"),
        pytest.param("nvlink", 4, 64, True, id="direct-attached-4-gpu-board"),
        pytest.param("nvlink", 1, 8, False, id="no-peer-in-the-domain"),
        pytest.param("nvlink-bridge", 2, 2, False, id="bridged-pcie-pair"),
        pytest.param("infinity-fabric", 8, 8, False, id="mi300x"),
        pytest.param("none", 1, 4, False, id="pcie"),
    ],
)
def test_nvlink_collectives(kind: str, domain: int, group: int, nvlink: bool) -> None:
    assert nvlink_collectives(kind, domain, group) is nvlink


@pytest.mark.parametrize(("tp", "nccl_bytes"), [(1, 0), (8, 2 * GIB), (16, 2 * GIB)])
def test_estimate_of_70b_tp16_on_h100_sxm_keeps_the_nvlink_runtime(tp: int, nccl_bytes: int) -> None:
    req = EstimateRequest(model="meta-llama/Llama-3.1-70B-Instruct", gpu="h100-sxm5-80gb", tp=tp, context_tokens=8192)
    assert estimate(req)["memory"]["overhead_parts"]["nccl"] == nccl_bytes


@pytest.mark.parametrize(
    ("dp", "nvlink", "overhead_bytes"),
    [
        pytest.param(1, False, 1 * GIB, id="one-gpu"),
        pytest.param(1, True, 1 * GIB, id="one-gpu-nvlink-ignored"),
        pytest.param(8, False, 1 * GIB + 256 * MIB, id="pcie-dp8"),
        pytest.param(8, True, 3 * GIB, id="nvlink-dp8"),
    ],
)
def test_training_overhead_by_link(dp: int, nvlink: bool, overhead_bytes: int) -> None:
    arch = resolve_model("meta-llama/Llama-3.1-8B").architecture
    setup = TrainingSetup(method="full", zero_stage=3, data_parallel=dp)
    overhead = size_training(arch, setup, Parallelism(), CONSTS, nvlink=nvlink).per_gpu.overhead
    assert overhead == overhead_bytes + _reserve(2048)


@pytest.mark.parametrize(
    ("gpu", "gpus", "overhead_bytes"),
    [
        pytest.param("h100-sxm5-80gb", 1, 1 * GIB, id="h100-sxm-one-gpu"),
        pytest.param("h100-sxm5-80gb", 8, 3 * GIB, id="h100-sxm-8-gpus"),
        pytest.param("h100-sxm5-80gb", 16, 3 * GIB, id="h100-sxm-two-nodes"),
        pytest.param("l4-24gb", 4, 1 * GIB + 256 * MIB, id="l4-pcie"),
        pytest.param("rtx-3090-24gb", 2, 1 * GIB + 256 * MIB, id="nvlink-bridge"),
        pytest.param(None, 8, 1 * GIB + 256 * MIB, id="no-gpu-named"),
    ],
)
def test_training_estimate_overhead_by_gpu(gpu: str | None, gpus: int, overhead_bytes: int) -> None:
    req = EstimateRequest(model="meta-llama/Llama-3.1-8B", train="lora", gpu=gpu, gpus=gpus, seq_len=2048)
    assert estimate(req)["memory"]["per_gpu"]["overhead"] == overhead_bytes + _reserve(2048)


def test_longest_training_sequence_counts_the_nvlink_runtime() -> None:
    # 1.75 GiB more reserved can only shorten the longest sequence that fits
    arch = resolve_model("meta-llama/Llama-3.1-8B").architecture
    setup = TrainingSetup(method="lora", data_parallel=8)
    usable = 20 * GIB
    pcie = longest_training_sequence(arch, setup, Parallelism(), CONSTS, usable, nvlink=False)
    nvlink = longest_training_sequence(arch, setup, Parallelism(), CONSTS, usable, nvlink=True)
    assert 0 < nvlink < pcie


@pytest.mark.parametrize(("platform", "gpu"), [("dgx-h100", "h100-sxm5-80gb"), ("dell-xe8640", "h100-sxm5-80gb")])
def test_training_planner_sizes_multi_gpu_sxm_jobs_with_the_nvlink_runtime(platform: str, gpu: str) -> None:
    hw = Hardware(catalog.platforms()[platform], catalog.gpus()[gpu])
    spec = TrainingSpec(method="full", sequence_length=2048)
    shapes, _ = training_shapes(resolve_model("meta-llama/Llama-3.1-8B"), spec, hw, CONSTS)
    assert shapes
    for shape in shapes:
        expected = 1 * GIB + (2 * GIB if shape.world > 1 else 0) + _reserve(shape.setup.micro_batch_size * 2048, shape.par.tp)
        assert shape.memory.per_gpu.overhead == expected


@pytest.mark.parametrize(
    ("func", "param"),
    [
        pytest.param(size_inference, "nvlink", id="size_inference"),
        pytest.param(vllm_reservation, "nvlink", id="vllm_reservation"),
        pytest.param(size_training, "nvlink", id="size_training"),
        pytest.param(multi_gpu_runtime_bytes, "nvlink", id="multi_gpu_runtime_bytes"),
        pytest.param(longest_training_sequence, "nvlink", id="longest_training_sequence"),
    ],
)
def test_the_link_must_be_named(func: Callable[..., Any], param: str) -> None:
    # keyword-only and without a default: a caller cannot fall back to the PCIe figure by forgetting it
    parameter = inspect.signature(func).parameters[param]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is inspect.Parameter.empty
