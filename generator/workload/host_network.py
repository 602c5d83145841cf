"""Owned hosts' boot networks (``hardware.inventory[].hosts``): each address usable, inside its subnet, none given twice.

The schema has already checked each value's form (an IPv4 address, a contiguous netmask, a MAC); these are the checks
of what a value is and across fields and hosts. Every problem is located at the field that causes it (file:line:col).

What no host can be given, by :mod:`ipaddress`'s reading of the IANA special-purpose registries:

* an IPv4 address (``ip_address``, ``gateway``) that is unspecified or of "this network" (0.0.0.0/8: a source address
  only, RFC 1122 section 3.2.1.3), loopback (127.0.0.0/8: it never leaves the machine), link-local (169.254.0.0/16:
  a host picks one itself where DHCP fails, RFC 3927 section 1.6 has no DHCP server hand them out, and no router
  forwards them), multicast (224.0.0.0/4: a group, not a host) or reserved (240.0.0.0/4, the limited broadcast
  255.255.255.255 among them);
* a boot MAC with the group (multicast) bit set, broadcast ff:ff:ff:ff:ff:ff included, or all zero: never a NIC's
  own address (Linux's ``is_valid_ether_addr``, include/linux/etherdevice.h, refuses both as a device's address).

And what two hosts cannot share (:func:`address_clashes`), inside one file as across the files rendered into one tree
(one cluster): a boot MAC, an ``ip_address``, a BMC address; nor may a host's ``ip_address`` be another host's gateway
or any host's BMC, nor a gateway a BMC.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from generator.errors import InputError, Location
from generator.named_tuple import NamedTuple
from generator.workload.loader import Document, read_yaml
from generator.workload.models import InventoryHost, Workload

TYPE_CHECKING = False  # ipaddress and urllib.parse are imported where an address is read: most workloads give none
if TYPE_CHECKING:
    from ipaddress import IPv4Address

Path = tuple[str | int, ...]

#: "This network" (RFC 1122 section 3.2.1.3; RFC 6890's registry: a source address, never a destination).
THIS_NETWORK = "0.0.0.0/8"
#: The limited broadcast address (RFC 919), in the reserved 240.0.0.0/4.
LIMITED_BROADCAST = "255.255.255.255"


def unusable_ip(address: IPv4Address) -> str | None:
    """Why ``address`` can be no host's address nor a router's (None where it can), by :mod:`ipaddress`'s predicates."""
    from ipaddress import IPv4Address, IPv4Network

    if address.is_unspecified:
        return "the unspecified address"
    if address in IPv4Network(THIS_NETWORK):
        return "an address of 'this network' (0.0.0.0/8), which is only ever a source address, never one a host is reached at"
    if address.is_loopback:
        return "a loopback address (127.0.0.0/8): packets to it never leave the machine that sends them"
    if address.is_link_local:
        return (
            "a link-local address (169.254.0.0/16): a host picks one itself where DHCP fails, no DHCP server hands one "
            "out (RFC 3927 section 1.6) and no router forwards it"
        )
    if address.is_multicast:
        return "a multicast address (224.0.0.0/4): it names a group of receivers, not one host"
    if address == IPv4Address(LIMITED_BROADCAST):
        return "the limited broadcast address: it reaches every host of the link, and is none of them"
    if address.is_reserved:
        return "a reserved address (240.0.0.0/4, kept for future use): hosts and routers do not take it"
    return None


def unusable_mac(mac: str) -> str | None:
    """Why boot MAC ``mac`` (``aa:bb:cc:dd:ee:ff``) is never a NIC's own address (None where it can be)."""
    octets = [int(part, 16) for part in mac.split(":")]
    if octets == [0xFF] * 6:
        return "the broadcast MAC address: every NIC of the link receives it, and none has it as its own"
    if octets[0] & 1:
        return (
            "a group (multicast) MAC address: its first octet's lowest bit is set, which names a group of receivers, "
            "never one NIC"
        )
    if not any(octets):
        return "the all-zero MAC address, which no NIC has"
    return None


#: Host fields whose schema pattern takes a dotted IPv4 address; their pattern errors are said in words (fuzz30 L7).
ADDRESS_FIELDS = ("ip_address", "gateway", "netmask")
#: The masks the schema takes (a subnet with a network and a broadcast address, and hosts between).
PREFIXES = range(1, 31)


def address_form_problem(field: str, value: str) -> str | None:
    """What is wrong with the form of ``value`` given as ``field`` (ADDRESS_FIELDS), in words; None if not known.

    The schema's pattern refused it; its regular expression tells a reader less than this does.
    """
    if "/" in value:
        return _cidr_problem(field, value)
    if ":" in value:
        return "is not an IPv4 address (an IPv6 one?): the hosts' boot NICs are given IPv4 DHCP settings, dotted"
    parts = value.split(".")
    if len(parts) != 4 or not all(part.isdigit() and part.isascii() for part in parts):
        return "is not a dotted IPv4 address: four numbers from 0 to 255, such as 10.20.0.21"
    if over := [part for part in parts if int(part) > 255]:
        return f"is not an IPv4 address: {over[0]} is more than 255"
    if [part for part in parts if len(part) > 1 and part.startswith("0")]:
        plain = ".".join(str(int(part)) for part in parts)
        return f"has a number with a leading zero, which some tools read as octal: write {plain}"
    if field != "netmask":
        return None
    from ipaddress import IPv4Address

    bits = int(IPv4Address(value))
    prefix = bin(bits).count("1")
    if bits != (0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF:
        return "is not a netmask: its one bits are not contiguous from the left, as a /1 to /30 mask's are (/24: 255.255.255.0)"
    why = {
        0: "is a /0 mask, no subnet",
        31: "is a /31 mask, whose two addresses leave no network and broadcast address beside the host's",
        32: "is a /32 mask, a single address and no subnet",
    }
    if prefix in why:
        return f"{why[prefix]}: give a /1 to /30 mask, such as 255.255.255.252 (/30) or 255.255.255.0 (/24)"
    return None


def _cidr_problem(field: str, value: str) -> str:
    """A value written in CIDR form (``10.20.0.21/24``, ``/24``), and the fields it gives."""
    from ipaddress import AddressValueError, IPv4Address, IPv4Network

    address, _, prefix = value.partition("/")
    if not (prefix.isdigit() and prefix.isascii() and int(prefix) in PREFIXES):
        return "is in CIDR form, which these fields do not take: give the address and the netmask apart, both dotted"
    mask = IPv4Network(f"0.0.0.0/{prefix}").netmask
    if field == "netmask":
        return f"is in CIDR form: give the netmask dotted, {mask} for /{prefix}"
    try:
        given = IPv4Address(address)
    except AddressValueError:
        return f"is in CIDR form: give the address alone, dotted, and /{prefix} as netmask {mask}"
    return f"is in CIDR form: give {field} {given} and netmask {mask}"


def host_network_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every owned host's addresses: usable, the address inside its netmask's subnet beside its gateway, none shared.

    Two hosts with one boot MAC or one address would be one machine to a DHCP server (Tinkerbell's Smee, Ironic's
    dnsmasq): it would hand both the first one's address, or boot one as the other.
    """
    errors: list[InputError] = []
    metal3 = "metal3" in wl.provisioning.tools
    for j, group in enumerate(wl.hardware.inventory):
        for k, host in enumerate(group.hosts):
            at: Path = ("hardware", "inventory", j, "hosts", k)
            errors += _value_errors(doc, at, host)
            errors += _subnet_errors(doc, at, host)
            if metal3 and host.boot_disk is not None and (why := metal3_root_device_problem(host.boot_disk)) is not None:
                errors.append(InputError(why, doc.locate((*at, "boot_disk"))))
    for k, server in enumerate(wl.provisioning.name_servers):  # review39 item 10: 0.0.0.0 or a multicast rendered
        from ipaddress import IPv4Address

        if (why := unusable_ip(IPv4Address(server))) is not None:
            errors.append(
                InputError(f"{server} is {why}; no DNS server can have it", doc.locate(("provisioning", "name_servers", k)))
            )
    clashes = address_clashes([("", host_addresses(wl))], lambda file, path: file)  # one file: no other is named
    errors += sorted((InputError(message, doc.locate(claim[1].path)) for claim, message in clashes), key=_position)
    return errors


def tree_address_errors(sources: Sequence[tuple[str, Sequence[HostAddress]]]) -> list[InputError]:
    """The addresses two workload files rendered into one tree (one cluster) both give, each at its second file's field.

    ``sources``: (file, :func:`host_addresses` of its workload) in the order render meets them (by workload name, then
    file). Each file has passed :func:`host_network_errors` alone; the message names where the other file gives it.
    """
    documents: dict[str, Document] = {}

    def locate(file: str, path: Path) -> Location:
        if file not in documents:
            documents[file] = read_yaml(file)
        return documents[file].locate(path)

    clashes = address_clashes(sources, lambda file, path: str(locate(file, path)))
    rank = {file: i for i, (file, _) in enumerate(sources)}
    errors = [(rank[file], InputError(message, locate(file, address.path))) for (file, address), message in clashes]
    return [error for _, error in sorted(errors, key=lambda e: (e[0], *_position(e[1])))]


def metal3_root_device_problem(boot_disk: str) -> str | None:
    """Why Metal3 cannot take ``boot_disk`` as its BareMetalHost's ``rootDeviceHints.deviceName``, or None.

    The BareMetalHost CRD: "A Linux device name like "/dev/vda", or a by-path link to it like
    "/dev/disk/by-path/pci-0000:01:00.0-scsi-0:2:0:0". The hint must match the actual value exactly."
    """
    if not boot_disk.startswith("/dev/disk/") or boot_disk.startswith("/dev/disk/by-path/"):
        return None
    return (
        f"{boot_disk} is a link Metal3's root device hint does not match (a BareMetalHost's rootDeviceHints.deviceName "
        "takes a device name such as /dev/nvme0n1 or a /dev/disk/by-path/ link): give one of those, or leave boot_disk "
        "out and Ironic picks the smallest disk of 4 GiB or more"
    )


def _position(error: InputError) -> tuple[int, int]:
    """Line and column of a located error, to list errors in file order."""
    where = error.location
    return (where.line or 0, where.column or 0) if where is not None else (0, 0)


def _value_errors(doc: Document, at: Path, host: InventoryHost) -> list[InputError]:
    """The host's boot MAC, address and gateway, each one a host or router can have."""
    from ipaddress import IPv4Address

    errors = []
    if host.boot_mac_address is not None and (why := unusable_mac(host.boot_mac_address)) is not None:
        message = f"{host.boot_mac_address} is {why}: give the MAC address of the NIC the host boots from"
        errors.append(InputError(message, doc.locate((*at, "boot_mac_address"))))
    for field in ("ip_address", "gateway"):
        value = getattr(host, field)
        if value is not None and (why := unusable_ip(IPv4Address(value))) is not None:
            whose = "host" if field == "ip_address" else "router"
            errors.append(InputError(f"{value} is {why}; no {whose} can have it", doc.locate((*at, field))))
    return errors


def _subnet_errors(doc: Document, at: Path, host: InventoryHost) -> list[InputError]:
    """The host's address is neither its subnet's network nor its broadcast address, and its gateway is beside it."""
    if host.ip_address is None or host.netmask is None:
        return []  # nothing to hold the other against: a host missing one gets no Tinkerbell Hardware, and is told so
    from ipaddress import IPv4Address, IPv4Network

    address = IPv4Address(host.ip_address)
    if unusable_ip(address) is not None:
        return []  # said by _value_errors
    subnet = IPv4Network(f"{host.ip_address}/{host.netmask}", strict=False)
    ends = {subnet.network_address: "network", subnet.broadcast_address: "broadcast"}
    if address in ends:
        return [
            InputError(
                f"{address} is the {ends[address]} address of its subnet {subnet} (netmask {host.netmask}): give the host "
                f"an address from {subnet.network_address + 1} to {subnet.broadcast_address - 1}",
                doc.locate((*at, "ip_address")),
            )
        ]
    if host.gateway is None or unusable_ip(IPv4Address(host.gateway)) is not None:
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


class HostAddress(NamedTuple):
    """One address an owned host gives: its boot MAC, its IP, its gateway's IP, its BMC's address or the BMC's IP."""

    #: boot_mac_address, ip_address, gateway, bmc_address (the address as given) or bmc_ip (its host part, an IPv4)
    role: str
    #: What is compared: the lower-case MAC, the dotted IPv4, the BMC address as given.
    key: str
    #: The value as the host gives it.
    value: str
    host: str
    #: Where the host gives it (``hardware.inventory[j].hosts[k].<field>``).
    path: Path


def host_addresses(wl: Workload) -> tuple[HostAddress, ...]:
    """Every address the workload's owned hosts give, in file order (plain data: it crosses worker processes)."""
    out: list[HostAddress] = []
    for j, group in enumerate(wl.hardware.inventory):
        for k, host in enumerate(group.hosts):
            at: Path = ("hardware", "inventory", j, "hosts", k)
            if host.boot_mac_address is not None:
                mac = host.boot_mac_address
                out.append(HostAddress("boot_mac_address", mac.lower(), mac, host.name, (*at, "boot_mac_address")))
            for field in ("ip_address", "gateway"):
                if (value := getattr(host, field)) is not None:
                    out.append(HostAddress(field, value, value, host.name, (*at, field)))
            if host.bmc_address is not None:
                bmc, where = host.bmc_address, (*at, "bmc_address")
                out.append(HostAddress("bmc_address", bmc, bmc, host.name, where))
                if (ip := bmc_ip(bmc)) is not None:
                    out.append(HostAddress("bmc_ip", ip, bmc, host.name, where))
    return tuple(out)


def bmc_ip(address: str) -> str | None:
    """The IPv4 address a BMC address (``redfish://10.0.0.5/...``, ``ipmi://10.0.0.5:623``) names, where it names one."""
    from ipaddress import AddressValueError, IPv4Address
    from urllib.parse import urlsplit

    host = urlsplit(address).hostname
    try:
        return str(IPv4Address(host or ""))
    except AddressValueError:
        return None  # a host name or an IPv6 address: not compared with the hosts' IPv4 addresses


#: The key space each role's values are compared in.
_SPACE = {"boot_mac_address": "mac", "ip_address": "ip", "gateway": "ip", "bmc_ip": "ip", "bmc_address": "bmc"}
#: Roles that clash on one value -> (the role the error stands at, whether it stands even where one host gives both).
#: Gateways are shared, and so may a BMC's IP be (a chassis manager's, by system path); a BMC address is not.
_CLASHES: dict[frozenset[str], tuple[str, bool]] = {
    frozenset({"boot_mac_address"}): ("boot_mac_address", False),
    frozenset({"ip_address"}): ("ip_address", False),
    frozenset({"bmc_address"}): ("bmc_address", False),
    # a host's gateway equal to its own address is _subnet_errors' ("is the host's own ip_address")
    frozenset({"ip_address", "gateway"}): ("ip_address", False),
    frozenset({"ip_address", "bmc_ip"}): ("ip_address", True),
    frozenset({"gateway", "bmc_ip"}): ("gateway", True),
}

#: (file, or "" for the one file checked alone; an address it gives)
Claim = tuple[str, HostAddress]
#: Where another file gives a claim, as the message names it: (file, path) -> "file:line:col: path".
Naming = Callable[[str, Path], str]


def path_text(path: Path) -> str:
    """``hardware.inventory[0].hosts[1].gateway``: a field's path as messages and findings write it."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def address_clashes(sources: Sequence[tuple[str, Sequence[HostAddress]]], naming: Naming) -> list[tuple[Claim, str]]:
    """Each address that clashes with another, and the error that stands at it, in the order the addresses are met.

    ``sources``: (file, its hosts' addresses) in the order they are met ("" for one file checked alone). A field
    gets one error at most: where one host's value is another's, at the later of two like fields, at the
    ``ip_address`` of an address that is a gateway's or a BMC's, at the gateway that is a BMC's.
    """
    order: dict[Claim, int] = {}
    firsts: dict[tuple[str, str], list[Claim]] = {}  # (role, key) -> its first claims, of distinct hosts (two at most)
    found: dict[Claim, str] = {}
    for file, addresses in sources:
        for address in addresses:
            claim: Claim = (file, address)
            order[claim] = len(order)
            for role in [r for r, space in _SPACE.items() if space == _SPACE[address.role]]:
                rule = _CLASHES.get(frozenset({address.role, role}))
                if rule is None:
                    continue
                subject_role, same_host = rule
                for first in firsts.get((role, address.key), []):
                    if not same_host and (first[0], first[1].host) == (file, address.host):
                        continue
                    subject, other = (claim, first) if address.role == subject_role else (first, claim)
                    found.setdefault(subject, _clash_message(subject, other, naming))
                    break
            same = firsts.setdefault((address.role, address.key), [])
            if len(same) < 2 and all((c[0], c[1].host) != (file, address.host) for c in same):
                same.append(claim)
    return sorted(found.items(), key=lambda item: order[item[0]])


def _clash_message(subject: Claim, other: Claim, naming: Naming) -> str:
    """The error at ``subject``, whose value ``other`` (given before or after it) gives too."""
    (file, here), (there_file, there) = subject, other
    apart = there_file != file
    owner = f"host '{there.host}'" + (f" ({naming(there_file, there.path)})" if apart else "")
    tree = "; rendered into one tree, they are hosts of one cluster" if apart else ""
    if here.role == there.role == "bmc_address":
        if not apart:
            return f"BMC address '{here.value}' is used twice"  # as one file has said it since Metal3 (Ironic)
        return f"{owner} has BMC address '{here.value}' too: one BMC would power two hosts on and off{tree}"
    if here.role == there.role:
        return f"{owner} has {here.role} '{here.value}' too: each host boots with its own{tree}"
    if there.role == "gateway":
        return f"{here.key} is the gateway of {owner}: a host cannot take its router's address{tree}"
    if not apart and there.host == here.host:
        bmc = f"the host's own BMC (bmc_address {there.value})"
    else:
        bmc = f"the BMC of {owner}" + ("" if apart else f" (bmc_address {there.value})")
    why = "a BMC is a network port of its own, with an address of its own"
    if here.role == "gateway":
        why = "a BMC routes nothing"
    return f"{here.key} is the address of {bmc}: {why}{tree}"
