"""Per-site planning (``sites:``, newuser113): an edge fleet whose every site is served by its own owned hosts alone.

A retail chain's store cannot reach a box in another store (a WAN, privacy, outages), so the stores' rates are not
pooled: each deployment's ``requests_per_second`` is each site's rate, and the planner sizes one site on that site's
hosts and repeats it per site (:mod:`generator.planner.per_site`). This module holds what the workload must say for
that to be one plan: every owned host named and at exactly one site, and every site the same hardware (as many hosts
of each ``hardware.inventory`` entry), so that one site's plan is every site's. The errors name the field.
"""

from __future__ import annotations

from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import InventoryGroup, Site, Workload


def site_group(name: str) -> str:
    """The Ansible group of a site's hosts (``[a-z0-9_]``, as every group specgen writes)."""
    return "site_" + name.replace("-", "_")


def site_errors(doc: Document, wl: Workload) -> list[InputError]:
    """What keeps ``sites`` from being one plan repeated per site, each at its field."""
    if not wl.sites:
        return []
    hw = wl.hardware
    if hw.fixed is not None or not hw.inventory:
        why = "per-site planning places each site on its own owned hosts: list them under hardware.inventory[].hosts"
        return [InputError(why, doc.locate(("sites",)))]
    errors: list[InputError] = []
    if hw.buy:
        why = (
            "per-site planning serves each site from its own owned hosts, nothing bought or rented for it: "
            "set hardware.buy: false"
        )
        errors.append(InputError(why, doc.locate(("hardware", "buy"))))
    if wl.provisioning.tools:  # their objects are rendered for the plan's pools: one site's hosts (not yet per site)
        why = (
            "per-site plans render no provisioning objects yet (MAAS, Metal3, Tinkerbell, Cluster API would be given "
            "one site's hosts): leave provisioning.tools out and provision the sites' hosts with the Ansible inventory"
        )
        errors.append(InputError(why, doc.locate(("provisioning", "tools"))))
    owned: dict[str, int] = {}  # host name -> its inventory entry
    for j, group in enumerate(hw.inventory):
        if len(group.hosts) != group.count:
            why = (
                f"{group.count} server(s) but {len(group.hosts)} host(s) named: with sites, every owned server is "
                "named (hardware.inventory[].hosts) and listed at its site"
            )
            errors.append(InputError(why, doc.locate(("hardware", "inventory", j, "count"))))
        owned.update((host.name, j) for host in group.hosts)
    errors += _site_host_errors(doc, wl.sites, owned)
    if errors:
        return errors
    errors += _unplaced_errors(doc, hw.inventory, wl.sites)
    return errors or _shape_errors(doc, hw.inventory, wl.sites, owned)


def _site_host_errors(doc: Document, sites: tuple[Site, ...], owned: dict[str, int]) -> list[InputError]:
    """A site name given twice, a host that is not owned, a host at two sites."""
    errors: list[InputError] = []
    names: dict[str, int] = {}
    at: dict[str, tuple[int, int]] = {}
    for i, site in enumerate(sites):
        if site.name in names:
            first = doc.locate(("sites", names[site.name], "name"))
            why = f"site name '{site.name}' is used twice (first at {first.path}, line {first.line})"
            errors.append(InputError(why, doc.locate(("sites", i, "name"))))
        names.setdefault(site.name, i)
        for k, host in enumerate(site.hosts):
            where = doc.locate(("sites", i, "hosts", k))
            if host not in owned:
                why = f"host '{host}' of site '{site.name}' is no owned host (hardware.inventory[].hosts[].name)"
                errors.append(InputError(why, where))
            elif host in at:
                other = sites[at[host][0]].name
                first = doc.locate(("sites", at[host][0], "hosts", at[host][1]))
                why = f"host '{host}' is at site '{other}' already ({first.path}, line {first.line}): a box serves one site"
                errors.append(InputError(why, where))
            else:
                at[host] = (i, k)
    return errors


def _unplaced_errors(doc: Document, inventory: tuple[InventoryGroup, ...], sites: tuple[Site, ...]) -> list[InputError]:
    """An owned host that belongs to no site: no site's plan would use it."""
    placed = {host for site in sites for host in site.hosts}
    return [
        InputError(
            f"owned host '{host.name}' belongs to no site: add it to one site's hosts (sites[].hosts)",
            doc.locate(("hardware", "inventory", j, "hosts", k, "name")),
        )
        for j, group in enumerate(inventory)
        for k, host in enumerate(group.hosts)
        if host.name not in placed
    ]


def _shape(site: Site, owned: dict[str, int], entries: int) -> tuple[int, ...]:
    """How many hosts of each inventory entry a site holds."""
    counts = [0] * entries
    for host in site.hosts:
        counts[owned[host]] += 1
    return tuple(counts)


def _shape_errors(
    doc: Document, inventory: tuple[InventoryGroup, ...], sites: tuple[Site, ...], owned: dict[str, int]
) -> list[InputError]:
    """A site whose hardware differs from the first site's: one site's plan would not be every site's."""
    first = _shape(sites[0], owned, len(inventory))
    errors: list[InputError] = []
    for i, site in enumerate(sites[1:], start=1):
        shape = _shape(site, owned, len(inventory))
        if shape != first:
            j = next(j for j, (a, b) in enumerate(zip(shape, first, strict=True)) if a != b)
            why = (
                f"site '{site.name}' holds {shape[j]} host(s) of hardware.inventory[{j}] where site "
                f"'{sites[0].name}' holds {first[j]}: every site is planned as the first one, so each holds as many "
                "hosts of each inventory entry"
            )
            errors.append(InputError(why, doc.locate(("sites", i, "hosts"))))
    return errors


def site_hosts(wl: Workload, site: Site) -> tuple[str, ...]:
    """A site's hosts in inventory order (entry, then place in its list): the k-th of every site is one role."""
    order = {host.name: n for n, host in enumerate(h for group in wl.hardware.inventory for h in group.hosts)}
    return tuple(sorted(site.hosts, key=order.__getitem__))


def site_workload(wl: Workload, site: Site) -> Workload:
    """The workload of one site: its hosts alone in each inventory entry (the entries' indexes kept), no sites."""
    mine = set(site.hosts)
    inventory = tuple(
        group._replace(count=len(hosts), hosts=hosts)
        for group in wl.hardware.inventory
        for hosts in [tuple(h for h in group.hosts if h.name in mine)]
    )
    return wl._replace(hardware=wl.hardware._replace(inventory=inventory), sites=())
