"""Plan a chain of training jobs run one after another on the same servers (``training.run_after``).

The chain gets one pool: servers of one kind, as many as its widest job needs. Each job takes its own layout on
them (a later job may use fewer of the pool's GPUs than the pool has: a LoRA job after a full fine-tune needs no
more of them to fit, and bought or owned servers cost the same whether it uses them or not). Job ``k`` finishes at
the hours of the jobs before it plus its own, and must do so by its own ``deadline_hours``, which counts from the
chain's start.

Jobs of different ``runs_per_month`` may share a chain on servers bought or owned (newuser80 item 2: a nightly LoRA and
a monthly full fine-tune each bought a $197,000 server, busy 20% and 6% of the month). The chain then runs as often as
its most frequent job, ``R`` times a month, and a job of ``r`` runs a month takes ``r / R`` of its run in each: it
is checkpointed at the end of its slice and resumed in the next run of the chain (the checkpoint's write and its read
back counted in each slice's hours, :class:`_Slices`; fix140, review80 item 6): a more frequent job after it in the
chain starts the slice's hours later each run (never delayed where the slice runs last), and its own run ends within
its ``R / r`` runs of the chain (at most 730 h / ``r``). The pool's
month holds every job's hours times its runs. Each job's share (:func:`cadence_shares`) weighs its hours wherever the
chain's hours are summed.

Where the chain's last job runs less often than the chain and its ``deadline_hours`` is shorter than its slices would
take (730 h / ``r``), it runs stretched instead (fix138): it starts where the jobs before it end in a run of the chain
and runs straight on through the gaps between the chain's runs; at each run of the chain it is pre-empted (its
checkpoint's write started ahead of that run's start by the write's time, so the run starts on time (fix140); the
run's jobs at their own hours; its checkpoint read back) and resumed, so the other jobs' runs keep their own hours and
deadlines, and it ends at about its hours over the share of the month the others leave (:func:`stretched_finish`). The
plan is refused only where even that finish misses its deadline. Where its deadline allows the slices, they are kept:
they hold the servers for no job longer than a run of the chain, so no run of a more frequent job waits on a
checkpoint's write, and the finish is the same month's work.

On a pool the jobs' layouts are chosen together: on bought or owned servers (paid by the month whatever runs on them)
each job takes its fastest layout that fits the pool, which makes every finish time the earliest it can be; on rented
servers (paid per job-hour) the cheapest sequence of layouts that meets every deadline, the earliest finish on a near tie
(within ``NEAR_TIE_FRACTION`` of the cheapest's cost); across pools, the near tie on cost is settled as a job's is
(:func:`~generator.planner.training_candidates.cost_near_ties_settled`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator.calculator.model_source import ResolvedModel
from generator.errors import ChainDeadlineError
from generator.named_tuple import NamedTuple
from generator.planner.blocked import Blocked
from generator.planner.candidates import SizedOptions
from generator.planner.cold_start import model_load_seconds
from generator.planner.inventory import ServerKey
from generator.planner.near_tie import within_near_tie
from generator.planner.option import Option
from generator.planner.tco import billed_per_run, run_usd
from generator.planner.training import run_window
from generator.planner.training_candidates import on_pool_host_ram, training_options
from generator.sizing.constants import Constants
from generator.sizing.performance import training_flops_per_token
from generator.units import HOURS_PER_MONTH, SEQUENCE_HOURS_PLACES
from generator.units import sequence_hours_text as _h
from generator.workload.models import TrainingDeployment, Workload

if TYPE_CHECKING:
    from generator.workload import LoadedWorkload

#: A chain's jobs do not finish by their deadlines on any pool of a server kind (the nearest pool is said).
CHAIN_PAST_DEADLINE = "chain-past-deadline"
#: A job of a chain has no layout on any allowed server (its own reasons follow in the blocked records).
CHAIN_JOB_UNPLACED = "chain-job-unplaced"


class ChainJob(NamedTuple):
    """A job of a chain: its deployment index, deployment and resolved model."""

    dep_index: int
    dep: TrainingDeployment
    model: ResolvedModel


def chain_jobs(loaded: LoadedWorkload, chain: Sequence[int]) -> list[ChainJob]:
    """The jobs of a chain (deployment indices in the order they run) with their models."""
    jobs = []
    for k in chain:
        dep = loaded.workload.deployments[k]
        assert isinstance(dep, TrainingDeployment), "a chain holds training jobs only (validated)"
        jobs.append(ChainJob(k, dep, loaded.models[dep.name]))
    return jobs


def chain_text(jobs: Sequence[ChainJob]) -> str:
    """The chain as its jobs run: ``a -> b -> c``."""
    return " -> ".join(job.dep.name for job in jobs)


def cadence_shares(jobs: Sequence[ChainJob]) -> list[float]:
    """Each job's share of its run that a run of the chain holds: its runs a month over the chain's most frequent.

    1 for every job where they run equally often (or give no runs a month, which a chain of mixed cadences refuses).
    """
    runs = [job.dep.training.runs_per_month for job in jobs]
    most = max((r for r in runs if r), default=None)
    return [r / most if r and most else 1.0 for r in runs]


def chain_runs_per_month(jobs: Sequence[ChainJob]) -> float | None:
    """How often the chain runs: as often as its most frequent job (None where no job gives runs_per_month)."""
    return max((r for job in jobs if (r := job.dep.training.runs_per_month)), default=None)


class Stretch(NamedTuple):
    """A chain's last job run stretched: straight through the gaps between the chain's runs, pre-empted by each."""

    #: The job's name, and its place in the chain (its last).
    job: str
    at: int
    #: Its whole run's hours, at the layout chosen.
    hours: float
    #: Hours from the chain's start: where the jobs before it end in the chain's first run, and where it ends.
    starts_at: float
    finishes_at: float
    #: Runs of the chain that pre-empt it (each: its checkpoint written, the run's jobs, its checkpoint read back).
    interruptions: int
    #: The jobs before it: their hours in a run of the chain, and the hours between the chain's runs (730 / R).
    busy_hours: float
    period_hours: float
    #: Seconds to write its checkpoint (a node's share, at the drives' write rate) and to read it back (at
    #: ``nvme_efficiency`` of their read rate); None where the node has no drive rate (not counted, and said).
    write_s: float | None
    reload_s: float | None
    #: Its ``deadline_hours``, from the chain's start.
    deadline: float

    @property
    def pause_text(self) -> str:
        """What each pre-emption costs it, beside the jobs' run."""
        if self.write_s is None or self.reload_s is None:
            return "its checkpoint's write and read not timed (the servers have no drive rate in the catalog)"
        return f"its checkpoint written in {self.write_s:,.0f} s and read back in {self.reload_s:,.0f} s"


def stretched_index(provider: str, jobs: Sequence[ChainJob]) -> int | None:
    """The chain's job that runs stretched (:class:`Stretch`), None where none does.

    Its last job, on servers bought or owned, where it runs less often than the chain and its ``deadline_hours`` is
    shorter than its slices would take (730 h / its runs a month). Validation refuses such a deadline on a job that is
    not last (:func:`~generator.workload.chains.chain_errors`).
    """
    if provider != "baremetal" or len(jobs) < 2:
        return None
    most, last = chain_runs_per_month(jobs), jobs[-1].dep.training
    runs, due = last.runs_per_month, last.deadline_hours
    if not most or not runs or runs >= most or due is None or due >= HOURS_PER_MONTH / runs:
        return None
    return len(jobs) - 1


def stretched_finish(
    start: float, hours: float, busy: float, period: float, write_h: float, reload_h: float
) -> tuple[float, int] | None:
    """When a job started at ``start`` h ends, run straight on and pre-empted at every ``period`` h, and how often.

    Each pre-emption: its checkpoint's write started ``write_h`` before the period's start, so it ends as the period's
    run starts on time, the jobs before it run (``busy``), its checkpoint read back (``reload_h``). None where a period
    leaves it no time (it never ends).
    """
    gap = period - busy - write_h - reload_h
    if gap <= 0:
        return None
    t, left, n = start, hours, 0
    while True:
        boundary = (n + 1) * period
        if left <= boundary - t:
            return t + left, n
        left -= max(0.0, boundary - write_h - t)
        n += 1
        t = boundary + busy + reload_h


class _Stretching(NamedTuple):
    """The chain's stretched job as its sequences are searched: its place, deadline and the chain's period."""

    at: int
    deadline: float
    period: float
    consts: Constants

    def of(self, jobs: Sequence[ChainJob], busy: float, o: Option) -> Stretch | None:
        """The stretched job at layout ``o`` after ``busy`` h of the jobs before it; None where it never ends."""
        write, reload = _pause_s(o, self.consts)
        hours = _hours(o)
        ends = stretched_finish(busy, hours, busy, self.period, (write or 0.0) / 3600, (reload or 0.0) / 3600)
        if ends is None:
            return None
        name = jobs[self.at].dep.name
        return Stretch(name, self.at, hours, busy, ends[0], ends[1], busy, self.period, write, reload, self.deadline)

    def late(self, jobs: Sequence[ChainJob], busy: float, o: Option) -> bool:
        """Whether the stretched job at ``o`` ends past its deadline (or never)."""
        s = self.of(jobs, busy, o)
        return s is None or s.finishes_at > self.deadline * (1 + 1e-9)


def _pause_s(o: Option, consts: Constants) -> tuple[float | None, float | None]:
    """Seconds a layout's checkpoint takes to write and to read back on its node: one checkpoint of those kept.

    The write as the plan's ``checkpoint_write_s`` times it (a node's share at its drives' write rate), the read as a
    cold start's (:func:`~generator.planner.cold_start.model_load_seconds`).
    """
    each = o.needs.checkpoint_bytes / consts.checkpoints_kept
    write = each / (o.node.nvme_write_gb_per_s * 1e9) if o.node.nvme_write_gb_per_s else None
    reload = model_load_seconds(round(each), o.node, consts)
    return write, reload


def _pause_h(o: Option, consts: Constants) -> float:
    """Hours a pause of a layout's run costs it: its checkpoint written and read back (0 where the node has no drive rate)."""
    write, reload = _pause_s(o, consts)
    return ((write or 0.0) + (reload or 0.0)) / 3600


class _Slices(NamedTuple):
    """How long each job holds the pool in a run of the chain: its run's hours times its share, and a sliced job's pause.

    fix140 (review80 item 6): a job run in slices (share < 1) writes its checkpoint at each slice's end and reads it
    back at the next slice's start (:func:`_pause_s`): R saves and R resumes a month, each slice's hours. A stretched
    job (``stretched_at``) runs no slices: its pauses are its pre-emptions (:class:`Stretch`).
    """

    shares: Sequence[float]
    consts: Constants
    stretched_at: int | None = None

    def sliced(self, k: int) -> bool:
        """Whether job ``k`` runs in slices of its run."""
        return self.shares[k] < 1 and k != self.stretched_at

    def pause_h(self, k: int, o: Option) -> float:
        """A slice's checkpoint write and read back, hours (0 where job ``k`` runs whole or stretched)."""
        return _pause_h(o, self.consts) if self.sliced(k) else 0.0

    def hours(self, k: int, o: Option) -> float:
        """Job ``k``'s hours in a run of the chain at layout ``o``: its share of its run, and a slice's pause."""
        return _hours(o) * self.shares[k] + self.pause_h(k, o)


def _stretching(provider: str, jobs: Sequence[ChainJob], consts: Constants) -> _Stretching | None:
    """The chain's stretched job as the search checks it, None where none runs stretched."""
    k = stretched_index(provider, jobs)
    runs = chain_runs_per_month(jobs)
    due = jobs[k].dep.training.deadline_hours if k is not None else None
    if k is None or not runs or due is None:
        return None
    return _Stretching(k, due, HOURS_PER_MONTH / runs, consts)


def _job_flops(job: ChainJob) -> float | None:
    """A job's training FLOPs (its tokens x epochs), None without ``dataset_tokens``."""
    spec = job.dep.training
    if not spec.dataset_tokens:
        return None
    per_token = training_flops_per_token(job.model.architecture, spec.method, spec.checkpointing, spec.framework)
    return per_token * spec.dataset_tokens * spec.epochs


def chain_deadlines(provider: str, jobs: Sequence[ChainJob]) -> list[float | None]:
    """Each job's deadline from the chain's start: its ``deadline_hours``, the last job's at most the chain's month.

    On servers bought or owned, which run one chain at a time, a run of the chain ends within 730 h / its
    ``runs_per_month`` (one for all its jobs; fuzz24 item H1: 32 runs of a 45 h chain were planned on one GPU).
    """
    out = [job.dep.training.deadline_hours for job in jobs]
    if jobs:  # a run's window, as a job alone has it (training.run_window), for the chain as a whole
        spec = jobs[-1].dep.training._replace(runs_per_month=chain_runs_per_month(jobs))
        out[-1] = run_window(spec, provider)[0]
    return out


def _month_binds(provider: str, jobs: Sequence[ChainJob], deadlines: Sequence[float | None], k: int) -> bool:
    """Whether job ``k``'s deadline is the chain's share of the month, not its own ``deadline_hours``."""
    own, due = jobs[k].dep.training.deadline_hours, deadlines[k]
    return provider == "baremetal" and due is not None and (own is None or due < own)


def paced_deadlines(jobs: Sequence[ChainJob], deadlines: Sequence[float | None] | None = None) -> list[float | None]:
    """A deadline for each job alone that keeps the chain's: its share of the chain's work at the rate the chain needs.

    On one pool each job's hours are about its FLOPs over the pool's rate, so the chain needs the rate
    ``max_j (FLOPs of jobs 1..j) / deadline_j``; a job sized to finish its FLOPs at that rate leaves every later job
    its time. Sizing each job for its own deadline alone would find too few GPUs for the chain (two 7 h jobs, the
    second due at 10 h, each meet theirs on one server and the chain needs two). None: no job of the chain has a
    deadline, or this job has no FLOPs (no ``dataset_tokens``).
    """
    flops = [f * w if f else f for f, w in zip([_job_flops(job) for job in jobs], cadence_shares(jobs), strict=True)]
    due = deadlines if deadlines is not None else [job.dep.training.deadline_hours for job in jobs]
    rate = 0.0
    done = 0.0
    for f, deadline in zip(flops, due, strict=True):
        done += f or 0.0
        if deadline and done:
            rate = max(rate, done / deadline)
    # a job's own deadline is for its whole run: its slice's pace over its share
    return [f / rate / w if f and rate else None for f, w in zip(flops, cadence_shares(jobs), strict=True)]


def _job_options(
    wl: Workload,
    job: ChainJob,
    paced: float | None,
    consts: Constants,
    blocked: list[Blocked],
    free: dict[ServerKey, int] | None,
    sizes: SizedOptions | None,
) -> list[Option]:
    """A job's options within its pins: sized for its own deadline and, where tighter, for its paced one."""
    from generator.planner import honour_pins  # the planner's package imports this module lazily

    options = training_options(wl, job.dep, job.model, consts, blocked, free, sizes)
    own = job.dep.training.deadline_hours
    if paced is not None and (own is None or paced < own * (1 - 1e-9)):
        spec = job.dep.training._replace(deadline_hours=max(paced, 1e-3))
        scratch: list[Blocked] = []  # a paced deadline is the planner's, not the user's: its reasons are not said
        paced_job = job.dep._replace(training=spec)  # kept for the process at the job's own place (speed103)
        options += training_options(wl, paced_job, job.model, consts, scratch, free, sizes, placed=job.dep)
    return honour_pins(job.dep, options)[0]


def _hours(opt: Option) -> float:
    """A layout's run hours (0 where the job has no ``dataset_tokens``; a later deadline is then refused as input)."""
    return opt.candidate.run_hours or 0.0


def _run_cost(provider: str, opt: Option) -> float:
    """What a layout's run costs where it is paid per run (rented); 0 on servers paid by the month."""
    return (run_usd(opt.candidate) or 0.0) if billed_per_run(provider, opt.candidate) else 0.0


class _Miss(NamedTuple):
    """The chain's fastest sequence on a pool, and the first job it finishes past its deadline."""

    finishes: tuple[float, ...]
    late: int
    #: Where the late job is the stretched one: True, and its earliest stretched run (None: the gaps hold none).
    stretched: bool = False
    stretch: Stretch | None = None


def _fastest_miss(
    jobs: Sequence[ChainJob],
    deadlines: Sequence[float | None],
    per_job: list[list[Option]],
    slices: _Slices,
    stretching: _Stretching | None = None,
) -> _Miss | None:
    """Where even each job's fastest layout on the pool leaves one past its deadline, which; None: every deadline is met.

    The fastest layouts make every finish time the earliest it can be, so no other sequence meets what they miss; the
    stretched job (the last) is checked at the layout that ends it soonest after them.
    """
    finish = 0.0
    finishes = []
    late = None
    for k, (deadline, options) in enumerate(zip(deadlines, per_job, strict=True)):
        before = finish
        finish += min(slices.hours(k, o) for o in options)
        finishes.append(finish)
        if late is None and deadline and finish > deadline * (1 + 1e-9):
            late = k
        if late is None and stretching is not None and k == stretching.at:
            runs = [r for o in options if (r := stretching.of(jobs, before, o)) is not None]
            soonest = min(runs, key=lambda r: r.finishes_at, default=None)
            if soonest is None or soonest.finishes_at > stretching.deadline * (1 + 1e-9):
                return _Miss(tuple(finishes), k, True, soonest)
    return None if late is None else _Miss(tuple(finishes), late)


def _best_sequence(
    provider: str,
    deadlines: Sequence[float | None],
    per_job: list[list[Option]],
    slices: _Slices,
    jobs: Sequence[ChainJob] = (),
    stretching: _Stretching | None = None,
) -> tuple[Option, ...] | None:
    """The cheapest sequence of layouts (one per job, in order) that meets every deadline, the earliest on a near tie.

    States (finish hours, cost) are kept on their Pareto front job by job, so the search stays small.
    """
    states: list[tuple[float, float, tuple[Option, ...]]] = [(0.0, 0.0, ())]
    for k, (deadline, options) in enumerate(zip(deadlines, per_job, strict=True)):
        stretched = stretching if stretching is not None and k == stretching.at else None
        grown = [
            (finish + slices.hours(k, o), cost + _run_cost(provider, o), (*chosen, o))
            for finish, cost, chosen in states
            for o in options
            if (not deadline or finish + slices.hours(k, o) <= deadline * (1 + 1e-9))
            and (stretched is None or not stretched.late(jobs, finish, o))
        ]
        grown.sort(key=lambda s: (s[0], s[1], tuple(o.candidate.summary for o in s[2])))
        states = []
        for state in grown:  # keep a state only where it is cheaper than every earlier-finishing one
            if not states or state[1] < states[-1][1] - 1e-9:
                states.append(state)
        if not states:
            return None
    # a near tie on cost (within NEAR_TIE_FRACTION of the cheapest: closer than the step model tells them apart) is
    # settled by the earlier finish (acc104 item 4: rented per run, tune-a at DP4 on half the pool was 0.003% cheaper
    # than at DP8 and took 5.1 h against 2.6 h); the Pareto front holds the earliest sequence at each cost
    cheapest = min(cost for _, cost, _ in states)
    return min((s for s in states if within_near_tie(s[1], cheapest)), key=lambda s: (s[0], s[1]))[2]


def _on_the_pools_dimms(
    wl: Workload,
    jobs: Sequence[ChainJob],
    sequence: tuple[Option, ...],
    deadlines: Sequence[float | None],
    consts: Constants,
    free: dict[ServerKey, int] | None,
    slices: _Slices,
    stretching: _Stretching | None = None,
) -> tuple[Option, ...] | None:
    """``sequence`` with each job timed at the DIMMs of the pool's node, built for the largest host RAM of its jobs.

    fix121 (review78 item 9): each job was timed at the DIMM speed its own host RAM would give, while the node is
    built for the largest job's RAM (``assemble``'s pool ``NodeNeeds``), so a ZeRO-Offload job before a job that holds
    more was timed at one DIMM a channel on a node built with two. None where, so timed, a job finishes past its
    deadline (a pool of more servers may still meet it).
    """
    ram = max(o.needs.host_ram_bytes for o in sequence)
    timed = [on_pool_host_ram(wl, job.dep, job.model, o, ram, consts, free) for job, o in zip(jobs, sequence, strict=True)]
    if any(o is None for o in timed):
        return None
    out = tuple(o for o in timed if o is not None)
    finish = 0.0
    for k, (deadline, o) in enumerate(zip(deadlines, out, strict=True)):
        if stretching is not None and k == stretching.at and stretching.late(jobs, finish, o):
            return None
        finish += slices.hours(k, o)
        if deadline and finish > deadline * (1 + 1e-9):
            return None
    return out


def _chain_option(
    provider: str,
    jobs: Sequence[ChainJob],
    sequence: tuple[Option, ...],
    slices: _Slices,
    stretching: _Stretching | None = None,
) -> Option:
    """The chain as one option: the widest job's servers, the hours summed, a rented chain's cost summed.

    Each job holds the pool in a run of the chain for its share of its run and, sliced, a slice's checkpoint write and
    read back; stretched, its share of its pre-emptions' (fix140). On servers all owned, the chain's runs' energy: its
    hours summed, at the widest job's servers (fix89).
    """
    widest = max(sequence, key=lambda o: (o.candidate.nodes, o.candidate.gpus, o.candidate.summary))
    c = widest.candidate
    timed = all(o.candidate.run_hours for o in sequence)
    shares = slices.shares
    start = 0.0
    steps = []
    stretch = None
    pauses: list[float] = []
    timings = [_pause_s(o, slices.consts) for o in sequence]
    for k, (job, o, share) in enumerate(zip(jobs, sequence, shares, strict=True)):
        pause = slices.pause_h(k, o)
        hours = _hours(o) * share + pause
        shape_reason = getattr(o.shape, "reason", o.candidate.summary)
        sliced = ""
        if share < 1:
            timed_pause = None not in timings[k]
            with_pause = (
                f" and {pause * 3600:,.0f} s for its checkpoint's write at the slice's end and read back at the next"
                if timed_pause
                else " (its checkpoint's write and read back at each slice not timed: the servers have no drive rate)"
            )
            sliced = f", {share:.4g} of its {_h(_hours(o))} h run{with_pause}"
        span = f" ({_h(start)}-{_h(start + hours)} h{sliced})"
        if timed and stretching is not None and k == stretching.at:
            stretch = stretching.of(jobs, start, o)
            assert stretch is not None, "a stretched job is searched only where it ends"
            # its month: its run and its pre-emptions' checkpoint writes and reads, its share in each run of the chain
            pause = stretch.interruptions * _pause_h(o, slices.consts) * share
            hours = _hours(o) * share + pause
            span = (
                f" ({_h(stretch.starts_at)}-{_h(stretch.finishes_at)} h, its {_h(_hours(o))} h run straight through the "
                f"gaps: {_preempted_text(stretch.interruptions).removeprefix('is ')})"
            )
        pauses.append(pause)
        steps.append(f"{job.dep.name} {shape_reason}" + (span if timed else ""))
        start += hours
    held = [_hours(o) * share + pause for o, share, pause in zip(sequence, shares, pauses, strict=True)]
    finish = math.fsum(held) if timed else None
    rate = c.usd_per_hour
    if finish and billed_per_run(provider, c):  # paid per job-hour: the jobs' runs summed, as one rate over the chain
        # a sliced job's run cost counts its share in each run of the chain, as its hours do (review80 item 3: the
        # monthly job's whole run was charged to every nightly run of the chain), and its slice's pause at its rate
        costs = [run_usd(o.candidate) for o in sequence]
        rate = (
            None
            if None in costs
            else math.fsum((x or 0.0) / _hours(o) * h for x, o, h in zip(costs, sequence, held, strict=True)) / finish
        )
    gpus = max(o.candidate.gpus for o in sequence)
    summary = (
        f"sequence {chain_text(jobs)} on {c.nodes} x {widest.hardware.platform.id} ({c.gpus_per_node} x {c.gpu_id}): "
        + "; ".join(steps)
    )
    owned = c.owned_runs
    if owned is not None and finish:
        owned = owned._replace(hours=finish)
        rate = owned.usd_per_month / HOURS_PER_MONTH
    candidate = c._replace(
        gpus=gpus,
        idle_gpus=c.gpus_per_node * c.nodes - gpus,
        usd_per_hour=rate,
        opex_usd_per_month=c.opex_usd_per_month if owned is None else owned.usd_per_month,
        owned_runs=owned,
        summary=summary,
        latency_s=round((finish or 0.0) * 3600, 6),
        run_hours=finish,
    )
    return widest._replace(
        candidate=candidate,
        sequence=sequence,
        parts=(),
        runs_per_month=chain_runs_per_month(jobs),
        stretch=stretch,
        checkpoint_pauses=tuple((*t, p) for t, p in zip(timings, pauses, strict=True)),
    )


def _runs_text(n: int) -> str:
    return f"{n} run{'' if n == 1 else 's'}"


def _deadline_blocked(
    jobs: Sequence[ChainJob], pool: Option, miss: _Miss, deadlines: Sequence[float | None], month: bool
) -> Blocked:
    """The nearest a pool of one kind comes to the chain's deadlines: the first job it leaves late, and by how much.

    ``month``: the deadline missed is the chain's share of the month (:func:`chain_deadlines`), not ``deadline_hours``.
    """
    c = pool.candidate
    late = jobs[miss.late]
    if miss.stretched:
        return _stretch_blocked(jobs, pool, miss)
    deadline = deadlines[miss.late] or 0.0
    runs = chain_runs_per_month(jobs) or 0.0
    due = (
        f"past the {deadline:.4g} h each of its {runs:g} runs a month has on the same servers (counted"
        if month
        else f"past its {deadline:g} h deadline (deadline_hours counts"
    )
    ran = []
    start = 0.0
    for job, finish, share in zip(jobs[: miss.late + 1], miss.finishes, cadence_shares(jobs), strict=False):
        sliced = f", {share:.4g} of its run and its checkpoint's write and read back" if share < 1 else ""
        ran.append(f"{job.dep.name} {finish - start:.1f} h ({_h(start)}-{_h(finish)} h{sliced})")
        start = finish
    why = (
        f"the sequence {chain_text(jobs)} on at most {c.nodes} x {pool.hardware.platform.id} ({c.gpus_per_node} x "
        f"{c.gpu_id}) runs, each job at its fastest there: {', '.join(ran)}; {late.dep.name} finishes at "
        f"{_past_text(miss.finishes[miss.late], deadline)} h, {due} from the start of {jobs[0].dep.name}, the chain's "
        "first job)"
    )
    # the job whose deadline is missed, and which
    missed = (late.dep.name, *(("runs_per_month",) if month else ()))
    return _chain_blocked(pool, why, miss.finishes[miss.late] / deadline - 1 if deadline else None, missed)


def _chain_blocked(pool: Option, why: str, excess: float | None, missed: tuple[str, ...]) -> Blocked:
    """A pool of one kind on which the chain misses a deadline (:data:`CHAIN_PAST_DEADLINE`), ``why`` said."""
    c = pool.candidate
    return Blocked(
        c.gpu_id,
        pool.hardware.platform.id,
        CHAIN_PAST_DEADLINE,
        why,
        gpus_per_node=c.gpus_per_node,
        nodes=c.nodes,
        owned=c.owned_nodes,
        excess=excess,
        missed=missed,
    )


def _past_text(finish: float, deadline: float) -> str:
    """A finish past a deadline, to 0.1 h, or to the 0.001 h it takes to read past it (6.446 h past 6.44, not 6.4)."""
    return _h(finish) if float(_h(finish)) > deadline else f"{finish:.3f}"


def _stretch_blocked(jobs: Sequence[ChainJob], pool: Option, miss: _Miss) -> Blocked:
    """The stretched job's earliest finish on a pool of one kind, past its deadline (or never, where the gaps hold none)."""
    c = pool.candidate
    late = jobs[miss.late]
    due = late.dep.training.deadline_hours or 0.0
    runs = late.dep.training.runs_per_month or 0.0
    before = chain_text(jobs[: miss.late])
    where = f"the sequence {chain_text(jobs)} on at most {c.nodes} x {pool.hardware.platform.id} ({c.gpus_per_node} x {c.gpu_id})"
    month = f"({HOURS_PER_MONTH} h / its {runs:g} run{'' if runs == 1 else 's'} a month)"
    s = miss.stretch
    if s is None:
        why = (
            f"{where}: {late.dep.name}, due in {due:g} h, shorter than the {HOURS_PER_MONTH / runs:.4g} h its slices "
            f"would take {month}, would run straight through the gaps between "
            f"the runs of {before}, but a gap leaves it no time once they and its checkpoint's write and read are counted"
        )
        finish = math.inf
    else:
        finish = s.finishes_at
        preempted = f"{_preempted_text(s.interruptions)} and " if s.interruptions else ""
        why = (
            f"{where}: {late.dep.name}, due in {due:g} h, shorter than the {HOURS_PER_MONTH / runs:.4g} h its slices would "
            f"take {month}, runs straight through the gaps between the runs of "
            f"{before} ({_h(s.busy_hours)} h every {s.period_hours:.4g} h), pre-empted by each ({s.pause_text}): at "
            f"its fastest there, its {_h(s.hours)} h run starts at {_h(s.starts_at)} h, {preempted}ends at "
            f"{_h(s.finishes_at)} h, past its {due:g} h deadline (deadline_hours counts from the start of "
            f"{jobs[0].dep.name}, the chain's first job{_rough_text(s)})"
        )
    # the job whose deadline is missed, and the earliest deadline its stretched run meets (rounded up)
    missed = (late.dep.name, "stretched", *((f"{math.ceil(s.finishes_at * 10) / 10:.1f}",) if s is not None else ()))
    return _chain_blocked(pool, why, finish / due - 1 if due else None, missed)


def _preempted_text(n: int) -> str:
    """How many runs of the chain pre-empt a stretched run."""
    return f"is pre-empted by {_runs_text(n)} of the sequence" if n else "ends before the sequence's next run"


def _rough_text(s: Stretch) -> str:
    """The rough figure beside the stretched finish: its hours over the share of the time the other jobs leave."""
    if not s.interruptions:
        return ""
    held = s.busy_hours / s.period_hours
    return f"; roughly {s.hours:.1f} h / (1 - {held:.3f}, the share of the time the others hold) = {s.hours / (1 - held):.1f} h"


def chain_options(
    wl: Workload,
    jobs: Sequence[ChainJob],
    consts: Constants,
    blocked: list[Blocked],
    free: dict[ServerKey, int] | None = None,
    sizes: SizedOptions | None = None,
) -> list[Option]:
    """The chain's options: for each server kind every job can run on and each pool size, the best sequence there.

    A pool of ``n`` servers holds every layout of ``n`` servers or fewer; the option of a pool whose best sequence
    uses fewer servers is that smaller pool's, so it is formed once. Where a job has no layout at all, its reasons
    and a :data:`CHAIN_JOB_UNPLACED` record naming it go to ``blocked``; where pools exist but miss a deadline, the
    nearest pool of each kind is said (:data:`CHAIN_PAST_DEADLINE`).
    """
    provider = wl.hardware.provider
    deadlines = chain_deadlines(provider, jobs)
    shares = cadence_shares(jobs)
    stretching = _stretching(provider, jobs, consts)
    if stretching is not None:  # its deadline is its stretched run's; a run of the chain has the chain's window
        deadlines[stretching.at] = stretching.period
    slices = _Slices(shares, consts, stretching.at if stretching is not None else None)
    per_job: list[dict[ServerKey, list[Option]]] = []
    reasons: list[Blocked] = []
    for job, paced in zip(jobs, paced_deadlines(jobs, deadlines), strict=True):
        found: list[Blocked] = []
        options = _job_options(wl, job, paced, consts, found, free, sizes)
        if not options:  # that job's own reasons, as if it ran alone
            blocked += [*found, Blocked("", "", CHAIN_JOB_UNPLACED, job.dep.name)]
            return []
        reasons += found
        by_kind: dict[ServerKey, list[Option]] = {}
        for o in options:
            by_kind.setdefault(o.server_kind, []).append(o)
        per_job.append(by_kind)
    kinds = sorted(set.intersection(*(set(k) for k in per_job)))
    out: list[Option] = []
    for kind in kinds:
        nearest: Blocked | None = None
        cap = wl.hardware.max_nodes  # a pool past the fleet's cap is no plan: the nearest within it is said (fix138)
        for nodes in sorted({o.candidate.nodes for by_kind in per_job for o in by_kind[kind]}):
            if cap is not None and nodes > cap:
                continue
            fitting = [[o for o in by_kind[kind] if o.candidate.nodes <= nodes] for by_kind in per_job]
            if not all(fitting):
                continue
            widest = max((o for opts in fitting for o in opts), key=lambda o: (o.candidate.nodes, o.candidate.summary))
            miss = _fastest_miss(jobs, deadlines, fitting, slices, stretching)
            if miss is not None:
                month = not miss.stretched and _month_binds(provider, jobs, deadlines, miss.late)
                nearest = _deadline_blocked(jobs, widest, miss, deadlines, month)
                continue
            sequence = _best_sequence(provider, deadlines, fitting, slices, jobs, stretching)
            if sequence is not None and max(o.candidate.nodes for o in sequence) == nodes:
                sequence = _on_the_pools_dimms(wl, jobs, sequence, deadlines, consts, free, slices, stretching)
            if sequence is not None and max(o.candidate.nodes for o in sequence) == nodes:
                out.append(_chain_option(provider, jobs, sequence, slices, stretching))
        if nearest is not None and not any(o.server_kind == kind for o in out):
            blocked.append(nearest)
    blocked += reasons
    return out


def unplaced_job(blocked: Sequence[Blocked]) -> str | None:
    """The name of the chain's job that has no layout at all, where one has none."""
    return next((b.why for b in blocked if b.code == CHAIN_JOB_UNPLACED), None)


def deadline_misses(blocked: Sequence[Blocked]) -> list[Blocked]:
    """The chain's nearest misses of its deadlines, nearest first."""
    misses = [b for b in blocked if b.code == CHAIN_PAST_DEADLINE]
    return sorted(misses, key=lambda b: (b.excess if b.excess is not None else math.inf, b.text))


def chain_failure(
    loaded: LoadedWorkload, chain: Sequence[int], blocked: list[Blocked], options: Sequence[Option]
) -> tuple[int, list[Blocked]]:
    """Why a chain has no plan: raise its deadlines missed as the chain's, else name the job the reasons are about.

    Returns the deployment index the planner's message is about (a job of the chain with no layout at all, else the
    chain's first job) and the reasons to say.
    """
    wl = loaded.workload
    index = {wl.deployments[k].name: k for k in chain}
    unplaced = unplaced_job(blocked)
    if unplaced is not None:
        return index[unplaced], [b for b in blocked if b.code != CHAIN_JOB_UNPLACED]
    misses = deadline_misses(blocked)
    if options or not misses:
        return chain[0], blocked
    late = index[misses[0].missed[0]]
    month = "runs_per_month" in misses[0].missed  # the chain's share of the month, not the job's deadline_hours
    stretched = "stretched" in misses[0].missed  # its run straight through the gaps (fix138)
    dep = wl.deployments[late]
    assert isinstance(dep, TrainingDeployment)
    where = loaded.document.locate(("deployments", late, "training", "runs_per_month" if month else "deadline_hours"))
    jobs = chain_jobs(loaded, chain)
    reasons = "; ".join(b.text for b in misses[:3])
    raise ChainDeadlineError(
        f"the training sequence {chain_text(jobs)} (run_after) has no feasible plan: {reasons}"
        f"; to unblock: {_deadline_ways(wl, dep, jobs, month, misses[0].missed[2:] if stretched else None)}",
        where,
        stretched,
        reasons,
    )


def _deadline_ways(
    wl: Workload,
    late: TrainingDeployment,
    jobs: Sequence[ChainJob],
    month: bool = False,
    stretched: Sequence[str] | None = None,
) -> str:
    """How a chain whose job ends past its deadline (``month``: its share of the month) could meet it.

    ``stretched``: the late job runs stretched (:class:`Stretch`), with its earliest finish where it has one.
    """
    before = [job.dep.name for job in jobs[: [j.dep.name for j in jobs].index(late.name)]]
    if stretched is not None:
        runs = late.training.runs_per_month or 1.0
        at = f"{stretched[0]} h or more, or " if stretched else ""
        later = (
            f"a later deadline_hours for {late.name} ({at}{HOURS_PER_MONTH / runs:.4g} h or more to run it in slices "
            "of its run, one in each run of the sequence)"
        )
    else:
        later = f"a later deadline_hours for {late.name}"
    ways = [
        "fewer runs_per_month for the chain" if month else later,
        f"fewer dataset_tokens or epochs for {', '.join([*before, late.name])}",
        "a faster GPU",
    ]
    if not wl.hardware.buy:
        ways.append("more owned servers under hardware.inventory, or let the plan buy (drop hardware.buy: false)")
    else:
        ways.append("more servers for the chain (hardware.max_nodes, max_budget_usd_per_month, rack power)")
    ways.append(f"run {late.name} on servers of its own (drop its run_after)")
    return ", ".join(ways[:-1]) + f", or {ways[-1]}"


class Sequenced(NamedTuple):
    """A job of a chain as the plan is assembled: the chain's option, its position, and its own layout."""

    chain: Option
    position: int
    first: int
    own: Option
    #: Each job's share of its run that a run of the chain holds (:func:`cadence_shares`).
    shares: tuple[float, ...] = ()

    @property
    def stretch(self) -> Stretch | None:
        """The stretched run of the job, where it runs stretched (:class:`Stretch`)."""
        s = self.chain.stretch
        return s if s is not None and s.at == self.position else None

    @property
    def job_hours(self) -> list[float | None]:
        """Each job's hours in a run of the chain, in its order (None where a job has no ``dataset_tokens``).

        Its run's hours, or its slice's where it runs less often than the chain, with the slice's checkpoint write
        and read back (fix140: a stretched job's share of its pre-emptions').
        """
        shares = self.shares or (1.0,) * len(self.chain.sequence)
        pauses = [p[2] for p in self.chain.checkpoint_pauses] or [0.0] * len(self.chain.sequence)
        return [
            None if o.candidate.run_hours is None else o.candidate.run_hours * share + pause
            for o, share, pause in zip(self.chain.sequence, shares, pauses, strict=True)
        ]

    @property
    def checkpoint_s(self) -> tuple[float | None, float | None]:
        """Seconds to write the job's checkpoint and to read it back (None: not timed, or not known)."""
        pauses = self.chain.checkpoint_pauses
        return (pauses[self.position][0], pauses[self.position][1]) if pauses else (None, None)


def sequenced_jobs(wl: Workload, chosen: Sequence[tuple[int, Option, list[Option]]]) -> dict[int, Sequenced]:
    """Each job of a chain chosen (deployment index) -> the chain's option, its place in it and its own layout."""
    from generator.workload.chains import chain_of

    out = {}
    for index, opt, _ in chosen:
        chain = chain_of(wl, index) if opt.sequence else None
        if chain is not None:
            position = chain.index(index)
            runs = [d.training.runs_per_month for k in chain if isinstance(d := wl.deployments[k], TrainingDeployment)]
            most = max((r for r in runs if r), default=None)
            shares = tuple(r / most if r and most else 1.0 for r in runs)
            out[index] = Sequenced(opt, position, chain[0], opt.sequence[position], shares)
    return out


class Turn(NamedTuple):
    """A chain job's turn: the order, its place (from 1), its pool, and the hours of the sequence it runs between."""

    sequence: str
    sequence_position: int
    sequence_pool: str
    runs_after: str | None
    starts_at_hours: float | None
    finishes_at_hours: float | None
    #: The job's own deadline_hours, which counts from the sequence's start.
    deadline_hours_from_sequence_start: float | None
    #: The share of its run a run of the sequence holds where it runs less often than the sequence (None: all of it,
    #: or run stretched).
    share_of_run_per_sequence: float | None = None
    #: Run stretched (:class:`Stretch`): the runs of the sequence that pre-empt it, its checkpoint's write and read back
    #: at each (seconds), and how long the jobs before it run each time. None (and left out of the details) otherwise.
    stretched_preemptions: int | None = None
    stretched_checkpoint_write_s: float | None = None
    stretched_checkpoint_read_s: float | None = None
    stretched_preempted_hours: float | None = None
    #: The hours between the sequence's runs (730 / its runs a month), where it runs stretched.
    stretched_period_hours: float | None = None
    #: Run stretched: the hours of the sequence at which its checkpoint's write starts, one for each run that pre-empts
    #: it: that run's start less the write's time, so the run starts on time (fix140).
    stretched_checkpoint_at_hours: tuple[float, ...] | None = None
    #: Run stretched: the hours its pre-emptions' checkpoint writes and reads add to a run of it (fix140).
    stretched_checkpoint_hours_per_run: float | None = None
    #: Run in slices: its checkpoint written at each slice's end and read back at the next's start, seconds (fix140,
    #: review80 item 6; counted in its slice's hours). None where the servers have no drive rate.
    slice_checkpoint_write_s: float | None = None
    slice_checkpoint_read_s: float | None = None
    #: Run in slices: the hours its slices' checkpoint writes and reads add to a run of it (one of each a slice).
    slice_checkpoint_hours_per_run: float | None = None

    def details(self) -> dict[str, object]:
        """The turn as the deployment's details (spec.json, SPEC.md); a stretched run's or a slice's figures only there."""
        out: dict[str, object] = dict(zip(self._fields, self, strict=True))
        for key in self._fields:
            stretched = key.startswith("stretched_") and self.stretched_preemptions is None
            if stretched or (key.startswith("slice_") and self.share_of_run_per_sequence is None):
                del out[key]
        if self.stretched_checkpoint_at_hours is not None:
            out["stretched_checkpoint_at_hours"] = list(self.stretched_checkpoint_at_hours)
        return out

    def _slice_pause_text(self) -> str:
        """A slice's checkpoint write and read back, as its hours count them."""
        write, read = self.slice_checkpoint_write_s, self.slice_checkpoint_read_s
        if write is None or read is None:
            return ", its checkpoint's write and read back at each slice not timed (the servers have no drive rate)"
        each = 1 / (self.share_of_run_per_sequence or 1.0)
        return (
            f" and {write + read:,.0f} s for its checkpoint, written at the slice's end in {write:,.0f} s and read back "
            f"at the next slice's start in {read:,.0f} s ({each:.4g} saves and resumes a run of it, in the slice's hours)"
        )

    def _later_jobs_delay(self) -> str:
        """What the slice does to the jobs after it in the sequence.

        review80 item 5: "never delayed" was said where the slice ran first and the nightly job started 0.73 h late.
        """
        later = self.sequence.split(" -> ")[self.sequence_position :]
        if not later:
            return "and the more frequent jobs' runs are never delayed by it (it runs last)"
        by = ""
        if self.starts_at_hours is not None and self.finishes_at_hours is not None:
            by = f" by its slice, {self.finishes_at_hours - self.starts_at_hours:.2f} h,"
        return f"and it delays {', '.join(later)}{by} in every run of the sequence (run_after puts it before them)"

    def _stretched_text(self) -> str:
        """How a stretched run shares the servers (fix138)."""
        before = " -> ".join(self.sequence.split(" -> ")[: self.sequence_position - 1])
        at = ", ".join(f"{h:.3f} h" for h in self.stretched_checkpoint_at_hours or ())
        pause = (
            f"its checkpoint's write started {self.stretched_checkpoint_write_s:,.0f} s before that run's start"
            f"{f' (at {at} of the sequence)' if at else ''}, so the run starts on time, and read back in "
            f"{self.stretched_checkpoint_read_s:,.0f} s after it"
            if self.stretched_checkpoint_write_s is not None and self.stretched_checkpoint_read_s is not None
            else "its checkpoint's write and read back not timed (the servers have no drive rate in the catalog)"
        )
        runs = self.stretched_preemptions or 0
        assert self.starts_at_hours is not None, "a stretched run is timed"
        assert self.finishes_at_hours is not None, "a stretched run is timed"
        said = (
            f"{runs} run{'' if runs == 1 else 's'} of the sequence pre-empt{'s' if runs == 1 else ''} it and it finishes"
            if runs
            else "it finishes before the sequence's next run"
        )
        return (
            f"; its deadline is shorter than its slices would take, so it runs stretched: from {_h(self.starts_at_hours)} h "
            f"straight through the gaps between the runs of {before} ({_h(self.stretched_preempted_hours or 0.0)} h every "
            f"{self.stretched_period_hours:.4g} h), pre-empted at each ({pause}) and resumed; {said} at "
            f"{_h(self.finishes_at_hours)} h of the sequence; the other jobs' runs keep their own hours and deadlines"
        )

    def reason(self, servers: int) -> str:
        """Where the job runs in the sequence, when it starts and ends, and its deadline."""
        text = (
            f"runs {_ordinal(self.sequence_position)} in the sequence {self.sequence} (run_after) on the same "
            f"{servers} server(s), pool {self.sequence_pool}"
        )
        if self.stretched_preemptions is not None:
            text += self._stretched_text()
            if self.deadline_hours_from_sequence_start is not None:
                text += f", within its {self.deadline_hours_from_sequence_start:g} h deadline, counted from the sequence's start"
            return text
        if self.starts_at_hours is not None and self.finishes_at_hours is not None:
            text += f": starts at {_h(self.starts_at_hours)} h and finishes at {_h(self.finishes_at_hours)} h of the sequence"
        if self.share_of_run_per_sequence is not None:
            each = 1 / self.share_of_run_per_sequence
            # hostile81 item 6: where a job of the sequence gives no dataset_tokens the hours are unknown, and "ends
            # within 30 runs" was said of a run whose length, and the sequence's fit in its share of the month, nobody checked
            ends = (
                f"a run of it ends within {each:.4g} runs of the sequence"
                if self.starts_at_hours is not None
                else f"a run of it is to end within {each:.4g} runs of the sequence, which is not checked: the sequence's "
                "hours are not known (a job of it gives no dataset_tokens)"
            )
            text += (
                f"; it runs less often than the sequence, so each run of the sequence holds {self.share_of_run_per_sequence:.4g} "
                f"of its run{self._slice_pause_text()}, checkpointed at the slice's end and resumed in the next: {ends}, "
                f"{self._later_jobs_delay()}"
            )
        if self.deadline_hours_from_sequence_start is not None:
            text += f", within its {self.deadline_hours_from_sequence_start:g} h deadline, counted from the sequence's start"
        return text


def turn(wl: Workload, job: Sequenced, pool: str) -> Turn:
    """A chain job's turn in its sequence on ``pool``."""
    from generator.workload.chains import chain_of

    chain = chain_of(wl, job.first) or ()
    names = [wl.deployments[k].name for k in chain]
    hours = job.job_hours
    timed = None not in hours
    start = math.fsum(h or 0.0 for h in hours[: job.position])
    dep = wl.deployments[chain[job.position]]
    s = job.stretch
    if s is not None:
        return Turn(
            " -> ".join(names),
            job.position + 1,
            pool,
            names[job.position - 1] if job.position else None,
            round(s.starts_at, SEQUENCE_HOURS_PLACES),
            round(s.finishes_at, SEQUENCE_HOURS_PLACES),
            s.deadline,
            None,
            s.interruptions,
            None if s.write_s is None else round(s.write_s, 1),
            None if s.reload_s is None else round(s.reload_s, 1),
            round(s.busy_hours, 3),
            round(s.period_hours, 3),
            tuple(round((n + 1) * s.period_hours - (s.write_s or 0.0) / 3600, 3) for n in range(s.interruptions)),
            round(s.interruptions * ((s.write_s or 0.0) + (s.reload_s or 0.0)) / 3600, 4),
        )
    sliced = job.shares[job.position] if job.shares and job.shares[job.position] < 1 else None
    write, read = job.checkpoint_s if sliced is not None else (None, None)
    return Turn(
        " -> ".join(names),
        job.position + 1,
        pool,
        names[job.position - 1] if job.position else None,
        round(start, SEQUENCE_HOURS_PLACES) if timed else None,
        round(start + (hours[job.position] or 0.0), SEQUENCE_HOURS_PLACES) if timed else None,
        dep.training.deadline_hours if isinstance(dep, TrainingDeployment) else None,
        sliced,
        slice_checkpoint_write_s=None if write is None else round(write, 1),
        slice_checkpoint_read_s=None if read is None else round(read, 1),
        slice_checkpoint_hours_per_run=(
            round(((write or 0.0) + (read or 0.0)) / 3600 / sliced, 4) if sliced is not None else None
        ),
    )


def _ordinal(n: int) -> str:
    """1 -> first, 2 -> second, ... (``n``th past tenth)."""
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
    return words[n - 1] if n <= len(words) else f"{n}th"
