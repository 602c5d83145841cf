"""fix199 item 4: a wall circuit's breaker of 0.001 A was taken, and the plan said the circuit carries "0 W".

hardware.wall_circuit.breaker_a now starts at 1 A, the smallest standard rating of an overcurrent device (NEC 240.6(A)
lists fuses of 1, 3, 6 and 10 A below the breakers' 15 A): at the schema's lowest voltage (100 V) such a circuit
carries 76 W at 0.8 and power factor 0.95, a figure the warning prints whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import specgen_in_process

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "lab-finetune-owned.yaml"
GIVEN = "wall_circuit: {voltage_v: 230, breaker_a: 16}"


@pytest.mark.parametrize(
    ("breaker", "refused"),
    [("0.001", True), ("0.5", True), ("0.999", True), ("1", False), ("1.5", False), ("16", False)],
)
def test_a_wall_breaker_under_an_ampere_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], breaker: str, refused: bool
) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert GIVEN in text
    line = next(n for n, row in enumerate(text.splitlines(), 1) if GIVEN in row)
    path = tmp_path / "w.yaml"
    path.write_text(text.replace(GIVEN, GIVEN.replace("16}", f"{breaker}}}")), encoding="utf-8")
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    said = f"{path}:{line}:45: hardware.wall_circuit.breaker_a: {breaker} is out of range: must be >= 1"
    assert (code, said in err) == ((1, True) if refused else (0, False)), err
    assert "Traceback" not in err
