"""Owned hosts left without the address their neighbours give Ansible (newuser112).

An owned host's ``ip_address`` is its ``ansible_host``; a host that gives none is reached by its inventory name, which
only works where DNS (or ``/etc/hosts``) resolves it. Where every host leaves it out that is the site's choice; where
some give one and others do not, the ones without are most likely a line forgotten in a long list (30 stores, one box
each), and ``ansible-playbook`` then fails at that host alone, or reaches another machine that answers to the name.
"""

from __future__ import annotations

from generator.planner.plan import Finding
from generator.workload.models import Workload

#: The finding's code.
CODE = "host-address-missing"


def missing_address_findings(wl: Workload) -> list[Finding]:
    """One warning at the first owned host without ``ip_address`` where other owned hosts give one (Ansible only)."""
    if "ansible" not in wl.outputs or "maas" in wl.provisioning.tools:
        return []  # MAAS picks the deployed address itself (maas-address-unset)
    hosts = [
        (f"hardware.inventory[{j}].hosts[{k}]", host.name, host.ip_address)
        for j, group in enumerate(wl.hardware.inventory)
        for k, host in enumerate(group.hosts)
    ]
    given = sum(1 for _, _, address in hosts if address is not None)
    missing = [(where, name) for where, name, address in hosts if address is None]
    if not given or not missing:
        return []
    names = ", ".join(name for _, name in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    count = f"{len(missing)} owned host{'s' if len(missing) > 1 else ''}"
    message = (
        f"{count} ({names}) give{'' if len(missing) > 1 else 's'} no ip_address while {given} of the "
        f"{len(hosts)} listed give one: the Ansible inventory then has no ansible_host for "
        f"{'them' if len(missing) > 1 else 'it'} and Ansible connects by the host name, which only DNS or "
        "/etc/hosts on the control machine resolves; give each its ip_address"
    )
    return [Finding("warning", CODE, message, missing[0][0])]
