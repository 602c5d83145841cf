"""A node drawing more than its non-redundant PSU capacity: ruled out on its own power figure, a warning on a borrowed one
or on a server the team already owns (it exists and runs).

Capacities by hand from ``platforms.json``: Dell XE7740 8 x 3,200 W with four redundant (StorageReview's
spec table: N+N, 1+1 CPU zone and 3+3 GPU zone) = 4 x 3,200 = 12,800 W; the WRX90 workstation 1 x 2,200 W (the
Super Flower 2,200 W its priced parts list buys); the AM5 tower 1 x 1,600 W, its PSU fields marked unsourced; DGX
H100 6 x 3,300 W with two redundant = 13,200 W; the LGA1700 tower 1 x 1,000 W (a single PSU holds none back,
whatever its unsourced redundancy says).

A PSU's rating is its DC output: it is compared with the node's DC load (the wall draw x psu_efficiency 0.94), not
with the wall draw (newuser25 item 1: 2 x RTX 5090 on AM5, 1,644 W at the wall = 1,545 W DC, inside 1,600 W).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner.nodes import NodePower, node_build_text, psu_capacity_w, psu_full_capacity_w, psu_overload
from generator.planner.plan import Nic
from generator.sizing.constants import Constants

REPO = Path(__file__).resolve().parents[1]
XE7740 = "dell-xe7740"
WRX90 = "wrx90-workstation"
PRO6000 = "rtx-pro-6000-blackwell-96gb"  # the Server Edition (passive), for rack servers
PRO6000_WS = "rtx-pro-6000-ws-96gb"  # the Workstation Edition, for towers
AM5 = "am5-desktop-tower"
RTX5090 = "rtx-5090-32gb"
CARD = {WRX90: PRO6000_WS, "lga1700-desktop-tower": PRO6000_WS, AM5: RTX5090}
PSU_EFFICIENCY = Constants().psu_efficiency  # 0.94
XE9680_AMD = "dell-xe9680-mi300x"


@pytest.mark.parametrize(
    ("platform", "capacity"),
    [
        pytest.param(XE7740, 12_800, id="xe7740-4+4"),
        pytest.param("dgx-h100", 13_200, id="dgx-h100-4+2"),
        pytest.param(WRX90, 2_200, id="wrx90-one-psu-as-bought"),
        pytest.param("lga1700-desktop-tower", 1_000, id="one-psu-is-never-redundant"),
        pytest.param("dell-xe8640", None, id="xe8640-psu-null"),
        pytest.param(XE9680_AMD, 9_600, id="xe9680-ftr-3+3"),
    ],
)
def test_non_redundant_psu_capacity(platform: str, capacity: float | None) -> None:
    assert psu_capacity_w(catalog.platforms()[platform]) == capacity


@pytest.mark.parametrize(
    ("platform", "capacity"),
    [pytest.param(XE9680_AMD, 19_200, id="ftr-every-psu"), pytest.param(XE7740, 12_800, id="n+n-the-n")],
)
def test_full_speed_psu_capacity(platform: str, capacity: float) -> None:
    assert psu_full_capacity_w(catalog.platforms()[platform]) == capacity


SUMMED = ("sum of components", "")
BORROWED = ("published maximum of dgx-h100 (same baseboard)", "dgx-h100")

PSU_CASES = [
    pytest.param(
        XE7740,
        8,
        12_801,
        SUMMED,
        "error",
        "psu-over-capacity",
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 13,618 W at the wall (sum of components), a DC load of "
        "12,801 W, more than its PSUs "
        "deliver without redundancy (4 of 8 x 3,200 W = 12,800 W)",
        id="sourced-over-ruled-out",
    ),
    pytest.param(XE7740, 8, 12_800, SUMMED, None, None, None, id="sourced-at-capacity-kept"),
    pytest.param(
        XE7740,
        8,
        12_801,
        BORROWED,
        "warning",
        "psu-headroom",
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 13,618 W at the wall (published maximum of dgx-h100 (same "
        "baseboard)), a DC load of 12,801 W, more than its PSUs deliver without redundancy (4 of 8 x 3,200 W = 12,800 W); "
        "not ruled out "
        "because the power figure is another system's: check the chassis' PSU rating for this configuration before buying",
        id="borrowed-power-warns",
    ),
    pytest.param(
        WRX90,
        4,
        3_179,
        SUMMED,
        "error",
        "psu-over-capacity",
        "wrx90-workstation with 4 x rtx-pro-6000-ws-96gb draws 3,382 W at the wall (sum of components), a DC load of "
        "3,179 W, more than its PSUs deliver without redundancy (1 x 2,200 W = 2,200 W)",
        id="sourced-psu-ruled-out",
    ),
    pytest.param(
        AM5,
        2,
        1_601,
        SUMMED,
        "error",
        "psu-over-capacity",
        "am5-desktop-tower with 2 x rtx-5090-32gb draws 1,703 W at the wall (sum of components), a DC load of 1,601 W, "
        "more than its PSUs deliver without redundancy (1 x 1,600 W = 1,600 W); psu.count, psu.rating_w believed, not "
        "sourced: check the chassis' PSU (servers of this kind already owned, listed under hardware.inventory, are kept "
        "with a psu-headroom warning)",
        id="believed-psu-ruled-out",
    ),
    # newuser25 item 1: 1,644 W at the wall is a 1,545 W DC load (x 0.94), inside the 1,600 W PSU: not ruled out
    pytest.param(AM5, 2, 1_545, SUMMED, None, None, None, id="wall-over-rating-dc-within-kept"),
    pytest.param(AM5, 2, 1_600, SUMMED, None, None, None, id="dc-at-rating-kept"),
    pytest.param(
        "lga1700-desktop-tower",
        2,
        1_001,
        SUMMED,
        "error",
        "psu-over-capacity",
        "lga1700-desktop-tower with 2 x rtx-pro-6000-ws-96gb draws 1,065 W at the wall (sum of components), a DC load of "
        "1,001 W, more than its "
        "PSUs deliver without redundancy (1 x 1,000 W = 1,000 W)",
        id="single-psu-unsourced-redundancy-ruled-out",
    ),
    pytest.param(WRX90, 1, 2_200, SUMMED, None, None, None, id="at-rating-within"),
    # Dell's 3+3 fault-tolerant redundancy (StorageReview): all six 3,200 W PSUs at full speed, the GPUs power-braked
    # past losing 6 - ceil(11,018 / 3,200) = 2 of them (newuser24 item 1: 8 x MI325X ruled out on 3 x 3,200 W)
    pytest.param(
        XE9680_AMD,
        8,
        11_018,
        SUMMED,
        "warning",
        "psu-power-brake",
        "dell-xe9680-mi300x with 8 x rtx-pro-6000-blackwell-96gb draws 11,721 W at the wall (sum of components), a DC load "
        "of 11,018 W, more than its "
        "PSUs deliver without redundancy (3 of 6 x 3,200 W = 9,600 W): its fault-tolerant redundancy runs it on all "
        "6 x 3,200 W = 19,200 W and keeps full speed with up to 2 PSU(s) lost; past that (a feed of 3 down) it caps "
        "the GPUs' power (the vendor's power brake) instead of shutting down, and serving slows until the PSUs are back",
        id="fault-tolerant-over-n-warns",
    ),
    pytest.param(XE9680_AMD, 8, 9_600, SUMMED, None, None, None, id="fault-tolerant-within-n"),
    pytest.param(
        XE9680_AMD,
        8,
        19_201,
        SUMMED,
        "error",
        "psu-over-capacity",
        "dell-xe9680-mi300x with 8 x rtx-pro-6000-blackwell-96gb draws 20,427 W at the wall (sum of components), a DC load "
        "of 19,201 W, more than its "
        "PSUs deliver without redundancy (3 of 6 x 3,200 W = 9,600 W)",
        id="fault-tolerant-over-all-ruled-out",
    ),
    pytest.param("dell-xe8640", 4, 99_999, SUMMED, None, None, None, id="no-psu-no-check"),
]


@pytest.mark.parametrize(("platform", "gpus", "power_w", "basis", "level", "code", "message"), PSU_CASES)
def test_psu_overload(
    platform: str,
    gpus: int,
    power_w: int,
    basis: tuple[str, str],
    level: str | None,
    code: str | None,
    message: str | None,
) -> None:
    power = NodePower(round(power_w / PSU_EFFICIENCY), power_w, *basis)
    found = psu_overload(catalog.platforms()[platform], catalog.gpus()[CARD.get(platform, PRO6000)], gpus, power)
    if level is None:
        assert found is None
        return
    assert found is not None
    assert (found.level, found.code, found.message) == (level, code, message)


def test_finetune_example_buys_two_gpus_per_workstation_and_says_why() -> None:
    # the WRX90's 2,200 W PSU (the one its parts list buys) cannot power 4 x 600 W cards (3,179 W DC, 3,382 W at the
    # wall); 2 per chassis draw 1,978 W at the wall and are bought instead: 4 workstations, not 2
    plan = plan_file(str(REPO / "examples" / "finetune-8b-qlora.yaml"))[1]
    (pool,) = plan.pools
    assert (pool.nodes, pool.node.gpus, pool.node.power_w) == (4, 2, 1_978)
    assert not [f for f in plan.findings if f.code.startswith("psu")]
    (deployment,) = plan.deployments
    assert (
        "ruled out: wrx90-workstation with 4 x rtx-pro-6000-ws-96gb draws 3,382 W at the wall (sum of components), "
        "a DC load of 3,179 W, more than its PSUs deliver without redundancy (1 x 2,200 W = 2,200 W)"
    ) in deployment.reasons


def test_a_believed_psu_rules_the_full_chassis_out_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # were the WRX90's PSU figures beliefs, the full chassis is still ruled out, and the reason names the beliefs
    believed = catalog.platforms()[WRX90]._replace(unsourced_fields=("psu.count", "psu.rating_w"))
    monkeypatch.setitem(catalog.platforms(), WRX90, believed)
    plan = plan_file(str(REPO / "examples" / "finetune-8b-qlora.yaml"))[1]
    (pool,) = plan.pools
    assert (pool.nodes, pool.node.gpus, pool.node.power_w) == (4, 2, 1_978)
    assert not [f for f in plan.findings if f.code.startswith("psu")]
    (deployment,) = plan.deployments
    assert (
        "ruled out: wrx90-workstation with 4 x rtx-pro-6000-ws-96gb draws 3,382 W at the wall (sum of components), "
        "a DC load of 3,179 W, more than its PSUs deliver without redundancy (1 x 2,200 W = 2,200 W); psu.count, "
        "psu.rating_w believed, not sourced: check the chassis' PSU (servers of this kind already owned, listed under "
        "hardware.inventory, are kept with a psu-headroom warning)"
    ) in deployment.reasons


OWNED_CASES = [
    pytest.param(
        AM5,
        2,
        1_601,
        "am5-desktop-tower with 2 x rtx-5090-32gb draws 1,703 W at the wall (sum of components), a DC load of 1,601 W, "
        "more than its PSUs deliver without redundancy (1 x 1,600 W = 1,600 W); psu.count, psu.rating_w believed, not "
        "sourced: kept because the server is owned and runs; check the chassis' PSU rating",
        id="owned-believed-psu-warns",
    ),
    pytest.param(
        XE7740,
        8,
        12_801,
        # newuser64 item 2: within all 8 PSUs, which share the load: it runs at full power, only redundancy is lost
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 13,618 W at the wall (sum of components), a DC load of "
        "12,801 W, more than its PSUs deliver without redundancy (4 of 8 x 3,200 W = 12,800 W) but within all 8 x "
        "3,200 W = 25,600 W, which share the load: the server runs at full power; what it lacks at full load is PSU "
        "redundancy: it keeps full power with up to 3 PSU(s) lost, but losing 4 PSU(s) (or their feed) leaves 12,800 W "
        "for its 12,801 W DC load. Kept because the server is owned; to keep its 4+4 redundancy, cap it at 13,616 W at "
        "the wall (12,800 W DC: the GPUs' power limit, nvidia-smi -pl), or accept that a PSU failure at full load "
        "overloads the others",
        id="owned-sourced-psu-over-n-redundancy-lost",
    ),
    pytest.param(
        XE7740,
        8,
        25_601,
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 27,235 W at the wall (sum of components), a DC load of "
        "25,601 W, more than its PSUs "
        "deliver without redundancy (4 of 8 x 3,200 W = 12,800 W); kept because the server is owned, but its PSUs "
        "are over their rating at full load: cap the GPUs' power limit (nvidia-smi -pl) or check the chassis' PSU "
        "configuration",
        id="owned-sourced-psu-over-all-psus-warns",
    ),
    pytest.param(XE7740, 8, 12_800, None, id="owned-at-capacity-quiet"),
]


@pytest.mark.parametrize(("platform", "gpus", "power_w", "message"), OWNED_CASES)
def test_owned_server_over_its_psu_is_a_warning(platform: str, gpus: int, power_w: int, message: str | None) -> None:
    found = psu_overload(
        catalog.platforms()[platform],
        catalog.gpus()[CARD.get(platform, PRO6000)],
        gpus,
        NodePower(round(power_w / PSU_EFFICIENCY), power_w, *SUMMED),
        True,
    )
    if message is None:
        assert found is None
        return
    assert found is not None
    assert (found.level, found.code, found.message) == ("warning", "psu-headroom", message)


def _owned_wrx90(tmp_path: Path) -> Path:
    """The fine-tuning example on RTX PRO 6000 only, with 2 owned 4-GPU WRX90 workstations."""
    text = (REPO / "examples" / "finetune-8b-qlora.yaml").read_text()
    allowed = "  gpus: [l40s-48gb, h100-sxm5-80gb, rtx-pro-6000-ws-96gb]\n"
    assert allowed in text
    owned = f"  gpus: [{PRO6000_WS}]\n  inventory: [{{platform: {WRX90}, gpu: {PRO6000_WS}, count: 2}}]\n"
    path = tmp_path / "owned.yaml"
    path.write_text(text.replace(allowed, owned))
    return path


@pytest.mark.parametrize(
    ("sourced", "why"),
    [
        pytest.param(
            False,
            "psu.count, psu.rating_w believed, not sourced: kept because the server is owned and runs; check the "
            "chassis' PSU rating",
            id="believed",
        ),
        pytest.param(
            True,
            "kept because the server is owned, but its PSUs are over their rating at full load: cap the GPUs' power "
            "limit (nvidia-smi -pl) or check the chassis' PSU configuration",
            id="sourced",
        ),
    ],
)
def test_owned_workstations_are_used_with_a_psu_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sourced: bool, why: str
) -> None:
    # the 2 owned workstations (4 x 600 W cards, 3,179 W DC over a 2,200 W PSU) run the job: nothing is
    # bought (capex $0), where buying takes 4 x 2-GPU workstations. Upkeep: its run's energy, hours x 2 x 3.382 kW x
    # PUE 1 (owned workstations, not racked) x $0.13/kWh (fix89; it was $385.14, 0.6 x 730 h of their power, as at 1f2ca90)
    if not sourced:
        believed = catalog.platforms()[WRX90]._replace(unsourced_fields=("psu.count", "psu.rating_w"))
        monkeypatch.setitem(catalog.platforms(), WRX90, believed)
    plan = plan_file(str(_owned_wrx90(tmp_path)))[1]
    (pool,) = plan.pools
    (job,) = plan.deployments
    energy = job.details["hours"] * 2 * 3.382 * 1 * 0.13
    assert (pool.nodes, pool.owned_nodes, pool.node.gpus, pool.node.power_w, pool.capex_usd) == (2, 2, 4, 3382, 0.0)
    assert pool.opex_usd_per_month == pytest.approx(energy, abs=0.01)
    (psu,) = [f for f in plan.findings if f.code.startswith("psu")]
    assert (psu.level, psu.code, psu.path) == ("warning", "psu-headroom", "deployments[0]")
    assert psu.message == (
        "wrx90-workstation with 4 x rtx-pro-6000-ws-96gb draws 3,382 W at the wall (sum of components), a DC load of "
        f"3,179 W, more than its PSUs deliver without redundancy (1 x 2,200 W = 2,200 W); {why}"
    )
    assert not [r for r in plan.deployments[0].reasons if r.startswith("ruled out")]


def test_owned_server_with_a_borrowed_power_figure_keeps_the_borrowed_wording() -> None:
    """An owned server over its PSUs by another system's published maximum: the figure is said to be borrowed,
    not read as the chassis' own draw (no 'over their rating at full load')."""
    power = NodePower(27_235, 25_601, "published maximum of dgx-b200", "dgx-b200")
    found = psu_overload(catalog.platforms()[XE7740], catalog.gpus()[PRO6000], 8, power, True)
    assert found is not None
    assert (found.level, found.code, found.message) == (
        "warning",
        "psu-headroom",
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 27,235 W at the wall (published maximum of dgx-b200), a DC "
        "load of 25,601 W, more than "
        "its PSUs deliver without redundancy (4 of 8 x 3,200 W = 12,800 W); kept because the server is owned and "
        "runs, and the power figure is another system's: check the chassis' PSU rating for this configuration",
    )
    # within all 8 PSUs (newuser64 item 2): redundancy is what is lost, and the figure is still said to be borrowed
    within = psu_overload(
        catalog.platforms()[XE7740], catalog.gpus()[PRO6000], 8, power._replace(watts=13_618, dc_load_w=12_801), True
    )
    assert within is not None and "the server runs at full power" in within.message
    assert within.message.endswith("; the power figure is another system's: check the chassis' draw in this configuration")
    assert "over their rating at full load" not in within.message


PSU_4X = (
    "wrx90-workstation with 4 x rtx-pro-6000-ws-96gb draws {w} W at the wall (sum of components{nics}), a DC load of "
    "{dc} W, more than its PSUs deliver without redundancy (1 x 2,200 W = 2,200 W)"
)


def _one_owned_wrx90(tmp_path: Path, example: str, allowed: str) -> Path:
    """An example on RTX PRO 6000 only, with 1 owned 4-GPU WRX90 workstation."""
    text = (REPO / "examples" / example).read_text()
    assert allowed in text
    owned = f"  gpus: [{PRO6000_WS}]\n  inventory: [{{platform: {WRX90}, gpu: {PRO6000_WS}, count: 1}}]\n"
    path = tmp_path / "owned.yaml"
    path.write_text(text.replace(allowed, owned))
    return path


def test_owned_server_left_free_blames_the_servers_to_buy(tmp_path: Path) -> None:
    """The job needs 2 x 4-GPU WRX90 and 1 is owned: the second, to buy, is over its PSU, so 4 x 2-GPU are
    bought; the owned one is not what the PSU rules out."""
    path = _one_owned_wrx90(tmp_path, "finetune-8b-qlora.yaml", "  gpus: [l40s-48gb, h100-sxm5-80gb, rtx-pro-6000-ws-96gb]\n")
    # the figures of full checkpointing (the example leaves it out: searched since newuser35 item 6)
    path.write_text(
        path.read_text().replace("      method: qlora\n", "      method: qlora\n      gradient_checkpointing: full\n")
    )
    plan = plan_file(str(path))[1]
    assert [(p.nodes, p.owned_nodes, p.node.gpus) for p in plan.pools] == [(4, 0, 2)]
    assert [r for r in plan.deployments[0].reasons if "ruled out" in r] == [
        "buying more 4-GPU wrx90-workstation is ruled out: " + PSU_4X.format(w="3,382", dc="3,179", nics="")
    ]
    (free,) = [f.message for f in plan.findings if f.code == "inventory-free"]
    assert free == (
        "1 of 1 owned wrx90-workstation server(s) (4 x rtx-pro-6000-ws-96gb) left free; not used by tune: the "
        "layout needs 2 x 4-GPU wrx90-workstation, 1 owned free; the 1 more to buy would run over their PSUs: "
        + PSU_4X.format(w="3,382", dc="3,179", nics="")
    )


INF1 = f"""\
version: 1
name: inf-own
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 300
      requests_per_second: 60
hardware:
  gpus: [{PRO6000_WS}, {PRO6000}]
  provider: baremetal
  inventory:
    - platform: {WRX90}
      gpu: {PRO6000_WS}
      count: 1
"""


def test_a_split_onto_an_owned_server_rules_out_buying_more_not_the_owned_one(tmp_path: Path) -> None:
    """2 x TP2 on the owned 4-GPU WRX90 (Workstation Edition) and the rest on bought Server Edition servers (unpriced,
    so compared by the power of what they buy: one server, not three): the reasons say buying more 4-GPU WRX90 is
    ruled out (once per distinct draw), never that the server in use is."""
    path = tmp_path / "inf.yaml"
    path.write_text(INF1)
    plan = plan_file(str(path))[1]
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == [
        ("dell-xe7740", 1, 0),  # one chassis draws less than three of 2 cards each (R760xa draws more)
        (WRX90, 1, 1),
    ]
    # a draw each: without a fabric NIC, and with the one NIC a WRX90 with RDMA cards takes (review 9 M5; 29 W)
    # the second says why it draws more (newuser24 item 1)
    rdma = ", with 1 x {} fabric NICs (a replica spanning servers)"
    reasons = [r for r in plan.deployments[0].reasons if "ruled out" in r]
    assert len(reasons) == 2
    assert reasons[0] == "buying more 4-GPU wrx90-workstation is ruled out: " + PSU_4X.format(w="3,382", dc="3,179", nics="")
    nic = reasons[1].split("with 1 x ")[1].split(" fabric NICs")[0]
    assert reasons[1] == "buying more 4-GPU wrx90-workstation is ruled out: " + PSU_4X.format(
        w="3,411", dc="3,207", nics=rdma.format(nic)
    )


MI325X_70B = (
    "version: 1\nname: mi\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
    "    inference: {precision: fp8, max_context_tokens: 16384, requests_per_second: 20}\n"
    "hardware:\n  gpus: [mi325x-256gb]\n  provider: baremetal\n"
)


def test_mi325x_is_planned_on_the_xe9680_with_a_power_brake_warning(tmp_path: Path) -> None:
    # newuser24 item 1: 8 x MI325X summed at 11,018 W were ruled out on 3 of 6 x 3,200 W; the XE9680's 3+3
    # fault-tolerant redundancy (StorageReview) runs on all six (19,200 W) and power-brakes the GPUs past one lost.
    # newuser36 item 1: no published maximum for the build, so its sum x 1.257 (DGX B200: 14,300 W published over
    # 11,374 W summed, the most of the catalog's 8-GPU systems) = 13,852 W; 13,021 W DC needs 5 of the 6 PSUs
    path = tmp_path / "w.yaml"
    path.write_text(MI325X_70B)
    plan = plan_file(str(path))[1]
    assert [(p.node.platform_id, p.node.gpu_id, p.node.gpus, p.node.psu) for p in plan.pools] == [
        ("dell-xe9680-mi300x", "mi325x-256gb", 8, "6x 3200 W (3+3 fault-tolerant)")
    ]
    (brake,) = {f.message for f in plan.findings if f.code == "psu-power-brake"}
    drawn = (
        "draws 13,852 W at the wall (sum of components x 1.257, the most a published 8-GPU maximum is over its parts "
        "(dgx-b200)), a DC load of 13,021 W"
    )
    assert drawn in brake and "keeps full speed with up to 1 PSU(s) lost" in brake


def test_layouts_ruled_out_only_by_psus_get_a_psu_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # without fault-tolerant redundancy the same XE9680 (MI325X's one platform) draws 11,018 W with 8 cards over
    # 3 x 3,200 W: memory, precision and SLOs are not what blocks the plan, and the advice says what is
    strict = catalog.platforms()[XE9680_AMD]._replace(psu_fault_tolerant=False)
    monkeypatch.setitem(catalog.platforms(), XE9680_AMD, strict)
    path = tmp_path / "w.yaml"
    path.write_text(MI325X_70B)
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(path))
    assert str(caught.value).endswith(
        "to unblock: the servers that hold these GPUs draw more than their power supplies deliver; check the chassis' "
        "PSU rating where the catalog marks it believed, allow another platform, or fewer GPUs per server"
    )


def test_two_draws_of_one_platform_say_what_differs() -> None:
    # newuser24 item 1: 11,018 W and 11,252 W for one XE9680 build, the second with scale-out NICs for a spanning replica
    fabric = Nic("fabric", "connectx-7-400g-ib", "ConnectX-7", 8, 400.0, "infiniband", True)
    front = Nic("frontend", "connectx-6-dx-100g", "ConnectX-6 Dx", 1, 100.0, "ethernet", False)
    assert node_build_text((front,)) == ""
    assert node_build_text((fabric, front)) == "with 8 x connectx-7-400g-ib fabric NICs (a replica spanning servers)"
    platform, gpu = catalog.platforms()[XE7740], catalog.gpus()[PRO6000]
    found = psu_overload(platform, gpu, 8, NodePower(13_723, 12_900, *SUMMED), build=node_build_text((fabric, front)))
    assert found is not None
    assert found.message.startswith(
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 13,723 W at the wall (sum of components, with 8 x "
        "connectx-7-400g-ib fabric NICs (a replica spanning servers)), a DC load of 12,900 W, more than"
    )


OWNED_MI300X = """\
version: 1
name: colo
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 32768, avg_input_tokens: 2000,
                avg_output_tokens: 400, requests_per_second: 10, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - count: 2
      custom: {name: smc-mi300x, gpu: mi300x-192gb, gpus_per_server: 8, cpu: epyc-9654, cpu_sockets: 2, ram_gib: 2304,
               fabric_nic: connectx-7-400g-ib, fabric_nic_count: 8, psu_count: 6, psu_rating_w: 3000, psu_redundant: 3,
               rack_units: 8}
"""


def test_an_owned_servers_own_fabric_nics_are_not_said_to_be_for_a_spanning_replica(tmp_path: Path) -> None:
    # newuser77 item 13: 8 x TP1 replicas on one owned custom MI300X server with its 8 CX-7: the PSU warning counted
    # the NICs "(a replica spanning servers)", where none spans; they are the server's own, fitted whatever runs
    assert node_build_text(
        (Nic("fabric", "connectx-7-400g-ib", "ConnectX-7", 8, 400.0, "infiniband", True),), spanning=False
    ) == ("with 8 x connectx-7-400g-ib fabric NICs (the server's own)")
    path = tmp_path / "w.yaml"
    path.write_text(OWNED_MI300X)
    plan = plan_file(str(path))[1]
    assert [(d.tp, d.pp, d.replicas) for d in plan.deployments] == [(1, 1, 8)]
    (said,) = [f.message for f in plan.findings if f.code == "psu-headroom"]
    assert "with 8 x connectx-7-400g-ib fabric NICs (the server's own)), a DC load of" in said
    assert "spanning" not in said
