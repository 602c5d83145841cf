"""``specgen diff`` shows a change of the racks' circuits and of each rack's currents (fuzz30 item 10).

Between workloads that differed only in their circuits the diff said "No change to the fleet.": 2N -> none (the racks
lose their A+B feeds, the usable power doubles from 17.481 to 34.962 kW, the failover current disappears), and a
spec.json against a workload the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.api import render_file
from generator.errors import InputError
from generator.fleet_diff import diff_plans, load_plan_dict, markdown_diff, plan_from_spec

BASE = """\
version: 1
name: rc
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 8192
      requests_per_second: 40
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 32, circuits: 2, redundancy: 2N}
"""
#: The 3 x 4,230 W XE8640 rack: 12,690 W / 0.95 / (sqrt(3) x 415 V) = 9.29 A a line shared, 18.58 A on one side.
SHARED_A, FAILOVER_A = 9.29, 18.58


def _plans(tmp_path: Path, new_text: str) -> tuple[dict[str, object], dict[str, object]]:
    (tmp_path / "old.yaml").write_text(BASE)
    (tmp_path / "new.yaml").write_text(new_text)
    return load_plan_dict(str(tmp_path / "old.yaml")), load_plan_dict(str(tmp_path / "new.yaml"))


def test_redundancy_lost_is_a_change(tmp_path: Path) -> None:
    old, new = _plans(tmp_path, BASE.replace("redundancy: 2N", "redundancy: none"))
    diff = diff_plans(old, new)
    # the same servers; the rack's contract is billed at its usable kW (newuser39 item 5): 17.481 kW more at $184
    (pool,) = diff["pools"]
    moved = {k for k in pool["old"] if pool["old"][k] != pool["new"][k]}
    assert moved == {"usd_per_hour", "usd_per_month"}
    assert pool["new"]["usd_per_month"] - pool["old"]["usd_per_month"] == pytest.approx((34.962 - 17.481) * 184, abs=0.02)
    assert not diff["deployments"]
    supply = diff["rack_supply"]
    assert (supply["old"]["redundancy"], supply["new"]["redundancy"]) == ("2N", "none")
    assert (supply["old"]["usable_kw"], supply["new"]["usable_kw"]) == (17.481, 34.962)
    (rack,) = diff["racks"]
    assert rack["old"]["failover_phase_current_a"] == FAILOVER_A and rack["new"]["failover_phase_current_a"] is None
    assert rack["old"]["phase_current_a"] == rack["new"]["phase_current_a"] == SHARED_A
    text = markdown_diff(diff)
    assert "No change to the fleet." not in text
    assert (
        "**Rack circuits: 2 x 32 A three-phase 415 V, 2N, at 80% continuous and power factor 0.95: 17.481 kW a rack → "
        "2 x 32 A three-phase 415 V, no redundancy, at 80% continuous and power factor 0.95: 34.962 kW a rack.** The "
        "racks lose their A+B feeds: no side carries a rack alone any more, and losing a circuit drops the servers it "
        "feeds."
    ) in text
    assert (
        "| `rack-01` | 3 x `chat_h100_sxm5_80gb` (12.7 kW; 9.3 A on its most loaded line, 18.6 A with one side lost) "
        "| 3 x `chat_h100_sxm5_80gb` (12.7 kW; 9.3 A on its most loaded line) |"
    ) in text
    assert "`chat_h100_sxm5_80gb`" in text.split("Rack circuits", 1)[0]  # its cost moved with the contract
    assert json.loads(json.dumps(diff)) == diff  # the --format json output carries the same


def test_half_the_breaker_shows_each_racks_currents(tmp_path: Path) -> None:
    """16 A breakers: 8.74 kW racks; the three servers repack 2 + 1, each rack's currents before and after."""
    old, new = _plans(tmp_path, BASE.replace("breaker_a: 32", "breaker_a: 16"))
    diff = diff_plans(old, new)
    assert (diff["rack_supply"]["old"]["breaker_a"], diff["rack_supply"]["new"]["breaker_a"]) == (32, 16)
    racks = {r["rack"]: r for r in diff["racks"]}
    assert racks["rack-01"]["new"]["failover_phase_current_a"] == pytest.approx(2 * FAILOVER_A / 3, abs=0.01)
    assert racks["rack-02"]["old"] is None


def test_the_same_circuits_are_no_change(tmp_path: Path) -> None:
    old, new = _plans(tmp_path, BASE)
    diff = diff_plans(old, new)
    assert "rack_supply" not in diff and not diff.get("racks")
    assert markdown_diff(diff).endswith("No change to the fleet.\n")


def test_a_spec_json_against_its_workload_with_other_circuits(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(BASE)
    spec = render_file(str(tmp_path / "old.yaml"))["spec.json"]
    (tmp_path / "spec.json").write_text(spec)
    (tmp_path / "new.yaml").write_text(BASE.replace("circuits: 2, redundancy: 2N", "circuits: 4, redundancy: 2N"))
    diff = diff_plans(load_plan_dict(str(tmp_path / "spec.json")), load_plan_dict(str(tmp_path / "new.yaml")))
    assert (diff["rack_supply"]["old"]["circuits"], diff["rack_supply"]["new"]["circuits"]) == (2, 4)
    (rack,) = diff["racks"]
    assert rack["new"]["failover_phase_current_a"] == pytest.approx(FAILOVER_A / 2, abs=0.01)


def test_circuits_given_where_rack_power_kw_was(tmp_path: Path) -> None:
    old, new = _plans(tmp_path, BASE)
    old_kw = load_plan_dict(str(_write(tmp_path, "kw.yaml", BASE.replace(BASE.splitlines()[-1], "  rack_power_kw: 17.481"))))
    diff = diff_plans(old_kw, new)
    assert diff["rack_supply"]["old"] is None and diff["rack_supply"]["old_rack_power_kw"] == 17.481
    assert "**Rack circuits: rack_power_kw 17.481 kW (no circuits given) → 2 x 32 A" in markdown_diff(diff)
    assert old  # the workload with circuits planned as well


def _write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path / name


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda p: p.update(rack_supply=[1]), "'plan.rack_supply' must be an object"),
        (lambda p: p["rack_supply"].pop("usable_kw"), "'plan.rack_supply' has no 'usable_kw'"),
        (lambda p: p["rack_supply"].update(redundancy="<b>"), "'plan.rack_supply.redundancy' must be one of 2N, N+N, none"),
        (lambda p: p["rack_supply"].update(breaker_a=-1), "'plan.rack_supply.breaker_a' must be a number from 0 to 10^12"),
        (lambda p: p["racks"][0].update(circuit_load="x"), "'plan.racks[0].circuit_load' must be an object"),
        (
            lambda p: p["racks"][0]["circuit_load"].update(phase_current_a="9"),
            "'plan.racks[0].circuit_load.phase_current_a' must be a number",
        ),
    ],
    ids=["supply-not-object", "no-usable-kw", "bad-redundancy", "negative-breaker", "load-not-object", "amps-text"],
)
def test_a_spec_json_with_bad_circuits_is_refused(tmp_path: Path, edit: object, said: str) -> None:
    spec = json.loads(render_file(str(_write(tmp_path, "w.yaml", BASE)))["spec.json"])
    edit(spec["plan"])  # type: ignore[operator]
    with pytest.raises(InputError) as caught:
        plan_from_spec(json.dumps(spec), "spec.json")
    assert said in str(caught.value) and re.match(r"spec\.json:1:\d+: not a specgen spec\.json", str(caught.value))
