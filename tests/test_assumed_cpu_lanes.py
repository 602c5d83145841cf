"""newuser85: a machine with no CPU given is timed at the PCIe lanes of the CPU its memory and cores are assumed from.

Two RTX 3090s and 128 GiB with no --cpu were timed at PCIe Gen4 x16 each (TTFT 7.41 s for Qwen3-235B-A22B at q4_k_m)
while the machine line said "assumed like Intel Core i9-14900K", whose 16 GPU lanes two cards share x8/x8: with
--cpu core-i9-14900k the same machine took 13.84 s. Both are one machine now.
"""

from __future__ import annotations

import pytest

from generator import catalog
from generator.calculator.machine import FixedSpec, _memory_cpu, host_link, slot_lanes
from tests.helpers import estimate_json


@pytest.mark.parametrize(
    ("gpu", "count", "lanes"),
    [("rtx-3090-24gb", 1, 16), ("rtx-3090-24gb", 2, 8), ("rtx-4090-24gb", 2, 8), ("rtx-5090-32gb", 2, 8)],
)
def test_no_cpu_takes_the_assumed_desktops_split(gpu: str, count: int, lanes: int) -> None:
    spec = FixedSpec(gpu=gpu, gpu_count=count, ram_gib=128)
    assumed = _memory_cpu(spec)
    assert assumed.id == "core-i9-14900k"
    assert slot_lanes(spec, catalog.find_gpu(gpu)) == lanes
    assert slot_lanes(spec._replace(cpu=assumed.id), catalog.find_gpu(gpu)) == lanes  # as when it is given
    assert host_link(spec, catalog.find_gpu(gpu))[1].endswith(f"x{lanes}")


def test_given_lanes_win() -> None:
    spec = FixedSpec(gpu="rtx-3090-24gb", gpu_count=2, ram_gib=128, pcie_lanes=16)
    assert slot_lanes(spec, catalog.find_gpu("rtx-3090-24gb")) == 16


def test_the_estimate_times_both_alike() -> None:
    args = ("Qwen/Qwen3-235B-A22B", "--gpu", "rtx-3090-24gb", "--gpus", "2", "--ram-gib", "128", "--precision", "q4_k_m")
    assumed = estimate_json(*args)["throughput"]
    given = estimate_json(*args, "--cpu", "core-i9-14900k")["throughput"]
    assert assumed["ttft_s"] == given["ttft_s"] and assumed["decode_tokens_per_s"] == given["decode_tokens_per_s"]
