"""The layouts of a service are sized once for every service alike but for what no layout's sizing reads.

``planner.inference._layout_spec`` drops the rate, the replicas' floor and utilisation and the precisions asked from the
key the layout sizing is memoised by. These tests size the same layouts with those fields as the workload gives them
(the key left whole) and dropped: were a layout's sizing ever to read one of them, the two would differ here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.calculator.model_source import default_precision
from generator.planner import inference
from generator.planner.options import allowed_hardware
from generator.planner.slo import effective_slo
from generator.sizing.constants import Constants
from generator.sizing.precision import weight_format
from generator.workload import load_workload
from generator.workload.models import InferenceDeployment

WORKLOAD = """\
version: 1
name: memo-key
deployments:
  - name: chat
    model: {model}
    inference:
      precision: {precision}
      allowed_precisions: [{precision}]
      max_context_tokens: 8192
      min_context_tokens: 4096
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: {rate}
      min_replicas: {floor}
      max_utilization: {utilization}
      slo: {{ttft_p95_ms: 1500, tpot_ms: 50}}
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb, l40s-48gb]
"""


def _shapes(
    tmp_path: Path, keep_whole: bool, monkeypatch: pytest.MonkeyPatch, **fields: object
) -> list[tuple[list[Any], list[Any]]]:
    path = tmp_path / f"w-{keep_whole}-{abs(hash(tuple(sorted(fields.items()))))}.yaml"
    path.write_text(WORKLOAD.format(**fields), encoding="utf-8")
    loaded = load_workload(str(path))
    dep = loaded.workload.deployments[0]
    assert isinstance(dep, InferenceDeployment)
    model = loaded.models[dep.name]
    spec, _ = effective_slo(dep.inference)
    fmt = weight_format(spec.precision or default_precision(model))
    if keep_whole:  # the memo keyed by the whole spec: each distinct spec sized afresh
        monkeypatch.setattr(inference, "_layout_spec", lambda whole: whole)
    out: list[tuple[list[Any], list[Any]]] = []
    for hw in allowed_hardware(loaded.workload):
        shapes, blocked = inference.replica_shapes(model, spec, fmt, hw, Constants())
        out.append((shapes, blocked))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize(
    ("model", "precision"),
    [("meta-llama/Llama-3.1-8B-Instruct", "bf16"), ("Qwen/Qwen3-30B-A3B", "fp8"), ("meta-llama/Llama-3.1-70B-Instruct", "fp8")],
)
@pytest.mark.parametrize(("rate", "floor", "utilization"), [(0.5, 1, 1.0), (37.0, 3, 0.6)])
def test_layouts_sized_with_the_key_whole_and_without_what_it_drops_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, precision: str, rate: float, floor: int, utilization: float
) -> None:
    fields = {"model": model, "precision": precision, "rate": rate, "floor": floor, "utilization": utilization}
    whole = _shapes(tmp_path, True, monkeypatch, **fields)
    dropped = _shapes(tmp_path, False, monkeypatch, **fields)
    assert any(shapes for shapes, _ in whole)  # some layout is feasible: the comparison is of sized layouts
    assert whole == dropped
