"""newuser105: Answer.AI fsdp_qlora's Llama-2 70B QLoRA speeds, out of sample, through ``specgen estimate``'s step.

Each row's tokens a GPU a second is the post's 1,024 samples x 2,048 tokens over its Time (s) and GPUs; the predictor
is the estimate's (the ZeRO-3 / FSDP gathers over each GPU's links, the CPU offload), so a lab asking how long its 70B
QLoRA takes on two RTX 4090s gets the step the measured run took: 4,399 s for 1,024 samples, 238 tokens/s a GPU.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import REPO

ROWS = json.loads((REPO / "tests" / "data" / "training_answerai_fsdp_qlora_speed.json").read_text())["rows"]


@pytest.fixture(scope="module")
def report() -> Any:
    from tests.conftest import calibration_report

    return calibration_report()


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['gpus']}x{r['gpu']}-b{r['micro_batch']}")
def test_a_row_is_its_time_over_the_tokens(row: dict[str, Any]) -> None:
    assert row["source"].startswith("https://github.com/AnswerDotAI/fsdp_qlora/")
    assert row["tokens"] == 1024 * 2048
    assert row["tokens_per_gpu_per_sec"] == round(row["tokens"] / row["time_s"] / row["gpus"], 1)


def test_the_dual_4090_70b_run_is_timed_within_a_sixth(report: Any) -> None:
    row = next(r for r in ROWS if r["gpu"] == "rtx-4090-24gb")
    predicted = report.predict_sharded_finetune_speed(row)
    assert row["tokens_per_gpu_per_sec"] == pytest.approx(238.3, abs=0.1)
    assert abs(predicted / row["tokens_per_gpu_per_sec"] - 1) < 1 / 6


def test_the_rows_are_one_group_and_every_row_is_answered(report: Any) -> None:
    groups = report.evaluate(only=lambda name: name == report.FSDP_QLORA_SPEED)
    assert groups[report.FSDP_QLORA_SPEED]["rows"] == len(ROWS) == 11
    assert groups[report.FSDP_QLORA_SPEED]["failed"] == 0
