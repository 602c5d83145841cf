"""What torchtune's README speed rows imply of their GPUs' measured GEMM rate (acc124, issue 9).

benchmarks/CALIBRATION.md, 2026-12-06 acc124 entry: the torchtune throughput groups that miss their target are
under-predicted (the step is too slow) on the RTX 4090 and RTX A6000, so no cost a torchtune recipe adds (checkpointing's
recompute, chunked cross-entropy, eager kernels, paging, NF4 dequantization) can close them, and the engine is left as it
is. The evidence is each row's tokens/s times the step's own FLOPs a token (matmuls only, attention left out, so a floor)
over the GPU's measured best ``torch.mm`` rate (the catalog's ``max_achievable_tflops``): the A100 rows the step meets
sit near 0.55-0.75 of it, the 8B LoRA rows on the consumer / workstation cards far above, the A6000's beyond what any
step can reach. These figures are pinned so that the entry's reading is re-done if a row, a FLOP count or a catalog rate
changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.sizing.performance import training_flops_per_token
from tests.conftest import calibration_report as _report

REPO = Path(__file__).resolve().parents[1]

#: (gpu, method, model, checkpointing) -> implied share of the GPU's measured bf16 GEMM maximum, to 2 places (acc124 entry).
IMPLIED_SHARE: dict[tuple[str, str, str, str], float] = {
    ("rtx-4090-24gb", "full", "meta-llama/Llama-3.1-8B", "full"): 0.57,
    ("rtx-4090-24gb", "lora", "meta-llama/Llama-3.1-8B", "full"): 0.80,
    ("rtx-4090-24gb", "qlora", "meta-llama/Llama-3.1-8B", "full"): 0.62,
    ("rtx-a6000-48gb", "full", "meta-llama/Llama-3.1-8B", "none"): 0.94,
    ("rtx-a6000-48gb", "lora", "meta-llama/Llama-3.1-8B", "none"): 1.14,
    ("a100-sxm4-80gb", "full", "meta-llama/Llama-3.1-70B-Instruct", "full"): 0.40,
    ("a100-sxm4-80gb", "lora", "meta-llama/Llama-3.1-70B-Instruct", "full"): 0.67,
    ("a100-sxm4-80gb", "qlora", "meta-llama/Llama-3.1-405B-Instruct", "full"): 0.73,
    ("a100-sxm4-80gb", "lora", "meta-llama/Llama-3.2-3B", "full"): 0.56,
    ("a100-sxm4-80gb", "qlora", "meta-llama/Llama-3.2-3B", "full"): 0.55,
    # acc198: the "Optimization flags" table's full fine-tunes, before and after activation checkpointing
    ("a100-sxm4-80gb", "full", "meta-llama/Llama-3.2-3B", "none"): 0.65,
    ("a100-sxm4-80gb", "full", "meta-llama/Llama-3.2-3B", "full"): 0.66,
}


def _torchtune_rows() -> list[dict[str, Any]]:
    cal = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())
    return [row for row in cal["training_throughput"] if row["framework"] == "torchtune"]


def implied_gemm_share(row: dict[str, Any]) -> float:
    """A row's tokens/s per GPU times the step's FLOPs a token, over its GPU's measured best bf16 GEMM rate."""
    report = _report()
    arch = report.parse_architecture(report.find_model(row["model"]).config)
    gpu = report.find_gpu(row["gpu"])
    flops = training_flops_per_token(arch, row["method"], row["checkpointing"], row["framework"])
    assert gpu.max_achievable_tflops is not None
    return float(row["tokens_per_gpu_per_sec"] * flops / (gpu.max_achievable_tflops["bf16"] * 1e12))


@pytest.mark.parametrize("row", _torchtune_rows(), ids=lambda r: f"{r['gpu']}-{r['method']}-{r['model'].split('/')[-1]}")
def test_implied_share_of_measured_gemm(row: dict[str, Any]) -> None:
    assert round(implied_gemm_share(row), 2) == IMPLIED_SHARE[(row["gpu"], row["method"], row["model"], row["checkpointing"])]


def test_every_row_pinned() -> None:
    assert {(r["gpu"], r["method"], r["model"], r["checkpointing"]) for r in _torchtune_rows()} == set(IMPLIED_SHARE)


def test_a6000_lora_row_beyond_any_step() -> None:
    """The A6000 LoRA row needs more than the card's best measured GEMM at the fewest FLOPs its settings allow (4 N, no
    recompute, no attention): no step the engine could time, slow or fast, reaches it."""
    (row,) = [r for r in _torchtune_rows() if r["gpu"] == "rtx-a6000-48gb" and r["method"] == "lora"]
    assert row["checkpointing"] == "none"
    assert implied_gemm_share(row) > 1.0
