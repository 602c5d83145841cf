"""GPUs without PCIe peer-to-peer: the catalog says so, with a source, and the plan says how their traffic is timed.

newuser76 item 6: two RTX 4090s were timed at "PCIe Gen4 31.5 GB/s per GPU" GPU-to-GPU, though a GeForce RTX 4090 has
no PCIe peer-to-peer and NCCL stages the traffic through host memory (its SHM transport, NCCL_SHM_DISABLE in
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html). Such a pair is timed as acc102 times the L40S's:
at HOST_STAGED_ALLREDUCE_SHARE of the PCIe rate (NCCL's maintainer's measured 0.44-0.56 on GPUs without P2P), said by
name.
"""

from __future__ import annotations

import json

from generator.catalog import gpus
from generator.planner.training_comm import gpu_link
from generator.sizing.performance import HOST_STAGED_ALLREDUCE_SHARE
from tests.conftest import REPO
from tests.helpers import run_estimate

ARGS = ["Qwen/Qwen3-8B", "--train", "full", "--framework", "deepspeed", "--zero", "3", "--offload-optimizer"]
ARGS += ["--gpu", "rtx-4090-24gb", "--gpus", "2", "--seq-len", "2048", "--micro-batch", "1", "--accumulation", "16"]


def test_the_4090_record_carries_its_peer_to_peer_capability_with_a_source() -> None:
    assert gpus()["rtx-4090-24gb"].pcie_peer_to_peer is False
    assert gpus()["h100-pcie-80gb"].pcie_peer_to_peer is True  # absent: peer access
    record = next(g for g in json.loads((REPO / "generator/catalog/gpus.json").read_text())["gpus"] if g["id"] == "rtx-4090-24gb")
    assert "pcie.peer_to_peer" in record["field_sources"]
    assert "https://github.com/tinygrad/open-gpu-kernel-modules" in record["source"]
    assert any("peer_to_peer" in note for note in record["research_notes"])


def test_a_4090_pair_is_staged_through_host_memory_at_the_l40s_share() -> None:
    gbps, name = gpu_link(gpus()["rtx-4090-24gb"], 2)
    assert gbps == 31.5 * HOST_STAGED_ALLREDUCE_SHARE * 8
    assert name == (
        "PCIe Gen4 14.175 GB/s per GPU (0.45 of its 31.5 GB/s: the NVIDIA GeForce RTX 4090 24GB has no GPU peer-to-peer "
        "over PCIe, so NCCL stages each transfer through host memory)"
    )
    assert "(" not in gpu_link(gpus()["rtx-4090-24gb"], 1)[1]  # one GPU talks to none
    assert "peer-to-peer" not in gpu_link(gpus()["rtx-pro-6000-blackwell-96gb"], 2)[1]
    code, text = run_estimate(*ARGS)
    assert code == 0
    # 16 micro-batches x 3 x 16.38 GB bf16 x 1/2, as before, at 0.45 of the PCIe rate
    assert "393.16 GB per GPU over PCIe Gen4 14.175 GB/s per GPU (0.45 of its 31.5 GB/s" in text
