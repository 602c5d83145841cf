"""newuser47 (a university lab's owned mixed fleet): items 1, 2, 3 (in part), 5, 6 and 7.

Item 1: an owned catalog platform's GPUs a server are stated (``gpus_per_server``, one of the platform's counts); a
2-GPU workstation was planned with 4 and Ansible placed a replica on GPUs it does not have. Item 2: a job across owned
servers over 25 GbE was planned at a 13 h deadline and refused at 16-20 h (the wider data parallelism the time between
nodes needs was never tried, and the gate counted a dual-port NIC's two ports where the step was timed over one).
Item 3: no parameter offload is advised where the search offloaded them. Item 5: ``estimate`` names the GPU it sized.
Item 6: ``hardware.gpus`` / ``platforms`` with ``buy: false`` are unused. Item 7: ``nvme-short`` of a custom server
stands at its ``nvme_tb``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import render_file
from generator.errors import InfeasibleError, InputError
from generator.planner import plan_workload
from generator.planner.inventory import owned_groups
from generator.planner.nodes import unfabricated_link
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.helpers import ansible_reader, run_estimate

WORKSTATION = """\
version: 1
name: uni-lab-cat
deployments:
  - name: students-chat
    model: Qwen/Qwen2.5-32B-Instruct
    inference: {precision: bf16, max_context_tokens: 16384, avg_input_tokens: 1000, avg_output_tokens: 400,
                requests_per_second: RATE, slo: {ttft_p95_ms: 3000, tpot_ms: 60}}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - {platform: wrx90-workstation, gpu: rtx-6000-ada-48gb, ram_gib: 128, count: 1COUNT, hosts: [{name: ws-01}]}
outputs: [ansible, kubernetes]
"""

#: The 70B QLoRA job on four owned 2 x L40S servers joined by one 25 GbE port each.
L40S_JOB = """\
version: 1
name: uni-lab
deployments:
  - name: nightly-qlora-70b
    model: meta-llama/Llama-3.1-70B-Instruct
    platform: l40s-box
    training: {method: qlora, lora_rank: 16, sequence_length: 4096, global_batch_size: 32,
               dataset_tokens: 50000000, epochs: 1, deadline_hours: DEADLINE}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - custom: {name: l40s-box, gpu: l40s-48gb, gpus_per_server: 2, cpu: epyc-9354, ram_gib: 256,
               frontend_nic: connectx-6-lx-2p-25gbe, frontend_nic_count: 1}
      count: 4
      hosts: [{name: l40s-01}, {name: l40s-02}, {name: l40s-03}, {name: l40s-04}]
outputs: [ansible]
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _plan(tmp_path: Path, text: str) -> Plan:
    return plan_workload(load_workload(str(_write(tmp_path, text))))


def _workstation(rate: float, count: str = ", gpus_per_server: 2") -> str:
    return WORKSTATION.replace("RATE", f"{rate:g}").replace("COUNT", count)


def test_an_owned_workstation_of_two_gpus_is_planned_and_placed_with_two(tmp_path: Path) -> None:
    path = _write(tmp_path, _workstation(0.2))
    assert [g.key for g in owned_groups(load_workload(str(path)).workload)] == [("wrx90-workstation", "rtx-6000-ada-48gb", 2)]
    files = render_file(str(path))
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    (chat,) = plan.deployments
    assert (pool.node.gpus, pool.nodes, pool.owned_nodes, chat.tp, chat.replicas) == (2, 1, 1, 2, 1)
    assert "gpus" not in (pool.build_assumed or ())  # stated, not assumed
    inventory = ansible_reader().load(files["ansible/inventory.yml"])
    host = inventory["all"]["children"][pool.name]["hosts"]["ws-01"]
    assert [r["gpus"] for r in host["specgen_replicas"]] == [[0, 1]]  # no GPU 2 or 3 on this machine
    (group_vars,) = [t for n, t in files.items() if n == f"ansible/group_vars/{pool.name}.yml"]
    assert ansible_reader().load(group_vars)["specgen_gpu"]["count"] == 2


def test_an_unstated_count_is_the_largest_and_said_assumed(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _workstation(0.2, count=""))
    (pool,) = plan.pools
    assert pool.node.gpus == 4 and pool.build_assumed is not None and pool.build_assumed[0] == "gpus"
    (assumed,) = [f.message for f in plan.findings if f.code == "owned-build-assumed"]
    assert "the owned wrx90-workstation's 4 GPUs (wrx90-workstation takes 1, 2, 4), CPU" in assumed
    assert "(gpus_per_server, ram_gib, fabric_nic / fabric_nic_count, frontend_nic)" in assumed


def test_a_rate_the_two_gpus_do_not_hold_names_the_owned_count_layout(tmp_path: Path) -> None:
    """The refusal named a layout of 4-GPU workstations, which the lab does not own."""
    with pytest.raises(InfeasibleError) as caught:
        _plan(tmp_path, _workstation(0.5))
    assert (
        "rtx-6000-ada-48gb on wrx90-workstation: 2 x TP2 on 2 x wrx90-workstation (2 x rtx-6000-ada-48gb) needs 2 "
        "servers; 1 owned are free and hardware.buy is false"
    ) in str(caught.value)


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (", gpus_per_server: 3", "3 GPUs a server: wrx90-workstation takes 1, 2, 4 (describe the server under custom:"),
        (", gpus_per_server: 8", "8 GPUs a server: wrx90-workstation takes 1, 2, 4 (describe"),
    ],
)
def test_a_count_the_platform_does_not_take_is_refused_at_its_field(tmp_path: Path, count: str, message: str) -> None:
    text = _workstation(0.2, count)
    with pytest.raises(InputError) as caught:
        load_workload(str(_write(tmp_path, text)))
    line = text.splitlines()[11]
    column = line.index("gpus_per_server: ") + len("gpus_per_server: ") + 1  # at its value
    assert f"w.yaml:12:{column}: hardware.inventory[0].gpus_per_server: {message}" in str(caught.value)


def test_a_custom_server_states_its_count_under_custom(tmp_path: Path) -> None:
    text = L40S_JOB.replace("DEADLINE", "20").replace("      count: 4\n", "      count: 4\n      gpus_per_server: 2\n")
    with pytest.raises(InputError, match=r"hardware\.inventory\[0\]\.gpus_per_server: a custom server states its GPUs"):
        load_workload(str(_write(tmp_path, text)))


@pytest.mark.parametrize("deadline", [13, 16, 18, 20])
def test_a_later_deadline_never_loses_the_layout_across_servers(tmp_path: Path, deadline: int) -> None:
    """DP8 over the four servers takes 6.3 h with its 44.85 s a step between nodes; at 16-20 h the search sized DP4
    from the compute, found 18.1 h with the time between nodes, and tried nothing wider."""
    plan = _plan(tmp_path, L40S_JOB.replace("DEADLINE", str(deadline)))
    (job,) = plan.deployments
    assert (job.details["data_parallel"], plan.pools[0].nodes) == (8, 4)
    assert any("over 1 x 25 Gb/s front-end Ethernet: 44.85 s between nodes" in r for r in job.reasons)


def test_the_gate_between_nodes_reads_the_link_the_step_is_timed_over() -> None:
    """One port a NIC: a dual-port 25 GbE NIC is 25 Gb/s between nodes, as the step is timed (the gate said 50)."""
    from generator.planner.custom import custom_platform
    from generator.workload.models import CustomServer

    box = custom_platform(
        CustomServer(
            name="l40s-box",
            gpu="l40s-48gb",
            gpus_per_server=2,
            ram_gib=256,
            frontend_nic="connectx-6-lx-2p-25gbe",
            frontend_nic_count=1,
        )
    )
    assert box.network_gbps_total == 50  # both ports, the platform's aggregate
    assert unfabricated_link(box) == (25.0, "1 x 25 Gb/s front-end Ethernet")


def test_no_parameter_offload_is_advised_where_they_were_offloaded(tmp_path: Path) -> None:
    text = L40S_JOB.replace("sequence_length: 4096, global_batch_size: 32", "sequence_length: 131072, global_batch_size: 8")
    with pytest.raises(InfeasibleError) as caught:
        _plan(tmp_path, text.replace("DEADLINE", "30").replace("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B"))
    said = str(caught.value)
    assert "with the parameters offloaded" in said and "parameter offload (offload_params: true)" not in said


def test_estimate_names_the_gpu_a_prefix_reads_as() -> None:
    name = catalog.gpus()["rtx-6000-ada-48gb"].name
    for extra in ((), ("--ram-gib", "64")):
        code, out = run_estimate("meta-llama/Llama-3.1-8B", "--gpu", "rtx-6000", *extra)
        assert code == 0
        assert out.splitlines()[1] == f"  gpu          rtx-6000-ada-48gb: {name}"


@pytest.mark.parametrize("key", ["gpus: [h100-sxm5-80gb]", "platforms: [dgx-h100]"])
def test_what_the_plan_buys_is_unused_when_it_buys_nothing(tmp_path: Path, key: str) -> None:
    plan = _plan(tmp_path, _workstation(0.2).replace("  buy: false\n", f"  buy: false\n  {key}\n"))
    field = f"hardware.{key.partition(':')[0]}"
    (unused,) = [f for f in plan.findings if f.code == "setting-unused"]
    assert (unused.level, unused.path) == ("warning", field)
    assert unused.message.startswith(f"{field} chooses what the plan buys or rents, and hardware.buy is false")


def test_a_custom_servers_missing_drives_are_said_at_its_nvme_field(tmp_path: Path) -> None:
    text = L40S_JOB.replace("DEADLINE", "40")
    plan = _plan(tmp_path, text)
    (short,) = [f for f in plan.findings if f.code == "nvme-short"]
    assert short.path == "hardware.inventory[0].custom.nvme_tb"
    assert short.message.endswith(
        "wanted: state its drives at hardware.inventory[0].custom.nvme_tb (left out, nvme_tb is 0: no data drives)"
    )
