"""Owned hosts' boot networks (``hardware.inventory[].hosts``): each address inside its subnet, none given twice.

The schema has already checked each value's form (an IPv4 address, a contiguous netmask, a MAC); these are the checks
across fields and hosts. Every problem is located at the field that causes it (file:line:col).
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network

from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import InventoryHost, Workload

Path = tuple[str | int, ...]


def host_network_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every owned host's address against its netmask and gateway, and boot MACs and addresses given twice.

    Two hosts with one boot MAC or one address would be one machine to a DHCP server (Tinkerbell's Smee, Ironic's
    dnsmasq): it would hand both the first one's address, or boot one as the other.
    """
    errors: list[InputError] = []
    owners: dict[tuple[str, str], str] = {}  # (field, value) -> the host that gave it first
    for j, group in enumerate(wl.hardware.inventory):
        for k, host in enumerate(group.hosts):
            at: Path = ("hardware", "inventory", j, "hosts", k)
            for field, value in (("boot_mac_address", host.boot_mac_address), ("ip_address", host.ip_address)):
                if value is None:
                    continue
                first = owners.setdefault((field, value.lower()), host.name)
                if first != host.name:
                    message = f"host '{first}' has {field} '{value}' too: each host boots with its own"
                    errors.append(InputError(message, doc.locate((*at, field))))
            errors += _subnet_errors(doc, at, host)
    return errors


def _subnet_errors(doc: Document, at: Path, host: InventoryHost) -> list[InputError]:
    """The host's address is neither its subnet's network nor its broadcast address, and its gateway is beside it."""
    if host.ip_address is None or host.netmask is None:
        return []  # nothing to hold the other against: a host missing one gets no Tinkerbell Hardware, and is told so
    subnet = IPv4Network(f"{host.ip_address}/{host.netmask}", strict=False)
    ends = {subnet.network_address: "network", subnet.broadcast_address: "broadcast"}
    address = IPv4Address(host.ip_address)
    if address in ends:
        return [
            InputError(
                f"{address} is the {ends[address]} address of its subnet {subnet} (netmask {host.netmask}): give the host "
                f"an address from {subnet.network_address + 1} to {subnet.broadcast_address - 1}",
                doc.locate((*at, "ip_address")),
            )
        ]
    if host.gateway is None:
        return []
    gateway = IPv4Address(host.gateway)
    problem = None
    if gateway not in subnet:
        problem = (
            f"is outside the host's subnet {subnet} (ip_address {address}, netmask {host.netmask}): the host cannot reach it"
        )
    elif gateway == address:
        problem = "is the host's own ip_address"
    elif gateway in ends:
        problem = f"is the {ends[gateway]} address of the host's subnet {subnet}"
    return [InputError(f"gateway {gateway} {problem}", doc.locate((*at, "gateway")))] if problem else []
