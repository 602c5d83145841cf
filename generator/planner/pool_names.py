"""What names each pool before its hardware, and the named pools (a deployment's ``pool``) checked or kept apart.

A deployment naming a pool joins it where it runs on the same hardware as the pool's other deployments; one that
cannot share servers there (a training job, or a replica wider than a server: it takes whole servers) keeps a pool of
its own, named ``<pool>_<deployment>_<gpu>``, with a finding saying why (fuzz21 item 1: this was refused as invalid
input, after the whole plan, although which hardware the planner picks is not the user's to see in advance).

A named pool whose deployments run on servers of one GPU but several kinds (machine types, GPU counts) keeps
``<pool>_<gpu>`` for the servers of its first deployment in the file; the others add their platform (fuzz22 item 4: a
deployment joining on another machine type renamed, so deleted and created, the servers already there). Those names
are derived, so shortened where too long, never refused. No rule without the pool's history keeps every name when
deployments leave too (a pool left with one kind of servers is ``<pool>_<gpu>``, whichever kind stays): where the first
deployment leaves, the next one's servers take the name, and ``specgen diff`` counts both pools' nodes (fuzz23 item 6).

A named pool is never told apart by platform from a pool named after a deployment of the pool's name (fuzz23 item 4:
``pool: chat`` and a deployment ``chat`` naming none became two platform names on one kind of server): both would be
``chat_<gpu>``, so :func:`check_named_pools` refuses it at the ``pool``.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from generator.errors import InputError
from generator.planner.inference import ReplicaShape
from generator.planner.naming import full_pool_name, named_pool_problem
from generator.planner.plan import Finding

if TYPE_CHECKING:
    from generator.planner.option import Option
    from generator.workload import LoadedWorkload
    from generator.workload.models import Workload

Unit = list[tuple[int, "Option"]]


def unit_pool(wl: Workload, unit: Unit) -> str | None:
    """The pool name the deployments of a pool give (``pool``), None where none gives one."""
    return next((pool for i, _ in unit if (pool := wl.deployments[i].pool) is not None), None)


def _label_names(wl: Workload, unit: Unit, apart: bool) -> list[str]:
    """What names a pool before its hardware: the pool name its deployments give (and, kept apart, the deployment's)."""
    pool = unit_pool(wl, unit)
    if pool is None:
        return [wl.deployments[i].name for i, _ in unit]
    return [pool, wl.deployments[unit[0][0]].name] if apart else [pool]


def _platform_labels(wl: Workload, units: list[Unit], apart: frozenset[int]) -> list[tuple[list[str], str]]:
    """(names, hardware) with the platform before the GPU of every pool whose (names, GPU) another pool has.

    Two pools of one name on one platform with servers of different GPU counts (deployments of one pool on 4- and
    8-GPU servers) also name the count: ``<pool>_<platform>_8x_<gpu>``. Pools that name one server kind alike (a
    named pool's deployment that cannot share its servers, :func:`kept_apart`) still get one name.
    """
    labels = [(_label_names(wl, unit, at in apart), unit[0][1].hardware.gpu.id) for at, unit in enumerate(units)]
    # a named pool and a pool named after a deployment of that name are two pools, not two parts of one: their
    # equal names are refused (check_named_pools), never told apart by platform (fuzz23 item 4)
    kinds = [(unit_pool(wl, unit) is not None, tuple(deps), gpu) for unit, (deps, gpu) in zip(units, labels, strict=True)]
    seen = Counter(kinds)
    platforms = [unit[0][1].hardware.platform.id if seen[kind] > 1 else "" for kind, unit in zip(kinds, units, strict=True)]
    on_platform = Counter((*kind, platform) for kind, platform in zip(kinds, platforms, strict=True) if platform)
    out = []
    for kind, (deps, gpu), platform, unit in zip(kinds, labels, platforms, units, strict=True):
        named = kind[0] and on_platform[(*kind, platform)] > 1
        count = f"{unit[0][1].candidate.gpus_per_node}x_" if named else ""
        out.append((deps, f"{platform}_{count}{gpu}" if platform else gpu))
    return out


def _first_deployment(unit: Unit) -> int:
    """The position in the file of a pool's first deployment."""
    return min(index for index, _ in unit)


def _keepers(wl: Workload, units: list[Unit], apart: frozenset[int]) -> dict[tuple[str, str], int]:
    """Per (pool name, GPU) of the named pools: the position of the pool that keeps the plain ``<pool>_<gpu>``.

    It is the one holding the pool's first deployment in the file, so adding a deployment that lands on another
    machine type (or another GPU count) names the newcomer, never the pool already there (fuzz22 item 4: the pool
    was renamed, its nodes deleted and created). Kept-apart pools (``apart``) carry their deployment's name instead.
    """
    first: dict[tuple[str, str], int] = {}
    for at, unit in enumerate(units):
        key = _named_key(wl, unit, at, apart)
        if key is not None and (key not in first or _first_deployment(unit) < _first_deployment(units[first[key]])):
            first[key] = at
    return first


def _server_label(unit: Unit, count: bool) -> str:
    """``<platform>_<gpu>``, or (``count``) ``<platform>_<N>x_<gpu>`` for a pool's servers."""
    opt = unit[0][1]
    per_node = f"{opt.candidate.gpus_per_node}x_" if count else ""
    return f"{opt.hardware.platform.id}_{per_node}{opt.hardware.gpu.id}"


def naming_labels(wl: Workload, units: list[Unit], apart: frozenset[int] = frozenset()) -> list[tuple[list[str], str]]:
    """(names, hardware) that name each pool: the GPU, the platform before it where two pools share a GPU.

    A pool whose deployments give it a name (``pool``) is named by it instead of by its deployments; the units at
    the positions ``apart`` (:func:`kept_apart`) by the pool name and their deployment's. Where a named pool runs on
    servers of one GPU on several platforms (or GPU counts), the part holding its first deployment keeps
    ``<pool>_<gpu>`` and each other part adds its platform, and its GPU count where that is what differs
    (``<pool>_<platform>_4x_<gpu>``): a deployment joining the pool never renames the servers already there.
    """
    labels = _platform_labels(wl, units, apart)
    keep = _keepers(wl, units, apart)
    parts = Counter(key for at, unit in enumerate(units) if (key := _named_key(wl, unit, at, apart)) is not None)
    kinds = Counter(
        (*key, unit[0][1].hardware.platform.id)
        for at, unit in enumerate(units)
        if (key := _named_key(wl, unit, at, apart)) is not None
    )
    out = []
    for at, ((deps, hardware), unit) in enumerate(zip(labels, units, strict=True)):
        key = _named_key(wl, unit, at, apart)
        if key is None or parts[key] == 1:
            out.append((deps, hardware))
        elif keep[key] == at:
            out.append((deps, key[1]))
        else:
            out.append((deps, _server_label(unit, kinds[(*key, unit[0][1].hardware.platform.id)] > 1)))
    return out


def _named_key(wl: Workload, unit: Unit, at: int, apart: frozenset[int]) -> tuple[str, str] | None:
    """(pool name, GPU) of a pool its deployments name and that is not kept apart; None otherwise."""
    pool = unit_pool(wl, unit)
    return None if pool is None or at in apart else (pool, unit[0][1].hardware.gpu.id)


def derived(wl: Workload, units: list[Unit], labels: list[tuple[list[str], str]], apart: frozenset[int]) -> frozenset[int]:
    """Positions of the named pools whose name is not the plain ``<pool>_<gpu>`` the user chose: it names hardware too.

    Like a pool named after its deployments, such a name is shortened where too long, never refused: which
    platforms the planner picks is not the user's to see in advance (fuzz22 item 4).
    """
    return frozenset(
        at
        for at, (unit, (_, hardware)) in enumerate(zip(units, labels, strict=True))
        if at in apart or (unit_pool(wl, unit) is not None and hardware != unit[0][1].hardware.gpu.id)
    )


def kept_apart(wl: Workload, units: list[Unit]) -> frozenset[int]:
    """Positions of the pools that cannot share servers but name a pool whose name another pool of it takes.

    Such a pool holds one deployment (a training job, or replicas each taking whole servers); it gets its
    deployment's name after the pool's (:func:`naming_labels`) instead of being refused.
    """
    owners: dict[str, list[int]] = {}
    for at, (deps, hardware) in enumerate(_platform_labels(wl, units, frozenset())):
        if unit_pool(wl, units[at]) is not None:  # a pool named after a deployment is not the named pool's
            owners.setdefault(full_pool_name(deps, hardware), []).append(at)
    return frozenset(at for same in owners.values() if len(same) > 1 for at in same if not units[at][0][1].shares_servers)


def _why_apart(opt: Option) -> str:
    """Why a deployment's (part's) replicas or job cannot share servers with others."""
    shape = opt.shape
    if not isinstance(shape, ReplicaShape):
        return "a training job's memory, interconnect and power peaks must not slow a service"
    gpus, per_node, platform = shape.par.gpus, opt.candidate.gpus_per_node, opt.hardware.platform.id
    if gpus > per_node:
        return f"each replica ({gpus} GPUs) spans {gpus // per_node} of the {per_node}-GPU {platform} servers it runs on"
    return f"each replica ({gpus} GPUs) does not divide the {per_node} GPUs of the {platform} servers it runs on"


def kept_apart_findings(wl: Workload, units: list[Unit], names: list[str], apart: frozenset[int]) -> list[Finding]:
    """An info finding at each kept-apart deployment's ``pool``: the pool (``names``) it gets instead, and why."""
    out = []
    for at in sorted(apart):
        (index, opt), pool, name = units[at][0], unit_pool(wl, units[at]), names[at]
        out.append(
            Finding(
                "info",
                "pool-kept-apart",
                f"deployment {wl.deployments[index].name} names pool {pool} but cannot share servers: "
                f"{_why_apart(opt)}; it gets a pool of its own, {name}, beside pool {pool}'s other deployments",
                f"deployments[{index}].pool",
            )
        )
    return out


def derived_findings(
    wl: Workload, units: list[Unit], names: list[str], labels: list[tuple[list[str], str]], apart: frozenset[int]
) -> list[Finding]:
    """An info finding at each named pool's part on other servers than its first deployment's: its name, and why."""
    keep = {key: names[at] for key, at in _keepers(wl, units, apart).items()}
    out = []
    for at in sorted(derived(wl, units, labels, apart) - apart):
        pool, gpu = unit_pool(wl, units[at]), units[at][0][1].hardware.gpu.id
        index = _first_deployment(units[at])
        first = keep.get((str(pool), gpu))
        platform = units[at][0][1].hardware.platform.id
        out.append(
            Finding(
                "info",
                "pool-other-servers",
                f"pool {pool} runs on {gpu} servers of more than one kind: "
                + (f"{first}, holding the pool's first deployment, keeps the name; " if first else "")
                + f"{', '.join(wl.deployments[i].name for i, _ in units[at])} on {platform} "
                f"servers ({units[at][0][1].candidate.gpus_per_node} GPUs each) is pool {names[at]}, a name that says "
                "its servers",
                f"deployments[{index}].pool",
            )
        )
    return out


def check_named_pools(
    loaded: LoadedWorkload, units: list[Unit], labels: list[tuple[list[str], str]], apart: frozenset[int] = frozenset()
) -> None:
    """Refuse a pool name the user chose (``pool``) that does not fit where it goes or is another pool's.

    A kept-apart pool's name (``apart``), and that of a named pool's part on other hardware than its first
    deployment's (:func:`derived`), is derived, not chosen: like a pool named by its deployments it is shortened where
    too long, so it is not checked here.
    """
    wl = loaded.workload
    skipped = derived(wl, units, labels, apart)
    owners: dict[str, list[str]] = {}
    for unit, (deps, hardware) in zip(units, labels, strict=True):
        owners.setdefault(full_pool_name(deps, hardware), []).extend(wl.deployments[i].name for i, _ in unit)
    for at, (unit, (deps, hardware)) in enumerate(zip(units, labels, strict=True)):
        pool = unit_pool(wl, unit)
        if pool is None or at in skipped:
            continue
        index = next(i for i, _ in unit if wl.deployments[i].pool == pool)
        where = loaded.document.locate(("deployments", index, "pool"))
        name = full_pool_name(deps, hardware)
        if (problem := named_pool_problem(name, wl.hardware.provider)) is not None:
            raise InputError(problem, where)
        others = sorted(set(owners[name]) - {wl.deployments[i].name for i, _ in unit})
        if others:
            raise InputError(
                f"pool {pool} would be named {name.replace('_', '-')}, as the pool of deployment"
                f"{'s' if len(others) > 1 else ''} {', '.join(others)} is: give one of them another pool name",
                where,
            )
