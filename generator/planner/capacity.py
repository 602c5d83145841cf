"""``objective: capacity``: what ``hardware.max_capex_usd`` buys (newuser42 item 8: "we have $400k to spend").

The question turned round: not the cheapest fleet for the rates given, but how much of the workload a capital budget
serves. Every inference deployment's ``requests_per_second`` (and ``average_requests_per_second``) is multiplied by
one common factor; training deployments keep their jobs as given. The planner at those rates, under ``cost`` and with
the cap held as ever (:func:`generator.planner.plan_workload`), is the inner solver: a factor is served where it plans
a fleet. The largest factor served is searched for deterministically:

- from 1 (the rates given), doubled while served (at most :data:`MOST_DOUBLINGS` times) or halved while not, which
  brackets it between a factor served and one not;
- then bisected until the factor not served is within :data:`RESOLUTION` (relative) of the one served, rounded down
  to :data:`FIGURES` significant figures: the factor said and planned (the one found where that is not served).

Where the rates given are not served, the training jobs alone are planned first: where they find no fleet, no factor
could help, and that is said (fuzz35 item 8).

The plan is the fleet at the factor served (the cheapest a month there), with :class:`~generator.planner.plan.Capacity`:
the factor, each deployment's rate and tokens a second at it, what the servers bought cost against the cap, the month,
and the field that stopped the next factor (``hardware.max_capex_usd``, or a limit that binds before it). A fleet on
owned servers alone spends nothing of the cap and says what they serve (fuzz35 item 1). A fleet that buys nothing and
rents servers has no capex to bound it, and it is refused (a cloud, ``hardware.fixed`` and ``buy: false`` are refused
as the workload is loaded: :func:`generator.workload.value_checks.capacity_errors`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, NoReturn

from generator.errors import FleetLimitError, InfeasibleError, InputError, Location, SpecgenError
from generator.findings import parse_path
from generator.planner.plan import Capacity, CapacityServed
from generator.workload.models import InferenceDeployment, TrainingDeployment

if TYPE_CHECKING:
    from generator.planner.plan import Plan
    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload

#: The bisection stops once the least factor found not served is within this share of the largest served (1%).
RESOLUTION = 0.01
#: The bracket's search doubles (or halves) the factor from 1 at most this many times: 1,024 times the rates given at
#: most, 1/1,024 at least.
MOST_DOUBLINGS = 10
#: True while :func:`plan_capacity` runs the planner as its inner solver (:func:`searching`).
_SEARCHING: ContextVar[bool] = ContextVar("capacity_searching", default=False)
#: The factor found is said (and planned) to this many significant figures, rounded down.
FIGURES = 4


def scaled(loaded: LoadedWorkload, factor: float) -> LoadedWorkload:
    """``loaded`` with every inference deployment's rates (a batch job's requests a run) times ``factor``, by cost."""
    wl = loaded.workload
    deployments = tuple(
        dep._replace(
            inference=dep.inference._replace(
                requests_per_second=dep.inference.requests_per_second * factor,
                average_requests_per_second=(
                    None
                    if dep.inference.average_requests_per_second is None
                    else dep.inference.average_requests_per_second * factor
                ),
                # a batch job's runs: its requests a run with its rate, in the same deadline (newuser65 item 1)
                requests_per_run=(
                    None if dep.inference.requests_per_run is None else max(1, round(dep.inference.requests_per_run * factor))
                ),
            )
        )
        if isinstance(dep, InferenceDeployment)
        else dep
        for dep in wl.deployments
    )
    return loaded._replace(workload=wl._replace(deployments=deployments, objective="cost"))


def searching() -> bool:
    """Whether the planner runs as capacity's inner solver (its workload's objective reads ``cost`` there)."""
    return _SEARCHING.get()


@contextmanager
def _inner_solver() -> Iterator[None]:
    """:func:`searching` is true while it holds (review29 item 11: it was a wrapper of the same signature)."""
    token = _SEARCHING.set(True)
    try:
        yield
    finally:
        _SEARCHING.reset(token)


@_inner_solver()
def plan_capacity(
    loaded: LoadedWorkload,
    consts: Constants,
    probe: Callable[[LoadedWorkload, Constants], Plan],
    whole: Callable[[LoadedWorkload, Constants], Plan],
) -> Plan:
    """The fleet within ``hardware.max_capex_usd`` that serves the largest common scale of the inference rates.

    ``probe``: the planner's fleet search at given rates (a factor is served where it returns a plan, not where it
    raises :class:`InfeasibleError`); ``whole``: that search with the findings around it, run once at the factor found
    (the workload's early checks ran before: :func:`generator.planner.plan_workload`). While it runs,
    :func:`searching` is true: the inner solver's hints are capacity's (no ``prices:`` rate to unblock a cap).
    """
    wl = loaded.workload
    cap = wl.hardware.max_capex_usd
    if cap is None:  # refused as the workload is loaded (capacity_errors); a library caller's workload is checked here
        raise InputError("objective capacity needs hardware.max_capex_usd", loaded.document.locate(("objective",)))

    def serves(factor: float) -> InfeasibleError | None:
        try:
            plan = probe(scaled(loaded, factor), consts)
        except InfeasibleError as exc:
            return exc
        if factor == 1.0 and not wl.hardware.inventory and not _capex(plan):
            raise InfeasibleError(_RENTED, loaded.document.locate(("objective",)))
        return None

    low, high, stop = _bracket(serves, lambda: _training_alone(loaded, consts, probe))
    while high is not None and high > _tidy(low) * (1 + RESOLUTION):  # within 1% of the factor said
        middle = (low + high) / 2
        if (missed := serves(middle)) is None:
            low = middle
        else:
            high, stop = middle, missed
    low, plan = _tidied(loaded, consts, whole, low)
    spent = _capex(plan)
    if not spent and _rents(plan):  # rent is not capex: the cap bounded nothing bought (fuzz35 item 1: owned alone is)
        raise InfeasibleError(_RENTED, loaded.document.locate(("objective",)))
    served = tuple(
        CapacityServed(
            dep.name,
            given.inference.requests_per_second,
            dep.inference.requests_per_second,
            dep.inference.requests_per_second * dep.inference.avg_input_tokens,
            dep.inference.requests_per_second * dep.inference.avg_output_tokens,
            dep.inference.max_utilization,
            dep.inference.routing,
        )
        for given, dep in zip(wl.deployments, scaled(loaded, low).workload.deployments, strict=True)
        if isinstance(given, InferenceDeployment) and isinstance(dep, InferenceDeployment)
    )
    totals = plan.totals
    capacity = Capacity(
        factor=low,
        resolution=RESOLUTION,
        tried_factor=high if high is not None else low,
        bound_by=_field(stop),
        max_capex_usd=cap,
        capex_usd=spent,
        usd_per_month=totals.get("usd_per_month"),
        opex_usd_per_month=totals.get("opex_usd_per_month"),
        served=served,
    )
    return plan._replace(objective="capacity", capacity=capacity)


def _tidy(factor: float) -> float:
    """``factor`` rounded down to :data:`FIGURES` significant figures (22.625: 22.62)."""
    step = 10.0 ** (math.floor(math.log10(factor)) - FIGURES + 1)
    return round(math.floor(round(factor / step, 9)) * step, 12)


def _tidied(
    loaded: LoadedWorkload, consts: Constants, whole: Callable[[LoadedWorkload, Constants], Plan], found: float
) -> tuple[float, Plan]:
    """The factor found rounded down to :data:`FIGURES` significant figures, and the plan at it.

    The bisection's factors are halvings (22.625, 2.828125): rounded down, well within :data:`RESOLUTION`, the factor
    and every rate at it read the same wherever the plan says them (fuzz35 item 7: "22.62 x" beside "22.625 req/s
    need 7 replica(s)"). Where the rounded factor is not served after all (a fleet search need not be monotone), the
    factor found.
    """
    tidy = _tidy(found)
    if tidy < found:
        try:
            return tidy, whole(scaled(loaded, tidy), consts)
        except InfeasibleError:
            pass
    return found, whole(scaled(loaded, found), consts)


def _bracket(
    serves: Callable[[float], InfeasibleError | None], alone: Callable[[], None]
) -> tuple[float, float | None, InfeasibleError | None]:
    """A factor served, the least factor tried above it that is not (None: the search's top is served), and its error.

    From 1, doubled while served; else halved until served (``alone`` first: it raises where the training jobs, which
    no factor scales, find no fleet by themselves). None served down to 1/1,024 of the rates: the last factor's
    error, at its field, said as capacity's (a latency target no layout meets at any rate says so too).
    """
    missed = serves(1.0)
    if missed is None:
        low = 1.0
        for _ in range(MOST_DOUBLINGS):
            if (missed := serves(low * 2)) is not None:
                return low, low * 2, missed
            low *= 2
        return low, None, None
    alone()
    high, stop = 1.0, missed
    for _ in range(MOST_DOUBLINGS):
        if (missed := serves(high / 2)) is None:
            return high / 2, high, stop
        high, stop = high / 2, missed
    _raise_as_capacity(f"no fleet serves even 1/{2**MOST_DOUBLINGS:,} of the request rates given", stop)


def _raise_as_capacity(what: str, stop: InfeasibleError, at: Location | None = None) -> NoReturn:
    """``stop`` said as capacity's (``objective capacity: {what}: ...``), at its field (``at`` where given)."""
    said = str(stop)
    if stop.location is not None and said.startswith(f"{stop.location}: "):
        said = said[len(f"{stop.location}: ") :]
    why = f"objective capacity: {what}: {said}"
    if isinstance(stop, FleetLimitError):
        raise FleetLimitError(why, stop.limit, stop.needed)
    raise InfeasibleError(why, at or stop.location)


def _training_alone(loaded: LoadedWorkload, consts: Constants, probe: Callable[[LoadedWorkload, Constants], Plan]) -> None:
    """Raise where the training deployments alone find no fleet: no factor of the request rates could help them.

    fuzz35 item 8: a training job whose servers cost more than the cap was said as "no fleet serves even 1/1,024 of
    the request rates given", after eleven searches. A workload whose training names an inference deployment (the
    searches decide) or with no training is left to them.
    """
    wl = loaded.workload
    index = [i for i, dep in enumerate(wl.deployments) if isinstance(dep, TrainingDeployment)]
    jobs = tuple(wl.deployments[i] for i in index)
    if not jobs:
        return
    alone = loaded._replace(workload=wl._replace(deployments=jobs, objective="cost"))
    try:
        probe(alone, consts)
    except InfeasibleError as exc:
        names = ", ".join(f"'{dep.name}'" for dep in jobs)
        what = f"training job {names} alone finds" if len(jobs) == 1 else f"training jobs {names} alone find"
        # review29 item 1: the jobs alone are renumbered (deployments[k] is the file's index[k]): located again.
        path = parse_path(exc.location.path) if exc.location is not None else ()
        at = None
        if len(path) > 1 and path[0] == "deployments" and isinstance(path[1], int) and path[1] < len(index):
            at = loaded.document.locate(("deployments", index[path[1]], *path[2:]))
        _raise_as_capacity(f"{what} no fleet (training runs as given, not scaled), so no factor of the rates does", exc, at)
    except SpecgenError:
        return


def _capex(plan: Plan) -> float:
    """What the plan's servers bought cost up front (0: none bought)."""
    from generator.planner.assemble import fleet_up_front_usd

    return fleet_up_front_usd(plan.totals) or 0.0


def _rents(plan: Plan) -> bool:
    """Whether a pool of the plan's services has servers it neither owns nor buys (rented, and so no capex of the cap).

    Rented by a catalog rental record or a price per hour under ``prices:``; a training job's servers paid per run.
    Only the services' pools count (review29 item 9: owned servers alone for the services, beside a training job paid
    per run, were refused as renting, although the factor scales nothing rented).
    """
    services = {dep.name for dep in plan.deployments if dep.kind == "inference"}
    return any(p.rented or p.per_job or p.nodes > p.owned_nodes for p in plan.pools if services.intersection(p.deployments))


def _field(stop: InfeasibleError | None) -> str:
    """The workload field that stopped the factor above the one found (the search's top where none did)."""
    if stop is None:
        return f"the search's largest factor ({2**MOST_DOUBLINGS:,} x the rates given)"
    if isinstance(stop, FleetLimitError):
        return f"hardware.{stop.limit}"
    return stop.location.path if stop.location is not None and stop.location.path else "the planner's search"


#: Why a fleet that buys nothing and rents servers is refused under ``objective: capacity`` (one on owned servers alone
#: is not: it reports what they serve, fuzz35 item 1): exit 3, not an input error, since whether the
#: fleet rents is known only once the planner has priced it (a workload validate accepts may only fail in the search).
_RENTED = (
    "objective capacity finds the largest scale of the inference request rates a fleet within max_capex_usd serves; "
    "the fleet planned buys no server but rents them (priced per hour under prices: or by the catalog's rental "
    "records), and rent is not capex, so max_capex_usd bounds no scale of it: allow servers that are bought "
    "(hardware.gpus / hardware.platforms), or use objective cost"
)
