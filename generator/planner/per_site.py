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
    """The first site's plan (``plan_one`` plans a workload of one site) with the chain's sites and totals."""
    wl = loaded.workload
    first = wl.sites[0]
    try:
        plan = plan_one(loaded._replace(workload=site_workload(wl, first)))
    except InfeasibleError as exc:
        raise _site_error(loaded, exc) from None
    plan = plan._replace(findings=_file_findings(wl, first, plan.findings))
    for i, site in enumerate(wl.sites):  # hostile98: Ansible's groups are global: a pool's group would merge into it
        if (group := site_group(site.name)) in {pool.name for pool in plan.pools}:
            why = f"site '{site.name}' has the Ansible group {group}, the name of a pool's group: rename the site"
            raise InputError(why, loaded.document.locate(("sites", i, "name")))
    count = len(wl.sites)
    totals = {"sites": count} | {key: _times(plan.totals.get(key), count) for key in CHAIN_TOTALS}
    sites = SitesSpec(tuple(s.name for s in wl.sites), tuple(site_hosts(wl, s) for s in wl.sites), totals)
    finding = Finding("info", "per-site", _per_site_text(loaded, plan, totals), "sites")
    return plan._replace(sites=sites, findings=(*plan.findings, finding))


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


def _times(value: Any, count: int) -> Any:
    """One site's figure times the sites (money to the cent); None stays None (not known)."""
    if value is None:
        return None
    return round(value * count, 2) if isinstance(value, float) else value * count


def _site_error(loaded: LoadedWorkload, exc: InfeasibleError) -> InfeasibleError:
    """The planner's refusal for the first site, placed at that site's hosts (every site holds the same hardware)."""
    site = loaded.workload.sites[0]
    text = str(exc)
    reason = text[len(str(exc.location)) + 2 :] if exc.location is not None else text
    field = f" at {exc.location.path}" if exc.location is not None and exc.location.path else ""
    hosts = ", ".join(site.hosts)
    message = (
        f"site '{site.name}' ({hosts}) cannot hold its services at each deployment's per-site rate (every site holds "
        f"the same hardware and is planned alone, {len(loaded.workload.sites)} site(s)){field}: {reason}"
    )
    return InfeasibleError(message, loaded.document.locate(("sites", 0, "hosts")))


def _per_site_text(loaded: LoadedWorkload, plan: Plan, totals: dict[str, Any]) -> str:
    """The ``per-site`` finding: what is sized per site, and the chain's totals."""
    wl = loaded.workload
    names = [s.name for s in wl.sites]
    shown = ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]} ... {names[-1]}"
    rates = ", ".join(
        f"{d.name} {d.inference.requests_per_second:g} req/s" for d in wl.deployments if isinstance(d, InferenceDeployment)
    )
    one = plan.totals
    money = f"${totals['usd_per_month']:,.0f}/month" if totals["usd_per_month"] is not None else "cost not known"
    return (
        f"sized per site: each of the {len(names)} sites ({shown}) is served by its own hosts alone, nothing pooled "
        f"across sites, at each deployment's per-site rate ({rates}); the pools, deployments and totals above are one "
        f"site's ({names[0]}: {one['nodes']} node(s), {one['gpus']} GPU(s), {one['power_w']:,} W), each other site "
        "runs the same on its hosts in the same roles (spec.json sites.hosts; the Ansible inventory groups each "
        "site's hosts, site_<name>, and the Terraform and Kubernetes files are one site's, applied at each); the "
        f"whole chain: {totals['nodes']} "
        f"node(s), {totals['gpus']} GPU(s), {totals['power_w'] / 1000:,.1f} kW, {money}, capex "
        f"${totals['capex_usd'] or 0:,.0f}"
    )
