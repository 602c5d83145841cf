"""fix173: ``specgen diff``'s row of a racked owned pool training jobs alone run on says what its month holds.

The pool is charged its runs' energy and its colocation, paid whether it runs or not (``OwnedRuns``); the row read
"its runs' energy $1,877.46 → $1,877.79 a month" for the lab's DGX H100, $1,876.80 of which is the racks' rent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main
from generator.fleet_diff import RACKED_RUNS_MONTH, diff_plans, markdown_diff
from generator.planner.plan import PAID_WHETHER_RUN, RUNS_ENERGY_BASIS
from tests.test_newuser94_beside_service import LAB

ENERGY = f"1 {RUNS_ENERGY_BASIS}its runs' energy (0.3 h x 10.20 kW x PUE 1.3 x $0.13/kWh)"
RACKED = f"{ENERGY}; the servers are owned, and their colocation $1,877/month is {PAID_WHETHER_RUN}"


def _fleet(usd_per_hour: float, basis: str) -> dict[str, Any]:
    pool = {"name": "tune", "nodes": 1, "power_w": 10200, "usd_per_hour": usd_per_hour, "price_basis": basis,
            "node": {"gpu_id": "h100-sxm5-80gb", "gpus": 8, "platform_id": "dgx-h100"}}  # fmt: skip
    return {"provider": "baremetal", "totals": {}, "pools": [pool], "deployments": []}


@pytest.mark.parametrize(
    ("basis", "held"),
    [(RACKED, "its colocation and runs' energy"), (f"{ENERGY}; the servers are owned", "its runs' energy")],
    ids=["racked", "at-home"],
)
def test_the_row_says_what_the_month_holds(basis: str, held: str) -> None:
    # 2.5719 x 730 h = $1,877.49 a month; 2.5723 x 730 = $1,877.78
    result = diff_plans(_fleet(2.5719, basis), _fleet(2.5723, basis))
    assert f"| `tune` | changed ({held} $1,877.49 → $1,877.78 a month) |" in markdown_diff(result)


def test_the_labs_racked_pool_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(LAB, encoding="utf-8")
    new.write_text(LAB.replace("epochs: 2", "epochs: 3"), encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["diff", str(old), str(new)])
    out = capsys.readouterr().out
    assert re.search(
        rf"\| `tune_h100_sxm5_80gb` \| changed \({RACKED_RUNS_MONTH} \$1,8\d\d\.\d\d → \$1,8\d\d\.\d\d a month\) \|", out
    )
    assert "changed (its runs' energy" not in out
