"""Where a rack's PSUs plug in, and the current on each line of its circuits (fuzz30 item 1).

The plan spread every rack's load evenly over every circuit; a server with one or two PSUs hangs on one circuit a side.
fuzz30's repro A: a 1,258 W server with 2 PSUs on 4 x 10 A 120 V circuits, 2N, was said to draw 5.5 A at failover
while its surviving PSU put 1,258 / 0.95 / 120 = 11.0 A through one 10 A breaker (8 A continuous). Repro B: a
1,978 W single-PSU workstation on 2 x 15 A 120 V circuits without redundancy was said to draw 8.7 A a circuit, and drew
17.4 A on one. Every figure below is worked by hand in its row: A = W / power factor / V (single-phase, or a PSU on a
three-phase circuit's line-to-neutral outlet, V = V(line-to-line) / sqrt(3)); on a line-to-line (208 V) outlet the
line carries the phasor difference of its two outlets, sqrt(x^2 + y^2 + xy).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner.early import early_checks
from generator.planner.plan import NodeSpec, Pool
from generator.planner.rack_supply import rack_feeds
from generator.planner.racks import pack_racks
from generator.sizing.electrical import line_currents_a, load_current_a, outlet_voltage_v
from generator.sizing.psu_feeds import (
    Feeds,
    carried,
    no_load,
    with_server,
    worst_carrying_a,
    worst_failover_a,
    worst_shared_a,
)
from generator.workload import load_workload
from generator.workload.models import RackCircuits

SQRT3 = math.sqrt(3)


# (outlet watts, volts, phases, power factor, line amperes)
LINE_CASES = [
    pytest.param((1200.0,), 120, 1, 1.0, (10.0,), id="single-phase-1200w-120v-10a"),
    # 415 V three-phase: each outlet line-to-neutral at 415 / sqrt(3) = 239.6 V, alone on its line
    pytest.param((2396.0, 0.0, 0.0), 415, 3, 1.0, (2396 / (415 / SQRT3), 0.0, 0.0), id="415v-one-outlet-one-line"),
    # 208 V three-phase: outlets across a-b, b-c, c-a at 208 V; one of 2,080 W is 10 A on lines a and b
    pytest.param((2080.0, 0.0, 0.0), 208, 3, 1.0, (10.0, 10.0, 0.0), id="208v-one-outlet-two-lines"),
    # balanced: sqrt(100 + 100 + 100) = 17.32 A a line = 3 x 2,080 W / (sqrt(3) x 208 V)
    pytest.param((2080.0, 2080.0, 2080.0), 208, 3, 1.0, (SQRT3 * 10,) * 3, id="208v-balanced-sqrt3"),
    # a-b and c-a loaded: line a carries both, sqrt(100 + 100 + 100); b and c one each
    pytest.param((2080.0, 0.0, 2080.0), 208, 3, 1.0, (SQRT3 * 10, 10.0, 10.0), id="208v-two-outlets"),
    # power factor 0.95: 1,140 W is 1,200 VA, 10 A at 120 V
    pytest.param((1140.0,), 120, 1, 0.95, (10.0,), id="power-factor-0.95"),
]


@pytest.mark.parametrize(("outlets", "volts", "phases", "pf", "amps"), LINE_CASES)
def test_line_currents(outlets: tuple[float, ...], volts: float, phases: int, pf: float, amps: tuple[float, ...]) -> None:
    assert line_currents_a(outlets, volts, phases, pf) == pytest.approx(amps, abs=1e-9)


@pytest.mark.parametrize(
    ("volts", "phases", "outlet_v"),
    [(120, 1, 120), (415, 1, 415), (208, 3, 208), (230, 3, 230), (400, 3, 230.94), (415, 3, 239.6), (480, 3, 277.13)],
)
def test_a_three_phase_pdu_feeds_psus_line_to_neutral_where_that_is_high_line(volts: float, phases: int, outlet_v: float) -> None:
    assert outlet_voltage_v(volts, phases) == pytest.approx(outlet_v, abs=0.01)


def _feeds(volts: float, phases: int, breaker: float, circuits: int, redundancy: str) -> Feeds:
    return rack_feeds(RackCircuits(volts, phases, breaker, circuits, redundancy))  # type: ignore[arg-type]


# (circuits, server watts, PSUs, most loaded line shared A, at failover A or None)
ONE_SERVER = [
    # repro A: 2 PSUs, one a side; a side lost, the other PSU carries 1,258 W alone: 1,258 / 0.95 / 120 = 11.04 A
    # (the old even spread: 2.8 A shared, 5.5 A at failover)
    pytest.param((120, 1, 10, 4, "2N"), 1258, 2, 1258 / 2 / 0.95 / 120, 1258 / 0.95 / 120, id="repro-a-2-psus-2n"),
    # repro B: one PSU, no redundancy: 1,978 / 0.95 / 120 = 17.35 A on one circuit (the old spread: 8.7 A)
    pytest.param((120, 1, 15, 2, "none"), 1978, 1, 1978 / 0.95 / 120, None, id="repro-b-1-psu-none"),
    # one PSU with 2N: on one side, its whole draw there shared or not (fuzz30's ws2n: 11.2 A, not 5.6)
    pytest.param((120, 1, 15, 2, "2N"), 1282, 1, 1282 / 0.95 / 120, 1282 / 0.95 / 120, id="1-psu-2n"),
    # 3 PSUs over 2N: 2 + 1; the side of 2 lost leaves 1 carrying 3,000 W: 26.3 A; shared, 2 x 1,000 W on one circuit
    pytest.param((120, 1, 30, 2, "2N"), 3000, 3, 2000 / 0.95 / 120, 3000 / 0.95 / 120, id="3-psus-2-plus-1"),
    # a DGX H100's 6 PSUs, 3 a side over one 415 V circuit's 3 phases: balanced, the even spread's 14.94 A
    pytest.param(
        (415, 3, 32, 2, "2N"), 10200, 6, 10200 / 0.95 / (SQRT3 * 415) / 2, 10200 / 0.95 / (SQRT3 * 415), id="dgx-6-psus"
    ),
    # one PSU on a 415 V three-phase circuit: all on one line at 239.6 V, 3 x the balanced figure
    pytest.param((415, 3, 16, 1, "none"), 2000, 1, 2000 / 0.95 / (415 / SQRT3), None, id="1-psu-3-phase-wye"),
    # one PSU on a 208 V three-phase circuit: line-to-line at 208 V, sqrt(3) x the balanced figure
    pytest.param((208, 3, 30, 1, "none"), 2000, 1, 2000 / 0.95 / 208, None, id="1-psu-3-phase-delta"),
    # GB300 NVL72's 48 x 5,500 W PSUs, 24 a side over 5 x 63 A circuits' 15 outlets: 9 outlets hold 2, each PSU
    # 142,000 / 24 / 0.95 / 239.6 V = 26.0 A at failover, 52.0 A on those lines (the even spread: 41.6 A)
    pytest.param(
        (415, 3, 63, 10, "2N"),
        142_000,
        48,
        2 * 142_000 / 48 / 0.95 / (415 / SQRT3),
        2 * 142_000 / 24 / 0.95 / (415 / SQRT3),
        id="gb300-24-psus-on-15-outlets",
    ),
    # PSUs unknown (a custom server): spread evenly, the balanced ideal
    pytest.param(
        (415, 3, 32, 2, "2N"), 10200, None, 10200 / 0.95 / (SQRT3 * 415) / 2, 10200 / 0.95 / (SQRT3 * 415), id="unknown"
    ),
]


@pytest.mark.parametrize(("circuits", "watts", "psus", "shared", "failover"), ONE_SERVER)
def test_one_server_on_its_outlets(
    circuits: tuple[float, int, float, int, str], watts: int, psus: int | None, shared: float, failover: float | None
) -> None:
    feeds = _feeds(*circuits)
    loads = with_server(feeds, no_load(feeds), watts, psus)
    assert worst_shared_a(feeds, loads) == pytest.approx(shared, rel=1e-9)
    found = worst_failover_a(feeds, loads)
    assert (found is None) == (failover is None)
    if failover is not None:
        assert found == pytest.approx(failover, rel=1e-9)


def test_the_repros_are_over_their_breakers() -> None:
    """Repro A puts 11.0 A on a line held to 8 A; repro B 17.4 A on one held to 12 A: no rack carries either."""
    for circuits, watts, psus in (((120, 1, 10, 4, "2N"), 1258, 2), ((120, 1, 15, 2, "none"), 1978, 1)):
        feeds = _feeds(*circuits)
        assert not carried(feeds, with_server(feeds, no_load(feeds), watts, psus))
    # spread over every circuit, as the plan took them, both were carried: what let them through
    for circuits, watts in (((120, 1, 10, 4, "2N"), 1258), ((120, 1, 15, 2, "none"), 1978)):
        feeds = _feeds(*circuits)
        assert carried(feeds, with_server(feeds, no_load(feeds), watts, None))


def _server(name: str, watts: int, platform: str, count: int = 1) -> Pool:
    node = NodeSpec(
        platform_id=platform, platform_name=platform, kind="pcie-server", provider="baremetal", instance_type=None,
        gpu_id="l40s-48gb", gpu_name="L40S", gpus=1, gpu_memory_gib=48.0, cpu="cpu", cpu_cores=32, ram_gib=256,
        nvme_tb=1.0, nvme_drives=1, nvme_read_gb_per_s=1.0, nvme_write_gb_per_s=1.0, nics=(), power_w=watts,
        power_basis="summed", heat_btu_per_h=round(watts * 3.412), cooling="air", rack_units=1, psu=None, nvswitch=False,
    )  # fmt: skip
    return Pool(
        name=name, node=node, nodes=count, deployments=("d",), racks=0, power_w=watts * count, usd_per_hour=None,
        price_basis=None, labels=(), taints=(),
    )  # fmt: skip


def test_racks_are_packed_so_no_line_is_over_its_limit() -> None:
    """Three 1,500 W single-PSU towers on 2 x 16 A 230 V circuits without redundancy (12.8 A continuous, 2 x 2,797 W
    = 5,594 W a rack): the rack's power takes all three (4,500 W), its outlets two, one a circuit (6.9 A each); a third
    on either circuit is 3,000 / 0.95 / 230 = 13.7 A: it goes to a second rack."""
    circuits = RackCircuits(230, 1, 16, 2, "none")
    feeds = rack_feeds(circuits)
    towers = [_server("towers", 1500, "lga1700-desktop-tower", count=3)]  # the catalog's one-PSU tower
    assert [r.power_w for r in pack_racks(towers, 5.594)] == [4500]  # by power alone: one rack
    racks = pack_racks(towers, 5.594, None, feeds)
    assert [r.power_w for r in racks] == [3000, 1500]
    assert all(r.feed_loads is not None and carried(feeds, r.feed_loads) for r in racks)
    first = racks[0].feed_loads
    assert first is not None and worst_shared_a(feeds, first) == pytest.approx(1500 / 0.95 / 230)


@settings(max_examples=60, deadline=None)
@given(
    volts=st.sampled_from([120, 208, 230, 415]),
    phases=st.sampled_from([1, 3]),
    breaker=st.sampled_from([16, 20, 32, 63]),
    sides=st.integers(1, 3),
    redundancy=st.sampled_from(["2N", "none"]),
    servers=st.lists(st.tuples(st.integers(300, 6000), st.sampled_from([None, 1, 2, 3, 4, 6])), min_size=1, max_size=12),
)
def test_every_packed_rack_keeps_its_lines_within_the_limit(
    volts: float, phases: int, breaker: float, sides: int, redundancy: str, servers: list[tuple[int, int | None]]
) -> None:
    """Whatever the servers and circuits, a rack holding more than one server keeps every line that must carry it
    within its continuous limit, and its outlets hold its watts: all of them shared, each side's running ones alone."""
    feeds = _feeds(volts, phases, breaker, 2 * sides, redundancy)
    platforms = {None: "custom-x", 1: "lga1700-desktop-tower", 2: "supermicro-ars-111gl-nhr", 4: "supermicro-as-4124go-nart"}
    pools = [_server(f"p{i}", w, platforms.get(n, "dgx-h100")) for i, (w, n) in enumerate(servers) if n in (*platforms, 6)]
    racks = pack_racks(pools, 1000.0, None, feeds)
    assert sum(r.power_w for r in racks) == sum(p.power_w for p in pools)
    for rack in racks:
        loads = rack.feed_loads
        assert loads is not None
        assert sum(map(sum, loads.shared)) == pytest.approx(rack.power_w)
        if sum(rack.pools.values()) > 1:
            assert worst_carrying_a(feeds, loads) <= feeds.limit_a * (1 + 1e-9)


def test_a_rack_of_unknown_psus_reads_the_even_spread() -> None:
    """Servers whose PSUs the catalog lacks are spread evenly: the figures the plan gave before (load_current_a)."""
    feeds = _feeds(415, 3, 32, 4, "2N")
    loads = no_load(feeds)
    for watts in (4230, 1363, 9000):
        loads = with_server(feeds, loads, watts, None)
    total = 4230 + 1363 + 9000
    assert worst_shared_a(feeds, loads) == pytest.approx(load_current_a(total, 0.95, 415, 3, 4))
    assert worst_failover_a(feeds, loads) == pytest.approx(load_current_a(total, 0.95, 415, 3, 2))


REPRO_A = """\
version: 1
name: gh
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 5}
hardware:
  platforms: [supermicro-ars-111gl-nhr]
  provider: baremetal
  rack_circuits: {voltage_v: 120, phases: 1, breaker_a: 10, circuits: 4, redundancy: 2N}
  inventory:
    - {platform: supermicro-ars-111gl-nhr, gpu: gh200-96gb, count: 1}
prices: {supermicro-ars-111gl-nhr: 3}
"""
REPRO_B = """\
version: 1
name: ws
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 20}
hardware:
  gpus: [rtx-pro-6000-ws-96gb]
  platforms: [wrx90-workstation]
  provider: baremetal
  rack_circuits: {voltage_v: 120, phases: 1, breaker_a: 15, circuits: 2, redundancy: none}
"""


def test_repro_a_is_refused_before_the_search(tmp_path: Path) -> None:
    """Its one server kind's smallest node (1,229 W, no more than any layout's) puts 10.8 A on a line held to 8 A.

    Priced by the workload (``prices:``), the server is its own and stands in its racks: the catalog only rents it
    (Lambda), and rented it stands in the provider's racks, which the circuits do not limit (review 27 item 1).
    """
    path = tmp_path / "gh.yaml"
    path.write_text(REPRO_A)
    with pytest.raises(InfeasibleError) as caught:
        early_checks(load_workload(str(path)))
    message = str(caught.value).replace(str(tmp_path) + "/", "")
    assert message.startswith("gh.yaml:10:18: hardware.rack_circuits: no allowed server fits a rack")
    assert (
        f"a 1,229 W node (supermicro-ars-111gl-nhr, its 2 PSUs split 1 + 1 over the A and B sides, with a side lost 1 "
        f"carrying it alone; psu.count believed, not sourced) puts {1229 / 0.95 / 120:.1f} A on one line of a 10 A "
        "circuit, above the 8 A it carries continuously (hardware.rack_circuits)"
    ) in message


def test_repro_b_plans_servers_its_circuits_carry(tmp_path: Path) -> None:
    """The 2-GPU workstation (1,978 W on one PSU: 17.4 A) no longer goes on a 15 A circuit (12 A continuous): the plan
    takes 1-GPU ones, one a circuit, and every line it reports is within 12 A."""
    path = tmp_path / "ws.yaml"
    path.write_text(REPRO_B)
    plan = plan_file(str(path))[1]
    (pool,) = plan.pools
    assert pool.node.power_w / 0.95 / 120 <= 12
    assert plan.racks and all(r.circuit_load is not None and r.circuit_load.phase_current_a <= 12 for r in plan.racks)
    for rack in plan.racks:
        load = rack.circuit_load
        assert load is not None
        # each rack's most loaded line is one workstation's whole draw on its one PSU, not a share of every circuit
        assert load.phase_current_a == pytest.approx(pool.node.power_w / 0.95 / 120, abs=0.01)


def test_the_smallest_node_is_no_larger_than_any_planned(tmp_path: Path) -> None:
    """validate refuses a rack no allowed server's smallest node fits; that node must draw no more than any node the
    search forms of the kind, or validate would refuse what plan can place. Checked on every bare-metal example."""
    from generator.planner.early import smallest_node
    from generator.planner.options import allowed_hardware
    from generator.sizing.constants import with_overrides
    from tests.conftest import REPO

    checked = 0
    for example in sorted((REPO / "examples").glob("*.yaml")):
        loaded = load_workload(str(example))
        wl = loaded.workload
        if wl.hardware.provider != "baremetal" or wl.hardware.fixed is not None:
            continue
        consts = with_overrides(dict(wl.constants))
        kinds = {(h.platform.id, h.gpu.id): h for h in allowed_hardware(wl)}
        for pool in plan_file(str(example))[1].pools:
            hw = kinds.get((pool.node.platform_id, pool.node.gpu_id))
            if hw is not None:
                assert smallest_node(hw, consts).power_w <= pool.node.power_w, (example.name, pool.name)
                checked += 1
    assert checked >= 10
