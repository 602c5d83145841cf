"""newuser57 items 7 and 14: what an owned host's fields do with MAAS and Metal3.

Item 14: Metal3 ignored a host's ``boot_disk`` (a ``setting-unused`` warning), and Ironic then writes the
image to the smallest disk of 4 GiB or more, which on a GPU server with a boot pair and data NVMe drives may be either.
A BareMetalHost now carries it as ``rootDeviceHints.deviceName``, which takes a device name or a by-path link only.
Item 10: Tinkerbell's Hardware gave the hosts a lease without DNS servers, and no field held them. Item 7: with MAAS, a
host's ``ip_address`` became ``ansible_host`` while MAAS deploys the machine at an address it picks,
and nothing said so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import plan_as_deployed, plan_file, render_file
from generator.errors import InputError
from tests.conftest import REPO


def _yaml(text: str) -> Any:
    return YAML(typ="safe").load(text)


METAL3 = (REPO / "examples" / "chat-70b-metal3.yaml").read_text(encoding="utf-8")


def test_a_bare_metal_host_takes_its_boot_disk_as_root_device_hint() -> None:
    files = render_file(str(REPO / "examples" / "chat-70b-metal3.yaml"))
    host = _yaml(files["provisioning/metal3/baremetalhost-gpu-a01.yaml"])
    assert host["spec"]["rootDeviceHints"] == {"deviceName": "/dev/sda"}
    _, plan = plan_file(str(REPO / "examples" / "chat-70b-metal3.yaml"))
    assert not [f for f in plan.findings if f.code == "setting-unused"]


@pytest.mark.parametrize(
    ("disk", "refused"),
    [("/dev/nvme0n1", False), ("/dev/disk/by-path/pci-0000:01:00.0-nvme-1", False), ("/dev/disk/by-id/nvme-X", True)],
)
def test_a_root_device_hint_is_a_name_or_a_by_path_link(tmp_path: Path, disk: str, refused: bool) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(METAL3.replace("boot_disk: /dev/sda\n", f"boot_disk: {disk}\n"), encoding="utf-8")
    if not refused:
        host = _yaml(render_file(str(path))["provisioning/metal3/baremetalhost-gpu-a02.yaml"])
        assert host["spec"]["rootDeviceHints"] == {"deviceName": disk}
        return
    with pytest.raises(InputError) as caught:
        plan_file(str(path))
    assert caught.value.location is not None and caught.value.location.path == "hardware.inventory[0].hosts[1].boot_disk"
    assert "rootDeviceHints.deviceName takes a device name" in str(caught.value)


def test_an_address_maas_does_not_set_is_warned(tmp_path: Path) -> None:
    maas = (REPO / "examples" / "colo-tinkerbell.yaml").read_text(encoding="utf-8")
    tools = next(line for line in maas.splitlines() if line.strip().startswith("tools:"))
    path = tmp_path / "w.yaml"
    path.write_text(maas.replace(tools, tools.split("tools:")[0] + "tools: [maas]"), encoding="utf-8")
    _, plan = plan_file(str(path))
    (said,) = [f for f in plan.findings if f.code == "maas-address-unset"]
    assert said.path == "hardware.inventory[0].hosts[0].ip_address"
    assert "(gpu-t01 10.20.0.21, gpu-t02 10.20.0.22)" in said.message


def test_tinkerbell_hands_the_hosts_the_sites_dns_servers() -> None:
    files = render_file(str(REPO / "examples" / "colo-tinkerbell.yaml"))
    hardware = _yaml(files["provisioning/tinkerbell/hardware-gpu-t01.yaml"])
    assert hardware["spec"]["interfaces"][0]["dhcp"]["name_servers"] == ["10.20.0.2"]


def test_dns_servers_no_tool_reads_are_unused(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(METAL3.replace("  tools: [metal3, capi]\n", "  tools: [metal3, capi]\n  name_servers: [10.20.0.2]\n"))
    _, plan = plan_file(str(path))
    (said,) = [f for f in plan.findings if f.code == "setting-unused"]
    assert said.path == "provisioning.name_servers"


def test_gpudirect_rdma_says_what_the_hosts_need() -> None:
    """Item 11: ``gpudirect_rdma: true`` in the group vars, and nothing that sets it up nor says what would."""
    _, plan = plan_as_deployed(str(REPO / "examples" / "colo-tinkerbell.yaml"))
    (said,) = [f for f in plan.findings if f.code == "rdma-host-setup"]
    assert said.level == "info" and "chat_h100_sxm5_80gb" in said.message
    assert "DOCA-Host or MLNX_OFED" in said.message and "iommu=pt" in said.message
    _, cloud = plan_as_deployed(str(REPO / "examples" / "chat-70b-fp8-aws.yaml"))
    assert not [f for f in cloud.findings if f.code == "rdma-host-setup"]


def test_maas_output_lists_the_tags_the_machines_need_and_a_whole_resource() -> None:
    """Item 15: the header's maas_instance was pseudo-code, and the tags the allocations ask for were listed nowhere."""
    import json

    files = render_file(str(REPO / "examples" / "chat-70b-maas.yaml"))
    values = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])
    asked = {tag for instance in values["maas_instances"].values() for tag in instance["allocate_params"]["tags"]}
    assert values["maas_tags"] == sorted(asked) == ["gpu-h100-sxm5-80gb", "gpus-4"]
    header = files["provisioning/maas/variables.tf"]
    assert 'variable "maas_tags"' in header and "..." not in header
    for field in ("hostname", "min_cpu_count", "min_memory", "pool", "tags", "zone"):
        assert f"#       {field:<13} = each.value.allocate_params.{field}\n" in header


def test_gpudirect_rdma_is_said_only_where_nccl_crosses_hosts(tmp_path: Path) -> None:
    """review39 item 4: the finding fired on single-host fleets, and spoke of the GPU Operator where none is rendered."""
    one = (REPO / "examples" / "colo-tinkerbell.yaml").read_text(encoding="utf-8")
    path = tmp_path / "w.yaml"
    path.write_text(one.replace("requests_per_second: 40", "requests_per_second: 5"), encoding="utf-8")
    _, plan = plan_as_deployed(str(path))
    assert plan.pools[0].nodes == 1
    assert not [f for f in plan.findings if f.code == "rdma-host-setup"]


@pytest.mark.parametrize("server", ["0.0.0.0", "255.255.255.255", "224.0.0.1"])
def test_a_dns_server_no_host_can_be_is_refused(tmp_path: Path, server: str) -> None:
    """review39 item 10: 0.0.0.0, the broadcast and a multicast address were rendered as DNS servers."""
    text = (REPO / "examples" / "colo-tinkerbell.yaml").read_text(encoding="utf-8")
    path = tmp_path / "w.yaml"
    path.write_text(text.replace("name_servers: [10.20.0.2]", f"name_servers: [10.20.0.2, {server}]"), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        plan_file(str(path))
    assert caught.value.location is not None and caught.value.location.path == "provisioning.name_servers[1]"
    assert "no DNS server can have it" in str(caught.value)
