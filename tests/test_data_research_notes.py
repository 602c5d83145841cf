"""Measured rows keep their research notes under one field, ``research_notes``, which no output reads (fix189).

The project's data rows carry a ``source`` a user can open; what the one who added a row worked out from it (derived
figures, cells left out and why) sits apart in ``research_notes`` (calibration.json, the finetune_*, training_* and
vllm_serving_* files). review96 item 4: acc178's training-MFU rows and acc180's llama.cpp MoE rows named it ``notes``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

#: Other names a research note has gone by: none is allowed on a sourced row.
OTHER_NAMES = ("notes", "note", "research_note", "comment", "comments", "remarks")


def _sourced_rows() -> list[tuple[str, dict[str, Any]]]:
    """(file name, row) of every sourced row of every table of tests/data/*.json."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text())
        tables = [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else [data]
        out += [(path.name, row) for table in tables for row in table if isinstance(row, dict) and "source" in row]
    return out


def test_research_notes_sit_under_one_field_name() -> None:
    rows = _sourced_rows()
    assert len(rows) > 1000  # every file's rows are read (calibration.json alone holds 868)
    misnamed = sorted({(name, key) for name, row in rows for key in OTHER_NAMES if key in row})
    assert not misnamed, f"research notes under another name than research_notes: {misnamed}"
    assert sum("research_notes" in row for _, row in rows) > 400


def test_the_files_say_which_field_holds_the_notes() -> None:
    # a file's own description names the field its rows use
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text())
        about = json.dumps(data.get("about", "")) if isinstance(data, dict) else ""
        assert "'notes'" not in about, path.name


def test_no_output_reads_the_research_notes() -> None:
    """No module of specgen or of the calibration report reads the field: its text reaches no output."""
    read = re.compile(r"""\[\s*["']research_notes["']\s*\]|\.get\(\s*["']research_notes["']|["']research_notes["']\s+in\b""")
    for path in [*sorted((REPO / "generator").rglob("*.py")), *sorted((REPO / "benchmarks").glob("*.py"))]:
        assert not read.search(path.read_text()), path.relative_to(REPO)
