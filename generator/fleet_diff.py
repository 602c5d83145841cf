"""``specgen diff``: what a change to a workload does to the fleet, for a pull request."""

from __future__ import annotations

import re
from typing import Any

from generator.capacity_diff import capacity_change, served_at
from generator.circuit_diff import rack_load, supply_change
from generator.fleet_diff_cells import _cut, _number, _plan_figure, fmt_cell, signed_cell, two_places
from generator.fleet_diff_deployments import _deployment_row, _load, _runs_energy_pools, rate_text
from generator.fleet_diff_load import deployed_dict, load_plan_dict, plan_from_spec
from generator.fleet_diff_markdown import RACKED_RUNS_MONTH, markdown_diff
from generator.fleet_diff_payback import (
    _counted_runs,
    _months_either_side,
    _rented_jobs,
    buy_vs_rent,
    buy_vs_rent_line,
    constants_changed,
    constants_line,
    months_text,
)
from generator.fleet_diff_pool_text import drift_replacement_lines, replacement_lines, replacement_text, sharing_lines
from generator.fleet_diff_pools import (
    ROOT_DISK_WORDS,
    _grow_on_bought,
    _named_both,
    pool_replacements,
    replaces_in_place,
    root_disk_changes,
    sharing_changes,
)
from generator.fleet_diff_row_text import _PAID_BY, _command_moved, _context_text, _inputs_moved, row_changes
from generator.fleet_diff_shape import _MAX_ECHOED_CHARS, FIELDS, MONTH_FLOOR, OWNED_FIELDS, TRAINING_FIELDS, _pool_usd_per_month
from generator.planner.narrower import NARROWER_LEAD
from generator.planner.plan import PAID_WHETHER_RUN, RUNS_ENERGY_BASIS, RUNS_ONLY_TOTALS, runs_only_figures
from generator.site_diff import chain_view, site_change
from generator.wall_circuit_diff import wall_circuit_change

#: Names moved to the fleet_diff_* modules, still imported from here (cli, pr_diff, pr_set, tests).
__all__ = [
    "MONTH_FLOOR",
    "RACKED_RUNS_MONTH",
    "TRAINING_FIELDS",
    "_PAID_BY",
    "_command_moved",
    "_context_text",
    "_grow_on_bought",
    "_inputs_moved",
    "_load",
    "_months_either_side",
    "buy_vs_rent",
    "buy_vs_rent_line",
    "constants_line",
    "deployed_dict",
    "drift_replacement_lines",
    "fmt_cell",
    "load_plan_dict",
    "markdown_diff",
    "months_text",
    "plan_from_spec",
    "pool_replacements",
    "rate_text",
    "replacement_lines",
    "replacement_text",
    "replaces_in_place",
    "root_disk_changes",
    "row_changes",
    "sharing_lines",
    "signed_cell",
    "two_places",
]


def _pool_row(pool: dict[str, Any] | None, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What a diff compares of a pool: its hardware, size, power, price and what runs on it (``runs``)."""
    if pool is None:
        return {"gpu": None, "nodes": 0, "gpus": 0, "power_w": 0, "usd_per_hour": None, "usd_per_month": None, "runs": []}
    row = {
        "gpu": pool["node"]["gpu_id"],
        "nodes": pool["nodes"],
        "gpus": pool["nodes"] * pool["node"]["gpus"],
        "power_w": pool["power_w"],
        "usd_per_hour": two_places(pool["usd_per_hour"]),
        "usd_per_month": _pool_usd_per_month(pool),
        "runs": runs,
    }
    # how its GPUs are shared, where they are (newuser40 item 4: MIG 1g.10gb -> 3g.40gb read "No change to the fleet")
    if pool.get("gpu_sharing") is not None:
        row["gpu_sharing"] = pool["gpu_sharing"]
    # its spot capacity, where it is (newuser56 item 1: on-demand -> spot read "No change to the fleet")
    if pool.get("capacity_type") is not None:
        row["capacity_type"] = pool["capacity_type"]
    # charged its training runs' energy, not a node-hour price (newuser89 left item 3); racked, its colocation beside,
    # paid whether it runs or not, most of a racked server's month (fix173)
    if RUNS_ENERGY_BASIS in (basis := str(pool.get("price_basis") or "")):
        row["runs_energy"] = True
        if PAID_WHETHER_RUN in basis:
            row["colocation"] = True
    # its nodes' root / OS disk, where recorded (newuser74 item 12: a change creates every node again)
    if _number(pool.get("root_disk_size")) is not None:
        words, unit = ROOT_DISK_WORDS.get(str(pool["node"].get("provider")), ("root disk", "GB"))
        row["root_disk"] = f"{words} {fmt_cell(pool['root_disk_size'])} {unit}"
    # the nodes it scales down to at the services' average rate, where it scales (a move of the minimum alone read
    # "No change to the fleet"); a plan without one is a pool of a fixed size
    if _number(pool.get("min_nodes")) is not None:
        row["min_nodes"] = pool["min_nodes"]
    # the owned hosts it runs on, where it names them (newuser57 item 1: a host renamed, which MAAS releases and Metal3
    # deprovisions, read "No change to the fleet"; a pool shrunk never named the host that leaves)
    if isinstance(pool.get("owned_hosts"), list) and pool["owned_hosts"]:
        row["hosts"] = sorted(str(h) for h in pool["owned_hosts"])  # as a set: hosts swapped in order are the same pool
    return row


def _part_of(key: str, parts: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The ``runs_only_`` row of total ``key`` where ``parts`` has one (``runs_only_nodes`` of ``nodes``)."""
    part = f"runs_only_{key}"
    return [(part, parts[part])] if part in parts else []


def _runs_only(plan: dict[str, Any]) -> dict[str, Any]:
    """The GPUs, nodes and watts of a plan's pools that rest at 0 nodes between their jobs' runs (``Pool.runs_only``).

    Read off its pools (rented per training run, ``per_job``; or batch jobs' hours, ``busy_hours_per_month``), as
    the planner's ``runs_only_*`` totals count them, so that a spec.json written before them reads the same.
    """
    return runs_only_figures(
        (p["node"]["gpus"], p["nodes"], p["power_w"])
        for p in plan["pools"]
        if p.get("per_job") is True or _plan_figure(p.get("busy_hours_per_month")) is not None
    )


def pool_runs(plan: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per pool: what runs on it, each deployment (or part of a split one) with its model, precision and layout.

    A pool whose nodes stay but whose GPUs hold another model, precision or layout is a changed pool (newuser24 item 8).
    """
    runs: dict[str, list[dict[str, Any]]] = {}
    for dep in plan["deployments"]:
        for part in dep.get("split") or [dep]:
            entry = {"deployment": dep["name"], "model_id": dep["model_id"], "precision": dep["precision"]}
            entry.update({key: part[key] for key in ("tp", "pp", "replicas")})
            runs.setdefault(str(part["pool"]), []).append(entry)
    return {pool: sorted(entries, key=lambda e: str(e["deployment"])) for pool, entries in runs.items()}


def _known_capex(totals: dict[str, Any]) -> Any:
    """A plan's capex, 0 where it buys nothing and its cost is known (a fleet rented whole), else as the plan gives it.

    A plan's total capex is None both where no pool is bought (a rented fleet: nothing is paid up front) and where some
    pool has no price (unknown); its month tells them apart. fuzz34 item 9d: a rented fleet against the same bought
    read capex "-" (not known) where it is $0.

    The planner's :func:`generator.planner.plan_totals.fleet_up_front_usd` (the figure ``max_capex_usd`` holds) reads the
    same 0 where the capex is None and the month known. It differs where the month is None and the capex is not (a
    priced purchase beside an unpriced rented pool): it holds the fleet's up-front cost unknown, where the diff shows
    the capex the plan gives, a figure known (review28 item 11).
    """
    capex = totals.get("capex_usd")
    if capex is None and _number(totals.get("usd_per_month")) is not None:
        return 0.0
    return capex


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Totals before/after/delta, and every pool and deployment that changed."""
    sites = site_change(old, new)  # fix201: a per-site plan's totals compared as the chain's
    old, new = chain_view(old), chain_view(new)
    totals = {}
    # a rented training job's per-run cost, where either side has one (newuser14 item 3: +50% a run read "unchanged")
    runs = [key for key in TRAINING_FIELDS if old["totals"].get(key) is not None or new["totals"].get(key) is not None]
    # what buying costs up front and to run (newuser25 item 9: a buy-vs-rent diff showed the monthly figure alone)
    bought = any(_number(plan["totals"].get("capex_usd")) for plan in (old, new))
    runs = [*(OWNED_FIELDS if bought else ()), *runs]
    # racks are bare metal's: two cloud plans have none to compare (review 10 item 8b)
    clouds = all(plan.get("provider") not in (None, "baremetal") for plan in (old, new) if plan["pools"])
    for key in (*(f for f in FIELDS if not (clouds and f == "racks")), *runs):
        a, b = (_known_capex(plan["totals"]) if key == "capex_usd" else plan["totals"].get(key) for plan in (old, new))
        delta = b - a if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
        totals[key] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    resting = [_runs_only(plan) for plan in (old, new)]
    if any(side["runs_only_nodes"] for side in resting):
        # newuser69 item 9: a training pool at 0 nodes between runs read as running in the nodes and power rows; each
        # beside the total it is part of (runs_only_nodes after nodes)
        parts = {
            k: {"old": resting[0][k], "new": resting[1][k], "delta": resting[1][k] - resting[0][k]} for k in RUNS_ONLY_TOTALS
        }
        totals = {k: v for key, row in totals.items() for k, v in [(key, row), *_part_of(key, parts)]}
    if any(plan["totals"].get(MONTH_FLOOR) is not None for plan in (old, new)):
        # newuser48 item 3: an average rate that halved the month its pools autoscale to read "$0.00"
        a, b = (_plan_figure(p["totals"].get(MONTH_FLOOR, p["totals"].get("usd_per_month"))) for p in (old, new))
        delta = b - a if a is not None and b is not None else None
        totals[MONTH_FLOOR] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    if any(_counted_runs(plan["totals"]) is not None for plan in (old, new)):
        # the month with the rented runs, as the planner ranks fleets (newuser30 item 4: a cloud plan of training jobs
        # alone read a bare "usd_per_month 0" beside a bought fleet's $2,080)
        a, b = _month_with_runs(old["totals"]), _month_with_runs(new["totals"])
        delta = b - a if a is not None and b is not None else None
        totals[MONTH_WITH_RUNS] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    moved = _place_change(old, new, "provider")
    if moved and (old.get("region") or new.get("region")):  # fix200: gcp/europe-west4 -> aws/eu-north-1, regions named
        moved |= {"old_region": old.get("region"), "new_region": new.get("region")}
    relocated = None if moved else _place_change(old, new, "region")
    # newuser44 item 11: another provider's (or named region's) pools are another cluster's, whatever their names
    pools = _pool_changes(old, new, in_place=not moved and not _named_both(relocated))
    old_deps = {d["name"]: d for d in old["deployments"]}
    new_deps = {d["name"]: d for d in new["deployments"]}
    deployments = []
    old_runs, new_runs = _runs_energy_pools(old), _runs_energy_pools(new)
    for name in sorted(set(old_deps) | set(new_deps)):
        a = served_at(_deployment_row(old_deps[name], old_runs) if name in old_deps else None, old, name)
        b = served_at(_deployment_row(new_deps[name], new_runs) if name in new_deps else None, new, name)
        if a and b and ("inputs" in a) != ("inputs" in b):  # a spec.json written before the inputs were recorded
            a, b = {k: v for k, v in a.items() if k != "inputs"}, {k: v for k, v in b.items() if k != "inputs"}
        if a != b:
            deployments.append({"deployment": name, "old": a, "new": b} | _wider_why(a, b, new_deps.get(name)))
    # a GKE zone move keeps the cluster but drains and recreates every GPU node there (newuser31 item 14); a zone
    # known on one side alone (a spec.json records none) says nothing
    rezoned = None if moved or relocated else _place_change(old, new, "zone")
    rezoned = rezoned if _named_both(rezoned) else None
    # another provider's or region's pools are another cluster: none of them replaces a node in place (newuser26 item 9);
    # a region named on one side alone may be the other's (the provider configuration's), so pools still compare
    replacements = [] if moved or _named_both(relocated) else pool_replacements(old, new)
    out = {"totals": totals, "replacements": replacements, "pools": pools, "deployments": deployments}
    if not moved and not _named_both(relocated) and (shared := sharing_changes(old, new)):
        out["sharing_changes"] = shared
    if racks := rack_changes(old, new):
        out["racks"] = racks
    if supply := supply_change(old, new):  # fuzz30 item 10: circuits changed, servers in place
        out["rack_supply"] = supply
    if outlet := wall_circuit_change(old, new):  # fix168: the outlet changed, and with it the advice
        out["wall_circuit"] = outlet
    unpriced = {side: found for side, plan in (("old", old), ("new", new)) if (found := _unpriced_pools(plan))}
    if unpriced:
        out["unpriced"] = unpriced
    if elsewhere := _priced_elsewhere(old, new):
        out["priced_elsewhere"] = elsewhere
        if not elsewhere["change_known"]:  # newuser31 item 8: a region move read "0.00"
            for key in _unknown_costs(old, new, elsewhere["sides"]):
                if key in totals:
                    totals[key]["delta"] = None
    if said := new_findings(old, new):
        out["new_findings"] = said
    if sites:
        out["site_change"] = sites
    if scaled := capacity_change(old, new):  # fuzz35 item 5
        out["capacity_change"] = scaled
    if changed := constants_changed(old, new):
        out["constants_changed"] = changed
    payback = buy_vs_rent(old, new)
    return (
        out
        | ({"buy_vs_rent": payback} if payback else {})
        | ({"provider_change": moved} if moved else {})
        | ({"region_change": relocated} if relocated else {})
        | ({"zone_change": rezoned} if rezoned else {})
        | ({"workload_change": renamed} if (renamed := _workload_change(old, new)) else {})
    )


def _workload_change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, str] | None:
    """``{"old": ..., "new": ...}`` where the two plans are of workloads named differently (both named), else None.

    hostile91: OLD and NEW of two workloads (or one renamed) compared pool by pool with no word that the namespace,
    node labels and Terraform / Ansible workload name the rendered trees hold differ.
    """
    a, b = old.get("workload"), new.get("workload")
    if not (isinstance(a, str) and isinstance(b, str) and a and b) or a == b:
        return None
    return {"old": a, "new": b}


def _wider_why(a: dict[str, Any] | None, b: dict[str, Any] | None, dep: dict[str, Any] | None) -> dict[str, str]:
    """Where a deployment's replica takes more GPUs, why NEW's plan says a narrower one is not the layout (fix168).

    newuser95 item 4: fp8 -> int4 took TP1 -> TP2 and the diff said "precision fp8 → int4, TP 1 → 2" alone, the dearer
    plan for the smaller weights unexplained; NEW's plan names the narrower layout's latency miss among its reasons.
    """
    if not a or not b or not dep:
        return {}
    widths = [
        side.get("tp", 0) * side.get("pp", 0) if isinstance(side.get("tp"), int) and isinstance(side.get("pp"), int) else 0
        for side in (a, b)
    ]
    reasons = dep.get("reasons")
    if widths[1] <= widths[0] or not isinstance(reasons, list):
        return {}
    said = next((r for r in reasons if isinstance(r, str) and r.startswith(NARROWER_LEAD)), None)
    return {} if said is None else {"wider_why": said}


def rack_changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Each rack whose servers, power or currents change, before and after.

    Per rack: the nodes of each pool in it, its watts and, where the workload gives its circuits, the amperes of its
    most loaded line (shared and with a side lost).

    newuser36 item 11: a rack limit raised from 17.3 to 40 kW moved a server into the first rack (two racks -> one),
    a de-rack, re-cable and new PDU outlets, and the diff said "No change to the fleet.". fuzz30 item 10: circuits
    halved with the same packing said so too. A side without racks (a cloud plan, or a spec.json from before the rack
    list) compares none. Racks are matched by their place in the workload's fleet (:func:`racks_by_place`), each
    named by its new id and, where the old side names it otherwise, its old one (``old_rack``).
    """
    if "racks" not in old or "racks" not in new:
        return []
    sides = [racks_by_place(plan) for plan in (old, new)]

    def held(rack: dict[str, Any] | None) -> dict[str, Any] | None:
        if rack is None:
            return None
        pools = {share["pool"]: share["nodes"] for share in sorted(rack["pools"], key=lambda share: share["pool"])}
        return {"pools": pools, "power_w": rack["power_w"], **rack_load(rack)}

    out = []
    for place in sorted(set(sides[0]) | set(sides[1])):
        a, b = (held(side.get(place)) for side in sides)
        if a != b:
            ids = [side[place]["id"] for side in sides if place in side]
            out.append({"rack": ids[-1], "old": a, "new": b} | ({"old_rack": ids[0]} if ids[0] != ids[-1] else {}))
    return out


#: A rack's id as the planner names the racks of one fleet (:func:`generator.planner.racks.rack_id`).
_RACK_ID = re.compile(r"rack-[0-9]{2,}")


def racks_by_place(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A plan's racks by their place in its workload's fleet: ``rack-01`` whether the plan is a tree's or its own.

    newuser53 item 2: in a tree of several workloads the racks are named after the workload (``support-chat-rack-01``),
    a plan of the file alone names them ``rack-01``, and a workload renamed renames them; matched by id, the same
    servers in the same rack read as de-racked from one and re-cabled into the other. A side whose ids the workload's
    name does not strip to the planner's one by one (a spec.json edited by hand) keeps its ids.
    """
    workload = plan.get("workload")
    prefix = f"{workload}-" if isinstance(workload, str) else None
    places = {}
    for rack in plan["racks"]:
        rack_id = rack["id"]
        local = rack_id[len(prefix) :] if prefix and rack_id.startswith(prefix) else rack_id
        places[local if _RACK_ID.fullmatch(local) else rack_id] = rack
    return places if len(places) == len(plan["racks"]) else {rack["id"]: rack for rack in plan["racks"]}


#: The totals row of a month with the rented training jobs' runs: ``usd_per_month`` + ``training_usd_per_month``.
MONTH_WITH_RUNS = "usd_per_month_with_runs"


def _month_with_runs(totals: dict[str, Any]) -> float | None:
    """A plan's month with its rented training runs.

    None where a figure is missing, or where a job's runs a month are not given (its runs cannot be counted).
    """
    month, runs = _plan_figure(totals.get("usd_per_month")), _counted_runs(totals)
    if month is None or (runs is None and _rented_jobs(totals)):
        return None
    return month + (runs or 0.0)


#: The planner's ``price-region`` finding: a pool priced at another region's list rate than its cluster's.
_PRICED_AT = re.compile(r"pool (\S+) is priced at the (\S+) on-demand rate of ")


def _priced_elsewhere(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """Where either side prices pools at another region's list rates than its cluster's region, which the catalog lacks.

    ``sides``: per side, its region and each such pool with the region priced (``price-region`` findings);
    ``change_known``: whether the cost change is one at the same rates: where both sides have pools, only when they
    are in the same region and priced in the same regions (a region move priced at the old region's rates read
    "0.00": newuser31 item 8). None where neither side has such a pool.
    """
    sides = {side: found for side, plan in (("old", old), ("new", new)) if (found := _priced_at(plan))}
    if not sides:
        return None
    bases = [{p["priced_in"] for p in sides[side]["pools"]} if side in sides else set() for side in ("old", "new")]
    known = not (old["pools"] and new["pools"]) or (old.get("region") == new.get("region") and bases[0] == bases[1])
    return {"sides": sides, "change_known": known}


def _priced_at(plan: dict[str, Any]) -> dict[str, Any] | None:
    """A plan's region and its pools priced at another region's rate (each with that region), or None where none is."""
    names = {str(p["name"]) for p in plan["pools"]}
    found = {
        (m[1], _cut(m[2], _MAX_ECHOED_CHARS))  # a spec.json's finding may say anything
        for f in _findings(plan)
        if f["code"] == "price-region" and (m := _PRICED_AT.match(f["message"])) and m[1] in names
    }
    if not found:
        return None
    region = plan.get("region")
    return {"region": region, "pools": [{"pool": pool, "priced_in": where} for pool, where in sorted(found)]}


def _unknown_costs(old: dict[str, Any], new: dict[str, Any], sides: dict[str, Any]) -> set[str]:
    """The cost totals that pools priced elsewhere count in: a per-run job's are the training rows, others the month."""
    keys: set[str] = set()
    for side, plan in (("old", old), ("new", new)):
        per_job = {str(p["name"]): p.get("per_job") is True for p in plan["pools"]}
        for pool in sides.get(side, {}).get("pools", []):
            keys |= (
                {*TRAINING_FIELDS, MONTH_WITH_RUNS}
                if per_job.get(pool["pool"])
                else {"usd_per_month", MONTH_WITH_RUNS, MONTH_FLOOR}
            )
    return keys


def _unpriced_pools(plan: dict[str, Any]) -> list[dict[str, str]]:
    """A plan's pools without a price and why: they leave its cost rows blank.

    newuser28 item 8: a region move read "-" for the fleet's month without a word of the type the region does not price.
    """
    return [
        {"pool": str(p["name"]), "why": str(p.get("price_basis") or "no price")}
        for p in plan["pools"]
        if _number(p.get("usd_per_hour")) is None
    ]


#: Most new findings a diff lists (the comment stays bounded; the plan has them all).
MAX_NEW_FINDINGS = 20


def new_findings(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, str]]:
    """The warnings and errors NEW's plan says that OLD's does not, by code and field (its figures may change).

    newuser28 item 4: a change to a precision the checkpoint does not hold read "85% of capacity" in the comment while
    the plan warned that what it sized is not what runs. A spec.json's findings are read only where well formed.

    newuser83 item 3: a field under a deployment is compared by the deployment's name, not its place in the list: a
    deployment added before others moved their findings from ``deployments[1]`` to ``deployments[2]``, and every
    warning OLD's plan already said of them was listed as new.
    """
    before = {(f["code"], _named_field(old, f.get("path", ""))) for f in _findings(old)}
    fresh = [
        f
        for f in _findings(new)
        if f["level"] in ("warning", "error") and (f["code"], _named_field(new, f.get("path", ""))) not in before
    ]
    return fresh[:MAX_NEW_FINDINGS]


_DEPLOYMENT_FIELD = re.compile(r"deployments\[(\d+)\]")


def _named_field(plan: dict[str, Any], path: str) -> str:
    """A finding's field with its deployment's index read as the deployment's name (the plan lists them in order)."""
    found = _DEPLOYMENT_FIELD.match(path)
    deployments = plan.get("deployments")
    if found is None or not isinstance(deployments, list) or int(found[1]) >= len(deployments):
        return path
    record = deployments[int(found[1])]
    name = record.get("name") if isinstance(record, dict) else None
    return f"deployments[{name!r}]{path[found.end() :]}" if isinstance(name, str) else path


def _findings(plan: dict[str, Any]) -> list[dict[str, str]]:
    """A plan's well-formed findings (a spec.json may hold anything): level, code, message and path where a text."""
    items = plan.get("findings")
    fields = ("level", "code", "message")
    return [
        {k: f[k] for k in (*fields, "path") if isinstance(f.get(k), str)}
        for f in (items if isinstance(items, list) else [])
        if isinstance(f, dict) and all(isinstance(f.get(k), str) for k in fields)
    ]


def _place_change(old: dict[str, Any], new: dict[str, Any], key: str) -> dict[str, str | None] | None:
    """``{"old": ..., "new": ...}`` where both plans have pools and name different ``key`` (provider, region or zone).

    A region one side leaves unset is None there (fuzz24 M2: the Terraform variable and the inventory's filter go).
    """
    a, b = old.get(key), new.get(key)
    if not (old["pools"] and new["pools"]) or a == b or not all(v is None or isinstance(v, str) for v in (a, b)):
        return None
    return {"old": a, "new": b}


def _pool_changes(old: dict[str, Any], new: dict[str, Any], *, in_place: bool = True) -> list[dict[str, Any]]:
    """Every pool added, removed or changed (in size, power, price, or what runs on it), by name.

    ``in_place``: whether a pool of one name on both sides is the same pool. Not where the fleet moves to another
    provider or region (another cluster): a pool of one name that differs is removed and added, the removed first
    (newuser44 item 11: aws -> gcp read "changed 2 → 2" under a banner saying none is resized in place).
    """
    old_pools = {p["name"]: p for p in old["pools"]}
    new_pools = {p["name"]: p for p in new["pools"]}
    old_runs, new_runs = pool_runs(old), pool_runs(new)
    pools = []
    for name in sorted(set(old_pools) | set(new_pools)):
        a = _pool_row(old_pools.get(name), old_runs.get(name, []))
        b = _pool_row(new_pools.get(name), new_runs.get(name, []))
        if a != b and not in_place and name in old_pools and name in new_pools:
            empty = _pool_row(None, [])
            pools.append({"pool": name, "status": "removed", "old": a, "new": empty})
            pools.append({"pool": name, "status": "added", "old": empty, "new": b})
        elif a != b:
            status = "added" if name not in old_pools else "removed" if name not in new_pools else "changed"
            pools.append({"pool": name, "status": status, "old": a, "new": b})
    return pools
