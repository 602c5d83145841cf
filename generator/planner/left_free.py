"""Why the chosen fleet leaves owned servers free, as the fleet search found it (newuser30 item 2).

A deployment with a feasible layout on an owned kind the chosen fleet leaves free is said to rank worse there only
where the search verified it: a fleet running it on that kind was assembled and ranked below the one chosen, or was
dropped because a floor under its objective was already worse. Else the finding says what was tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from generator.planner.ruled_out import left_free_message, owned_build, why_left_free

if TYPE_CHECKING:
    from generator.planner.blocked import Blocked
    from generator.planner.inventory import ServerKey
    from generator.planner.option import Option
    from generator.planner.plan import Plan, Pool
    from generator.workload.models import Workload

#: A deployment's name and an owned server kind it ran on in a fleet the search tried.
Trial = tuple[str, "ServerKey"]

#: What the tie-breaks after the objective in a fleet's rank compare, in their order.
_TIE_BREAKS = ("fewer idle GPUs", "fewer servers", "less power")


class Ranking(NamedTuple):
    """How whole fleets were compared: the objective's name and the sort key of a fleet (least first)."""

    objective: str
    key: Callable[[Plan], tuple[float, ...]]


#: What each place of the lead of a fleet's rank counts, by objective (``cost``'s last two: an unpriced fleet's).
_LEADS = {
    "cost": ("usd_month", "usd_run", "kw_bought", "kw"),
    "gpus": ("gpus_bought", "gpus"),
    "power": ("kw",),
    "power-bought": ("kw_bought", "kw"),
}


def lead_text(objective: str, place: int, figure: float) -> str:
    """A figure of the lead of a fleet's rank (at ``place``) under ``objective``, with its unit."""
    unit = _LEADS.get(objective, _LEADS["cost"])[min(place, len(_LEADS.get(objective, _LEADS["cost"])) - 1)]
    if math.isinf(figure):
        return "no price"
    if unit == "usd_month":
        return f"${figure:,.0f}/month"
    if unit == "usd_run":
        return f"${figure:,.0f} a run of the jobs paid per run"
    if unit == "gpus_bought":
        return f"{figure:,.0f} GPUs bought"
    if unit == "gpus":
        return f"{figure:,.0f} GPUs in all"
    if unit == "kw_bought":
        return f"{figure / 1000:,.1f} kW of servers bought or rented"
    return f"{figure / 1000:,.1f} kW"


class LeftFreeTrials(NamedTuple):
    """The fleets the search tried with each deployment on each owned kind it used owned servers of."""

    #: The fleets assembled, by (deployment, owned kind) they ran it on.
    built: dict[Trial, list[Plan]]
    #: Those dropped unassembled: a floor under their objective (the least of them) was worse than a fleet's already
    #: assembled.
    floored: dict[Trial, float]
    #: Those that could not be assembled, and why (the fleet limit broken, or the error).
    failed: dict[Trial, list[str]]

    @classmethod
    def empty(cls) -> LeftFreeTrials:
        """No fleet tried yet."""
        return cls({}, {}, {})

    @staticmethod
    def on_owned(wl: Workload, chosen: Iterable[tuple[int, Option, list[Option]]]) -> set[Trial]:
        """The (deployment, owned kind) pairs of a fleet's choices: each part that runs on owned servers."""
        return {
            (wl.deployments[i].name, part.server_kind)
            for i, opt, _ in chosen
            for part in opt.pieces
            if part.candidate.owned_nodes
        }

    def record(self, trials: set[Trial], plan: Plan | None = None, floor: float | None = None, failed: str = "") -> None:
        """What became of a fleet running the deployments of ``trials`` on owned servers of their kinds.

        ``plan``: the fleet assembled; ``floor``: dropped unassembled, the floor under its objective this.
        """
        for trial in trials:
            if plan is not None:
                self.built.setdefault(trial, []).append(plan)
            if floor is not None:
                self.floored[trial] = min(floor, self.floored.get(trial, floor))
            if failed:
                self.failed.setdefault(trial, []).append(failed)

    def clause(self, trial: Trial, best: Plan, rank: Ranking, floor_rank: Ranking | None = None) -> str:
        """Why the deployment of ``trial`` is not on that owned kind in ``best`` (ranked by ``rank``), as verified.

        ``floor_rank``: the ranking the floors were held against (the workload's objective; ``rank``'s by default).
        """
        feasible = "a layout on them was feasible, but"
        built = self.built.get(trial, [])
        if built:
            ours, theirs = rank.key(best), min(rank.key(p) for p in built)
            if theirs == ours:
                return f"{feasible} the fleet running it there ranks equal to the one chosen (the first found is kept)"
            differ = next(k for k, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b)
            lead = len(ours) - len(_TIE_BREAKS)
            if differ < lead:
                return (
                    f"{feasible} the best fleet the search assembled with it there ranks worse by the objective: "
                    f"{lead_text(rank.objective, differ, theirs[differ])} against "
                    f"{lead_text(rank.objective, differ, ours[differ])} for the one chosen"
                )
            return f"{feasible} the fleet ties on the objective without it and has {_TIE_BREAKS[differ - lead]}"
        if trial in self.floored:
            by = floor_rank or rank
            return (
                f"{feasible} every fleet the search formed with it there ranks worse by the objective: at least "
                f"{lead_text(by.objective, 0, self.floored[trial])} against {lead_text(by.objective, 0, by.key(best)[0])} "
                "for the one chosen"
            )
        if trial in self.failed:
            why = sorted(set(self.failed[trial]))
            return f"{feasible} no fleet running it there could be planned ({'; '.join(why[:2])})"
        return f"{feasible} no fleet the search assembled ran it there"


def checked_left_free(
    wl: Workload,
    plan: Plan,
    chosen: list[tuple[int, Option, list[Option]]],
    ruled_out: Mapping[str, list[Blocked]],
    trials: LeftFreeTrials,
    rank: Ranking,
    floor_rank: Ranking | None = None,
) -> Plan:
    """``plan`` with each ``inventory-free`` finding saying, of each deployment that could run there, what was tried.

    ``chosen`` and ``ruled_out``: the choices the plan was assembled from and the layouts ruled out (as the pass that
    made it returned them).
    """
    messages: dict[str, str] = {}
    for entry in plan.totals.get("inventory", ()):
        if not entry["free"]:
            continue
        key: ServerKey = (entry["platform"], entry["gpu"], entry["gpus_per_server"])
        users = {d for p in plan.pools if p.owned_nodes and _kind(p) == key for d in p.deployments}
        options = ((i, o) for i, best, rest in chosen for o in (best, *rest))
        feasible = {wl.deployments[i].name for i, o in options for part in o.pieces if part.server_kind == key}
        build = owned_build(entry)
        said = why_left_free(entry["gpu"], entry["platform"], ruled_out, users, feasible, build=build)
        verdicts = {name: trials.clause((name, key), plan, rank, floor_rank) for name in feasible - users}
        checked = why_left_free(entry["gpu"], entry["platform"], ruled_out, users, feasible, verdicts, build)
        messages[left_free_message(entry, said)] = left_free_message(entry, checked)
    if not messages:
        return plan
    findings = tuple(
        f._replace(message=messages[f.message]) if f.code == "inventory-free" and f.message in messages else f
        for f in plan.findings
    )
    return plan._replace(findings=findings)


def _kind(pool: Pool) -> ServerKey:
    """The server kind a pool's nodes are."""
    return (pool.node.platform_id, pool.node.gpu_id, pool.node.gpus)
