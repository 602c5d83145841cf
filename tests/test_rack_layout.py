"""The plan carries its racks (newuser30 item 5): per rack what it holds, its units, power and heat against the limit.

A colocation contract and its PDU/circuit orders need each rack's hosts, units and kW; a pool's count of the racks
holding some of its nodes does not add up to the fleet's (lab-bm.yaml: 3 racks, pools 3 + 1 + 1 + 1), so SPEC.md
lists the racks instead and Terraform calls the pool's figure ``racks_spanned``.

By hand, lab-bm (newuser30's base file, rack_power_kw 20, 40U usable): first-fit decreasing puts a 11,018 W 6U
XE9680 in each of 3 racks; the 2,212 W owned A100 server, the 1,668 W RTX 5090 tower and the 655 W RTX 3090 tower
(4U each) join the first: 11,018 + 2,212 + 1,668 + 655 = 15,553 W in 6 + 3 x 4 = 18U. lab-nv-10kw (10 kW racks): 8
x 4,230 W 4U XE8640 two a rack (8,460 W); the 1,276 W tower joins the first (9,736 W), the 1,038 W 2U L4 server the
second (9,498 W, 10U), and the 2,212 W A100 server fits none of them (8,460 + 2,212 > 10,000): a fifth rack.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file, render_file, render_files
from generator.calculator.report import plan_text
from generator.fleet_diff import diff_plans, plan_from_spec
from generator.planner.heat import BTU_PER_H_PER_W, heat_btu_per_h
from generator.planner.plan import NodeSpec, Pool, RackSpec
from generator.planner.racks import RACK_UNITS, pack_racks, rack_id, rack_specs, racked_nodes, racks_named_for_workload
from generator.render.hosts import host_racks
from generator.render.markdown import render_markdown

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _pool(
    name: str,
    power_w: int,
    units: int,
    nodes: int,
    kind: str = "pcie-server",
    hosts: int = 1,
    owned: int = 0,
    owned_hosts: tuple[str, ...] = (),
    cooling: str = "air",
) -> Pool:
    """A bare-metal pool of ``nodes`` servers of ``power_w`` and ``units``, heat at NIST SP 811's 3.412142 BTU/h a watt."""
    node = NodeSpec(
        platform_id=name, platform_name=name, kind=kind, provider="baremetal", instance_type=None, gpu_id="l4-24gb",
        gpu_name="L4", gpus=1, gpu_memory_gib=24.0, cpu="cpu", cpu_cores=16, ram_gib=64, nvme_tb=1.0, nvme_drives=1,
        nvme_read_gb_per_s=1.0, nvme_write_gb_per_s=1.0, nics=(), power_w=power_w, power_basis="sum of components",
        heat_btu_per_h=round(power_w * BTU_PER_H_PER_W), cooling=cooling, rack_units=units, psu=None, nvswitch=False, hosts=hosts,
    )  # fmt: skip
    return Pool(
        name=name, node=node, nodes=nodes, deployments=(name,), racks=0, power_w=power_w * nodes, usd_per_hour=None,
        price_basis=None, labels=(), taints=(), owned_nodes=owned, owned_hosts=owned_hosts,
    )  # fmt: skip


LAB_BM = [
    _pool("tune32", 1668, 4, 1, kind="workstation"),
    _pool("chat", 11018, 6, 3),
    _pool("embed", 655, 4, 1, kind="workstation"),
    _pool("full8", 2212, 4, 1),
]
LAB_NV_10KW = [_pool("embed", 1038, 2, 1), _pool("chat", 4230, 4, 8), _pool("full8", 2212, 4, 1), _pool("tune32", 1276, 4, 1)]

# (pools, rack_power_kw, reserved units, per rack: {pool: nodes}, power W, units, usable units)
CASES = [
    pytest.param(
        LAB_BM,
        20,
        None,
        [
            ({"chat": 1, "embed": 1, "full8": 1, "tune32": 1}, 15553, 18, 40),
            ({"chat": 1}, 11018, 6, 40),
            ({"chat": 1}, 11018, 6, 40),
        ],
        id="newuser30-lab-bm-3-racks-not-6",
    ),
    pytest.param(
        LAB_NV_10KW,
        10,
        None,
        [
            ({"chat": 2, "tune32": 1}, 9736, 12, 40),
            ({"chat": 2, "embed": 1}, 9498, 10, 40),
            ({"chat": 2}, 8460, 8, 40),
            ({"chat": 2}, 8460, 8, 40),
            ({"full8": 1}, 2212, 4, 40),
        ],
        id="newuser30-lab-nv-10kw-5-racks-not-7",
    ),
    # power never binds, height does: 20 x 2U fill the 40U a rack leaves, the 21st opens a rack
    pytest.param(
        [_pool("r760", 500, 2, 21)], 100, None, [({"r760": 20}, 10000, 40, 40), ({"r760": 1}, 500, 2, 40)], id="height-bound-2u"
    ),
    pytest.param([_pool("r760", 500, 2, 21)], 100, 0, [({"r760": 21}, 10500, 42, 42)], id="nothing-reserved"),
    # a rack-scale system is the rack, switches and all: all 42U are its own
    pytest.param(
        [_pool("nvl72", 120000, 42, 2, kind="rack-scale", hosts=18, cooling="liquid")],
        130,
        None,
        [({"nvl72": 1}, 120000, RACK_UNITS, RACK_UNITS), ({"nvl72": 1}, 120000, RACK_UNITS, RACK_UNITS)],
        id="rack-scale-fills-its-rack",
    ),
    # an owned workstation stays in the office: the bought one is racked, the owned one is in no rack
    pytest.param(
        [_pool("ws", 1644, 4, 2, kind="workstation", owned=1)],
        20,
        None,
        [({"ws": 1}, 1644, 4, 40)],
        id="owned-workstation-in-no-rack",
    ),
]


@pytest.mark.parametrize(("pools", "limit_kw", "reserved", "expected"), CASES)
def test_racks_hold_the_fleet_within_their_limits(
    pools: list[Pool], limit_kw: float, reserved: int | None, expected: list[tuple[dict[str, int], int, int, int]]
) -> None:
    racks = rack_specs(pack_racks(pools, limit_kw, reserved), pools, limit_kw, reserved)
    assert [({s.pool: s.nodes for s in r.pools}, r.power_w, r.units, r.usable_units) for r in racks] == expected
    assert [r.id for r in racks] == [f"rack-{i:02d}" for i in range(1, len(racks) + 1)]
    for rack in racks:  # never above the rack's power limit or its units
        assert rack.power_w <= limit_kw * 1000 and rack.units <= rack.usable_units and rack.rack_power_kw == limit_kw
        assert rack.nodes == sum(s.nodes for s in rack.pools)
        assert [s.pool for s in rack.pools] == sorted(s.pool for s in rack.pools)
    # the racks add up to the racked nodes, their power and heat (all of the fleet's but an owned office workstation)
    racked = {p.name: racked_nodes(p) for p in pools}
    assert sum(r.nodes for r in racks) == sum(racked.values())
    assert sum(r.power_w for r in racks) == sum(p.node.power_w * racked[p.name] for p in pools)
    # a rack's heat is its watts rounded once (fix188): its nodes' rounded figures summed drift by up to 0.5 BTU/h a node
    assert [r.heat_btu_per_h for r in racks] == [round(r.power_w * BTU_PER_H_PER_W) for r in racks]


def test_named_hosts_go_to_their_pools_first_racks() -> None:
    """Owned servers are placed first, in rack order; a rack-scale system's 18 trays stay with their system."""
    pools = [
        _pool("dgx", 10200, 8, 3, owned=2, owned_hosts=("dgx-a", "dgx-b")),
        _pool("nvl", 120000, 42, 2, kind="rack-scale", hosts=18, owned=2, owned_hosts=tuple(f"t{i}" for i in range(36))),
        _pool("ws", 1600, 4, 1, kind="workstation", owned=1, owned_hosts=("office-ws",)),
    ]
    racks = rack_specs(pack_racks(pools, 130, None), pools, 130)
    hosts = [{s.pool: s.hosts for s in r.pools} for r in racks]
    assert hosts == [
        {"nvl": tuple(f"t{i}" for i in range(18))},
        {"nvl": tuple(f"t{i}" for i in range(18, 36))},
        {"dgx": ("dgx-a", "dgx-b")},  # 3 x 10.2 kW in one 130 kW rack: the owned two named, the bought one not
    ]
    assert [r.cooling for r in racks] == ["air", "air", "air"]
    assert not any("office-ws" in s.hosts for r in racks for s in r.pools)  # in the office, in no rack


def test_rack_ids_sort_as_they_number() -> None:
    assert [rack_id(i, 9) for i in (0, 8)] == ["rack-01", "rack-09"]
    assert [rack_id(i, 120) for i in (0, 119)] == ["rack-001", "rack-120"]


@pytest.mark.parametrize(
    ("example", "racks"),
    [
        pytest.param("fleet-existing", 1, id="owned-named-hosts"),
        pytest.param("rack-density", 2, id="dense-racks"),
        pytest.param("gb200-nvl72-405b", 2, id="rack-scale"),
        pytest.param("fleet-split", 3, id="split-deployment"),
    ],
)
def test_a_plans_racks_sum_to_its_fleet(example: str, racks: int) -> None:
    plan = plan_file(str(EXAMPLES / f"{example}.yaml"))[1]
    assert len(plan.racks) == plan.totals["racks"] == racks
    assert sum(r.nodes for r in plan.racks) == plan.totals["nodes"]
    assert sum(r.power_w for r in plan.racks) == plan.totals["power_w"]
    # the fleet's heat and each rack's are their own watts rounded once (fix188), so they add up to within 1 BTU/h a rack
    assert plan.totals["heat_btu_per_h"] == heat_btu_per_h(plan.totals["power_w"])
    assert [r.heat_btu_per_h for r in plan.racks] == [heat_btu_per_h(r.power_w) for r in plan.racks]
    assert abs(sum(r.heat_btu_per_h for r in plan.racks) - plan.totals["heat_btu_per_h"]) <= len(plan.racks)
    for pool in plan.pools:  # a pool's racks_spanned is the racks holding some of its nodes
        assert pool.racks == sum(1 for r in plan.racks if pool.name in {s.pool for s in r.pools})
    spec = json.loads(render_file(str(EXAMPLES / f"{example}.yaml"))["spec.json"])["plan"]
    assert [r["id"] for r in spec["racks"]] == [r.id for r in plan.racks]


def test_a_cloud_plan_has_no_racks() -> None:
    files = render_file(str(EXAMPLES / "chat-70b-fp8-aws.yaml"))
    assert json.loads(files["spec.json"])["plan"]["racks"] == []
    assert "## Racks" not in files["SPEC.md"]
    assert "racks" not in json.loads(files["terraform/specgen.auto.tfvars.json"])


def test_spec_md_lists_the_racks_and_no_per_pool_rack_column() -> None:
    files = render_file(str(EXAMPLES / "fleet-existing.yaml"))
    text = files["SPEC.md"]
    assert (
        "| pool | nodes | platform | GPUs per node | CPU | RAM | NVMe | NICs | power per node | cost (pool) | capex (pool) |"
        in text
    )
    assert "| rack | servers | rack units | power | heat | cooling |" in text
    assert (
        "| rack-01 | 1 x `assistant_h100_sxm5_80gb`, 1 x `chat_dell_xe8640_h100_sxm5_80gb` (`hgx4-01`), "
        "2 x `chat_dgx_h100_h100_sxm5_80gb` (`dgx-01`, `dgx-02`) | 28U of 40U | 34.8 kW of 40 kW | 118,845 BTU/h | air |"
    ) in text
    assert "rack-01 draws 34.8 kW of air-cooled servers" in text  # the findings name racks as the table does


def test_spec_md_says_what_the_racks_leave_out() -> None:
    """An owned office workstation is in no rack: the racks' kW is then below the fleet's, and SPEC.md says why."""
    plan = plan_file(str(EXAMPLES / "fleet-existing.yaml"))[1]
    short = plan._replace(racks=(plan.racks[0]._replace(power_w=plan.totals["power_w"] - 1600),))
    assert "The racks hold 33.2 of the fleet's 34.8 kW: the rest is owned workstations" in render_markdown(short)["SPEC.md"]
    assert "The racks hold" not in render_markdown(plan)["SPEC.md"]


def test_hosts_carry_their_rack_in_the_ansible_inventory() -> None:
    loaded, plan = plan_file(str(EXAMPLES / "fleet-existing.yaml"), for_render=True)
    assert host_racks(plan, loaded.workload) == dict.fromkeys(
        ("hgx4-01", "dgx-01", "dgx-02", "assistant-h100-sxm5-80gb-01"), "rack-01"
    )
    files = render_file(str(EXAMPLES / "fleet-existing.yaml"))
    assert "        dgx-01:\n          specgen_rack: !unsafe 'rack-01'\n" in files["ansible/inventory.yml"]
    assert (
        "        assistant-h100-sxm5-80gb-01:\n          specgen_rack: !unsafe 'rack-01'\n" in files["ansible/hosts.yml.example"]
    )


def test_gb200_trays_carry_their_systems_rack() -> None:
    loaded, plan = plan_file(str(EXAMPLES / "gb200-nvl72-405b.yaml"), for_render=True)
    racks = host_racks(plan, loaded.workload)
    names = sorted(racks)
    assert len(names) == 36
    assert [racks[n] for n in names] == ["rack-01"] * 18 + ["rack-02"] * 18


def test_terraform_lists_the_racks_and_calls_the_pool_figure_racks_spanned() -> None:
    values = json.loads(render_file(str(EXAMPLES / "fleet-existing.yaml"))["terraform/specgen.auto.tfvars.json"])
    assert values["racks"] == [
        {
            "id": "rack-01",
            "nodes": {"assistant_h100_sxm5_80gb": 1, "chat_dell_xe8640_h100_sxm5_80gb": 1, "chat_dgx_h100_h100_sxm5_80gb": 2},
            "hosts": ["hgx4-01", "dgx-01", "dgx-02"],
            "units": 28,
            "usable_units": 40,
            "power_w": 34830,
            "heat_btu_per_h": 118845,
            "cooling": "air",
            "circuit_load": None,  # no rack_circuits given (newuser64 item 11)
        }
    ]
    assert {pool["racks_spanned"] for pool in values["gpu_pools"].values()} == {1}
    assert all("racks" not in pool for pool in values["gpu_pools"].values())


def test_diff_reads_a_spec_json_from_before_the_rack_list() -> None:
    """``specgen diff`` of an older spec.json (no plan.racks) against a new one still compares the fleets' racks."""
    new_text = render_file(str(EXAMPLES / "rack-density.yaml"))["spec.json"]
    old = json.loads(new_text)
    del old["plan"]["racks"]
    diff = diff_plans(plan_from_spec(json.dumps(old), "old.json"), plan_from_spec(new_text, "new.json"))
    assert diff["totals"]["racks"] == {"old": 2, "new": 2, "delta": 0}
    assert diff["pools"] == [] and diff["replacements"] == []


def test_rack_spec_is_written_as_an_object() -> None:
    racks = rack_specs(pack_racks(LAB_BM, 20), LAB_BM, 20)
    assert isinstance(racks[0], RackSpec)
    plan = plan_file(str(EXAMPLES / "rack-density.yaml"))[1]
    data = plan.to_dict()["racks"][0]
    # circuit_load only where the workload gives its circuits (tests/test_rack_circuits.py)
    assert set(data) == set(RackSpec._fields) - {"circuit_load"} and set(data["pools"][0]) == {"pool", "nodes", "hosts"}


def test_plan_text_lists_the_racks() -> None:
    text = plan_text(plan_file(str(EXAMPLES / "fleet-existing.yaml"))[1])
    assert (
        "racks of 40 kW (hardware.rack_power_kw):\n  rack-01: 1 x assistant_h100_sxm5_80gb, 1 x "
        "chat_dell_xe8640_h100_sxm5_80gb (hgx4-01), 2 x chat_dgx_h100_h100_sxm5_80gb (dgx-01, dgx-02); 28U of 40U, "
        "34.8 kW, 118,845 BTU/h, air cooled\n"
    ) in text
    assert "racks of" not in plan_text(plan_file(str(EXAMPLES / "chat-70b-fp8-aws.yaml"))[1])


def test_racks_of_a_workload_rendered_with_others_are_named_after_it(tmp_path: Path) -> None:
    """newuser33 item 1: ten bare-metal workloads rendered as one cluster each packed their servers into a `rack-01`,
    and every host carried `specgen_rack: rack-01` (41.5 kW read as one 40 kW rack). Each file is a fleet of its own
    in racks of its own: rendered together, its racks, the hosts in them and the findings naming them carry its name."""
    plan = plan_file(str(EXAMPLES / "rack-density.yaml"))[1]
    named = racks_named_for_workload(plan)
    assert [r.id for r in named.racks] == [f"{plan.workload}-rack-01", f"{plan.workload}-rack-02"]
    (hot,) = [f for f in named.findings if f.code == "rack-exceeds-air-cooling"]
    # fix74: 40.8 kW, four 10.2 kW DGX H100 (42.2 kW with the 1,363 W R760 before): the chat's five TP8 replicas at
    # 98.8% of their 610 places (p95 wait 3.42 s past the TTFT slack) became 11 x TP4 on six DGX H100, the helper on
    # their idle GPUs; still two racks, the first past air cooling, which is what the names are checked on
    assert hot.message.startswith(f"{plan.workload}-rack-01 draws 40.8 kW of air-cooled servers")
    assert named._replace(racks=plan.racks, findings=plan.findings) == plan  # nothing else changes
    (tmp_path / "other.yaml").write_text(
        (EXAMPLES / "rack-density.yaml")
        .read_text()
        .replace(f"name: {plan.workload}", "name: other", 1)
        .replace("- name: ", "- name: o")
    )
    files = render_files([str(EXAMPLES / "rack-density.yaml"), str(tmp_path / "other.yaml")])
    racks = {
        name: sorted({line.split("'")[1] for line in text.splitlines() if "specgen_rack" in line})
        for name, text in files.items()
        if "/ansible/" in name and "specgen_rack" in text
    }
    assert racks and all(ids and all(i.startswith(name.split("/")[0] + "-rack-") for i in ids) for name, ids in racks.items())


def test_a_racks_heat_is_its_watts_rounded_once_not_its_nodes_rounded_figures_summed() -> None:
    """fix188: three 11,500 W servers are 34,500 W, 117,719 BTU/h; their rounded 39,240 each summed give 117,720."""
    pools = [_pool("chat", 11500, 6, 3)]
    (rack,) = rack_specs(pack_racks(pools, 40, None), pools, 40)
    assert pools[0].node.heat_btu_per_h == 39240
    assert (rack.power_w, rack.heat_btu_per_h) == (34500, 117719)
