"""Published fine-tuning peaks out of sample (acc176): PEFT's MetaMathQA suite and Answer.AI's fsdp_qlora rows.

``tests/data/finetune_peft_metamathqa.json``: a plain PyTorch loop over a bf16 Llama-3.2-3B on one L40S (no autocast,
no checkpointing, torch AdamW), its torch ``max_memory_allocated`` peak. ``tests/data/finetune_answerai_fsdp_qlora.json``:
the rows of Answer.AI's benchmarks_03_2024.md the calibration set had not taken (Llama-2-7B on 2 x RTX 3090 / 4090).
The engine sizes each within the stated tolerance, each prediction and the groups' median and p90 are pinned: a change
to the engine that moves them fails here.
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
from generator.units import GB, GIB
from tests.conftest import calibration_report as _load_report

ROOT = Path(__file__).resolve().parents[1]
calibration_report = _load_report()

ROWS: list[dict[str, Any]] = json.loads((ROOT / "tests" / "data" / "finetune_peft_metamathqa.json").read_text())["rows"]
ANSWERAI: list[dict[str, Any]] = json.loads((ROOT / "tests" / "data" / "finetune_answerai_fsdp_qlora.json").read_text())["rows"]

#: |predicted / measured - 1| each row must stay within (the issue's p90 target is 40%); the 1000-step row, whose
#: longest batch is shorter than the 768-token cap it is sized at, is over by 14.3%, the others within 6%.
TOLERANCE = 0.15

#: (measured GB, predicted GB) per row, in file order: the engine's figures at acc176's commit.
EXPECTED_GB = [(22.274, 22.82), (22.54, 22.93), (24.713, 24.24), (22.538, 22.93), (20.061, 22.93), (37.241, 35.04)]


#: The same for the Answer.AI rows (reserved, then the two allocated figures, ...; file order). The 4090 QLoRA row with
#: CPU offload at batch 12 is over by 13.2%.
ANSWERAI_EXPECTED_GB = [
    (10.995, 10.1),
    (8.891, 8.72),
    (9.835, 10.17),
    (12.047, 12.57),
    (17.33, 17.84),
    (22.484, 22.97),
    (24.363, 23.48),
    (24.03, 27.19),
]

CASES = list(zip(ROWS, EXPECTED_GB, strict=True)) + list(zip(ANSWERAI, ANSWERAI_EXPECTED_GB, strict=True))


@pytest.mark.parametrize(("row", "expected"), CASES, ids=lambda v: str(v)[:40])
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
    for row in ANSWERAI:
        assert row["source"] == "https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md"
        assert row["research_notes"] and row["research_notes"] not in row["setup"]
        assert row["measured_gb"] == round(row["measured_gib_as_reported"] * (GIB / GB), 3)


def test_loaded_into_their_groups() -> None:
    groups: dict[str, int] = {}
    for group, *_ in calibration_report.finetune_rows():
        groups[group] = groups.get(group, 0) + 1
    assert groups == {
        "memory hf (PEFT MetaMathQA suite, allocated)": 6,
        "memory hf": 6,  # beside calibration.json's 14
        "memory hf (Answer.AI fsdp_qlora, allocated)": 2,
    }


def test_a_loop_without_kbit_preparation_keeps_an_unsharded_nf4_base_bf16() -> None:
    """fsdp_qlora's ddp mode (FSDP NO_SHARD) never calls prepare_model_for_kbit_training: sized with the hf profile's
    fp32 upcast the batch-8 row was +24.8% (28.05 GB against 22.48); without it +2.2%."""
    ddp = next(r for r in ANSWERAI if r["zero_stage"] == 0)
    assert calibration_report.predict_training({**ddp, "kbit_preparation": None}) == pytest.approx(28.05, abs=0.005)
    assert calibration_report.predict_training(ddp) == pytest.approx(22.97, abs=0.005)
    setup = TrainingSetup(method="qlora", base_precision="nf4", framework="hf", zero_stage=0)
    assert setup.upcasts_unquantized()
    assert not setup._replace(kbit_preparation=False).upcasts_unquantized()
    assert not setup._replace(zero_stage=3, kbit_preparation=True).upcasts_unquantized()  # sharded: never cast


def test_without_autocast_fp32_adapters_keep_fp32_input_copies() -> None:
    """The MLP's adapters cost more than q/v's without autocast (down_proj's fp32 copy of the 8192-wide product): the
    measured 24.71 GB against 22.27 GB; under autocast the two are sized alike (each copy bf16, down_proj's replacing
    its input)."""
    arch = parse_architecture(find_model("meta-llama/Llama-3.2-3B").config)
    h, ffn = arch.hidden_size, int(find_model("meta-llama/Llama-3.2-3B").config["intermediate_size"])
    qv, mlp = ("q_proj", "v_proj"), ("gate_proj", "up_proj", "down_proj")
    assert peft_cast_copy_bytes_per_token_per_layer(arch, qv) == h * ACT_BYTES
    assert peft_cast_copy_bytes_per_token_per_layer(arch, mlp) == h * ACT_BYTES
    assert (h, ffn) == (3072, 8192)
    # fp32 copies: q and v each keep a 3,072-wide copy at 4 bytes (24,576 B), less the bf16 input one of them stands in
    # for (6,144 B); gate / up the same, and down_proj's 8,192-wide copy grows from 2 to 4 bytes (+16,384 B)
    assert peft_cast_copy_bytes_per_token_per_layer(arch, qv, 4) == 18_432
    assert peft_cast_copy_bytes_per_token_per_layer(arch, mlp, 4) == 34_816
    plain = TrainingSetup(method="lora", optimizer="adamw", framework="hf", autocast=False)
    assert plain.adapter_copy_bytes() == 4
    assert plain._replace(autocast=True).adapter_copy_bytes() == 2
    assert plain._replace(optimizer="adamw-bf16").adapter_copy_bytes() == 2  # bf16 adapters: no cast
    assert plain._replace(base_precision="nf4").adapter_copy_bytes() == 2  # a quantized base: autocast's path
