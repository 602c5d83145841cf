"""``specgen diff`` of an owned pool charged its training runs' energy (newuser89 left item 3).

Its ``usd_per_hour`` is its runs' energy a month / 730 h (``OwnedRuns``), not a node-hour price: a job's hours moving
read "changed (price $0.00 → $0.01 a node-hour)". The row now says the month of energy moved.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.fleet_diff import diff_plans, markdown_diff
from generator.planner.plan import RUNS_ENERGY_BASIS

#: the finetune-8b-deepspeed-home golden's pool: one owned AM5 tower, 10.2 h x 1.38 kW x $0.13/kWh a month = $1.83
RUNS = f"1 {RUNS_ENERGY_BASIS}its runs' energy (10.2 h x 1.38 kW x PUE 1 x $0.13/kWh, one run a month)"


def _pool(usd_per_hour: float, basis: str) -> dict[str, Any]:
    return {"name": "train", "nodes": 1, "power_w": 1380, "usd_per_hour": usd_per_hour, "price_basis": basis,
            "node": {"gpu_id": "rtx-4090", "gpus": 2, "platform_id": "am5-desktop-tower"}}  # fmt: skip


def _fleet(pool: dict[str, Any]) -> dict[str, Any]:
    return {"provider": "baremetal", "totals": {}, "pools": [pool], "deployments": []}


@pytest.mark.parametrize(
    ("basis", "status"),
    [
        # 0.002507 x 730 h = $1.83 a month; 0.005014 x 730 = $3.66 (two epochs: the runs' hours doubled)
        (RUNS, "changed (its runs' energy $1.83 → $3.66 a month)"),
        # a pool priced by the node-hour says its price, as before
        ("workload prices", "changed (price $0.00 → $0.01 a node-hour)"),
    ],
)
def test_runs_energy_pool_says_its_month(basis: str, status: str) -> None:
    result = diff_plans(_fleet(_pool(0.002507, basis)), _fleet(_pool(0.005014, basis)))
    assert f"| `train` | {status} | rtx-4090 |" in markdown_diff(result)
