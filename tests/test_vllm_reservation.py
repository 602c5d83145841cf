"""vLLM's start-up reservation as a mechanism, against the components its logs print (tests/data/calibration.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.vllm_reservation import capture_sizes, captured_graphs, vllm_reservation
from generator.sizing.weights import Parallelism
from generator.units import GIB

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
    got = vllm_reservation(arch, Parallelism(tp=row["tp"]), Constants(), row["max_num_batched_tokens"], cuda_graphs=False)
    assert got.cuda_graph_bytes == 0
    assert got.activation_peak_bytes / GIB == pytest.approx(row["activation_peak_gib"], rel=0.3)


def test_peak_grows_with_batched_tokens_and_graphs_add_memory() -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    small, large = (vllm_reservation(arch, Parallelism(), Constants(), t) for t in (2048, 20000))
    assert small.activation_peak_bytes < large.activation_peak_bytes
    assert small.cuda_graph_bytes > 0 and small.total > small.activation_peak_bytes
