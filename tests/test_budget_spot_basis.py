"""A budget held against a month with spot pools at their on-demand rate says so (newuser81 item 8).

The catalog has no spot rates, so a spot pool is priced at the on-demand rate (info ``spot-priced-on-demand``). The
refusal at ``hardware.max_budget_usd_per_month`` and the ``budget-checked`` info gave that month as what the deployments
cost, with no word that spot bills less, nor that ``prices: {<platform>@spot: ...}`` would hold the budget at the rate
the user expects. Figures: each service on 1 x g6e.xlarge, $1.861/h x 730 h = $1,358.53 a month on demand (catalog
aws-g6e-xlarge-on-demand-us-east-1), $2,717 the two (a cap of $2,000 takes either alone, not both: the refusal of
the fleet); at a spot rate of $0.90/h the spot one is $657, $2,016 the two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: budget
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    capacity_type: {capacity}
    inference: {{precision: bf16, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200,
                requests_per_second: 1}}
  - name: other
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200,
                requests_per_second: 1}}
hardware:
  provider: aws
  platforms: [aws-g6e-xlarge]
  max_budget_usd_per_month: {cap}
kubernetes: {{location: us-east-1}}
{prices}"""


def _plan_error(tmp_path: Path, capacity: str, cap: int, prices: str = "") -> str | None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(capacity=capacity, cap=cap, prices=prices))
    try:
        plan = plan_workload(load_workload(str(path)))
    except InfeasibleError as exc:
        return str(exc)
    checked = [f.message for f in plan.findings if f.code == "budget-checked"]
    assert len(checked) == 1
    return checked[0]


@pytest.mark.parametrize(
    ("capacity", "prices", "said"),
    [
        pytest.param("spot", "", True, id="spot-at-the-on-demand-rate"),
        pytest.param("spot", "prices: {aws-g6e-xlarge@spot: 0.9}\n", False, id="spot-rate-given"),
        pytest.param("on-demand", "", False, id="on-demand"),
    ],
)
def test_budget_refusal_says_spot_is_held_at_the_on_demand_rate(tmp_path: Path, capacity: str, prices: str, said: bool) -> None:
    message = _plan_error(tmp_path, capacity, 2000, prices)
    assert message is not None
    assert (("$2,717 in a month" if not prices else "$2,016 in a month") in message) is True
    assert ("(with spot pool chat_l40s_48gb at the on-demand rate, above what spot bills)" in message) is said
    assert ("or give the spot rate under prices (aws-g6e-xlarge@spot)" in message) is said


def test_budget_met_says_spot_is_held_at_the_on_demand_rate(tmp_path: Path) -> None:
    message = _plan_error(tmp_path, "spot", 3000)
    assert message is not None
    assert message.startswith(
        "the deployments together cost $2,717 a month (with spot pool chat_l40s_48gb at the on-demand rate, above what "
        "spot bills), within max_budget_usd_per_month $3,000"
    )
