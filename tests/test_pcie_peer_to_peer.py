"""GPUs without PCIe peer-to-peer: the catalog says so, with a source, and their traffic is timed through host memory.

newuser76 item 6: two RTX 4090s were timed at "PCIe Gen4 31.5 GB/s per GPU" GPU-to-GPU, though a GeForce RTX 4090 has
no PCIe peer-to-peer and NCCL stages the traffic through host memory (its SHM transport, NCCL_SHM_DISABLE in
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html): each byte is written to the host's DRAM and read
back, so n GPUs sending at once get at most DRAM / (2 n) each, besides their PCIe link's rate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.catalog import gpus, platforms
from generator.planner import plan_workload
from generator.planner.training_comm import NO_P2P_ASSUMPTION, HostStaging, gpu_link, host_staging
from generator.sizing.constants import Constants
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import run_estimate

ARGS = ["Qwen/Qwen3-8B", "--train", "full", "--framework", "deepspeed", "--zero", "3", "--offload-optimizer"]
ARGS += ["--gpu", "rtx-4090-24gb", "--gpus", "2", "--seq-len", "2048", "--micro-batch", "1", "--accumulation", "16"]

HOME = """version: 1
name: home2
deployments:
  - name: sft8b
    model: Qwen/Qwen3-8B
    training:
      method: full
      framework: deepspeed
      zero_stage: 3
      offload_optimizer: true
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 20000000
      epochs: 3
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: am5-desktop-tower
      gpu: rtx-4090-24gb
      gpus_per_server: 2
      count: 1
outputs: [ansible]
"""


def test_the_4090_record_carries_its_peer_to_peer_capability_with_a_source() -> None:
    assert gpus()["rtx-4090-24gb"].pcie_peer_to_peer is False
    assert gpus()["h100-pcie-80gb"].pcie_peer_to_peer is None  # not looked up: no claim either way
    catalog = json.loads((REPO / "generator/catalog/gpus.json").read_text())
    record = next(g for g in catalog["gpus"] if g["id"] == "rtx-4090-24gb")
    assert "pcie.peer_to_peer" in record["field_sources"]
    assert "https://github.com/tinygrad/open-gpu-kernel-modules" in record["source"]
    assert any("peer_to_peer" in note for note in record["research_notes"])


def test_the_staged_rate_is_the_lower_of_pcie_and_the_hosts_dram_over_twice_the_gpus() -> None:
    gpu = gpus()["rtx-4090-24gb"]
    gbps, name = gpu_link(gpu, 2)  # host not known: the PCIe rate, the assumption said
    assert gbps == 31.5 * 8 and name == "PCIe Gen4 31.5 GB/s per GPU (" + NO_P2P_ASSUMPTION.format(gpu=gpu.id) + ")"
    gbps, name = gpu_link(gpu, 2, HostStaging(100.0, 2))  # 100 / (2 x 2) = 25 GB/s, below 31.5
    assert gbps == pytest.approx(25 * 8) and name.startswith("host memory 25 GB/s per GPU (no PCIe peer-to-peer")
    assert gpu_link(gpu, 2, HostStaging(300.0, 2))[0] == 31.5 * 8  # 75 GB/s: PCIe bounds it
    assert gpu_link(gpu, 2, HostStaging(100.0, 4))[0] == pytest.approx(12.5 * 8)  # four GPUs of the host at once
    assert "(" not in gpu_link(gpu, 1)[1]  # one GPU talks to none
    assert gpu_link(gpus()["l40s-48gb"], 2, HostStaging(10.0, 2))[0] == 31.5 * 8  # peer-to-peer not ruled out


def test_an_am5_pair_is_timed_through_its_two_channels() -> None:
    """am5-desktop-tower's Ryzen 9 7950X: 2 x DDR5-5200 = 83.2 GB/s, x 0.95 and the 300 GB/s ceiling: 62.6 GB/s;
    a GPU of two gets 62.6 / 4 = 15.6 GB/s, below the x8/x8 slots' 15.75."""
    staging = host_staging(platforms()["am5-desktop-tower"], 2, Constants())
    assert staging.dram_gb_per_s == pytest.approx(1 / (1 / (83.2 * 0.95) + 1 / 300), rel=1e-6)
    assert gpu_link(gpus()["rtx-4090-24gb"], 2, staging)[0] == pytest.approx(staging.dram_gb_per_s / 4 * 8)


def test_the_plan_and_estimate_say_it(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(HOME)
    dep = plan_workload(load_workload(str(path))).deployments[0]
    (step,) = [r for r in dep.reasons if r.startswith("one step takes")]
    # newuser76's home-2x4090.yaml: 393.16 GB a GPU (16 micro-batches x 3 x 16.38 GB x 1/2) at 15.6 GB/s, 25.77 s
    # (25.59 s at the x8 slot's 15.75 GB/s before), hidden behind 45.85 s of compute: the 50.428 s step unchanged
    assert "of 25.769 s (393.16 GB per GPU over host memory 15.6 GB/s per GPU (no PCIe peer-to-peer" in step
    assert step.startswith("one step takes 50.428 s: compute 45.850 s")
    code, text = run_estimate(*ARGS)
    assert code == 0  # the assumed wrx90's eight channels: 153.9 / 4 = 38.5 GB/s, above PCIe: 13.111 s as before
    assert "DP/ZeRO 0.000 s exposed of 13.111 s (393.16 GB per GPU over PCIe Gen4 31.5 GB/s per GPU (no PCIe " in text
    assert "gives 38.5 GB/s a GPU, above the PCIe rate" in text
