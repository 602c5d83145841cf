"""vLLM's start-up reservation as a mechanism, against the components its logs print (tests/data/calibration.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import multi_gpu_runtime_bytes, nvlink_replica
from generator.sizing.vllm_reservation import capture_sizes, captured_graphs, vllm_reservation
from generator.sizing.weights import Parallelism
from generator.units import GIB, MIB

ROWS: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "calibration.json").read_text())["vllm_memory"]


def test_captured_graphs_match_the_log() -> None:
    # vllm PR #39559 log: "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)"
    assert len(capture_sizes(256)) == 51 and max(capture_sizes(256)) == 512
    assert captured_graphs(256) == 51 + 35


@pytest.mark.parametrize(
    "row",
    [r for r in ROWS if r["max_num_batched_tokens"] >= 8192 and r["tp"] == 1],
    ids=lambda r: str(r["max_num_batched_tokens"]),
)
def test_profiling_peak_within_30_percent_of_the_log(row: dict[str, Any]) -> None:
    arch = parse_architecture(find_model(row["model"]).config)
    got = vllm_reservation(
        arch, Parallelism(tp=row["tp"]), Constants(), row["max_num_batched_tokens"], cuda_graphs=False, nvlink=False
    )
    assert got.cuda_graph_bytes == 0
    assert got.activation_peak_bytes / GIB == pytest.approx(row["activation_peak_gib"], rel=0.3)


def test_peak_grows_with_batched_tokens_and_graphs_add_memory() -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    small, large = (vllm_reservation(arch, Parallelism(), Constants(), t, nvlink=False) for t in (2048, 20000))
    assert small.activation_peak_bytes < large.activation_peak_bytes
    assert small.cuda_graph_bytes > 0 and small.total > small.activation_peak_bytes


@pytest.mark.parametrize(
    ("gpu", "tp", "pp", "nvlink", "runtime_bytes"),
    [
        pytest.param("h100-sxm5-80gb", 1, 1, False, 0, id="one-gpu"),
        pytest.param("h100-sxm5-80gb", 4, 1, True, 2 * GIB, id="sxm-tp4"),
        pytest.param("h100-sxm5-80gb", 8, 2, True, 2 * GIB, id="sxm-tp8-pp2-over-nodes"),
        # two 8-GPU HGX nodes: each GPU still has 7 NVLink peers, and network connections besides
        pytest.param("h100-sxm5-80gb", 16, 1, True, 2 * GIB, id="sxm-tp16-over-two-8-gpu-domains"),
        pytest.param("h100-sxm5-80gb", 1, 2, False, 256 * MIB, id="sxm-pipeline-only"),
        pytest.param("b200-sxm-180gb", 2, 2, True, 2 * GIB, id="sxm-tp2-pp2"),
        # 4-GPU domain without NVSwitch: extrapolated from the NVSwitch measurement (distributed_runtime docstring)
        pytest.param("v100-sxm2-32gb", 8, 1, True, 2 * GIB, id="direct-attached-sxm-tp8"),
        pytest.param("gb200-186gb", 16, 1, True, 2 * GIB, id="nvl72-tp16"),
        pytest.param("l4-24gb", 4, 1, False, 256 * MIB, id="pcie-tp4"),
        pytest.param("rtx-3090-24gb", 2, 1, False, 256 * MIB, id="nvlink-bridge-pair"),
        pytest.param("mi300x-192gb", 8, 1, False, 256 * MIB, id="infinity-fabric-unmeasured"),
    ],
)
def test_distributed_runtime_memory_by_link(gpu: str, tp: int, pp: int, nvlink: bool, runtime_bytes: int) -> None:
    # SGLang logs "Init torch distributed ends. mem usage=" 0.13 GB on 4 x L4 (PCIe) and 1.77-2.01 GB on 8 x H200 (SXM)
    spec = find_gpu(gpu)
    par = Parallelism(tp=tp, pp=pp)
    assert nvlink_replica(spec.interconnect_kind, spec.nvlink_domain_gpus, par) is nvlink
    assert multi_gpu_runtime_bytes(par.gpus, Constants(), nvlink=nvlink) == runtime_bytes
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    reserved = vllm_reservation(arch, par, Constants(), 8192, nvlink=nvlink)
    assert reserved.non_torch_bytes == 512 * MIB + runtime_bytes
