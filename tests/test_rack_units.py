"""Racks use published heights; a pool whose platform publishes none is packed as 4U and the plan says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.racks import DEFAULT_NODE_RACK_UNITS, RACK_UNITS, assumed_height_findings, node_units
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
        pytest.param("hgx-a100-8gpu-oem", "a100-sxm4-80gb", True, id="oem-hgx-no-published-height"),
        pytest.param("dell-xe8640", "h100-sxm5-80gb", False, id="xe8640-4u-spec-sheet"),
        pytest.param("supermicro-as-4124go-nart", "a100-sxm4-80gb", False, id="named-hgx-a100-4u-published"),
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


@pytest.mark.parametrize(
    ("kind", "rack_units", "expected"),
    [
        pytest.param("hgx-8gpu", 8, 8, id="published"),
        pytest.param("pcie-server", None, DEFAULT_NODE_RACK_UNITS, id="assumed"),
        pytest.param("rack-scale", None, RACK_UNITS, id="rack-scale-is-the-rack"),
    ],
)
def test_node_units(tmp_path: Path, kind: str, rack_units: int | None, expected: int) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(platform="dgx-h100", gpu="h100-sxm5-80gb"))
    pool = plan_workload(load_workload(str(path))).pools[0]
    pool = pool._replace(node=pool.node._replace(kind=kind, rack_units=rack_units))
    assert node_units(pool) == expected
    assert bool(assumed_height_findings([pool])) is (expected == DEFAULT_NODE_RACK_UNITS)
