"""fuzz30's Tinkerbell, provisioning and ``validate --together`` items: each reproduction, refused or said as it should be.

* Item 2: a boot MAC, an address or a BMC that two files rendered into one tree (one cluster) both give is refused by
  ``render`` and ``validate --together``, at the second file's field, naming where the first gives it.
* Item 4: unusable addresses (loopback, multicast, reserved, unspecified, "this network", link-local; broadcast,
  multicast and all-zero MACs) are refused at their field, by :mod:`ipaddress`'s predicates.
* Item 5 (and L6): a host's address that is another host's gateway or any host's BMC, or a gateway that is a BMC, is
  refused, whether or not the host gives its address and netmask.
* Item 6: a plan that uses none of the described hosts is refused by ``plan`` and ``render`` alike, located at
  ``provisioning.tools``, naming what the used hosts lack and the described hosts the plan leaves unused.
* Item 7: Cluster API's objects in the Tinkerbell install's namespace: ``provisioning/cluster-api`` creates no Namespace.
* Item 8: tinkerbell with maas is refused as tinkerbell with metal3 is.
* Item 12: ``validate --together`` refuses a pool name two files' plans share, as render does.
* L5: provisioning settings no listed tool reads are ``setting-unused`` warnings. L7: address fields' schema errors say
  what is wrong in words, not as the regular expression.
"""

from __future__ import annotations

import json
import re
from ipaddress import IPv4Address
from pathlib import Path

import pytest

from generator.api import plan_as_deployed, plan_file, render_file, render_files
from generator.errors import InputError, MultipleInputError
from generator.planner.setting_findings import unused_setting_findings
from generator.render import render_plans
from generator.render.provisioning import SHARED_NAMESPACE, SITE_NAMESPACE
from generator.workload import load_workload
from generator.workload.host_network import unusable_ip, unusable_mac
from tests.conftest import REPO
from tests.helpers import specgen_in_process

EXAMPLE = (REPO / "examples" / "colo-tinkerbell.yaml").read_text(encoding="utf-8")
#: Two files of one Cluster API cluster (one tree): the example, and a second workload with hosts of its own.
ONE_CLUSTER = "kubernetes:\n  cluster_name: colo\n"
FIRST = EXAMPLE + ONE_CLUSTER
SECOND = (
    FIRST.replace("name: colo-chat-tinkerbell", "name: colo-two")
    .replace("  - name: chat\n", "  - name: chat2\n")
    .replace("gpu-t0", "gpu-u0")
    .replace("10.20.1.1", "10.20.1.3")
    .replace("b8:ca:3a:6e:20:0", "b8:ca:3a:6e:30:0")
    .replace("ip_address: 10.20.0.2", "ip_address: 10.20.0.3")
    .replace("namespace: colo-chat", "namespace: colo-two")
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _at(text: str, host: str, field: str) -> str:
    """``line:col`` of ``field``'s value in host ``host``'s entry of ``text``."""
    lines = text.splitlines()
    first = lines.index(f"        - name: {host}")
    row = next(i for i in range(first, len(lines)) if lines[i].startswith(f"          {field}: "))
    return f"{row + 1}:{len(f'          {field}: ') + 1}"


def _replace(text: str, host: str, field: str, value: str) -> str:
    """``text`` with host ``host``'s ``field`` set to ``value``."""
    lines = text.splitlines(keepends=True)
    first = lines.index(f"        - name: {host}\n")
    row = next(i for i in range(first, len(lines)) if lines[i].startswith(f"          {field}: "))
    lines[row] = f"          {field}: {value}\n"
    return "".join(lines)


def _refusal(path: Path) -> str:
    """The error loading ``path`` raises (as validate, plan and render load it)."""
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(path)
    return str(refused.value)


# --- item 2 (and 5 across files): one tree, one cluster ---------------------------------------------------------------

TREE = "; rendered into one tree, they are hosts of one cluster"


def _own_subnet_16(text: str) -> str:
    return _replace(text, "gpu-u01", "netmask", "255.255.0.0")


@pytest.mark.parametrize(
    ("change", "field", "first_field", "said"),
    [
        pytest.param(
            lambda t: _replace(t, "gpu-u01", "boot_mac_address", '"B8:CA:3A:6E:20:01"'),
            "boot_mac_address",
            "boot_mac_address",
            "host 'gpu-t01' ({first}) has boot_mac_address 'B8:CA:3A:6E:20:01' too: each host boots with its own" + TREE,
            id="same-boot-mac-any-case",
        ),
        pytest.param(
            lambda t: _replace(t, "gpu-u01", "ip_address", "10.20.0.21"),
            "ip_address",
            "ip_address",
            "host 'gpu-t01' ({first}) has ip_address '10.20.0.21' too: each host boots with its own" + TREE,
            id="same-address",
        ),
        pytest.param(
            lambda t: _replace(t, "gpu-u01", "bmc_address", "redfish://10.20.1.11/redfish/v1/Systems/System.Embedded.1"),
            "bmc_address",
            "bmc_address",
            "host 'gpu-t01' ({first}) has BMC address 'redfish://10.20.1.11/redfish/v1/Systems/System.Embedded.1' too: one "
            "BMC would power two hosts on and off" + TREE,
            id="same-bmc",
        ),
        pytest.param(
            # the second file's hosts route through .254, and gpu-u01 takes the first file's router address
            lambda t: _replace(t.replace("gateway: 10.20.0.1\n", "gateway: 10.20.0.254\n"), "gpu-u01", "ip_address", "10.20.0.1"),
            "ip_address",
            "gateway",
            "10.20.0.1 is the gateway of host 'gpu-t01' ({first}): a host cannot take its router's address" + TREE,
            id="address-is-the-other-file's-gateway",
        ),
        pytest.param(
            lambda t: _replace(_own_subnet_16(t), "gpu-u01", "ip_address", "10.20.1.11"),
            "ip_address",
            "bmc_address",
            "10.20.1.11 is the address of the BMC of host 'gpu-t01' ({first}): a BMC is a network port of its own, with "
            "an address of its own" + TREE,
            id="address-is-the-other-file's-bmc",
        ),
    ],
)
def test_an_address_two_files_of_one_tree_give_is_refused_by_render_and_validate_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: object, field: str, first_field: str, said: str
) -> None:
    a = _write(tmp_path, "a.yaml", FIRST)
    text = change(SECOND)  # type: ignore[operator]
    b = _write(tmp_path, "b.yaml", text)
    assert load_workload(b)  # each file alone is valid: the clash is the tree's
    first = f"{a}:{_at(FIRST, 'gpu-t01', first_field)}: hardware.inventory[0].hosts[0].{first_field}"
    expected = f"{b}:{_at(text, 'gpu-u01', field)}: hardware.inventory[0].hosts[0].{field}: {said.format(first=first)}"
    code, out, err = specgen_in_process(capsys, "validate", "--together", str(a), str(b))
    assert (code, out) == (1, ""), err
    assert err.splitlines() == [f"specgen: error: {expected}"]
    output = tmp_path / "out"
    code, _, err = specgen_in_process(capsys, "render", str(a), str(b), "-o", str(output))
    assert code == 1 and err.splitlines() == [f"specgen: error: {expected}"]
    assert not output.exists()  # nothing half-written
    with pytest.raises(InputError) as refused:  # the library's render of several files, as the CLI's
        render_files([str(a), str(b)])
    assert str(refused.value) == expected


def test_plans_rendered_into_one_tree_by_the_library_are_refused_by_workload_name(tmp_path: Path) -> None:
    # render_plans knows no files: the error names each workload and its field
    a = _write(tmp_path, "a.yaml", FIRST)
    b = _write(tmp_path, "b.yaml", _replace(SECOND, "gpu-u01", "ip_address", "10.20.0.21"))
    planned = [plan_file(str(path), for_render=True) for path in (b, a)]
    with pytest.raises(InputError) as refused:
        render_plans([(plan, loaded.workload) for loaded, plan in planned])
    assert str(refused.value) == (
        "colo-two: hardware.inventory[0].hosts[0].ip_address: host 'gpu-t01' (colo-chat-tinkerbell: "
        "hardware.inventory[0].hosts[0].ip_address) has ip_address '10.20.0.21' too: each host boots with its own" + TREE
    )


def test_files_of_one_tree_with_addresses_of_their_own_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _write(tmp_path, "a.yaml", FIRST), _write(tmp_path, "b.yaml", SECOND)
    code, out, err = specgen_in_process(capsys, "validate", "--together", str(a), str(b))
    assert (code, out.splitlines()) == (0, [f"{a}: ok", f"{b}: ok"]), err
    files = render_files([str(a), str(b)])
    hardware = [text for path, text in files.items() if "/hardware-" in path]
    macs = [line.split()[-1] for text in hardware for line in text.splitlines() if "mac:" in line]
    assert sorted(macs) == ["b8:ca:3a:6e:20:01", "b8:ca:3a:6e:20:02", "b8:ca:3a:6e:30:01", "b8:ca:3a:6e:30:02"]


# --- item 12: a pool name two files' plans share ----------------------------------------------------------------------


def test_validate_together_refuses_a_pool_name_two_plans_share_as_render_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(tmp_path, "a.yaml", FIRST)
    b = _write(tmp_path, "b.yaml", SECOND.replace("  - name: chat2\n", "  - name: chat\n"))  # both plan chat_h100_sxm5_80gb
    code, _, validated = specgen_in_process(capsys, "validate", "--together", str(a), str(b))
    assert code == 1
    code, _, rendered = specgen_in_process(capsys, "render", str(a), str(b), "-o", str(tmp_path / "out"))
    assert code == 1
    expected = (
        f"specgen: error: {b}:6:11: deployments[0].name: {a} and {b} both have pool 'chat_h100_sxm5_80gb'; rendered into "
        "one tree they share one cluster, "
        "where it would be one object for both: give one of them another name: its deployments' pool field where they set "
        "one, else a deployment's name\n"
    )
    assert validated == rendered == expected


def test_a_pool_two_files_name_is_refused_at_the_second_files_pool_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fuzz30's left-out: the clash named both files and no line; a deployment's ``pool`` field is where it is set."""
    pooled = "  - name: chat2\n    pool: serving\n"
    a = _write(tmp_path, "a.yaml", FIRST.replace("  - name: chat\n", "  - name: chat\n    pool: serving\n"))
    b = _write(tmp_path, "b.yaml", SECOND.replace("  - name: chat2\n", pooled))
    line = SECOND.splitlines().index("  - name: chat2") + 2
    for command in (["validate", "--together", str(a), str(b)], ["render", str(a), str(b), "-o", str(tmp_path / "out")]):
        code, _, err = specgen_in_process(capsys, *command)
        assert code == 1
        assert err.startswith(f"specgen: error: {b}:{line}:11: deployments[0].pool: {a} and {b} both have pool 'serving_")
    assert not (tmp_path / "out").exists()


def test_validate_together_leaves_a_plan_the_planner_refuses_to_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 40,000 requests a second on two owned servers (buy: false): infeasible, which validate alone does not decide either
    a = _write(tmp_path, "a.yaml", FIRST)
    b = _write(tmp_path, "b.yaml", SECOND.replace("requests_per_second: 40\n", "requests_per_second: 40000\n"))
    code, out, err = specgen_in_process(capsys, "validate", "--together", str(a), str(b))
    assert (code, out.splitlines()) == (0, [f"{a}: ok", f"{b}: ok"]), err
    code, _, _ = specgen_in_process(capsys, "plan", str(b))
    assert code == 3


# --- item 4 (and L6): unusable addresses ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("ip_address", "127.0.0.5", "127.0.0.5 is a loopback address (127.0.0.0/8): packets to it never leave the machine "
         "that sends them; no host can have it"),
        ("ip_address", "224.0.0.5", "224.0.0.5 is a multicast address (224.0.0.0/4): it names a group of receivers, not one "
         "host; no host can have it"),
        ("ip_address", "255.255.255.254", "255.255.255.254 is a reserved address (240.0.0.0/4, kept for future use): hosts "
         "and routers do not take it; no host can have it"),
        ("ip_address", "0.0.0.0", "0.0.0.0 is the unspecified address; no host can have it"),
        ("ip_address", "0.0.0.5", "0.0.0.5 is an address of 'this network' (0.0.0.0/8), which is only ever a source "
         "address, never one a host is reached at; no host can have it"),
        ("ip_address", "169.254.0.21", "169.254.0.21 is a link-local address (169.254.0.0/16): a host picks one itself where "
         "DHCP fails, no DHCP server hands one out (RFC 3927 section 1.6) and no router forwards it; no host can have it"),
        ("gateway", "127.0.0.1", "127.0.0.1 is a loopback address (127.0.0.0/8): packets to it never leave the machine that "
         "sends them; no router can have it"),
        ("gateway", "255.255.255.255", "255.255.255.255 is the limited broadcast address: it reaches every host of the link, "
         "and is none of them; no router can have it"),
        ("boot_mac_address", '"ff:ff:ff:ff:ff:ff"', "ff:ff:ff:ff:ff:ff is the broadcast MAC address: every NIC of the link "
         "receives it, and none has it as its own: give the MAC address of the NIC the host boots from"),
        ("boot_mac_address", '"00:00:00:00:00:00"', "00:00:00:00:00:00 is the all-zero MAC address, which no NIC has: give "
         "the MAC address of the NIC the host boots from"),
        ("boot_mac_address", '"01:00:5e:00:00:01"', "01:00:5e:00:00:01 is a group (multicast) MAC address: its first "
         "octet's lowest bit is set, which names a group of receivers, never one NIC: give the MAC address of the NIC the "
         "host boots from"),
    ],
)  # fmt: skip
def test_an_unusable_address_is_refused_at_its_field(tmp_path: Path, field: str, value: str, said: str) -> None:
    text = _replace(EXAMPLE, "gpu-t01", field, value)
    if field == "ip_address":  # its own subnet, so that only the address itself is wrong
        text = _replace(_replace(text, "gpu-t01", "netmask", "255.255.255.0"), "gpu-t01", "gateway", "10.0.0.1")
        text = text.replace("          gateway: 10.0.0.1\n", "")
    path = _write(tmp_path, "w.yaml", text)
    message = _refusal(path)
    assert f"{path}:{_at(text, 'gpu-t01', field)}: hardware.inventory[0].hosts[0].{field}: {said}" in message.splitlines()


def test_a_gateway_without_an_address_is_still_checked(tmp_path: Path) -> None:
    """L6: a gateway given without ip_address and netmask was never looked at."""
    text = EXAMPLE.replace("          ip_address: 10.20.0.21\n          netmask: 255.255.255.0\n", "")
    text = _replace(text, "gpu-t01", "gateway", "224.0.0.1")
    path = _write(tmp_path, "w.yaml", text)
    assert f"{path}:{_at(text, 'gpu-t01', 'gateway')}: hardware.inventory[0].hosts[0].gateway: 224.0.0.1 is a multicast" in (
        _refusal(path)
    )


@pytest.mark.parametrize("octets", [(127, 0, 0, 1), (224, 1, 2, 3), (239, 255, 255, 250), (240, 0, 0, 1), (0, 1, 2, 3),
                                    (169, 254, 9, 9), (255, 255, 255, 255), (0, 0, 0, 0)])  # fmt: skip
def test_unusable_ip_agrees_with_ipaddress(octets: tuple[int, ...]) -> None:
    address = IPv4Address(".".join(map(str, octets)))
    flagged = address.is_loopback or address.is_multicast or address.is_reserved or address.is_unspecified
    flagged = flagged or address.is_link_local or octets[0] == 0
    assert flagged and unusable_ip(address) is not None


@pytest.mark.parametrize("address", ["10.20.0.21", "192.168.1.10", "172.16.0.1", "100.64.0.1", "8.8.8.8", "198.18.0.5"])
def test_ordinary_addresses_are_usable(address: str) -> None:
    assert unusable_ip(IPv4Address(address)) is None


@pytest.mark.parametrize(
    ("mac", "usable"),
    [("b8:ca:3a:6e:20:01", True), ("02:00:00:00:00:01", True), ("B8:CA:3A:6E:20:01", True), ("03:00:00:00:00:01", False),
     ("33:33:00:00:00:01", False), ("ff:ff:ff:ff:ff:ff", False), ("00:00:00:00:00:00", False)],
)  # fmt: skip
def test_a_mac_is_usable_unless_group_or_zero(mac: str, usable: bool) -> None:
    # 02:...: a locally administered unicast address, which a NIC may have; 33:33:...: IPv6 multicast
    assert (unusable_mac(mac) is None) is usable


# --- item 5: addresses one host gives that another's is ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "host", "field", "said"),
    [
        pytest.param(
            [("gpu-t02", "ip_address", "10.20.0.1"), ("gpu-t02", "gateway", "10.20.0.254")],
            "gpu-t02",
            "ip_address",
            "10.20.0.1 is the gateway of host 'gpu-t01': a host cannot take its router's address",
            id="address-is-another-host's-gateway",
        ),
        pytest.param(
            # the gateway comes first in the file: the error still stands at the address that takes it
            [
                ("gpu-t01", "ip_address", "10.20.0.254"),
                ("gpu-t01", "gateway", "10.20.0.1"),
                ("gpu-t02", "gateway", "10.20.0.254"),
            ],
            "gpu-t01",
            "ip_address",
            "10.20.0.254 is the gateway of host 'gpu-t02': a host cannot take its router's address",
            id="address-is-a-later-host's-gateway",
        ),
        pytest.param(
            [("gpu-t02", "ip_address", "10.20.1.11"), ("gpu-t02", "netmask", "255.255.0.0")],
            "gpu-t02",
            "ip_address",
            "10.20.1.11 is the address of the BMC of host 'gpu-t01' (bmc_address "
            "redfish://10.20.1.11/redfish/v1/Systems/System.Embedded.1): a BMC is a network port of its own, with an "
            "address of its own",
            id="address-is-another-host's-bmc",
        ),
        pytest.param(
            [("gpu-t01", "ip_address", "10.20.1.11"), ("gpu-t01", "netmask", "255.255.0.0")],
            "gpu-t01",
            "ip_address",
            "10.20.1.11 is the address of the host's own BMC (bmc_address "
            "redfish://10.20.1.11/redfish/v1/Systems/System.Embedded.1): a BMC is a network port of its own, with an "
            "address of its own",
            id="address-is-its-own-bmc",
        ),
        pytest.param(
            [("gpu-t01", "netmask", "255.255.0.0"), ("gpu-t01", "gateway", "10.20.1.12")],
            "gpu-t01",
            "gateway",
            "10.20.1.12 is the address of the BMC of host 'gpu-t02' (bmc_address "
            "redfish://10.20.1.12/redfish/v1/Systems/System.Embedded.1): a BMC routes nothing",
            id="gateway-is-a-bmc",
        ),
    ],
)
def test_an_address_another_role_of_the_file_has_is_refused(
    tmp_path: Path, changes: list[tuple[str, str, str]], host: str, field: str, said: str
) -> None:
    text = EXAMPLE
    for name, key, value in changes:
        text = _replace(text, name, key, value)
    path = _write(tmp_path, "w.yaml", text)
    k = int(host[-1]) - 1
    assert _refusal(path) == f"{path}:{_at(text, host, field)}: hardware.inventory[0].hosts[{k}].{field}: {said}"


def test_hosts_sharing_a_gateway_and_a_bmc_chassis_ip_pass(tmp_path: Path) -> None:
    # one router for both, and one chassis manager's IP for two systems (by path): neither is a clash
    text = _replace(EXAMPLE, "gpu-t02", "bmc_address", "redfish://10.20.1.11/redfish/v1/Systems/System.Embedded.2")
    assert load_workload(_write(tmp_path, "w.yaml", text))


# --- item 6: a plan that uses none of the described hosts -------------------------------------------------------------

#: fuzz30's unused.yaml: the plan takes the XE9680s, which give a BMC and MAC only; the described DGXs stay unused.
UNUSED = """\
version: 1
name: colo-chat-tinkerbell
deployments:
- name: chat
  model: meta-llama/Llama-3.3-70B-Instruct
  inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 40}}
hardware:
  provider: baremetal
  rack_power_kw: 17.3
  buy: false
  inventory:
  - platform: dell-xe9680-hgx-h100-h200
    gpu: h100-sxm5-80gb
    count: 2
    hosts:
    - {{name: gpu-t01{used}}}
    - {{name: gpu-t02{used2}}}
  - platform: dgx-h100
    gpu: h100-sxm5-80gb
    count: 2
    hosts:
    - {{name: dgx-01, bmc_address: "redfish://10.20.1.50/redfish/v1/Systems/1", bmc_credentials_secret: dgx-01-bmc,
       boot_mac_address: "b8:ca:3a:6e:40:00", ip_address: 10.20.0.50, netmask: 255.255.255.0, boot_disk: /dev/nvme0n1}}
    - {{name: dgx-02, bmc_address: "redfish://10.20.1.51/redfish/v1/Systems/1", bmc_credentials_secret: dgx-02-bmc,
       boot_mac_address: "b8:ca:3a:6e:40:01", ip_address: 10.20.0.51, netmask: 255.255.255.0, boot_disk: /dev/nvme0n1}}
provisioning:
  tools: [{tool}, capi]
  namespace: colo-chat
"""


#: Why the plan leaves the DGX free, from its inventory-free finding, which the refusal now carries (newuser98).
WHY_FREE = (
    "; why, as the plan's inventory-free finding says: 2 of 2 owned dgx-h100 server(s) (8 x h100-sxm5-80gb) left free: "
    "dgx-01, dgx-02 (Ansible group free_nodes); not used by chat: a layout on them was feasible, but the fleet ties on "
    "the objective without it and has less power; the free ones' colocation, $3,754 a month, is paid whether they run "
    "or not and the plan's monthly figure leaves it out"
)


@pytest.mark.parametrize(
    ("tool", "used", "said"),
    [
        pytest.param(
            "tinkerbell",
            ', boot_mac_address: "b8:ca:3a:6e:20:01"',
            "tinkerbell renders a Hardware for each owned host the plan uses (hardware.inventory[].hosts) that gives "
            "boot_mac_address, ip_address, netmask and boot_disk, and none it uses does: gpu-t01 and gpu-t02 give no "
            "ip_address, netmask or boot_disk; the plan puts dgx-01 and dgx-02, which give them all, on no pool (specgen "
            "does not invent them)",
            id="tinkerbell",
        ),
        pytest.param(
            "tinkerbell",
            ', boot_mac_address: "b8:ca:3a:6e:20:01", ip_address: 10.20.0.31, netmask: 255.255.255.0',
            "tinkerbell renders a Hardware for each owned host the plan uses (hardware.inventory[].hosts) that gives "
            "boot_mac_address, ip_address, netmask and boot_disk, and none it uses does: gpu-t01 and gpu-t02 give no "
            "boot_disk; the plan puts dgx-01 and dgx-02, which give them all, on no pool (specgen does not invent them)",
            id="tinkerbell-lacking-the-disk",
        ),
        pytest.param(
            "metal3",
            "",
            "metal3 renders a BareMetalHost for each owned host the plan uses (hardware.inventory[].hosts) that gives "
            "bmc_address, bmc_credentials_secret and boot_mac_address, and none it uses does: gpu-t01 and gpu-t02 give no "
            "bmc_address, bmc_credentials_secret or boot_mac_address; the plan puts dgx-01 and dgx-02, which give them "
            "all, on no pool (specgen does not invent them)",
            id="metal3",
        ),
    ],
)
def test_a_plan_using_none_of_the_described_hosts_is_refused_by_plan_and_render_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str, used: str, said: str
) -> None:
    # the second host: its own MAC and address
    text = UNUSED.format(tool=tool, used=used, used2=used.replace("20:01", "20:02").replace("0.31", "0.32"))
    path = _write(tmp_path, "unused.yaml", text)
    line = text.splitlines().index(f"  tools: [{tool}, capi]") + 1
    expected = f"{path}:{line}:10: provisioning.tools: {said}{WHY_FREE}"
    assert load_workload(path)  # validate: which hosts are used is the plan's choice (validate --help: no search)
    for call in (plan_as_deployed, render_file):
        with pytest.raises(InputError) as refused:
            call(str(path))
        assert str(refused.value) == expected, call
    code, _, err = specgen_in_process(capsys, "plan", str(path))
    assert (code, err) == (1, f"specgen: error: {expected}\n")


# --- item 7: Cluster API in the Tinkerbell install's namespace --------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "namespace"),
    [
        pytest.param("namespace: colo-chat", "namespace: tinkerbell", "tinkerbell", id="namespace-is-tinkerbell's"),
        pytest.param("namespace: colo-chat", "namespace: colo-chat\n  tinkerbell_namespace: colo-chat", "colo-chat",
                     id="tinkerbell_namespace-is-the-namespace"),
    ],
)  # fmt: skip
def test_cluster_api_creates_no_namespace_it_shares_with_the_tinkerbell_install(
    tmp_path: Path, before: str, after: str, namespace: str
) -> None:
    files = render_file(str(_write(tmp_path, "w.yaml", EXAMPLE.replace(before, after))))
    assert sorted(p for p in files if p.startswith("provisioning/cluster-api/")) == [
        "provisioning/cluster-api/kustomization.yaml",
        "provisioning/cluster-api/machinedeployment-chat-h100-sxm5-80gb.yaml",
    ]
    assert f"namespace: {namespace}" in files["provisioning/cluster-api/machinedeployment-chat-h100-sxm5-80gb.yaml"]
    (found,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == SHARED_NAMESPACE]
    assert found == {
        "level": "info",
        "code": SHARED_NAMESPACE,
        "message": f"provisioning.namespace is provisioning.tinkerbell_namespace ({namespace}), the namespace the "
        "Tinkerbell install runs in and owns: provisioning/cluster-api renders no Namespace object for it, so that "
        "kubectl delete -k provisioning/cluster-api cannot delete the Tinkerbell stack and every Hardware with it; the "
        f"MachineDeployments go into {namespace} as it exists",
        "path": "provisioning.namespace",
    }


def test_cluster_api_creates_no_namespace_the_sites_cluster_lives_in() -> None:
    """newuser57 item 4 (was: created in a namespace of its own): the namespace holds the site's Cluster, so a delete -k
    of provisioning/cluster-api deleted it and every Machine; the finding says the site creates it."""
    files = render_file(str(REPO / "examples" / "colo-tinkerbell.yaml"))
    assert not [p for p in files if p.startswith("provisioning/") and "/namespace-" in p]
    assert SHARED_NAMESPACE not in files["spec.json"]
    (found,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == SITE_NAMESPACE]
    assert "create colo-chat before applying it" in found["message"]


def test_cluster_api_beside_metal3_leaves_the_namespace_to_the_site() -> None:
    """Neither directory creates the namespace both use (was: provisioning/metal3 did, and its delete -k deleted the
    Cluster, every Machine and the BMC Secrets with it)."""
    files = render_file(str(REPO / "examples" / "chat-70b-metal3.yaml"))
    assert not [p for p in files if p.startswith("provisioning/") and "/namespace-" in p]
    (found,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == SITE_NAMESPACE]
    assert "provisioning/metal3 and provisioning/cluster-api render no Namespace object" in found["message"]
    assert "the BMC credentials Secrets the BareMetalHosts name" in found["message"]


# --- item 8: two provisioners of the same hosts -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        ("[tinkerbell, maas]", "maas and tinkerbell would both provision the owned hosts (MAAS boots the machines it "
         "commissions and deploys over the network from its own DHCP server, powers them through their BMCs and writes "
         "their OS, https://discourse.maas.io/t/managing-dhcp/2909; Tinkerbell's Smee answers DHCP for the boot MACs its "
         "Hardware list, and CAPT writes the OS to their disks): pick one"),
        ("[tinkerbell, metal3]", "metal3 and tinkerbell would both provision the owned hosts (each answers DHCP for their "
         "boot MACs and drives their BMCs): pick one"),
    ],
)  # fmt: skip
def test_tinkerbell_with_another_provisioner_of_the_hosts_is_refused_at_the_tools(tmp_path: Path, tools: str, said: str) -> None:
    text = EXAMPLE.replace("tools: [tinkerbell, capi]", f"tools: {tools}")
    path = _write(tmp_path, "w.yaml", text)
    line = text.splitlines().index(f"  tools: {tools}") + 1
    assert _refusal(path) == f"{path}:{line}:10: provisioning.tools: {said}"


# --- L5: settings no listed tool reads --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "unused"),
    [
        pytest.param("tools: [tinkerbell, capi]", "tools: [metal3, capi]\n  tinkerbell_namespace: tink-system",
                     [("provisioning.tinkerbell_namespace", "provisioning.tinkerbell_namespace is the namespace of the "
                       "Tinkerbell Hardware, read only with provisioning.tools tinkerbell; with tools [metal3, capi] it has "
                       "no effect: remove it, or add the tool"),
                      ("provisioning.name_servers", "provisioning.name_servers is the DNS servers the Tinkerbell "
                       "Hardware's DHCP gives the hosts, read only with provisioning.tools tinkerbell; with tools [metal3, "
                       "capi] it has no effect: remove it, or add the tool"),
                      ("hardware.inventory[0].hosts[0]", "netmask and gateway of owned hosts "
                       "(gpu-t01, gpu-t02) are read only for Tinkerbell's Hardware (provisioning.tools: tinkerbell), which "
                       "this workload does not render: they have no effect; remove them, or add tinkerbell")],
                     id="tinkerbell-settings-without-tinkerbell"),
        # newuser42 item 5: ip_address is the Ansible inventory's ansible_host, so it is unused only without ansible
        pytest.param("provisioning:\n  tools: [tinkerbell, capi]",
                     "outputs: [terraform, kubernetes]\nprovisioning:\n  tools: [metal3, capi]",
                     [("provisioning.name_servers", "provisioning.name_servers is the DNS servers the Tinkerbell "
                       "Hardware's DHCP gives the hosts, read only with provisioning.tools tinkerbell; with tools [metal3, "
                       "capi] it has no effect: remove it, or add the tool"),
                      ("hardware.inventory[0].hosts[0]", "ip_address, netmask and gateway of owned hosts "
                       "(gpu-t01, gpu-t02) are read only for Tinkerbell's Hardware (provisioning.tools: tinkerbell) (and "
                       "ip_address as the Ansible inventory's ansible_host, with outputs: ansible), which this workload "
                       "does not render: they have no effect; remove them, or add tinkerbell")],
                     id="host-addresses-without-tinkerbell-or-ansible"),
        pytest.param("tools: [tinkerbell, capi]", "tools: [tinkerbell, capi]\n  maas_pool: gpu",
                     [("provisioning.maas_pool", "provisioning.maas_pool is the MAAS resource pool machines are allocated "
                       "from, read only with provisioning.tools maas; with tools [tinkerbell, capi] it has no effect: "
                       "remove it, or add the tool")],
                     id="maas-pool-without-maas"),
        pytest.param("tools: [tinkerbell, capi]", "tools: [tinkerbell]",
                     [("provisioning.namespace", "provisioning.namespace is the namespace of the Metal3 BareMetalHosts and "
                       "the Cluster API MachineDeployments, read only with provisioning.tools metal3 or capi; with tools "
                       "[tinkerbell] it has no effect: remove it, or add the tool")],
                     id="namespace-without-capi"),
        pytest.param("tools: [tinkerbell, capi]", "tools: [tinkerbell, capi]", [], id="the-example-reads-all"),
    ],
)  # fmt: skip
def test_a_provisioning_setting_no_listed_tool_reads_is_said(
    tmp_path: Path, before: str, after: str, unused: list[tuple[str, str]]
) -> None:
    loaded = load_workload(_write(tmp_path, "w.yaml", EXAMPLE.replace(before, after)))
    found = [(f.path, f.message) for f in unused_setting_findings(loaded.workload) if f.code == "setting-unused"]
    assert sorted(found) == sorted(unused)


def test_an_ip_address_the_ansible_inventory_reads_is_not_said_unused(tmp_path: Path) -> None:
    """newuser42 item 5: hosts giving only ``ip_address``, no Tinkerbell: it is each host's ``ansible_host``, not unused."""
    text = EXAMPLE.replace(
        "          netmask: 255.255.255.0\n          gateway: 10.20.0.1\n          boot_disk: /dev/nvme0n1\n", ""
    )
    text = text.replace("tools: [tinkerbell, capi]", "tools: [metal3, capi]")
    path = _write(tmp_path, "w.yaml", "".join(line for line in text.splitlines(True) if "name_servers" not in line))
    found = [f.message for f in unused_setting_findings(load_workload(path).workload) if f.code == "setting-unused"]
    assert found == []
    inventory = render_file(str(path))["ansible/inventory.yml"]
    assert "ansible_host: !unsafe '10.20.0.21'" in inventory and "ansible_host: !unsafe '10.20.0.22'" in inventory


# --- L7: address fields' schema errors in words -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("netmask", "0.0.0.0", "'0.0.0.0' is a /0 mask, no subnet: give a /1 to /30 mask, such as 255.255.255.252 (/30) "
         "or 255.255.255.0 (/24)"),
        ("netmask", "255.255.255.254", "'255.255.255.254' is a /31 mask, whose two addresses leave no network and broadcast "
         "address beside the host's: give a /1 to /30 mask, such as 255.255.255.252 (/30) or 255.255.255.0 (/24)"),
        ("netmask", "255.255.255.255", "'255.255.255.255' is a /32 mask, a single address and no subnet: give a /1 to /30 "
         "mask, such as 255.255.255.252 (/30) or 255.255.255.0 (/24)"),
        ("netmask", "255.255.0.255", "'255.255.0.255' is not a netmask: its one bits are not contiguous from the left, as a "
         "/1 to /30 mask's are (/24: 255.255.255.0)"),
        ("netmask", "/24", "'/24' is in CIDR form: give the netmask dotted, 255.255.255.0 for /24"),
        ("ip_address", "10.20.0.21/24", "'10.20.0.21/24' is in CIDR form: give ip_address 10.20.0.21 and netmask "
         "255.255.255.0"),
        ("ip_address", "10.20.0.021", "'10.20.0.021' has a number with a leading zero, which some tools read as octal: "
         "write 10.20.0.21"),
        ("ip_address", "10.20.0.256", "'10.20.0.256' is not an IPv4 address: 256 is more than 255"),
        ("ip_address", "10.20.0", "'10.20.0' is not a dotted IPv4 address: four numbers from 0 to 255, such as 10.20.0.21"),
        ("gateway", "fd00::1", "'fd00::1' is not an IPv4 address (an IPv6 one?): the hosts' boot NICs are given IPv4 DHCP "
         "settings, dotted"),
    ],
)  # fmt: skip
def test_an_address_field_of_the_wrong_form_is_said_in_words(tmp_path: Path, field: str, value: str, said: str) -> None:
    text = _replace(EXAMPLE, "gpu-t01", field, f'"{value}"')
    path = _write(tmp_path, "w.yaml", text)
    message = _refusal(path)
    assert message == f"{path}:{_at(text, 'gpu-t01', field)}: hardware.inventory[0].hosts[0].{field}: {said}"
    assert not re.search(r"\^|\(\?!", message)  # no regular expression shown
