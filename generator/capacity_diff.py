"""What ``specgen diff`` says of ``objective: capacity`` plans: the objective, the cap and the factor, old -> new.

fuzz35 item 5: a diff of two capacity plans (or of a cost plan and a capacity one) never named the objective, the cap
($400,000 -> $800,000) or the factor (14.75 x -> 29.5 x), and called the rate served at the factor "147.50 req/s
asked" where the file asks 10. A capacity plan's ``spec.json`` holds them (``capacity``): its factor, the cap, the
capex spent, the field that bound the factor, and each service's rate given and served.
"""

from __future__ import annotations

import math
from typing import Any

from generator.render.md_escape import md_code, md_text
from generator.units import dollars_text, figure_text

#: The largest figure read from a spec.json (a hostile one may hold anything: review22 item 7).
_MOST = 1e15


def _figure(value: Any) -> float | None:
    """``value`` where it is a finite number from 0 to :data:`_MOST` (not a bool), else None."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    return float(value) if 0 <= value <= _MOST else None


def _capacity(plan: dict[str, Any]) -> dict[str, Any]:
    """A plan's ``capacity`` record where it is one (an object), else an empty one."""
    record = plan.get("capacity")
    return record if isinstance(record, dict) else {}


def capacity_side(plan: dict[str, Any]) -> dict[str, Any]:
    """A side's objective and, where it is ``capacity``, its cap, factor, bounding field and capex spent."""
    objective = plan.get("objective")
    side: dict[str, Any] = {"objective": objective if isinstance(objective, str) and plan.get("pools") else None}
    if side["objective"] != "capacity":
        return side
    record = _capacity(plan)
    bound = record.get("bound_by")
    return side | {
        "max_capex_usd": _figure(record.get("max_capex_usd")),
        "factor": _figure(record.get("factor")),
        "bound_by": bound if isinstance(bound, str) else None,
        "capex_usd": _figure(record.get("capex_usd")),
    }


def capacity_change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """Each side's :func:`capacity_side` where either is a capacity plan and what they say differs; else None."""
    sides = capacity_side(old), capacity_side(new)
    if "capacity" not in (sides[0]["objective"], sides[1]["objective"]) or sides[0] == sides[1]:
        return None
    return {"old": sides[0], "new": sides[1]}


def served_at(row: dict[str, Any] | None, plan: dict[str, Any], name: str) -> dict[str, Any] | None:
    """``row`` with its load's ``served_at`` (the factor and the rate the file gives) where ``plan`` is capacity's.

    A capacity plan's ``requests_per_s`` is the file's rate times the factor: served, not asked.
    """
    if row is None or not isinstance(row.get("load"), dict) or plan.get("objective") != "capacity":
        return row
    record = _capacity(plan)
    served = record.get("served")
    given = next(
        (
            _figure(s.get("given_requests_per_second"))
            for s in (served if isinstance(served, list) else [])
            if isinstance(s, dict) and s.get("name") == name
        ),
        None,
    )
    factor = _figure(record.get("factor"))
    if factor is None or given is None:
        return row
    return row | {"load": row["load"] | {"served_at": {"factor": factor, "given_requests_per_s": given}}}


def rate_said(load: dict[str, Any], rate: str) -> str:
    """A service's rate as a diff row says it: ``10.00 req/s asked``, or served at a capacity plan's factor.

    ``147.50 req/s served at 14.75 x (the file asks 10)`` on a capacity plan's side.
    """
    at = load.get("served_at")
    if not isinstance(at, dict):
        return f"{rate} req/s asked"
    factor, given = _figure(at.get("factor")), _figure(at.get("given_requests_per_s"))
    if factor is None or given is None:
        return f"{rate} req/s asked"
    return f"{rate} req/s served at {figure_text(factor)} x (the file asks {figure_text(given)})"


def _said(side: dict[str, Any], key: str) -> str:
    """One figure of a side as the line says it (``-`` where the side has none)."""
    value = side.get(key)
    if value is None:
        return "-"
    if key in ("max_capex_usd", "capex_usd"):
        return dollars_text(value)
    if key == "factor":
        return f"{figure_text(value)} x"
    return md_code(value) if key == "bound_by" else md_text(str(value))


def capacity_change_lines(change: dict[str, Any] | None) -> list[str]:
    """The Markdown line of a :func:`capacity_change`: each figure that differs, old -> new; none where no change.

    Where one side is not a capacity plan, the objective's change and the capacity side's figures.
    """
    if not change:
        return []
    old, new = change["old"], change["new"]
    names = {"max_capex_usd": "max_capex_usd", "factor": "factor", "bound_by": "bound by", "capex_usd": "capex spent"}
    if old["objective"] == new["objective"]:
        said = [f"objective {_said(new, 'objective')}"] + [
            f"{name} {_said(old, key)} → {_said(new, key)}" if old.get(key) != new.get(key) else f"{name} {_said(new, key)}"
            for key, name in names.items()
        ]
    else:
        side, which = (new, "NEW") if new["objective"] == "capacity" else (old, "OLD")
        figures = ", ".join(f"{name} {_said(side, key)}" for key, name in names.items())
        said = [f"objective {_said(old, 'objective')} → {_said(new, 'objective')}", f"{which}'s {figures}"]
    return [
        f"**Capacity: {'; '.join(said)}.** A capacity plan's services run at the file's request rates times its "
        "factor: their req/s below are served at it, not asked.",
        "",
    ]
