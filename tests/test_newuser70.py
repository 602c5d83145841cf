"""newuser70 (an ML research lead budgeting fine-tunes and continued pre-training).

Item 2: ``specgen diff`` of a training-only workload whose job moved from on-demand to spot raised a KeyError in
``pool_replacements`` (its per-job pool left out there, but not by ``capacity_changes``), exit 1 with a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import call_cli

TRAIN = """\
version: 1
name: ft8b
deployments:
  - name: ft8b
    model: meta-llama/Llama-3.1-8B-Instruct
CAPACITY    training:
      method: lora
      framework: hf
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 100000000
      epochs: 1
      deadline_hours: 72
      runs_per_month: 1
hardware:
  gpus: [h100-sxm5-80gb]
  provider: aws
outputs: [terraform]
"""


def _pair(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(TRAIN.replace("CAPACITY", ""))
    (tmp_path / "new.yaml").write_text(TRAIN.replace("CAPACITY", "    capacity_type: spot\n"))


def test_a_training_pool_moved_to_spot_is_said_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pair(tmp_path)
    assert call_cli(tmp_path, ("diff", "old.yaml", "new.yaml")) == 0
    out = capsys.readouterr().out
    row = next(r for r in out.splitlines() if r.startswith("| `ft8b_h100_sxm5_80gb` |"))
    # rented per run, it rests on no node: nothing is replaced, the move is said on its row
    assert row.split(" | ")[1] == "changed (on-demand → spot)"
    assert "replaced" not in out


def test_a_training_pool_moved_to_spot_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pair(tmp_path)
    assert call_cli(tmp_path, ("diff", "old.yaml", "new.yaml", "--format", "json")) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["replacements"] == []
    (pool,) = result["pools"]
    assert (pool["status"], "capacity_type" in pool["old"], pool["new"]["capacity_type"]) == ("changed", False, "spot")
