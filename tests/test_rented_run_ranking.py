"""A training job's layouts ranked on one basis, a month (m74c item 1).

A layout rented per run costs the job's runs a month x a run (one run where the job gives no ``runs_per_month``: the
month a budget holds it to); one on servers bought, owned, reserved or rented by the month costs their month. Both as a
price an hour, what :func:`~generator.planner.options.rank` compares. Before, a rented run's cost itself was compared
with a bought layout's month / 730 h: 16 rented GH200 at $28 a run ranked after a $630/month tower ($0.86 an hour).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from generator.planner import plan_workload
from generator.planner.candidates import monthly_spend_usd, ranking_candidate, runs_month_usd
from generator.planner.option import Option
from generator.planner.options import Hardware, rank
from generator.planner.plan import Candidate
from generator.units import HOURS_PER_MONTH
from generator.workload import load_workload
from generator.workload.models import Workload

#: 16 GH200 rented by the hour for a 0.764 h run at $36.60 an hour ($27.96 a run), as the lab's tune32 (m74c)
RENTED = Candidate(
    gpu_id="gh200-96gb",
    platform_id="supermicro-ars-111gl-nhr",
    gpus_per_node=1,
    tp=1,
    pp=1,
    replicas=16,
    gpus=16,
    nodes=16,
    usd_per_hour=36.6,
    power_w=20_600,
    summary="rented",
    gpus_bought=16,
    run_hours=0.764,
    rented="hour",
)
#: an RTX 5090 tower bought: $630 a month, 27.3 h a run
BOUGHT = RENTED._replace(
    gpu_id="rtx-5090-32gb",
    platform_id="am5-desktop-tower",
    gpus_per_node=2,
    replicas=1,
    gpus=2,
    nodes=1,
    usd_per_hour=630 / HOURS_PER_MONTH,
    power_w=1_700,
    summary="bought",
    gpus_bought=2,
    capex_usd=7_000.0,
    opex_usd_per_month=435.0,
    run_hours=27.3,
    rented=None,
)


def _option(c: Candidate, runs: float | None, provider: str = "baremetal") -> Option:
    hw = cast("Hardware", SimpleNamespace(platform=SimpleNamespace(provider=provider)))
    return Option(c, hw, None, None, None, runs_per_month=runs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("runs", "month"),
    [
        pytest.param(4.0, 36.6 * 0.764 * 4, id="four-runs"),
        pytest.param(30.0, 36.6 * 0.764 * 30, id="nightly"),
        pytest.param(None, 36.6 * 0.764, id="no-runs-given-one-run"),
    ],
)
def test_rented_per_run_ranks_by_its_runs_month(runs: float | None, month: float) -> None:
    opt = _option(RENTED, runs)
    assert runs_month_usd(RENTED, runs) == pytest.approx(month)
    assert ranking_candidate(opt).usd_per_hour == pytest.approx(month / HOURS_PER_MONTH)
    # the same month a budget holds the job to
    wl = cast("Workload", SimpleNamespace(hardware=SimpleNamespace(provider="baremetal")))
    assert monthly_spend_usd(wl, opt, runs) == pytest.approx(month)


@pytest.mark.parametrize("runs", [4.0, None])
def test_servers_paid_by_the_month_rank_by_their_month(runs: float | None) -> None:
    assert ranking_candidate(_option(BOUGHT, runs)) == BOUGHT
    reserved = RENTED._replace(reserved=True)  # a reservation bills its month, runs or not
    assert ranking_candidate(_option(reserved, runs, provider="gcp")) == reserved
    monthly = RENTED._replace(rented="month")
    assert ranking_candidate(_option(monthly, runs)) == monthly


@pytest.mark.parametrize(
    ("runs", "rented_first"),
    [
        pytest.param(4.0, True, id="4-runs-111.84-against-630"),
        pytest.param(22.0, True, id="22-runs-615.12-against-630"),
        pytest.param(23.0, False, id="23-runs-643.08-against-630"),
    ],
)
def test_cost_ranks_rented_against_bought_on_the_month(runs: float, rented_first: bool) -> None:
    """$27.96 a run x 22 = $615 under the tower's $630; x 23 = $643 over it. Before, $27.96 > $0.86 ranked the tower
    first at every count of runs."""
    rented = rank("cost", ranking_candidate(_option(RENTED, runs)), alone=True)
    bought = rank("cost", ranking_candidate(_option(BOUGHT, runs)), alone=True)
    assert (rented < bought) is rented_first


_OFFICE_LORA = """\
version: 1
name: office
deployments:
  - name: lora8b
    model: meta-llama/Llama-3.1-8B
    training: {{method: lora, lora_rank: 16, sequence_length: 4096, global_batch_size: 32, dataset_tokens: 200000000,
               epochs: 1, deadline_hours: 24{runs}}}
hardware:
  provider: baremetal
constants:
  colocation_usd_per_kw_month: 0
  pue: 1
"""


@pytest.mark.parametrize(
    ("runs", "chosen", "said"),
    [
        # one run a month: a GH200 rented by the hour, $11.55, against the RTX 5090 tower's $177 a month
        pytest.param("", "supermicro-ars-111gl-nhr", True, id="no-runs-one-run-a-month"),
        # 3 runs ($34.65) still rent; nothing to say: the runs a month are the job's own
        pytest.param(", runs_per_month: 3", "supermicro-ars-111gl-nhr", False, id="3-runs"),
        # 20 runs ($231) buy the tower
        pytest.param(", runs_per_month: 20", "am5-desktop-tower", False, id="20-runs"),
    ],
)
def test_a_job_says_the_basis_its_layouts_were_ranked_on(tmp_path: Path, runs: str, chosen: str, said: bool) -> None:
    path = tmp_path / "office.yaml"
    path.write_text(_OFFICE_LORA.format(runs=runs))
    plan = plan_workload(load_workload(str(path)))
    (job,) = plan.deployments
    (pool,) = plan.pools
    assert pool.node.platform_id == chosen
    (reason,) = [r for r in job.reasons if r.startswith("chosen by cost: ")]
    basis = "ranked by the month: a layout rented per run at one run a month (the job gives no runs_per_month)"
    assert (basis in reason) is said
