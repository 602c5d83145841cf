"""Why a deployment moved to other hardware where the rates it is rented at moved (newuser82 item 3).

A catalog price that changes (a specgen upgrade), or a rate given under ``prices:``, moves a plan with no input of
the deployment changed: the diff said "changed: TP 4 -> 1, pool ... -> ..." and nothing of why. Each side's plan
holds the runners-up it priced, so the layout a deployment ran at the base is found among the new plan's runners-up
and the layout it moves to among the base's, each with its rate on both sides.
"""

from __future__ import annotations

from typing import Any

from generator.units import dollars_text

#: What makes two layouts the same choice: hardware, parallelism and replicas.
_LAYOUT = ("platform_id", "gpu_id", "tp", "pp", "replicas", "nodes")


def _chosen(deployment: dict[str, Any], pools: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The layout ``deployment`` runs, priced where its pool holds it alone and is rented by the hour."""
    pool = pools.get(str(deployment.get("pool")))
    if pool is None or pool.get("deployments") != [deployment.get("name")] or deployment.get("split"):
        return None
    node = pool.get("node") or {}
    rate = pool.get("usd_per_hour")
    if not isinstance(rate, int | float) or not isinstance(pool.get("nodes"), int) or pool["nodes"] <= 0:
        return None
    layout = {
        "platform_id": node.get("platform_id"),
        "gpu_id": node.get("gpu_id"),
        "tp": deployment.get("tp"),
        "pp": deployment.get("pp"),
        "replicas": deployment.get("replicas"),
        "nodes": pool["nodes"],
    }
    return layout | {"usd_per_hour": float(rate)}


def _priced_among(layout: dict[str, Any], runners_up: Any) -> float | None:
    """The rate a hour of ``layout`` among a plan's ``runners_up`` (None where it is not one of them)."""
    for runner in runners_up if isinstance(runners_up, list) else ():
        if isinstance(runner, dict) and all(runner.get(key) == layout[key] for key in _LAYOUT):
            rate = runner.get("usd_per_hour")
            return float(rate) if isinstance(rate, int | float) else None
    return None


def _summary(layout: dict[str, Any]) -> str:
    return (
        f"{layout['replicas']} x TP{layout['tp']}" + (f"xPP{layout['pp']}" if layout["pp"] != 1 else "")
        + f" on {layout['nodes']} x {layout['platform_id']} ({layout['gpu_id']})"
    )  # fmt: skip


def choice_moves(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Per deployment that moved to another layout, where a side's runners-up price the other side's choice.

    Each entry: ``deployment``; ``was`` (the layout it ran) and ``now`` (the layout it moves to), each with its
    ``summary``, ``nodes`` and ``usd_per_hour`` at the base and in the change (None where that side did not price it).
    Listed only where a layout's rate differs between the sides: the rent moved the choice.
    """
    old_pools = {str(p.get("name")): p for p in old.get("pools") or () if isinstance(p, dict)}
    new_pools = {str(p.get("name")): p for p in new.get("pools") or () if isinstance(p, dict)}
    before = {str(d.get("name")): d for d in old.get("deployments") or () if isinstance(d, dict)}
    moves: list[dict[str, Any]] = []
    for deployment in new.get("deployments") or ():
        if not isinstance(deployment, dict) or (was_dep := before.get(str(deployment.get("name")))) is None:
            continue
        was = _chosen(was_dep, old_pools)
        now = _chosen(deployment, new_pools)
        if was is None or now is None or all(was[key] == now[key] for key in _LAYOUT):
            continue
        was_now = _priced_among(was, deployment.get("runners_up"))
        now_before = _priced_among(now, was_dep.get("runners_up"))
        was_rates = {"old": was["usd_per_hour"], "new": was_now}
        now_rates = {"old": now_before, "new": now["usd_per_hour"]}
        rows = {
            "was": {"summary": _summary(was), "nodes": was["nodes"], "usd_per_hour": was_rates},
            "now": {"summary": _summary(now), "nodes": now["nodes"], "usd_per_hour": now_rates},
        }
        moved = [r for r in rows.values() if None not in r["usd_per_hour"].values()]
        if any(abs(r["usd_per_hour"]["old"] - r["usd_per_hour"]["new"]) >= 0.005 for r in moved):
            moves.append({"deployment": deployment["name"], **rows})
    return moves


def _rate(value: float | None, nodes: int) -> str:
    if value is None:
        return "not among that plan's runners-up"
    return f"{dollars_text(value, 2)}/h ({dollars_text(value / nodes, 2)} a node-hour)"


def choice_move_lines(moves: list[dict[str, Any]], code: Any, before: str = "at the base") -> list[str]:
    """Markdown bullets for :func:`choice_moves` (``code``: the comment's code span; ``before``: the old side)."""
    lines = []
    for move in moves:
        parts = []
        for key, what in (("was", "the layout it ran"), ("now", "the layout it moves to")):
            row = move[key]
            old, new = row["usd_per_hour"]["old"], row["usd_per_hour"]["new"]
            same = old is not None and new is not None and abs(old - new) < 0.005
            prices = f"{_rate(new, row['nodes'])}, as {before}" if same else (
                f"{_rate(old, row['nodes'])} {before}, {_rate(new, row['nodes'])} now"
            )  # fmt: skip
            parts.append(f"{what}, {code(row['summary'])}, {prices}")
        lines.append(f"- {code(move['deployment'])} moves as the rent moved: {'; '.join(parts)}")
    return lines
