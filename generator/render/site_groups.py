"""The Ansible inventory of a per-site plan (``sites:``, newuser113): every site's hosts, each in its site's group.

The plan is one site's (:mod:`generator.planner.per_site`): its pools name the first site's hosts. Every other site
runs the same on its hosts in the same roles (``Plan.sites.hosts``: the k-th host of each site), so a pool's group
holds the hosts of that role at every site, each with the first site's host vars (the replicas it runs), and each site
is a group of its own under ``sites`` (``site_<name>``), holding every host of the site, a free one too.

fix203: the sites of another rate scale (``sites[].requests_per_second_scale``) run their own profile's plan
(``Plan.sites.plans``): its pools are renamed with the profile's tag (``chat_l4_24gb_x3``), so their Ansible groups,
group vars, node labels and Terraform pool keys are their own, and :func:`role_hosts` maps the hosts of each
profile's first site to the hosts in the same role at that profile's sites alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.planner.per_site import profile_tag
from generator.planner.plan import Plan, RackSpec
from generator.workload.sites import site_group


def profile_members(plan: Plan, profile: int) -> list[int]:
    """The indexes of the sites of profile ``profile`` (all sites where the plan says no profiles)."""
    if plan.sites is None:
        return []
    if not plan.sites.profiles:
        return list(range(len(plan.sites.names)))
    names = set(plan.sites.profiles[profile]["sites"])
    return [i for i, name in enumerate(plan.sites.names) if name in names]


def role_hosts(plan: Plan, profile: int = 0) -> dict[str, tuple[str, ...]]:
    """Each host of a profile's first site -> the host in its role at each site of the profile; {} unsited."""
    if plan.sites is None:
        return {}
    members = [plan.sites.hosts[i] for i in profile_members(plan, profile)]
    return {host: tuple(hosts[k] for hosts in members) for k, host in enumerate(members[0])}


def other_profiles(plan: Plan) -> list[tuple[int, str, Plan]]:
    """The later profiles (index, tag, plan with its pools renamed ``<pool>_<tag>``), in the order they appear."""
    if plan.sites is None or len(plan.sites.plans) < 2:
        return []
    out = []
    for index, (profile, own) in enumerate(zip(plan.sites.profiles, plan.sites.plans, strict=True)):
        if index:
            tag = profile_tag(profile["requests_per_second_scale"])
            out.append((index, tag, renamed_pools(own, "_" + tag)))
    return out


def renamed_pools(plan: Plan, suffix: str) -> Plan:
    """``plan`` with every pool's name (and each reference to it) suffixed: a profile's pools as its own groups."""

    def racked(rack: RackSpec) -> RackSpec:
        return rack._replace(pools=tuple(p._replace(pool=p.pool + suffix) for p in rack.pools))

    deployments = tuple(
        d._replace(pool=d.pool + suffix, split=tuple(p._replace(pool=p.pool + suffix) for p in d.split)) for d in plan.deployments
    )
    pools = tuple(p._replace(name=p.name + suffix) for p in plan.pools)
    return plan._replace(deployments=deployments, pools=pools, racks=tuple(racked(r) for r in plan.racks))


def every_site(names: Sequence[str], roles: dict[str, tuple[str, ...]]) -> list[str]:
    """The hosts ``names`` (a profile's first site's) are at its sites, site by site; ``names`` where no sites."""
    if not roles:
        return list(names)
    sites = len(next(iter(roles.values())))
    return [roles[name][s] if name in roles else name for s in range(sites) for name in names]


def site_children(plan: Plan) -> dict[str, list[str]]:
    """The ``sites`` group's children: each site's group and its hosts, in the workload's order."""
    if plan.sites is None:
        return {}
    return {site_group(name): list(hosts) for name, hosts in zip(plan.sites.names, plan.sites.hosts, strict=True)}
