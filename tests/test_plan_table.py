"""benchmarks/plan_table.py: one Markdown row per example, with pools, GPUs, capex, opex and reasons."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("plan_table", REPO / "benchmarks" / "plan_table.py")
assert _spec and _spec.loader
plan_table = importlib.util.module_from_spec(_spec)
sys.modules["plan_table"] = plan_table
_spec.loader.exec_module(plan_table)


def _rows(text: str) -> list[list[str]]:
    return [line.strip("|").split(" | ") for line in text.splitlines()[2:]]


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        pytest.param("chat-70b.yaml", {"pools": " x ", "capex": "$", "reasons": "chat: chosen by"}, id="owned-capex"),
        pytest.param("chat-70b-fp8-aws.yaml", {"pools": "aws-p5", "capex": "-", "reasons": "chosen by"}, id="cloud-no-capex"),
        pytest.param("infeasible/home-405b.yaml", {"pools": "-", "reasons": "InfeasibleError: "}, id="infeasible"),
    ],
)
def test_row(example: str, expected: dict[str, str]) -> None:
    text = plan_table.table([REPO / "examples" / example])
    header, rows = text.splitlines()[0], _rows(text)
    columns = [c.strip() for c in header.strip("|").split(" | ")]
    assert columns == list(plan_table.COLUMNS)
    assert len(rows) == 1 and len(rows[0]) == len(columns)
    cells = dict(zip(columns, (c.strip() for c in rows[0]), strict=True))
    assert cells["example"] == example
    for column, fragment in expected.items():
        assert fragment in cells[column] if fragment != "-" else cells[column] == "-"


def test_all_reasons_lists_every_reason() -> None:
    short = plan_table.table([REPO / "examples" / "chat-70b.yaml"])
    full = plan_table.table([REPO / "examples" / "chat-70b.yaml"], everything=True)
    assert full.count("chat: ") > short.count("chat: ") == 1
