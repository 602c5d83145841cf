"""hostile86 item 4: a spec.json count (GPUs, nodes, replicas) that is not a whole number is refused at its place.

Every plan writes these as ints (the plan dataclasses' fields). ``"gpus": 0.5`` on a deployment was compared and said
"**changed: GPUs 8 -> 0.50**", and ``-0.0`` "GPUs 8 -> -0.00", exit 0; they passed the figure check (0 to 10^12).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import main
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "chat-70b" / "spec.json"
MARK = '"@@bad@@"'
FIELDS = [
    ("plan", "deployments", 0, "gpus"),
    ("plan", "deployments", 0, "replicas"),
    ("plan", "pools", 0, "nodes"),
    ("plan", "pools", 0, "node", "gpus"),
]


def _field(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")


@pytest.mark.parametrize("literal", ["0.5", "-0.0", "8.0", "1e3"])
@pytest.mark.parametrize("path", FIELDS, ids=_field)
def test_a_count_that_is_not_whole_is_refused_at_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[str | int, ...], literal: str
) -> None:
    spec = json.loads(GOLDEN.read_text())
    holder = spec
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = "@@bad@@"
    text = json.dumps(spec, indent=2, sort_keys=True)
    offset = text.index(MARK)  # the oracle: the literal starts where the marker does
    line, column = text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
    new = tmp_path / "new.json"
    new.write_text(text.replace(MARK, literal))
    with pytest.raises(SystemExit) as done:
        main(["diff", str(GOLDEN), str(new)])
    out, err = capsys.readouterr()
    assert done.value.code == 1 and out == ""
    assert err == (
        f"specgen: error: {new}:{line}:{column}: not a specgen spec.json: '{_field(path)}' must be a whole number from 0 "
        f"to 10^12, got {float(literal)!r}\n"
    )


def test_every_golden_spec_json_still_reads(capsys: pytest.CaptureFixture[str]) -> None:
    goldens = sorted((REPO / "tests" / "golden").rglob("spec.json"))
    assert goldens
    for golden in goldens:
        main_code = 0
        try:
            main(["diff", str(golden), str(golden)])
        except SystemExit as exc:
            main_code = int(exc.code or 0)
        assert main_code == 0, (golden, capsys.readouterr().err)
