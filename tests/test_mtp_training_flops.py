"""Multi-token prediction's work in a training step (acc188, issue 9): ``training_mfu.mtp_flop_params``.

DeepSeek-V3's MTP module (https://arxiv.org/abs/2412.19437, section 2.2) is a ``2h x h`` projection, one decoder layer
and a second pass of the shared output head on every token. Megatron-Bridge's DeepSeek-V3 recipe trains one
(``mtp_num_layers = 1``), and so did DeepSeek's own pretraining (D = 1): the rows that time those runs carry
``mtp_layers`` and the report times the module's GEMMs beside the main model's 6N.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.training_mfu import mtp_flop_params
from tests.conftest import REPO
from tests.conftest import calibration_report as _report


def _deepseek_v3() -> Architecture:
    return parse_architecture(find_model("deepseek-ai/DeepSeek-V3").config)


def test_mtp_module_is_projection_layer_and_head() -> None:
    """One module: 2 x 7,168^2 projection + the last MoE layer's active parameters + the 129,280 x 7,168 head."""
    arch = _deepseek_v3()
    last = arch.layers[-1]
    layer = last.params - last.inactive_params
    assert mtp_flop_params(arch, 1) == 2 * 7168**2 + layer + 129280 * 7168
    assert mtp_flop_params(arch, 1) == 1_614_757_888
    # 4.4% of the main model's 6N work
    assert mtp_flop_params(arch, 1) / arch.flop_params == pytest.approx(0.0441, abs=0.0005)
    assert mtp_flop_params(arch, 2) == 2 * mtp_flop_params(arch, 1)
    assert mtp_flop_params(arch, 0) == 0


def _deepseek_rows() -> list[dict[str, Any]]:
    rows = json.loads((REPO / "tests" / "data" / "calibration_training_mfu.json").read_text())["rows"]
    return [r for r in rows if r.get("model") == "deepseek-ai/DeepSeek-V3"]


def test_megatron_bridge_deepseek_rows_train_one_mtp_module() -> None:
    """Both Megatron-Bridge DeepSeek-V3 rows carry the recipe's MTP module; timed with it, each is 4-5 points slower."""
    calibration_report = _report()
    rows = _deepseek_rows()
    assert [(r["gpu"], r["mtp_layers"]) for r in rows] == [("gb300-288gb", 1), ("gb200-186gb", 1)]
    assert all("mtp_num_layers = 1" in r["mtp_layers_source"] for r in rows)
    errors = [calibration_report.predict_training_mfu(r) / r["mfu"] - 1 for r in rows]
    without = [calibration_report.predict_training_mfu({**r, "mtp_layers": 0}) / r["mfu"] - 1 for r in rows]
    assert errors == pytest.approx([0.0034, 0.0820], abs=0.002)
    assert without == pytest.approx([0.0397, 0.1365], abs=0.002)


def test_deepseek_pretraining_hours_count_its_mtp_module() -> None:
    """DeepSeek-V3's 2,664K H800 hours include its D = 1 MTP module: +8.4% without it, +12.2% with it (FP8 not timed)."""
    calibration_report = _report()
    rows = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["training_time"]
    row = next(r for r in rows if r["model"] == "deepseek-ai/DeepSeek-V3")
    assert row["mtp_layers"] == 1
    assert calibration_report.predict_gpu_hours(row) / row["gpu_hours"] - 1 == pytest.approx(0.1218, abs=0.002)
    assert calibration_report.predict_gpu_hours({**row, "mtp_layers": 0}) / row["gpu_hours"] - 1 == pytest.approx(
        0.0838, abs=0.002
    )
