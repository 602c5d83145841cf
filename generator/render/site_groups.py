"""The Ansible inventory of a per-site plan (``sites:``, newuser113): every site's hosts, each in its site's group.

The plan is one site's (:mod:`generator.planner.per_site`): its pools name the first site's hosts. Every other site
runs the same on its hosts in the same roles (``Plan.sites.hosts``: the k-th host of each site), so a pool's group
holds the hosts of that role at every site, each with the first site's host vars (the replicas it runs), and each site
is a group of its own under ``sites`` (``site_<name>``), holding every host of the site, a free one too.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.planner.plan import Plan
from generator.workload.sites import site_group


def role_hosts(plan: Plan) -> dict[str, tuple[str, ...]]:
    """Each host of the first site -> the host in its role at every site (the first site's own first); {} unsited."""
    if plan.sites is None:
        return {}
    first = plan.sites.hosts[0]
    return {host: tuple(hosts[k] for hosts in plan.sites.hosts) for k, host in enumerate(first)}


def every_site(names: Sequence[str], roles: dict[str, tuple[str, ...]]) -> list[str]:
    """The hosts ``names`` (the first site's) are at every site, site by site; ``names`` where no sites are given."""
    if not roles:
        return list(names)
    sites = len(next(iter(roles.values())))
    return [roles[name][s] if name in roles else name for s in range(sites) for name in names]


def site_children(plan: Plan) -> dict[str, list[str]]:
    """The ``sites`` group's children: each site's group and its hosts, in the workload's order."""
    if plan.sites is None:
        return {}
    return {site_group(name): list(hosts) for name, hosts in zip(plan.sites.names, plan.sites.hosts, strict=True)}
