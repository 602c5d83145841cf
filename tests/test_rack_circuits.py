"""A rack's power given as the circuits a colocation contract sells (newuser36 item 10): ``hardware.rack_circuits``.

Figures checked by hand and against published tables: three-phase VA = sqrt(3) x V(line-to-line) x I, single-phase
V x I; a continuous load at 80% of the breaker (NEC 210.19(A)(1), 210.20(A)); with 2N (A+B) feeds one side alone
carries the rack. The worked example: 415 V three-phase 32 A is sqrt(3) x 415 x 32 = 23,001.6 VA (23.0 kVA), x 0.8 =
18,401.3 VA (18.4 kVA), x power factor 0.95 = 17,481.2 W.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.api import plan_file, render_file
from generator.calculator.report import plan_text
from generator.errors import InfeasibleError, InputError, MultipleInputError
from generator.planner.plan import NodeSpec, Pool, RackSpec, RackSupply
from generator.planner.rack_supply import circuit_load, feed_loss_findings, rack_feeds, rack_supply, voltage_findings
from generator.sizing.constants import Constants
from generator.sizing.electrical import (
    DEFAULT_CONTINUOUS_LOAD_FRACTION,
    DEFAULT_POWER_FACTOR,
    apparent_power_va,
    load_current_a,
    serving_circuits,
    usable_apparent_va,
    usable_power_w,
)
from generator.sizing.psu_feeds import no_load, with_server
from generator.workload import load_workload
from generator.workload.models import RackCircuits
from tests.conftest import REPO

EXAMPLES = REPO / "examples"
#: rack-density.yaml with its chat at 58 req/s, not 60 (fix74): at 60 the five TP8 replicas (12.15 req/s each) run
#: 5 x 122 = 610 places, a request holding one 10.04 s, at 98.8% busy: 67% of requests wait, p95 3.42 s, past the slack
#: the 1.5 s TTFT target leaves (59 req/s still keeps five, at p95 1.15 s), so the plan became 11 x TP4 on six DGX H100
#: with the helper on their idle GPUs: six 10.2 kW servers, no R760. At 58 the 610 places are 96% busy: 18% wait,
#: p95 0.47 s: the five DGX H100 and the 1,363 W R760 these racks' figures were worked on.
RACK_DENSITY = (EXAMPLES / "rack-density.yaml").read_text().replace("requests_per_second: 60", "requests_per_second: 58")
assert "requests_per_second: 58" in RACK_DENSITY
#: HP, "Power basics for IT professionals", tables 4 and 5: North American branch circuits at 80% of the breaker
#: (http://www.manualowl.com/m/Hewlett-Packard/DL360/Manual/23440?page=22).
HP_POWER_BASICS = "http://www.manualowl.com/m/Hewlett-Packard/DL360/Manual/23440?page=22"
#: Metal Toad, "Power Utilization within a Colocation Environment": an A/B pair of 208 V / 30 A circuits permits
#: 4,992 W continuous (24 A on either circuit alone): https://www.metaltoad.com/blog/power-utilization-within-colocation-environment
METALTOAD_AB = "https://www.metaltoad.com/blog/power-utilization-within-colocation-environment"


# (volts, phases, amps, VA): one circuit's volt-amperes at that current
VA_CASES = [
    pytest.param(415, 3, 32, 23_001.6, id="415v-3ph-32a-23.0kva"),  # sqrt(3) x 415 x 32
    pytest.param(415, 3, 25.6, 18_401.3, id="415v-3ph-32a-at-80pct-18.4kva"),  # x 0.8
    pytest.param(415, 3, 60, 43_128.1, id="415v-3ph-60a-43.1kva"),
    pytest.param(208, 3, 24, 8_646, id="hp-208v-3ph-30a-80pct-8646va"),  # HP_POWER_BASICS table 4
    pytest.param(208, 3, 48, 17_292, id="hp-208v-3ph-60a-80pct-17292va"),  # HP_POWER_BASICS (17,292.8, as printed)
    pytest.param(240, 1, 24, 5_760, id="hp-240v-1ph-30a-80pct-5760va"),  # HP_POWER_BASICS
    pytest.param(120, 1, 16, 1_920, id="hp-120v-1ph-20a-80pct-1920va"),  # HP_POWER_BASICS
    pytest.param(230, 1, 32, 7_360, id="hp-230v-1ph-32a-7360va"),  # HP_POWER_BASICS table 5 (EMEA, full rating)
]


@pytest.mark.parametrize(("volts", "phases", "amps", "va"), VA_CASES)
def test_circuit_volt_amperes(volts: float, phases: int, amps: float, va: float) -> None:
    assert apparent_power_va(volts, phases, amps) == pytest.approx(va, abs=1)


# (volts, phases, breaker A, circuits, redundancy, fraction, power factor, usable W)
USABLE_CASES = [
    # one side of 2 x 32 A 415 V: 18,401.3 VA x 0.95
    pytest.param(415, 3, 32, 2, "2N", 0.8, 0.95, 17_481, id="2x32a-415v-2n-17481w"),
    pytest.param(415, 3, 32, 2, "N+N", 0.8, 0.95, 17_481, id="n+n-is-2n"),
    # the same circuits summed: twice that
    pytest.param(415, 3, 32, 2, "none", 0.8, 0.95, 34_962, id="2x32a-415v-summed-34962w"),
    # 2 x 60 A 415 V 2N: sqrt(3) x 415 x 48 = 34,502.5 VA x 0.95 = 32,777.3 W
    pytest.param(415, 3, 60, 2, "2N", 0.8, 0.95, 32_777, id="2x60a-415v-2n-32777w"),
    # 4 circuits 2N: two a side
    pytest.param(415, 3, 32, 4, "2N", 0.8, 0.95, 34_962, id="4x32a-415v-2n-two-a-side"),
    # METALTOAD_AB: 208 V / 30 A A+B, 24 A x 208 V on either circuit alone
    pytest.param(208, 1, 30, 2, "2N", 0.8, 1.0, 4_992, id="metaltoad-208v-30a-ab-4992w"),
    # an EMEA contract to the full rating: sqrt(3) x 400 x 32 = 22,170.7 VA
    pytest.param(400, 3, 32, 2, "2N", 1.0, 1.0, 22_170, id="400v-3ph-32a-full-rating"),
]


@pytest.mark.parametrize(("volts", "phases", "breaker", "circuits", "redundancy", "fraction", "pf", "watts"), USABLE_CASES)
def test_usable_power(
    volts: float, phases: int, breaker: float, circuits: int, redundancy: str, fraction: float, pf: float, watts: int
) -> None:
    assert usable_power_w(volts, phases, breaker, circuits, redundancy, fraction, pf) == watts


def test_current_is_the_inverse_of_power() -> None:
    """17,481 W at 0.95 on one 415 V three-phase circuit is 25.6 A a phase: the 80% of its 32 A breaker it was sized to."""
    assert load_current_a(17_481, 0.95, 415, 3, 1) == pytest.approx(25.6, abs=0.01)
    assert load_current_a(17_481, 0.95, 415, 3, 2) == pytest.approx(12.8, abs=0.01)  # shared by the A and B circuits
    assert load_current_a(4_992, 1.0, 208, 1, 1) == pytest.approx(24.0)  # METALTOAD_AB: 24 A on the one circuit left


@pytest.mark.parametrize(
    ("circuits", "redundancy", "said"),
    [(1, "2N", "two equal sides"), (3, "N+N", "two equal sides"), (2, "N+1", "redundancy is one of 2N, N[+]N, none")],
)
def test_circuits_2n_cannot_halve_are_refused_by_the_physics(circuits: int, redundancy: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        usable_apparent_va(415, 3, 32, circuits, redundancy, 0.8)


def test_a_two_phase_circuit_is_refused_by_the_physics() -> None:
    with pytest.raises(ValueError, match="1 or 3 phases"):
        apparent_power_va(415, 2, 32)


def test_a_side_is_half_the_circuits() -> None:
    assert [serving_circuits(n, "2N") for n in (2, 4, 6)] == [1, 2, 3]
    assert [serving_circuits(n, "none") for n in (1, 2, 3)] == [1, 2, 3]


def test_defaults_agree_everywhere() -> None:
    """The model's, the physics' and the schema's defaults are one figure each."""
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text())
    props = schema["properties"]["hardware"]["properties"]["rack_circuits"]["properties"]
    defaults = RackCircuits._field_defaults
    assert (
        defaults["continuous_load_fraction"] == DEFAULT_CONTINUOUS_LOAD_FRACTION == props["continuous_load_fraction"]["default"]
    )
    assert defaults["power_factor"] == DEFAULT_POWER_FACTOR == props["power_factor"]["default"]


def _workload(tmp_path: Path, hardware: str, base: str = RACK_DENSITY, name: str = "w.yaml") -> Path:
    """RACK_DENSITY (chat at 58 req/s) with ``hardware`` in place of its rack limits (rack_power_kw 45, max_racks 4)."""
    text = base.replace("  rack_power_kw: 45\n  max_racks: 4\n", hardware)
    assert text != base
    path = tmp_path / name
    path.write_text(text)
    return path


CIRCUITS_2N = "  rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 32, circuits: 2, redundancy: 2N}\n"
CIRCUITS_NONE = CIRCUITS_2N.replace("2N", "none")


def test_the_loader_derives_rack_power_kw(tmp_path: Path) -> None:
    loaded = load_workload(_workload(tmp_path, CIRCUITS_2N))
    assert loaded.workload.hardware.rack_power_kw == 17.481
    assert loaded.workload.hardware.rack_power_field == "rack_circuits"
    assert load_workload(EXAMPLES / "rack-density.yaml").workload.hardware.rack_power_field == "rack_power_kw"


def test_2n_packs_fewer_servers_a_rack_than_the_same_circuits_summed(tmp_path: Path) -> None:
    """rack-density's five 10.2 kW DGX H100 and a 1,363 W R760: 17,481 W racks (2N) hold one DGX each (the R760 beside
    the first: 11,563 W), five racks; 34,962 W racks (none) hold three DGX and the R760 (31,963 W), then two: 2 racks."""
    redundant = plan_file(str(_workload(tmp_path, CIRCUITS_2N, name="a.yaml")))[1]
    summed = plan_file(str(_workload(tmp_path, CIRCUITS_NONE, name="b.yaml")))[1]
    assert [r.power_w for r in redundant.racks] == [11_563, 10_200, 10_200, 10_200, 10_200]
    assert [r.power_w for r in summed.racks] == [31_963, 20_400]
    assert max(r.nodes for r in redundant.racks) < max(r.nodes for r in summed.racks)
    for plan in (redundant, summed):
        assert plan.rack_supply is not None
        assert all(r.power_w <= plan.rack_supply.usable_kw * 1000 for r in plan.racks)
        assert sum(r.power_w for r in plan.racks) == plan.totals["power_w"]  # the same fleet, packed otherwise


def test_each_rack_carries_its_circuit_load(tmp_path: Path) -> None:
    """rack-01 of the 2N plan: 11,563 W / 0.95 = 12,171.6 VA; / (sqrt(3) x 415 V) = 16.93 A a phase on the circuit
    left at failover (53% of 32 A), 8.47 A on each while both share it."""
    plan = plan_file(str(_workload(tmp_path, CIRCUITS_2N)))[1]
    supply = plan.rack_supply
    assert supply is not None
    assert supply == RackSupply(
        voltage_v=415.0, phases=3, breaker_a=32.0, circuits=2, redundancy="2N", serving_circuits=1,
        continuous_load_fraction=0.8, continuous_load_basis=supply.continuous_load_basis, power_factor=0.95,
        power_factor_basis=supply.power_factor_basis, continuous_limit_a=25.6, outlet_connection="line-to-neutral",
        outlet_voltage_v=239.6, circuit_kva=23.002, circuit_usable_kva=18.401, usable_kva=18.401, usable_kw=17.481,
    )  # fmt: skip
    assert supply.continuous_load_basis.startswith("the default: NEC 210.19(A)(1)")
    assert "80_Plus" in supply.power_factor_basis
    load = plan.racks[0].circuit_load
    assert load is not None
    assert load.apparent_power_kva == 12.172
    assert load.failover_phase_current_a == pytest.approx(16.93, abs=0.01)
    assert load.phase_current_a == pytest.approx(8.47, abs=0.01)
    assert load.failover_breaker_percent == 52.9 and load.breaker_percent == 26.5
    # the failover current stays within the continuous limit: the racks were packed against it
    failover = [r.circuit_load.failover_phase_current_a if r.circuit_load else None for r in plan.racks]
    assert all(amps is not None and amps <= 25.6 for amps in failover)


def test_no_redundancy_has_no_failover() -> None:
    circuits = RackCircuits(230, 1, 32, 2, "none")
    supply, feeds = rack_supply(circuits, False, False), rack_feeds(circuits)
    load = circuit_load(supply, feeds, with_server(feeds, no_load(feeds), 10_000, None), 10_000)
    assert load.failover_phase_current_a is None and load.failover_breaker_percent is None
    # 10,000 W / 0.95 / 230 V = 45.77 A, spread over two circuits (PSUs unknown: evenly)
    assert load.phase_current_a == pytest.approx(22.88, abs=0.01)
    # on one PSU it is all on one circuit (fuzz30 item 1)
    one = circuit_load(supply, feeds, with_server(feeds, no_load(feeds), 10_000, 1), 10_000)
    assert one.phase_current_a == pytest.approx(45.77, abs=0.01)
    assert feed_loss_findings([_pool("dgx-b200", 14_300)], supply, Constants()) == []


def test_given_figures_are_said_as_given() -> None:
    supply = rack_supply(RackCircuits(400, 3, 32, 2, "2N", 1.0, 0.99), True, True)
    assert supply.continuous_load_basis == "as given (hardware.rack_circuits.continuous_load_fraction)"
    assert supply.power_factor_basis == "as given (hardware.rack_circuits.power_factor)"
    assert supply.usable_kw == 21.948  # sqrt(3) x 400 x 32 = 22,170.7 VA x 0.99 = 21,948.96 W, whole watts down


def test_spec_json_names_its_units_and_leaves_them_out_without_circuits(tmp_path: Path) -> None:
    plan = json.loads(render_file(str(_workload(tmp_path, CIRCUITS_2N)))["spec.json"])["plan"]
    assert set(plan["rack_supply"]) == set(RackSupply._fields)
    assert set(plan["racks"][0]["circuit_load"]) == {
        "apparent_power_kva", "phase_current_a", "breaker_percent", "failover_phase_current_a", "failover_breaker_percent"
    }  # fmt: skip
    before = json.loads(render_file(str(EXAMPLES / "rack-density.yaml"))["spec.json"])["plan"]
    assert "rack_supply" not in before and all("circuit_load" not in r for r in before["racks"])
    assert set(before["racks"][0]) == set(RackSpec._fields) - {"circuit_load"}


def test_spec_md_gives_each_rack_its_currents(tmp_path: Path) -> None:
    path = _workload(tmp_path, CIRCUITS_2N)
    text = render_file(str(path))["SPEC.md"]
    assert "5 rack(s) of 17.48 kW (`hardware.rack_circuits`: what their circuits carry, below)" in text
    assert (
        "Each rack is fed by 2 x 32 A three-phase 415 V circuit(s), 2N: 1 on the A side and 1 on the B side, either "
        "side alone carrying the rack (`hardware.rack_circuits`). One circuit is 23.0 kVA at its breaker (sqrt(3) x "
        "415 V line-to-line x 32 A) and 18.4 kVA at its continuous limit, 25.6 A (80% of the breaker;"
    ) in text
    assert "| rack-01 | 11.6 kW | 12.2 kVA | 8.5 A (26%) | 16.9 A (53%) | 32 A (25.6 A continuous) |" in text
    # fuzz30 item 1: the currents are where the PSUs plug in, the most loaded line, not an even share of every circuit
    assert "| rack | power | apparent power | most loaded line, shared | at failover (one side alone) | breaker |" in text
    assert (
        "Each server PSU is a single-phase load on an outlet of its own (a circuit has one a phase, fed line-to-neutral "
        "at 239.6 V); its PSUs are split over the A and B sides, the larger half on one, and with a side lost the other "
        "side's carry it whole"
    ) in text
    assert render_file(str(path)) == render_file(str(path))  # deterministic to the byte


def _pool(platform_id: str, power_w: int, kind: str = "hgx-8gpu") -> Pool:
    node = NodeSpec(
        platform_id=platform_id, platform_name=platform_id, kind=kind, provider="baremetal", instance_type=None,
        gpu_id="h100-sxm5-80gb", gpu_name="H100", gpus=8, gpu_memory_gib=80.0, cpu="cpu", cpu_cores=112, ram_gib=2048,
        nvme_tb=1.0, nvme_drives=1, nvme_read_gb_per_s=1.0, nvme_write_gb_per_s=1.0, nics=(), power_w=power_w,
        power_basis="published system maximum", heat_btu_per_h=round(power_w * 3.412), cooling="air", rack_units=10,
        psu=None, nvswitch=True,
    )  # fmt: skip
    return Pool(
        name=f"p_{platform_id}", node=node, nodes=2, deployments=("d",), racks=0, power_w=power_w * 2,
        usd_per_hour=None, price_basis=None, labels=(), taints=(),
    )  # fmt: skip


SUPPLY_2N = rack_supply(RackCircuits(415, 3, 63, 2, "2N"), False, False)

# (platform, wall W, kind, finding code or None): a catalog chassis's PSUs split over the A and B sides
FEED_CASES = [
    # 6 x 3,300 W, 3 a side = 9,900 W; 14,300 W x 0.94 = 13,442 W DC: a lost feed overloads them
    pytest.param("dgx-b200", 14_300, "hgx-8gpu", "psu-feed-loss", id="dgx-b200-3-of-6-short"),
    # 10,200 W x 0.94 = 9,588 W DC within 3 x 3,300 W, but rated 4+2: four must run (newuser57 item 8)
    pytest.param("dgx-h100", 10_200, "hgx-8gpu", "psu-feed-loss", id="dgx-h100-3-of-6-watts-but-4-must-run"),
    # Dell FTR: 3 x 3,200 W = 9,600 W a side under 11,000 x 0.94 = 10,340 W: it caps its GPUs instead
    pytest.param("dell-xe9680-mi300x", 11_000, "oam-8gpu", "psu-feed-loss-capped", id="xe9680-ftr-caps"),
    pytest.param("am5-desktop-tower", 1_600, "workstation", "psu-single-feed", id="one-psu-one-side"),
    pytest.param("dell-r760", 1_363, "pcie-server", "psu-feeds-unknown", id="psu-not-in-catalog"),
    pytest.param("custom-2x-l40s", 1_000, "pcie-server", "psu-feeds-unknown", id="custom-server"),
]


@pytest.mark.parametrize(("platform", "watts", "kind", "code"), FEED_CASES)
def test_a_server_whose_psus_on_one_side_cannot_carry_it(platform: str, watts: int, kind: str, code: str | None) -> None:
    found = feed_loss_findings([_pool(platform, watts, kind)], SUPPLY_2N, Constants())
    assert [f.code for f in found] == ([code] if code else [])
    assert all(f.path == "hardware.rack_circuits" for f in found)


def test_the_feed_loss_finding_gives_the_figures() -> None:
    (found,) = feed_loss_findings([_pool("dgx-b200", 14_300)], SUPPLY_2N, Constants())
    assert found.level == "warning"
    assert found.message == (
        "p_dgx-b200: dgx-b200's 6 x 3,300 W PSUs split 3 + 3 over the A and B sides; one side's 3 x 3,300 W = 9,900 W "
        "deliver less than its 13,442 W DC load (14,300 W at the wall): losing a feed overloads them, and the server "
        "shuts down or throttles although the rack's circuits carry it; cap the GPUs' power (nvidia-smi -pl) so it "
        f"draws at most {math.floor(9_900 / 0.94):,} W at the wall, or accept losing it with a feed"
    )


def test_a_side_with_fewer_psus_than_the_vendor_rates_it_to_run_on_is_a_feed_loss() -> None:
    """newuser57 item 8: a DGX H100 (4+2) on a 3 + 3 split passed, its 9,588 W DC load within 3 x 3,300 W."""
    (found,) = feed_loss_findings([_pool("dgx-h100", 10_200)], SUPPLY_2N, Constants())
    assert found.message.startswith(
        "p_dgx-h100: dgx-h100's 6 x 3,300 W PSUs split 3 + 3 over the A and B sides; it is rated 4+2 (the vendor's: 4 of "
        "its PSUs must run), so one side's 3 are fewer than it needs, though their 9,900 W cover its 9,588 W DC load"
    )


@pytest.mark.parametrize(("volts", "noted"), [(230, True), (120, True), (208, False), (400, False), (415, False)])
def test_a_line_to_neutral_three_phase_voltage_is_noted(volts: float, noted: bool) -> None:
    supply = rack_supply(RackCircuits(volts, 3, 32, 2, "2N"), False, False)
    assert [f.code for f in voltage_findings(supply)] == (["rack-voltage-line-to-line"] if noted else [])
    assert voltage_findings(rack_supply(RackCircuits(230, 1, 32, 2, "2N"), False, False)) == []


HW = "  rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 32, circuits: 2, redundancy: 2N}\n"

# (hardware lines, error: file:line:col: field: message)
REFUSED = [
    pytest.param(
        "  rack_power_kw: 45\n" + HW,
        "w.yaml:28:18: hardware.rack_circuits: rack_circuits and rack_power_kw both give what a rack may draw: keep "
        "rack_circuits (the kW are derived from its circuits) or rack_power_kw, not both",
        id="both-given",
    ),
    pytest.param(
        HW.replace("circuits: 2,", "circuits: 3,"),
        "w.yaml:27:71: hardware.rack_circuits.circuits: redundancy 2N feeds a rack from an A and a B side of equal "
        "circuits, either of which carries it alone: 3 circuit(s) do not split so; give an even count (2: one circuit a "
        "side), or redundancy: none",
        id="2n-odd-circuits",
    ),
    pytest.param(
        HW.replace("phases: 3", "phases: 2"), "w.yaml:27:43: hardware.rack_circuits.phases: 2 is not one of 1, 3", id="two-phases"
    ),
    pytest.param(
        HW.replace("breaker_a: 32", "breaker_a: 0"),
        "w.yaml:27:57: hardware.rack_circuits.breaker_a: 0 is out of range: must be > 0",
        id="no-amperes",
    ),
    pytest.param(
        HW.replace("voltage_v: 415", "voltage_v: -415"),
        "w.yaml:27:30: hardware.rack_circuits.voltage_v: -415 is out of range: must be >= 100",
        id="negative-volts",
    ),
    pytest.param(
        HW.replace("2N}", "2N, power_factor: 1.2}"),
        "w.yaml:27:104: hardware.rack_circuits.power_factor: 1.2 is out of range: must be <= 1",
        id="power-factor-above-1",
    ),
    pytest.param(
        HW.replace("2N}", "2N, continuous_load_fraction: 1.25}"),
        "w.yaml:27:116: hardware.rack_circuits.continuous_load_fraction: 1.25 is out of range: must be <= 1",
        id="continuous-above-the-breaker",
    ),
    pytest.param(
        HW.replace("voltage_v: 415, ", ""),
        "w.yaml:27:18: hardware.rack_circuits: missing required field 'voltage_v'",
        id="no-voltage",
    ),
]


@pytest.mark.parametrize(("hardware", "expected"), REFUSED)
def test_refused_at_the_field(tmp_path: Path, hardware: str, expected: str) -> None:
    path = _workload(tmp_path, hardware)
    with pytest.raises((InputError, MultipleInputError)) as caught:
        load_workload(path)
    assert str(caught.value).replace(str(tmp_path) + "/", "") == expected


def test_circuits_on_a_cloud_are_refused(tmp_path: Path) -> None:
    path = _workload(tmp_path, HW.replace("  rack_circuits", "  provider: aws\n  rack_circuits"))
    path.write_text(path.read_text().replace("  provider: baremetal\n", "").replace("  platforms: [dgx-h100, dell-r760]\n", ""))
    with pytest.raises(InputError) as caught:
        load_workload(path)
    assert "rack_circuits describes racks of your own; aws instances stand in the provider's" in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(
    volts=st.floats(100, 1000),
    phases=st.sampled_from([1, 3]),
    breaker=st.floats(1, 1000),
    sides=st.integers(1, 8),
    redundancy=st.sampled_from(["2N", "none"]),
    fraction=st.floats(0.5, 1.0),
    pf=st.floats(0.5, 1.0),
)
def test_a_rack_at_its_usable_power_meets_its_continuous_limit(
    volts: float, phases: int, breaker: float, sides: int, redundancy: str, fraction: float, pf: float
) -> None:
    """At the usable power, the circuits that must carry the rack are at their continuous limit, never above it (under
    a watt below: whole watts, rounded down); 2N halves what the same circuits summed give."""
    circuits = 2 * sides
    watts = usable_power_w(volts, phases, breaker, circuits, redundancy, fraction, pf)
    serving = serving_circuits(circuits, redundancy)
    limit = breaker * fraction
    assert load_current_a(watts, pf, volts, phases, serving) <= limit * (1 + 1e-9)
    assert load_current_a(watts + 1, pf, volts, phases, serving) > limit * (1 - 1e-9)
    if redundancy == "2N":
        summed = usable_power_w(volts, phases, breaker, circuits, "none", fraction, pf)
        assert summed - 1 <= 2 * watts <= summed + 1


def test_plan_text_gives_each_rack_its_currents(tmp_path: Path) -> None:
    text = plan_text(plan_file(str(_workload(tmp_path, CIRCUITS_2N)))[1])
    assert "racks of 17.481 kW (hardware.rack_circuits):\n" in text
    assert (
        "11.6 kW, 39,455 BTU/h, air cooled; 12.2 kVA, 8.5 A on its most loaded line, 16.9 A with one side lost, of 32 A "
        "breakers (25.6 A continuous)\n"
    ) in text


def test_a_server_beyond_the_circuits_is_refused_at_them(tmp_path: Path) -> None:
    """2 x 16 A 230 V single-phase 2N: 230 x 12.8 A x 0.95 = 2,796.8 W a rack, under a 10,200 W DGX H100."""
    text = RACK_DENSITY.replace("gpus: [h100-sxm5-80gb, l40s-48gb]", "gpus: [h100-sxm5-80gb]").replace(
        "platforms: [dgx-h100, dell-r760]", "platforms: [dgx-h100]"
    )
    path = _workload(tmp_path, CIRCUITS_2N.replace("415", "230").replace("3,", "1,").replace("32", "16"), base=text)
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(path))
    message = str(caught.value).replace(str(tmp_path) + "/", "")
    # decided before the search (fuzz30 item 11): no allowed server's smallest node fits, so validate says it too
    assert message.startswith("w.yaml:27:18: hardware.rack_circuits: no allowed server fits a rack")
    assert "a 10,200 W node exceeds the 2.796 kW rack power (hardware.rack_circuits); to unblock: give " in message
