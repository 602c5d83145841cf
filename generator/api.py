"""The library face of specgen: everything the CLI does, without the CLI.

A :class:`~generator.planner.plan.Plan` is a record; ``plan.to_dict()`` is the object ``spec.json`` holds (its
``plan``), and :func:`locate_findings` gives each finding the ``file:line:col`` the CLI prints it at. Errors are
:class:`~generator.errors.SpecgenError` subclasses with the CLI's ``exit_code`` and, where the problem is in a
workload field, a ``location`` (file, line, column, field path).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from generator.errors import MultipleInputError
from generator.findings import locate_findings
from generator.input_files import check_distinct_files
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render import check_one_cluster, check_same_mirrors, deployed, pools_cluster, render_plan, render_plans
from generator.render.mirrors import cluster_mirror
from generator.render.provisioned_hosts import provisioning_plan_errors
from generator.workload import LoadedWorkload, load_workload
from generator.workload.host_network import host_addresses, tree_address_errors
from generator.workload.loader import given_field


def plan_file(path: str, for_render: bool = False) -> tuple[LoadedWorkload, Plan]:
    """Load, validate and plan one workload file (``for_render``: with what a render needs of the plan besides).

    The planner's plan, before deployment: what deploying it adds (GPU sharing applied, the findings of the cluster's
    provisioners: Karpenter, EKS, GKE, Cluster API, list prices) is in :func:`plan_as_deployed`'s.
    """
    loaded = load_workload(path)
    plan = plan_workload(loaded)
    if for_render:  # the hosts Metal3 or Tinkerbell get objects for are the plan's (fuzz30 item 6)
        provisioning_plan_errors(loaded.document, plan, loaded.workload)
    return loaded, plan


def plan_as_deployed(path: str) -> tuple[LoadedWorkload, Plan]:
    """The plan of one workload file as ``specgen plan``, ``spec.json`` and SPEC.md show it.

    With every finding the CLI reports and ``--fail-on`` gates on (newuser33 item 4: :func:`plan_file`'s plan lacked a
    warning that ``render --fail-on warning`` failed on).
    """
    loaded, plan = plan_file(path)
    provisioning_plan_errors(loaded.document, plan, loaded.workload)  # as render refuses it (fuzz30 item 6)
    return loaded, deployed(plan, loaded.workload)


def render_file(path: str) -> dict[str, str]:
    """Every output file of one workload file, ``{relative path: text}``."""
    loaded, plan = plan_file(path, for_render=True)
    return render_plan(plan, loaded.workload)


def render_files(paths: Iterable[str | os.PathLike[str]]) -> dict[str, str]:
    """Several workload files as one tree for one cluster: ``<workload>/...`` each plus the shared ``cluster/``."""
    if isinstance(paths, str | os.PathLike):  # fuzz27 L8: its characters were read as paths ("w: file not found")
        raise TypeError("render_files takes a list of workload paths; render_file(path) renders one")
    given = [os.fspath(path) for path in paths]  # fuzz28 L7: a generator, and a Path beside a str, failed inside
    if not given:
        raise ValueError("render_files needs one workload path at least")
    check_distinct_files(given)  # as the CLI: "X and Y are the same file" (fuzz31 item 13), before any is read
    planned = [plan_file(path, for_render=True) for path in given]
    clusters = [(path, pools_cluster(loaded.workload)) for path, (loaded, _) in zip(given, planned, strict=True)]
    check_one_cluster(clusters, given_field)  # where the files differ (render_plans knows no files)
    mirrors = [(path, pools_cluster(loaded.workload), cluster_mirror(loaded.workload.mirrors))
               for path, (loaded, _) in zip(given, planned, strict=True)]  # fmt: skip
    check_same_mirrors(mirrors, given_field)
    # a host's MAC or address in two files, at the second's field (fuzz30 item 2), in the order render meets them
    met = sorted(zip(given, planned, strict=True), key=lambda item: (item[1][0].workload.name, item[0]))
    clashes = tree_address_errors([(path, host_addresses(loaded.workload)) for path, (loaded, _) in met])
    if clashes:
        raise clashes[0] if len(clashes) == 1 else MultipleInputError(clashes)
    return render_plans([(plan, loaded.workload) for loaded, plan in planned])


__all__ = [
    "load_workload",
    "locate_findings",
    "plan_as_deployed",
    "plan_file",
    "plan_workload",
    "render_file",
    "render_files",
    "render_plan",
]
