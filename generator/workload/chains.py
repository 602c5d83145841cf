"""Training jobs run one after another on the same servers (``training.run_after``): the chains and their checks.

A chain is a linear sequence of training deployments, each after the one it names: they share one pool and run in
turn, and every job's ``deadline_hours`` counts from the start of the chain's first job.
"""

from __future__ import annotations

from generator.catalog import suggest
from generator.errors import InputError
from generator.units import HOURS_PER_MONTH
from generator.workload.loader import Document
from generator.workload.models import TrainingDeployment, Workload


def _predecessors(wl: Workload) -> dict[int, int]:
    """Each training job's index -> the index of the training job it runs after, where ``run_after`` names one."""
    index = {dep.name: i for i, dep in enumerate(wl.deployments)}
    out: dict[int, int] = {}
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, TrainingDeployment) or dep.training.run_after is None:
            continue
        j = index.get(dep.training.run_after)
        if j is not None and j != i and isinstance(wl.deployments[j], TrainingDeployment):
            out[i] = j
    return out


def training_chains(wl: Workload) -> tuple[tuple[int, ...], ...]:
    """The chains of two or more training jobs, each as deployment indices in the order they run.

    Over a workload :func:`chain_errors` passed: every job runs after at most one and has at most one after it,
    and no chain is a cycle.
    """
    before = _predecessors(wl)
    after = {j: i for i, j in sorted(before.items(), reverse=True)}  # the first in file order where several (refused)
    chains = []
    for head in sorted(set(after) - set(before)):
        chain = [head]
        while chain[-1] in after and after[chain[-1]] not in chain:
            chain.append(after[chain[-1]])
        chains.append(tuple(chain))
    return tuple(chains)


def chain_of(wl: Workload, index: int) -> tuple[int, ...] | None:
    """The chain deployment ``index`` runs in, None where it runs in none."""
    return next((chain for chain in training_chains(wl) if index in chain), None)


def chain_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every ``run_after`` that names no other training deployment, forks, loops or joins jobs that cannot share servers."""
    errors = _name_errors(doc, wl)
    before = _predecessors(wl)
    errors += _fork_errors(doc, wl, before)
    errors += _cycle_errors(doc, wl, before)
    if wl.hardware.fixed is not None:
        errors += [
            InputError(
                "run_after places a training job on another job's servers; hardware.fixed plans no training job: drop "
                "run_after or hardware.fixed",
                doc.locate(("deployments", i, "training", "run_after")),
            )
            for i in sorted(before)
        ]
    if not errors:
        for chain in training_chains(wl):
            errors += _shared_server_errors(doc, wl, chain) + _timing_errors(doc, wl, chain) + _runs_errors(doc, wl, chain)
    return errors


def _name_errors(doc: Document, wl: Workload) -> list[InputError]:
    """``run_after`` naming no deployment, an inference deployment, or the job itself."""
    errors = []
    trained = [d.name for d in wl.deployments if isinstance(d, TrainingDeployment)]
    kinds = {d.name: d for d in wl.deployments}
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, TrainingDeployment) or (name := dep.training.run_after) is None:
            continue
        where = doc.locate(("deployments", i, "training", "run_after"))
        if name == dep.name:
            errors.append(InputError(f"run_after '{name}' names this deployment itself: a job cannot run after itself", where))
        elif name not in kinds:
            others = [n for n in trained if n != dep.name]
            listed = f" (training deployments: {', '.join(others)})" if others else " (it has no other training deployment)"
            errors.append(
                InputError(f"run_after '{name}' names no deployment of this workload{listed}{suggest(name, others)}", where)
            )
        elif not isinstance(kinds[name], TrainingDeployment):
            errors.append(
                InputError(
                    f"run_after '{name}' names an inference deployment: a training job runs after another training job, "
                    "on its servers (a service never ends)",
                    where,
                )
            )
    return errors


def _fork_errors(doc: Document, wl: Workload, before: dict[int, int]) -> list[InputError]:
    """A second job after the same job: chains are linear (each job has at most one job after it)."""
    errors = []
    first_after: dict[int, int] = {}
    for i in sorted(before):
        j = before[i]
        if j not in first_after:
            first_after[j] = i
            continue
        other = wl.deployments[first_after[j]].name
        errors.append(
            InputError(
                f"'{other}' already runs after '{wl.deployments[j].name}': at most one job runs after another (a chain "
                f"is one sequence); run this job after '{other}' or after the last job of that chain",
                doc.locate(("deployments", i, "training", "run_after")),
            )
        )
    return errors


def _cycle_errors(doc: Document, wl: Workload, before: dict[int, int]) -> list[InputError]:
    """A loop of ``run_after``: no job of it would start first. Said once, at its first job in the file."""
    errors = []
    reported: set[int] = set()
    for start in sorted(before):
        path = [start]
        while path[-1] in before and before[path[-1]] not in path:
            path.append(before[path[-1]])
        if path[-1] not in before:
            continue  # reaches a first job
        loop = path[path.index(before[path[-1]]) :]
        if reported & set(loop):
            continue
        reported |= set(loop)
        runs = list(reversed(loop))  # each job before the one that runs after it
        first = min(runs)
        at = runs.index(first)
        order = [wl.deployments[k].name for k in runs[at:] + runs[:at]]
        errors.append(
            InputError(
                f"run_after makes a loop ({' -> '.join([*order, order[0]])}): no job of it would start first; drop "
                "run_after from the job that should run first",
                doc.locate(("deployments", first, "training", "run_after")),
            )
        )
    return errors


def _shared_server_errors(doc: Document, wl: Workload, chain: tuple[int, ...]) -> list[InputError]:
    """Jobs of one chain pinned to different platforms, or naming different pools: they run on the same servers."""
    errors = []
    for field in ("platform", "pool"):
        first: tuple[int, str] | None = None
        for i in chain:
            value = getattr(wl.deployments[i], field)
            if value is None:
                continue
            if first is None:
                first = (i, value)
            elif value != first[1]:
                holder = wl.deployments[first[0]].name
                errors.append(
                    InputError(
                        f"{field} '{value}' differs from '{first[1]}' of '{holder}', which runs in the same chain: the jobs "
                        f"of a chain run one after another on the same servers; give them one {field}, or set it on one "
                        "job only",
                        doc.locate(("deployments", i, field)),
                    )
                )
    return errors + _capacity_errors(doc, wl, chain)


def _capacity_errors(doc: Document, wl: Workload, chain: tuple[int, ...]) -> list[InputError]:
    """Jobs of one chain of different ``capacity_type``: a pool is one node group of one capacity type.

    hostile82 item 6: a spot job and an on-demand job after it were planned as two pools (one spot, one on demand), each
    said to run "in the sequence ... on the same servers" and timed after the other, a sequence no servers ran. Unlike
    platform and pool, capacity_type has a default (on demand), so every job of the chain must say the same.
    """
    first = chain[0]
    kind = wl.deployments[first].capacity_type
    for i in chain[1:]:
        other = wl.deployments[i].capacity_type
        if other == kind:
            continue
        given = "capacity_type" in doc.data["deployments"][i]
        at = ("deployments", i, "capacity_type") if given else ("deployments", i, "training", "run_after")
        said = "" if given else " (the default)"
        return [
            InputError(
                f"capacity_type {other}{said} differs from {kind} of '{wl.deployments[first].name}', which runs in the "
                "same chain: the jobs of a chain run one after another on the same servers, one node pool of one "
                "capacity type; give every job of it the same capacity_type",
                doc.locate(at),
            )
        ]
    return []


def _runs_errors(doc: Document, wl: Workload, chain: tuple[int, ...]) -> list[InputError]:
    """Jobs of one chain that run a different number of times a month where they cannot share servers so.

    newuser27 item 12: 4 runs of the first job and 30 of the second were billed each on its own. newuser80 item 2: on
    servers bought or owned (paid by the month) jobs of different cadences share the chain's servers: the chain runs as
    often as its most frequent job and a less frequent job takes a slice of its run in each, checkpointed and resumed
    (generator/planner/training_chain.py), its run ending within 730 h / its runs a month; every job then gives
    runs_per_month. A less frequent job due sooner than that runs stretched instead where it is the chain's last job
    (fix138: straight through the gaps between the chain's runs, pre-empted by each; the planner checks its finish),
    and is refused here where it is not: the jobs after it would wait for it. Rented servers are paid per run: there
    every job of a chain runs as often as the others.
    """
    runs = [(i, d.training.runs_per_month) for i in chain if isinstance(d := wl.deployments[i], TrainingDeployment)]
    given = [(i, r) for i, r in runs if r is not None]
    if not given or all(r == given[0][1] for _, r in runs):
        return []
    if wl.hardware.provider == "baremetal" and len(given) == len(runs):
        most = max(r for _, r in given)
        last = wl.deployments[chain[-1]].name
        return [
            InputError(
                f"deadline_hours {_deadline(wl, i):g} with runs_per_month {r:g}, fewer than the {most:g} of its chain's "
                "most frequent job: the chain runs as often as that job and this one takes a slice of its run in "
                f"each, so a run of it ends within {HOURS_PER_MONTH / r:.4g} h ({HOURS_PER_MONTH} h / its runs a month), "
                f"not sooner; {_why_not_stretched(wl, i, chain)}. Drop deadline_hours here (or "
                f"give {HOURS_PER_MONTH / r:.4g} or more)"
                + (
                    ", give it dataset_tokens"
                    if i == chain[-1]
                    else f", run it last in the chain (run_after: {last} on it, and drop its own run_after)"
                )
                + ", or drop its run_after to run it on servers of its own",
                doc.locate(("deployments", i, "training", "deadline_hours")),
            )
            for i, r in given
            if r < most
            and (i != chain[-1] or not _timed(wl, i))
            and (due := _deadline(wl, i)) is not None
            and due < HOURS_PER_MONTH / r
        ]
    first, value = given[0]
    where = (
        "on rented servers, paid per run, the jobs of a chain run in turn each time it runs; give every job of it "
        "the same runs_per_month"
        if wl.hardware.provider != "baremetal"
        else "give every job of it a runs_per_month (jobs of different cadences share servers bought or owned)"
    )
    return [
        InputError(
            f"runs_per_month {'is not given' if r is None else f'{r:g}'} here but {value:g} for "
            f"'{wl.deployments[first].name}' in the same chain: {where}",
            doc.locate(("deployments", i, "training", "runs_per_month") if r is not None else ("deployments", i, "training")),
        )
        for i, r in runs
        if r != value
    ]


def _timed(wl: Workload, index: int) -> bool:
    """Whether a training deployment gives ``dataset_tokens`` (its hours are known)."""
    dep = wl.deployments[index]
    return isinstance(dep, TrainingDeployment) and dep.training.dataset_tokens is not None


def _why_not_stretched(wl: Workload, index: int, chain: tuple[int, ...]) -> str:
    """Why a less frequent job due sooner than its slices end cannot run stretched (fix138) instead."""
    if index != chain[-1]:
        return (
            "only the chain's last job may run straight through the gaps between the chain's runs instead (pre-empted "
            "by each), and this one has jobs after it, which would wait for it past their own windows"
        )
    return (
        "run straight through the gaps between the chain's runs instead (pre-empted by each), its finish would depend "
        "on its hours, which are not known without dataset_tokens"
    )


def _deadline(wl: Workload, index: int) -> float | None:
    """A training deployment's ``deadline_hours``."""
    dep = wl.deployments[index]
    return dep.training.deadline_hours if isinstance(dep, TrainingDeployment) else None


def _timing_errors(doc: Document, wl: Workload, chain: tuple[int, ...]) -> list[InputError]:
    """A job with a deadline after a job whose hours are unknown (no ``dataset_tokens``): when it starts is unknown."""
    errors = []
    for k, i in enumerate(chain):
        dep = wl.deployments[i]
        assert isinstance(dep, TrainingDeployment)
        if dep.training.deadline_hours is None:
            continue
        untimed = [
            wl.deployments[j].name
            for j in chain[:k]
            if isinstance(d := wl.deployments[j], TrainingDeployment) and d.training.dataset_tokens is None
        ]
        if untimed:
            errors.append(
                InputError(
                    f"{', '.join(repr(n) for n in untimed)} run(s) before this job in its chain without dataset_tokens: "
                    "their hours, and so when this job starts, are unknown, and its deadline counts from the chain's "
                    "start; give them dataset_tokens or drop deadline_hours here",
                    doc.locate(("deployments", i, "training", "deadline_hours")),
                )
            )
    return errors
