"""``specgen diff``'s Markdown: the pull-request comment written from what :func:`~generator.fleet_diff.diff_plans` found."""

from __future__ import annotations

from typing import Any

from generator.capacity_diff import capacity_change_lines
from generator.circuit_diff import load_text, supply_lines
from generator.errors import one_line
from generator.fleet_diff_cells import _cut, _number, fmt_cell, signed_cell
from generator.fleet_diff_payback import buy_vs_rent_line, constants_line
from generator.fleet_diff_pool_text import _moved, replacement_lines, sharing_lines
from generator.fleet_diff_pools import ON_DEMAND, _named_both
from generator.fleet_diff_row_text import _deployment_text, row_changes
from generator.render.md_escape import md_code, md_text
from generator.site_diff import site_change_lines
from generator.units import dollars_text
from generator.wall_circuit_diff import wall_circuit_lines


def minimum_nodes(row: dict[str, Any]) -> Any:
    """The nodes a pool row scales down to: its ``min_nodes``, else (a fixed size) its nodes."""
    return row.get("min_nodes", row["nodes"])


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


#: What a racked owned pool's month holds, training jobs alone on it (fix173): the racks' rent, paid whether it runs or
#: not, most of it, and its runs' energy (:class:`~generator.planner.plan.OwnedRuns`).
RACKED_RUNS_MONTH = "its colocation and runs' energy"


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


def _unpriced_lines(unpriced: dict[str, list[dict[str, str]]]) -> list[str]:
    """Each side's unpriced pools, at most five named, with why each has no price."""
    lines = []
    for side, pools in unpriced.items():
        named = "; ".join(f"{md_code(p['pool'])} ({md_text(_cut(one_line(p['why']), 200))})" for p in pools[:5])
        more = f"; {len(pools) - 5} more" if len(pools) > 5 else ""
        lines += ["", f"{side.upper()}'s fleet has no price for {named}{more}: its cost rows read `-`."]
    return lines


def _provider_in(moved: dict[str, Any], side: str) -> str:
    """One side of a provider change, with its region where either side names one: "gcp (region europe-west4)"."""
    provider = md_text(one_line(str(moved[side])))
    if f"{side}_region" not in moved:
        return provider
    region = moved[f"{side}_region"]
    return f"{provider} (region {md_text(one_line(str(region)))})" if region else f"{provider} (no region named)"


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
    if renamed := result.get("workload_change"):  # hostile91
        lines += [
            f"**Workload: {md_text(one_line(str(renamed['old'])))} → {md_text(one_line(str(renamed['new'])))}.** "
            "Its name is the rendered trees' Kubernetes namespace, cloud `specgen-workload` tag and Terraform / Ansible "
            "workload name: applying NEW makes these under the new name. If OLD and NEW are two workloads, not one "
            "renamed, this is no change of either: diff each with its own earlier version.",
            "",
        ]
    if moved := result.get("provider_change"):
        sides = [_provider_in(moved, side) for side in ("old", "new")]
        lines += [
            f"**Provider changes: {sides[0]} → {sides[1]}.** "
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
    lines += site_change_lines(result.get("site_change"))
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
