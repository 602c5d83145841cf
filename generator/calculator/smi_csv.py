"""``memory.used`` from ``nvidia-smi --query-gpu=... --format=csv`` output with its header line.

nvidia-smi writes ``memory.used [MiB]`` in the header and ``17000 MiB`` (or ``17000`` with ``nounits``) in each
row. The unit is read from the header and from the cell, never assumed: a ``[GiB]`` column read as MiB gave a
thousandth of the figure (fuzz31 item 8). Rows are read as CSV (quotes respected): a CSV re-saved by a
spreadsheet or pandas quotes a GPU name holding a comma (``"NVIDIA H100, 80GB HBM3"``), and splitting on every
comma read the name's "80GB" as memory.used.
"""

from __future__ import annotations

import csv
import re

from generator.errors import InputError
from generator.input_files import short

#: Bytes of each unit a column or cell may be written in (as written: MB and GB are the SI units).
UNIT_BYTES = {
    "B": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}
_HEADER_UNIT = re.compile(r"\[\s*([^\]]*?)\s*\]")
_CELL = re.compile(r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*([A-Za-z]*)")
#: A cell nvidia-smi writes where it has no figure.
_NO_FIGURE = re.compile(r"\[?\s*(?:N/A|Not Supported|Unknown Error|Insufficient Permissions)\s*\]?", re.IGNORECASE)
#: More than any figure a run prints (bytes, tokens, tokens/s; any unit): a larger one is not a reading (calibrate's
#: log figures and nvidia-smi's cells alike).
MOST_FIGURE = 1e15


def _cells(line: str, where: str) -> list[str]:
    """The cells of one CSV line, quotes respected (an InputError naming ``where`` for a malformed one)."""
    if '"' not in line:  # no quotes: the cells are what lies between the commas (review70 item 7: a reader a row)
        return [cell.strip() for cell in line.split(",")]
    try:
        rows = list(csv.reader([line], skipinitialspace=True, strict=True))
    except csv.Error as exc:
        raise InputError(f"{where}: cannot read the CSV line ({exc}): {short(line.strip(), 120)}") from None
    return [cell.strip() for cell in rows[0]] if rows else []


def _column_unit(header: str, where: str) -> str | None:
    """The unit a header cell names (``memory.used [MiB]``), None where it names none; refused if unknown."""
    found = _HEADER_UNIT.search(header)
    if found is None:
        return None
    if found.group(1) not in UNIT_BYTES:
        known = ", ".join(UNIT_BYTES)
        raise InputError(f"{where}: unknown unit [{found.group(1)}] in the column {short(header)} (known: {known})")
    return found.group(1)


#: Cells already read, with their column's unit: a day of ``nvidia-smi -l 1`` repeats a few figures 691,000 times.
_READ: dict[tuple[str, str | None], float] = {}


def _bytes(cell: str, unit: str | None, where: str, line: str) -> float | None:
    """The bytes ``cell`` says, in its own unit or the column's; None for nvidia-smi's "[N/A]" and the like."""
    if (known := _READ.get((cell, unit))) is not None:
        return known
    value = _read_bytes(cell, unit, where, line)
    if value is not None and len(_READ) < 100_000:
        _READ[cell, unit] = value
    return value


def _read_bytes(cell: str, unit: str | None, where: str, line: str) -> float | None:
    if _NO_FIGURE.fullmatch(cell):
        return None
    found = _CELL.fullmatch(cell)
    if found is None:
        raise InputError(f"{where}: cannot read a memory figure from {short(cell)} ({short(line.strip(), 120)})")
    digits, written = found.groups()
    if written and written not in UNIT_BYTES:
        raise InputError(f"{where}: unknown unit {written!r} in {short(cell)} ({short(line.strip(), 120)})")
    if written and unit and written != unit:
        raise InputError(f"{where}: {short(cell)} is in {written}, its column in {unit} ({short(line.strip(), 120)})")
    chosen = written or unit
    if chosen is None:
        raise InputError(f"{where}: {short(cell)} gives no unit and neither does its column ({short(line.strip(), 120)})")
    number = float(digits.replace(",", ""))
    if number > MOST_FIGURE:
        raise unreadable_figure(where, line)
    return number * UNIT_BYTES[chosen]


def unreadable_figure(where: str, line: str) -> InputError:
    """The error of a log or CSV line that names a figure and holds none a run prints (``where``: ``label:line``)."""
    return InputError(f"{where}: cannot read a figure from {short(line.strip(), 120)}")


def memory_used_bytes(text: str, label: str) -> list[tuple[float, str, str]]:
    """(memory.used in bytes, the row, its ``file:line``) of each GPU of an nvidia-smi CSV with a header line; [] else.

    A row using more than its ``memory.total`` is refused, as the table form is (fuzz27 L1).
    """
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines or "memory.used" not in lines[0][1]:
        return []
    first, head = lines[0]
    header = _cells(head, f"{label}:{first}")
    column = next((i for i, h in enumerate(header) if "memory.used" in h), None)
    if column is None:  # "memory.used" in the first line, but in no cell of its own
        return []
    total_column = next((i for i, h in enumerate(header) if "memory.total" in h), None)
    unit = _column_unit(header[column], f"{label}:{first}")
    total_unit = _column_unit(header[total_column], f"{label}:{first}") if total_column is not None else None
    out = []
    for number, line in lines[1:]:
        where = f"{label}:{number}"
        cells = _cells(line, where)
        if cells == header:  # the header again (two runs' output appended)
            continue
        if len(cells) != len(header):
            raise InputError(
                f"{where}: {len(cells)} cells where the header has {len(header)} "
                f"(a comma inside a cell needs quotes): {short(line.strip(), 120)}"
            )
        used = _bytes(cells[column], unit, where, line)
        if used is None:
            continue
        total = _bytes(cells[total_column], total_unit, where, line) if total_column is not None else None
        if total is not None and used > total:
            raise InputError(
                f"{where}: {used / 2**20:,.0f} MiB used of a {total / 2**20:,.0f} MiB GPU ({short(line.strip(), 120)})"
            )
        out.append((used, line.strip(), where))
    return out


def unreported_rows(text: str, label: str) -> tuple[int, str] | None:
    """(rows, the cell as written) of an nvidia-smi CSV whose ``memory.used`` holds no figure in any row, else None.

    A CSV that was read, for the reason it gave nothing ("[N/A]" in every row; review70 item 6: it was told "no ...
    nvidia-smi ... figure found").
    """
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) < 2 or "memory.used" not in lines[0][1]:
        return None
    header = _cells(lines[0][1], f"{label}:{lines[0][0]}")
    column = next((i for i, h in enumerate(header) if "memory.used" in h), None)
    if column is None:
        return None
    cells = [_cells(line, f"{label}:{n}") for n, line in lines[1:]]
    rows = [row for row in cells if row != header]
    if not rows or not all(len(row) > column and _NO_FIGURE.fullmatch(row[column]) for row in rows):
        return None
    return len(rows), rows[0][column]
