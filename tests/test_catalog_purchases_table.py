"""``specgen catalog purchases`` keeps its rows readable (newuser77 item 7).

Every row was padded to 540 characters: the ``basis`` column is as wide as its longest value (dell-r760-host's, 285
characters). The table shows each basis to its first clause (at most 60 characters); ``--json`` keeps the whole text.
"""

from __future__ import annotations

import json

import pytest

from generator.calculator.catalog_listing import TABLE_BASIS_CHARS, purchase_rows, purchase_table_rows
from tests.helpers import specgen_in_process as specgen


def test_the_table_cuts_basis_to_its_first_clause_and_the_json_keeps_it(capsys: pytest.CaptureFixture[str]) -> None:
    full = {r["id"]: r["basis"] for r in purchase_rows()}
    assert len(full["dell-r760-host"]) > 200  # the row that set the width
    code, out, err = specgen(capsys, "catalog", "purchases")
    assert code == 0, err
    lines = out.splitlines()
    header = lines[0]
    start, end = header.index("basis"), header.index("as_of")
    assert end - start <= TABLE_BASIS_CHARS + 2  # the column and the two spaces between columns
    # rows whose last column (available) is blank end at as_of: none is padded past the columns' widths
    assert max(len(line) for line in lines if line.rstrip().endswith(tuple("0123456789"))) <= end + len("2026-12-01")
    shown = {line.split()[0]: line[start:end].strip() for line in lines[1:]}
    assert shown["dell-r760-host"] == full["dell-r760-host"].split(";")[0] + " ..."
    code, out, err = specgen(capsys, "catalog", "purchases", "--json")
    assert code == 0, err
    rows = json.loads(out)
    rows = rows["purchases"] if isinstance(rows, dict) else rows
    assert {r["id"]: r["basis"] for r in rows}["dell-r760-host"] == full["dell-r760-host"]


@pytest.mark.parametrize(
    ("basis", "shown"),
    [
        ("derived", "derived"),
        ("published analysis, low end", "published analysis, low end"),
        ("derived; the chassis quote less its GPUs", "derived ..."),
        ("x" * 70, "x" * 57 + "..."),
        ("x" * 70 + "; more", "x" * 57 + "..."),
    ],
)
def test_basis_as_the_table_shows_it(basis: str, shown: str) -> None:
    assert purchase_table_rows([{"id": "a", "basis": basis}]) == [{"id": "a", "basis": shown}]
