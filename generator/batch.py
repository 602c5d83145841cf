"""Plan and render many workload files in one run, optionally over several processes (``--jobs``).

Every file is planned and rendered before anything is written (one bad file writes nothing). Files
rendered in one process share one catalog and one sizing cache; with ``jobs > 1`` the files are
spread over worker processes (forked where the platform allows, so they inherit the loaded catalog)
and the results come back by workload name, so the output depends neither on the number of jobs nor on
the order the files were given in.
"""

from __future__ import annotations

import errno
import math
import os
import pickle
import re
import signal
import sys
import traceback
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import Location, MultipleInputError, SpecgenError
from generator.input_files import MAX_WORKLOAD_BYTES, check_distinct_files, read_limited
from generator.named_tuple import NamedTuple

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from generator.planner.plan import Plan
    from generator.render import ClusterNames, PoolsCluster
    from generator.render.gpu_stack import GpuPoolStack
    from generator.render.mirrors import ClusterMirror
    from generator.tree_moves import Move
    from generator.workload import LoadedWorkload
    from generator.workload.build import Path as FieldPath
    from generator.workload.host_network import HostAddress
    from generator.workload.models import Workload


class Rendered(NamedTuple):
    """One workload file, planned and rendered."""

    file: str
    name: str
    files: dict[str, str]
    #: (level, code, message, where): where is ``file:line:col`` of the deployment that caused it.
    findings: tuple[tuple[str, str, str, str], ...]
    #: In a tree of several workloads: what its pools need from the shared cluster layer.
    stacks: tuple[GpuPoolStack, ...] = ()
    #: The provider of the workload's Terraform (a module of the root's ``terraform/main.tf``); None where it renders none.
    terraform: str | None = None
    #: Its pools' names and its hosts' (:func:`~generator.render.hosts.cluster_hosts`): cluster-wide objects, unique
    #: across a tree's workloads.
    pools: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    #: The cluster its node pools join (:func:`~generator.render.pools_cluster`), one across a tree's workloads.
    cluster: PoolsCluster | None = None
    #: Every address its owned hosts give (boot MACs, IPs, gateways, BMCs): one cluster's, none given twice in a tree.
    addresses: tuple[HostAddress, ...] = ()
    #: Where the cluster's stack is pulled from (:func:`~generator.render.mirrors.cluster_mirror`), one across a tree.
    mirror: ClusterMirror | None = None
    #: Where the file gives each of those names (:attr:`~generator.render.ClusterNames.fields`).
    name_fields: tuple[tuple[str, tuple[FieldPath, ...]], ...] = ()
    #: Each finding's field (:func:`~generator.findings.finding_fields`): what identifies it in a GitLab report.
    finding_fields: tuple[str, ...] = ()


class _Failure(NamedTuple):
    """A worker's error, carried back as plain data (exceptions with custom ``__init__`` do not pickle).

    ``locations``: each line's, for CI reports to place it (newuser53 item 7: never re-read from its text).
    """

    exit_code: int
    lines: tuple[str, ...]
    locations: tuple[Location | None, ...]


def render_one(path: str, alone: bool = True) -> Rendered:
    """Load, validate, plan and render one file, keeping where each finding comes from.

    ``alone``: the file is the whole tree; otherwise its cluster-wide needs are returned for the shared layer.
    """
    from generator.api import plan_file
    from generator.findings import finding_fields, locate_findings
    from generator.render import deployed, pools_cluster, render_alone, render_workload
    from generator.render.mirrors import cluster_mirror
    from generator.workload.host_network import host_addresses

    loaded, planned = plan_file(path, for_render=True)
    wl = loaded.workload
    plan = deployed(planned, wl, alone=alone)
    located = locate_findings(loaded, plan.findings)  # those SPEC.md lists, sharing's included
    fields = finding_fields(loaded, plan.findings)
    if alone:
        return Rendered(path, wl.name, render_alone(plan, wl), located, finding_fields=fields)
    files, stacks = render_workload(plan, wl, alone=False)
    names = cluster_names(path, plan, wl)
    provider = wl.hardware.provider if "terraform" in wl.outputs else None
    return Rendered(
        path, wl.name, dict(sorted(files.items())), located, tuple(stacks), provider, tuple(names.pools),
        tuple(names.hosts), pools_cluster(wl), host_addresses(wl), cluster_mirror(wl.mirrors), names.fields, fields,
    )  # fmt: skip


def cluster_names(file: str, plan: Plan, workload: Workload) -> ClusterNames:
    """The names a workload's deployed plan takes in a tree's one cluster: its pools' and its hosts' (owned, bought).

    Each with where ``file`` gives it: a pool at its first deployment's ``pool`` field, else that deployment's name
    (``<pool or deployment>_<gpu>``); a host it buys as its pool (``<pool>-NN``); an owned host at its name.
    """
    from generator.planner.placeholder_hosts import placeholder_names
    from generator.render import ClusterNames
    from generator.render.hosts import cluster_hosts

    index = {dep.name: i for i, dep in enumerate(workload.deployments)}
    fields: dict[str, tuple[FieldPath, ...]] = {}
    for pool in plan.pools:
        i = index.get(pool.deployments[0]) if pool.deployments else None
        if i is not None:
            at = (("deployments", i, "pool"), ("deployments", i, "name"))
            fields[pool.name] = at
            fields.update((host, at) for host in placeholder_names(pool, workload) if plan.provider == "baremetal")
    fields.update(owned_host_fields(workload))
    hosts = cluster_hosts(plan, workload)
    located = tuple((name, fields[name]) for name in (*(p.name for p in plan.pools), *hosts) if name in fields)
    return ClusterNames(file, tuple(p.name for p in plan.pools), hosts, located)


def owned_host_fields(workload: Workload) -> dict[str, tuple[FieldPath, ...]]:
    """Where the workload names each owned host (``hardware.inventory[g].hosts[h].name``)."""
    return {
        host.name: (("hardware", "inventory", g, "hosts", h, "name"),)
        for g, group in enumerate(workload.hardware.inventory)
        for h, host in enumerate(group.hosts)
    }


def planned_cluster_names(file: str, loaded: LoadedWorkload) -> ClusterNames | None:
    """:func:`cluster_names` of a validated workload planned as render plans it; None where the planner refuses it.

    For ``validate --together`` (fuzz30 item 12): a pool's name is ``<pool or deployment>_<gpu>``, the GPU the plan's.
    """
    from generator.planner import plan_workload
    from generator.render import deployed

    try:
        planned = plan_workload(loaded)
    except SpecgenError:
        return None  # the planner's error is plan's and render's to report, as validate of the one file leaves it
    return cluster_names(file, deployed(planned, loaded.workload, alone=False), loaded.workload)


def _work(path: str, alone: bool) -> Rendered | _Failure:
    try:
        return render_one(path, alone)
    except SpecgenError as exc:
        errors = exc.errors if isinstance(exc, MultipleInputError) else [exc]
        return _Failure(exc.exit_code, tuple(str(e) for e in errors), tuple(e.location for e in errors))


def _raise(failures: list[_Failure]) -> None:
    """Raise the errors of ``failures``: each file's with its exit code, so the whole exits as the first's does."""
    errors = [
        _rebuilt(line, location, failure.exit_code)
        for failure in failures
        for line, location in zip(failure.lines, failure.locations, strict=True)
    ]
    raise errors[0] if len(errors) == 1 else MultipleInputError(errors)


def _rebuilt(line: str, location: Location | None, exit_code: int) -> SpecgenError:
    """A worker's error as the process that reports it holds it: its text, location and exit code."""
    error = SpecgenError(line)
    error.location = location
    error.exit_code = exit_code
    return error


#: The cgroup v2 file that holds a container's CPU quota: "max 100000" (none) or "<quota> <period>" microseconds.
CPU_MAX = "/sys/fs/cgroup/cpu.max"


def usable_cores(cpu_max: str = CPU_MAX) -> int:
    """The CPUs this process may run on: its affinity mask, less a container's CPU quota where one is set.

    review32 item 6: a CI runner limited to 2 CPUs on a 64-core node sees 64 in its affinity mask.
    """
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    try:
        quota, period = Path(cpu_max).read_text(encoding="ascii").split()[:2]
    except (OSError, ValueError):
        return cores
    if quota == "max" or not quota.isdigit() or not period.isdigit() or int(period) == 0:
        return cores
    return max(1, min(cores, math.ceil(int(quota) / int(period))))


def default_jobs(cores: int) -> int:
    """The processes ``render`` plans files on when not told, of ``cores`` usable ones.

    All of them on Linux, where the workers fork; one elsewhere (fork is unsafe on macOS, Windows has none).
    """
    return cores if sys.platform.startswith("linux") else 1


def render_many(paths: list[str], jobs: int | None = 1) -> list[Rendered]:
    """Every file rendered, by workload name then path; else every failing file's errors, in path order (sorted).

    newuser53 item 5: the first failing file's error alone was raised, so CI told of one bad file a push (``validate``
    tells of all). The error raised exits as the first failing file's does. Nothing depends on the order the paths are
    given in (a shell glob's order follows the locale), nor on ``jobs``: the processes the files are planned in, at
    most one a file and one a usable core (None: one a usable core).
    """
    paths = sorted(paths)
    check_distinct_files(paths)
    cores = usable_cores()
    jobs = max(1, min(default_jobs(cores) if jobs is None else jobs, len(paths), cores))
    alone = len(paths) == 1
    if jobs == 1:
        return _every_file([_work(path, alone) for path in paths])
    # load what every worker needs once, before the workers are forked
    from generator import catalog

    catalog.gpus(), catalog.platforms(), catalog.models(), catalog.prices(), catalog.cpus(), catalog.nics(), catalog.drives()
    import generator.api
    import generator.findings
    import generator.render  # noqa: F401

    return _every_file(_on_workers(paths, alone, file_batches(paths, max(1, len(paths) // (jobs * 4))), jobs))


def _on_workers(paths: list[str], alone: bool, batches: list[tuple[int, ...]], jobs: int) -> list[Rendered | _Failure]:
    """Each file's result (:func:`_work`), in the order of ``paths``: its ``batches`` planned on ``jobs`` processes.

    review78 items 1-2: on a ``multiprocessing.Pool`` a worker killed while it waited for a task (the OOM killer) kept the
    pool's task-queue lock, and the render, then Ctrl-C, waited for ever. Each worker here has a pipe of its own (no lock
    is shared), takes its next batch when it returns its last, and this process waits on the busy workers' pipes and
    process sentinels together: the death of a worker holding a batch is seen at once and refused (nothing is written);
    one that dies idle owed nothing. Every worker is killed and reaped on the way out (results in, an error, Ctrl-C).
    Forked where the platform allows, so the workers inherit the loaded catalog (``spawn`` on Windows).
    """
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    todo = list(reversed(batches))  # taken from the end: the largest batch first
    workers: list[tuple[BaseProcess, Connection]] = []
    busy: dict[Connection, BaseProcess] = {}
    results: list[Rendered | _Failure | None] = [None] * len(paths)

    def hand_out(worker: BaseProcess, conn: Connection) -> None:
        if todo:
            try:
                conn.send(todo[-1])
            except OSError:  # it has ended since it sent its last result
                raise SpecgenError(_died(worker)) from None
            todo.pop()
            busy[conn] = worker

    try:
        for _ in range(jobs):
            mine, theirs = context.Pipe()
            started: BaseProcess = context.Process(target=_serve, args=(theirs, paths, alone, os.getpid()), daemon=True)
            try:
                started.start()
            except OSError as exc:  # hostile79 item 7: fork refused (a pids limit: EAGAIN; ENOMEM)
                theirs.close()
                mine.close()
                raise SpecgenError(_not_started(len(workers) + 1, jobs, exc)) from None
            theirs.close()
            workers.append((started, mine))
        for worker, conn in workers:
            hand_out(worker, conn)
        while busy:
            ready = set(wait([*busy, *(worker.sentinel for worker in busy.values())]))
            for conn, worker in list(busy.items()):
                if conn not in ready and worker.sentinel not in ready:
                    continue
                del busy[conn]
                try:
                    kind, at, done = conn.recv()  # its result, where it sent it whole before it ended
                except (EOFError, OSError):
                    raise SpecgenError(_died(worker)) from None
                if kind == "raised":
                    raise done  # a bug in the planner: raised here, as it is with --jobs 1
                for i, result in zip(at, done, strict=True):
                    results[i] = result
                hand_out(worker, conn)
        return [result for result in results if result is not None]
    finally:
        for worker, conn in workers:
            if worker.exitcode is None:
                worker.kill()  # SIGKILL: no signal handler a library left in the fork can keep it running
            worker.join()
            conn.close()


def _not_started(which: int, jobs: int, exc: OSError) -> str:
    """What to tell the user where worker ``which`` of ``jobs`` could not be started (hostile79 item 7)."""
    why = exc.strerror or str(exc)
    hint = {errno.EAGAIN: " (a limit on processes: a container's pids limit, ulimit -u?)", errno.ENOMEM: " (out of memory?)"}
    return (
        f"could not start process {which} of the {jobs} planning the files (--jobs): {why}"
        f"{hint.get(exc.errno or 0, '')}; nothing was written; render with --jobs 1 to plan every file in this process"
    )


def _died(worker: BaseProcess) -> str:
    """What to tell the user of ``worker``, which ended holding a batch (hostile78 item 1: the OOM killer, say)."""
    worker.join(timeout=5)  # its pipe can close before the kernel lets it be reaped
    code = worker.exitcode
    how = "still running" if code is None else f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    return (
        f"a process planning the files (--jobs) ended before it finished ({how}: the out-of-memory killer?); "
        "nothing was written; render again, or with --jobs 1 to plan every file in this process"
    )


def _serve(conn: Connection, paths: list[str], alone: bool, parent: int) -> None:
    """A worker: the batches of ``paths`` it is sent over ``conn``, rendered (:func:`_work_batch`), until the pipe ends.

    An error other than the planner's refusals (:func:`_work`) goes back to be raised there, with its traceback as a
    note (one that does not pickle: a RuntimeError of that text).
    """
    _worker_started(parent)
    while True:
        try:
            at = conn.recv()
        except EOFError:
            return  # the parent has its results (or has gone)
        try:
            message = pickle.dumps(("done", *_work_batch(paths, at, alone)), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a bug (``_work`` returns every SpecgenError): the parent raises it
            text = "".join(traceback.format_exception(exc))
            exc.add_note(f"raised in a --jobs worker process:\n{text}")
            try:
                message = pickle.dumps(("raised", at, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:  # it does not pickle
                message = pickle.dumps(("raised", at, RuntimeError(text)), pickle.HIGHEST_PROTOCOL)
        try:
            conn.send_bytes(message)  # what conn.recv() reads
        except OSError:
            return  # the parent has gone (hostile78 item 5: no BrokenPipeError traceback)


#: prctl(2) option: the signal the kernel sends this process when the thread that forked it ends.
_PR_SET_PDEATHSIG = 1


def _worker_started(parent: int) -> None:
    """A worker's set-up: Ctrl-C is the parent's to take, and the worker ends with the parent.

    review77 item 12: the workers ignore SIGINT, so the parent alone takes a terminal's Ctrl-C (sent to the whole
    process group); with Python's handler each worker raised KeyboardInterrupt in its task and printed its traceback.
    hostile78 item 5: ``docker stop`` or ``kill`` signals the parent alone; its workers planned on, then printed a
    BrokenPipeError traceback sending their results. On Linux the kernel kills them when the parent's thread that
    forked them (the one running :func:`render_many`) ends.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the parent ended before the request was made
            os._exit(1)


def _work_batch(paths: list[str], at: tuple[int, ...], alone: bool) -> tuple[tuple[int, ...], list[Rendered | _Failure]]:
    """The files of ``paths`` at the indices ``at``, rendered in one worker (:func:`_work` each), with those indices."""
    return at, [_work(paths[i], alone) for i in at]


#: The model ids a workload file names (``model: <id>``, block style), read as text: a hint where to plan it, no more.
_MODEL_LINE = re.compile(r"^[ \t-]*model:[ \t]*['\"]?([^\s'\"#]+)", re.MULTILINE)


def file_batches(paths: list[str], most: int) -> list[tuple[int, ...]]:
    """The indices of ``paths`` in the batches the workers take, one at a time: files that name the same models together.

    A worker sizes each model's layouts once and plans each deployment alike once (its caches): with the files spread
    in path order, every worker met nearly every model of a large render and sized it again (200 generated files over
    2 processes took 1.4-1.7 times the CPU of one). Batches of at most ``most`` files (a model every file names is still
    spread over the workers), the largest first, then in path order. Which worker plans a file changes nothing it
    renders (:func:`render_many`); a file that cannot be read is a batch's like any other (its error is its own).
    """
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, path in enumerate(paths):
        groups.setdefault(_models_named(path), []).append(i)
    batches = [tuple(group[k : k + most]) for group in groups.values() for k in range(0, len(group), most)]
    return sorted(batches, key=lambda batch: (-len(batch), batch[0]))


def _models_named(path: str) -> tuple[str, ...]:
    """The model ids ``path`` names (:data:`_MODEL_LINE`), sorted; none where it cannot be read.

    hostile79 item 2: read as every input is (:func:`~generator.input_files.read_limited`: regular files alone, opened
    without blocking): a plain ``open()`` of a FIFO (or ``/dev/stdin``, a symlink to one) waited for a writer for ever,
    before any worker could refuse it. A file it cannot read is left to the worker, whose error is the file's.
    """
    try:
        data = read_limited(path, MAX_WORKLOAD_BYTES, "workload file")
    except SpecgenError:
        return ()
    return tuple(sorted(set(_MODEL_LINE.findall(data.decode("utf-8", errors="replace")))))


def _every_file(results: list[Rendered | _Failure]) -> list[Rendered]:
    """The files rendered, by name; where any failed, the errors of every failing one are raised (item 5)."""
    failed = [result for result in results if isinstance(result, _Failure)]
    if failed:
        _raise(failed)
    return by_name(result for result in results if not isinstance(result, _Failure))


def by_name(results: Iterable[Rendered]) -> list[Rendered]:
    """``results`` by workload name, then file path: the order of every tree, module and pool rendered together."""
    return sorted(results, key=lambda r: (r.name, r.file))


def output_files(results: list[Rendered], single: bool) -> dict[str, str]:
    """The whole output root: one tree as is, or several under their workload names.

    With several workloads the root is one specgen tree whose manifest lists every workload tree's
    files, so ``--check`` sees a tree that was added, removed or renamed; each workload tree also keeps
    its own manifest (``NAME/.specgen-manifest``), so it stays a valid output directory by itself.
    """
    from generator.render import (
        ClusterNames,
        check_cluster_names,
        check_one_cluster,
        check_same_mirrors,
        check_workload_names,
        render_shared,
    )
    from generator.workload.host_network import tree_address_errors
    from generator.workload.loader import given_field
    from generator.writer import MANIFEST, manifest_text

    if single:
        return dict(results[0].files)
    results = by_name(results)
    check_workload_names([(r.file, r.name) for r in results], given_field)
    files: dict[str, str] = {}
    for result in results:
        for rel, text in result.files.items():
            files[f"{result.name}/{rel}"] = text
        files[f"{result.name}/{MANIFEST}"] = manifest_text(result.files)
    check_one_cluster([(r.file, r.cluster) for r in results], given_field)
    check_same_mirrors([(r.file, r.cluster, r.mirror) for r in results], given_field)  # review26 item 2
    check_cluster_names([ClusterNames(r.file, r.pools, r.hosts, r.name_fields) for r in results], given_field)
    clashes = tree_address_errors([(r.file, r.addresses) for r in results])  # fuzz30 item 2
    if clashes:
        raise clashes[0] if len(clashes) == 1 else MultipleInputError(clashes)
    files.update(render_shared([(r.name, r.stacks, r.terraform) for r in results]))
    return dict(sorted(files.items()))


def trees_in(paths: Iterable[str]) -> set[str]:
    """Workload trees of a root, from its manifest's paths (``NAME/.specgen-manifest``); the shared layers are none.

    fuzz28 L1: a manifest listing ``cluster/.specgen-manifest`` made ``--prune`` say it removed the tree of workload
    'cluster', which the render writes again.
    """
    from generator.render import SHARED_DIRECTORIES
    from generator.writer import MANIFEST

    heads = {p.split("/", 1)[0] for p in paths if p.count("/") == 1 and p.endswith("/" + MANIFEST)}
    return heads - set(SHARED_DIRECTORIES)


def unlisted_trees(root: str, listed: set[str]) -> list[str]:
    """Directories right under ``root`` that hold a specgen manifest but are not trees of this render."""
    from generator.writer import MANIFEST

    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [e.name for e in entries if e.is_dir(follow_symlinks=False) and e.name not in listed
            and os.path.isfile(os.path.join(e.path, MANIFEST))]  # fmt: skip


def tree_summary(
    current: set[str], wanted: set[str], changed: set[str], unlisted: list[str], moves: Collection[Move] = ()
) -> str:
    """The workload trees of the root and what happened to each (for the drift report).

    ``moves``: what the render does to the trees it moves or removes (:func:`generator.tree_moves.tree_moves`), said as
    ``render`` says it (newuser53 item 3: a tree going from a cluster's layout to the flat one, or back, read
    "removed or renamed" or "missing (not rendered yet)", and the render then said "moved").
    """
    moved = {move.workload: move for move in moves}
    lines = ["specgen: workload trees under the output root:"]
    for name in sorted(current | wanted | set(unlisted) | set(moved)):
        move = moved.get(name)
        if name in unlisted and name not in wanted:
            state = "extra (a specgen tree no workload file renders)"
        elif move is not None and move.new is None:
            where = "" if move.old else "its flat tree at the output's root; "
            state = f"removed or renamed ({where}no workload file renders it any more; render removes it with --prune)"
        elif move is not None and move.new == "":
            state = "moved to the output's root (one file renders a flat tree)"
        elif move is not None:
            state = f"moved from the output's root to {move.new}/ (several files render a tree of each workload)"
        elif name not in current:
            state = "missing (not rendered yet)"
        elif name not in wanted:
            state = "removed or renamed (no workload file renders it any more)"
        else:
            state = "stale" if name in changed else "current"
        lines.append(f"  {name}: {state}")
    return "\n".join(lines) + "\n"
