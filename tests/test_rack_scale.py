"""A rack-scale system (GB200 NVL72) is bought, powered and racked as one node but rendered as its Linux hosts.

NVIDIA GB200 NVL72: 18 compute trays of 4 GPUs per rack, each tray its own host (platforms.json ``nodes`` 18,
``gpus_per_node`` 4; NVIDIA DGX GB200 user guide, https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html).
The workload (examples/gb200-nvl72-405b.yaml, Llama-3.1-405B bf16 at 20 req/s) needs 2 racks: 36 hosts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator import catalog
from generator.calculator.report import plan_text
from generator.errors import InfeasibleError, InputError
from generator.planner import plan_workload
from generator.planner.multi_host import COMPUTE_DOMAIN_URL, IMEX_URL, hosts_per_replica
from generator.render import render_plan
from generator.render.hosts import host_node
from generator.workload import load_workload
from tests.helpers import ansible_reader

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gb200-nvl72-405b.yaml"
POOL = "llama405_gb200_186gb"


@pytest.fixture(scope="module")
def rendered() -> tuple[object, dict[str, str]]:
    loaded = load_workload(str(EXAMPLE))
    plan = plan_workload(loaded)
    return plan, render_plan(plan, loaded.workload)


def test_plan_keeps_systems_per_rack(rendered: tuple[object, dict[str, str]]) -> None:
    plan, _ = rendered
    pool = plan.pools[0]  # type: ignore[attr-defined]
    assert (pool.nodes, pool.racks, pool.node.gpus, pool.node.hosts, pool.hosts) == (2, 2, 72, 18, 36)
    assert pool.node.power_w == 120000  # the system's published figure, per rack
    assert pool.node.ram_gib is None  # the catalog's ram_gib is null: nothing invented


def test_hosts_in_terraform_ansible_and_kubeadm(rendered: tuple[object, dict[str, str]]) -> None:
    _, files = rendered
    tf = json.loads(files["terraform/specgen.auto.tfvars.json"])["gpu_pools"][POOL]
    assert (tf["node_count"], tf["gpus_per_node"], tf["cpu_cores"]) == (36, 4, 144)  # 2 x Grace x 72 cores per tray
    assert tf["rack_scale"] == {"systems": 2, "hosts_per_system": 18, "nvlink_domain_gpus": 72, "power_w_per_system": 120000}
    assert tf["power_w_per_node"] is None and tf["ram_gib"] is None
    hosts = ansible_reader().load(files["ansible/hosts.yml.example"])["all"]["children"][POOL]["hosts"]
    assert len(hosts) == 36 and "llama405-gb200-186gb-36" in hosts
    # each tray stands in its system's rack (newuser30 item 5): 18 in rack-01, 18 in rack-02
    assert [h["specgen_rack"] for h in hosts.values()] == ["rack-01"] * 18 + ["rack-02"] * 18
    group = ansible_reader().load(files[f"ansible/group_vars/{POOL}.yml"])
    assert group["specgen_gpu"]["count"] == 4
    # 4 fabric CX-7s and 2 BlueField-3 (storage / management) per tray: the DGX GB200 user guide (newuser36 item 4)
    assert [n["count"] for n in group["specgen_network"]["nics"]] == [4, 2]
    assert group["specgen_ram_gib"] is None
    # 36 Grace CPUs per rack (platforms.json cpu.sockets), 2 per tray: the description follows the 144 cores
    cpu = group["specgen_cpu"]
    assert (cpu["description"], cpu["cores"]) == ("2x NVIDIA Grace CPU (in GH200 / GB200 superchips)", 144)
    assert (group["specgen_power"]["node_w"], group["specgen_power"]["heat_btu_per_h"]) == (None, None)
    assert group["specgen_system"]["hosts_per_system"] == 18 and group["specgen_system"]["nvlink_domain_gpus"] == 72
    assert f"kubeadm/join-{POOL}.yaml" in files  # 36 hosts join a cluster: not a single-host plan


def test_unsourced_ram_reads_the_same_everywhere(rendered: tuple[object, dict[str, str]]) -> None:
    """The catalog has no RAM figure for a GB200 tray: spec.json null, the plan text and SPEC.md "unsourced"."""
    plan, files = rendered
    (pool,) = json.loads(files["spec.json"])["plan"]["pools"]
    assert (pool["node"]["ram_gib"], pool["node"]["cpu"]) == (None, "36x NVIDIA Grace CPU (in GH200 / GB200 superchips)")
    text = plan_text(plan)  # type: ignore[arg-type]
    assert "36x NVIDIA Grace CPU (in GH200 / GB200 superchips), RAM unsourced," in text and "GiB RAM" not in text


def test_no_dimm_line_for_soldered_memory(rendered: tuple[object, dict[str, str]]) -> None:
    _, files = rendered
    spec = files["SPEC.md"]
    assert "per channel" not in spec and "DIMMs)" in spec
    assert "capacity unsourced" in spec and "| unsourced |" in spec
    assert "| 2 (36 hosts) |" in spec


def test_xe8640_is_a_4gpu_hgx_board() -> None:
    """Dell's design guide lists the XE8640 with at most 4 H100 SXM: the HGX H100 4-GPU board, not hgx-8gpu."""
    xe8640 = catalog.platforms()["dell-xe8640"]
    assert (xe8640.kind, xe8640.gpu_counts, xe8640.hosts) == ("hgx-4gpu", (4,), 1)


def test_provisioning_allocates_every_tray(tmp_path: Path) -> None:
    """MAAS allocates and Cluster API scales Linux hosts: 36 trays of 4 GPUs and 144 cores, not 2 racks."""
    path = tmp_path / "gb200.yaml"
    path.write_text(EXAMPLE.read_text() + "provisioning:\n  tools: [maas]\n")
    loaded = load_workload(str(path))
    files = render_plan(plan_workload(loaded), loaded.workload)
    path.write_text(EXAMPLE.read_text() + "provisioning:\n  tools: [capi]\n")  # maas with capi is refused (newuser57)
    loaded = load_workload(str(path))
    files.update(render_plan(plan_workload(loaded), loaded.workload))
    maas = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    assert len(maas) == 36
    assert {(m["allocate_params"]["min_cpu_count"], m["allocate_params"]["tags"][1]) for m in maas.values()} == {(144, "gpus-4")}
    deployment = YAML(typ="safe").load(files["provisioning/cluster-api/machinedeployment-llama405-gb200-186gb.yaml"])
    assert deployment["spec"]["replicas"] == 36


def test_owned_racks_name_every_tray(tmp_path: Path) -> None:
    """An owned GB200 NVL72 names its 18 trays per rack: 2 racks take 36 names (one per Linux host), 37 are refused."""
    names = [f"gb-r{rack}-t{tray:02d}" for rack in (1, 2) for tray in range(1, 19)]
    inventory = "  inventory:\n    - platform: gb200-nvl72\n      gpu: gb200-186gb\n      count: 2\n      hosts:\n"
    path = tmp_path / "gb200.yaml"
    listed = inventory + "".join(f"        - name: {n}\n" for n in names)
    anchor = "  rack_power_kw: 130\n"
    path.write_text(EXAMPLE.read_text().replace(anchor, anchor + listed))
    loaded = load_workload(str(path))
    files = render_plan(plan_workload(loaded), loaded.workload)
    assert "ansible/hosts.yml.example" not in files  # every host is named: no placeholders to fill in
    hosts = ansible_reader().load(files["ansible/inventory.yml"])["all"]["children"][POOL]["hosts"]
    assert list(hosts) == names
    assert {name: h["specgen_rack"] for name, h in hosts.items()} == {n: f"rack-0{n[4]}" for n in names}
    spec = json.loads(files["spec.json"])["plan"]
    (pool,) = spec["pools"]
    assert (pool["owned_nodes"], pool["owned_hosts"]) == (2, names)  # the plan's allocation: 18 trays per rack
    (owned,) = spec["totals"]["inventory"]
    assert (owned["used"], owned["free"], owned["free_hosts"]) == (2, 0, [])
    path.write_text(EXAMPLE.read_text().replace(anchor, anchor + listed + "        - name: gb-r3-t01\n"))
    with pytest.raises(InputError, match=r"37 hosts listed for 2 systems of 18 hosts each \(at most 36"):
        load_workload(str(path))


def test_an_unused_owned_rack_leaves_its_trays_free(tmp_path: Path) -> None:
    """3 owned racks, 2 used: the plan names the first 36 trays on the pool and the third rack's 18 as free."""
    names = [f"gb-r{rack}-t{tray:02d}" for rack in (1, 2, 3) for tray in range(1, 19)]
    inventory = "  inventory:\n    - platform: gb200-nvl72\n      gpu: gb200-186gb\n      count: 3\n      hosts:\n"
    listed = inventory + "".join(f"        - name: {n}\n" for n in names)
    anchor = "  rack_power_kw: 130\n"
    path = tmp_path / "gb200.yaml"
    path.write_text(EXAMPLE.read_text().replace(anchor, anchor + listed) + "provisioning:\n  tools: [maas]\n")
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    (pool,) = plan.pools
    assert (pool.nodes, pool.owned_nodes, pool.owned_hosts) == (2, 2, tuple(names[:36]))
    (owned,) = plan.totals["inventory"]
    assert (owned["used"], owned["free"], owned["free_hosts"]) == (2, 1, names[36:])
    (free,) = [f for f in plan.findings if f.code == "inventory-free"]
    # fix147 (newuser84 item 4): the free rack's colocation, 120 kW x $184/kW-month = $22,080
    assert free.message == (
        "1 of 3 owned gb200-nvl72 server(s) (72 x gb200-186gb) left free: "
        + ", ".join(names[36:])
        + " (Ansible group free_nodes); the free ones' colocation, $22,080 a month, is paid whether they run or not "
        "and the plan's monthly figure leaves it out"
    )
    files = render_plan(plan, loaded.workload)
    maas = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    assert list(maas) == names[:36]  # every tray of the used racks allocated by its name
    assert "ansible/hosts.yml.example" not in files


def test_a_tray_takes_its_share_of_the_cpus_from_the_plan(rendered: tuple[object, dict[str, str]]) -> None:
    """The planner says one tray's CPUs (2 of the rack's 36 Grace); the host view uses it as given, parsing nothing."""
    plan, _ = rendered
    node = plan.pools[0].node  # type: ignore[attr-defined]
    grace = "NVIDIA Grace CPU (in GH200 / GB200 superchips)"
    assert (node.cpu, node.host_cpu) == (f"36x {grace}", f"2x {grace}")
    assert host_node(node._replace(cpu="any text", host_cpu="2x some CPU")).cpu == "2x some CPU"


@pytest.mark.parametrize(
    ("gpus_per_host", "replica_gpus", "hosts"),
    [(4, 4, 1), (4, 8, 2), (4, 16, 4), (4, 6, 2), (8, 8, 1), (4, 1, 1)],
)
def test_hosts_per_replica(gpus_per_host: int, replica_gpus: int, hosts: int) -> None:
    assert hosts_per_replica(gpus_per_host, replica_gpus) == hosts


def test_a_replica_wider_than_a_tray_is_said(rendered: tuple[object, dict[str, str]]) -> None:
    """Llama-3.1-405B bf16 at TP8 on GB200 trays of 4 GPUs (its 812 GB of weights need more than one tray's 4 x 186):
    each replica spans 2 hosts, the fewest at the racks' cost; the plan says how to run it. (The two racks hold 18
    replicas of 8 GPUs as TP8 or TP4 PP2, each layout filled with replicas, newuser46 item 2: the one without a pipeline
    wins the tie; before, 12 x TP4 PP2 the rate needed left fewer GPUs idle than 10 x TP8.)"""
    plan, files = rendered
    (finding,) = [f for f in plan.findings if f.code == "replica-spans-hosts"]  # type: ignore[attr-defined]
    assert (finding.level, finding.path) == ("warning", "deployments[0]")
    assert finding.message.startswith("deployment llama405: one replica (8 GPUs) spans 2 gb200-nvl72 compute trays of 4 GPUs")
    for needed in ("LeaderWorkerSet group of 2 pods", "NVIDIA IMEX", "ComputeDomain", IMEX_URL, COMPUTE_DOMAIN_URL):
        assert needed in finding.message
    reasons = plan.deployments[0].reasons  # type: ignore[attr-defined]
    assert reasons[0].startswith("split over 8 GPUs (TP8)") and "not NVLink" not in reasons[0]  # trays share NVLink
    assert reasons[1] == finding.message.removeprefix("deployment llama405: ")
    (deployment,) = ansible_reader().load(files[f"ansible/group_vars/{POOL}.yml"])["specgen_deployments"]
    assert (deployment["tensor_parallel"], deployment["pipeline_parallel"], deployment["hosts_per_replica"]) == (8, 1, 2)


def test_no_platform_for_the_allowed_gpus_says_why_per_gpu(tmp_path: Path) -> None:
    # GB200 comes only as a liquid-cooled NVL72 rack, and no bare-metal server in the catalog holds a GH200
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: gbonly\ndeployments:\n  - name: big\n    model: meta-llama/Llama-3.1-405B-Instruct\n"
        "    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 5}\n"
        "hardware:\n  provider: baremetal\n  gpus: [gb200-186gb, gh200-144gb]\n"
    )
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    assert (
        "(with cooling 'air'): gb200-186gb is in gb200-nvl72, liquid-cooled; no platform of any provider in the catalog "
        "holds gh200-144gb, nor is it priced there; to unblock: allow more GPUs or platforms, hardware.cooling: liquid "
        "where the site has it, or describe a server you own or buy under hardware.inventory[].custom; a machine you "
        "already own with gh200-144gb is planned under hardware.fixed"
    ) in str(caught.value)  # fix183 item 1: no other provider holds either GPU, so "another provider" is not said


def test_no_platform_for_a_liquid_site_does_not_ask_for_liquid_cooling(tmp_path: Path) -> None:
    """newuser20 item 8: with cooling liquid already set, the hint asked for it."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: h20\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 5}\n"
        "hardware:\n  provider: baremetal\n  cooling: liquid\n  gpus: [h20-96gb]\n"
    )
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    message = str(caught.value)
    assert "no platform of any provider in the catalog holds h20-96gb" in message
    assert "hardware.cooling: liquid" not in message
    assert "describe a server you own or buy under hardware.inventory[].custom" in message


def test_on_a_rack_bought_whole_a_replica_stays_on_one_compute_tray_when_the_cost_ties(tmp_path: Path) -> None:
    """A 70B FP8 service at 20 req/s on a GB300 NVL72: one rack however it is laid out, and the fewer-idle-GPUs tie
    chose TP32 over eight trays (8 idle) over TP4 on one tray; replicas on fewer Linux hosts come first."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: t\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 8192, avg_input_tokens: 1000,\n"
        "      avg_output_tokens: 1000, requests_per_second: 20}\n"
        "hardware:\n  gpus: [gb300-288gb]\n  provider: baremetal\n  cooling: liquid\n  rack_power_kw: 150\n"
    )
    plan = plan_workload(load_workload(str(path)))
    (dep,) = plan.deployments
    assert dep.tp * dep.pp <= 4  # within one 4-GPU compute tray
    assert not any(f.code == "replica-spans-hosts" for f in plan.findings)


@pytest.mark.parametrize("rack", ["", "rack_power_kw: 40\n  "])
def test_a_rack_scale_system_over_the_racks_power_is_refused_for_that_alone(tmp_path: Path, rack: str) -> None:
    """newuser34 item 9: a 70B model on GB200 NVL72 under the default 17.3 kW rack was told of five "TP64 PPn" layouts
    that fit no NVL72 before the one reason (the 120 kW rack), with hints about memory and context."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: gb\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.3-70B-Instruct\n"
        "    inference: {precision: nvfp4, max_context_tokens: 8192, requests_per_second: 2}\n"
        f"hardware:\n  provider: baremetal\n  cooling: liquid\n  {rack}gpus: [gb200-186gb]\n"
    )
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    watts = round(catalog.platforms()["gb200-nvl72"].max_power_w or 0)
    kw = "40" if rack else "17.3"
    # fuzz30 item 11: decided before the search (the system's one node is its smallest), so validate says it too
    assert str(caught.value).endswith(
        f"hardware.rack_power_kw: no allowed server fits a rack, even with its fewest GPUs: gb200-186gb on gb200-nvl72: "
        f"a {watts:,} W node exceeds the {kw} kW rack power (hardware.rack_power_kw); to unblock: set "
        f"hardware.rack_power_kw above the smallest node's power said above ({watts / 1000:g} kW, the server before the "
        "RAM, drives and NICs its deployments add, which plan sizes), or allow a GPU whose servers fit the rack"
    )
    assert "TP64" not in str(caught.value)
    assert caught.value.location is not None
    assert caught.value.location.line == (10 if rack else 8)  # at the rack_power_kw given, else at hardware


def test_owned_servers_over_the_racks_power_are_refused_for_that_alone(tmp_path: Path) -> None:
    """fuzz29 item 8: with two owned DGX H100 (no more bought) and a 5 kW rack, the error stood at ``model``, listed
    "needs 3..8 servers" layouts of the owned kind and led with memory and precision advice."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: own\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 6}\n"
        "hardware:\n  gpus: [h200-sxm-141gb]\n  provider: baremetal\n  rack_power_kw: 5\n  inventory:\n"
        "    - {platform: dgx-h100, gpu: h100-sxm5-80gb, count: 2}\n"
    )
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    message = str(caught.value)
    assert "h100-sxm5-80gb on dgx-h100: a 10,200 W node exceeds the 5 kW rack power" in message
    assert "needs 3 servers" not in message and "more memory" not in message
    # fuzz30 item 11: decided before the search, the owned kind named among the allowed servers none of which fits
    assert (
        "to unblock: set hardware.rack_power_kw above the smallest node's power said above (10.2 kW, the server before" in message
    )
    assert caught.value.location is not None and caught.value.location.line == 10
