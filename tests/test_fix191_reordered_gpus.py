"""fix191: a finding of one of ``hardware.gpus`` names it by its value, not its place in the list.

``gpu-not-rated`` and ``gpu-no-layout`` said ``hardware.gpus[1]``: reversing the list moved them to ``hardware.gpus[0]``
in SPEC.md and spec.json, changed their GitLab fingerprints (``finding_fields``) and made ``specgen diff`` list the
warning as new (its findings are compared by code and field). Their path is ``hardware.gpus[=l40s-48gb]`` (the notation
``finding_fields`` gives a named list item), which the file:line:col of a finding resolves to the item's line.
"""

from __future__ import annotations

from pathlib import Path

from generator.api import plan_file
from generator.findings import finding_fields, locate_findings, parse_path
from generator.workload import load_workload
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "rack-density.yaml"
LISTED = "  gpus: [h100-sxm5-80gb, l40s-48gb]"
#: The L40S has no layout for the chat deployment's latency targets (examples/rack-density.yaml).
NO_LAYOUT = "hardware.gpus[=l40s-48gb]"


def _reordered(tmp_path: Path, listed: str) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert LISTED in text
    path = tmp_path / "rack-density.yaml"
    path.write_text(text.replace(LISTED, listed, 1), encoding="utf-8")
    return path


def _findings(path: Path) -> tuple[list[tuple[str, str, str]], tuple[str, ...], list[str]]:
    _, plan = plan_file(str(path))
    loaded = load_workload(str(path))
    located = [where for *_, where in locate_findings(loaded, plan.findings)]
    return [(f.code, f.message, f.path) for f in plan.findings], finding_fields(loaded, plan.findings), located


def test_reordering_the_gpus_keeps_the_findings_and_their_fields(tmp_path: Path) -> None:
    before = _findings(_reordered(tmp_path, LISTED))
    after = _findings(_reordered(tmp_path, "  gpus: [l40s-48gb, h100-sxm5-80gb]"))
    assert before[0] == after[0] and before[1] == after[1]
    assert [p for _, _, p in before[0] if p.startswith("hardware.gpus")] == [NO_LAYOUT]
    assert NO_LAYOUT in before[1]


def test_a_gpu_named_by_value_is_located_at_its_item(tmp_path: Path) -> None:
    path = _reordered(tmp_path, "  gpus:\n    - h100-sxm5-80gb\n    - l40s-48gb")
    codes, _, located = _findings(path)
    [where] = [w for (code, _, p), w in zip(codes, located, strict=True) if p == NO_LAYOUT]
    line = path.read_text(encoding="utf-8").splitlines().index("    - l40s-48gb") + 1
    assert where == f"{path}:{line}:7"


def test_a_path_names_a_list_item_by_its_value_or_its_name() -> None:
    data = {"hardware": {"gpus": ["h100-sxm5-80gb", "l40s-48gb"]}, "deployments": [{"name": "a"}, {"name": "chat"}]}
    assert parse_path("hardware.gpus[=l40s-48gb]", data) == ("hardware", "gpus", 1)
    assert parse_path("deployments[=chat].inference", data) == ("deployments", 1, "inference")
    assert parse_path("deployments[1].inference") == ("deployments", 1, "inference")
    # an item no longer there: the list itself
    assert parse_path("hardware.gpus[=a100-sxm4-80gb]", data) == ("hardware", "gpus")
