"""What ``specgen diff`` says of per-site plans (``sites:``): the chain's totals, and the sites' count and layout.

fix201: a per-site plan's pools and totals are one site's (:mod:`generator.planner.per_site`), so a diff of the chain's
pooled plan against its per-site one read "28 -> 1 nodes". The totals compared are the chain's (``sites.totals``: each
site's figures times the sites), and a change of the site count or of what one site holds is said in words.
"""

from __future__ import annotations

from typing import Any

from generator.capacity_diff import _figure
from generator.render.md_escape import md_text
from generator.units import figure_text

#: The per-site figures said of a site's layout (one site's, per rate scale).
_SITE_FIGURES = ("nodes", "gpus")


def _sites(plan: dict[str, Any]) -> dict[str, Any] | None:
    """A plan's ``sites`` record with its chain totals where it is one (objects), else None."""
    record = plan.get("sites")
    if not isinstance(record, dict) or not isinstance(record.get("totals"), dict):
        return None
    return record if _figure(record["totals"].get("sites")) else None


def chain_view(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with the chain's totals over one site's, where it is a per-site plan; else ``plan`` itself."""
    record = _sites(plan)
    if record is None or not isinstance(plan.get("totals"), dict):
        return plan
    chain = {k: v for k, v in record["totals"].items() if k != "sites" and (v is None or _figure(v) is not None)}
    return plan | {"totals": plan["totals"] | chain}


def _layout(plan: dict[str, Any]) -> dict[str, Any]:
    """A side's site count (None: one pooled fleet) and what one site of each rate scale holds."""
    record = _sites(plan)
    if record is None:
        return {"sites": None, "per_site": []}
    profiles = record.get("profiles")
    if not isinstance(profiles, list) or not profiles:  # a spec.json written before the profiles: one site's totals
        profiles = [{"requests_per_second_scale": 1, "sites": record.get("names"), "per_site": plan.get("totals")}]
    per_site = []
    for profile in profiles:
        one = profile.get("per_site") if isinstance(profile, dict) else None
        one = one if isinstance(one, dict) else {}
        names = profile.get("sites") if isinstance(profile, dict) else None
        row = {
            "scale": _figure(profile.get("requests_per_second_scale")) if isinstance(profile, dict) else None,
            "sites": len(names) if isinstance(names, list) else None,
        }
        per_site.append(row | {key: _figure(one.get(key)) for key in _SITE_FIGURES})
    return {"sites": int(record["totals"]["sites"]), "per_site": per_site}


def site_change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """Each side's :func:`_layout` where either is a per-site plan and they differ; else None."""
    sides = _layout(old), _layout(new)
    if (sides[0]["sites"] is None and sides[1]["sites"] is None) or sides[0] == sides[1]:
        return None
    return {"old": sides[0], "new": sides[1]}


def _side_text(side: dict[str, Any]) -> str:
    """One side's sites in words: pooled, or N sites and what one site of each scale holds."""
    if side["sites"] is None:
        return "one pooled fleet (no sites)"
    parts = [
        (f"{row['sites']} at x{row['scale']:g}: " if len(side["per_site"]) > 1 and row["scale"] is not None else "")
        + f"{_count(row['nodes'])} node(s), {_count(row['gpus'])} GPU(s) a site"
        for row in side["per_site"]
    ]
    return f"{side['sites']:,} sites ({'; '.join(parts)})"


def _count(value: float | None) -> str:
    """A figure, or ``?`` where the spec.json held none."""
    return "?" if value is None else figure_text(value)


def site_change_lines(change: dict[str, Any] | None) -> list[str]:
    """The Markdown line of a :func:`site_change`; none where the sites did not change."""
    if change is None:
        return []
    return [
        f"**Sites: {md_text(_side_text(change['old']))} → {md_text(_side_text(change['new']))}.** The totals below are "
        "the whole chain's (each site's figures times its sites); the pool and deployment rows are the first site's.",
        "",
    ]
