"""CUDA's total on each card whose figure is sourced: what llama.cpp's whole fit budgets against (fix135).

review80 items 1-2 gave the RTX 3090 CUDA's ``totalGlobalMem`` (24,268 MiB, not nvidia-smi's 24,576); every other card
kept nvidia-smi's total, so llama.cpp on an RTX 4090 was planned against 24,564 MiB where CUDA gives 24,210
(https://github.com/ultralytics/ultralytics/issues/21766: ``CUDA:0 (NVIDIA GeForce RTX 4090, 24210MiB)``) and
Llama 3.3 70B q4_k_m at 8,192 tokens was put at -ngl 45, 24,315 MiB a GPU: 105 MiB more than the card has. The
figures, their URLs and the log lines they quote are in ``gpus.json`` ``field_sources.memory_cuda_mib``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import catalog
from generator.calculator.machine import FixedSpec, build_machine
from generator.catalog.records import GpuSpec
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.gpu_share import gpu_share, shared_gpu
from generator.sizing.memory import inference_activation_bytes
from generator.sizing.offload import place
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism
from generator.units import MIB
from generator.workload.models import GpuSharing
from tests.conftest import REPO

CONSTS = Constants()

_NVSMI = "https://github.com/thamada/nvidia-smi/blob/"

#: The sourced CUDA totals (MiB) beside nvidia-smi's, each quoted from the URL its field source names.
SOURCED = {
    "rtx-3090-24gb": (24_268, 24_576, "https://huggingface.co/docs/transformers/debugging"),
    "rtx-4090-24gb": (24_210, 24_564, "https://github.com/ultralytics/ultralytics/issues/21766"),
    "rtx-5090-32gb": (32_117, 32_607, "https://github.com/aikitoria/open-gpu-kernel-modules/issues/1"),
    "rtx-a6000-48gb": (48_670, 49_140, "https://github.com/ultralytics/ultralytics/issues/19084"),
    "a100-sxm4-40gb": (40_339, 40_960, "https://github.com/bottlerocket-os/bottlerocket/pull/3873"),
    "a100-sxm4-80gb": (81_051, 81_920, "https://github.com/ultralytics/ultralytics/issues/22877"),
    "a100-pcie-80gb": (81_049, 81_920, "https://github.com/ekondis/mixbench/issues/47"),
    # newuser105: the lab server's card was planned at nvidia-smi's 40,960 MiB, 0.57 GiB over what CUDA gives
    "a100-pcie-40gb": (40_377, 40_960, "https://github.com/WangYangfan/yolov8/blob/main/README.md"),
    "l4-24gb": (22_491, 23_034, "https://github.com/bottlerocket-os/bottlerocket-kernel-kit/pull/139"),
    # src98: deviceQuery captures (Linux, driver 550 / CUDA 12.4) whose URL pins the commit
    "l40s-48gb": (45_589, 46_068, _NVSMI + "c768aedc1e0bf705fc91b08e8d9403bf53760365/nvsim/L40S_deviceQuery.py"),
    "a40-48gb": (45_403, 46_068, _NVSMI + "5f6b772848f86e938c96cb7b6ff46d11f4957cba/nvsim/A40x10_deviceQuery.py"),
    "rtx-6000-ada-48gb": (48_640, 49_140, _NVSMI + "b09ef139265ffc7e3c78006346981de8e4d70499/gls/RTX6000Ada_x8_deviceQuery.py"),
    "rtx-4060-ti-16gb": (16_076, 16_380, _NVSMI + "8ad4eed6fa5bdaf0c6f8503f8be09dfcf56148cd/package/RTX4060Ti_deviceQuery.py"),
    "a10-24gb": (
        22_515,
        23_028,
        "https://github.com/aalanwyr/face2cuda/blob/1a1a82a863998fe86ea740131e318a70d661395d/step2cuda/README.md",
    ),
}


def _record(gpu_id: str) -> dict[str, Any]:
    recs = json.loads((REPO / "generator" / "catalog" / "gpus.json").read_text(encoding="utf-8"))["gpus"]
    return next(rec for rec in recs if rec["id"] == gpu_id)


def test_the_sourced_cards_are_the_ones_with_a_cuda_total() -> None:
    """A CUDA total is recorded only where it is sourced: the rest keep nvidia-smi's (no figure derived from a sibling)."""
    with_total = {gpu_id for gpu_id, gpu in catalog.gpus().items() if gpu.memory_cuda_mib}
    assert with_total == set(SOURCED)


@pytest.mark.parametrize("gpu_id", sorted(SOURCED))
def test_a_sourced_card_allocates_from_cudas_total(gpu_id: str) -> None:
    cuda, smi, url = SOURCED[gpu_id]
    gpu = catalog.gpus()[gpu_id]
    assert (gpu.memory_cuda_mib, gpu.memory_usable_mib) == (cuda, smi)
    assert gpu.memory_bytes == cuda * MIB < smi * MIB
    source = str(_record(gpu_id)["field_sources"]["memory_cuda_mib"])
    assert source.startswith(url + " (")
    assert f"{cuda}" in source  # the log line quoted gives the figure recorded


@pytest.mark.parametrize("gpu_id", sorted(SOURCED))
def test_llama_cpps_whole_fit_budgets_against_the_cards_cuda_total(gpu_id: str) -> None:
    """A machine of yours on the card (``hardware.fixed``) holds CUDA's total, and the whole-fit budget is that total less
    llama.cpp's compute buffer at -ub 512 (a logit row a token) and the CUDA context."""
    cuda = SOURCED[gpu_id][0]
    machine, gpu, _ = build_machine(FixedSpec(gpu=gpu_id, gpu_count=1, ram_gib=128))
    assert machine.gpu_memory_bytes == gpu.memory_bytes == cuda * MIB
    arch = parse_architecture(catalog.find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    placed = place(arch, weight_format("q4_k_m"), 16, 8192, machine, CONSTS, allow_offload=False)
    buffer = inference_activation_bytes(arch, Parallelism(), CONSTS.offload_ubatch_tokens, 16, CONSTS, logits_every_token=True)
    assert placed.gpu_budget_bytes == cuda * MIB - buffer - CONSTS.non_torch_bytes


def test_llama_3_3_70b_on_a_4090_keeps_a_layer_fewer_on_the_gpu() -> None:
    """The home-70b-offload example (q4_k_m, 8,192 tokens, one RTX 4090): at nvidia-smi's 24,564 MiB -ub 512 held 45
    layers at 24,315 MiB a GPU, over the 24,210 CUDA gives; at 24,210 it holds 44 (23,823 MiB), and -ub 1024 keeps the
    same 44 layers (24,189 MiB), so the plan now takes the larger prompt passes."""
    arch = parse_architecture(catalog.find_model("meta-llama/Llama-3.3-70B-Instruct").config)
    machine = build_machine(FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64, reserved_ram_gib=12))[0]

    def on_gpu(ubatch: int) -> tuple[int, int]:
        placed = place(arch, weight_format("q4_k_m"), 16, 8192, machine, CONSTS._replace(offload_ubatch_tokens=ubatch))
        return sum(d.startswith("gpu") for d in placed.layer_devices), max(b.total for b in placed.per_gpu) // MIB

    assert on_gpu(512) == (44, 23_823)
    assert on_gpu(1024) == (44, 24_189)
    assert on_gpu(1024)[1] <= 24_210


@pytest.mark.parametrize("gpu_id", ["rtx-3090-24gb", "rtx-4090-24gb", "a100-sxm4-80gb"])
def test_a_time_sliced_pod_sees_its_share_not_the_whole_cards_cuda_total(gpu_id: str) -> None:
    """fix135: ``shared_gpu`` replaced nvidia-smi's total with the share's but kept the whole card's CUDA total, which
    ``memory_bytes`` reads first: a pod of a 3090 time-sliced two ways was sized against 24,268 MiB, not 12,134."""
    gpu = catalog.gpus()[gpu_id]
    share = gpu_share(gpu, GpuSharing("time-slicing", 2))
    assert share is not None and share.memory_bytes == gpu.memory_bytes // 2
    # a pod's memory in whole MiB, as nvidia-smi's total is (81,051 / 2 = 40,525.5)
    assert shared_gpu(gpu, share).memory_bytes == share.memory_bytes // MIB * MIB


def test_a_derived_mig_instance_is_a_slice_of_the_listed_memory() -> None:
    """An A100-SXM4-80GB's 3g.40gb has no measured size: half of nvidia-smi's 81,920 MiB times the lowest measured
    instance ratio (H100 NVL 1g.12gb, 10.62 GiB of 1/8 of 95,830 MiB), as before the card's CUDA total was sourced;
    instance sizes are slices of the listed memory (an A100-SXM4-40GB's 7g.40gb lists 39.5 GiB, above its 40,339 MiB
    CUDA total)."""
    gpu: GpuSpec = catalog.gpus()["a100-sxm4-80gb"]
    share = gpu_share(gpu, GpuSharing("mig", mig_profile="3g.40gb"))
    assert share is not None
    ratio = 10.62 * 1024 / (95_830 / 8)
    assert share.memory_bytes == int(0.5 * 81_920 * MIB * ratio) // MIB * MIB == 37_185 * MIB
    assert shared_gpu(gpu, share).memory_bytes == share.memory_bytes
