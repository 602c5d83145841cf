"""A tower the plan buys and racks pays the colocation rack's rent and PUE like any other server (newuser23 item 2).

The plan packs every bare-metal node into colocation racks (a tower on a rack shelf) and its costs assume
colocation for what it buys, yet bought towers paid no colocation rent and PUE 1: 4 WRX90 towers (1 x RTX PRO 6000
each, $98,375) came to $3,035 a month and beat one Dell XE7740 with 8 x L40S ($85,271, $3,497 a month) that is
cheaper to buy and faster. A workstation the team already owns (``hardware.inventory``: a home or office server)
is where it is and keeps paying its energy alone, at PUE 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.catalog.records import PlatformSpec
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.planner.tco import fleet_cost, in_colocation, owned_opex_usd_per_month
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH
from generator.workload import load_workload
from generator.workload.models import Workload

#: The report's workload (/tmp/newuser23/colo-lora-trl.yaml); ``{hardware}`` narrows the choice where a test wants.
COLO_LORA_TRL = """\
version: 1
name: colo-lora
deployments:
  - name: nightly-70b
    model: meta-llama/Llama-3.3-70B-Instruct
    training:
      method: lora
      framework: trl
      lora_rank: 16
      sequence_length: 4096
      global_batch_size: 64
      dataset_tokens: 50000000
      epochs: 1
      deadline_hours: 8
hardware:
  provider: baremetal
  rack_power_kw: 17
{hardware}outputs: [terraform, ansible, kubernetes]
"""

#: The two options of the report: 4 towers of one RTX PRO 6000 each, or one XE7740 of 8 x L40S.
TOWERS_OR_RACK = "  gpus: [rtx-pro-6000-ws-96gb, l40s-48gb]\n  platforms: [wrx90-workstation, dell-xe7740]\n"


def _plan(tmp_path: Path, hardware: str = "") -> Plan:
    path = tmp_path / "colo-lora-trl.yaml"
    path.write_text(COLO_LORA_TRL.format(hardware=hardware))
    return plan_workload(load_workload(str(path)))


def _racked_month_usd(capex: float, power_w: int, consts: Constants) -> float:
    """A bought server's month in a colocation rack, from the constants alone: capex over the amortization, energy
    at the facility's PUE, and the rack's rent per kW."""
    kw = power_w / 1000
    energy = kw * consts.power_utilization * consts.pue * consts.energy_usd_per_kwh * HOURS_PER_MONTH
    return capex / consts.amortization_months + energy + kw * consts.colocation_usd_per_kw_month


def test_towers_and_the_rack_server_pay_the_rack_alike(tmp_path: Path) -> None:
    """Before newuser23: 4 x wrx90-workstation at $3,035/month (no rent, PUE 1) beat 1 x dell-xe7740 at $3,497/month.
    Both now pay the rack. Since newuser25 item 1 (the PSU check on the DC load, the 2,200 W PSU the parts list buys)
    2 towers of 2 x RTX PRO 6000 with a fabric NIC each fit their PSU, and at $2,950/month they beat the XE7740. Since
    TRL's LoRA step counts PEFT's passes over the activations (2026-12-04, measured on an H200) two towers miss the 8 h
    deadline: the four it takes cost $5,900/month, rack included, and the XE7740's $3,497/month won fairly. Since acc102
    (the L40S has no GPU peer-to-peer: its ZeRO-3 collectives inside the XE7740 go through host memory at 0.45 of
    PCIe Gen4) the 8-GPU XE7740 misses the deadline too; the L40S runner-up is 8 XE7740s of one GPU each, $8,562/month,
    and the four towers win. Both are still charged alike."""
    plan = _plan(tmp_path, TOWERS_OR_RACK)
    consts = Constants()
    dep, pool = plan.deployments[0], plan.pools[0]
    assert (pool.node.platform_id, pool.node.gpu_id, pool.nodes, pool.node.gpus) == (
        "wrx90-workstation",
        "rtx-pro-6000-ws-96gb",
        4,
        2,
    )
    (rack,) = [c for c in dep.runners_up if c.platform_id == "dell-xe7740"]
    assert rack.nodes == 8 and rack.capex_usd is not None and rack.usd_per_hour is not None
    assert pool.capex_usd is not None and pool.usd_per_hour is not None
    # both are charged the same way: capex, energy at the facility's PUE, and the rack's rent
    towers_month = pool.usd_per_hour * HOURS_PER_MONTH
    rack_month = rack.usd_per_hour * HOURS_PER_MONTH
    assert towers_month == pytest.approx(_racked_month_usd(pool.capex_usd, pool.node.power_w * pool.nodes, consts))
    assert rack_month == pytest.approx(_racked_month_usd(rack.capex_usd, rack.power_w, consts))
    assert (round(towers_month), round(rack_month)) == (5900, 8562)


def test_the_reported_workload_buys_towers_only_paying_the_rack(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    consts = Constants()
    for pool in plan.pools:
        if pool.node.kind == "workstation":
            assert pool.capex_usd is not None and pool.usd_per_hour is not None
            month = pool.usd_per_hour * HOURS_PER_MONTH
            assert month == pytest.approx(_racked_month_usd(pool.capex_usd, pool.node.power_w * pool.nodes, consts))


def _platform(platform_id: str) -> PlatformSpec:
    return catalog.platforms()[platform_id]


@pytest.mark.parametrize(
    ("platform_id", "owned", "racked"),
    [
        pytest.param("wrx90-workstation", False, True, id="bought-tower-racked"),
        pytest.param("am5-desktop-tower", False, True, id="bought-desktop-racked"),
        pytest.param("wrx90-workstation", True, False, id="owned-tower-at-home-or-office"),
        pytest.param("dell-xe7740", False, True, id="bought-rack-server"),
        pytest.param("dell-xe7740", True, True, id="owned-rack-server"),
    ],
)
def test_who_pays_the_colocation_rack(platform_id: str, owned: bool, racked: bool) -> None:
    assert in_colocation(_platform(platform_id), owned) is racked


def test_a_bought_tower_pays_what_a_rack_server_of_its_power_pays() -> None:
    consts = Constants()
    tower, _ = owned_opex_usd_per_month(_platform("wrx90-workstation"), 2000, consts)
    server, _ = owned_opex_usd_per_month(_platform("dell-xe7740"), 2000, consts)
    assert tower == pytest.approx(server)
    home, text = owned_opex_usd_per_month(_platform("wrx90-workstation"), 2000, consts, owned=True)
    assert home == pytest.approx(2.0 * consts.power_utilization * consts.energy_usd_per_kwh * HOURS_PER_MONTH)
    assert "PUE 1 " in text and "colocation 2.00 kW" not in text


def test_owned_towers_stay_at_home_and_the_ones_bought_beside_them_are_racked() -> None:
    """Two towers, one owned and one bought: the owned one pays its energy at PUE 1, the bought one the rack's rent
    and PUE on top of its capex."""
    consts = Constants()
    platform = _platform("wrx90-workstation")
    gpu = catalog.gpus()["rtx-pro-6000-ws-96gb"]
    wl = Workload(version=1, name="t", deployments=())
    mixed = fleet_cost(wl, platform, gpu, 1, 1500, consts, nodes=2, owned=1)
    home, _ = owned_opex_usd_per_month(platform, 1500, consts, owned=True)
    racked, _ = owned_opex_usd_per_month(platform, 1500, consts)
    assert mixed.opex_usd_per_month == pytest.approx(home + racked)
    assert racked > home
    owned_only = fleet_cost(wl, platform, gpu, 1, 1500, consts, nodes=2, owned=2)
    assert owned_only.opex_usd_per_month == pytest.approx(2 * home)
