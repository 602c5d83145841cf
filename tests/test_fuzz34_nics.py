"""fuzz34 items 6, 7, 8 and 9d: the role a stated NIC can play, owned servers' fabric advice, a rented fleet's capex.

Item 6: a front-end 25 GbE NIC without GPUDirect RDMA stated as owned servers' GPU fabric, and an InfiniBand-only NIC
as their Ethernet front end, were taken without a word. The front end is refused at its field (one rule for an owned
catalog group and a custom server, :mod:`generator.workload.nic_pairs`); the fabric is a located
``fabric-without-rdma`` warning saying what is planned over it.
Item 7: ``fabric-switches-unpriced`` on servers all owned spoke of capex and "before buying".
Item 8: ``fabric_nic_count: 0`` and no ``frontend_nic`` on owned DGXs: a replica across them is planned over the
catalog's front end with no word; ``owned-frontend-assumed`` names it.
Item 9d: ``diff`` of a fleet rented whole against the same bought read capex "-" (not known) for the rented side.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InputError, MultipleInputError
from generator.fleet_diff import diff_plans
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload

DGX = """\
version: 1
name: big
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-405B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
  buy: false
  inventory:
    - platform: dgx-h100
      count: 2
{nics}outputs: [ansible]
"""
CUSTOM = """\
version: 1
name: lab
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - custom: {{name: lab-a40, gpu: a40-48gb, gpus_per_server: 2, ram_gib: 256, {nics}}}
      count: 1
outputs: [ansible]
"""
ROLE = "(SSH, Kubernetes, the API)"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return path


def _plan(tmp_path: Path, text: str) -> Plan:
    return plan_workload(load_workload(str(_write(tmp_path, text))))


def _found(plan: Plan, code: str) -> list[tuple[str, str, str]]:
    return [(f.level, f.path, f.message) for f in plan.findings if f.code == code]


def _nics(lines: str) -> str:
    return "".join(f"      {line}\n" for line in lines.splitlines())


# --- item 6: an InfiniBand-only front end is refused at its field, for both kinds of owned server ----------------

IB_FRONT = [
    pytest.param(
        DGX.format(nics=_nics("frontend_nic: connectx-7-400g-ib\nfrontend_nic_count: 2")),
        "w.yaml:14:21:",
        "hardware.inventory[0].frontend_nic: ",
        id="owned-group",
    ),
    pytest.param(
        CUSTOM.format(nics="frontend_nic: connectx-8-800g, frontend_nic_count: 1"),
        "w.yaml:11:",
        "hardware.inventory[0].custom.frontend_nic: ",
        id="custom-server",
    ),
]


@pytest.mark.parametrize(("text", "at", "field"), IB_FRONT)
def test_an_infiniband_only_front_end_is_refused_at_its_field(tmp_path: Path, text: str, at: str, field: str) -> None:
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(str(_write(tmp_path, text)))
    message = str(refused.value)
    nic = "connectx-7-400g-ib" if "dgx" in text else "connectx-8-800g"
    assert at in message and field in message, message
    assert (
        f"frontend_nic {nic} is an InfiniBand-only NIC: the front end carries the servers' IP over Ethernet {ROLE}, so "
        "name an Ethernet NIC (one of bluefield-3-dpu-2p-400g, bluefield-3-supernic-400g, connectx-6-dx-2p-100gbe, "
        "connectx-6-lx-2p-25gbe, connectx-7-2p-200gbe, connectx-7-2p-400g, connectx-7-400gbe); an InfiniBand NIC goes "
        "in fabric_nic"
    ) in message


# --- item 6: a fabric without GPUDirect RDMA is possible but slow: a located warning -----------------------------

SLOW_TAIL = (
    "but without RDMA each transfer between servers is staged through host memory and runs slower than timed; state an "
    "RDMA NIC (InfiniBand or RoCE) in {at}.fabric_nic where the servers have one, or fabric_nic_count: 0 where they "
    "have only front-end Ethernet"
)


def test_a_fabric_without_rdma_under_a_spanning_replica_says_what_is_planned_over_it(tmp_path: Path) -> None:
    plan = _plan(tmp_path, DGX.format(nics=_nics("fabric_nic: connectx-6-lx-2p-25gbe\nfabric_nic_count: 8")))
    ((level, path, message),) = _found(plan, "fabric-without-rdma")
    assert (level, path) == ("warning", "hardware.inventory[0].fabric_nic")
    assert message == (
        "pool chat_h100_sxm5_80gb: the GPU fabric stated for its 2 owned dgx-h100 server(s) is 8 x "
        "connectx-6-lx-2p-25gbe (ethernet, 25 Gb/s) each, 200 Gb/s a server without GPUDirect RDMA: chat runs TP8 x "
        "PP2 replicas of 16 GPUs across 8-GPU servers over it, planned at its line rate, "
        + SLOW_TAIL.format(at="hardware.inventory[0]")
    )


def test_a_custom_servers_fabric_without_rdma_follows_the_same_rule(tmp_path: Path) -> None:
    plan = _plan(tmp_path, CUSTOM.format(nics="fabric_nic: connectx-6-lx-2p-25gbe, fabric_nic_count: 1"))
    ((level, path, message),) = _found(plan, "fabric-without-rdma")
    assert (level, path) == ("warning", "hardware.inventory[0].custom.fabric_nic")
    assert message == (
        "pool chat_a40_48gb: the GPU fabric stated for its 1 owned lab-a40 server(s) is 1 x connectx-6-lx-2p-25gbe "
        "(ethernet, 25 Gb/s) each, 25 Gb/s a server without GPUDirect RDMA: no replica or job spans its servers now; "
        "one that did would be planned at its line rate, " + SLOW_TAIL.format(at="hardware.inventory[0].custom")
    )


@pytest.mark.parametrize(
    "nics", ["fabric_nic: connectx-7-400g-ib\nfabric_nic_count: 8", "fabric_nic: connectx-6-dx-2p-100gbe\nfabric_nic_count: 8"]
)
def test_an_rdma_fabric_is_no_warning(tmp_path: Path, nics: str) -> None:
    assert not _found(_plan(tmp_path, DGX.format(nics=_nics(nics))), "fabric-without-rdma")


# --- item 8: no fabric, and a front end not stated, under a replica across owned servers -------------------------


def test_no_fabric_and_an_assumed_front_end_under_a_spanning_replica_is_a_warning(tmp_path: Path) -> None:
    plan = _plan(tmp_path, DGX.format(nics=_nics("fabric_nic_count: 0")))
    ((dep_pool, tp, pp),) = [(d.pool, d.tp, d.pp) for d in plan.deployments]
    assert (tp, pp) == (8, 2)
    ((level, path, message),) = _found(plan, "owned-frontend-assumed")
    assert (level, path) == ("warning", "hardware.inventory[0].frontend_nic")
    assert message == (
        f"pool {dep_pool}: its 2 owned dgx-h100 server(s) have no GPU fabric (fabric_nic_count: 0), so work between "
        "them crosses their front end, which is assumed (2 x NVIDIA ConnectX-7 VPI dual-port QSFP112, 400 Gb/s "
        "InfiniBand / Ethernet (400 Gb/s) each, the catalog's dgx-h100 record), not read from the servers you own: chat "
        "runs TP8 x PP2 replicas of 16 GPUs across 8-GPU servers over it, and the plan holds only over it; state their "
        "real front end under hardware.inventory[0]: frontend_nic and frontend_nic_count"
    )
    assert not _found(plan, "owned-fabric-assumed")


def test_a_stated_front_end_is_no_warning(tmp_path: Path) -> None:
    nics = "fabric_nic_count: 0\nfrontend_nic: connectx-7-400gbe\nfrontend_nic_count: 2"
    assert not _found(_plan(tmp_path, DGX.format(nics=_nics(nics))), "owned-frontend-assumed")


# --- item 7: owned servers buy no switches: check the site's fabric joins them -----------------------------------


def test_the_fabric_switch_advice_for_servers_all_owned_is_to_check_the_site(tmp_path: Path) -> None:
    plan = _plan(tmp_path, DGX.format(nics=""))
    ((level, _, message),) = _found(plan, "fabric-switches-unpriced")
    assert level == "info"
    assert message == (
        "pool chat_h100_sxm5_80gb: chat spans its 2 servers over their GPU fabric (8 x NVIDIA ConnectX-7 single-port "
        "OSFP, 400 Gb/s NDR InfiniBand each, 16 in all): the plan assumes your site's fabric connects them: check that "
        "its switches join these servers on those links, non-blocking (their power and rack units are not in the plan "
        "either)"
    )
    assert "capex" not in message and "buying" not in message


# --- item 9d: a fleet rented whole has capex $0, known -----------------------------------------------------------


def _totals(capex: float | None, month: float | None) -> dict[str, object]:
    return {
        "totals": {
            "gpus": 8,
            "nodes": 1,
            "racks": 0,
            "power_w": 10200,
            "usd_per_month": month,
            "capex_usd": capex,
            "opex_usd_per_month": month,
        },
        "pools": [],
        "deployments": [],
    }


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # rented whole (no capex, a known month) against bought: 0 -> 1,080,000
        ((None, 73000.0), (1080000.0, 11131.32), {"old": 0.0, "new": 1080000.0, "delta": 1080000.0}),
        ((1080000.0, 11131.32), (None, 73000.0), {"old": 1080000.0, "new": 0.0, "delta": -1080000.0}),
        # a side with an unpriced pool (no month): its capex stays not known
        ((None, None), (1080000.0, 11131.32), {"old": None, "new": 1080000.0, "delta": None}),
    ],
)
def test_a_rented_fleets_capex_is_zero_in_a_diff(
    old: tuple[float | None, float | None], new: tuple[float | None, float | None], expected: dict[str, object]
) -> None:
    assert diff_plans(_totals(*old), _totals(*new))["totals"]["capex_usd"] == expected
