"""Tinkerbell Hardware for a colo operator's owned servers (newuser36 item 8; DESIGN.md's ``provisioning/`` promise).

* Each inventory host the plan uses that gives its boot MAC, address, netmask and boot disk gets one
  ``tinkerbell.org/v1alpha1`` Hardware, valid against the pinned CRD (tinkerbell/tinkerbell v0.25.0,
  ``shared/crds/tinkerbell/v1alpha1``), labelled with its pool like a Metal3 BareMetalHost; a host without them gets
  none and a warning naming what it lacks; nothing is invented.
* With Cluster API, MachineDeployments name a TinkerbellMachineTemplate, and the finding names the hardwareAffinity
  selector each needs.
* Bad addresses are refused at their field (file:line:col), by the schema or by the checks across fields and hosts.
"""

from __future__ import annotations

import json
import re
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.errors import InputError, MultipleInputError
from generator.render.provisioning import HOSTS_SHORT
from generator.render.tinkerbell import UNDESCRIBED
from generator.workload.schema import workload_schema
from tests.conftest import REPO, SHARED, require_shared
from tests.helpers import ansible_reader, edited_copy

EXAMPLE = REPO / "examples" / "colo-tinkerbell.yaml"
TINKERBELL_CRD = SHARED / "crds" / "tinkerbell" / "v1alpha1" / "tinkerbell.org_hardware.yaml"
HOST_SCHEMA = workload_schema()["properties"]["hardware"]["properties"]["inventory"]["items"]["properties"]["hosts"]["items"]

#: The example's first host as the file gives it, for the replacements below.
T01 = """\
        - name: gpu-t01
          bmc_address: redfish://10.20.1.11/redfish/v1/Systems/System.Embedded.1
          bmc_credentials_secret: gpu-t01-bmc
          boot_mac_address: "b8:ca:3a:6e:20:01"
          ip_address: 10.20.0.21
          netmask: 255.255.255.0
          gateway: 10.20.0.1
          boot_disk: /dev/nvme0n1
"""


def _docs(files: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    reader = YAML(typ="safe", pure=True)
    return [
        doc
        for path, text in sorted(files.items())
        if path.startswith(prefix) and not path.endswith("kustomization.yaml")
        for doc in reader.load_all(text)
        if isinstance(doc, dict)
    ]


def _example(tmp_path: Path, *replacements: tuple[str, str]) -> Path:
    return edited_copy(EXAMPLE, tmp_path, *replacements)


def _findings(files: dict[str, str], code: str) -> list[dict[str, str]]:
    return [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == code]


def test_each_described_host_gets_exactly_this_hardware(tmp_path: Path) -> None:
    # an upper-case MAC (the workload takes either case) is written lower-case: the CRD's pattern takes no other
    path = _example(
        tmp_path,
        ('boot_mac_address: "b8:ca:3a:6e:20:01"', 'boot_mac_address: "B8:CA:3A:6E:20:01"'),
        ("tools: [tinkerbell, capi]", "tools: [tinkerbell]\n  tinkerbell_namespace: tink-system"),
    )
    files = render_file(str(path))
    assert sorted(p for p in files if p.startswith("provisioning/")) == [
        "provisioning/tinkerbell/hardware-gpu-t01.yaml",
        "provisioning/tinkerbell/hardware-gpu-t02.yaml",
        "provisioning/tinkerbell/kustomization.yaml",
    ]  # no Namespace: the Tinkerbell install owns it, and `kubectl delete -k` must not remove it
    first = _docs(files, "provisioning/tinkerbell/hardware-gpu-t01")
    assert first == [
        {
            "apiVersion": "tinkerbell.org/v1alpha1",
            "kind": "Hardware",
            "metadata": {
                "name": "gpu-t01",
                "namespace": "tink-system",
                "labels": {
                    "specgen.dev/gpu": "h100-sxm5-80gb",
                    "specgen.dev/platform": "dell-xe9680-hgx-h100-h200",
                    "specgen.dev/pool": "chat-h100-sxm5-80gb",
                },
            },
            "spec": {
                "bmcRef": {"apiGroup": "bmc.tinkerbell.org", "kind": "Machine", "name": "gpu-t01"},
                "disks": [{"device": "/dev/nvme0n1"}],
                "interfaces": [
                    {
                        "dhcp": {
                            "hostname": "gpu-t01",
                            "ip": {"address": "10.20.0.21", "gateway": "10.20.0.1", "netmask": "255.255.255.0"},
                            "mac": "b8:ca:3a:6e:20:01",
                            "name_servers": ["10.20.0.2"],
                        },
                        "netboot": {"allowPXE": True, "allowWorkflow": True},
                    }
                ],
                "metadata": {
                    "facility": {"facility_code": "onprem"},
                    "instance": {"hostname": "gpu-t01", "id": "b8:ca:3a:6e:20:01"},
                },
            },
        }
    ]
    kustomization = YAML(typ="safe", pure=True).load(files["provisioning/tinkerbell/kustomization.yaml"])
    assert kustomization["resources"] == ["hardware-gpu-t01.yaml", "hardware-gpu-t02.yaml"]
    assert render_file(str(path)) == files  # to the byte, every time


def test_a_host_without_a_gateway_or_bmc_gets_neither_invented(tmp_path: Path) -> None:
    path = _example(
        tmp_path,
        (T01, T01.replace("          gateway: 10.20.0.1\n", "").replace("          bmc_credentials_secret: gpu-t01-bmc\n", "")),
    )
    files = render_file(str(path))
    (hardware,) = _docs(files, "provisioning/tinkerbell/hardware-gpu-t01")
    assert "bmcRef" not in hardware["spec"]  # a BMC address without its credentials Secret names no Machine
    assert hardware["spec"]["interfaces"][0]["dhcp"]["ip"] == {"address": "10.20.0.21", "netmask": "255.255.255.0"}
    (bmc,) = _findings(files, "tinkerbell-bmc")
    assert "gpu-t02: BMC redfish://10.20.1.12/redfish/v1/Systems/System.Embedded.1, Secret gpu-t02-bmc" in bmc["message"]
    assert bmc["message"].endswith("get no bmcRef, and are booted from the network by hand: gpu-t01")


def test_hardware_validates_against_the_tinkerbell_crd(tmp_path: Path) -> None:
    from tests.test_oracles import crd_errors

    require_shared(TINKERBELL_CRD)
    path = _example(tmp_path, ('boot_mac_address: "b8:ca:3a:6e:20:01"', 'boot_mac_address: "B8:CA:3A:6E:20:01"'))
    docs = _docs(render_file(str(path)), "provisioning/tinkerbell/")
    assert [d["metadata"]["name"] for d in docs] == ["gpu-t01", "gpu-t02"]
    assert [crd_errors(doc) for doc in docs] == [[], []]
    # the oracle is live: the MAC as the workload gave it would have been refused (the CRD's pattern is lower-case)
    upper = json.loads(json.dumps(docs[0]))
    upper["spec"]["interfaces"][0]["dhcp"]["mac"] = "B8:CA:3A:6E:20:01"
    assert [e for e in crd_errors(upper) if "does not match" in e]


def test_a_host_missing_fields_gets_a_finding_and_no_hardware(tmp_path: Path) -> None:
    # gpu-t02 keeps its MAC and address but loses its netmask and disk; the plan still needs both servers
    t02 = T01.replace("t01", "t02").replace("20:01", "20:02").replace("1.11", "1.12").replace("0.21", "0.22")
    lacking = t02.replace("          netmask: 255.255.255.0\n", "").replace("          boot_disk: /dev/nvme0n1\n", "")
    path = _example(tmp_path, (t02, lacking))
    files = render_file(str(path))
    assert [p for p in files if "/hardware-" in p] == ["provisioning/tinkerbell/hardware-gpu-t01.yaml"]
    assert _findings(files, UNDESCRIBED) == [
        {
            "level": "warning",
            "code": UNDESCRIBED,
            "message": "gpu-t02 (pool chat-h100-sxm5-80gb) gets no Tinkerbell Hardware: it gives no netmask or boot_disk "
            "(Smee answers DHCP only for a MAC a Hardware lists, with the address written there, and CAPT writes the OS "
            "to its first disk); specgen does not invent them",
            "path": "hardware.inventory[0].hosts[1]",
        }
    ]
    # Cluster API asks for two machines and one Hardware is there: the pool's shortfall is a warning
    (short,) = _findings(files, HOSTS_SHORT)
    assert short["message"] == (
        "chat-h100-sxm5-80gb: its MachineDeployment asks for 2 machine(s) and 1 Hardware rendered (gpu-t01): register "
        "the other 1 server(s) as Hardware labelled specgen.dev/gpu=h100-sxm5-80gb,specgen.dev/platform="
        "dell-xe9680-hgx-h100-h200,specgen.dev/pool=chat-h100-sxm5-80gb (list them under hardware.inventory[].hosts "
        "with boot_mac_address, ip_address, netmask and boot_disk), or 1 Machine(s) wait in Provisioning for a host"
    )


def test_no_described_host_is_refused_at_the_tools(tmp_path: Path) -> None:
    bare = "".join(line for line in EXAMPLE.read_text().splitlines(keepends=True) if "boot_disk" not in line)
    path = tmp_path / "w.yaml"
    path.write_text(bare)
    with pytest.raises(InputError) as refused:
        render_file(str(path))
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: provisioning\.tools: tinkerbell needs owned hosts", str(refused.value))
    assert "boot_mac_address, ip_address, netmask and boot_disk; none gives them all" in str(refused.value)


def test_cluster_api_names_the_tinkerbell_template_and_its_hardware_affinity() -> None:
    files = render_file(str(EXAMPLE))
    (deployment,) = _docs(files, "provisioning/cluster-api/machinedeployment-")
    assert deployment["metadata"]["namespace"] == "colo-chat"
    assert deployment["spec"]["template"]["spec"]["infrastructureRef"] == {
        "apiGroup": "infrastructure.cluster.x-k8s.io",
        "kind": "TinkerbellMachineTemplate",
        "name": "chat-h100-sxm5-80gb",
    }
    (templates,) = _findings(files, "cluster-api-templates")
    assert (
        "spec.template.spec.hardwareAffinity.required[].labelSelector.matchLabels selecting its pool's Hardware, or CAPT "
        "claims any unclaimed Hardware, another pool's server included (the Hardware under provisioning/tinkerbell, in "
        "namespace tinkerbell, carry these labels): chat-h100-sxm5-80gb: specgen.dev/pool=chat-h100-sxm5-80gb."
        in templates["message"]
    )
    assert "Metal3" not in templates["message"]
    # the selector the finding names picks exactly the pool's Hardware (a labelSelector's matchLabels: every pair present)
    for hardware in _docs(files, "provisioning/tinkerbell/"):
        assert {"specgen.dev/pool": "chat-h100-sxm5-80gb"}.items() <= hardware["metadata"]["labels"].items()
    assert not _findings(files, HOSTS_SHORT)


def _refused(path: Path) -> str:
    with pytest.raises((InputError, MultipleInputError)) as refused:
        render_file(str(path))
    message = str(refused.value)
    assert message.startswith(f"{path}:"), message
    return message.removeprefix(f"{path}:")


@pytest.mark.parametrize(
    ("host", "field", "value", "error"),
    [
        pytest.param(0, "boot_mac_address", '"b8:ca:3a:6e:20"', r"'b8:ca:3a:6e:20' does not match", id="short-mac"),
        pytest.param(0, "ip_address", "10.20.0.256", r"'10\.20\.0\.256' is not an IPv4 address: 256 is", id="octet-over-255"),
        pytest.param(0, "ip_address", "10.20.0.021", r"'10\.20\.0\.021' has a number with a leading zero", id="leading-zero"),
        pytest.param(0, "ip_address", "10.20.0.21/24", r"'10\.20\.0\.21/24' is in CIDR form", id="cidr"),
        pytest.param(0, "netmask", "255.255.0.255", r"'255\.255\.0\.255' is not a netmask", id="netmask-not-contiguous"),
        pytest.param(0, "netmask", "255.255.255.254", r"'255\.255\.255\.254' is a /31 mask", id="netmask-31"),
        pytest.param(0, "boot_disk", "/dev/../etc/passwd", r"'/dev/\.\./etc/passwd' does not match", id="disk-outside-dev"),
        pytest.param(
            0,
            "ip_address",
            "10.20.0.255",
            r"10\.20\.0\.255 is the broadcast address of its subnet 10\.20\.0\.0/24 \(netmask 255\.255\.255\.0\): give "
            r"the host an address from 10\.20\.0\.1 to 10\.20\.0\.254",
            id="broadcast",
        ),
        pytest.param(0, "ip_address", "10.20.0.0", r"10\.20\.0\.0 is the network address of its subnet", id="network"),
        pytest.param(
            0,
            "gateway",
            "10.20.1.1",
            r"gateway 10\.20\.1\.1 is outside the host's subnet 10\.20\.0\.0/24",
            id="gateway-elsewhere",
        ),
        pytest.param(0, "gateway", "10.20.0.21", r"gateway 10\.20\.0\.21 is the host's own ip_address", id="gateway-is-self"),
        pytest.param(1, "ip_address", "10.20.0.21", r"host 'gpu-t01' has ip_address '10\.20\.0\.21' too", id="address-twice"),
        pytest.param(
            1,
            "boot_mac_address",
            '"B8:CA:3A:6E:20:01"',
            r"host 'gpu-t01' has boot_mac_address 'B8:CA:3A:6E:20:01' too",
            id="mac-twice",
        ),
    ],
)
def test_bad_addresses_are_refused_at_their_field(tmp_path: Path, host: int, field: str, value: str, error: str) -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    first = lines.index(f"        - name: gpu-t0{host + 1}\n")
    at = next(i for i in range(first, len(lines)) if lines[i].startswith(f"          {field}: "))
    lines[at] = f"          {field}: {value}\n"
    path = tmp_path / "w.yaml"
    path.write_text("".join(lines), encoding="utf-8")
    where = f"{at + 1}:{len(f'          {field}: ') + 1}: hardware.inventory[0].hosts[{host}].{field}: "
    message = _refused(path)
    assert message.startswith(where), message
    assert re.match(error, message.removeprefix(where)), message


def test_metal3_and_tinkerbell_together_are_refused_at_the_tools(tmp_path: Path) -> None:
    path = _example(tmp_path, ("tools: [tinkerbell, capi]", "tools: [tinkerbell, metal3]"))
    assert re.match(r"\d+:\d+: provisioning\.tools: metal3 and tinkerbell would both provision the owned hosts", _refused(path))


@pytest.mark.parametrize("prefix", range(33))
def test_the_netmask_pattern_takes_exactly_the_masks_of_a_subnet_with_hosts(prefix: int) -> None:
    mask = str(IPv4Network(f"0.0.0.0/{prefix}").netmask)
    accepted = re.search(HOST_SCHEMA["properties"]["netmask"]["pattern"], mask) is not None
    assert accepted == (1 <= prefix <= 30), mask  # /31 and /32 leave no network and broadcast address; /0 is no subnet


def test_a_hosts_address_is_where_ansible_connects() -> None:
    """The address a host is given (Tinkerbell's DHCP hands it out) is its ``ansible_host``, not a name DNS may miss."""
    from generator.api import render_file

    inventory = ansible_reader().load(render_file(str(EXAMPLE))["ansible/inventory.yml"])
    hosts = inventory["all"]["children"]["chat_h100_sxm5_80gb"]["hosts"]
    assert {name: host["ansible_host"] for name, host in hosts.items()} == {"gpu-t01": "10.20.0.21", "gpu-t02": "10.20.0.22"}
