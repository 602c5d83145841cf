"""newuser57 (a bare-metal / colocation ops engineer): what the rack findings say of many racks alike, and of a custom
server's power supplies.

Item 12: a thousand owned DGX H100 at 40 kW racks gave 51 ``rack-exceeds-air-cooling`` lines, one a rack, for one
packing decision; racks alike are said once, named (the first four, then a count), and renamed with the workload.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InputError
from generator.planner.plan import Finding
from generator.planner.rack_findings import rack_findings
from generator.planner.racks import AIR_COOLED_RACK_LIMIT_KW, Rack, racks_named_for_workload
from tests.conftest import REPO


def _rack(air_kw: float, liquid: bool = False) -> Rack:
    rack = Rack()
    rack.air_power_w = rack.power_w = round(air_kw * 1000)
    rack.liquid = liquid
    return rack


def test_racks_alike_are_said_once() -> None:
    hot = AIR_COOLED_RACK_LIMIT_KW + 0.6
    racks = [_rack(hot) for _ in range(51)] + [_rack(hot + 2.0), _rack(12.0), _rack(0.0, liquid=True)]
    said = rack_findings(racks)
    assert [f.code for f in said] == ["rack-exceeds-air-cooling", "rack-exceeds-air-cooling", "liquid-cooled-rack"]
    assert said[0].message.startswith("rack-01, rack-02, rack-03, rack-04 and 47 more racks each draw 30.6 kW of air-cooled")
    assert said[1].message.startswith("rack-52 draws 32.6 kW of air-cooled servers")
    assert said[2].message.startswith("rack-54 holds liquid-cooled servers: ")
    two = rack_findings([_rack(0.0, liquid=True), _rack(0.0, liquid=True)])
    assert [f.message.split(":")[0] for f in two] == ["rack-01 and rack-02 hold liquid-cooled servers"]


def test_every_rack_named_is_renamed_for_the_workload() -> None:
    plan = plan_file(str(REPO / "examples" / "rack-density.yaml"))[1]
    assert [r.id for r in plan.racks] == ["rack-01", "rack-02"]
    said = Finding("warning", "rack-exceeds-air-cooling", "rack-01 and rack-02 each draw 31.0 kW of air-cooled ...", "hardware")
    (finding,) = racks_named_for_workload(plan._replace(findings=(said,))).findings
    assert finding.message == f"{plan.workload}-rack-01 and {plan.workload}-rack-02 each draw 31.0 kW of air-cooled ..."


CUSTOM = """\
version: 1
name: lab
deployments:
  - name: embed
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, requests_per_second: 20}
hardware:
  provider: baremetal
  buy: false
  rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 32, circuits: 4, redundancy: 2N}
  inventory:
    - custom:
        name: smc-l40s
        gpu: l40s-48gb
        gpus_per_server: 8
        kind: pcie-server
        cpu: epyc-9354
        cpu_sockets: 2
        ram_gib: 1024
        max_power_w: 4600
        rack_units: 4
PSUS
      count: 1
"""


@pytest.mark.parametrize(
    ("psus", "code"),
    [
        ("", "psu-feeds-unknown"),  # none given: nothing checks the feeds
        ("        psu_count: 4\n        psu_rating_w: 2000\n", "psu-feed-loss"),  # 2 x 2,000 W under 4,324 W DC
        ("        psu_count: 4\n        psu_rating_w: 2700\n", None),  # 5,400 W a side
        ("        psu_count: 4\n        psu_rating_w: 2700\n        psu_redundant: 1\n", "psu-feed-loss"),  # 3 must run
    ],
)
def test_a_custom_servers_psus_are_checked_against_a_lost_feed(tmp_path: Path, psus: str, code: str | None) -> None:
    """Item 13: custom servers had no PSU fields, so 2N feeds were never checked for them."""
    path = tmp_path / "w.yaml"
    path.write_text(CUSTOM.replace("PSUS\n", psus), encoding="utf-8")
    _, plan = plan_file(str(path))
    found = [f.code for f in plan.findings if f.code.startswith("psu-")]
    assert found == ([code] if code else [])


def test_a_custom_server_without_psus_is_located_at_its_inventory_entry(tmp_path: Path) -> None:
    """review39 item 12: it blamed the catalog and pointed at the rack circuits; the PSUs are the user's to give."""
    path = tmp_path / "w.yaml"
    path.write_text(CUSTOM.replace("PSUS\n", ""), encoding="utf-8")
    _, plan = plan_file(str(path))
    (found,) = [f for f in plan.findings if f.code == "psu-feeds-unknown"]
    assert found.path == "hardware.inventory[0].custom"
    assert "hardware.inventory[0].custom gives no psu_count and psu_rating_w for smc-l40s" in found.message
    assert "(give them and its feeds are checked)" in found.message and "catalog" not in found.message


@pytest.mark.parametrize(
    ("psus", "field"),
    [
        ("        psu_count: 4\n", "psu_count"),
        ("        psu_rating_w: 2000\n", "psu_rating_w"),
        ("        psu_count: 2\n        psu_rating_w: 2000\n        psu_redundant: 2\n", "psu_redundant"),
    ],
)
def test_a_custom_servers_psus_are_given_whole(tmp_path: Path, psus: str, field: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(CUSTOM.replace("PSUS\n", psus), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        plan_file(str(path))
    assert caught.value.location is not None and caught.value.location.path == f"hardware.inventory[0].custom.{field}"


def test_a_custom_servers_psus_are_placed_on_the_circuits(tmp_path: Path) -> None:
    """review39 item 3: the packing and the circuit check read the catalog's PSU count only, so a custom server with one
    4,600 W PSU was spread evenly over every outlet (3.5 A a line) beside a finding putting it on one side."""
    from generator.errors import InfeasibleError

    one = "        psu_count: 1\n        psu_rating_w: 5000\n"
    small = CUSTOM.replace("PSUS\n", one).replace("breaker_a: 32", "breaker_a: 16")
    path = tmp_path / "w.yaml"
    path.write_text(small, encoding="utf-8")
    with pytest.raises(InfeasibleError, match=r"its one PSU on one side of the 2N feeds\) puts 20\.2 A on one line"):
        plan_file(str(path))
    path.write_text(small.replace(one, ""), encoding="utf-8")  # no PSUs given: spread evenly, as before
    _, plan = plan_file(str(path))
    assert [f.code for f in plan.findings if f.code.startswith("psu-")] == ["psu-feeds-unknown"]
