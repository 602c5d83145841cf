"""``hardware.fixed``'s host: the name the Ansible inventory gives it and the address Ansible connects to (fix192).

The schema holds the characters; this holds what a pattern reads badly: an address is an IPv4 or IPv6 address, or a
DNS name (RFC 1123 labels of letters, digits and '-', at most 63 characters each, whose last label is not all digits:
``10.0.0.300`` is a bad address, not a host name), and it names the address of ``host_name``, so it needs one.
"""

from __future__ import annotations

import re
from ipaddress import ip_address

from generator.calculator.machine import FixedSpec
from generator.errors import InputError
from generator.workload.loader import Document

#: The groups every Ansible inventory has (https://docs.ansible.com/ansible/latest/inventory_guide/intro_inventory.html
#: "Default groups"): no host may take their names.
ANSIBLE_GROUPS = ("all", "ungrouped")

#: One label of a DNS name (RFC 1123: a letter or digit first and last, '-' inside, 1 to 63 characters).
_LABEL = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?")


def address_problem(address: str) -> str | None:
    """Why ``address`` is neither an IP address nor a DNS name, else None."""
    try:
        ip_address(address)
        return None
    except ValueError:
        pass
    labels = address.removesuffix(".").split(".")
    if ":" in address:
        return f"address {address!r} is not an IPv6 address"
    if len(address) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return (
            f"address {address!r} is neither an IP address nor a DNS name (labels of letters, digits and '-', "
            "1 to 63 characters each, joined by dots)"
        )
    if labels[-1].isdigit():
        return f"address {address!r} is not an IPv4 address (each of its four numbers 0 to 255), nor a DNS name"
    return None


def host_name_problem(name: str) -> str | None:
    """Why the rendered inventory cannot name a host ``name`` (one of Ansible's built-in groups), else None."""
    if name in ANSIBLE_GROUPS:  # fuzz27 L12; hostile96: hardware.fixed.host_name 'all' rendered a host named all
        return (
            f"host name '{name}' is one of Ansible's built-in groups ({', '.join(ANSIBLE_GROUPS)}), which the rendered "
            "inventory cannot also name as a host; give the host another name"
        )
    return None


def fixed_host_errors(doc: Document, spec: FixedSpec) -> list[InputError]:
    """A ``host_name`` Ansible reads as a group; a bad ``address``, or one without the ``host_name`` it is the address of."""
    if spec.host_name is not None and (problem := host_name_problem(spec.host_name)) is not None:
        return [InputError(problem, doc.locate(("hardware", "fixed", "host_name")))]
    at = ("hardware", "fixed", "address")
    if spec.address is None:
        return []
    if (problem := address_problem(spec.address)) is not None:
        return [InputError(problem, doc.locate(at))]
    if spec.host_name is None:
        told = "address is the Ansible inventory host's ansible_host: give host_name, the host it is the address of"
        return [InputError(told, doc.locate(at))]
    return []
