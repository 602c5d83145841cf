"""fix173: ``hardware.wall_circuit`` on bare metal where every server the plan may use is racked is said unused.

A wall circuit is read for a workstation alone (owned or bought) and for ``hardware.fixed``'s machine; a rack server
stands in colocation on its rack's own feeds, a platform rented at a ``prices:`` rate in a provider's data centre.
The circuit was taken without a word where ``hardware.platforms`` allowed rack servers alone (note63: left over from
fix168, which said it for a fleet rented whole).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_as_deployed
from generator.planner.setting_findings import unused_setting_findings
from generator.words import listed
from generator.workload import load_workload

WORKLOAD = """version: 1
name: racked
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  provider: baremetal
{platforms}{buy}{owned}  wall_circuit: {{voltage_v: 230, breaker_a: 16}}
{prices}"""

RACK = "  platforms: [dell-r760xa]\n"
OWNED_TOWER = "  inventory:\n    - {platform: am5-desktop-tower, gpu: rtx-4090-24gb, count: 1}\n"
OWNED_RACK = "  inventory:\n    - {platform: dell-r760, gpu: l40s-48gb, count: 1}\n"
WORKSTATIONS = listed(
    sorted(p.id for p in catalog.platforms().values() if p.provider == "baremetal" and p.kind == "workstation"), "or"
)


def _unused(tmp_path: Path, platforms: str = "", buy: str = "", owned: str = "", prices: str = "") -> list[str]:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(platforms=platforms, buy=buy, owned=owned, prices=prices), encoding="utf-8")
    said = [f.message for f in unused_setting_findings(load_workload(str(path)).workload) if f.path == "hardware.wall_circuit"]
    _, plan = plan_as_deployed(str(path))  # the plan says it as validate does
    assert said == [f.message for f in plan.findings if f.code == "setting-unused" and f.path == "hardware.wall_circuit"]
    return said


def test_rack_servers_alone_say_the_circuit_unused(tmp_path: Path) -> None:
    (said,) = _unused(tmp_path, RACK)
    assert said == (
        "hardware.wall_circuit describes the wall outlet a machine of your own stands on at home or in an office (a "
        "workstation); no server this plan may use stands on one: dell-r760xa is a rack server, racked in colocation on "
        "the rack's own feeds (hardware.rack_power_kw or rack_circuits): it has no effect; remove it, or allow a "
        f"workstation (hardware.platforms: {WORKSTATIONS}) or list an owned one (hardware.inventory)"
    )


def test_owned_rack_servers_alone_say_it_too(tmp_path: Path) -> None:
    (said,) = _unused(tmp_path, buy="  buy: false\n", owned=OWNED_RACK)
    assert "no server this plan may use stands on one: dell-r760 is a rack server" in said


def test_a_rack_server_and_one_rented_are_each_said_why(tmp_path: Path) -> None:
    (said,) = _unused(tmp_path, "  platforms: [dell-r760xa, dell-r760]\n", prices="prices:\n  dell-r760: 3\n")
    assert (
        "dell-r760xa is a rack server, racked in colocation on the rack's own feeds (hardware.rack_power_kw or "
        "rack_circuits); dell-r760 is rented from a provider (priced per hour under prices:), in its data centre: it has "
        "no effect"
    ) in said


@pytest.mark.parametrize(
    ("platforms", "buy", "owned"),
    [
        pytest.param("  platforms: [dell-r760xa, wrx90-workstation]\n", "", "", id="a-workstation-allowed"),
        pytest.param(RACK, "", OWNED_TOWER, id="an-owned-tower"),
        pytest.param("", "", "", id="every-platform-allowed"),
    ],
)
def test_a_workstation_the_plan_may_use_keeps_the_circuit(tmp_path: Path, platforms: str, buy: str, owned: str) -> None:
    assert _unused(tmp_path, platforms, buy, owned) == []


def test_a_fleet_rented_whole_is_said_once_by_the_rented_finding(tmp_path: Path) -> None:
    (said,) = _unused(tmp_path, RACK, prices="prices:\n  dell-r760xa: 3\n")
    assert "is priced per hour under prices: and none is owned" in said
