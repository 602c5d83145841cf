"""Published fine-tuning peaks out of sample: PEFT's MetaMathQA suite (tests/data/finetune_peft_metamathqa.json, acc176).

Each row is a plain PyTorch loop over a bf16 Llama-3.2-3B on one L40S (no autocast, no checkpointing, torch AdamW),
its torch ``max_memory_allocated`` peak. The engine sizes each within the stated tolerance, and the group's median and
p90 are pinned: a change to the engine that moves them fails here.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.peft_lora import ACT_BYTES, peft_cast_copy_bytes_per_token_per_layer
from generator.sizing.training import TrainingSetup
from tests.conftest import calibration_report as _load_report

ROOT = Path(__file__).resolve().parents[1]
calibration_report = _load_report()

ROWS: list[dict[str, Any]] = json.loads((ROOT / "tests" / "data" / "finetune_peft_metamathqa.json").read_text())["rows"]

#: |predicted / measured - 1| each row must stay within (the issue's p90 target is 40%); the 1000-step row, whose
#: longest batch is shorter than the 768-token cap it is sized at, is over by 14.3%, the others within 6%.
TOLERANCE = 0.15

#: (measured GB, predicted GB) per row, in file order: the engine's figures at acc176's commit.
EXPECTED_GB = [(22.274, 22.82), (22.54, 22.93), (24.713, 24.24), (22.538, 22.93), (20.061, 22.93), (37.241, 35.04)]


@pytest.mark.parametrize(("row", "expected"), list(zip(ROWS, EXPECTED_GB, strict=True)), ids=lambda v: str(v)[:40])
def test_each_row_within_tolerance_and_pinned(row: dict[str, Any], expected: tuple[float, float]) -> None:
    measured, predicted = expected
    got = calibration_report.predict_training(row)
    assert row["measured_gb"] == measured
    assert got == pytest.approx(predicted, abs=0.005)
    assert abs(got / measured - 1) <= TOLERANCE


def test_group_figures_pinned() -> None:
    errors = sorted(abs(calibration_report.predict_training(r) / r["measured_gb"] - 1) for r in ROWS)
    assert round(statistics.median(errors), 3) == 0.022
    assert round(calibration_report._p90(errors), 3) == 0.059


def test_rows_carry_source_and_notes_apart() -> None:
    for row in ROWS:
        assert row["source"].startswith("https://github.com/huggingface/peft/blob/")
        assert row["research_notes"] and row["research_notes"] not in row["setup"]
        assert row["measured_gb"] == round(row["measured_bytes_as_reported"] / 1e9, 3)


def test_loaded_as_their_own_group() -> None:
    groups = {g for g, *_ in calibration_report.finetune_rows()}
    assert groups == {"memory hf (PEFT MetaMathQA suite, allocated)"}


def test_without_autocast_fp32_adapters_keep_fp32_input_copies() -> None:
    """The MLP's adapters cost more than q/v's without autocast (down_proj's fp32 copy of the 8192-wide product): the
    measured 24.71 GB against 22.27 GB; under autocast the two are sized alike (each copy bf16, down_proj's replacing
    its input)."""
    arch = parse_architecture(find_model("meta-llama/Llama-3.2-3B").config)
    h, ffn = arch.hidden_size, int(find_model("meta-llama/Llama-3.2-3B").config["intermediate_size"])
    qv, mlp = ("q_proj", "v_proj"), ("gate_proj", "up_proj", "down_proj")
    assert peft_cast_copy_bytes_per_token_per_layer(arch, qv) == h * ACT_BYTES
    assert peft_cast_copy_bytes_per_token_per_layer(arch, mlp) == h * ACT_BYTES
    assert peft_cast_copy_bytes_per_token_per_layer(arch, qv, 4) == 2 * h * 4 - h * ACT_BYTES
    assert peft_cast_copy_bytes_per_token_per_layer(arch, mlp, 4) == 2 * h * 4 - h * ACT_BYTES + ffn * (4 - ACT_BYTES)
    plain = TrainingSetup(method="lora", optimizer="adamw", framework="hf", autocast=False)
    assert plain.adapter_copy_bytes() == 4
    assert plain._replace(autocast=True).adapter_copy_bytes() == 2
    assert plain._replace(optimizer="adamw-bf16").adapter_copy_bytes() == 2  # bf16 adapters: no cast
    assert plain._replace(base_precision="nf4").adapter_copy_bytes() == 2  # a quantized base: autocast's path
