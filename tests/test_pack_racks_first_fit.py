"""pack_racks skips the racks too full for a node's power and height (perf141): the racks are those of a plain scan.

A capacity plan of 16,777,216 USD packed ~600 nodes into racks 2,964 times, each node scanning every rack before the
one it went in. A rack's power and height only grow, so one too full for a (power, height) stays so, and the scan
for the next node of that power and height starts past it; without circuits, a pool's alike nodes go into the rack
found as many at once as its power and height hold (the racks before it hold none of them). These tests hold that
the packing is the first-fit decreasing of a scan from the first rack, with and without rack circuits (whose check
is made at every rack the power and height let through, as before), on random fleets.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.planner.nodes import psu_count
from generator.planner.plan import NodeSpec, Pool
from generator.planner.rack_supply import rack_feeds
from generator.planner.racks import Rack, node_units, pack_racks, racked_nodes, usable_units
from generator.sizing.electrical import whole_watts
from generator.sizing.psu_feeds import Feeds, carried, with_server
from generator.workload.models import RackCircuits


def _first_fit(pools: list[Pool], rack_power_kw: float, feeds: Feeds | None) -> list[Rack]:
    """The packing as it was: each node scans every rack from the first (the oracle)."""
    budget_w, usable = whole_watts(rack_power_kw), usable_units(None)
    nodes = sorted(
        (
            (p.node.power_w, node_units(p), p.name, p.node.cooling == "liquid", psu_count(p.node))
            for p in pools
            for _ in range(racked_nodes(p))
        ),
        key=lambda n: (-n[0], -n[1], n[2]),
    )
    racks: list[Rack] = []
    for power, units, name, liquid, psus in nodes:
        target, loads = None, None
        for rack in racks:
            if rack.power_w + power > budget_w or rack.units + units > usable:
                continue
            loads = None if feeds is None or rack.feed_loads is None else with_server(feeds, rack.feed_loads, power, psus)
            if loads is None or (feeds is not None and carried(feeds, loads)):
                target = rack
                break
        if target is None:
            target = Rack(feeds)
            racks.append(target)
            loads = None if feeds is None or target.feed_loads is None else with_server(feeds, target.feed_loads, power, psus)
        target.feed_loads = loads
        target.power_w += power
        target.units += units
        target.liquid = target.liquid or liquid
        target.air_power_w += 0 if liquid else power
        target.pools[name] = target.pools.get(name, 0) + 1
    return racks


def _pool(index: int, platform_id: str, power_w: int, rack_units: int, nodes: int, liquid: bool) -> Pool:
    node = NodeSpec(
        platform_id=platform_id, platform_name=platform_id, kind="hgx-8gpu", provider="baremetal", instance_type=None,
        gpu_id="h100-sxm5-80gb", gpu_name="H100", gpus=8, gpu_memory_gib=80.0, cpu="cpu", cpu_cores=112, ram_gib=2048,
        nvme_tb=1.0, nvme_drives=1, nvme_read_gb_per_s=1.0, nvme_write_gb_per_s=1.0, nics=(), power_w=power_w,
        power_basis="published system maximum", heat_btu_per_h=round(power_w * 3.412),
        cooling="liquid" if liquid else "air", rack_units=rack_units, psu=None, nvswitch=True,
    )  # fmt: skip
    return Pool(
        name=f"p{index}", node=node, nodes=nodes, deployments=("d",), racks=0, power_w=power_w * nodes,
        usd_per_hour=None, price_basis=None, labels=(), taints=(),
    )  # fmt: skip


_POOL = st.tuples(
    st.sampled_from(["dgx-h100", "dgx-b200", "dell-r760", "custom-x"]),  # catalog PSUs, or none known
    st.sampled_from([0, 1_000, 1_363, 2_500, 6_000, 10_200, 14_300, 45_000]),  # 0 and 45 kW: placed one by one
    st.sampled_from([1, 2, 4, 8, 10]),
    st.integers(min_value=0, max_value=60),
    st.booleans(),
)


def _state(racks: list[Rack]) -> list[tuple[object, ...]]:
    return [(r.power_w, r.units, r.liquid, r.air_power_w, sorted(r.pools.items()), r.feed_loads) for r in racks]


@settings(max_examples=40, deadline=None)
@given(st.lists(_POOL, min_size=1, max_size=6), st.sampled_from([15.0, 30.0, 40.0, 132.0]))
def test_the_racks_are_a_scan_from_the_first(drawn: list[tuple[str, int, int, int, bool]], rack_power_kw: float) -> None:
    pools = [_pool(i, *d) for i, d in enumerate(drawn)]
    assert _state(pack_racks(pools, rack_power_kw)) == _state(_first_fit(pools, rack_power_kw, None))


@settings(max_examples=25, deadline=None)
@given(st.lists(_POOL, min_size=1, max_size=5), st.sampled_from([(208, 1, 30), (415, 3, 32), (415, 3, 63)]))
def test_with_circuits_the_racks_are_a_scan_from_the_first(
    drawn: list[tuple[str, int, int, int, bool]], circuit: tuple[int, int, int]
) -> None:
    volts, phases, amps = circuit
    feeds = rack_feeds(RackCircuits(volts, phases, amps, 2, "2N"))  # type: ignore[arg-type]
    pools = [_pool(i, *d) for i, d in enumerate(drawn)]
    # a node the circuits cannot carry alone is refused before packing: only those they carry are packed here
    kw = 1_000.0
    assert _state(pack_racks(pools, kw, None, feeds)) == _state(_first_fit(pools, kw, feeds))


def test_a_rack_too_full_for_one_power_still_takes_a_smaller_node() -> None:
    """Two 10,200 W nodes fill a 30 kW rack's power but for 9,600 W; a 1,000 W node after them goes in that rack."""
    pools = [_pool(0, "dgx-h100", 10_200, 8, 2, False), _pool(1, "dgx-h100", 10_200, 8, 1, False)]
    pools.append(_pool(2, "dell-r760", 1_000, 2, 1, False))
    racks = pack_racks(pools, 30.0)
    assert [sorted(r.pools.items()) for r in racks] == [[("p0", 2), ("p2", 1)], [("p1", 1)]]
    assert _state(racks) == _state(_first_fit(pools, 30.0, None))
