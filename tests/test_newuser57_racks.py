"""newuser57 (a bare-metal / colocation ops engineer): what the rack findings say of many racks alike.

Item 12: a thousand owned DGX H100 at 40 kW racks gave 51 ``rack-exceeds-air-cooling`` lines, one a rack, for one
packing decision; racks alike are said once, named (the first four, then a count), and renamed with the workload.
"""

from __future__ import annotations

from generator.api import plan_file
from generator.planner.plan import Finding
from generator.planner.racks import AIR_COOLED_RACK_LIMIT_KW, Rack, rack_findings, racks_named_for_workload
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
    assert said[2].message == "rack-54 holds liquid-cooled servers"
    two = rack_findings([_rack(0.0, liquid=True), _rack(0.0, liquid=True)])
    assert [f.message for f in two] == ["rack-01 and rack-02 hold liquid-cooled servers"]


def test_every_rack_named_is_renamed_for_the_workload() -> None:
    plan = plan_file(str(REPO / "examples" / "rack-density.yaml"))[1]
    assert [r.id for r in plan.racks] == ["rack-01", "rack-02"]
    said = Finding("warning", "rack-exceeds-air-cooling", "rack-01 and rack-02 each draw 31.0 kW of air-cooled ...", "hardware")
    (finding,) = racks_named_for_workload(plan._replace(findings=(said,))).findings
    assert finding.message == f"{plan.workload}-rack-01 and {plan.workload}-rack-02 each draw 31.0 kW of air-cooled ..."
