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
from generator.planner import plan_workload
from generator.render import render_plan
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
    assert pool.node.ram_gib == 0  # the catalog's ram_gib is null: nothing invented


def test_hosts_in_terraform_ansible_and_kubeadm(rendered: tuple[object, dict[str, str]]) -> None:
    _, files = rendered
    tf = json.loads(files["terraform/specgen.auto.tfvars.json"])["gpu_pools"][POOL]
    assert (tf["node_count"], tf["gpus_per_node"], tf["cpu_cores"]) == (36, 4, 144)  # 2 x Grace x 72 cores per tray
    assert tf["rack_scale"] == {"systems": 2, "hosts_per_system": 18, "nvlink_domain_gpus": 72, "power_w_per_system": 120000}
    assert tf["power_w_per_node"] is None and tf["ram_gib"] is None
    yaml = YAML(typ="safe")
    hosts = yaml.load(files["ansible/hosts.yml.example"])["all"]["children"][POOL]["hosts"]
    assert len(hosts) == 36 and "llama405-gb200-186gb-36" in hosts
    group = ansible_reader().load(files[f"ansible/group_vars/{POOL}.yml"])
    assert group["specgen_gpu"]["count"] == 4
    assert [n["count"] for n in group["specgen_network"]["nics"]] == [4, 1]  # 4 fabric NICs and 1 front-end per tray
    assert group["specgen_ram_gib"] is None
    assert group["specgen_system"]["hosts_per_system"] == 18 and group["specgen_system"]["nvlink_domain_gpus"] == 72
    assert f"kubeadm/join-{POOL}.yaml" in files  # 36 hosts join a cluster: not a single-host plan


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
    path.write_text(EXAMPLE.read_text() + "provisioning:\n  tools: [maas, capi]\n")
    loaded = load_workload(str(path))
    files = render_plan(plan_workload(loaded), loaded.workload)
    maas = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    assert len(maas) == 36
    assert {(m["allocate_params"]["min_cpu_count"], m["allocate_params"]["tags"][1]) for m in maas.values()} == {(144, "gpus-4")}
    deployment = YAML(typ="safe").load(files["provisioning/cluster-api/machinedeployment-llama405-gb200-186gb.yaml"])
    assert deployment["spec"]["replicas"] == 36
