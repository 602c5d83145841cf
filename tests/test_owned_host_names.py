"""Owned host names go where the plan puts them: Ansible, MAAS and Metal3 read the plan's ``Pool.owned_hosts``.

The workload allows only H100 on Dell XE9680 and owns one XE9680 with H200 (owned servers are always usable):
the plan runs part of the service on the owned H200 server and buys an H100 one. The platform holds both GPU
kinds, so the platform alone cannot say which pool the owned host belongs to.
"""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render import render_plan
from generator.workload import load_workload
from tests.helpers import ansible_reader

WORKLOAD = """\
version: 1
name: mix
deployments:
  - name: a
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 8192
      requests_per_second: 48
hardware:
  gpus: [h100-sxm5-80gb]
  platforms: [dell-xe9680-hgx-h100-h200]
  provider: baremetal
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h200-sxm-141gb
      count: 1
      hosts:
        - name: owned-h200
          bmc_address: redfish-virtualmedia://10.20.0.11/redfish/v1/Systems/System.Embedded.1
          bmc_credentials_secret: owned-h200-bmc
          boot_mac_address: "b8:ca:3a:6e:10:01"
provisioning:
  tools: [maas]
"""
OWNED, BOUGHT = "a_h200_sxm_141gb", "a_h100_sxm5_80gb"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Plan, dict[str, str]]:
    path = tmp_path_factory.mktemp("mix") / "mix.yaml"
    path.write_text(WORKLOAD)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    files = render_plan(plan, loaded.workload)
    # MAAS and Metal3 would both provision the host (refused: newuser57 item 3): Metal3's hosts from a render of their own
    path.write_text(WORKLOAD.replace("tools: [maas]", "tools: [metal3]"))
    metal3 = load_workload(str(path))
    files.update({k: v for k, v in render_plan(plan_workload(metal3), metal3.workload).items() if "/metal3/" in k})
    return plan, files


def test_the_plan_puts_the_owned_host_on_the_owned_pool(rendered: tuple[Plan, dict[str, str]]) -> None:
    plan, _ = rendered
    pools = {p.name: (p.node.gpu_id, p.nodes, p.owned_nodes, p.owned_hosts) for p in plan.pools}
    assert pools == {BOUGHT: ("h100-sxm5-80gb", 1, 0, ()), OWNED: ("h200-sxm-141gb", 1, 1, ("owned-h200",))}


def test_ansible_inventory_names_the_owned_host_in_its_pool(rendered: tuple[Plan, dict[str, str]]) -> None:
    _, files = rendered
    children = ansible_reader().load(files["ansible/inventory.yml"])["all"]["children"]
    # each host carries the rack it stands in (newuser30 item 5): two ~10 kW servers in 17.3 kW racks, one a rack
    # and the replicas it runs (newuser36 item 6); the owned server, in its rack already, packed first (newuser98)
    owned = children[OWNED]["hosts"]["owned-h200"]
    assert owned["specgen_rack"] == "rack-01"
    assert [r["gpus"] for r in owned["specgen_replicas"]] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert children[BOUGHT] == {}
    example = ansible_reader().load(files["ansible/hosts.yml.example"])["all"]["children"]
    # only the bought server is a placeholder
    assert list(example) == [BOUGHT]
    assert list(example[BOUGHT]["hosts"]) == ["a-h100-sxm5-80gb-01"]
    assert example[BOUGHT]["hosts"]["a-h100-sxm5-80gb-01"]["specgen_rack"] == "rack-02"


def test_maas_allocates_the_owned_host_for_its_pool(rendered: tuple[Plan, dict[str, str]]) -> None:
    _, files = rendered
    maas = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    named = {name: (m["pool"], m["allocate_params"].get("hostname"), m["allocate_params"]["tags"][0]) for name, m in maas.items()}
    assert named == {
        "owned-h200": (OWNED, "owned-h200", "gpu-h200-sxm-141gb"),
        "a-h100-sxm5-80gb-01": (BOUGHT, None, "gpu-h100-sxm5-80gb"),
    }


def test_metal3_labels_the_owned_host_with_its_pool(rendered: tuple[Plan, dict[str, str]]) -> None:
    _, files = rendered
    hosts = [
        doc
        for name, text in files.items()
        if name.startswith("provisioning/metal3/")
        for doc in YAML(typ="safe").load_all(text)
        if doc and doc.get("kind") == "BareMetalHost"
    ]
    assert [(h["metadata"]["name"], h["metadata"]["labels"]["specgen.dev/pool"]) for h in hosts] == [
        ("owned-h200", "a-h200-sxm-141gb")
    ]
    assert hosts[0]["spec"]["description"] == "Dell PowerEdge XE9680 (NVIDIA HGX H100 / H200 8-GPU), 8x NVIDIA H200 SXM 141GB"


CLASH = """\
version: 1
name: clash
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 300}
hardware:
  gpus: [h100-sxm5-80gb]
  platforms: [dgx-h100]
  provider: baremetal
  inventory:
    - platform: dgx-h100
      count: 1
      hosts: [{name: chat-h100-sxm5-80gb-02}]
provisioning:
  tools: [maas]
"""


def test_a_placeholder_never_takes_an_owned_hosts_name(tmp_path_factory: pytest.TempPathFactory) -> None:
    """fuzz9 item 6: the owned host is named like the pool's second placeholder; the bought node got the same name,
    and Ansible and MAAS saw one host where the pool has two."""
    path = tmp_path_factory.mktemp("clash") / "clash.yaml"
    path.write_text(CLASH)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    (pool,) = plan.pools
    assert (pool.nodes, pool.owned_hosts) == (2, ("chat-h100-sxm5-80gb-02",))
    files = render_plan(plan, loaded.workload)
    example = ansible_reader().load(files["ansible/hosts.yml.example"])
    assert list(example["all"]["children"][pool.name]["hosts"]) == ["chat-h100-sxm5-80gb-03"]  # -02 is the owned one
    maas = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    assert sorted(maas) == ["chat-h100-sxm5-80gb-02", "chat-h100-sxm5-80gb-03"]
