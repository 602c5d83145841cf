"""``specgen diff``: what a change to a workload does to the fleet, for a pull request."""

from __future__ import annotations

import re
from typing import Any

from generator.capacity_diff import capacity_change, capacity_change_lines, served_at
from generator.circuit_diff import load_text, rack_load, supply_change, supply_lines
from generator.errors import one_line
from generator.fleet_diff_cells import _cut, _number, _plan_figure, fmt_cell, signed_cell, two_places
from generator.fleet_diff_deployments import _deployment_row, _load, _runs_energy_pools, rate_text
from generator.fleet_diff_load import deployed_dict, load_plan_dict, plan_from_spec
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
from generator.fleet_diff_pool_text import _moved, drift_replacement_lines, replacement_lines, replacement_text, sharing_lines
from generator.fleet_diff_pools import (
    ON_DEMAND,
    ROOT_DISK_WORDS,
    _grow_on_bought,
    _named_both,
    pool_replacements,
    replaces_in_place,
    root_disk_changes,
    sharing_changes,
)
from generator.fleet_diff_row_text import _PAID_BY, _command_moved, _context_text, _deployment_text, _inputs_moved, row_changes
from generator.fleet_diff_shape import _MAX_ECHOED_CHARS, FIELDS, MONTH_FLOOR, OWNED_FIELDS, TRAINING_FIELDS, _pool_usd_per_month
from generator.planner.narrower import NARROWER_LEAD
from generator.planner.plan import PAID_WHETHER_RUN, RUNS_ENERGY_BASIS, RUNS_ONLY_TOTALS, runs_only_figures
from generator.render.md_escape import md_code, md_text
from generator.units import dollars_text
from generator.wall_circuit_diff import wall_circuit_change, wall_circuit_lines

#: Names moved to the fleet_diff_* modules, still imported from here (cli, pr_diff, pr_set, tests).
__all__ = [
    "MONTH_FLOOR",
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


def minimum_nodes(row: dict[str, Any]) -> Any:
    """The nodes a pool row scales down to: its ``min_nodes``, else (a fixed size) its nodes."""
    return row.get("min_nodes", row["nodes"])


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

    The planner's :func:`generator.planner.assemble.fleet_up_front_usd` (the figure ``max_capex_usd`` holds) reads the
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
    )


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


def _rack_name(change: dict[str, Any]) -> str:
    """A rack's cell of the racks table: its id, and the old side's where that names it otherwise (newuser53 item 2)."""
    name = md_code(change["rack"], cell=True)
    return f"{name} (was {md_code(change['old_rack'], cell=True)})" if "old_rack" in change else name


def _rack_text(held: dict[str, Any] | None) -> str:
    """A rack's side of the racks table: each pool's servers in it, and its power."""
    if held is None:
        return "-"
    pools = ", ".join(f"{fmt_cell(n)} x {md_code(p, cell=True)}" for p, n in held["pools"].items()) or "empty"
    return f"{pools} ({held['power_w'] / 1000:,.1f} kW{load_text(held)})"


#: The totals row of a month with the rented training jobs' runs: ``usd_per_month`` + ``training_usd_per_month``.
MONTH_WITH_RUNS = "usd_per_month_with_runs"
#: What a racked owned pool's month holds, training jobs alone on it (fix173): the racks' rent, paid whether it runs or
#: not, most of it, and its runs' energy (:class:`~generator.planner.plan.OwnedRuns`).
RACKED_RUNS_MONTH = "its colocation and runs' energy"


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


def _priced_elsewhere_lines(elsewhere: dict[str, Any]) -> list[str]:
    """Each side's pools priced at another region's list prices, and whether the change in cost is known."""
    lines = []
    sides = elsewhere["sides"]
    for side, found in sides.items():
        pools = found["pools"]
        named = ", ".join(md_code(p["pool"]) for p in pools[:5]) + (f" and {len(pools) - 5} more" if len(pools) > 5 else "")
        at = " / ".join(sorted({md_text(one_line(str(p["priced_in"]))) for p in pools}))
        region = md_text(one_line(str(found["region"])))
        text = (
            f"{side.upper()}'s cost is at {at} on-demand list prices for {named}: its cluster is in {region}, "
            "whose GPU VM prices are not in the catalog"
        )
        if side == "new" and not elsewhere["change_known"]:
            text += f", so the change in cost is not known (`-`); give {region}'s rates under `prices:` to compare"
        lines += ["", text + "."]
    if elsewhere["change_known"] and len(sides) == 2:
        lines += ["", "Both sides are priced at the same region's rates: the change in cost is at those prices."]
    elif not elsewhere["change_known"] and "new" not in sides:  # OLD priced elsewhere, NEW at its own region's
        lines += ["", "OLD's and NEW's costs are at different regions' prices: the change in cost is not known (`-`)."]
    return lines


def _unpriced_pools(plan: dict[str, Any]) -> list[dict[str, str]]:
    """A plan's pools without a price and why: they leave its cost rows blank.

    newuser28 item 8: a region move read "-" for the fleet's month without a word of the type the region does not price.
    """
    return [
        {"pool": str(p["name"]), "why": str(p.get("price_basis") or "no price")}
        for p in plan["pools"]
        if _number(p.get("usd_per_hour")) is None
    ]


def _unpriced_lines(unpriced: dict[str, list[dict[str, str]]]) -> list[str]:
    """Each side's unpriced pools, at most five named, with why each has no price."""
    lines = []
    for side, pools in unpriced.items():
        named = "; ".join(f"{md_code(p['pool'])} ({md_text(_cut(one_line(p['why']), 200))})" for p in pools[:5])
        more = f"; {len(pools) - 5} more" if len(pools) > 5 else ""
        lines += ["", f"{side.upper()}'s fleet has no price for {named}{more}: its cost rows read `-`."]
    return lines


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


def _pool_status(p: dict[str, Any], place: dict[str, Any] | None = None, replaced: dict[str, bool] | None = None) -> str:
    """A pool row's status; a changed pool of the same size says that what runs on it changed.

    ``place``: the provider or region the fleet moves from and to, which a removed and an added pool name.
    ``replaced``: the pools that keep their name while their nodes are created again (:func:`pool_replacements`), and
    whether on other hardware: they say what moves (review37 item 7: a pool moved to spot read a bare "changed"
    beside equal cells, and one on other servers "in place").
    """
    if place is not None and p["status"] in ("removed", "added"):
        where = place["old"] if p["status"] == "removed" else place["new"]
        return f"{p['status']} ({md_text(one_line(str(where)))})"
    if p["status"] != "changed":
        return str(p["status"])
    old, new = p["old"], p["new"]
    sharing = [str(side.get("gpu_sharing") or "whole GPUs") for side in (old, new)]
    capacity = [str(side.get("capacity_type") or ON_DEMAND) for side in (old, new)]
    said = [f"GPU sharing {md_text(sharing[0])} → {md_text(sharing[1])}"] if sharing[0] != sharing[1] else []
    said += [f"{capacity[0]} → {capacity[1]}"] if capacity[0] != capacity[1] else []
    disks = [side.get("root_disk") for side in (old, new)]
    said += [f"{disks[0]} → {disks[1]}"] if None not in disks and disks[0] != disks[1] else []
    if replaced and p["pool"] in replaced:
        return f"replaced ({', '.join(['other hardware'] * replaced[p['pool']] + said) or 'its nodes created again'})"
    price = _node_price_change(old, new)
    hosts = [set(side.get("hosts", ())) for side in (old, new)]
    for moved, verb in ((sorted(hosts[1] - hosts[0]), "join"), (sorted(hosts[0] - hosts[1]), "leave")):
        if moved:
            said.append(f"hosts {_names_text(moved)} {verb}" if len(moved) > 1 else f"host {_names_text(moved)} {verb}s")
    if old["runs"] != new["runs"] and old["nodes"] == new["nodes"]:  # (review38 item 6: said beside the hosts)
        said.insert(0, "what runs on it")
    if said:
        return f"changed ({', '.join(said + price)})"
    low = [minimum_nodes(side) for side in (old, new)]
    if low[0] != low[1] and "min_nodes" not in old and "min_nodes" not in new:
        # newuser73 item 16: a pool of a fixed size (GKE nodeCount, no autoscaling) has no minimum: it is resized
        return f"changed ({', '.join([f'nodes {fmt_cell(low[0])} → {fmt_cell(low[1])}, resized in place', *price])})"
    if low[0] != low[1]:  # the autoscaler's minimum (EKS min_size, GKE autoscaling)
        return f"changed ({', '.join([f'minimum nodes {fmt_cell(low[0])} → {fmt_cell(low[1])}, in place', *price])})"
    return f"changed ({', '.join(price)})" if price else "changed"


def _node_price_change(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """A pool's price a node-hour, where it moved: ``price $48.00 → $30.00 a node-hour``.

    newuser77 item 2: a rate given under ``prices:`` (or a bought server's running cost) changed only the cost cells, and
    the row read a bare "changed" beside equal nodes, GPUs and power. A pool's ``usd_per_hour`` is its nodes'; a resize
    at the same rate says nothing here. An owned pool charged its training runs' energy (``runs_energy``) has no
    node-hour price: its month of energy is said instead (newuser89 left item 3).
    """
    if old.get("runs_energy") and new.get("runs_energy"):
        # an owned pool training jobs alone run on: its usd_per_hour is its runs' energy a month / 730 h, and racked its
        # colocation's (fix173: "its runs' energy $1,877.46 → ..." where $1,876.80 of it was the racks' rent)
        months = [_number(side.get("usd_per_month")) for side in (old, new)]
        if months[0] is None or months[1] is None or months[0] == months[1]:
            return []
        held = RACKED_RUNS_MONTH if old.get("colocation") or new.get("colocation") else "its runs' energy"
        return [f"{held} {dollars_text(months[0], 2)} → {dollars_text(months[1], 2)} a month"]
    rates = []
    for side in (old, new):
        hourly, nodes = _number(side.get("usd_per_hour")), _number(side.get("nodes"))
        if hourly is None or not nodes:
            return []
        rates.append(round(hourly / nodes, 2))
    if rates[0] == rates[1]:
        return []
    return [f"price {dollars_text(rates[0], 2)} → {dollars_text(rates[1], 2)} a node-hour"]


def _names_text(names: list[str]) -> str:
    """Host names as a status cell lists them: the first three as code, then a count."""
    shown = ", ".join(md_code(n, cell=True) for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _pool_lines(
    pools: list[dict[str, Any]], place: dict[str, Any] | None = None, replacements: list[dict[str, Any]] | None = None
) -> list[str]:
    """The pool table: status, GPU, nodes, GPUs, power and cost a month, old -> new (``place``: :func:`_pool_status`).

    ``replacements``: the diff's (:func:`pool_replacements`), whose pools of one name on both sides read as replaced.
    """
    replaced = {
        str(pool["pool"]): _moved(entry)
        for entry in replacements or []
        for pool in entry["added"]
        if pool["pool"] in {p["pool"] for p in entry["removed"]}
    }
    lines = ["", "| pool | status | GPU | nodes | GPUs | power W | $/month |", "|---|---|---|---:|---:|---:|---:|"]
    for p in pools:
        o, n = p["old"], p["new"]
        gpu = n["gpu"] or o["gpu"]
        cells = " | ".join(
            f"{_nodes_cell(o, p) if key == 'nodes' else fmt_cell(o.get(key))} → "
            f"{_nodes_cell(n, p) if key == 'nodes' else fmt_cell(n.get(key))}"
            for key in ("nodes", "gpus", "power_w", "usd_per_month")
        )
        lines.append(f"| {md_code(p['pool'], cell=True)} | {_pool_status(p, place, replaced)} | {fmt_cell(gpu)} | {cells} |")
    return lines


def _nodes_cell(side: dict[str, Any], pool: dict[str, Any]) -> str:
    """A side's nodes, as the range it scales over (``1–3``) where either side of ``pool`` scales, else the count."""
    scales = "min_nodes" in pool["old"] or "min_nodes" in pool["new"]
    low = minimum_nodes(side)
    if not scales or low == side["nodes"]:
        return fmt_cell(side["nodes"])
    return f"{fmt_cell(low)}–{fmt_cell(side['nodes'])}"


def markdown_diff(result: dict[str, Any]) -> str:
    """The diff as a Markdown comment body."""
    lines = ["## specgen: fleet change", ""]
    if result.get("old_errors"):
        lines += ["OLD could not be planned; its fleet is counted as empty. specgen said:", ""]
        lines += [f"- {md_text(one_line(line))}" for line in result["old_errors"]] + [""]
    if moved := result.get("provider_change"):
        lines += [
            f"**Provider changes: {md_text(one_line(str(moved['old'])))} → {md_text(one_line(str(moved['new'])))}.** "
            "The new fleet is another provider's cluster: its pools are created there and the old ones deleted, "
            "none resized or replaced in place.",
            "",
        ]
    if (moved := result.get("region_change")) and not _named_both(moved):
        named = str(moved["old"] or moved["new"])
        lines += [
            f"**Region: {md_text(one_line(str(moved['old'] or '(unset)')))} → "
            f"{md_text(one_line(str(moved['new'] or '(unset)')))}.** "
            + (
                f"The new render names no region: its pools go to the region of the provider's configuration, and "
                f"where that is not {md_text(one_line(named))} they are created there and the old ones deleted."
                if moved["new"] is None
                else f"The old render named none (the provider configuration's): where that was not "
                f"{md_text(one_line(named))}, the pools are created there and the old ones deleted."
            ),
            "",
        ]
    elif moved:
        lines += [
            f"**Region changes: {md_text(one_line(str(moved['old'])))} → {md_text(one_line(str(moved['new'])))}.** "
            "The new fleet's nodes run in another region: its pools are created there and the old ones deleted, "
            "none resized or replaced in place; check that the region offers each instance type planned.",
            "",
        ]
    if moved := result.get("zone_change"):
        lines += [
            f"**Zone changes: {md_text(one_line(str(moved['old'])))} → {md_text(one_line(str(moved['new'])))}.** "
            "The GPU node pools move to another zone of the cluster (`nodeLocations`): each of their nodes is drained, "
            "deleted and created again there, none kept in place; check that the zone offers each machine type planned.",
            "",
        ]
    lines += capacity_change_lines(result.get("capacity_change"))
    lines += replacement_lines(result.get("replacements", []))
    lines += sharing_lines(result.get("sharing_changes", []))
    if "buy_vs_rent" in result:
        lines += [md_text(buy_vs_rent_line(result["buy_vs_rent"])), ""]
    if result.get("constants_changed"):
        lines += [md_text(constants_line(result["constants_changed"], result["totals"])), ""]
    lines += ["| | old | new | change |", "|---|---:|---:|---:|"]
    for key, row in result["totals"].items():
        lines.append(f"| {md_text(key)} | {fmt_cell(row['old'])} | {fmt_cell(row['new'])} | {signed_cell(row['delta'])} |")
    lines += _unpriced_lines(result.get("unpriced", {}))
    if "priced_elsewhere" in result:
        lines += _priced_elsewhere_lines(result["priced_elsewhere"])
    if result["pools"]:
        region = result.get("region_change")
        place = result.get("provider_change") or (region if _named_both(region) else None)
        lines += _pool_lines(result["pools"], place, result.get("replacements"))
    if result["deployments"]:
        lines += ["", "| deployment | old | new |", "|---|---|---|"]
        for d in result["deployments"]:
            changed = row_changes(d["old"], d["new"])
            marked = f"**{md_text(changed)}**; " if changed else ""
            lines.append(
                f"| {md_code(d['deployment'], cell=True)} | {_deployment_text(d['old'])} | {marked}{_deployment_text(d['new'])} |"
            )
        wider = [d for d in result["deployments"] if d.get("wider_why")]
        if wider:  # fix168: why a replica takes more GPUs (newuser95 item 4)
            lines += [""] + [f"- {md_code(d['deployment'])}: {md_text(one_line(d['wider_why']))}" for d in wider]
    if result.get("new_findings"):
        lines += ["", "New in NEW's plan:", ""]
        lines += [
            f"- **{md_text(f['level'])}** {md_code(f['code'])}"
            + (f" ({md_text(one_line(f['path']))})" if f.get("path") else "")
            + f": {md_text(one_line(f['message']))}"
            for f in result["new_findings"]
        ]
    if "rack_supply" in result:
        lines += ["", *supply_lines(result["rack_supply"])][:-1]
    if "wall_circuit" in result:
        said = {f["message"] for f in result.get("new_findings", ())}
        lines += ["", *wall_circuit_lines(result["wall_circuit"], said, lambda m: md_text(one_line(m)))][:-1]
    if result.get("racks"):
        moved = "a server moved to another rack is de-racked, re-cabled and re-powered"
        currents = any("phase_current_a" in (r["old"] or r["new"] or {}) for r in result["racks"])
        lines += ["", f"Racks whose servers{', power or currents' if currents else ' or power'} change ({moved}):", ""]
        lines += ["| rack | old | new |", "|---|---|---|"]
        lines += [f"| {_rack_name(r)} | {_rack_text(r['old'])} | {_rack_text(r['new'])} |" for r in result["racks"]]
    if not result["pools"] and not result["deployments"]:
        moved = "provider_change" in result or "zone_change" in result or _named_both(result.get("region_change"))
        same = "The same pools and deployments where they move to." if moved else _unchanged_fleet_line(result)
        fed = " and fed" if "rack_supply" in result else ""
        racked = result.get("racks") or "rack_supply" in result
        outlet = "wall_circuit" in result and same == "No change to the fleet."
        same = "The same pools and deployments, on the outlet above." if outlet else same
        lines += ["", f"The same pools and deployments, racked{fed} as above." if racked else same]
    return "\n".join(lines) + "\n"


def _unchanged_fleet_line(result: dict[str, Any]) -> str:
    """The closing line of a diff that changes no pool and no deployment: what it changes, or that it changes nothing.

    newuser91 item 9 (a diff of constants alone read as tables naming nothing): such a diff closed on "No change to
    the fleet." under totals that moved, or under "Constants changed". The totals that moved are named (old -> new),
    constants that moved none say so, and no pool or deployment table is written without a row.
    """
    moved = [
        f"{key} {fmt_cell(row['old'])} → {fmt_cell(row['new'])}"
        for key, row in result["totals"].items()
        if row["old"] != row["new"]
    ]
    if moved:
        cause = " (the constants above)" if result.get("constants_changed") else ""
        return f"No pool or deployment changed; the totals that moved{cause}: {', '.join(moved)}."
    if result.get("constants_changed"):
        return "No pool or deployment changed, and no total: the constants above move no figure this diff compares."
    return "No change to the fleet."
