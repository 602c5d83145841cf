"""GPUs without PCIe peer-to-peer: the catalog says so, with a source, and the plan says how their traffic is timed.

newuser76 item 6: two RTX 4090s were timed at "PCIe Gen4 31.5 GB/s per GPU" GPU-to-GPU, though a GeForce RTX 4090 has
no PCIe peer-to-peer and NCCL stages the traffic through host memory (its SHM transport, NCCL_SHM_DISABLE in
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html). No host-staged rate of a 4090 pair is pinned to a
source, so the rate stays the PCIe one and the text states that assumption.
"""

from __future__ import annotations

import json

from generator.catalog import gpus
from generator.planner.training_comm import NO_P2P_ASSUMPTION, gpu_link
from tests.conftest import REPO
from tests.helpers import run_estimate

ARGS = ["Qwen/Qwen3-8B", "--train", "full", "--framework", "deepspeed", "--zero", "3", "--offload-optimizer"]
ARGS += ["--gpu", "rtx-4090-24gb", "--gpus", "2", "--seq-len", "2048", "--micro-batch", "1", "--accumulation", "16"]


def test_the_4090_record_carries_its_peer_to_peer_capability_with_a_source() -> None:
    assert gpus()["rtx-4090-24gb"].pcie_peer_to_peer is False
    assert gpus()["h100-pcie-80gb"].pcie_peer_to_peer is None  # not looked up: no claim either way
    record = next(g for g in json.loads((REPO / "generator/catalog/gpus.json").read_text())["gpus"] if g["id"] == "rtx-4090-24gb")
    assert "pcie.peer_to_peer" in record["field_sources"]
    assert "https://github.com/tinygrad/open-gpu-kernel-modules" in record["source"]
    assert any("peer_to_peer" in note for note in record["research_notes"])


def test_a_4090_pair_is_said_to_be_staged_through_host_memory_at_the_pcie_rate() -> None:
    gbps, name = gpu_link(gpus()["rtx-4090-24gb"], 2)
    assert gbps == 31.5 * 8  # the rate is unchanged: the PCIe rate, at best
    assert name == "PCIe Gen4 31.5 GB/s per GPU (" + NO_P2P_ASSUMPTION.format(gpu="rtx-4090-24gb") + ")"
    assert "(" not in gpu_link(gpus()["rtx-4090-24gb"], 1)[1]  # one GPU talks to none
    assert "peer-to-peer" not in gpu_link(gpus()["l40s-48gb"], 2)[1]
    code, text = run_estimate(*ARGS)
    assert code == 0
    # 16 micro-batches x 3 x 16.38 GB bf16 x 1/2, as before; the step's seconds unchanged
    assert "DP/ZeRO 0.000 s exposed of 13.111 s (393.16 GB per GPU over PCIe Gen4 31.5 GB/s per GPU (no PCIe " in text
    assert "NCCL stages each transfer through host memory, its SHM transport" in text
