"""Servers rented from a provider on bare metal get no provisioning objects, a group of their own and a finding.

newuser39 item 3 taught the planner that Lambda's hourly GH200 (prices.json, ``rented_from: Lambda``) is rented on
``provider: baremetal``: the provider's server in its datacentre, in no rack of the plan. The renderers still treated
such hosts as the user's machines: a MAAS ``maas_instance`` allocation and a Cluster API MachineDeployment of 6
replicas for the 6 GH200 of the report's ``capex200.yaml``, "Cluster API asks for 6 machine(s)" warnings with
Metal3 or Tinkerbell, and SPEC.md's ``gpus_bought: 6``. The site's MAAS, Ironic and Tinkerbell cannot boot a
Lambda instance: it is reached by SSH over Lambda's network.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator import catalog
from generator.api import render_file
from generator.render.markdown import detail_label
from generator.render.rented import RENTED_GROUP, RENTED_HOSTS
from tests.helpers import ansible_reader, newuser39_services

#: The report's /tmp/newuser39/capex200.yaml (a FinOps lead's 3 services, bare metal, capex capped at $200,000), with
#: lora8b pinned to the workstation it was planned on. m74c item 1 (fix87): ranked by its month, one run a month of
#: lora8b rents a GH200 ($11.55) rather than buy the $886/month workstation, and the capex it frees buys one MI300X
#: XE9680 ($197,000) for chat70 and moe together ($8,448 + $11.55 a month against $13,669): no service rents then, and
#: these tests are of the 6 GH200 chat70 rents.
CAPEX200 = (
    newuser39_services()
    + """\
  - name: lora8b
    model: meta-llama/Llama-3.1-8B
    platform: wrx90-workstation
    training:
      method: lora
      lora_rank: 16
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 200000000
      epochs: 1
      deadline_hours: 24
      runs_per_month: 1
hardware:
  provider: baremetal
  max_capex_usd: 200000
"""
)
#: Metal3 and Tinkerbell need an owned host to describe: the same workload with an office tower for the LoRA (30
#: runs a month, so owning beats renting it per run) and nothing to buy ($1,000 capex), so both services rent GH200.
OWNED_TOWER = """\
  inventory:
    - platform: lga1700-desktop-tower
      gpu: rtx-5090-32gb
      count: 1
      hosts:
        - name: office-01
          bmc_address: redfish://10.20.1.11/redfish/v1/Systems/1
          bmc_credentials_secret: office-01-bmc
          boot_mac_address: "b8:ca:3a:6e:20:01"
          ip_address: 10.20.0.21
          netmask: 255.255.255.0
          gateway: 10.20.0.1
          boot_disk: /dev/nvme0n1
"""
GH200_HOSTS = [f"chat70-gh200-96gb-0{n}" for n in range(1, 7)]


def _workload(tools: str, owned: bool = False) -> str:
    text = CAPEX200 + (OWNED_TOWER if owned else "") + f"provisioning:\n  tools: {tools}\n"
    if owned:
        text = text.replace("max_capex_usd: 200000", "max_capex_usd: 1000").replace("runs_per_month: 1", "runs_per_month: 30")
        text = text.replace("    platform: wrx90-workstation\n", "")  # on the owned tower
    return text


@functools.cache
def _rendered(folder: Path, tools: str, owned: bool) -> dict[str, str]:
    path = folder / f"{tools.strip('[]').replace(', ', '-')}.yaml"
    path.write_text(_workload(tools, owned))
    return render_file(str(path))


@pytest.fixture(scope="module")
def render(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("rented")
    return lambda tools, owned=False: _rendered(folder, tools, owned)


def _findings(files: dict[str, str], code: str) -> list[str]:
    return [f["message"] for f in _spec(files)["findings"] if f["code"] == code]


def _spec(files: dict[str, str]) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(files["spec.json"])["plan"]
    return plan


def _kube(files: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    reader = YAML(typ="safe", pure=True)
    return [reader.load(text) for path, text in sorted(files.items()) if path.startswith(prefix) and "kustomization" not in path]


def _machine_deployments(files: dict[str, str]) -> dict[str, int]:
    """Each MachineDeployment's replicas, by name."""
    objects = _kube(files, "provisioning/cluster-api/")
    return {d["metadata"]["name"]: d["spec"]["replicas"] for d in objects if d["kind"] == "MachineDeployment"}


def _pool(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in spec["pools"] if p["name"] == name)


def test_capex200_rents_six_gh200_from_lambda_and_buys_two_servers(render: Any) -> None:
    """The plan the outputs below follow: 6 GH200 rented by the hour (none racked), 2 servers bought and racked."""
    spec = _spec(render("[maas]"))
    gh200 = _pool(spec, "chat70_gh200_96gb")
    assert (gh200["nodes"], gh200["rented"], gh200["racks"]) == (6, "hour", 0)
    assert sorted(p["name"] for p in spec["pools"] if "rented" not in p) == ["lora8b_rtx_6000_ada_48gb", "moe_h100_nvl_94gb"]
    assert spec["totals"]["nodes"] == 8


def test_maas_allocates_the_bought_servers_alone(render: Any) -> None:
    """Before: 8 maas_instance allocations, the 6 Lambda GH200 among them (MAAS cannot deploy a Lambda instance)."""
    files = render("[maas]")
    instances = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    assert sorted(instances) == ["lora8b-rtx-6000-ada-48gb-01", "moe-h100-nvl-94gb-01"]


def test_cluster_api_has_no_machine_deployment_for_a_rented_pool(render: Any) -> None:
    """Before: a MachineDeployment of 6 replicas CAPM3 could never fill; the templates finding named the pool too."""
    files = render("[capi]")  # Metal3 hosts the site registers itself (maas with capi is refused: newuser57 item 3)
    deployments = _machine_deployments(files)
    assert deployments == {"lora8b-rtx-6000-ada-48gb": 1, "moe-h100-nvl-94gb": 1}
    assert not any(path.endswith("machinedeployment-chat70-gh200-96gb.yaml") for path in files)
    (templates,) = _findings(files, "cluster-api-templates")
    assert "chat70-gh200-96gb" not in templates and "moe-h100-nvl-94gb" in templates


def test_the_rented_hosts_finding_names_pool_provider_and_what_the_user_does(render: Any) -> None:
    files = render("[maas]")
    (message,) = _findings(files, RENTED_HOSTS)
    assert message.startswith("chat70_gh200_96gb: 6 host(s) of 1 x NVIDIA GH200")
    for said in (
        "rented by the hour from Lambda",
        "https://lambda.ai/pricing",  # the record's source: where the instances are found
        "launch them there",
        "the site's MAAS cannot PXE-boot them",
        "no maas_instance allocation for them",
        "ansible_host the instance's address from Lambda's console",
        "kubeadm/join-chat70_gh200_96gb.yaml",
        "the public internet or a VPN",
    ):
        assert said in message, said
    assert "kubeadm/join-chat70_gh200_96gb.yaml" in files  # the join file it names is rendered
    assert f"`{RENTED_HOSTS}`" in files["SPEC.md"]


def test_ansible_puts_rented_pools_in_a_group_of_their_own_with_placeholders_marked_rented(render: Any) -> None:
    files = render("[maas]")
    reader = ansible_reader()
    inventory = reader.load(files["ansible/inventory.yml"])["all"]["children"]
    assert inventory[RENTED_GROUP] == {"children": {"chat70_gh200_96gb": {}}}
    assert set(inventory["gpu_nodes"]["children"]) == {"chat70_gh200_96gb", "lora8b_rtx_6000_ada_48gb", "moe_h100_nvl_94gb"}
    example = files["ansible/hosts.yml.example"]
    header = example.split("---\n")[0]
    assert "# chat70_gh200_96gb: 6 host(s) RENTED by the hour from Lambda, not bought" in header
    assert "moe_h100_nvl_94gb" not in header  # a bought pool's placeholders read as before
    hosts = reader.load(example.split("---\n", 1)[1])["all"]["children"]
    rented = hosts["chat70_gh200_96gb"]["hosts"]
    assert sorted(rented) == GH200_HOSTS
    assert not any("specgen_rack" in (h or {}) for h in rented.values())  # in no rack of the plan
    assert hosts["moe_h100_nvl_94gb"]["hosts"]["moe-h100-nvl-94gb-01"]["specgen_rack"] == "rack-01"
    group = reader.load(files["ansible/group_vars/chat70_gh200_96gb.yml"])
    assert group["specgen_rented"] == {
        "from": "Lambda",
        "billed_by_the": "hour",
        "price": "supermicro-ars-111gl-nhr-lambda-on-demand",
        "source": "https://lambda.ai/pricing",
    }
    assert "specgen_rented" not in reader.load(files["ansible/group_vars/moe_h100_nvl_94gb.yml"])


def test_spec_md_says_the_rented_gpus_are_rented_and_why_the_racks_hold_less_than_the_fleet(render: Any) -> None:
    """Before: ``gpus_bought: 6`` for chat70, and "the rest is owned workstations" of 7.5 kW of Lambda's servers."""
    text = render("[maas]")["SPEC.md"]
    chat70 = text.split("## Deployment `chat70`")[1].split("## ")[0]
    assert "- gpus_rented: 6\n" in chat70 and "gpus_bought" not in chat70
    # moe (2 H100 NVL since the refit of 2026-12-03) and lora8b: servers bought
    assert text.count("- gpus_bought: 2\n") == 1 and text.count("- gpus_bought: 1\n") == 1
    assert (
        "The racks hold 2.7 of the fleet's 10.2 kW: the rest is servers rented from a provider, in its datacentre "
        "(`chat70_gh200_96gb`), in no rack." in text
    )


@pytest.mark.parametrize(
    ("tools", "host_file", "short"),
    [
        pytest.param("[metal3, capi]", "provisioning/metal3/baremetalhost-office-01.yaml", "BareMetalHost", id="metal3"),
        pytest.param("[tinkerbell, capi]", "provisioning/tinkerbell/hardware-office-01.yaml", "Hardware", id="tinkerbell"),
    ],
)
def test_host_tools_describe_the_owned_host_and_cluster_api_counts_it_alone(
    render: Any, tools: str, host_file: str, short: str
) -> None:
    """Before: MachineDeployments of 6 and 2 GH200 and a cluster-api-hosts-short warning for each ("register the
    other 6 server(s) as BareMetalHosts"), servers the site cannot register."""
    files = render(tools, owned=True)
    spec = _spec(files)
    assert sorted(p["name"] for p in spec["pools"] if p.get("rented") == "hour") == ["chat70_gh200_96gb", "moe_gh200_96gb"]
    hosts = [path for path in files if path.startswith(("provisioning/metal3/b", "provisioning/tinkerbell/h"))]
    assert hosts == [host_file]
    deployments = _machine_deployments(files)
    assert deployments == {"lora8b-rtx-5090-32gb": 1}
    assert _findings(files, "cluster-api-hosts-short") == []
    (templates,) = _findings(files, "cluster-api-templates")
    assert "gh200" not in templates
    (message,) = _findings(files, RENTED_HOSTS)
    system = "Ironic (Metal3)" if short == "BareMetalHost" else "Tinkerbell"
    assert "cannot PXE-boot them, so provisioning/ renders no" in message and system in message
    assert f"no {'maas_instance allocation, ' if 'maas' in tools else ''}{short}" in message
    if "maas" in tools:
        assert sorted(json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]) == ["office-01"]


def test_the_label_of_gpus_on_rented_servers_is_the_plan_texts_word() -> None:
    assert detail_label("gpus_bought", "baremetal", rented=True) == "gpus_rented"
    assert detail_label("gpus_bought", "baremetal") == "gpus_bought"
    assert detail_label("idle_gpus", "baremetal", rented=True) == "idle_gpus"


def test_every_bare_metal_rent_names_the_provider_it_is_rented_from() -> None:
    """The finding tells the user where to launch the servers: every bare-metal rental record says who rents them."""
    platforms = catalog.platforms()
    rents = [p for p in catalog.prices().values() if p.unit != "purchase" and platforms[p.platform_id].provider == "baremetal"]
    assert rents, "the catalog rents bare-metal servers (Lambda's)"
    assert {p.id: p.rented_from for p in rents} == dict.fromkeys((p.id for p in rents), "Lambda")
    clouds = [p for p in catalog.prices().values() if platforms[p.platform_id].provider != "baremetal"]
    assert all(p.rented_from is None for p in clouds)
