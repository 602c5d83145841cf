"""Per-site planning (``sites:``, newuser113): size one site on its own hosts, then repeat it at every site.

Every site holds the same hardware (:func:`generator.workload.sites.site_errors` refuses a workload where one does
not), so the first site's plan, at each deployment's per-site rate on that site's hosts alone, is every site's: the
plan's pools, deployments and totals are one site's, :class:`~generator.planner.plan.SitesSpec` says each site's hosts
and the chain's totals, and a ``per-site`` finding says so in words. A site whose hosts cannot hold its services is
an error naming the site's ``hosts`` field, with the planner's own reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from generator.errors import InfeasibleError, InputError
from generator.planner.capacity import scaled
from generator.planner.host_address import CODE as ADDRESS_CODE
from generator.planner.host_address import missing_address_findings
from generator.planner.plan import Finding, Plan, SitesSpec, sorted_findings
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, Site, Workload
from generator.workload.sites import site_group, site_hosts, site_workload

#: A finding's path at an owned host of the site's workload (its place in the site's list, not the file's).
_HOST_PATH = re.compile(r"hardware\.inventory\[(\d+)\]\.hosts\[(\d+)\]")

#: The totals that are one site's figure times the sites (the others, as idle GPUs or racks, are said per site).
CHAIN_TOTALS = ("nodes", "gpus", "power_w", "heat_btu_per_h", "usd_per_month", "capex_usd", "opex_usd_per_month")


def plan_per_site(loaded: LoadedWorkload, plan_one: Callable[[LoadedWorkload], Plan]) -> Plan:
    """The first site's plan (``plan_one`` plans a workload of one site) with the chain's sites and totals.

    Each distinct site profile (its ``requests_per_second_scale``; every site holds the same hardware) is planned once,
    on its first site's hosts at its rates; the chain's totals sum each profile's figures times its sites (fix201).
    """
    wl = loaded.workload
    groups = site_profiles(wl.sites)
    plans = [_profile_plan(loaded, members[0], plan_one) for members in groups]
    _refuse_group_clash(loaded, [(p, members) for p, members in zip(plans, groups, strict=True)])
    plan = plans[0]._replace(findings=_file_findings(wl, wl.sites[0], plans[0].findings))
    totals: dict[str, Any] = {"sites": len(wl.sites)}
    for key in CHAIN_TOTALS:
        totals[key] = _summed([(p.totals.get(key), len(members)) for p, members in zip(plans, groups, strict=True)])
    profiles = tuple(_profile(wl.sites, members, p) for members, p in zip(groups, plans, strict=True))
    names = tuple(s.name for s in wl.sites)
    sites = SitesSpec(names, tuple(site_hosts(wl, s) for s in wl.sites), totals, profiles, tuple(plans))
    said = [Finding("info", "per-site", _per_site_text(loaded, plan, totals), "sites")]
    for members, other in zip(groups[1:], plans[1:], strict=True):  # fix203: a profile's own findings, its files said
        said += _profile_findings(wl, members, other, plan.findings)
        said.append(_layout_finding(wl.sites, members, other))
    return plan._replace(sites=sites, findings=(*plan.findings, *said))


def _refuse_group_clash(loaded: LoadedWorkload, profiles: list[tuple[Plan, list[int]]]) -> None:
    """Refuse a site whose Ansible group is a pool's group name, at the site's name.

    hostile98: Ansible's groups are global, so the pool's group would merge into the site's.
    """
    wl = loaded.workload
    pools = {pool.name for pool in profiles[0][0].pools}
    for plan, members in profiles[1:]:  # fix203: a later profile's pools are suffixed with its tag
        tag = profile_tag(wl.sites[members[0]].requests_per_second_scale)
        pools |= {f"{pool.name}_{tag}" for pool in plan.pools}
    for i, site in enumerate(wl.sites):
        if (group := site_group(site.name)) in pools:
            why = f"site '{site.name}' has the Ansible group {group}, the name of a pool's group: rename the site"
            raise InputError(why, loaded.document.locate(("sites", i, "name")))


def profile_tag(scale: float) -> str:
    """A profile's name in its rendered files: ``x3`` (pool ``chat_l4_24gb_x3``, ``site-profiles/x3/``), ``x2_5``."""
    return "x" + f"{scale:g}".replace(".", "_").replace("+", "")


def _profile_findings(wl: Workload, members: list[int], plan: Plan, said: tuple[Finding, ...]) -> list[Finding]:
    """A later profile's findings the first site's plan does not say, each naming the profile's sites (fix203)."""
    first = wl.sites[members[0]]
    known = {(f.level, f.code, f.path, f.message) for f in said}
    names = ", ".join(wl.sites[i].name for i in members)
    at = f"at site(s) {names} (x{first.requests_per_second_scale:g} the rates): "
    mapped = [f for f in _file_findings(wl, first, plan.findings) if f.code != ADDRESS_CODE]
    return [f._replace(message=at + f.message) for f in mapped if (f.level, f.code, f.path, f.message) not in known]


def site_profiles(sites: tuple[Site, ...]) -> list[list[int]]:
    """The sites' indexes grouped by profile (their rate scale), in the order each profile first appears."""
    groups: dict[float, list[int]] = {}
    for i, site in enumerate(sites):
        groups.setdefault(site.requests_per_second_scale, []).append(i)
    return list(groups.values())


def _profile_plan(loaded: LoadedWorkload, i: int, plan_one: Callable[[LoadedWorkload], Plan]) -> Plan:
    """The plan of site ``i`` alone, at its rates (each deployment's times its scale)."""
    site = loaded.workload.sites[i]
    one = loaded._replace(workload=site_workload(loaded.workload, site))
    if site.requests_per_second_scale != 1:
        one = _rounded(scaled(one, site.requests_per_second_scale), one.workload)
    try:
        return plan_one(one)
    except InfeasibleError as exc:
        raise _site_error(loaded, i, exc) from None


def _rounded(loaded: LoadedWorkload, site: Workload) -> LoadedWorkload:
    """A scaled site's workload at the site's objective (``scaled`` plans at cost), its rates to 12 digits (0.8 x 3 is 2.4).

    fix203: the scaled rates read ``2.4000000000000004 req/s`` in the busier site's group vars and Terraform files.
    """

    def tidy(rate: float) -> float:
        return float(f"{rate:.12g}")

    deployments = tuple(
        d._replace(
            inference=d.inference._replace(
                requests_per_second=tidy(d.inference.requests_per_second),
                average_requests_per_second=(
                    None if d.inference.average_requests_per_second is None else tidy(d.inference.average_requests_per_second)
                ),
            )
        )
        if isinstance(d, InferenceDeployment)
        else d
        for d in loaded.workload.deployments
    )
    return loaded._replace(workload=loaded.workload._replace(deployments=deployments, objective=site.objective))


def _layout(plan: Plan) -> list[dict[str, Any]]:
    """What a site of a profile runs: each deployment's pool, replicas and TP."""
    return [{"deployment": d.name, "pool": d.pool, "replicas": d.replicas, "tp": d.tp} for d in plan.deployments]


def _profile(sites: tuple[Site, ...], members: list[int], plan: Plan) -> dict[str, Any]:
    """A profile as spec.json says it: its scale, sites, one site's totals and layout."""
    one = {key: plan.totals.get(key) for key in CHAIN_TOTALS}
    scale = sites[members[0]].requests_per_second_scale
    return {"requests_per_second_scale": scale, "sites": [sites[i].name for i in members], "per_site": one} | {
        "deployments": _layout(plan)
    }


def _layout_finding(sites: tuple[Site, ...], members: list[int], plan: Plan) -> Finding:
    """What a later profile's sites run, and where their own rendered files are (fix203: no longer the first site's)."""
    site = sites[members[0]]
    tag = profile_tag(site.requests_per_second_scale)
    runs = ", ".join(f"{d['deployment']} {d['replicas']} x TP{d['tp']} on {d['pool']}_{tag}" for d in _layout(plan))
    text = (
        f"the {len(members)} site(s) at {site.requests_per_second_scale:g} x the rates ({site.name} ...) are planned "
        f"on their own: {runs} (spec.json sites.profiles); their hosts are in those Ansible pool groups "
        f"(group_vars/<pool>_{tag}.yml, each host's replicas and GPUs), their Terraform and Kubernetes files under "
        f"site-profiles/{tag}/"
    )
    return Finding("info", "per-site-layouts", text, f"sites[{members[0]}].requests_per_second_scale")


def _summed(parts: list[tuple[Any, int]]) -> Any:
    """Each profile's figure times its sites, summed (money to the cent); None where one is not known."""
    if any(value is None for value, _ in parts):
        return None
    total = sum(value * count for value, count in parts)
    return round(total, 2) if any(isinstance(value, float) for value, _ in parts) else total


def _file_findings(wl: Workload, site: Site, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The site plan's findings at the file's host paths, and those of every site's hosts the file's check gives.

    The site's workload lists its hosts alone, so ``hardware.inventory[j].hosts[k]`` counts in its list: mapped back to
    the file's. ``host-address-missing`` is the whole file's (a host of another site without its address, too).
    """
    index = [[k for k, host in enumerate(group.hosts) if host.name in set(site.hosts)] for group in wl.hardware.inventory]

    def at_file(path: str) -> str:
        found = _HOST_PATH.match(path)
        if found is None:
            return path
        j, k = int(found[1]), int(found[2])
        return f"hardware.inventory[{j}].hosts[{index[j][k]}]{path[found.end() :]}"

    kept = [f._replace(path=at_file(f.path)) for f in findings if f.code != ADDRESS_CODE]
    return sorted_findings(kept + missing_address_findings(wl))


def _site_error(loaded: LoadedWorkload, i: int, exc: InfeasibleError) -> InfeasibleError:
    """The planner's refusal for site ``i`` (the first of its profile), at its scale where given, else its hosts."""
    site = loaded.workload.sites[i]
    text = str(exc)
    reason = text[len(str(exc.location)) + 2 :] if exc.location is not None else text
    field = f" at {exc.location.path}" if exc.location is not None and exc.location.path else ""
    hosts = ", ".join(site.hosts)
    scale = site.requests_per_second_scale
    rate = "each deployment's per-site rate" + (f" x {scale:g}" if scale != 1 else "")
    message = (
        f"site '{site.name}' ({hosts}) cannot hold its services at {rate} (every site holds "
        f"the same hardware and is planned alone, {len(loaded.workload.sites)} site(s)){field}: {reason}"
    )
    key = "requests_per_second_scale" if scale != 1 else "hosts"
    return InfeasibleError(message, loaded.document.locate(("sites", i, key)))


def _per_site_text(loaded: LoadedWorkload, plan: Plan, totals: dict[str, Any]) -> str:
    """The ``per-site`` finding: what is sized per site, and the chain's totals."""
    wl = loaded.workload
    names = [s.name for s in wl.sites]
    shown = ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]} ... {names[-1]}"
    rates = ", ".join(
        f"{d.name} {d.inference.requests_per_second:g} req/s" for d in wl.deployments if isinstance(d, InferenceDeployment)
    )
    one = plan.totals
    groups = site_profiles(wl.sites)
    if len(groups) > 1:  # fix201: sites of their own rate scale
        scales = ", ".join(f"{len(g)} at x{wl.sites[g[0]].requests_per_second_scale:g}" for g in groups)
        rates += f"; each site's rates times its requests_per_second_scale: {scales}, each scale planned once"
    scaled_text = "of its rate scale " if len(groups) > 1 else ""  # fix203: each scale's own files
    at_each = " site of its scale" if len(groups) > 1 else ""
    money = f"${totals['usd_per_month']:,.0f}/month" if totals["usd_per_month"] is not None else "cost not known"
    capex = f"${totals['capex_usd']:,.0f}" if totals["capex_usd"] is not None else "not known"  # fix204: not $0
    return (
        f"sized per site: each of the {len(names)} sites ({shown}) is served by its own hosts alone, nothing pooled "
        f"across sites, at each deployment's per-site rate ({rates}); the pools, deployments and totals above are one "
        f"site's ({names[0]}: {one['nodes']} node(s), {one['gpus']} GPU(s), {one['power_w']:,} W), each other site "
        f"{scaled_text}runs the same on its hosts in the same roles (spec.json sites.hosts; the Ansible inventory groups "
        f"each site's hosts, site_<name>, and the Terraform and Kubernetes files are one site's, applied at each{at_each}"
        "); the "
        f"whole chain: {totals['nodes']} "
        f"node(s), {totals['gpus']} GPU(s), {totals['power_w'] / 1000:,.1f} kW, {money}, capex "
        f"{capex}"
    )
