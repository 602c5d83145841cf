"""Buy versus rent in a diff (months to pay back, the rent it is set against) and the engine constants a workload changed."""

from __future__ import annotations

import re
from typing import Any

from generator import catalog
from generator.fleet_diff_cells import _cut, _number, _plan_figure, two_places
from generator.fleet_diff_run_break_even import runs_break_even, runs_break_even_text
from generator.fleet_diff_shape import _MAX_ECHOED_CHARS, CONSTANT_NAMES, DEFAULT_CONSTANTS, MONTH_FLOOR
from generator.planner.capex_scope import capex_excludes_text
from generator.sizing.constants import BOUGHT_SERVER_CONSTANTS, OWNED_SERVER_CONSTANTS
from generator.units import dollars_text, signed_money_text


def _counted_runs(totals: dict[str, Any]) -> float | None:
    """A plan's rented training runs a month where every rented job gives its runs a month; None otherwise.

    A plan may sum the runs of the jobs that give them beside jobs that do not (``training_pools_without_runs``,
    newuser35 item 7); the diff counts a month of runs only where it is the whole of it.
    """
    if totals.get("training_pools_without_runs"):
        return None
    return _plan_figure(totals.get("training_usd_per_month"))


def _per_run_alone(totals: dict[str, Any]) -> bool:
    """A rented side of priced training runs alone: no month of servers or runs, a cost a run (newuser108 item 1)."""
    per_run = _plan_figure(totals.get("training_usd_per_job"))
    return _rent(totals)[0] == 0 and per_run is not None and per_run > 0 and not totals.get("unpriced_training_pools")


def _rented_jobs(totals: dict[str, Any]) -> bool:
    """Whether a plan has training jobs rented per run (priced or not)."""
    return any(totals.get(key) is not None for key in ("training_usd_per_job", "unpriced_training_pools"))


def buy_vs_rent(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """Where one side buys its servers and the other rents them: the months after which buying has cost less.

    Buying pays its capex once and its running cost (energy, colocation) each month; renting its monthly bill and its
    training jobs' runs a month (``training_usd_per_month``, as the planner's fleet ranking counts the month), so the
    two meet after capex / (rent - running) months; never where running the bought servers costs as much as the rent.
    newuser30 item 4: the rented runs were left out, and a cloud plan of training jobs alone ($0 a month of standing
    servers, $773 of runs) had no comparison at all. A rented side's jobs whose runs a month are not given are counted
    at none, and said (``rent_training_usd_per_job_uncounted``).

    newuser39 item 1: a break-even of 48.6 months read as a win for buying, while the bought servers are costed as
    worth nothing after the bought side's ``amortization_months`` (36): both sides' totals over that period
    (``total_usd_over_amortization``) and whether buying pays back within it (``within_amortization``). Item 2: what
    each rented pool's rate is (``rent_basis``): the catalog's on-demand list price, or the workload's own (``prices:``).
    """
    sides = {"old": old["totals"], "new": new["totals"]}
    plans = {"old": old, "new": new}
    owned = {k: sum(int(p.get("owned_nodes") or 0) for p in plan["pools"]) for k, plan in plans.items()}
    # a fleet of owned servers alone buys nothing, but pays its running costs against the rent (newuser61 item 5)
    buyer = [
        k
        for k, t in sides.items()
        if (_plan_figure(t.get("capex_usd")) or 0.0) > 0 or (owned[k] and t.get("capex_usd") is not None)
    ]
    # newuser108 item 1: runs rented per run alone, no runs a month given: a rented side, set against in runs a month
    renter = [k for k, t in sides.items() if t.get("capex_usd") is None and (_rent(t)[0] > 0 or _per_run_alone(t))]
    if len(buyer) != 1 or len(renter) != 1:
        return None
    bought, rented = sides[buyer[0]], sides[renter[0]]
    capex, running = _plan_figure(bought["capex_usd"]) or 0.0, _plan_figure(bought.get("opex_usd_per_month"))
    if running is None:  # no running cost to set against the rent: no break-even to tell
        return None
    # rented runs on the bought side (none on bare metal, which pays its servers by the month) are paid monthly too
    running += _counted_runs(bought) or 0.0
    rent, services, runs = _rent(rented)
    saved = rent - running
    uncounted = runs is None and _rented_jobs(rented)  # runs a month not given, or a job unpriced
    months = constants_of(old if buyer[0] == "old" else new)["amortization_months"]
    if _per_run_alone(rented):  # no month rented: the runs a month from which buying costs less (newuser108 item 1)
        per_run = _plan_figure(rented["training_usd_per_job"]) or 0.0
        by_runs = runs_break_even(capex, running, per_run, months)
        return {
            "bought": buyer[0],
            "owned_nodes": owned[buyer[0]],
            "capex_usd": two_places(capex),
            "running_usd_per_month": two_places(running),
            "rent_usd_per_month": None,
            "runs_break_even": by_runs,
            "break_even_months": None,
            "amortization_months": months,
            "rent_basis": rent_basis(old if renter[0] == "old" else new),
            "capex_excludes": capex_excludes_text(),
        }
    break_even = _months_either_side(capex / saved, months) if saved > 0 else None
    # newuser65 item 4: a rented side that autoscales (average_requests_per_second) pays its floor to its peak: the
    # break-even against the floor too (8.2 months at the peak's $138,618, 28.3 at the floor's $46,206)
    floor = _plan_figure(rented.get(MONTH_FLOOR))
    at_floor: dict[str, Any] = {}
    if floor is not None and floor < services:
        rent_floor = floor + (runs or 0.0)
        saved_floor = rent_floor - running
        at_floor = {
            "rent_usd_per_month_floor": two_places(rent_floor),
            "break_even_months_at_floor": _months_either_side(capex / saved_floor, months) if saved_floor > 0 else None,
            "within_amortization_at_floor": saved_floor > 0 and capex / saved_floor <= months,
            "rent_total_usd_over_amortization_at_floor": two_places(months * rent_floor),
        }
    return {
        "bought": buyer[0],
        # the servers it already owns, which cost no capex here (newuser61 item 5: "payback after 0.8 months" with 4 of
        # 5 servers owned, unsaid)
        "owned_nodes": owned[buyer[0]],
        "capex_usd": two_places(capex),
        "running_usd_per_month": two_places(running),
        "rent_usd_per_month": two_places(rent),
        "rent_services_usd_per_month": two_places(services),
        "rent_training_usd_per_month": two_places(runs),
        # the rented jobs' runs the rent leaves out, with their cost a run where every job has a price
        **(
            {"rent_training_usd_per_job_uncounted": two_places(_plan_figure(rented.get("training_usd_per_job")))}
            if uncounted
            else {}
        ),
        "break_even_months": break_even,
        "amortization_months": months,
        "within_amortization": saved > 0 and capex / saved <= months,
        "total_usd_over_amortization": {
            buyer[0]: two_places(capex + months * running),
            renter[0]: two_places(months * rent),
        },
        **at_floor,
        "rent_basis": rent_basis(old if renter[0] == "old" else new),
        "capex_excludes": capex_excludes_text(),
    }


def constants_of(plan: dict[str, Any]) -> dict[str, float]:
    """A plan's engine constants: the workload's overrides (``constants``) over the defaults.

    A spec.json's are checked figures (:func:`_check_plan`); a name the engine does not know is left out.
    """
    given = plan.get("constants")
    overrides = {k: v for k, v in given.items() if k in CONSTANT_NAMES} if isinstance(given, dict) else {}
    return DEFAULT_CONSTANTS | overrides


def constants_changed(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The engine constants whose value differs between two plans, by name: what moved the figures on the same fleet.

    newuser39 item 10: two bare-metal files differing in their cost constants alone showed $1,929/month saved with no
    cause. A side with no ``constants`` (an empty plan, an older spec.json) is compared with nothing.

    newuser61 item 9: "amortization_months 60 -> 36" against a cloud plan, whose 36 is a default nothing reads. A cost
    constant of the servers bought or owned is compared only where both sides read it (:func:`_unread_constants`).
    """
    if not (isinstance(old.get("constants"), dict) and isinstance(new.get("constants"), dict)):
        return []
    a, b = constants_of(old), constants_of(new)
    unread = _unread_constants(old) | _unread_constants(new)
    return [{"name": name, "old": a[name], "new": b[name]} for name in sorted(CONSTANT_NAMES - unread) if a[name] != b[name]]


def _unread_constants(plan: dict[str, Any]) -> frozenset[str]:
    """The cost constants of servers bought or owned that a plan's figures do not read, as it buys or owns none.

    A server rented (a cloud instance, a bare-metal rental: its pool's ``rented``) pays its rate alone; one bought
    (capex above 0) is amortised; one bought or owned on bare metal pays energy and colocation.
    """
    totals, pools = plan.get("totals"), plan.get("pools")
    if isinstance(totals, dict) and (_plan_figure(totals.get("capex_usd")) or 0.0) > 0:
        return frozenset()
    pools = pools if isinstance(pools, list) else []
    if plan.get("provider") == "baremetal" and any(isinstance(p, dict) and not p.get("rented") for p in pools):
        return frozenset(BOUGHT_SERVER_CONSTANTS)  # owned servers alone (or unpriced ones): energy and colocation
    return frozenset(BOUGHT_SERVER_CONSTANTS + OWNED_SERVER_CONSTANTS)


def constants_line(changed: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    """The constants that changed (old -> new), and where the capex is the same, what the amortisation moved."""
    named = ", ".join(f"{c['name']} {_constant_text(c['old'])} → {_constant_text(c['new'])}" for c in changed)
    text = f"Constants changed (the workload's constants:): {named}."
    months = next((c for c in changed if c["name"] == "amortization_months"), None)
    capex = totals.get("capex_usd") or {}
    same = _number(capex.get("old")) is not None and capex.get("old") == capex.get("new") and capex["old"] > 0
    if months and same and months["old"] and months["new"]:
        moved = capex["new"] / months["new"] - capex["old"] / months["old"]
        text += (
            f" The same {dollars_text(capex['old'])} of capex spread over {_constant_text(months['new'])} months instead of "
            f"{_constant_text(months['old'])}: {signed_money_text(moved)}/month of the change."
        )
    return text


def _constant_text(value: float) -> str:
    """A constant as the workload writes it: a whole number without a point, else its shortest float form."""
    return f"{int(value)}" if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


#: What a rented pool's ``price_basis`` says where the workload gives its price (``planner.tco.node_cost``).
_GIVEN_PRICE = "workload prices"
#: ... and where the catalog's rent record prices it: ``catalog <price id> (<unit>)``.
_CATALOG_PRICE = re.compile(r"catalog (\S+) \((hour|month)\)")


#: A spot rate given under ``prices:`` as a pool's price basis says it (:func:`generator.planner.tco.node_cost`).
_SPOT_RATE = re.compile(r"spot rate prices\.(\S+@spot)")


def rent_basis(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Each priced pool of a rented fleet with the rate it is at, a node-hour.

    ``basis``: ``prices`` (the workload's own, which may be a commitment's), ``list`` (the catalog's on-demand list
    price of one region, named), or ``catalog`` (another catalog rent, by its record).
    """
    out = []
    for pool in plan["pools"]:
        rate = _plan_figure(pool.get("usd_per_hour"))
        if rate is None:
            continue
        nodes = _plan_figure(pool.get("nodes")) or 1.0
        basis = str(pool.get("price_basis") or "")
        entry: dict[str, Any] = {
            "pool": str(pool["name"]),
            "platform_id": _cut(str(pool["node"].get("platform_id")), _MAX_ECHOED_CHARS),
            "usd_per_node_hour": round(rate / nodes, 4) if nodes else None,
        }
        record = _CATALOG_PRICE.match(basis)
        if basis.startswith(_GIVEN_PRICE):
            entry["basis"] = "prices"
            if spot := _SPOT_RATE.search(basis):  # a spot rate's key (newuser66 item 6: read as an on-demand rate)
                entry["price_key"] = _cut(spot[1], _MAX_ECHOED_CHARS)
        elif record and record[2] == "hour" and (priced := catalog.prices().get(record[1])) and priced.region:
            entry |= {"basis": "list", "price_id": priced.id, "region": priced.region}
        else:
            entry |= {"basis": "catalog", "price_id": _cut(record[1], _MAX_ECHOED_CHARS) if record else None}
        out.append(entry)
    return out


def _rent(totals: dict[str, Any]) -> tuple[float, float, float | None]:
    """A rented side's month: (its servers by the month + its training runs a month, the servers', the runs').

    The runs' figure is None where the plan has none (no rented job, or one whose runs a month are not given); a
    figure no plan holds counts as none.
    """
    services = _plan_figure(totals.get("usd_per_month")) or 0.0
    runs = _counted_runs(totals)
    return services + (runs or 0.0), services, runs


def _months_either_side(months: float, limit: float) -> float:
    """``months`` to one decimal, or to as many more as keep it on its side of ``limit`` (at most 6).

    fuzz32 item 7: a break-even of 36.04 months was rounded to 36.0, and read "it would after 36 months, past the 36
    months": the figure said must show which side of the amortisation it falls on, as ``within_amortization`` does.
    """
    for places in range(1, 7):
        shown = round(months, places)
        if (shown > limit) == (months > limit) and (shown == limit) == (months == limit):
            return shown
    return round(months, 6)


def months_text(months: float) -> str:
    """A count of months as the comment says it: ``36``, ``36.04``, ``1,000,000,000,000`` (never ``1e+12``)."""
    return f"{int(months):,}" if months == int(months) else f"{months:,}"


def buy_vs_rent_line(payback: dict[str, Any]) -> str:
    """The break-even of buying against renting, as the comment says it, with both sides' totals over the amortisation."""
    rented = "new" if payback["bought"] == "old" else "old"
    if "runs_break_even" in payback:  # runs rented per run alone (newuser108 item 1)
        return (
            f"Buy ({payback['bought']}) or rent ({rented}): {dollars_text(payback['capex_usd'])} up front and "
            f"{dollars_text(payback['running_usd_per_month'])}/month to run, against "
            f"{dollars_text(payback['runs_break_even']['rent_usd_per_run'])} a run of its training jobs rented (no "
            f"servers rented by the month): {runs_break_even_text(payback, months_text(payback['amortization_months']))} "
            f"(the bought side's capex is its servers alone, without {payback['capex_excludes']}, and is spread over "
            f"amortization_months with no resale value{_rent_basis_text(payback['rent_basis'])})."
        )
    rent, running = payback["rent_usd_per_month"], payback["running_usd_per_month"]
    months = payback["amortization_months"]
    totals = payback["total_usd_over_amortization"]
    buy_total, rent_total = totals[payback["bought"]], totals[rented]
    span = f"the {months_text(months)}-month amortisation"
    over = f"over {months_text(months)} months buying costs {dollars_text(buy_total)} and renting {dollars_text(rent_total)}"
    break_even = payback["break_even_months"]
    if not payback["capex_usd"]:  # owned servers alone: nothing to pay back (review39 item 11: "buying never pays back")
        cheaper = f"{dollars_text(rent - running)}/month less" if rent > running else f"{dollars_text(running - rent)}/month more"
        over = (
            f"over {months_text(months)} months running them costs {dollars_text(buy_total)} and renting "
            f"{dollars_text(rent_total)}"
        )
        when = f"the servers owned cost {cheaper} to run than the rent; {over}"
    elif break_even is not None and payback["within_amortization"]:
        when = f"buying has cost less after {months_text(break_even)} months, within {span}: {over}"
    elif break_even is not None:
        # newuser39 item 1: past the amortisation the bought servers are costed as worth nothing: no win for buying
        when = (
            f"buying does not pay back within {span} (it would after {months_text(break_even)} months, "
            f"past the {months_text(months)} months its servers are costed over): renting costs "
            f"{dollars_text(buy_total - rent_total)} less over {months_text(months)} months "
            f"({dollars_text(rent_total)} rented against {dollars_text(buy_total)} bought)"
        )
    elif rent < running:
        when = (
            f"renting costs {dollars_text(running - rent)}/month less than running the bought servers alone: buying never "
            f"pays back; {over}"
        )
    else:
        when = f"running the bought servers costs as much as the rent: buying never pays back; {over}"
    when += _at_floor_text(payback, span)
    owned = payback.get("owned_nodes") or 0
    held = f" (the {owned} server{'s' if owned != 1 else ''} already owned counted at no capex)" if owned else ""
    return (
        f"Buy ({payback['bought']}) or rent ({rented}): {dollars_text(payback['capex_usd'])} up front{held} and "
        f"{dollars_text(running)}/month to run, against {dollars_text(rent)}/month rented{_rent_parts(payback)}: {when} "
        f"(the bought side's capex is its servers alone, without {payback['capex_excludes']}, and is spread over "
        f"amortization_months with no resale value{_rent_basis_text(payback['rent_basis'])})."
    )


def _rent_basis_text(basis: list[dict[str, Any]]) -> str:
    """``; the rent of a and b is ...``: the rate each rented pool is at, pools at the same rate together."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for entry in basis:
        named_as = entry.get("price_key") or entry["platform_id"]  # the key it is given under (a spot rate's @spot)
        key = (entry["basis"], named_as, entry["usd_per_node_hour"], entry.get("region"), entry.get("price_id"))
        groups.setdefault(key, []).append(entry["pool"])
    parts = []
    for (kind, platform, rate, region, price_id), pools in groups.items():
        named = " and ".join(pools) if len(pools) < 3 else ", ".join(pools[:-1]) + " and " + pools[-1]
        at = f"{platform} {dollars_text(rate, 2)}/h" if rate is not None else str(platform)
        if kind == "prices":
            what = f"the rate given under prices: ({at})"
        elif kind == "list":
            what = f"the on-demand list price of {region} ({at})"
        else:
            what = f"the catalog's rent {price_id} ({at})" if price_id else f"its catalog price ({at})"
        parts.append(f"the rent of {named} is {what}")
    if any(entry["basis"] == "list" for entry in basis):
        parts.append("on-demand list prices are what 1-3-year commitments lower")
    return "".join(f"; {part}" for part in parts)


def _at_floor_text(payback: dict[str, Any], span: str) -> str:
    """The break-even against the rented side's autoscaled floor, where it has one (newuser65 item 4); else ""."""
    if "rent_usd_per_month_floor" not in payback or not payback["capex_usd"]:
        return ""
    floor, break_even = payback["rent_usd_per_month_floor"], payback["break_even_months_at_floor"]
    if break_even is None:
        verdict = "buying never pays back"
    elif payback["within_amortization_at_floor"]:
        verdict = f"buying has cost less after {months_text(break_even)} months, within {span}"
    else:
        verdict = f"buying does not pay back within {span} (it would after {months_text(break_even)} months)"
    total = payback["rent_total_usd_over_amortization_at_floor"]
    return (
        f"; the rented side's pools autoscale: at their floor all month ({dollars_text(floor)}/month, the nodes its services' "
        f"average rates need; {dollars_text(total)} over {months_text(payback['amortization_months'])} months) {verdict}, and "
        "the rented month lies between the floor's and the peak's, as the day's profile sets it"
    )


def _rent_parts(payback: dict[str, Any]) -> str:
    """What the rent is made of, where rented training runs are part of it or left out of it."""
    services, runs = payback.get("rent_services_usd_per_month"), payback.get("rent_training_usd_per_month")
    if "rent_training_usd_per_job_uncounted" in payback:
        run = payback["rent_training_usd_per_job_uncounted"]
        if run is None:
            return ", plus its training jobs' runs (not counted: a job has no price or no runs_per_month)"
        return f", plus {dollars_text(run)} a run of its training jobs (not counted: the workload gives no runs_per_month)"
    if not runs:
        return ""
    if not services:
        return " (its training jobs' runs a month, no servers rented by the month)"
    return f" ({dollars_text(services)} of servers by the month + {dollars_text(runs)} of training runs a month)"
