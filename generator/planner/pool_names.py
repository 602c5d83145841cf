"""What names each pool before its hardware, and the named pools (a deployment's ``pool``) checked or kept apart.

A deployment naming a pool joins it where it runs on the same hardware as the pool's other deployments; one that
cannot share servers there (a training job, or a replica wider than a server: it takes whole servers) keeps a pool of
its own, named ``<pool>_<deployment>_<gpu>``, with a finding saying why (fuzz21 item 1: this was refused as invalid
input, after the whole plan, although which hardware the planner picks is not the user's to see in advance).
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


def naming_labels(wl: Workload, units: list[Unit], apart: frozenset[int] = frozenset()) -> list[tuple[list[str], str]]:
    """(names, hardware) that name each pool: the GPU, the platform before it where two pools share a GPU.

    A pool whose deployments give it a name (``pool``) is named by it instead of by its deployments; the units at
    the positions ``apart`` (:func:`kept_apart`) by the pool name and their deployment's. Two pools of one name on one
    platform with servers of different GPU counts (deployments of one pool on 4- and 8-GPU servers) also name the
    count: ``<pool>_<platform>_8x_<gpu>``.
    """
    labels = [(_label_names(wl, unit, at in apart), unit[0][1].hardware.gpu.id) for at, unit in enumerate(units)]
    seen = Counter((tuple(deps), gpu) for deps, gpu in labels)
    platforms = [
        unit[0][1].hardware.platform.id if seen[(tuple(deps), gpu)] > 1 else ""
        for (deps, gpu), unit in zip(labels, units, strict=True)
    ]
    on_platform = Counter(
        (tuple(deps), gpu, platform) for (deps, gpu), platform in zip(labels, platforms, strict=True) if platform
    )
    out = []
    for (deps, gpu), platform, unit in zip(labels, platforms, units, strict=True):
        named = unit_pool(wl, unit) is not None and on_platform[(tuple(deps), gpu, platform)] > 1
        count = f"{unit[0][1].candidate.gpus_per_node}x_" if named else ""
        out.append((deps, f"{platform}_{count}{gpu}" if platform else gpu))
    return out


def kept_apart(wl: Workload, units: list[Unit]) -> frozenset[int]:
    """Positions of the pools that cannot share servers but name a pool whose name another pool of it takes.

    Such a pool holds one deployment (a training job, or replicas each taking whole servers); it gets its
    deployment's name after the pool's (:func:`naming_labels`) instead of being refused.
    """
    owners: dict[str, list[int]] = {}
    for at, (deps, hardware) in enumerate(naming_labels(wl, units)):
        owners.setdefault(full_pool_name(deps, hardware), []).append(at)
    return frozenset(
        at
        for same in owners.values()
        if len(same) > 1
        for at in same
        if unit_pool(wl, units[at]) is not None and not units[at][0][1].shares_servers
    )


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


def check_named_pools(
    loaded: LoadedWorkload, units: list[Unit], labels: list[tuple[list[str], str]], apart: frozenset[int] = frozenset()
) -> None:
    """Refuse a pool name the user chose (``pool``) that does not fit where it goes or is another pool's.

    A kept-apart pool's name (``apart``) is derived, not chosen: like a pool named by its deployments it is shortened
    where too long, so it is not checked here.
    """
    wl = loaded.workload
    owners: dict[str, list[str]] = {}
    for unit, (deps, hardware) in zip(units, labels, strict=True):
        owners.setdefault(full_pool_name(deps, hardware), []).extend(wl.deployments[i].name for i, _ in unit)
    for at, (unit, (deps, hardware)) in enumerate(zip(units, labels, strict=True)):
        pool = unit_pool(wl, unit)
        if pool is None or at in apart:
            continue
        index = next(i for i, _ in unit if wl.deployments[i].pool == pool)
        where = loaded.document.locate(("deployments", index, "pool"))
        name = full_pool_name(deps, hardware)
        if (problem := named_pool_problem(name, wl.hardware.provider)) is not None:
            raise InputError(problem, where)
        others = sorted(set(owners[name]) - {wl.deployments[i].name for i, _ in unit})
        if others:
            raise InputError(
                f"pool {pool} would be named {name.replace('_', '-')}, as the pool of {', '.join(others)} is: give one "
                "of them another pool name",
                where,
            )
