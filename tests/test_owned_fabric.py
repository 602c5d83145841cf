"""Owned catalog servers state their real NICs; an assumed fabric under a multi-node job is a warning (newuser42).

Item 2: two owned Dell R760xa with 4 x L40S (one 25 GbE port each) were given the fabric specgen would buy, 4 x
ConnectX-7 400G NDR InfiniBand, and an 8B full fine-tune was planned over it across both servers at capex $0 with two
info lines. The inventory now says what the servers have (``fabric_nic`` / ``fabric_nic_count``, ``fabric_nic_count:
0`` for none, ``frontend_nic``), the planner times and rules out layouts over it, and where it is not said a job
spanning the owned servers is an ``owned-fabric-assumed`` warning naming the NICs, the time they imply and the field.

Item 10: the Ansible group vars of owned catalog servers list the parts the plan assumed (``specgen_build_assumed``),
read back through ``ansible-inventory`` as Ansible sees them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.errors import InputError, MultipleInputError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render import render_plan
from generator.workload import load_workload
from tests.helpers import ansible_reader

BASE = """\
version: 1
name: own-fabric
deployments:
  - name: tune-8b-full
    model: meta-llama/Llama-3.1-8B
    training:
      method: full
      framework: deepspeed
      zero_stage: 3
      sequence_length: 4096
      global_batch_size: 128
      dataset_tokens: 1000000000
      epochs: 3
      deadline_hours: 96
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dell-r760xa
      gpu: l40s-48gb
      count: 2
{nics}      hosts: [{{name: l40s-01}}, {{name: l40s-02}}]
    - platform: supermicro-as-4124go-nart
      gpu: a100-sxm4-80gb
      count: 1
      hosts: [{{name: a100-01}}]
outputs: [ansible]
"""
#: The line of the R760xa group's first stated NIC field (the line after ``count: 2``).
NIC_LINE = 22
L40S_POOL, A100_POOL = "tune_8b_full_l40s_48gb", "tune_8b_full_a100_sxm4_80gb"


#: The job pinned to the two owned L40S servers, for the tests of a two-node job over their fabric. fix89: a job alone on
#: owned servers is charged its runs' energy, and one A100 server (35.1 h x 6.5 kW, about $46 a run at PUE 1.56 and
#: $0.13/kWh) now ranks before the two R760xa (62.8 h x 2 x 2.59 kW, about $66), whose colocation is paid either way.
#: acc107: 31.6 h / $41.63 and 52.4 h / about $55 before (eager elementwise operators / NF4 0.5).
ON_L40S = "    platform: dell-r760xa\n"


def _write(tmp_path: Path, nics: str = "", pin: str = "") -> Path:
    path = tmp_path / "w.yaml"
    text = BASE.format(nics="".join(f"      {line}\n" for line in nics.splitlines()))
    path.write_text(text.replace("  - name: tune-8b-full\n", f"  - name: tune-8b-full\n{pin}", 1))
    return path


def _plan(tmp_path: Path, nics: str = "", pin: str = "") -> Plan:
    return plan_workload(load_workload(str(_write(tmp_path, nics, pin))))


def _codes(plan: Plan) -> dict[str, list[tuple[str, str, str]]]:
    out: dict[str, list[tuple[str, str, str]]] = {}
    for f in plan.findings:
        out.setdefault(f.code, []).append((f.level, f.path, f.message))
    return out


# --- item 2: the fabric the plan times and rules out by --------------------------------------------------------


def test_an_assumed_fabric_under_a_two_node_job_is_a_warning_with_its_time_and_field(tmp_path: Path) -> None:
    plan = _plan(tmp_path, pin=ON_L40S)
    (dep,) = plan.deployments
    assert dep.pool == L40S_POOL  # the job pinned to the owned L40S servers, over the assumed fabric
    ((level, path, message),) = _codes(plan)["owned-fabric-assumed"]
    assert (level, path) == ("warning", "hardware.inventory[0].fabric_nic")
    # the NICs assumed, the time they imply (and what the front end would take instead), the field to state
    assert "4 x NVIDIA ConnectX-7" in message and "400 Gb/s NDR InfiniBand" in message
    # newuser111: each 400 Gb/s NIC moves at most an L40S's PCIe Gen4 x16 (252 Gb/s): 337.27 GB per GPU over 1,008 Gb/s
    # takes 3.284 s (2.294 s at the 1,600 Gb/s of ports before); at 25 Gb/s 40.3 times that (per-collective latency aside)
    assert (
        "3.284 s between nodes a step over 4 x 400 Gb/s GPU fabric (252 Gb/s each: the PCIe Gen4 x16 between "
        "l40s-48gb and the NIC)" in message
    )
    assert "over the front end alone, 25 Gb/s, about 132 s" in message
    # acc107: 52.4 -> 62.8 h (eager elementwise operators / NF4 0.5);
    # 53.1 h before full checkpointing recomputed the blocks only (trainacc)
    # acc113: 62.8 -> 63.4 h (the eager loss's passes over the logits); acc120: 63.4 -> 62.6 h, the L40S at its sibling
    # L40's measured GDDR6 stream share on the step's memory-bound kernels (NF4 dequantization, eager elementwise)
    # acc198: 62.6 -> 60.0 h, the Trainer family's non-reentrant recompute leaves each block's down projection out
    assert "60.0 h a run" in message
    assert "hardware.inventory[0]: fabric_nic and fabric_nic_count, or fabric_nic_count: 0" in message


def test_no_fabric_stated_rules_out_the_two_node_layout_and_the_job_moves(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "fabric_nic_count: 0")
    (dep,) = plan.deployments
    # one 8-GPU A100 server instead (newuser42: 32.1 h before FlashAttention-2's A100 share was fitted in its range)
    assert dep.pool == A100_POOL
    # acc107: 31.58 -> 35.12 h (eager elementwise operators / NF4 0.5): the same owned A100 server chosen
    # acc113: 35.12 -> 35.40 h (the eager loss's passes over the logits): the same server
    assert dep.details["hours"] == pytest.approx(35.40, abs=0.05)
    codes = _codes(plan)
    assert "owned-fabric-assumed" not in codes
    (free,) = [m for _, _, m in codes["inventory-free"] if "dell-r760xa" in m]
    assert "past the 96 h deadline" in free  # timed over the front end, not a fabric they lack


def test_a_stated_fabric_is_what_the_step_is_timed_over_and_what_the_node_lists(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "fabric_nic: connectx-6-dx-2p-100gbe\nfabric_nic_count: 1", ON_L40S)
    (dep,) = plan.deployments
    (pool,) = plan.pools
    assert dep.pool == pool.name == L40S_POOL
    assert dep.details["inter_node_link"] == "1 x 100 Gb/s GPU fabric"
    # 337.27 GB per GPU over 100 Gb/s: 16 x the 1.72 s of bandwidth time at 1,600 Gb/s, plus latency
    assert dep.details["comm_between_nodes_s_per_step"] > 20 * 1.0
    fabric = [(n.nic_id, n.count) for n in pool.node.nics if n.role == "fabric"]
    assert fabric == [("connectx-6-dx-2p-100gbe", 1)]
    codes = _codes(plan)
    assert "owned-fabric-assumed" not in codes and "fabric-unpriced" not in codes  # owned NICs: nothing to buy
    assert pool.build_assumed == ("gpus", "cpu", "ram", "nvme", "frontend")


# --- located errors ----------------------------------------------------------------------------------------------

BAD = [
    pytest.param(
        "fabric_nic: connectx-9\nfabric_nic_count: 1",
        (NIC_LINE, "hardware.inventory[0].fabric_nic", "unknown NIC 'connectx-9'"),
        id="unknown-fabric-nic",
    ),
    pytest.param(
        "frontend_nic: cx6-25g",
        (NIC_LINE, "hardware.inventory[0].frontend_nic", "unknown NIC 'cx6-25g'"),
        id="unknown-frontend-nic",
    ),
    pytest.param(
        "fabric_nic: connectx-7-400g-ib",
        (
            NIC_LINE,
            "hardware.inventory[0].fabric_nic",
            "fabric_nic connectx-7-400g-ib is given: say how many each server has in fabric_nic_count (at least 1; 0 with "
            "no fabric_nic: the servers have no GPU fabric)",
        ),
        id="nic-without-count",
    ),
    pytest.param(
        "fabric_nic: connectx-7-400g-ib\nfabric_nic_count: 0",
        (
            NIC_LINE + 1,
            "hardware.inventory[0].fabric_nic_count",
            "fabric_nic connectx-7-400g-ib is given: say how many each server has in fabric_nic_count (at least 1; 0 with "
            "no fabric_nic: the servers have no GPU fabric)",
        ),
        id="nic-with-count-0",
    ),
    pytest.param(
        "fabric_nic_count: 2",
        (
            NIC_LINE,
            "hardware.inventory[0].fabric_nic_count",
            "2 fabric NIC(s) counted but no fabric_nic named (0: the servers have no GPU fabric)",
        ),
        id="count-without-nic",
    ),
    pytest.param(
        "fabric_nic: connectx-7-400g-ib\nfabric_nic_count: 5",
        (
            NIC_LINE + 1,
            "hardware.inventory[0].fabric_nic_count",
            "5 fabric NICs: a dell-r760xa server takes at most 4 (one a GPU, 4 in its 4-GPU build)",
        ),
        id="more-nics-than-the-server-takes",
    ),
    pytest.param(
        "frontend_nic_count: 2",
        (NIC_LINE, "hardware.inventory[0].frontend_nic_count", "2 front-end NIC(s) counted but no frontend_nic named"),
        id="frontend-count-without-nic",
    ),
]


@pytest.mark.parametrize(("nics", "expected"), BAD)
def test_a_bad_nic_statement_is_a_located_error(tmp_path: Path, nics: str, expected: tuple[int, str, str]) -> None:
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(str(_write(tmp_path, nics)))
    line, field, words = expected
    text = str(refused.value)
    assert f"w.yaml:{line}:" in text and f"{field}: " in text and words in text, text


def test_two_groups_of_one_kind_must_state_the_same_nics(tmp_path: Path) -> None:
    text = BASE.format(nics="      fabric_nic_count: 0\n") + ""
    text = text.replace(
        "outputs: [ansible]\n",
        "    - platform: dell-r760xa\n      gpu: l40s-48gb\n      count: 1\noutputs: [ansible]\n",
    )
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(str(path))
    assert "w.yaml:28:" in str(refused.value) and "hardware.inventory[0] owns dell-r760xa servers" in str(refused.value)


def test_a_custom_server_names_its_nics_under_custom(tmp_path: Path) -> None:
    text = BASE.format(nics="").replace(
        "    - platform: supermicro-as-4124go-nart\n      gpu: a100-sxm4-80gb\n",
        "    - custom: {gpu: a40-48gb, gpus_per_server: 4, ram_gib: 256}\n      fabric_nic_count: 0\n",
    )
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(str(path))
    assert "hardware.inventory[1].fabric_nic_count: a custom server names its NICs under 'custom.fabric_nic_count'" in str(
        refused.value
    )


# --- item 10: the group vars say what was assumed, as ansible-inventory reads them -----------------------------


def _ansible_inventory(tmp_path: Path, files: dict[str, str]) -> dict[str, Any]:
    """``ansible-inventory --list`` of the rendered inventory and group vars, hermetic (nothing read from $HOME)."""
    for rel, text in files.items():
        if rel.startswith("ansible/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    for sub in ("home", "tmp"):
        (tmp_path / sub).mkdir(exist_ok=True)
    (tmp_path / "ansible.cfg").write_text("")
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(tmp_path / "ansible.cfg"),
        "ANSIBLE_HOME": str(tmp_path / "home"),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_INVENTORY_ENABLED": "yaml",
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
    }
    done = subprocess.run(
        ["ansible-inventory", "-i", str(tmp_path / "ansible" / "inventory.yml"), "--list"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    data: dict[str, Any] = json.loads(done.stdout)
    return data


HOST_VARS = [
    pytest.param("", ["gpus", "cpu", "ram", "nvme", "fabric", "frontend"], id="nothing-stated"),
    pytest.param(
        "fabric_nic: connectx-6-dx-2p-100gbe\nfabric_nic_count: 1", ["gpus", "cpu", "ram", "nvme", "frontend"], id="fabric"
    ),
    pytest.param(
        "fabric_nic: connectx-6-dx-2p-100gbe\nfabric_nic_count: 1\nfrontend_nic: connectx-6-lx-2p-25gbe",
        ["gpus", "cpu", "ram", "nvme"],
        id="fabric-and-front-end",
    ),
]


@pytest.mark.parametrize(("nics", "assumed"), HOST_VARS)
def test_owned_hosts_see_the_parts_assumed_in_their_group_vars(tmp_path: Path, nics: str, assumed: list[str]) -> None:
    loaded = load_workload(str(_write(tmp_path, nics, ON_L40S)))
    plan = plan_workload(loaded)
    files = render_plan(plan, loaded.workload)
    group_vars = ansible_reader().load(files[f"ansible/group_vars/{L40S_POOL}.yml"])
    assert group_vars["specgen_build_assumed"] == assumed
    listed = {n["role"] for n in group_vars["specgen_network"]["nics"]}
    # every NIC role assumed is one the vars state
    assert {"fabric", "frontend"} & set(assumed) <= listed
    hostvars = _ansible_inventory(tmp_path / "tree", files)["_meta"]["hostvars"]
    for host in ("l40s-01", "l40s-02"):
        # strings reach Ansible as !unsafe (never templated): --list writes them as {"__ansible_unsafe": ...}
        seen = [item["__ansible_unsafe"] for item in hostvars[host]["specgen_build_assumed"]]
        assert seen == assumed


@pytest.mark.parametrize(
    ("code", "nodes", "owned", "wider"),
    [
        ("no-gpu-fabric", 3, 2, True),
        ("no-gpu-fabric", 2, 2, False),  # the owned servers' own layout: their link rules it out
        ("no-gpu-fabric", 1, 2, False),
        ("no-gpu-fabric", 0, 0, False),  # nothing recorded
        ("psu-over-capacity", 3, 2, False),
        ("owned-short", 3, 2, False),
    ],
)
def test_one_rule_for_a_fabric_layout_wider_than_the_owned_servers(code: str, nodes: int, owned: int, wider: bool) -> None:
    """review78 item 6: the refusal's network reason and plan's left-free reasons share ``Blocked.wider_than_owned``."""
    from generator.planner.blocked import Blocked

    assert Blocked("h100-sxm5-80gb", "p", code, "why", 8, nodes, owned).wider_than_owned is wider
