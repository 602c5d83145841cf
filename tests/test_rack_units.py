"""Racks use published heights; a pool whose platform publishes none is packed as 4U and the plan says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: t
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: {platform}
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 1
hardware:
  gpus: [{gpu}]
"""


@pytest.mark.parametrize(
    ("platform", "gpu", "assumed"),
    [
        pytest.param("dell-xe8640", "h100-sxm5-80gb", True, id="xe8640-no-published-height"),
        pytest.param("dgx-h100", "h100-sxm5-80gb", False, id="dgx-h100-8u"),
        pytest.param("dell-xe9680-hgx-h100-h200", "h100-sxm5-80gb", False, id="xe9680-6u"),
    ],
)
def test_assumed_height_is_stated(tmp_path: Path, platform: str, gpu: str, assumed: bool) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(platform=platform, gpu=gpu))
    plan = plan_workload(load_workload(str(path)))
    notes = [f for f in plan.findings if f.code == "rack-units-assumed"]
    assert bool(notes) is assumed
    if assumed:
        assert platform in notes[0].message and "4U" in notes[0].message
    else:
        assert plan.pools[0].node.rack_units
