"""fix162: the exit codes README's command table documents for ``diff`` and ``detect``, against what they do.

Inputs of this session's items: a spec.json whose deployment's GPUs are not its layout's (item 2) and one whose month
total is ``-0.0`` (item 3), and ``detect -o`` at a path it must not write. README's ``detect`` row said ``0`` alone while
``detect -o workload.yaml`` (a file it did not write) exits 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.cli import main
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "chat-70b" / "spec.json"


def documented(command: str) -> set[int]:
    """The exit codes README's command table gives the row whose command starts with ``command``."""
    (row,) = (line for line in (REPO / "README.md").read_text().splitlines() if line.startswith(f"| `{command}"))
    return {int(code) for code in re.findall(r"\d+", row.rsplit("|", 2)[1])}


def _code(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


def _spec(tmp_path: Path, edit: str) -> str:
    spec = json.loads(GOLDEN.read_text())
    if edit == "gpus":
        spec["plan"]["deployments"][0]["gpus"] = 16
    else:
        spec["plan"]["totals"]["usd_per_month"] = -0.0
    path = tmp_path / f"{edit}.json"
    path.write_text(json.dumps(spec, indent=2))
    return str(path)


@pytest.mark.parametrize("edit", ["gpus", "month"])
@pytest.mark.parametrize("flags", [[], ["--exit-code"], ["--format", "json"]])
def test_diff_exits_1_on_a_spec_json_the_planner_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, flags: list[str]
) -> None:
    assert documented("specgen diff OLD NEW") == {0, 1, 3, 6, 75}
    code = _code(["diff", str(GOLDEN), _spec(tmp_path, edit), *flags])
    err = capsys.readouterr().err
    assert code == 1 and "not a specgen spec.json" in err and "-0.00" not in err, err


def test_detect_exits_1_where_o_names_a_file_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert documented("specgen detect") == {0, 1}
    workload = tmp_path / "w.yaml"
    workload.write_text((REPO / "examples" / "chat-70b.yaml").read_text())
    before = workload.read_bytes()
    assert _code(["detect", "-o", str(workload)]) == 1
    assert "it exists and is not a block specgen wrote" in capsys.readouterr().err
    assert workload.read_bytes() == before
    assert _code(["detect", "-o", str(tmp_path / "no" / "such" / "dir.yaml")]) == 1
