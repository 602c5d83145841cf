"""The planner: enumerate feasible hardware per deployment, pick the best by the objective, build pools.

``plan_workload`` is pure over the loaded workload and the catalog; it returns a frozen
:class:`Plan` or raises :class:`InfeasibleError` saying which limit blocked what and what would unblock it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

from generator.errors import FleetLimitError, InfeasibleError, Location
from generator.named_tuple import NamedTuple
from generator.planner.blocked import (
    BATCH_NOT_SPLIT,
    COMMUNICATION_DOMINATES,
    MORE_RANKS_THAN_BATCH,
    NO_LAYOUT,
    NO_PACKING,
    NOT_SHARED_HERE,
    OWNED_SHORT,
    PAST_DEADLINE,
    PINNED_DEGREE,
    RACK_POWER,
    RUNS_PAST_MONTH,
)
from generator.planner.early import early_checks
from generator.planner.left_free import LeftFreeTrials, Ranking, checked_left_free
from generator.planner.lora_ram import lora_ram_field
from generator.planner.nodes import NO_GPU_FABRIC, RAM_SHORT
from generator.planner.options import allowed_hardware
from generator.planner.price_region import budget_basis, catalog_spot_rated, least_rate_elsewhere, pricing_region
from generator.planner.ruled_out import why_left_free
from generator.planner.unblock import unblock_hint
from generator.planner.unblock_ways import count_fields, network_hint, network_lead
from generator.sizing.constants import Constants, with_overrides
from generator.words import counted
from generator.workload import LoadedWorkload
from generator.workload.capacity_type import SPOT_SUFFIX, spot_key
from generator.workload.loader import format_path
from generator.workload.models import InferenceDeployment, TrainingDeployment, Workload
from generator.workload.sharing import planned_sharing, sharing_field

if TYPE_CHECKING:
    from generator.planner.blocked import Blocked
    from generator.planner.candidates import RankingMemo, SizedOptions
    from generator.planner.inventory import ServerKey
    from generator.planner.node_cap import PoolGroup
    from generator.planner.option import Option
    from generator.planner.plan import Candidate, Finding, Plan, Pool


class RefusalWithTailError(InfeasibleError):
    """A deployment's refusal, with what it ends in and whether the network between nodes rules layouts out.

    ``tail``: the owned servers' part the message ends in, which a suggestion found later is said before (newuser76
    item 11: the suggestion that plans was cut off the end of a long message); ``network``: some reason is the
    network's, which a suggestion planned over the same kind of link does not fix (newuser76 item 9).
    """

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        *,
        tail: str = "",
        network: bool = False,
        lead: str = "",
        placed: int = 0,
        index: int = -1,
    ) -> None:
        super().__init__(message, location)
        self.tail = tail
        self.network = network
        #: The deployments the pass had placed before this one was refused: the pass that got furthest says what blocks
        #: the fleet (:func:`_nearest`).
        self.placed = placed
        #: The deployment refused (its index in the workload).
        self.index = index
        #: The network's fix the advice leads with, after which a suggestion found later is said, ahead of the levers
        #: of memory (not verified to plan it); "": none.
        self.lead = lead

    def with_suggestion(self, suggestion: str) -> str:
        """The message with ``suggestion`` (``"; ..."``) in it.

        After the network's fix where the advice leads with one, else ahead of the owned servers' part (or at the end).
        """
        text = str(self)
        if self.lead and (at := text.find(self.lead)) >= 0:
            at += len(self.lead)
        elif self.tail and text.endswith(self.tail):
            at = len(text) - len(self.tail)
        else:
            at = len(text)
        return text[:at] + suggestion + text[at:]


#: The fleet limits a layout alone may break, in the order an error is located at the first one set.
_LIMITS = ("max_budget_usd_per_month", "max_capex_usd", "max_nodes")


def _binding_field(
    wl: Workload,
    dep: InferenceDeployment | TrainingDeployment,
    index: int,
    limited: bool,
    blocked: list[Blocked],
    every_breaks: frozenset[str] = frozenset(),
) -> tuple[str | int, ...]:
    """The field an infeasible deployment's error is located at: the one that rules its layouts out, where one does.

    newuser26 item 6: every such error stood at ``model``, so a CI annotation marked the model line for a TPOT target,
    a budget or a pinned TP. ``limited``: layouts exist, but none within max_nodes / max_budget_usd_per_month /
    max_capex_usd; ``every_breaks``: the limits every layout breaks, the first of which is the field (else the first
    limit set).
    """
    at: tuple[str | int, ...] = ("deployments", index)
    if limited:
        for field in (*(f for f in _LIMITS if f in every_breaks), *_LIMITS):
            if getattr(wl.hardware, field, None) is not None:
                return ("hardware", field)
    elif (stated := _stated_field(blocked)) is not None:
        return stated
    elif blocked and isinstance(dep, TrainingDeployment) and all(_batch_bound(b) for b in blocked):
        # the batch alone rules the layouts out (hostile78 item 6): the error stands at it
        return (*at, "training", "global_batch_size")
    elif blocked and all(b.code == RACK_POWER for b in blocked):  # every server drawn is over the rack (newuser34 item 9)
        return ("hardware", wl.hardware.rack_power_field)
    elif blocked and all(b.code in (NO_PACKING, PINNED_DEGREE) for b in blocked) and dep.parallelism is not None:
        return (*at, "parallelism")
    elif blocked and any(b.code == RUNS_PAST_MONTH for b in blocked) and isinstance(dep, TrainingDeployment):
        if all(b.code in (RUNS_PAST_MONTH, PAST_DEADLINE) for b in blocked):  # its runs a month are what is too many
            return (*at, "training", "runs_per_month")
    elif isinstance(dep, InferenceDeployment) and (cached := lora_ram_field(dep, index, blocked)) is not None:
        return cached  # the adapters' CPU caches fill every node's RAM (fix161)
    elif isinstance(dep, InferenceDeployment):
        slow = [b for b in blocked if b.excess is not None]
        if slow and all(b in slow for b in blocked if b.code == NO_LAYOUT):  # latency alone rules the layouts out
            # the target the closest layout misses (newuser46 item 3: an A40 missing TPOT by 6% put a TTFT no GPU
            # meets at tpot_ms, where the best GPUs met TPOT with room to spare)
            closest = min(slow, key=lambda b: b.excess or 0.0)
            tpot = "tpot" in closest.missed and dep.inference.slo.tpot_ms is not None
            return (*at, "inference", "slo", "tpot_ms" if tpot else "ttft_p95_ms")
    return (*at, "model")


def _batch_bound(b: Blocked) -> bool:
    """Whether ``b`` rules its layout out on the global batch alone: more ranks than sequences, or not split evenly."""
    return MORE_RANKS_THAN_BATCH in b.why or BATCH_NOT_SPLIT in b.why


def _stated_field(blocked: list[Blocked]) -> tuple[str | int, ...] | None:
    """The owned group's field (its stated RAM) that rules out every server kind ``blocked`` names, where one does.

    Each kind has such a reason among its own, which the refusal says first of the kind; the first kind's field (by
    platform, as the refusal lists them) is where it stands (newuser43: at the deployment's model, not the RAM).
    """
    kinds = {(b.platform_id, b.gpu_id) for b in blocked}
    fields = {(b.platform_id, b.gpu_id): b.field for b in blocked if b.field}
    return fields[min(kinds)] if kinds and kinds <= fields.keys() else None


def plan_workload(loaded: LoadedWorkload) -> Plan:
    """Plan every deployment of a validated workload (:func:`_plan_workload`); a fleet limit's error names its field."""
    from generator.planner.assembly_cache import forget
    from generator.planner.wall_circuit import outlet_circuit

    forget()  # what the last plan's fleets formed (perf13): a catalog table may have been replaced since
    try:
        if loaded.workload.sites:  # newuser113: one site sized on its own hosts, repeated per site
            from generator.planner.per_site import plan_per_site

            plan = plan_per_site(loaded, _plan_workload)
        else:
            plan = _plan_workload(loaded)
    except FleetLimitError as exc:
        where = loaded.document.locate(("hardware", exc.limit))
        raise FleetLimitError(str(exc), exc.limit, exc.needed, location=where) from None
    circuit = outlet_circuit(loaded.workload.hardware.wall_circuit)  # fix168: spec.json says it, so diff can
    return plan if circuit is None else plan._replace(wall_circuit=circuit)


def _plan_workload(loaded: LoadedWorkload) -> Plan:
    """Plan every deployment of a validated workload.

    Each deployment is ranked by the objective; on a tie, replicas on fewer Linux hosts first, then a layout that
    leaves bought GPUs idle loses. Where inference deployments could share servers, the fleet is also planned with each layout
    ranked by what it adds to the servers chosen before it, and the GPUs in use kept few (so idle ones
    take the next deployment); that plan is chosen only when the whole fleet wins on the objective
    (fewer idle GPUs, then servers, then power on a tie).
    """
    # the search's modules load here, not with the package: ``specgen validate`` needs only the early checks
    from generator.planner.fixed import plan_fixed

    wl = loaded.workload
    consts = with_overrides(dict(wl.constants))
    if wl.hardware.fixed is not None:
        return plan_fixed(loaded, consts)  # its placement is the early check of a fixed machine (not run twice)
    early_checks(loaded, consts)  # as validate runs them, before any search (capacity's too: the same error, placed)
    if wl.objective == "capacity":  # the largest scale of the rates the capex cap buys, the planner its inner solver
        from generator.planner.capacity import plan_capacity

        return plan_capacity(loaded, consts, _plan_fleet_within_limits, _plan_fleet_and_findings)
    return _plan_fleet_and_findings(loaded, consts)


def _plan_fleet_and_findings(loaded: LoadedWorkload, consts: Constants) -> Plan:
    """The fleet within the limits, with what the searches around it find (a cheaper precision, a chain, sharing's cost)."""
    from generator.planner.batch_free_servers import batch_free_findings, batch_free_hint, batch_ranks_hint
    from generator.planner.batch_split_hint import batch_split_findings
    from generator.planner.chain_hint import chain_hint_findings
    from generator.planner.free_owned_cost import free_owned_cost_said
    from generator.planner.lighter_training import lighter_training_findings, lighter_training_hint
    from generator.planner.not_sold_new import not_sold_new_findings
    from generator.planner.plan import sorted_findings
    from generator.planner.precision_choices import cheaper_precision_findings
    from generator.planner.prefix_routing import prefix_routing_findings
    from generator.planner.sharing_cost import sharing_cost_findings

    bound: set[str] = set()  # the limits that may have changed the fleet
    try:
        try:
            plan = _node_cap_said(loaded, consts, _plan_fleet_within_limits(loaded, consts, bound))
        except FleetLimitError as exc:
            # where the budget turned layouts away, a fleet past another limit may be its doing (review37 item 3: the
            # error asked for more nodes each time max_nodes was raised, where no fleet within it held the budget)
            if "max_budget_usd_per_month" not in (exc.limit, *bound):
                raise
            plan = _budget_refused(loaded, consts, exc)
            bound.update(_LIMITS)
        if "max_budget_usd_per_month" in bound:
            plan = _budget_said(loaded, consts, plan)
    except InfeasibleError as exc:
        # what a training job's lighter settings plan (newuser54 item 3: an owned box was refused without a word of
        # the optimizer offload that fits it)
        # (not where a fleet limit refuses it: review36 item 7)
        if isinstance(exc, FleetLimitError):
            raise
        network = isinstance(exc, RefusalWithTailError) and exc.network
        hint = lighter_training_hint(loaded, consts, _plan_fleet_within_limits, network=network)
        batch_hint = batch_free_hint(loaded, consts, _plan_fleet_within_limits)  # newuser111 item 1
        # fix198 item 4: a batch fewer than the ranks its job needs: the nearest batch of those ranks that plans
        hint += batch_hint or batch_ranks_hint(loaded, consts, str(exc), _plan_fleet_within_limits)
        if hint:
            # after the network's fix, or ahead of the owned servers' part: a long refusal keeps the way that plans
            # (newuser76 items 9 and 11)
            raise InfeasibleError(
                exc.with_suggestion(hint) if isinstance(exc, RefusalWithTailError) else str(exc) + hint
            ) from None
        raise
    said = cheaper_precision_findings(loaded, consts) + chain_hint_findings(loaded, consts, plan, _plan_fleet_within_limits)
    said += not_sold_new_findings(loaded, consts, plan)
    said += sharing_cost_findings(loaded, consts, plan, _plan_fleet_within_limits)
    said += lighter_training_findings(loaded, consts, plan, _plan_fleet_within_limits)
    said += batch_split_findings(loaded, consts, plan, _plan_fleet_within_limits)
    said += batch_free_findings(loaded, consts, plan, _plan_fleet_within_limits)  # newuser111 item 1
    said += prefix_routing_findings(loaded, consts, plan, _plan_fleet_within_limits)
    plan = free_owned_cost_said(loaded.workload, consts, plan)
    return plan._replace(findings=sorted_findings([*plan.findings, *said])) if said else plan


def _plan_fleet_within_limits(loaded: LoadedWorkload, consts: Constants, bound: set[str] | None = None) -> Plan:
    """The best fleet (:func:`_plan_fleet`); where it breaks a fleet limit, the best fleet of one allowed GPU kind.

    Where it breaks the capex cap, also the fleets with capex weighed in each deployment's ranking
    (:data:`CAPEX_PRICES`): the best of all those within the limits wins. ``bound``: where the fleet limits that
    may have changed the fleet go (every limit, where fleets with a price on capex were searched for).
    """
    wl = loaded.workload
    broke: list[InfeasibleError] = []
    try:
        best = _plan_fleet(loaded, consts, broke=broke, bound=bound)
    except FleetLimitError as exc:
        first = exc
    else:
        over = [e.plan for e in broke if isinstance(e, FleetLimitError) and e.limit == "max_capex_usd"]
        objective = _fleet_objective(wl.objective, [best, *(cast("Plan", p) for p in over if p is not None)])
        lead = _fleet_rank(objective, best, wl=wl)
        plans = [best]
        if any(p is not None and _fleet_rank(objective, cast("Plan", p), wl=wl) < lead for p in over):
            # fleets better by the objective broke the capex cap: those with a price on capex may beat the one kept
            plans += _plans_within_capex(loaded, consts, None)
            if bound is not None:
                bound.update(_LIMITS)
        return _best_of(wl, plans)
    # the objective's best choice per deployment breaks a fleet limit (racks, budget): a fleet of one allowed
    # GPU kind may keep it; the best of those that do wins, else the first error stands
    kinds = sorted({hw.gpu.id for hw in allowed_hardware(wl)})
    plans = []
    for kind in kinds if len(kinds) >= 2 else ():
        one = loaded._replace(workload=wl._replace(hardware=wl.hardware._replace(gpus=(kind,))))
        try:
            plans.append(_plan_fleet(one, consts, bound=bound))
        except InfeasibleError:
            continue
    if first.limit == "max_capex_usd":
        plans += _plans_within_capex(loaded, consts, first)
        if bound is not None:
            bound.update(_LIMITS)
    if first.limit == "max_budget_usd_per_month" and wl.objective != "cost":
        plans += _plans_within_budget(loaded, consts)
    if not plans:
        raise first
    return _best_of(wl, plans)


def _best_of(wl: Workload, plans: list[Plan]) -> Plan:
    """The best of fleets planned apart: one that keeps every ``min_replicas`` spread first, then the objective's."""
    objective = _fleet_objective(wl.objective, plans)
    return min(plans, key=lambda p: (_unspread(p), _fleet_rank(objective, p, wl=wl)))


def _node_cap_said(loaded: LoadedWorkload, consts: Constants, plan: Plan) -> Plan:
    """``plan`` with what ``hardware.max_nodes`` costs it, where it fills the cap and a fleet past it is better.

    newuser48 item 2: nothing said the cap had bound the search, nor what the fleet would be without it.
    """
    from generator.planner.plan import Finding, sorted_findings

    wl = loaded.workload
    if wl.hardware.max_nodes is None or plan.totals["nodes"] < wl.hardware.max_nodes:
        return plan  # no cap, or one the fleet does not reach (review34 item 9: each plan re-planned uncapped)
    free = _without_limit(loaded, consts, "max_nodes")
    if free is None:
        return plan
    objective = _fleet_objective(wl.objective, [plan, free])
    nodes = free.totals["nodes"]
    if nodes <= wl.hardware.max_nodes or _fleet_rank(objective, free, wl=wl) >= _fleet_rank(objective, plan, wl=wl):
        return plan  # the best without the cap is within it, or no better
    note = (
        f"hardware.max_nodes {wl.hardware.max_nodes} binds: the fleet within it takes {_fleet_figure(plan, objective)} on "
        f"{plan.totals['nodes']} node(s); the best planned without it {_fleet_figure(free, objective)} on {nodes} node(s)"
    )
    said = Finding("info", "max-nodes-binds", note, "hardware.max_nodes")
    return plan._replace(findings=sorted_findings([*plan.findings, said]))


def _without_limit(loaded: LoadedWorkload, consts: Constants, limit: str, *, by_cost: bool = False) -> Plan | None:
    """The fleet planned without the hardware ``limit`` (``by_cost``: by the cost objective); None: none plans."""
    wl = loaded.workload
    free = wl._replace(hardware=wl.hardware._replace(**cast("dict[str, Any]", {limit: None})))
    try:
        return _plan_fleet_within_limits(loaded._replace(workload=free._replace(objective="cost") if by_cost else free), consts)
    except InfeasibleError:
        return None


def _budget_refused(loaded: LoadedWorkload, consts: Constants, exc: FleetLimitError) -> Plan:
    """Where no fleet was planned within ``max_budget_usd_per_month``: the cheapest planned without it, if within it.

    Else the budget's error, with that fleet's cost, where it is less than the one ``exc`` quotes or ``exc`` is another
    limit's that the fleet keeps; else ``exc``.

    newuser56 item 2: the error quoted $84,206, the cheapest fleet the budgeted search built, where $80,358 plans (a
    layout alone over the budget is left out of each deployment's ranking, and with it the servers several services
    share in the cheapest fleet): a user raised the budget by far more than needed.
    """
    cap = loaded.workload.hardware.max_budget_usd_per_month
    cheapest = _without_limit(loaded, consts, "max_budget_usd_per_month", by_cost=True)
    month = cheapest.totals["usd_per_month"] if cheapest is not None else None
    dearer = exc.limit == "max_budget_usd_per_month" and month is not None and month >= exc.needed
    if cap is None or cheapest is None or month is None or dearer or any(p.per_job for p in cheapest.pools):
        raise exc  # (a rented training job's runs are in the budget's figure, not in the month: left to the search)
    wl = loaded.workload
    if month <= cap:  # within the budget and every other limit, which the budgeted search missed: the plan
        if wl.objective == "cost":
            return cheapest
        # review38 item 2: under gpus with a budget and max_nodes, "needs 7 nodes" where this fleet keeps both
        from generator.planner.plan import Finding, sorted_findings

        said = Finding(
            "warning",
            "objective-fallback",
            f"objective {wl.objective} fell back to cost: no fleet its search built keeps max_budget_usd_per_month "
            f"${cap:,.0f}{' and max_nodes' if wl.hardware.max_nodes is not None else ''} together, and the cheapest "
            f"fleet does (${month:,.0f}/month); a larger budget lets the {wl.objective} search choose",
            "objective",
        )
        return cheapest._replace(findings=sorted_findings([*cheapest.findings, said]))
    servers = _servers_said(cheapest)
    capped = wl.hardware.max_nodes
    within = f" within hardware.max_nodes {capped}" if capped is not None else ""
    raise FleetLimitError(
        f"the cheapest fleet planned{within} costs ${month:,.2f} in a month ({servers}, planned without the budget), "
        f"above max_budget_usd_per_month ${cap:,.2f}; to unblock: raise the budget to at least that, "
        + ("raise max_nodes (more, smaller servers may cost less), " if capped is not None else "")
        + "lower the request rates or allow cheaper hardware",
        "max_budget_usd_per_month",
        month,
        location=exc.location if exc.limit == "max_budget_usd_per_month" else None,
    )


def _servers_said(plan: Plan) -> str:
    """``2 x aws-p5-48xlarge, 3 x aws-g4dn-xlarge``: a fleet's servers by platform (review37 item 6: pools repeated one)."""
    nodes: dict[str, int] = {}
    for pool in plan.pools:
        nodes[pool.node.platform_id] = nodes.get(pool.node.platform_id, 0) + pool.nodes
    return ", ".join(f"{n} x {platform}" for platform, n in sorted(nodes.items()))


def _budget_said(loaded: LoadedWorkload, consts: Constants, plan: Plan) -> Plan:
    """``plan`` with what ``max_budget_usd_per_month`` costs it under a ``gpus`` or ``power`` objective, where it binds.

    newuser56 item 3: 24 H200s at $138,618 a month were planned under a $150,000 budget where 16 B200s at $166,342 are
    the fewest GPUs, and nothing said the budget had chosen. Under ``cost`` a budget that holds the plan never binds.
    The caller asks only where the budget turned a layout or a fleet away (review37 item 2: a $10,000,000 budget
    doubled a 14-service plan's time re-planning it without).
    """
    from generator.planner.plan import Finding, sorted_findings

    wl = loaded.workload
    if wl.hardware.max_budget_usd_per_month is None or wl.objective == "cost":
        return plan
    free = _without_limit(loaded, consts, "max_budget_usd_per_month")
    if free is None:
        return plan
    objective = _fleet_objective(wl.objective, [plan, free])
    if _fleet_rank(objective, free, wl=wl) >= _fleet_rank(objective, plan, wl=wl):
        return plan  # the best without the budget is no better
    month = free.totals["usd_per_month"]
    note = (
        f"max_budget_usd_per_month ${wl.hardware.max_budget_usd_per_month:,.0f} binds: the fleet within it takes "
        f"{_fleet_figure(plan, objective)} at ${plan.totals['usd_per_month'] or 0:,.0f}/month; the best by {wl.objective} "
        f"without it {_fleet_figure(free, objective)} ("
        + _servers_said(free)
        + (f") at ${month:,.0f}/month" if month is not None else ", unpriced)")
    )
    said = Finding("info", "budget-binds", note, "hardware.max_budget_usd_per_month")
    return plan._replace(findings=sorted_findings([*plan.findings, said]))


def _plans_within_budget(loaded: LoadedWorkload, consts: Constants) -> list[Plan]:
    """Fleets of a ``gpus`` or ``power`` objective whose best breaks ``max_budget_usd_per_month``: cheaper ones.

    The cheapest fleet (the ``cost`` objective's) holds the budget whenever any fleet does; with a few deployments
    (:data:`MAX_DEPLOYMENTS_REORDERED`) also each deployment, and each all but one, on its layouts of least capex with
    the rest by the objective (a fleet as cheap but for one deployment's GPUs). The caller ranks them by the objective
    with the others. A lab's gpus plan broke a $37,100 budget its $36,888 cost plan keeps, once its Gaudi 3 servers
    drew their summed power (power-summed), and a $37,141 fleet of one GPU fewer held $37,500.
    """
    wl = loaded.workload
    found = []
    with contextlib.suppress(InfeasibleError):  # ranked as the objective's, whose label the plan keeps
        found.append(
            _plan_fleet(loaded._replace(workload=wl._replace(objective="cost")), consts)._replace(objective=wl.objective)
        )
    count = len(wl.deployments)
    everyone = frozenset(range(count))
    subsets = {frozenset([i]) for i in range(count)} | {everyone - {i} for i in range(count)}
    for on in sorted(subsets - {frozenset(), everyone}, key=sorted) if 1 < count <= MAX_DEPLOYMENTS_REORDERED else ():
        with contextlib.suppress(InfeasibleError):
            found.append(_plan_fleet(loaded, consts, CapexPrice(0.0, on)))
    return found


#: newuser30 item 8: the fleets planned where the objective's best breaks ``hardware.max_capex_usd``: each deployment's
#: layouts ranked with their capex counted this many times more over ``amortization_months`` in their cost an hour (a
#: price on capex beside the amortisation the cost already holds), the least price that plans a fleet within the cap
#: kept; then the least capex first, then the objective (alone under ``gpus`` or ``power``: a price in dollars does not
#: add to a count of GPUs or watts).
CAPEX_PRICES = (1.0, 3.0, 10.0, 30.0)


class CapexPrice(NamedTuple):
    """A price on capex in a fleet search (:data:`CAPEX_PRICES`).

    Each layout's capex spread over ``months`` is added to its cost an hour (0: the least capex first), for the
    deployments ``on`` (by index; None: every one).
    """

    months: float
    on: frozenset[int] | None = None

    def months_for(self, index: int) -> float | None:
        """The months deployment ``index``'s layouts are ranked with (None: by the objective alone)."""
        return self.months if self.on is None or index in self.on else None


def _plans_within_capex(loaded: LoadedWorkload, consts: Constants, first: FleetLimitError | None) -> list[Plan]:
    """Fleets that keep the capex cap, their layouts ranked with a price on capex (:data:`CAPEX_PRICES`).

    At each price, the least first: every deployment priced so, and, with a few deployments
    (:data:`MAX_DEPLOYMENTS_REORDERED`), each alone priced so (one moved to a layout of less capex may be enough);
    the fleets of the least price that plans one. Where none does and ``first`` (the capex error of the objective's
    fleets) is given, :class:`FleetLimitError` with the least capex of a fleet planned (the fleet of each deployment's
    least-capex layout, as the greedy passes share servers), else none.
    """
    wl = loaded.workload
    priced = wl.objective == "cost"
    months = [*(consts.amortization_months / k for k in CAPEX_PRICES if priced), 0.0]
    count = len(wl.deployments)
    each: list[frozenset[int] | None] = [None]
    each += [frozenset([i]) for i in range(count)] if 1 < count <= MAX_DEPLOYMENTS_REORDERED else []
    nearest = first
    for weight in months:
        found = []
        for on in each:
            try:
                found.append(_plan_fleet(loaded, consts, CapexPrice(weight, on)))
            except FleetLimitError as exc:
                if exc.limit == "max_capex_usd" and (nearest is None or exc.needed < nearest.needed):
                    nearest = exc
            except InfeasibleError:
                continue
        if found:
            return found
    if first is None or nearest is None:
        return []
    # the least capex a fleet needs: each deployment's layouts of least capex first, none left out for its capex alone
    # (a layout over the cap alone may share its servers: two services on one 4-GPU server cost less than two servers)
    from generator.planner.assemble import fleet_up_front_usd

    uncapped = loaded._replace(workload=wl._replace(hardware=wl.hardware._replace(max_capex_usd=None)))
    least = nearest.needed
    with contextlib.suppress(InfeasibleError):
        cheapest = _plan_fleet(uncapped, consts, CapexPrice(0.0))
        up_front = fleet_up_front_usd(cheapest.totals)
        if up_front is not None and up_front <= (wl.hardware.max_capex_usd or 0.0):
            return [cheapest]  # within the cap, though a layout of it alone was not (reported as the capped plan is)
        least = min(least, up_front if up_front is not None else math.inf)
    if math.isinf(least):
        return []
    cap = wl.hardware.max_capex_usd or 0.0
    raise FleetLimitError(
        f"no fleet planned costs at most max_capex_usd ${cap:,.0f} up front: the least capex of one is ${least:,.0f} "
        "(with each deployment's layouts of least capex first); to unblock: raise max_capex_usd, lower the request "
        "rates, list servers you own under hardware.inventory, or allow hardware that costs less to buy",
        "max_capex_usd",
        least,
    )


#: With owned servers, fleets of at most this many deployments are planned in every order of them (4! = 24).
MAX_DEPLOYMENTS_REORDERED = 4


def _plan_fleet(
    loaded: LoadedWorkload,
    consts: Constants,
    capex: CapexPrice | None = None,
    broke: list[InfeasibleError] | None = None,
    bound: set[str] | None = None,
) -> Plan:
    """The best of the fleets the objective's options make.

    Each deployment on its own best servers; the services sharing servers as they are chosen, in the workload's
    order and largest first; and the services on each allowed GPU kind alone and on each server kind alone. With
    owned servers (taken in the order the deployments are chosen) and at most
    :data:`MAX_DEPLOYMENTS_REORDERED` deployments, the first two in every order; with more, in the workload's order,
    largest first and smallest first, and under ``gpus`` each deployment with a layout on owned servers alone first.
    A fleet that breaks a fleet limit
    (racks, budget, nodes) is dropped; if every fleet fails, :func:`_nearest` says why. ``capex``: deployments'
    layouts ranked with a price on capex (:class:`CapexPrice`); ``broke``: where the errors of the
    fleets dropped go; ``bound``: where the fleet limits that dropped a layout or a fleet go.
    """
    from generator.planner.assemble import build_plan
    from generator.planner.candidates import monthly_spend_usd
    from generator.planner.inventory import free_servers

    wl = loaded.workload
    enumerated: _Enumerated = {}
    # the ranking keys formed so far: the options of a kind bought are the same in every state of the owned servers
    # (``sizes``), and the enumerated states hold every option they key by identity
    choose = functools.partial(_choose, capex=capex, ranking_keys={})
    sizes: SizedOptions = {}  # each deployment's options on each server kind, shared by every pass
    services = sum(isinstance(d, InferenceDeployment) for d in wl.deployments)
    fleets: list[tuple[Plan, Kind | None]] = []
    errors: list[InfeasibleError] = [] if broke is None else broke
    passes: list[_Chosen] = []
    formed: list[tuple[_Pass, bool]] = []  # every pass whose fleet was tried, whole, and whether its services shared
    built: set[tuple[int, ...]] = set()  # the options each pass chose, by identity (the passes hold them)
    owned = free_servers(wl)  # the owned servers of each kind, which the floor of a fleet's GPUs bought leaves out
    made: list[tuple[_Pass, bool]] = []  # each fleet's pass, and whether its services shared servers
    same: dict[int, list[tuple[Option, ...]]] = {}  # the options of each fleet tried, by their candidates' hash
    trials = LeftFreeTrials.empty()  # what became of the fleets running each deployment on owned servers
    capped_fleets: dict[int, tuple[ServerKey, list[str]]] = {}  # fleets using an owned kind in part, and the caps why

    def add(chosen: _Pass, on: Kind | None, share: bool = False) -> None:
        choices = tuple(id(opt) for _, opt, _ in chosen[0])
        if choices in built:
            return  # a fleet already built: the very same option for every deployment
        built.add(choices)
        passes.append(chosen[0])
        formed.append((chosen, share))
        options = tuple(opt for _, opt, _ in chosen[0])
        alike = same.setdefault(hash(tuple(opt.candidate for opt in options)), [])
        if any(options == other for other in alike):
            return  # the same options formed anew by another pass: a fleet alike, which would rank after it
        alike.append(options)
        on_owned = trials.on_owned(wl, chosen[0])
        floor = _fleet_floor(wl, [opt for _, opt, _ in chosen[0]], owned) if fleets else None
        if floor is not None and floor > _ceiling(wl, fleets) + 0.005:
            trials.record(on_owned, floor=floor)
            return  # worse whatever its pools come to: not assembled
        # a service that shares its servers with none fills them, as where each has its own (newuser46 item 2)
        assembled = chosen._replace(chosen=_filled_alone(chosen.chosen)) if share else chosen
        try:
            fleets.append((build_plan(loaded, consts, *assembled, sizes=sizes), on))
        except InfeasibleError as exc:
            errors.append(exc)
            trials.record(on_owned, failed=f"over hardware.{exc.limit}" if isinstance(exc, FleetLimitError) else str(exc))
            return
        made.append((chosen, share))
        trials.record(on_owned, plan=fleets[-1][0])

    def best_at() -> int:
        objective = _fleet_objective(wl.objective, [f for f, _ in fleets])
        # a fleet that keeps every min_replicas spread before one that cannot (newuser48 item 1: a service spread over
        # two nodes was packed into one node's idle GPUs beside another's replicas, and the fleet warned of it)
        kept = [k for k, (f, _) in enumerate(fleets) if not _unspread(f)] or range(len(fleets))
        return min(kept, key=lambda k: _fleet_rank(objective, fleets[k][0], wl=wl))  # the first of equals wins

    count = len(wl.deployments)
    # owned servers go to the deployments in the order they are chosen: with a few deployments, every order is tried
    orders: list[list[int] | None] = [None]
    if wl.hardware.inventory and 1 < count <= MAX_DEPLOYMENTS_REORDERED:
        orders += [list(p) for p in itertools.permutations(range(count))][1:]
    for order in orders:
        try:
            add(choose(loaded, consts, enumerated, sizes, share=False, order=order), None)
        except InfeasibleError as exc:
            errors.append(exc)
    # largest first, by the GPUs of each deployment's first choice; and by the fewest GPUs any of its options takes
    # (a first choice may be a whole owned server it was given first)
    by_choice = sorted(range(count), key=lambda i: -passes[0][i][1].candidate.gpus) if passes else []
    fewest = [min(o.candidate.gpus for o in (best, *rest)) for _, best, rest in passes[0]] if passes else []
    by_size = sorted(range(count), key=lambda i: -fewest[i]) if passes else []
    # and by what each deployment's first choice costs a month (most first): what it saves sharing idle GPUs
    spend = [monthly_spend_usd(wl, best) or 0.0 for _, best, _ in passes[0]] if passes else []
    dearest = sorted(range(count), key=lambda i: -spend[i]) if passes else []
    if wl.hardware.inventory and count > MAX_DEPLOYMENTS_REORDERED and passes:
        # too many for every order: the owned servers also go to the largest deployments first, and to the smallest
        # and, where the objective counts the GPUs bought (an owned server's are had, whoever holds it), to each
        # deployment with a layout on owned servers alone first: each is tried on them (newuser30 item 2: the first
        # deployment a pass gives the owned server holds it)
        owners = [
            i for i in by_size if wl.objective == "gpus" and any(_buys_nothing(o) for o in (passes[0][i][1], *passes[0][i][2]))
        ]
        firsts = [[i, *(k for k in by_size if k != i)] for i in owners if i not in (by_size[0], by_size[-1])]
        for order in (by_size, by_size[::-1], *firsts):
            orders.append(order)
            try:
                add(choose(loaded, consts, enumerated, sizes, share=False, order=order), None)
            except InfeasibleError as exc:
                errors.append(exc)

    # what the passes that share servers hold services to: each GPU and each server kind, where there is a choice
    gpu_kinds = sorted({hw.gpu.id for hw in allowed_hardware(wl)})
    first = passes[0] if passes else []
    server_kinds = sorted({o.server_kind for _, best, rest in first for o in (best, *rest) if o.shares_servers})
    kinds: list[Kind] = [*(gpu_kinds if len(gpu_kinds) > 1 else []), *(server_kinds if len(server_kinds) > 1 else [])]

    def sharing(
        orders: list[list[int] | None],
        withheld: frozenset[ServerKey] = frozenset(),
        among: set[Kind] | None = None,
        capped: tuple[tuple[ServerKey, int], ...] = (),
    ) -> None:
        """The passes where services share servers: in each order, held to each kind, and the largest held alone.

        ``among``: the kinds held to, where not every kind (those of the fleets built so far).
        """
        runners_up = _RunnersUp.of([[best, *rest] for _, best, rest in passes[0]]) if passes else None
        for order in orders:
            try:
                add(
                    choose(
                        loaded,
                        consts,
                        enumerated,
                        sizes,
                        share=True,
                        order=order,
                        runners_up=runners_up,
                        withheld=withheld,
                        capped=capped,
                    ),
                    None,
                    share=True,
                )
            except InfeasibleError as exc:
                errors.append(exc)
        held_to = functools.partial(
            choose,
            loaded,
            consts,
            enumerated,
            sizes,
            share=True,
            order=by_size,
            runners_up=runners_up,
            withheld=withheld,
            capped=capped,
        )
        for kind in kinds:
            if among is not None and kind not in among:
                continue
            try:
                add(held_to(on=kind), kind, share=True)
            except InfeasibleError:
                continue
        # the largest service on each server kind, the others sharing its idle GPUs or on their own best servers: its
        # best layout alone may leave none idle, or cost a little less on a kind the others cannot share;
        # the others in size order, and dearest on their own best servers first: the idle GPUs go where they save most
        # (tests/test_fleet_anchor.py at 9 req/s: in size order embed, $5.58/h alone on 3 g6e.xlarge, took the last
        # idle H100 and summarise rented a p5.4xlarge at $6.88/h; $946 a month more than the other way round)
        anchored = [by_size] + ([[*by_size[:1], *rest]] if (rest := [i for i in dearest if i != by_size[0]]) else [])
        for kind in server_kinds if len(server_kinds) > 1 else []:
            if among is not None and kind not in among:
                continue
            for order in [o for n, o in enumerate(anchored) if o not in anchored[:n]]:
                ceiling = _ceiling(wl, fleets) if fleets else None
                try:
                    add(held_to(on=kind, anchor=True, ceiling=ceiling, order=order), None, share=True)
                except InfeasibleError:
                    continue

    shared_orders = list(orders)
    for order in (by_choice, by_size):
        if order and order not in shared_orders:  # none without a first pass: the workload's order, tried already
            shared_orders.append(order)
    # with no pass of each deployment on its own servers (owned servers too few for that, none bought), the services
    # may still share the owned servers' GPUs (fuzz34 item 1: two 1-GPU services and one owned 8-GPU DGX, buy: false)
    if services >= 2 and (passes or wl.hardware.inventory):
        sharing(shared_orders)
    if wl.hardware.inventory and wl.hardware.buy and passes:
        # owned servers used first is a preference of each pass, not of the fleet: a fleet that leaves some off and
        # buys cheaper servers is compared too (newuser27 item 5: a second owned A100 box made the plan $514 dearer)
        for share, order in ((False, None), *(((True, by_size),) if services >= 2 else ())):
            try:
                add(choose(loaded, consts, enumerated, sizes, share=share, order=order, owned_first=False), None, share)
            except InfeasibleError:
                continue
    owned_kinds = sorted(free_servers(wl))
    if owned_kinds and passes:
        # and owned kinds left off, the others used first: a greedy pass may place a service on a kind whose upkeep the
        # fleet need not pay (fuzz24 item H2: an owned R760 beside a DGX A100 cost $484 more); every set of kinds left
        # off up to MAX_OWNED_KINDS_WITHHELD kinds, else each kind alone and all but each, and where servers are bought
        # all of them (fuzz25 H2: one owned R760 took the embedder beside a bought DGX H100 that held all three alone),
        # each in the workload's order, largest first and by first choice (every order of a few deployments is the
        # passes' above: with each set of kinds off as well, 8 owned kinds took 128 s and 2.7 GB, fuzz25 H3); held to
        # the kinds of the fleets built so far only (every catalog kind in every set took 367 s)
        among: set[Kind] = {k for f, _ in fleets for p in f.pools for k in (p.node.gpu_id, _pool_kind(p))}
        firsts_three = (None, by_size, by_choice)
        withheld_orders = [o for n, o in enumerate(firsts_three) if o not in firsts_three[:n]]
        for withheld in _withheld_sets(owned_kinds, every=wl.hardware.buy):
            with contextlib.suppress(InfeasibleError):
                add(choose(loaded, consts, enumerated, sizes, share=False, withheld=withheld), None)
            if services >= 2:
                sharing(withheld_orders, withheld, among)
        # and where a fleet broke a cap on racks or nodes, each owned kind used in part, as many of its servers as
        # the caps allow first: a pass uses all of a kind's free servers or (withheld) none, and a service the owned
        # servers hold whole never buys beside them (fuzz34 item 3: 4 owned DGX H100 held a service on 2 servers, 2
        # racks of 20 kW over max_racks 1, and the fleet bought 3 XE8640 for $591,000; 1 owned DGX and 1 bought
        # XE8640 fit the rack for $197,000)
        # (the runners-up named are the first pass's, every owned server free: a layout on the owned servers the pass
        # leaves off is no purchase)
        over_cap = sorted({e.limit for e in errors if isinstance(e, FleetLimitError) and e.limit in ("max_racks", "max_nodes")})
        first_ranked = _RunnersUp.of([[best, *rest] for _, best, rest in passes[0]])

        # the most of each owned kind's servers that a fleet within the caps was planned with: from all of them but one
        # down, MAX_OWNED_SUBSETS counts one by one, then below them by bisection (review28 item 5: 20 owned DGX H100
        # under a cap holding 4 planned none), a count whose passes planned no fleet (over a cap, worse than a fleet
        # already planned, or the very fleets tried before: the cap left them as they were) taken as too many
        def snapshot() -> Callable[[], None]:
            """What undoes the passes run after it: the fleets, passes and trials they added."""
            counts = len(fleets), len(made), len(passes), len(errors)
            built_then, same_then = set(built), {k: list(v) for k, v in same.items()}
            trials_then = LeftFreeTrials(
                {k: list(v) for k, v in trials.built.items()},
                dict(trials.floored),
                {k: list(v) for k, v in trials.failed.items()},
            )

            def restore() -> None:
                for at in range(counts[0], len(fleets)):
                    capped_fleets.pop(at, None)
                del fleets[counts[0] :], made[counts[1] :], passes[counts[2] :], errors[counts[3] :]
                built.clear()
                built.update(built_then)
                same.clear()
                same.update(same_then)
                trials.built.clear()
                trials.built.update(trials_then.built)
                trials.floored.clear()
                trials.floored.update(trials_then.floored)
                trials.failed.clear()
                trials.failed.update(trials_then.failed)

            return restore

        def capped_pass(kind: ServerKey, most: int) -> bool:
            """The passes with at most ``most`` of ``kind``'s owned servers: whether they planned a fleet."""
            before = len(fleets)
            capped = ((kind, most),)
            with contextlib.suppress(InfeasibleError):
                add(choose(loaded, consts, enumerated, sizes, share=False, capped=capped, runners_up=first_ranked), None)
            if services >= 2:
                sharing(withheld_orders, frozenset(), among, capped)
            if over_cap:  # the caps are why the rest are left free (without one, the objective is: the finding says so)
                capped_fleets.update(dict.fromkeys(range(before, len(fleets)), (kind, over_cap)))
            return len(fleets) > before

        for kind in owned_kinds if over_cap else []:
            if any(capped_pass(kind, most) for most in range(owned[kind] - 1, 0, -1)[:MAX_OWNED_SUBSETS]):
                continue
            low, high, found = 1, owned[kind] - 1 - MAX_OWNED_SUBSETS, 0
            while low <= high:
                most = (low + high + 1) // 2
                restore = snapshot()
                if capped_pass(kind, most):  # its fleets undone: only the fleets of the most that plans stand
                    found, low = most, most + 1
                    restore()
                else:
                    high = most - 1
            if found:
                capped_pass(kind, found)

        # and with no cap, each owned kind with each count of its servers below the most a pass took (up to
        # MAX_OWNED_SUBSETS counts, the most first): a pass takes all of a kind's free servers the deployments need or
        # (withheld) none, and owning one more server must never make the plan dearer (m74f: with the slot wait,
        # assistant's 6 req/s took both of 2 owned A100 boxes for $3,659 a month, where one box and a bought workstation
        # beside it, the fleet of one owned box, cost $3,347; at 8 req/s none of 2 boxes, $4,909, against $4,638 so)
        def owned_taken(kind: ServerKey) -> int:
            """The most of ``kind``'s owned servers a fleet or a pass took."""
            in_fleets = [sum(p.owned_nodes for p in f.pools if _pool_kind(p) == kind) for f, _ in fleets]
            in_passes = [
                sum(
                    part.candidate.owned_nodes
                    for _, opt, _ in chosen
                    for part in opt.pieces
                    if (part.candidate.platform_id, part.candidate.gpu_id, part.candidate.gpus_per_node) == kind
                )
                for chosen in passes
            ]
            return min(owned[kind], max(in_fleets + in_passes, default=0))

        for kind in owned_kinds if not over_cap else []:
            for most in range(owned_taken(kind) - 1, 0, -1)[:MAX_OWNED_SUBSETS]:
                capped_pass(kind, most)

    # each pass with a training job on the GPUs its services leave of owned servers instead, one more fleet ranked
    # (fix182b: taken inside a pass whenever the job's best layout bought, it beat fleets where the job buys that the
    # objective ranks first, and missed the fleets where it leaves an owned server off)
    for beside_pass, share in _beside_passes(loaded, consts, formed, enumerated, sizes):
        add(beside_pass, None, share)

    # fleets within max_nodes put together from the pools of passes whose own fleets broke it (newuser48 item 2)
    # (owned servers aside: a pass's pools use those its order gave it, which another pass's may hold too)
    # under a gpus or power objective, whatever the cap: the passes choose each service's servers by its own count, and
    # the pools put together held fewer GPUs within a cap than any pass without one (review37 item 1: 17 GPUs within
    # 3-14 nodes, 24 without a cap)
    over_nodes = any(isinstance(e, FleetLimitError) and e.limit == "max_nodes" for e in errors)
    counted = wl.objective in ("gpus", "power") and fleets
    cap = wl.hardware.max_nodes if wl.hardware.max_nodes is not None else MAX_NODES_UNCAPPED
    if ((over_nodes and wl.hardware.max_nodes is not None) or counted) and services >= 2 and not wl.hardware.inventory:
        from generator.planner.node_cap import joined_fleets
        from generator.planner.tco import billed_per_run

        def floor(options: list[Option]) -> float:
            # a job billed per run costs its runs, not a month (the floor's None): the services' floor ranks the fleets
            # put together (review34 item 3: one cloud training job turned the search off)
            monthly = [o for o in options if not any(billed_per_run(wl.hardware.provider, p.candidate) for p in o.pieces)]
            value = _fleet_floor(wl, monthly if wl.objective == "cost" else options, owned)
            return 0.0 if value is None else value

        chosen_each = [[(i, opt) for i, opt, _ in p.chosen] for p, _ in formed]
        # the pools as the passes formed them, and apart (some of a pool's services): each ranked on its own, since
        # the floor ranks the many covers of the second too roughly to crowd out the first's
        for subsets in (False, True):
            # no cover whose floor is above the best fleet planned so far (it would not be assembled)
            ceiling = _ceiling(wl, fleets) + 0.005
            every_cap = wl.hardware.max_nodes is not None  # a higher cap never loses a lower one's fleet (m74f)
            for groups in joined_fleets(chosen_each, count, cap, floor, subsets, ceiling, every_cap):
                add(_joined(groups, formed), None, share=True)

    # each deployment of the best fleet moved, the others' choices kept, onto each owned kind and to its best layout
    # beside them: no pass above keeps the others as they are (newuser42 item 1: the fleet left 4 owned A100 servers
    # free and bought a $81,719 server for a job one of them ran for $979 a month less); again from a better fleet
    moved_from: list[int] = []
    chains = _chains_by_job(wl)
    runners_up = _RunnersUp.of([[best, *rest] for _, best, rest in passes[0]]) if passes else None
    # where a fleet broke max_racks, the passes again, each deployment held as it is chosen to its layouts that pack
    # into the racks beside those chosen before it: the cheapest layouts may not pack where dearer ones do (newuser80
    # item 1: 3 x 8-GPU H200 servers of 10.2 kW need 3 racks of 17 kW; 8 x 4-GPU XE8640 of 4.23 kW fit 2, at
    # $53,010/month); the fleets the other passes broke the limit with are the runners-up, over it; and where two or
    # more services may share servers, the passes again sharing them, the racks counted as the plan pools them (fix132:
    # two 1-GPU services, each on a 10.2 kW DGX H100 of its own, need 2 racks of 11 kW; sharing one DGX, 1)
    racked_from = len(fleets)  # the fleets planned so: those from here to racked_to
    over_racks = [e for e in errors if isinstance(e, FleetLimitError) and e.limit == "max_racks"]
    # newuser115: the same passes where a fleet broke hardware.site_power, each layout held within the site's power
    over_site = [e for e in errors if isinstance(e, FleetLimitError) and e.limit == "site_power"]
    if (wl.hardware.max_racks is not None and over_racks) or (wl.hardware.site_power is not None and over_site):
        tried = [*orders, by_size, by_size[::-1], dearest]
        for share in (False, True) if services >= 2 else (False,):
            for order in [o for n, o in enumerate(tried) if o not in tried[:n]]:
                racked = functools.partial(choose, share=share, order=order, runners_up=runners_up, racked=True)
                with contextlib.suppress(InfeasibleError):
                    add(racked(loaded, consts, enumerated, sizes), None, share)
    racked_to = len(fleets)
    while owned_kinds and fleets and passes and len(moved_from) < MAX_MOVE_ROUNDS and best_at() not in moved_from:
        moved_from.append(best_at())
        kept, share = made[moved_from[-1]]
        for moved, to, owned_before in _moves(kept, owned_kinds, chains):
            members = {k for i in moved for k in chains.get(i, (i,))}
            order = [*(k for k in range(count) if k not in members), *moved]
            move = functools.partial(choose, share=share, order=order, runners_up=runners_up, owned_first=owned_before)
            with contextlib.suppress(InfeasibleError):
                add(move(loaded, consts, enumerated, sizes, kept=kept, moved=moved, moved_to=to), None, share)
    if bound is not None:
        bound.update(e.limit for e in errors if isinstance(e, FleetLimitError))
        bound.update(limit for options in enumerated.values() for limit in options.limits)
    if not fleets:
        raise _nearest(errors)
    objective = _fleet_objective(wl.objective, [f for f, _ in fleets])
    at = best_at()
    best, on_kind = fleets[at]
    # owned servers it leaves free: what the fleets running each deployment there came to (newuser30 item 2)
    chosen, _ = made[at]
    ranking, floors = (Ranking(o, functools.partial(_fleet_rank, o, wl=wl)) for o in (objective, wl.objective))
    best = checked_left_free(wl, best, chosen.chosen, chosen.ruled_out, trials, ranking, floors)
    if at in capped_fleets:
        best = _capped_said(best, *capped_fleets[at])
    if racked_from <= at < racked_to and over_racks:
        best = _racks_said(wl, best, min(e.needed for e in over_racks))
    return best if on_kind is None else _on_one_kind(best, on_kind, fleets[0][0], objective)


def _racks_said(wl: Workload, plan: Plan, least: float) -> Plan:
    """``plan`` (a fleet whose deployments were held to layouts that pack into ``max_racks``) with a finding saying so.

    newuser80 item 1: the fleet of each deployment's best layout needed 3 racks of 17 kW under ``max_racks: 2``; the
    fleet held to the racks is planned, and ``max-racks-binds`` (info) says the least the others needed (``least``).
    """
    from generator.planner.plan import Finding, sorted_findings

    hw = wl.hardware
    note = (
        f"hardware.max_racks {hw.max_racks} binds: the fleets of the deployments' best layouts need {least:g} or more "
        f"racks of {hw.rack_power_kw:g} kW, so each deployment is held, as it is chosen, to its layouts whose servers pack into "
        f"{hw.max_racks} beside those chosen before it: this fleet takes {plan.totals['nodes']} node(s) in "
        f"{len(plan.racks)} rack(s); a runner-up over the limit says so (over hardware.max_racks)"
    )
    said = Finding("info", "max-racks-binds", note, "hardware.max_racks")
    return plan._replace(findings=sorted_findings([*plan.findings, said]))


def _joined(groups: tuple[PoolGroup, ...], formed: list[tuple[_Pass, bool]]) -> _Pass:
    """One pass of the groups of several passes (:func:`~generator.planner.node_cap.joined_fleets`).

    Each deployment's choice keeps the runners-up, findings, objective and reasons of the pass that made it.
    """
    chosen: _Chosen = []
    findings: list[Finding] = []
    objectives: dict[int, str] = {}
    ruled_out: dict[str, list[Blocked]] = {}
    for group in groups:
        source, _ = formed[group.source]
        rest = {i: r for i, _, r in source.chosen}
        for i, opt in group.entries:
            chosen.append((i, opt, rest[i]))
            objectives[i] = source.objectives[i]
            findings += [f for f in source.findings if f.path == f"deployments[{i}]"]
        for name, blocked in source.ruled_out.items():
            ruled_out.setdefault(name, blocked)
    return _Pass(sorted(chosen, key=lambda c: c[0]), findings, objectives, ruled_out)


def _unspread(plan: Plan) -> bool:
    """Whether a fleet holds a spread service on one host, or one short of its ``nodes_down_tolerated`` with a node down."""
    return any(f.code in ("replicas-not-spread", "node-down-not-kept") for f in plan.findings)


def _spread_kept(fleets: list[tuple[Plan, Kind | None]]) -> list[Plan]:
    """The fleets that keep every ``min_replicas`` spread (all of them where none does): what a fleet is held against."""
    plans = [f for f, _ in fleets]
    return [f for f in plans if not _unspread(f)] or plans


def _ceiling(wl: Workload, fleets: list[tuple[Plan, Kind | None]]) -> float:
    """The objective's figure a fleet must come under to rank first: the best spread-keeping fleet's (inf: none keeps it).

    A fleet that keeps every ``min_replicas`` spread ranks before one that does not, whatever each costs (``best_at``):
    while no fleet planned keeps it, a dearer fleet that does would still be chosen, so none is left out by its floor
    (merge90: ten services under a cap of 10 chose a $228,534 fleet that packed spread replicas, where cap 6's $247,468
    fleet keeping them fit too and was pruned by the cheaper one's cost; cap 14 kept them for $228,593).
    """
    kept = [f for f, _ in fleets if not _unspread(f)]
    return min((_fleet_rank(wl.objective, f, wl=wl)[0] for f in kept), default=math.inf)


def _filled_alone(chosen: _Chosen) -> _Chosen:
    """``chosen`` with each service whose server kind no other service's replicas share run as its servers hold.

    Its servers' idle GPUs are no one else's (a training job, or a replica spanning servers, takes servers of its own):
    they run more replicas of its layout (:attr:`Option.filled`).
    """
    users: dict[ServerKey, set[int]] = {}
    for _, opt, _ in chosen:
        for part in opt.pieces:
            if part.shares_servers or part.beside is not None:  # a job beside a service (fix182) takes GPUs of it
                users.setdefault(part.busy_kind, set()).add(id(opt))
    return [
        (i, opt.filled if opt.filled is not None and not users.get(opt.busy_kind, set()) - {id(opt)} else opt, rest)
        for i, opt, rest in chosen
    ]


def _capped_said(plan: Plan, kind: ServerKey, limits: list[str]) -> Plan:
    """``plan`` (a fleet using owned servers of ``kind`` in part) with its ``inventory-free`` finding of the kind saying why."""
    head = f" owned {kind[0]} server(s) ({kind[2]} x {kind[1]}) left free"
    caps = " and ".join(f"hardware.{limit}" for limit in limits)
    why = f"; the fleets that used more of them were over {caps}, so the rest of the replicas are bought"
    findings = tuple(
        f._replace(message=f.message + why) if f.code == "inventory-free" and head in f.message else f for f in plan.findings
    )
    return plan._replace(findings=findings)


#: The nodes the pools put together may take where no ``max_nodes`` caps them (a gpus or power objective's search).
MAX_NODES_UNCAPPED = 10**6

#: Under a cap on racks or nodes, this many counts of an owned kind's servers below all of them are tried one by one
#: (the most first) before the counts below them are bisected.
MAX_OWNED_SUBSETS = 8


#: The best fleet's deployments are moved (:func:`_moves`) from at most this many fleets, each better than the last.
MAX_MOVE_ROUNDS = 4


def _moves(
    chosen: _Pass, owned_kinds: list[ServerKey], chains: dict[int, tuple[int, ...]]
) -> list[tuple[tuple[int, ...], ServerKey | None, bool]]:
    """The moves tried from a fleet: (deployments re-chosen, the kind the first is held to, owned servers first).

    Each deployment (a chain's first job moves the chain), the others' choices kept: to its best layout beside them
    (by the objective alone, an owned server at its upkeep), and onto each owned kind it runs no owned server of (its
    layouts there, those that buy nothing first); where other deployments hold that kind's owned servers, also with
    those re-chosen after it, owned servers first and by the objective alone (a swap: a service on the owned H100
    server and a job on a bought one cost $3 a month more than the other way round).
    """
    heads = [(i, opt) for i, opt, _ in chosen.chosen if chains.get(i, (i,))[0] == i]
    owned_on = {i: {part.server_kind for part in opt.pieces if part.candidate.owned_nodes} for i, opt in heads}
    moves: list[tuple[tuple[int, ...], ServerKey | None, bool]] = []
    for i, _ in heads:
        moves.append(((i,), None, False))
        for kind in owned_kinds:
            if kind in owned_on[i]:
                continue
            moves.append(((i,), kind, True))
            holders = tuple(k for k, _ in heads if k != i and kind in owned_on[k])
            moves += [((i, *holders), kind, first) for first in (True, False) if holders]
    return moves


def _fleet_objective(objective: str, plans: list[Plan]) -> str:
    """What whole fleets are compared by: the objective, or cost's fallback where a deployment of one had no price.

    fuzz18 item 2: an unpriced fleet counted as infinitely dear, so a priced fleet of 3 DGX H100 (30.6 kW) beat the
    DGX B300 (14.0 kW) the 405B service was chosen on by power-bought.
    """
    fell_back = any(d.details.get("objective_used") == "power-bought" for plan in plans for d in plan.deployments)
    return "power-bought" if objective == "cost" and fell_back else objective


def _nearest(errors: list[InfeasibleError]) -> InfeasibleError:
    """The error to report when no fleet was planned.

    The first; or, of the fleets that broke the same limit as the first, the one nearest it (the fewest racks or
    nodes, the least spend); or, of deployments' refusals, the pass's that placed more deployments before refusing
    another deployment than the first pass refused.
    """
    first = errors[0]
    if isinstance(first, RefusalWithTailError):
        # newuser94: where the pass that placed the most deployments (the first of those) refused another deployment
        # than the first pass, its refusal: two services share an owned server in a pass where they share, whose
        # refusal is then the training job's that no server holds, where the first pass's said a service was kept off
        # the server the other held. The same deployment refused later, in another order, keeps the first's words.
        refusals = (e for e in errors if isinstance(e, RefusalWithTailError))
        furthest = max(refusals, key=lambda e: e.placed)  # max keeps the first of equals
        return furthest if furthest.index != first.index and furthest.placed > first.placed else first
    if not isinstance(first, FleetLimitError):
        return first
    same = [e for e in errors if isinstance(e, FleetLimitError) and e.limit == first.limit]
    return min(same, key=lambda e: e.needed)


def _kind_text(kind: Kind) -> str:
    """A GPU kind as its id; a server kind as "<n>-GPU <platform> servers with <gpu>"."""
    if isinstance(kind, str):
        return kind
    platform, gpu, per_node = kind
    return f"{per_node}-GPU {platform} servers with {gpu}"


def _on_one_kind(plan: Plan, kind: Kind, apart: Plan, objective: str) -> Plan:
    """A fleet whose services share one kind's servers: the finding that says why, and a reason on each service."""
    from generator.planner.plan import Finding, sorted_findings

    note = (
        f"the services are planned on {_kind_text(kind)}: {_fleet_figure(plan, objective)} for the fleet, against "
        f"{_fleet_figure(apart, objective)} with each deployment on its own best servers"
    )
    less = {"gpus": "use fewer GPUs", "cost": "cost less"}.get(objective, "draw less power")
    by = " (compared by power: a deployment had no price)" if objective == "power-bought" else ""
    why = f"chosen for the fleet: the services together on {_kind_text(kind)} {less}{by} (fleet-one-gpu-kind)"
    on_kind = {p.name for p in plan.pools if kind in (p.node.gpu_id, (p.node.platform_id, p.node.gpu_id, p.node.gpus))}
    # fix185 item 3: the line of a service planned on the kind alone read "chosen by cost: ..." above this reason, as if
    # its own cost had chosen the servers the fleet chose
    lead = f"chosen by {objective}: "
    alone = {d.name: r[len(lead) :] for d in apart.deployments for r in d.reasons if r.startswith(lead)}
    deployments = tuple(
        d._replace(reasons=(*(_fleet_lead(r, lead, alone.get(d.name)) for r in d.reasons), why))
        if d.kind == "inference" and set(d.pools) <= on_kind
        else d
        for d in plan.deployments
    )
    return plan._replace(
        deployments=deployments, findings=sorted_findings([*plan.findings, Finding("info", "fleet-one-gpu-kind", note)])
    )


def _fleet_lead(reason: str, lead: str, alone: str | None) -> str:
    """A choice's line (``lead`` its start, ``chosen by cost: ``) said as the fleet's where the fleet moved it.

    ``alone``: the same line's text (after ``lead``) with each deployment on its own best servers, said beside where
    its layout is not the one planned; where it is, the deployment's own choice stands and the line is kept.
    """
    from generator.planner.choice_reasons import FLEET_NOT_ALONE

    if alone is None:
        return reason
    for start, said in (
        (lead, "chosen for the fleet, on the servers the services share"),
        (f"{FLEET_NOT_ALONE}: ", FLEET_NOT_ALONE),
    ):
        if reason.startswith(start):
            ours, theirs = _choice_layout(reason[len(start) :]), _choice_layout(alone)
            if ours[0] == theirs[0]:
                return reason
            return f"{said} (on its own: {', '.join(theirs)}): {reason[len(start) :]}"
    return reason


def _choice_layout(text: str) -> tuple[str, ...]:
    """(``4 x TP1 on 1 x dell-xe7740 (4 x l40s-48gb)``, ``$2,099/month``) of a service's choice line after its lead."""
    layout, *rest = text.split(", ")
    layout = layout.replace(" (figures as a pool of its own)", "")
    return (layout, rest[0]) if rest and rest[0].startswith("$") else (layout,)


def _fleet_floor(wl: Workload, options: list[Option], owned: dict[ServerKey, int]) -> float | None:
    """A floor under the lead of :func:`_fleet_rank` for the fleet of ``options``.

    None where a training job is paid per run (its cost is not the month's): such a fleet is assembled to be compared.

    Replicas that may share servers fill as few servers of their kind as their GPUs need (at least as many as
    ``min_replicas`` spreads one of them over), each at the least any of them costs, draws or holds per server; the rest
    take their own servers. Pools only grow once assembled.
    Under ``gpus`` the lead counts the GPUs bought: an owned server's count none, and servers shared fill up to
    ``owned`` (the owned servers of each kind) before any is bought (newuser30 item 2: the owned GPUs counted here
    kept every fleet running a job on the owned A100 server from being assembled, though it bought 17 GPUs, not 18).
    """
    from generator.planner.spread import shared_nodes
    from generator.planner.tco import billed_per_run

    own = 0.0
    shared: dict[ServerKey, list[float]] = {}  # per server kind: the figure per server of each part
    # the jobs of a chain hold one option: its servers count once; a job beside a service adds no server (fix182b)
    once = [opt for opt in {id(opt): opt for opt in options}.values() if opt.beside is None]
    gpus = wl.objective == "gpus"
    for part in (part for opt in once for part in opt.pieces):
        c = part.candidate
        if gpus:
            each = float(c.gpus_per_node)
            if not part.shares_servers:  # its own servers: those owned are had
                own += each * (c.nodes - c.owned_nodes)
                continue
        elif wl.objective == "power":
            each = (c.power_compared_w or c.power_w) / c.nodes
        elif billed_per_run(wl.hardware.provider, c):
            return None
        else:  # an unpriced fleet ranks as infinitely dear
            each = math.inf if c.usd_per_month is None else c.usd_per_month / c.nodes
        if part.shares_servers:
            shared.setdefault(part.busy_kind, []).append(each)
        else:
            own += each * c.nodes
    nodes = shared_nodes(part for opt in once for part in opt.pieces)
    return own + sum(min(each) * max(0, nodes[kind] - (owned.get(kind, 0) if gpus else 0)) for kind, each in shared.items())


def _fleet_figure(plan: Plan, objective: str) -> str:
    """A fleet's figure under the objective: GPUs, kW, or its monthly cost (its kW where it is unpriced)."""
    t = plan.totals
    if objective == "gpus":
        return counted(t["gpus"], "GPU")
    if objective in ("power", "power-bought") or t["usd_per_month"] is None:
        return f"{t['power_w'] / 1000:,.1f} kW"
    return f"${t['usd_per_month']:,.0f}/month"


#: Up to this many owned kinds, every set of them is left off in a pass of its own (2^4 - 2 = 14 sets).
MAX_OWNED_KINDS_WITHHELD = 4


def _pool_kind(pool: Pool) -> ServerKey:
    """The server kind a pool's nodes are (as :attr:`Option.server_kind` names an option's)."""
    return (pool.node.platform_id, pool.node.gpu_id, pool.node.gpus)


def _withheld_sets(kinds: list[ServerKey], every: bool) -> list[frozenset[ServerKey]]:
    """The sets of owned kinds the fleet passes leave off: each proper subset of a few, else one or all but one.

    With ``every`` (servers are bought) all of them too: the fleet of a workload owning none.
    """
    whole = [frozenset(kinds)] if every else []
    if len(kinds) <= MAX_OWNED_KINDS_WITHHELD:
        sizes = range(1, len(kinds))
        return [frozenset(c) for n in sizes for c in itertools.combinations(kinds, n)] + whole
    return [frozenset([k]) for k in kinds] + [frozenset(kinds) - {k} for k in kinds] + whole


def _beside_passes(
    loaded: LoadedWorkload,
    consts: Constants,
    formed: list[tuple[_Pass, bool]],
    enumerated: _Enumerated,
    sizes: SizedOptions,
) -> list[tuple[_Pass, bool]]:
    """Each pass (and whether its services share servers) with its training jobs beside its services where they fit.

    A job on the GPUs an owned server's service leaves over (:func:`~generator.planner.beside_training.beside_choice`)
    buys nothing and pays the service's pool; whether that beats its own layout (bought servers, a free owned server's
    upkeep, or fewer GPUs under the ``gpus`` objective) is the fleet ranking's to say, so it is a fleet of its own.
    """
    wl = loaded.workload
    chains = _chains_by_job(wl)  # a chain's jobs keep their pool (beside_choice offers none of them)
    jobs = [i for i, d in enumerate(wl.deployments) if isinstance(d, TrainingDeployment) and i not in chains]
    if not jobs or not wl.hardware.inventory or not any(isinstance(d, InferenceDeployment) for d in wl.deployments):
        return []
    from generator.planner.beside_training import beside_choice, buys, free_owned_hold
    from generator.planner.inventory import free_servers

    owned = free_servers(wl)
    options_of = _options_by_deployment(enumerated)
    found: dict[tuple[object, ...], object] = {}  # each job's choice beside the same services
    out = []
    for one, share in formed:
        for i in jobs:  # one job moved a fleet: two beside one service would count its free GPUs twice
            chosen = list(one.chosen)
            at_job = next((n for n, (k, *_) in enumerate(chosen) if k == i), None)
            if at_job is None or any(o.beside is not None for _, o, _ in chosen):
                continue
            rest = [c for n, c in enumerate(chosen) if n != at_job]
            # fix187: only where the job buys in this pass and no owned server it leaves free holds a layout of it
            # (fix182b offered it in every pass: a pass withholding a free owned server put the job beside a service)
            if not buys(chosen[at_job][1]) or free_owned_hold(loaded, consts, i, rest, owned, options_of.get(i, []), sizes):
                continue
            key = (i, share, tuple((k, id(o)) for k, o, _ in rest))
            if key not in found:
                found[key] = beside_choice(loaded, consts, i, rest, options_of, sizes, share=share, owned=owned)
            beside = cast("Any", found[key])
            if beside is None:
                continue
            service_index = rest[beside.at][0]
            at_service = next(n for n, (k, *_) in enumerate(chosen) if k == service_index)
            _, own, runners = chosen[at_job]
            chosen[at_service] = (service_index, beside.service, chosen[at_service][2])
            chosen[at_job] = (i, beside.job, [own, *runners])  # its best layout on servers of its own named
            path = f"deployments[{i}]"  # the ranking's words were of the layouts it no longer has
            findings = [f for f in one.findings if f.path != path]
            out.append((one._replace(chosen=chosen, findings=findings), share))
    return out


def _options_by_deployment(enumerated: _Enumerated) -> dict[int, list[Option]]:
    """Every allowed option the search enumerated, by deployment index (what a job beside a service may take)."""
    options_of: dict[int, list[Option]] = {}
    for (k, *_), listed in enumerated.items():
        options_of.setdefault(k, []).extend(listed.allowed)
    return options_of


def _fleet_rank(objective: str, plan: Plan, *, wl: Workload) -> tuple[float, ...]:
    """Sort key of a whole plan: the objective over the fleet, then idle GPUs, servers and power.

    A missing price never reads as free: an unpriced fleet or job counts as infinitely dear, and
    unpriced fleets are compared as the objective ``cost`` falls back to (``power-bought``).
    The workload's owned servers priced under ``prices:`` and left free count their rate too
    (:func:`idle_owned_usd_per_month`).
    """
    t = plan.totals
    # the rented jobs' runs a month, where the workload says how often they run, are the month's too; a job that does not
    # say, one run (fix89: the basis its layouts are ranked by, ranking_candidate, against a job on owned servers charged
    # its one run's energy)
    usd = t["usd_per_month"] + _rented_runs_usd(t) if t["usd_per_month"] is not None else math.inf
    usd += idle_owned_usd_per_month(wl, plan)
    jobs = t["training_usd_per_job"] if t["training_usd_per_job"] is not None else math.inf
    # power on the basis deployments are ranked by: each server's components summed (its published maximum where
    # the catalog has no parts list), so that fleets of published and built servers compare alike
    power = sum(p.nodes * (p.node.power_components_w or p.node.power_w) for p in plan.pools)
    # an unpriced fleet ranks as cost's fallback does: the power of the servers bought or rented, then of all
    bought = sum((p.nodes - p.owned_nodes) * (p.node.power_components_w or p.node.power_w) for p in plan.pools)
    unpriced = (bought, power) if usd == math.inf else (0, 0)
    # gpus: those bought, as each deployment's options rank them (an owned server's GPUs are had: a fleet leaving the
    # owned kinds off must not win on a tie of all GPUs, fuzz25 H2's passes)
    gpus_bought = sum((p.nodes - p.owned_nodes) * p.node.gpus for p in plan.pools)
    leads = {"gpus": (gpus_bought, t["gpus"]), "power": (power,), "power-bought": (bought, power)}
    lead = leads.get(objective, (usd, jobs, *unpriced))
    return (*lead, t["idle_gpus"], t["nodes"], power)


def _rented_runs_usd(totals: Mapping[str, Any]) -> float:
    """The month of a fleet's jobs rented per run: their runs a month where given, one run of each job that gives none."""
    if "training_usd_per_month" in totals:
        without = totals.get("training_usd_per_job_without_runs", 0.0)
        return float(totals["training_usd_per_month"]) + (math.inf if without is None else without)
    per_job = totals.get("training_usd_per_job")
    return float(per_job or 0.0)


def idle_owned_usd_per_month(wl: Workload, plan: Plan) -> float:
    """What the owned servers a fleet leaves free cost a month whether they run or not (:func:`tco.idle_owned_usd`).

    Their ``prices:`` rate, or else their colocation where racked: a cost paid whether they run or not, so the fleets
    are compared with it counted for the owned servers they leave free as well as for those they use (fuzz34 item 4: at
    $20/h for the two owned DGX H100, $14,600 a month each where used and $0 left free, the plan bought 3 new DGX H100
    for $810,000 and left the owned two idle; fix89: an owned DGX A100's $1,196/month of colocation charged only where
    used, so a $42 rented run left it free). The plan's own totals still count the servers it uses: what the idle ones
    add is the same for every fleet that leaves them so.
    """
    from generator.planner.inventory import owned_idle_usd

    free = [e for e in plan.totals.get("inventory", ()) if e["free"]]
    if not free:
        return 0.0
    consts = functools.partial(_workload_constants, wl)
    if not _IDLE_USD or _IDLE_USD[0][0] is not wl:
        _IDLE_USD[:] = [(wl, {})]
    known = _IDLE_USD[0][1]
    costs = []
    for e in free:
        at = ((e["platform"], e.get("gpu", ""), e.get("gpus_per_server", 0)), e["free"])
        if at not in known:
            known[at] = owned_idle_usd(wl, *at, consts)
        costs.append(known[at])
    return float(sum(usd for usd in costs if usd is not None))


#: The last workload :func:`idle_owned_usd_per_month` priced, held so that its id is not reused, and what each owned
#: kind's free servers cost a month in it, by (kind, servers free): every fleet ranked asks again (perf12: 555,100
#: asks of 100 owned kinds in one plan, 7 s).
_IDLE_USD: list[tuple[Workload, dict[tuple[ServerKey, int], float | None]]] = []


def _workload_constants(wl: Workload) -> Constants:
    """The constants a workload plans with (its ``constants:`` over the defaults), formed once per set of overrides."""
    return _constants_of(tuple(sorted(dict(wl.constants).items())))


@functools.lru_cache(maxsize=64)
def _constants_of(overrides: tuple[tuple[str, Any], ...]) -> Constants:
    return with_overrides(dict(overrides))


#: Each deployment's index, chosen option and runners-up, in the workload's order.
_Chosen = list[tuple[int, "Option", list["Option"]]]


class _Pass(NamedTuple):
    """What one pass of :func:`_choose` chose, and what a fleet is assembled from."""

    chosen: _Chosen
    #: The findings of ranking each deployment's options (each on its ``deployments[i]`` path).
    findings: list[Finding]
    #: The objective each deployment's options were ranked by, by index.
    objectives: dict[int, str]
    #: The layouts ruled out and why, by deployment name.
    ruled_out: dict[str, list[Blocked]]


#: What a fleet's services may be restricted to: a GPU id, or a server kind.
Kind = str | tuple[str, str, int]


class _RunnersUp(NamedTuple):
    """Each deployment's ranked options as the first pass ranks them, named as runners-up by the passes after it."""

    options: list[list[Option]]
    #: Where each option stands in its deployment's list, by its identity (None: a list holds an option twice).
    at: list[dict[int, int] | None]

    @classmethod
    def of(cls, options: list[list[Option]]) -> _RunnersUp:
        """The runners-up ``options`` (each deployment's, in the workload's order) and where each stands."""
        at: list[dict[int, int] | None] = []
        for ranked in options:
            where = {id(o): k for k, o in enumerate(ranked)}
            at.append(where if len(where) == len(ranked) else None)
        return cls(options, at)

    def without(self, index: int, chosen: Option) -> list[Option]:
        """Deployment ``index``'s list less ``chosen``: ``[o for o in options[index] if o is not chosen]``."""
        ranked, where = self.options[index], self.at[index]
        if where is None:
            return [o for o in ranked if o is not chosen and o is not chosen.filled]
        k = where.get(id(chosen), where.get(id(chosen.filled)))
        return list(ranked) if k is None else ranked[:k] + ranked[k + 1 :]


class _Options(NamedTuple):
    """A deployment's options for the owned servers left free, enumerated once for every pass over them."""

    options: list[Option]
    #: Layouts ruled out and why.
    blocked: list[Blocked]
    #: Options within the pins and the fleet limits.
    allowed: list[Option]
    #: Why the pins dropped options (None: no pin, or none dropped).
    pinned: str | None
    #: The objective they are ranked by, and the findings that say why (a fallback from cost).
    objective: str
    findings: list[Finding]
    #: ``allowed`` by the GPU kind and by the server kind every part of an option runs on.
    by_kind: dict[Kind, list[Option]]
    #: The kinds with an option of ``allowed`` that buys nothing, and None where ``allowed`` has one.
    owned_only: frozenset[Kind | None]
    #: Layouts the pins or the fleet limits dropped (:data:`~generator.planner.blocked.PINNED_OUT`,
    #: :data:`~generator.planner.blocked.OVER_LIMIT`), one record of each reason on each (GPU, platform).
    dropped: list[Blocked]
    #: The fleet limits (:func:`broken_limits`) that dropped a layout of ``options``, split layouts' included.
    limits: frozenset[str]
    #: ``allowed`` sorted by :func:`ranking_key` for each pass that ranks them alike: by the kind a pass keeps the
    #: services on, the GPUs the services chosen before hold, and the owned servers free. A pass sharing servers, which
    #: reads only its first choice, keeps that alone, and the order its options take before any servers are shared
    #: (:class:`_BaseOrder`, by the kind, the owned servers free and the objective). The last field
    #: (tests/test_order_search_cache.py replaces it).
    ranked: dict[tuple[object, ...], list[Option] | _BaseOrder | frozenset[ServerKey] | None]


#: Options per deployment index and owned servers still free (with and without those whose idle GPUs a service may take).
_Enumerated = dict[tuple[int, tuple[tuple["ServerKey", int], ...], tuple[tuple["ServerKey", int], ...]], _Options]


def _priced_hint(wl: Workload, unpriced: list[str], *, priced: bool) -> str:
    """How to unblock a deployment whose layouts all exceed the limits: raise them, or price the unpriced platforms.

    On bare metal a price per hour under ``prices:`` rents a platform, which the capex cap does not take (fuzz35 item
    2, newuser61 item 2): a purchase price under ``purchase_prices:`` is offered, and raising the cap only where a
    layout has a purchase price. On a cloud under ``objective: capacity`` the platform is said to lack a catalog
    purchase price, and where no layout has one, raising the cap is not offered.
    """
    from generator.planner.candidates import limits_text
    from generator.planner.capacity import searching

    if not unpriced:
        return f"to unblock: raise {limits_text(wl)}"
    named = ", ".join(unpriced)
    if wl.hardware.provider == "baremetal":  # newuser61 item 2: a rate under prices: rents it, past the capex cap
        quote = f"give {named} the price you were quoted under purchase_prices: (USD a server bought)"
        if not priced:  # no layout has a purchase price: a higher cap buys nothing more (review39 item 14)
            return f"to unblock: {quote}, or allow a server with a catalog purchase price (hardware.gpus / hardware.platforms)"
        return f"to unblock: raise {limits_text(wl)}, or {quote} so the budget can hold it"
    if not searching():
        return f"to unblock: raise {limits_text(wl)}, or price {named} under prices: (USD per node-hour) so the budget holds it"
    why = (
        f"{named} {'has' if len(unpriced) == 1 else 'have'} no purchase price in the catalog (specgen catalog "
        "purchases lists it unpriced), so max_capex_usd cannot hold it, and a rate under prices: rents it, which "
        "objective capacity does not take"
    )
    if priced:
        return f"to unblock: raise {limits_text(wl)} ({why})"
    return f"to unblock: allow a server with a catalog purchase price (hardware.gpus / hardware.platforms): {why}"


def _choose(
    loaded: LoadedWorkload,
    consts: Constants,
    enumerated: _Enumerated,
    sizes: SizedOptions,
    *,
    share: bool,
    on: Kind | None = None,
    order: list[int] | None = None,
    runners_up: _RunnersUp | None = None,
    anchor: bool = False,
    ceiling: float | None = None,
    owned_first: bool = True,
    withheld: frozenset[ServerKey] = frozenset(),
    capped: tuple[tuple[ServerKey, int], ...] = (),
    capex: CapexPrice | None = None,
    ranking_keys: RankingMemo | None = None,
    kept: _Pass | None = None,
    moved: tuple[int, ...] = (),
    moved_to: ServerKey | None = None,
    racked: bool = False,
) -> _Pass:
    """The best option of each deployment in order (owned servers taken as they are chosen), with findings.

    ``on``: each service's best option on that GPU or server kind only (a training job keeps its own, and so does a
    service with no layout there or one that owned servers still free hold; a pass that holds none stops with
    :class:`InfeasibleError`); ``order``: the deployments' indices in the order they are chosen (the workload's by
    default); ``runners_up``: each deployment's ranked options to name as runners-up instead of those the pass
    ranks; ``anchor``: ``on`` holds the first service held only, the others ranked on every kind by what they add to
    its servers; the pass stops (:class:`InfeasibleError`) where that service leaves none of its servers' GPUs idle
    (nothing can share them, and the other passes place the others beside its best layout) or its servers alone
    exceed ``ceiling`` (the lead of :func:`_fleet_rank` of the best fleet so far); ``owned_first``: layouts that buy
    nothing rank first (else by the objective alone, an owned server at its upkeep, so that a fleet leaving some owned
    servers off is planned too); ``withheld``: owned kinds none of whose servers the pass uses; ``capped``: owned
    kinds of which the pass uses at most so many servers (the rest bought where more are needed); ``capex``: the
    layouts ranked with a price on capex (:class:`CapexPrice`); ``ranking_keys``: the ranking keys formed in the
    passes so far (:data:`~generator.planner.candidates.RankingMemo`), for the passes that rank an option alike;
    ``kept``: a pass whose choices every deployment but those ``moved`` (by index; a chain's first job moves the chain)
    keeps, with their findings and reasons, those moved chosen last (in ``order``) among the owned servers they leave
    free, the first of them on ``moved_to`` (a server kind) where given (:func:`_moves`); ``racked``: each deployment
    held to its layouts whose servers pack into ``hardware.max_racks`` racks beside those chosen before it, pooled as
    the plan pools them (:func:`~generator.planner.pool_groups.racks_needed`; :class:`InfeasibleError` where none does).
    Also returns, by deployment name, the layouts ruled out and why (:class:`Blocked` records).

    ``enumerated`` keeps each deployment's options for the owned servers left free, so a second pass
    over the same choices does not size them again; ``sizes`` keeps each deployment's options on a server kind, which the
    owned servers left free do not change, for every state of them.
    """
    from generator.planner.candidates import (
        broken_limits,
        capex_cap_usd,
        inference_options,
        limits_text,
        monthly_spend_usd,
        over_limit,
        ranking_key,
        up_front_usd,
    )
    from generator.planner.inventory import free_servers, take_owned
    from generator.planner.split import split_options
    from generator.planner.spread import spread_floor

    wl = loaded.workload
    findings: list[Finding] = []
    chosen: list[tuple[int, Option, list[Option]]] = []
    objectives: dict[int, str] = {}
    ruled_out: dict[str, list[Blocked]] = {}
    free = free_servers(wl)  # owned servers no deployment holds whole (in a shared pass, services' replicas aside)
    every_owned = dict(free)  # all of them, for the floor under the fleet an anchor starts
    for key in withheld:  # owned kinds left off: the fleet without them
        free[key] = 0
    for key, most in capped:  # owned kinds used in part: a fleet limit may hold fewer of them (fuzz34 item 3)
        free[key] = min(free.get(key, 0), most)
    busy: dict[ServerKey, Fraction] = {}  # GPUs in use by the inference deployments chosen so far, by server kind
    not_bought = {(h.platform.id, h.gpu.id) for h in allowed_hardware(wl) if h.not_bought} if share and free else set()
    chains = _chains_by_job(wl)  # training jobs run one after another on one pool: chosen together, at the first
    held = on  # the kind the services are held to (with ``anchor``, until the first is chosen)
    held_any = on is None  # whether a service was held to it (else the pass plans no fleet of its own)
    keeps = {k: (opt, rest) for k, opt, rest in kept.chosen} if kept is not None else {}
    capped_nodes = wl.hardware.max_nodes is not None

    def hold(best: Option) -> None:
        """Mark the servers ``best`` runs on as held: sharing, a service's replicas fill them GPU by GPU (as pools do).

        Under ``max_nodes``, replicas ``min_replicas`` spreads over more servers than their GPUs fill hold those servers
        too: the GPUs in use reach into the last of them, so the services after it count the servers the cap counts
        (review35 item 1: eight services under caps of 10-14 cost up to 31% more without it). Without a cap that
        over-counts the GPUs in use and makes fleets dearer (review34 item 1), so it is not done.
        """
        for part in best.pieces:
            if share and part.shares_servers:
                kind = part.busy_kind
                in_use = busy.get(kind, Fraction(0)) + part.gpus_used
                spread = spread_floor(part) if capped_nodes else 1
                busy[kind] = max(in_use, Fraction((spread - 1) * kind[2] + 1)) if spread > 1 else in_use
            else:
                take_owned(free, (part.candidate,))

    for step in order or range(len(wl.deployments)):
        chain = chains.get(step)
        if chain is not None and any(k == chain[0] for k, _, _ in chosen):
            continue  # chosen with an earlier job of its chain
        i = step if chain is None else chain[0]  # a chain is planned as its first job
        if kept is not None and i not in moved:  # its choice kept, as the pass ``kept`` made it
            best, rest = keeps[i]
            for k in chain or (i,):
                ruled_out[wl.deployments[k].name] = kept.ruled_out[wl.deployments[k].name]
                objectives[k] = kept.objectives[k]
            findings += [f for f in kept.findings if f.path == f"deployments[{i}]"]
            hold(best)
            chosen += [(k, best, rest) for k in chain or (i,)]
            continue
        dep = wl.deployments[i]
        model = loaded.models[dep.name]
        service = isinstance(dep, InferenceDeployment)
        whole = _left_free(not_bought, free, busy, idle_too=False) if share else free
        seen = _left_free(not_bought, free, busy, idle_too=True) if share and service else whole
        state = (i, tuple(sorted(seen.items())), tuple(sorted(whole.items())))
        if state not in enumerated:
            found: list[Blocked] = []
            if isinstance(dep, InferenceDeployment):
                every = inference_options(wl, dep, model, consts, found, seen, sizes=sizes)
                every += split_options(wl, dep, model, consts, whole, sizes)
            elif chain is not None:
                from generator.planner.training_chain import chain_jobs, chain_options

                every = chain_options(wl, chain_jobs(loaded, chain), consts, found, whole, sizes)  # each within its pins
            else:
                from generator.planner.training_candidates import training_options

                every = training_options(wl, dep, model, consts, found, whole, sizes)
            pinned_options, why_pinned = (every, None) if chain is not None else honour_pins(dep, every)
            # what the pins and the fleet limits drop, as reasons the plan gives (not the infeasible error's)
            dropped = _dropped(i, dep, every, pinned_options) if chain is None else []
            within = []
            limits: set[str] = set()
            for o in pinned_options:
                broken = broken_limits(wl, o, _runs_a_month(dep))
                limits.update(broken)
                if not broken:
                    within.append(o)
                elif not o.parts:
                    dropped.append(over_limit(wl, o, broken, _runs_a_month(dep)))
            dropped = _cheapest_over_budget(dropped)
            said: list[Finding] = []
            spot_rated = frozenset(k.removesuffix(SPOT_SUFFIX) for k in wl.prices if k.endswith(SPOT_SUFFIX))
            spot_rated |= catalog_spot_rated(pricing_region(wl))  # review80 item 14: the catalog's spot rates too
            ranked_by = objective_for(
                wl.objective, within, i, said, pricing_region(wl), spot_rated, wl.hardware.provider == "baremetal"
            )
            by_kind: dict[Kind, list[Option]] = {}
            for o in within:  # a split option is on a kind only where both of its parts are
                kinds: list[set[Kind]] = [{p.gpu_id, p.server_kind} for p in o.pieces]
                for kind in set.intersection(*kinds):
                    by_kind.setdefault(kind, []).append(o)
            owned_only: set[Kind | None] = {kind for kind, on in by_kind.items() if any(_buys_nothing(o) for o in on)}
            if any(_buys_nothing(o) for o in within):
                owned_only.add(None)
            enumerated[state] = _Options(
                pinned_options,
                found,
                within,
                why_pinned,
                ranked_by,
                said,
                by_kind,
                frozenset(owned_only),
                list(dict.fromkeys(dropped)),
                frozenset(limits),
                {},
            )
        options, blocked, allowed, pinned, objective, said, by_kind, kinds_owned, dropped, _, ranked = enumerated[state]
        for k in chain or (i,):
            ruled_out[wl.deployments[k].name] = [*blocked, *dropped]
            objectives[k] = objective
        findings += said
        # owned servers first: layouts that buy nothing new, then the objective (owned servers cost only their upkeep);
        # sharing servers, an inference layout is ranked by what it adds to the servers chosen before it
        shared = busy if share and service else None
        # a training job keeps its own best servers, and so does a service with no layout on the kind held or one that
        # owned servers of another kind still free hold, where the kind held buys (bought servers cost more than upkeep)
        held_here = held if service and held is not None and by_kind.get(held) else None
        if held_here is not None and free and None in kinds_owned:
            held_here = held_here if held_here in kinds_owned else None
        if held_here is not None:
            allowed, held_any = by_kind[held_here], True
        # a deployment moved to a server kind: its options with a part there
        to = moved_to if moved and i == moved[0] else None
        if to is not None:
            allowed = [o for o in allowed if any(part.server_kind == to for part in o.pieces)]
            if not allowed:
                raise InfeasibleError(f"deployment '{dep.name}' has no layout on {_kind_text(to)}")
        # the ranking reads the kind, the servers the services chosen before use and the owned ones free, nothing else;
        # of the servers in use, only the GPUs in use on the kinds the options run on (:func:`_in_use_on`)
        owned_free = bool(free) and owned_first
        in_use = None if shared is None else _in_use_on(ranked, (held_here, to), allowed, shared)
        # the pass reads its first choice alone (held to the racks, it reads the first of those that pack: the ranking
        # kept apart from the first choices of the passes that are not)
        first_only = shared is not None and runners_up is not None and not racked
        if first_only and objective == "cost" and (_near_tie_settled(dep) or _span_tie(dep, allowed)):
            first_only = False  # a batch job's near tie on cost is settled over its ranked options (fix137), a service's (fix141)
        ranking = (
            held_here,
            in_use,
            tuple(sorted(free.items())) if in_use else bool(free),
            owned_first,
            to,
            *(("racked",) if shared is not None and racked else ()),
        )
        if ranking not in ranked:
            one_gpu_pods = service and planned_sharing(wl, dep) is not None
            months = capex.months_for(i) if capex is not None else None
            # the very options ranked alike by another plan (another file of one render, another fleet search)
            owned_at = (frozenset(not_bought), tuple(sorted(free.items())), tuple(sorted(whole.items())))
            alike = _Alike(
                tuple(map(id, allowed)), objective, in_use, owned_free, one_gpu_pods, months, first_only,
                owned_at if in_use and not_bought else None,
            )  # fmt: skip
            known = _RANKED.get(alike)
            if known is not None:
                ranked[ranking] = known[1]
            else:
                held_options = tuple(allowed)
                by = functools.partial(
                    ranking_key,
                    objective=objective,
                    busy=shared,
                    owned_free=owned_free,
                    one_gpu_pods=one_gpu_pods,
                    memo=ranking_keys,
                    capex_months=months,
                )
                if first_only and shared is not None:
                    base_at = ("shared-base", held_here, owned_free, objective, to)
                    fits = functools.partial(_fits_owned, not_bought, free=free, busy=shared, whole=whole)
                    if base_at not in ranked:  # most bases serve one pass (a kind held once): formed on the second
                        ranked[ranking], ranked[base_at] = _first_ranked(allowed, None, shared, by, fits, form=False)
                    else:
                        base = cast("_BaseOrder | None", ranked[base_at])
                        ranked[ranking], ranked[base_at] = _first_ranked(allowed, base, shared, by, fits)
                else:
                    if shared:  # the idle GPUs of an owned server no more of are bought hold only so many replicas
                        allowed = [o for o in allowed if _fits_owned(not_bought, o, free, shared, whole)]
                    elif shared is None and service:  # its servers its own: as many replicas as they hold (newuser46 item 2)
                        allowed = [o.filled or o for o in allowed]
                    by_key = sorted(allowed, key=by)
                    # a training job's (or chain's) near tie on cost (acc104), and a batch job's (fix137)
                    if objective == "cost" and _near_tie_settled(dep):
                        from generator.planner.training_candidates import cost_near_ties_settled, near_tie_rule

                        tie_rule = near_tie_rule(dep)
                        assert tie_rule is not None
                        by_key = cost_near_ties_settled(by_key, by, *tie_rule)
                    elif objective == "cost" and _span_tie(dep, by_key):  # a service's, by the nodes a replica spans
                        from generator.planner.span_tie import span_near_ties_settled

                        by_key = span_near_ties_settled(by_key, by)
                    ranked[ranking] = by_key
                if len(_RANKED) >= MAX_RANKED:
                    _RANKED.clear()
                _RANKED[alike] = (held_options, cast("list[Option]", ranked[ranking]))
        feasible = cast("list[Option]", ranked[ranking])
        if racked and feasible:
            from generator.planner.assembly_cache import racks_needed

            before = [(k, opt) for k, opt, _ in chosen]  # sharing servers where the plan's pools would
            if wl.hardware.max_racks is not None:
                most = wl.hardware.max_racks
                feasible = [o for o in feasible if racks_needed(wl, [*before, (i, o)]) <= most]
            if (site := wl.hardware.site_power) is not None:  # newuser115
                from generator.planner.pool_groups import power_needed_w

                feasible = [o for o in feasible if power_needed_w(wl, [*before, (i, o)]) <= site.usable_w]
            if not feasible:
                raise InfeasibleError(
                    f"deployment '{dep.name}' has no layout within hardware.max_racks / site_power beside those before it"
                )
        if chain is None and isinstance(dep, TrainingDeployment) and not feasible:
            # fix182: a job that would be refused runs on the GPUs an owned server's service leaves (one that has a
            # layout is offered there as one more fleet the search ranks: :func:`_beside_passes`, fix182b)
            from generator.planner.beside_training import beside_choice, free_owned_hold

            options_of = _options_by_deployment(enumerated)
            # fix187: not where an owned server the pass withholds (a kind left off) holds the job
            held_free = free_owned_hold(loaded, consts, i, chosen, free_servers(wl), options_of.get(i, []), sizes)
            beside = None if held_free else beside_choice(loaded, consts, i, chosen, options_of, sizes, share=share, owned=free)
            if beside is not None:
                k, _, rest = chosen[beside.at]
                chosen[beside.at] = (k, beside.service, rest)
                if share:  # the job's GPUs are in use on the service's servers
                    kind = beside.service.busy_kind
                    busy[kind] = busy.get(kind, Fraction(0)) + beside.job.gpus_used
                chosen.append((i, beside.job, feasible))
                continue
        if not feasible and chain is not None:
            from generator.planner.training_chain import chain_failure

            # a chain's deadlines missed are said as the chain's; a job of it with no layout at all, as that job's
            i, blocked = chain_failure(loaded, chain, blocked, options)
            dep, model = wl.deployments[i], loaded.models[wl.deployments[i].name]
        if not feasible:
            # a server over the rack's power takes no layout of its kind: those too wide for it are no reason (newuser34
            # item 9: a 70B model on GB200 NVL72 was told of five TP64 layouts before the 120 kW rack it needs)
            # nor are more owned servers of a kind over the rack (fuzz29 item 8)
            over_rack = {(b.gpu_id, b.platform_id) for b in blocked if b.code == RACK_POWER}
            blocked = [
                b for b in blocked if b.code not in (NO_PACKING, OWNED_SHORT) or (b.gpu_id, b.platform_id) not in over_rack
            ]
            runs = _runs_a_month(dep)
            every_breaks = (
                frozenset.intersection(*(frozenset(broken_limits(wl, o, runs)) for o in options)) if options else frozenset()
            )
            where = loaded.document.locate(_binding_field(wl, dep, i, bool(options), blocked, every_breaks))
            # owned servers alone could hold it, but too few are free and no more are bought (on kinds that are not
            # bought, every other reason is of a layout those servers cannot hold anyway: review 20 item 1)
            unbought = {(h.platform.id, h.gpu.id) for h in allowed_hardware(wl) if h.not_bought}
            blocked_kinds = {(b.platform_id, b.gpu_id) for b in blocked}
            owned_short = (
                not options
                and any(b.code == OWNED_SHORT for b in blocked)
                and all((b.platform_id, b.gpu_id) in unbought for b in blocked)
            )
            # one reason of each GPU first, then the rest: six lines say why every GPU allowed fell (newuser14 item 7)
            # (a GPU's layout nearest the latency targets where they are why, review 10 item 3)
            # (a field's value that rules a kind out, the RAM an owned group states, first: the error stands there)
            # then one of each platform (newuser47 item 2: a job's wider layouts, tried for the time between nodes,
            # crowded a platform's reason out)
            by_gpu = sorted({(b.gpu_id, not b.field, b.excess is None, b.excess or 0.0, b.text, b.platform_id) for b in blocked})
            firsts: dict[str, str] = {}
            for gpu_id, _, _, _, text, _ in by_gpu:
                firsts.setdefault(gpu_id, text)
            each_platform: dict[tuple[str, str], str] = {}
            for gpu_id, _, _, _, text, platform_id in by_gpu:
                each_platform.setdefault((gpu_id, platform_id), text)
            seconds = [t for t in dict.fromkeys(each_platform.values()) if t not in firsts.values()]
            said_first = {*firsts.values(), *seconds}
            texts = [*firsts.values(), *seconds, *sorted({t for *_, t, _ in by_gpu} - said_first)]
            on_pin = sorted({b.text for b in blocked if dep.platform and b.platform_id == dep.platform})[:2]
            detail = "; ".join([pinned, *on_pin]) if pinned else ""
            detail = detail or "; ".join(texts[:6]) or "no platform of this provider offers an allowed GPU"
            if options:
                smallest = min(o.candidate.nodes for o in options)
                from generator.planner.tco import billed_per_run

                priced = [usd for o in options if (usd := monthly_spend_usd(wl, o, runs)) is not None]
                per_run = runs and any(billed_per_run(wl.hardware.provider, o.candidate) for o in options)
                with_runs = f" ({runs:g} runs)" if per_run else ""
                cheapest = (
                    f"; the cheapest priced layout costs ${min(priced):,.0f} a month{with_runs}{budget_basis(wl)}"
                    if priced
                    else ""
                )
                if priced and isinstance(dep, InferenceDeployment) and dep.inference.allowed_precisions:
                    from generator.planner.precision_choices import cheaper_allowed_text

                    spend = functools.partial(monthly_spend_usd, wl, runs=runs)
                    cheapest += cheaper_allowed_text(loaded, dep, consts, min(priced), spend)
                # the least a layout pays up front for the servers it buys, where a capex cap holds (newuser30 item 8)
                up_fronts = [usd for o in options if (usd := up_front_usd(o)) is not None]
                capex_capped = capex_cap_usd(wl) is not None and up_fronts
                cheapest += f"; the least capex of a layout is ${min(up_fronts):,.0f}" if capex_capped else ""
                budget = wl.hardware.max_budget_usd_per_month is not None or capex_cap_usd(wl) is not None
                detail = (
                    f"every layout exceeds {limits_text(wl)}"
                    + (", or has no price to hold against the budget" if budget else "")
                    + f" (the smallest needs {smallest} node{'' if smallest == 1 else 's'}{cheapest})"
                )
                unpriced = sorted({o.candidate.platform_id for o in options if monthly_spend_usd(wl, o) is None})
                # the layouts exist: memory, precision and SLOs are not what blocks them
                hint = _priced_hint(wl, unpriced if budget else [], priced=any(o.candidate.capex_usd for o in options))
                hint += "".join(f", or {way}" for way in count_fields(dep))  # they set the replicas (fuzz21 item 6)
            elif owned_short:  # the fewest servers each kind needs, and who holds the owned ones
                fewest: dict[str, Blocked] = {}
                # a kind's fewest servers short, whole replicas before a pipeline; else why its layouts do not fit
                # owned servers short of the RAM the inventory states say so first (newuser43 item 2); a layout of
                # the owned servers' GPU count before one of a count none has (newuser47 item 1: a 2-GPU workstation
                # was told of a layout of 4-GPU ones)
                owned_counts = set(every_owned)
                for b in sorted(
                    blocked,
                    key=lambda b: (
                        not b.field,
                        b.code != OWNED_SHORT,
                        (b.platform_id, b.gpu_id, b.gpus_per_node) not in owned_counts,
                        b.nodes,
                        b.pp,
                        b.text,
                    ),
                ):
                    fewest.setdefault(b.platform_id, b)
                fewest = _shared_said(wl, fewest, chosen, seen, whole)  # fix171: a shared server's GPUs, not "free"
                detail = "; ".join([*([pinned] if pinned else []), *(b.text for _, b in sorted(fewest.items()))])
                ram_at = next((format_path(b.field) for _, b in sorted(fewest.items()) if b.field), "")
                replicas_fit = any(b.pp == 1 and b.owned for b in fewest.values())
                # hostile79 item 4: a whole replica fits an owned server, all of them taken by the deployments before
                in_server = any(b.code == OWNED_SHORT and b.pp == 1 for b in fewest.values())
                held_servers = {k: n - whole.get(k, 0) for k, n in every_owned.items()}  # what the pass holds of each
                hint = _owned_short_hint(
                    wl, dep, chosen, replicas_fit=replicas_fit, ram_at=ram_at, in_server=in_server, held_servers=held_servers
                )
                # more owned servers do not help where the link between them rules out the layouts across them
                # (review33 item 2: "DP9 needs 9 servers; 6 owned", where a fabric NIC fits it on 4)
                # (the owned servers' own layouts: a wider one more servers would hold is no reason to list them, and
                # no reason to fit a fabric where whole replicas on more servers need none)
                if network := next((b.text for b in blocked if b.code == NO_GPU_FABRIC and not b.wider_than_owned), None):
                    detail += f"; {network}"
                    hint += f"; {network_hint(dep, blocked)}"
            else:
                # racks of the workload's own where it buys servers (newuser54 item 3: "more rack power / max_nodes" was
                # offered to an owned workstation with buy: false)
                racked = wl.hardware.provider == "baremetal" and wl.hardware.buy
                hint = unblock_hint(
                    dep,
                    model,
                    blocked,
                    wl.hardware.rack_power_field,
                    racks=racked,
                    ttft_p95_factor=consts.ttft_p95_factor,
                    bought=len(unbought) < len(allowed_hardware(wl)),
                )
                # owned servers alone, whose replica across more of them their link rules out (fix113: it was "needs 3
                # servers ... list more owned servers"): the one machine with its RAM and NVMe (newuser49 item 2)
                wider = any(b.wider_than_owned for b in blocked)
                if isinstance(dep, InferenceDeployment) and wider and all(k in unbought for k in blocked_kinds):
                    hint += f"; or {ON_FIXED}"
            if not options and any(b.code == RAM_SHORT for b in blocked):
                # a node's RAM short of the job's load: the frameworks whose own load fits it (newuser96, left item 2)
                from generator.planner.framework_ram import frameworks_fitting_ram

                hint += frameworks_fitting_ram(wl, dep, model, consts, blocked)
            # and what kept this deployment off each owned kind, as the inventory-free finding says it (newuser22 item 2),
            # unless too few of them is all that did (the detail says how many each needs)
            # (the reasons the detail said already, once: fix107's report, "not usable by" repeated them)
            stated = frozenset(texts[:6]) if detail == "; ".join(texts[:6]) else frozenset()
            owned = (
                ""
                if owned_short
                else "; ".join(
                    f"{n} x {k[0]} ({k[2]} x {k[1]}) owned and free"
                    + (f" ({'; '.join(why)})" if (why := _owned_unused(wl, k, dep.name, blocked, stated)) else "")
                    for k, n in sorted(seen.items())
                    if n
                )
            )
            # the GPUs its sharing rules out (newuser69 item 8: with the workload's MIG profile on only some GPUs,
            # a budget refusal said nothing of the GPUs the profile kept the service off)
            if unshared := sorted({b.gpu_id for b in blocked if b.code == NOT_SHARED_HERE}):
                field = sharing_field(wl, i)
                hint += (
                    f"; {field} rules out {', '.join(unshared)} for it (gpu-sharing-excluded-gpus): a sharing they take, "
                    "or its own gpu_sharing: {strategy: none} for whole GPUs of every GPU allowed"
                )
            raise RefusalWithTailError(
                f"deployment '{dep.name}' ({model.id}) has no feasible plan: {detail}; {hint}" + (f"; {owned}" if owned else ""),
                where,
                tail=f"; {owned}" if owned else "",
                network=any(b.code in (COMMUNICATION_DOMINATES, NO_GPU_FABRIC) for b in blocked),
                lead=f"to unblock: {lead}" if (lead := network_lead(dep, blocked)) and f"to unblock: {lead}" in hint else "",
                placed=len(chosen),
                index=i,
            )
        best = feasible[0]
        if anchor and held_here is not None:
            held = None  # the services after it are ranked on every kind
            if not any(part.shares_servers and part.candidate.idle_gpus for part in best.pieces):
                raise InfeasibleError(f"deployment '{dep.name}' leaves no GPU idle on {_kind_text(on or '')}")
            floor = _fleet_floor(wl, [best], every_owned)
            if ceiling is not None and floor is not None and floor > ceiling + 0.005:
                raise InfeasibleError(f"deployment '{dep.name}' alone on {_kind_text(on or '')} exceeds the best fleet")
        hold(best)
        chosen.append((i, best, runners_up.without(i, best) if runners_up else feasible[1:]))
        # every job of a chain holds the chain's option (its own layout is in ``sequence``)
        chosen += [(k, best, chosen[-1][2]) for k in chain or () if k != i]
    if not held_any:
        raise InfeasibleError(f"no service has a feasible layout on {_kind_text(on or '')}")
    return _Pass(sorted(chosen, key=lambda c: c[0]), findings, objectives, ruled_out)  # in the workload's order


class _Alike(NamedTuple):
    """What a deployment's options are ranked by in a pass (:func:`_choose`): passes alike in it rank them alike.

    Every input of the ranking key (:func:`~generator.planner.candidates.ranking_key`), of :func:`_fits_owned` and of
    :func:`_first_ranked` but the options themselves, which it names by identity (:data:`_RANKED` holds them).
    """

    #: The ids of the options ranked, in their order (a tie keeps it).
    options: tuple[int, ...]
    objective: str
    #: The GPUs in use on the options' kinds (:func:`_in_use_on`); None: each deployment on its own servers.
    in_use: tuple[tuple[ServerKey, Fraction], ...] | None
    owned_free: bool
    one_gpu_pods: bool
    #: The months capex is spread over (:class:`CapexPrice`), or None.
    capex_months: float | None
    #: The first choice alone (a pass sharing servers that names the runners-up of another), or every option sorted.
    first_only: bool
    #: The owned kinds not bought and the owned servers free, whole and in part, where :func:`_fits_owned` reads them
    #: (GPUs in use on a kind not bought); else None.
    owned: tuple[frozenset[tuple[str, str]], tuple[tuple[ServerKey, int], ...], tuple[tuple[ServerKey, int], ...]] | None


#: The options ranked so far in this process, by what ranked them (:class:`_Alike`): the options (held here, so that
#: their ids are not reused while the entry lives) and their ranking, sorted or its first choice alone. The plans of a
#: ``render`` of many files rank the same services' options (:func:`~generator.planner.candidates.inference_options`
#: keeps them per process) in the same passes again and again.
_RANKED: dict[_Alike, tuple[tuple[Option, ...], list[Option]]] = {}

#: Rankings kept in :data:`_RANKED` before it starts over (bounds memory on very long runs).
MAX_RANKED = 50_000


def clear_search_caches() -> None:
    """Forget the options formed (:data:`~generator.planner.candidates._FORMED`) and ranked (:data:`_RANKED`) so far.

    For tests that change in place a catalog table the options read (a price), or that time the search without them.
    """
    from generator.planner.candidates import clear_formed_options

    clear_formed_options()
    _RANKED.clear()


def _in_use_on(
    ranked: dict[tuple[object, ...], list[Option] | _BaseOrder | frozenset[ServerKey] | None],
    allowed_at: tuple[Kind | None, ServerKey | None],
    allowed: list[Option],
    busy: dict[ServerKey, Fraction],
) -> tuple[tuple[ServerKey, Fraction], ...]:
    """The GPUs in use (``busy``) on the server kinds ``allowed``'s options (and their parts) count theirs towards.

    All a pass sharing servers reads of ``busy`` to rank and keep a deployment's options: an option's ranking key reads
    the GPUs in use on its own :attr:`~Option.busy_kind` alone (:func:`~generator.planner.candidates.ranking_key`), and
    so do :func:`_fits_owned` and :func:`_first_ranked` of its parts; none (0) is as none in use. Passes that differ
    only in the servers other services hold rank alike. ``allowed_at``: what ``allowed`` is of the deployment's options
    (the kind held, the server kind moved to), under which its kinds are kept in ``ranked``.
    """
    at = ("busy-kinds", *allowed_at)
    kinds = ranked.get(at)
    if not isinstance(kinds, frozenset):
        kinds = frozenset(part.busy_kind for opt in allowed for part in opt.pieces)
        ranked[at] = kinds
    return tuple(sorted((kind, gpus) for kind, gpus in busy.items() if gpus and kind in kinds))


def _buys_nothing(opt: Option) -> bool:
    """Whether every part of an option runs on owned servers alone."""
    if not opt.parts:  # one part (most options; the passes ask it of every option): its own servers
        c = opt.candidate
        return c.owned_nodes == c.nodes
    return all(part.candidate.owned_nodes == part.candidate.nodes for part in opt.parts)


class _BaseOrder(NamedTuple):
    """A deployment's options in the passes that share servers, as one of them ranked those on no kind it found held.

    An option with no part on a kind the services chosen before hold ranks alike in every such pass (the ranking key
    reads those services' GPUs at the option's own kind alone, :func:`~generator.planner.candidates.on_shared_servers`,
    and :func:`_fits_owned` passes a part on a kind no service holds).
    """

    #: (ranking key, index in the options ranked) of each option the pass that formed it found on no held kind, sorted.
    order: list[tuple[tuple[object, ...], int]]
    #: The indices of the others (ranked afresh by every pass).
    others: list[int]
    #: The indices of the options with a part on each server kind (an option twice where two of its parts are).
    on_kind: dict[ServerKey, list[int]]


def _near_tie_settled(dep: InferenceDeployment | TrainingDeployment) -> bool:
    """Whether a deployment's near tie on cost is settled over its ranked options: a training job's, a batch job's."""
    from generator.planner.batch_job import waits_for_runs

    return waits_for_runs(dep)


def _span_tie(dep: InferenceDeployment | TrainingDeployment, options: list[Option]) -> bool:
    """Whether a service's near tie on cost is settled by the nodes a replica spans (fix141: some option spans several)."""
    from generator.planner.span_tie import span_tie_applies

    return span_tie_applies(dep, options)


def _first_ranked(
    allowed: list[Option],
    base: _BaseOrder | None,
    busy: Mapping[ServerKey, Fraction | int],
    key: Callable[[Option], tuple[object, ...]],
    fits: Callable[[Option], bool],
    form: bool = True,
) -> tuple[list[Option], _BaseOrder | None]:
    """``[sorted(fitting, key=key)[0]]`` of the options ``fits`` keeps of ``allowed`` ([] if none), and ``base``.

    ``base`` is formed here where None (``form``; else none is formed: the least (key, index) of every option, those
    on a kind ``busy`` holds where they fit, and None for ``base``). The options on no kind ``busy`` holds keep their
    place in ``base``: the first of them there is their best. The others (and those ``base`` does not order) are
    ranked afresh; the least (key, index) is the stable sort's first.
    """
    if base is None and not form:
        least: tuple[tuple[object, ...], int] | None = None
        in_use = {kind for kind, gpus in busy.items() if gpus}  # the kinds busy holds: ``busy.get(kind)`` is true
        for i, opt in enumerate(allowed):
            if in_use and any(part.busy_kind in in_use for part in opt.pieces) and not fits(opt):
                continue
            ranked = (key(opt), i)
            if least is None or ranked < least:
                least = ranked
        return ([] if least is None else [allowed[least[1]]]), None
    if base is None:
        on_kind: dict[ServerKey, list[int]] = {}
        for i, o in enumerate(allowed):
            for part in o.pieces:
                on_kind.setdefault(part.busy_kind, []).append(i)
        held = {i for kind, gpus in busy.items() if gpus for i in on_kind.get(kind, ())}
        # by key, then index: equal keys keep the options' order, as a stable sort of ``allowed`` does
        order = sorted((key(o), i) for i, o in enumerate(allowed) if i not in held)
        base = _BaseOrder(order, sorted(held), on_kind)
    else:
        held = {i for kind, gpus in busy.items() if gpus for i in base.on_kind.get(kind, ())}
    best = next((k for k in base.order if k[1] not in held), None)
    for i in held.union(base.others):
        opt = allowed[i]
        if i in held and not fits(opt):
            continue
        ranked = (key(opt), i)
        if best is None or ranked < best:
            best = ranked
    return ([] if best is None else [allowed[best[1]]]), base


def _chains_by_job(wl: Workload) -> dict[int, tuple[int, ...]]:
    """Each job of a chain of training jobs (``run_after``) -> its chain, in the order it runs."""
    if not any(isinstance(d, TrainingDeployment) and d.training.run_after for d in wl.deployments):
        return {}
    from generator.workload.chains import training_chains

    return {k: chain for chain in training_chains(wl) for k in chain}


#: The owned machine whose GPUs hold no replica, described so that its RAM and NVMe hold the rest (newuser49 item 2).
ON_FIXED = (
    "describe one owned machine under hardware.fixed instead (the weights its GPUs cannot hold offloaded to its RAM and "
    "NVMe, llama.cpp)"
)


def _owned_short_hint(
    wl: Workload,
    dep: InferenceDeployment | TrainingDeployment,
    chosen: list[tuple[int, Option, list[Option]]],
    replicas_fit: bool,
    ram_at: str = "",
    in_server: bool = False,
    held_servers: Mapping[ServerKey, int] | None = None,
) -> str:
    """How to place a deployment that only owned servers, all too few or taken, could hold (newuser22 item 2).

    ``in_server``: a whole replica fits one owned server (none free): ``hardware.fixed``, which offloads what the GPUs
    cannot hold, is then no way out (hostile79 item 4: two services on one owned 8 x H100 were sent there, whose refusal
    sent them back to the owned server).

    ``replicas_fit``: a layout of whole replicas inside a server found some owned free, too few: a lower rate needs fewer.
    ``ram_at``: the field stating the owned servers' RAM, where it is too little for the work: offloading more to the
    host is then no way out (it was offered), less of it or more RAM is.
    ``held_servers``: the owned servers of each kind the deployments before it hold (whole or in part), of which a
    training job is told the GPUs the services' rates leave (:func:`~generator.planner.beside_service.beside_service_text`).
    """
    from generator.planner.held_text import held_text  # a refusal's words: loaded when one is said

    apart = False  # a holder a training job where ``dep`` is a service, or the other way round
    told: set[int] = set()  # the jobs of a chain hold one option: its servers are said once, by its first job
    holders = []
    for i, opt, _ in chosen:
        if id(opt) in told:
            continue
        told.add(id(opt))
        holders.append((wl.deployments[i].name, opt))
        training = isinstance(wl.deployments[i], TrainingDeployment)
        owns = any(p.candidate.owned_nodes for p in opt.pieces)
        apart = apart or bool(owns and training != isinstance(dep, TrainingDeployment))
    held = held_text(holders, held_servers)
    ways = [
        "list more owned servers under hardware.inventory",
        "let the plan buy (drop hardware.buy: false)" if not wl.hardware.buy else "allow buying more of the kind",
    ]
    if isinstance(dep, InferenceDeployment) and replicas_fit:
        spec = dep.inference  # what sets the count: the rate, and the headroom or floor where asked (review 20 item 4)
        fields = ["a lower requests_per_second"] + (["min_replicas"] if spec.min_replicas > 1 else [])
        fields += ["a higher max_utilization"] if spec.max_utilization < 1 else []
        fields += ["a lower nodes_down_tolerated"] if spec.nodes_down_tolerated else []
        ways.append(f"{', '.join(fields)} or looser SLOs (fewer replicas)")
    elif isinstance(dep, InferenceDeployment) and not in_server:
        # newuser49 item 2: no owned server's GPUs hold a replica, and hardware.inventory keeps the weights in VRAM
        ways.append(ON_FIXED)
    elif isinstance(dep, TrainingDeployment):  # a job that needs fewer GPUs
        job = dep.training
        lighter = {"full": "LoRA / QLoRA", "lora": "QLoRA", "qlora": None}[job.method]
        # parameter offload is ZeRO-3's: not offered beside another stage the job pins (review 20 item 9)
        offloads = ("offload_optimizer",) + (("offload_params",) if job.zero_stage in (None, 3) else ())
        offload = [f"{field}: true" for field in offloads if getattr(job, field) is not True and not ram_at]
        ways += [f"a lighter job ({', '.join([*([lighter] if lighter else []), *offload])})"] if lighter or offload else []
        # the GPUs a run needs to end in time: by its deadline, and on owned servers its runs a month in the month
        ways += [f"fewer than its {job.runs_per_month:g} runs_per_month"] if job.runs_per_month else []
        ways += ["a later deadline_hours"] if job.deadline_hours else []
    if ram_at:
        job_fields = ("offload_optimizer", "offload_params", "activation_offload")
        offloaded = [f for f in job_fields if isinstance(dep, TrainingDeployment) and getattr(dep.training, f) is True]
        ways += [f"{' / '.join(offloaded)} off where the GPUs hold those states"] if offloaded else []
        ways.append(f"servers with more RAM than {ram_at} states")
    if held:
        # fuzz34 item 1: a service and a 1-GPU LoRA job on one owned 8-GPU server: the job takes a server of its own
        why = (
            "; a training job shares servers only with the jobs it runs in turn with (run_after), and with services "
            "only on the GPUs their rates leave of owned servers (fix182)"
            if apart
            else ""
        )
        if apart and isinstance(dep, TrainingDeployment):  # newuser94: the GPUs the services' rates leave, and the rule
            from generator.planner.beside_service import beside_service_text

            why += beside_service_text(wl, chosen, held_servers or {})
        ways.append(f"place a deployment before it elsewhere: {'; '.join(held)}{why}")
    return f"to unblock: {', '.join(ways[:-1])}, or {ways[-1]}"


def _shared_said(
    wl: Workload,
    fewest: dict[str, Blocked],
    chosen: list[tuple[int, Option, list[Option]]],
    seen: dict[ServerKey, int],
    whole: dict[ServerKey, int],
) -> dict[str, Blocked]:
    """``fewest`` with the owned servers each one counted free that the services before it hold in part said so.

    fix171: "needs 3 servers; 1 owned are free" was said of a DGX two services took 4 GPUs of: now "0 owned are free,
    1 shared (gpu-01: GPUs 0-1 'chat', 2-3 'small', 4-7 idle)" (:func:`~generator.planner.held_text.shared_owned_text`).
    """
    from generator.planner.held_text import owned_short_why, shared_owned_text  # a refusal's words
    from generator.planner.inventory import owned_groups

    out = dict(fewest)
    for platform, b in fewest.items():
        key = (b.platform_id, b.gpu_id, b.gpus_per_node)
        not_bought = _not_bought(wl, key)
        partial = seen.get(key, 0) - whole.get(key, 0)
        if b.code != OWNED_SHORT or partial <= 0 or not_bought is None:
            continue
        if b.why != owned_short_why(b.layout, b.nodes, b.owned, not_bought):  # another short: said as it was
            continue
        told: dict[int, tuple[int, str, Option]] = {}  # a chain's jobs hold one option: said once, by its first
        for i, opt, _ in chosen:
            told.setdefault(id(opt), (i, wl.deployments[i].name, opt))
        group = next((g for g in owned_groups(wl) if g.key == key), None)
        held = (group.count if group else 0) - whole.get(key, 0)
        hosts = group.hosts if group and group.platform.hosts == 1 else ()
        shared = shared_owned_text(list(told.values()), key, held, partial, hosts)
        why = owned_short_why(b.layout, b.nodes, whole.get(key, 0), not_bought, shared)
        out[platform] = b._replace(why=why)  # its count stays: replicas may fit the idle GPUs
    return out


def _left_free(
    not_bought: set[tuple[str, str]], free: dict[ServerKey, int], busy: dict[ServerKey, Fraction], *, idle_too: bool
) -> dict[ServerKey, int]:
    """Owned servers a deployment may be placed on in a pass where services share servers.

    The services' replicas of a kind fill its owned servers first (a pool packs its GPUs onto as few servers as they
    need), so the servers they hold are not free. ``idle_too``: a server they fill only in part stays free where no
    more of its kind are bought (``not_bought``: (platform, GPU) pairs), so that another service takes its idle GPUs
    (:func:`_fits_owned` bounds what fits).
    """
    from generator.planner.option import is_shared_of  # the search's module: loaded with it, not the package

    left = {}
    for key, count in free.items():
        gpus, per_node = busy.get(key, Fraction(0)), key[2]
        # GPUs shared between pods, each sharing on nodes of its own: apart
        shared = [v for (p, g, n), v in busy.items() if (p, n) == (key[0], per_node) and is_shared_of(g, key[1])]
        if idle_too and key[:2] in not_bought:
            held = int(gpus // per_node) + sum(int(s // per_node) for s in shared)
        else:
            held = math.ceil(gpus / per_node) + sum(math.ceil(s / per_node) for s in shared)
        left[key] = max(0, count - held)
    return left


def _fits_owned(
    not_bought: set[tuple[str, str]],
    opt: Option,
    free: dict[ServerKey, int],
    busy: dict[ServerKey, Fraction],
    whole: dict[ServerKey, int],
) -> bool:
    """Whether a service's replicas on owned servers no more of are bought fit beside the services already there.

    Replicas inside one server fill the idle GPUs; a replica spanning servers (PP > 1) takes whole servers, so only
    those no service holds (``whole``).
    """
    for part in opt.pieces:
        key = part.server_kind
        if not busy.get(part.busy_kind) or key[:2] not in not_bought:
            continue
        if part.shares_servers:
            if math.ceil((busy[part.busy_kind] + part.gpus_used) / key[2]) > free.get(key, 0):
                return False
        elif part.candidate.owned_nodes > whole.get(key, 0):
            return False
    return True


def _owned_unused(
    wl: Workload, key: ServerKey, name: str, blocked: list[Blocked], stated: frozenset[str] = frozenset()
) -> list[str]:
    """Why an owned kind took none of a deployment's layouts: what rules it out, and why no more are bought.

    ``stated``: the reasons (as :attr:`Blocked.text`) the refusal said already, not said again.
    """
    on_kind = [b for b in blocked if (b.platform_id, b.gpu_id) == key[:2]]
    fresh = [b for b in blocked if b.text not in stated]
    said = why_left_free(key[1], key[0], {name: fresh})
    if not said and on_kind and any(b.text in stated for b in on_kind):
        said = f"{name}: the reasons above"
    return [text for text in (_not_bought(wl, key), said and f"not usable by {said}") if text]


def _not_bought(wl: Workload, key: ServerKey) -> str | None:
    """Why no more servers of an owned kind are bought (the allowed hardware leaves it out); None when they may be."""
    return next((h.not_bought for h in allowed_hardware(wl) if (h.platform.id, h.gpu.id) == key[:2]), None)


def _pins_text(dep: InferenceDeployment | TrainingDeployment) -> str:
    """The deployment's pins, as ``platform=..., tp=...``."""
    pin = dep.parallelism
    return ", ".join(
        f"{k}={v}" for k, v in (("platform", dep.platform), *((pin._asdict().items()) if pin else ())) if v is not None
    )


def _dropped(
    index: int, dep: InferenceDeployment | TrainingDeployment, every: list[Option], pinned: list[Option]
) -> list[Blocked]:
    """A record of each (GPU, platform) whose layouts the pins of deployment ``index`` all left out.

    newuser42 item 3: a job pinned to the A100 servers was said to leave the owned H100 servers free for want of servers.
    """
    from generator.planner.blocked import PINNED_OUT, Blocked

    kept = {(p.gpu_id, p.hardware.platform.id) for o in pinned for p in o.pieces}
    left = sorted({(p.gpu_id, p.hardware.platform.id) for o in every for p in o.pieces} - kept)
    why = f"the deployment is pinned to {_pins_text(dep)} (deployments[{index}])"
    return [Blocked(gpu, platform, PINNED_OUT, why) for gpu, platform in left]


def honour_pins(dep: InferenceDeployment | TrainingDeployment, options: list[Option]) -> tuple[list[Option], str | None]:
    """Only the options on the pinned platform with the pinned TP / PP / EP degrees; why none are left, if so."""
    pin = dep.parallelism
    if dep.platform is None and pin is None:
        return options, None
    kept = [
        o
        for o in options
        if all(
            (dep.platform is None or p.hardware.platform.id == dep.platform)
            and (pin is None or pin.tp is None or p.candidate.tp == pin.tp)
            and (pin is None or pin.pp is None or p.candidate.pp == pin.pp)
            # ep: each stage's experts over its TP GPUs (ep = tp) or, above it, attention data-parallel (newuser72 item
            # 1); ep 1 for none, whatever the TP (fuzz18 item 1)
            and (pin is None or pin.ep is None or p.shape.par.ep == pin.ep)
            for p in o.pieces
        )
    ]
    if kept or not options:
        return kept, None
    return kept, f"no feasible layout with the pinned {_pins_text(dep)}"


def _cheapest_over_budget(dropped: list[Blocked]) -> list[Blocked]:
    """``dropped`` with one budget record of each reason on each (GPU, platform): its cheapest layout's (newuser79 item 3).

    A layout the budget drops records its month and name (:func:`~generator.planner.candidates.over_limit`), so the
    records of one reason differ by layout; the cheapest is the one a reason names against the budget.
    """
    least: dict[tuple[str, str, str], Blocked] = {}
    for b in dropped:
        if b.usd_per_month is not None:
            key = (b.gpu_id, b.platform_id, b.why)
            held = least.get(key)
            if held is None or (b.usd_per_month, b.pp, b.layout) < (held.usd_per_month or 0.0, held.pp, held.layout):
                least[key] = b
    return [b for b in dropped if b.usd_per_month is None or least[(b.gpu_id, b.platform_id, b.why)] is b]


def _unpriced_label(c: Candidate, owned: frozenset[tuple[str, str]] = frozenset()) -> str:
    """What an unpriced candidate lacks a price for: the server with those GPUs (either may lack one).

    Of an ``owned`` kind (platform, GPU), those bought beyond the owned ones: owned servers cost their upkeep
    (newuser27 item 3: the owned kinds chosen read as "ranked after" priced ones).
    """
    more = " (more than those owned)" if (c.platform_id, c.gpu_id) in owned else ""
    return f"{c.platform_id} with {c.gpu_id}{more}"


def objective_for(
    objective: str,
    options: list[Option],
    index: int,
    findings: list[Finding],
    region: str | None = None,
    spot_rated: frozenset[str] = frozenset(),
    baremetal: bool = False,
) -> str:
    """The objective the options are ranked by.

    ``cost`` stays ``cost`` while every unpriced candidate buys at least the GPUs, servers and power
    of some priced one (it cannot be the cheaper buy); otherwise it falls back to ``power-bought`` and says so: the
    nameplate draw of the servers bought or rented grows with their GPUs and chassis both, where a GPU count bought a
    server for each GPU it saved (newuser20 item 4); servers already owned are not bought. ``spot_rated``: the
    platforms whose spot rate ``prices:`` gives (``<platform>@spot``), whose price is no on-demand stand-in.
    """
    from generator.planner.plan import Finding

    if objective != "cost":
        return objective
    priced = _least(
        {
            (o.candidate.gpus_bought, o.candidate.nodes, o.candidate.power_compared_w)
            for o in options
            if o.candidate.usd_per_hour is not None
        }
    )
    unpriced = [o.candidate for o in options if o.candidate.usd_per_hour is None]
    beaten: dict[tuple[int, int, int], bool] = {}  # by (GPUs, servers, power): many layouts share one
    for u in unpriced:
        point = (u.gpus_bought, u.nodes, u.power_compared_w)
        if point not in beaten:
            beaten[point] = any(g <= point[0] and n <= point[1] and w <= point[2] for g, n, w in priced)
    undominated = [u for u in unpriced if not beaten[(u.gpus_bought, u.nodes, u.power_compared_w)]]
    # an instance type not rented on demand has no on-demand price to form, and one rented only in other regions none
    # here: ranked after priced ones, and said (where nothing is priced, nothing ranks by cost)
    # a type sold through Spot is what a spot deployment asks for (README, Spot capacity), and there the priced layouts
    # stand at their on-demand rate, a stand-in spot bills less than: one renting fewer of the GPU of the cheapest
    # priced layout is the smaller VM a buyer takes instead of it, which no known price ranks, so cost falls back
    # (newuser79 item 1: one H100 of a3-highgpu-1g ranked after eight of a3-highgpu-8g at its on-demand rate, 29x the
    # month); one of another GPU, whose spot rate is as unknown, is ranked after the priced ones, as on demand
    spot_sold = {o.candidate.platform_id for o in options if o.hardware.spot}
    costed_first = min(
        (o.candidate for o in options if o.candidate.usd_per_hour is not None),
        key=lambda c: (c.usd_per_hour or 0.0, c.gpus_bought),
        default=None,
    )
    as_spot = {
        u.platform_id
        for u in undominated
        if u.platform_id in spot_sold
        and costed_first is not None
        # the cheapest priced layout at its given spot rate is no stand-in above what spot bills (pinB: newuser66
        # item 6's a3-highgpu-8g@spot $20/h lost to 9 x a3-highgpu-4g, unpriced, said "at the on-demand rate")
        and costed_first.platform_id not in spot_rated
        and u.gpu_id == costed_first.gpu_id
        and u.gpus_bought < costed_first.gpus_bought
    }
    off_demand = {
        u.platform_id: sold
        for u in undominated
        if priced and u.platform_id not in as_spot and (sold := _sold_through(u.platform_id))
    }
    elsewhere = [u for u in undominated if priced and u.platform_id not in off_demand and least_rate_elsewhere(u.platform_id)]
    if elsewhere:
        findings.append(_priced_elsewhere_ranked(elsewhere, options, index, region))
    ranked_after = {*off_demand, *(u.platform_id for u in elsewhere)}
    if off_demand:
        # of the fewest GPUs, the fewest pipeline stages (newuser79 item 8: "1 x TP1 PP2 on 1 x gcp-a3-highgpu-2g"
        # was named for a model that fits one GPU, "1" sorting before "2")
        fewer = min((u for u in undominated if u.platform_id in off_demand), key=lambda u: (u.gpus_bought, u.pp, u.summary))
        # a spot deployment's rate is the spot key's (newuser56 item 5: the plain key was advised, which prices the
        # on-demand rate such a type has none of)
        spot = any(o.hardware.spot for o in options if o.candidate.platform_id == fewer.platform_id)
        key = f"'{spot_key(fewer.platform_id)}'" if spot else f"'{fewer.platform_id}'"
        how = "its spot" if spot else "with a reservation, its"
        # a spot deployment's type sold through Spot is not "not on demand" to it: it has no spot rate (newuser79 item 1)
        sold_so = (
            "; ".join(f"{p} is sold through {sold}, with no spot rate in the catalog" for p, sold in sorted(off_demand.items()))
            + ", so no price ranks it"
            if spot
            else "; ".join(f"{p} is sold through {sold}, not on demand" for p, sold in sorted(off_demand.items()))
            + ", so no on-demand price ranks it"
        )
        # priced layouts at a spot rate (the catalog's or prices:'s @spot) are no on-demand stand-in (review80 item 14)
        at_spot = costed_first is not None and costed_first.platform_id in spot_rated
        beside = " (those at the on-demand rate, which spot bills less than)" if spot and not at_spot else ""
        findings.append(
            Finding(
                "info",
                "not-on-demand-ranked",
                f"{sold_so}: layouts there (such as {fewer.summary}, {fewer.gpus_bought} GPUs) are ranked after priced "
                f"ones{beside}; {how} USD per node-hour under 'prices:' (key {key}) ranks it by cost",
                f"deployments[{index}]",
            )
        )
    open_ = sorted({_unpriced_label(u) for u in undominated if u.platform_id not in ranked_after})
    if not open_:
        off = " (not sold on demand)"
        owned = frozenset((o.candidate.platform_id, o.candidate.gpu_id) for o in options if o.candidate.owned_nodes)
        dominated = sorted(
            {
                _unpriced_label(u, owned) + (off if _sold_through(u.platform_id) and u.platform_id not in spot_sold else "")
                for u in unpriced
                if u.platform_id not in ranked_after
            }
        )
        if dominated:
            findings.append(
                Finding(
                    "info",
                    "unpriced-dominated",
                    f"no price for {', '.join(dominated)}; each such layout buys at least the GPUs, servers and power "
                    "of a priced one, so it is ranked after it",
                    f"deployments[{index}]",
                )
            )
        return objective
    from generator.planner.candidates import ranking_key
    from generator.planner.tco import cost_text

    # the cheapest priced layout, which the fallback may not show (newuser15 item 6); of several at that price, the one
    # the fallback ranks first, as the runners-up are listed, and the tie said (newuser61 item 13: the warning named
    # 10 x TP1 PP2 on dell-xe9680 and the runner-up line 12 x TP2 on supermicro, both at $38,098/month)
    # as the services' own servers are ranked: each with as many replicas as its servers hold (newuser46 item 2)
    costed = [o.filled or o for o in options if o.candidate.usd_per_hour is not None]
    least = min(costed, key=lambda o: o.candidate.usd_per_hour or 0.0, default=None)
    at_least = (least.candidate.usd_per_hour or 0.0) if least is not None else 0.0
    # a tie is the same month as printed; those within 0.1% of the least are the only ones whose text is formed
    near = [o for o in costed if (o.candidate.usd_per_hour or 0.0) <= at_least * 1.001]
    tied = [o for o in near if least is not None and cost_text(o.candidate) == cost_text(least.candidate)]  # as printed
    first = min(tied, key=lambda o: ranking_key(o, "power-bought", None, False), default=None)
    cheapest = first.candidate if first is not None else None
    others = len({o.candidate.summary for o in tied} - {cheapest.summary}) if cheapest is not None else 0
    tie = (
        f" ({others} other layout{'s cost' if others > 1 else ' costs'} the same; this is the first of them in the "
        "power-bought ranking the runners-up are listed by)"
        if others
        else ""
    )
    # a spot deployment's priced layouts stand at the on-demand rate, its unpriced ones at none (newuser79 item 1): the
    # choice is between them, said as such, and the keys that price them are the @spot ones
    spot_open = sorted({u.platform_id for u in undominated if u.platform_id in as_spot and u.platform_id not in ranked_after})
    spot_keys = sorted({u.platform_id for u in undominated if u.platform_id in spot_sold and u.platform_id not in ranked_after})
    add = (
        f"add their spot rates under 'prices:' (USD per node-hour: {', '.join(repr(spot_key(p)) for p in spot_keys)})"
        if spot_keys
        else "add their platforms under 'prices:' (USD per node-hour)"
    )
    if baremetal and not spot_keys:  # newuser102: on bare metal a rate under prices: rents the server, never buys it
        open_keys = {f"'{u.platform_id}/{u.gpu_id}x{u.gpus_per_node}'" for u in undominated if u.platform_id not in ranked_after}
        quote = ", ".join(sorted(open_keys))
        add = (
            f"give the price you were quoted under 'purchase_prices:' (USD a server bought, key {quote}; a rate "
            "under 'prices:', USD per node-hour, rents a server from a provider instead of buying it)"
        )
    at = (
        " at the on-demand rate (spot bills less; the catalog holds no spot rate for it here): they rent fewer of its GPU, and "
        "power-bought takes such a smaller VM rather than the priced larger one at a rate spot would not bill"
        if spot_open
        else ""
    )
    findings.append(
        Finding(
            "warning",
            "objective-fallback",
            f"objective cost fell back to power-bought (the nameplate draw of the servers bought or rented, GPUs "
            "included; then replicas on fewer hosts, the draw of all those used, idle GPUs, servers, latency): no price "
            "could be formed for "
            f"{', '.join(open_)}; {add} to rank by cost"
            + (f"; the cheapest priced layout is {cheapest.summary} at {cost_text(cheapest)}{at}{tie}" if cheapest else ""),
            f"deployments[{index}]",
        )
    )
    return "power-bought"


def _runs_a_month(dep: InferenceDeployment | TrainingDeployment) -> float | None:
    """A training job's ``runs_per_month`` (None for a service, or where the job gives none)."""
    return dep.training.runs_per_month if isinstance(dep, TrainingDeployment) else None


def _priced_elsewhere_ranked(elsewhere: list[Candidate], options: list[Option], index: int, region: str | None) -> Finding:
    """newuser28 item 8: types the catalog rents only in other regions are ranked after the priced layouts.

    One such type made the deployment rank by nameplate power, which chose a type sold only as Spot; the least of
    them at its other region's rate is set beside the cheapest priced layout, a warning where it would be cheaper.
    """
    from generator.planner.plan import Finding
    from generator.planner.tco import cost_text, run_usd

    def at_rate(c: Candidate) -> Candidate:
        region, usd = least_rate_elsewhere(c.platform_id) or ("", 0.0)
        return c._replace(usd_per_hour=usd * c.nodes, summary=f"{c.summary} at the {region} rate")

    def usd(c: Candidate) -> float:  # a run's cost for a training job, an hour's for a service
        return run_usd(c) or c.usd_per_hour or 0.0

    least = min((at_rate(c) for c in elsewhere), key=lambda c: (usd(c), c.summary))
    cheapest = min((o.candidate for o in options if o.candidate.usd_per_hour is not None), key=lambda c: (usd(c), c.summary))
    cheaper = usd(least) < usd(cheapest)
    types = sorted({c.platform_id for c in elsewhere})
    return Finding(
        "warning" if cheaper else "info",
        "priced-elsewhere-ranked",
        f"{', '.join(types)} {'has' if len(types) == 1 else 'have'} no {region or 'catalog'} price, so layouts there are "
        f"ranked after priced ones; the least of them for this deployment alone, {least.summary}, would cost "
        f"{cost_text(least)} against {cost_text(cheapest)} for the cheapest priced, {cheapest.summary}; "
        + ("cheaper at another region's rate: " if cheaper else "")
        + f"give the type's USD per node-hour in {region or 'the plan region'} under 'prices:' to rank it by cost",
        f"deployments[{index}]",
    )


def _sold_through(platform_id: str) -> str | None:
    """How a catalog instance type not rented on demand is sold instead; None for one rented on demand (or custom)."""
    from generator import catalog

    platform = catalog.platforms().get(platform_id)
    return platform.not_on_demand if platform is not None else None


def _least(points: set[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The points no other point is at most in every coordinate (something at most a point is at most one of these)."""
    least: list[tuple[int, int, float]] = []
    for p in sorted(points):  # a point can only be dominated by one sorted before it
        if not any(q[1] <= p[1] and q[2] <= p[2] for q in least):
            least.append(p)
    return least
