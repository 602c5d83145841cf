"""fix162 item 3: money that rounds to zero from a negative prints ``0.00``, never ``-0.00``, from one formatter.

A spec.json whose ``plan.totals.usd_per_month`` is ``-0.0`` (which the figure check lets through: -0.0 >= 0) was
refused "'plan.totals.usd_per_month' is -0.00, but the pools ... add up to 12,699.50 a month"; a change of -0.004 read
``-0.00`` in a cell, ``usd_text(-0.0)`` ``$-0.00``, and the amortisation line "-$0.00/month of the change". Every money
text of the diff modules goes through :func:`generator.units.money_text` (format ``z``: negative zero after rounding).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.calculator.report import money_cell
from generator.cli import main
from generator.fleet_diff import constants_line, fmt_cell, signed_cell
from generator.units import money_text, signed_money_text, usd_text
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "chat-70b" / "spec.json"


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (money_text(-0.0), "0.00"),
        (money_text(-0.004), "0.00"),
        (money_text(-0.005), "-0.01"),  # a cent is a cent (round half to even: -0.005 is below, -0.01)
        (money_text(-1234.5), "-1,234.50"),
        (fmt_cell(-0.0), "0.00"),
        (fmt_cell(-0.004), "0.00"),
        (signed_cell(-0.004), "0.00"),  # no sign: it moved no cent
        (signed_cell(0.004), "0.00"),
        (signed_cell(-1.5), "-1.50"),
        (signed_cell(1.5), "+1.50"),
        (signed_cell(3), "+3"),
        (usd_text(-0.0), "$0.00"),
        (usd_text(-0.004), "$0.00"),
        (signed_money_text(-0.004), "$0.00"),
        (signed_money_text(0.0), "$0.00"),
        (signed_money_text(-2.5), "-$2.50"),
        (signed_money_text(2.5), "+$2.50"),
        (money_cell(-0.0), "0.00"),
    ],
)
def test_money_rounding_to_zero_has_no_minus(said: str, expected: str) -> None:
    assert said == expected


@given(st.floats(min_value=-0.004999, max_value=0.0))
def test_no_negative_that_rounds_to_no_cent_prints_a_minus(value: float) -> None:
    assert money_text(value) == "0.00" and fmt_cell(value) == "0.00" and signed_cell(value) == "0.00"
    assert usd_text(value) == "$0.00" and signed_money_text(value) == "$0.00"


def test_a_diff_error_says_a_negative_zero_total_as_0_00(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = json.loads(GOLDEN.read_text())
    spec["plan"]["totals"]["usd_per_month"] = -0.0
    new = tmp_path / "new.json"
    new.write_text(json.dumps(spec, indent=2))
    with pytest.raises(SystemExit) as done:
        main(["diff", str(GOLDEN), str(new)])
    err = capsys.readouterr().err
    assert done.value.code == 1
    assert "'plan.totals.usd_per_month' is 0.00, but the pools of 'plan.pools' add up to 12,699.50 a month" in err, err
    assert "-0.00" not in err


def test_an_amortisation_that_moves_no_cent_has_no_sign() -> None:
    changed = [{"name": "amortization_months", "old": 36, "new": 37}]
    line = constants_line(changed, {"capex_usd": {"old": 0.01, "new": 0.01}})  # moves -0.0000075 a month
    assert line.endswith("36: $0.00/month of the change."), line
    line = constants_line(changed, {"capex_usd": {"old": 357_000.0, "new": 357_000.0}})
    assert line.endswith("36: -$268.02/month of the change."), line  # 357,000 / 37 - 357,000 / 36


#: The modules whose money the diff prints: none formats a figure itself (``:,.2f``), all through money_text.
DIFF_MODULES = [p.name for p in sorted((Path(__file__).parents[1] / "generator").glob("fleet_diff*.py"))] + [
    "pr_diff.py",
    "choice_moves.py",
    "capacity_diff.py",
    "circuit_diff.py",
    "units.py",
]


@pytest.mark.parametrize("name", DIFF_MODULES)
def test_the_diff_modules_format_money_in_one_place(name: str) -> None:
    text = (REPO / "generator" / name).read_text()
    own = re.findall(r"\$\{[^}]*:[^}]*f\}|:,\.2f\}", text)
    assert not own, f"{name} formats money itself: {own}"
