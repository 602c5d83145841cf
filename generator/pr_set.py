"""What ``diff --base`` reads over the whole file set, not file by file (newuser33 item 7).

The files given are one cluster, as ``render`` of them deploys them: a workload's identity is its ``name`` (its
tree), not its file, and a pool's is its name in the cluster, whichever file holds it.

* :func:`renamed_files`: a file removed and a file added that hold the workload of one name are one workload whose
  file was renamed (``git mv``): compared with each other, not as a fleet removed and a fleet added.
* :func:`set_replacements`: node pools replaced, not resized, over every file: a pool removed in one file while one
  of the same hardware is added in another is a replacement, as it is within one file.
"""

from __future__ import annotations

from typing import Any

from generator.fleet_diff import pool_replacements, replaces_in_place


def renamed_files(removed: dict[str, Any], added: dict[str, Any]) -> dict[str, str]:
    """Added file -> the removed file it renames: the two hold the workload of one name (once on each side).

    ``removed``: file -> its workload's name at the base; ``added``: file -> its workload's name now.
    """
    olds: dict[Any, list[str]] = {}
    for file, name in removed.items():
        olds.setdefault(name, []).append(file)
    news: dict[Any, list[str]] = {}
    for file, name in added.items():
        news.setdefault(name, []).append(file)
    return {news[name][0]: files[0] for name, files in olds.items() if len(files) == 1 and len(news.get(name, ())) == 1}


def set_replacements(compared: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """Pools replaced over the whole set: each entry with ``files`` (the files its pools are in) and ``file`` (the first).

    ``compared``: (file, its plan at the base, its plan now, their diff) for each file planned on both sides (a side
    where it does not exist is an empty plan). A file whose fleet moves to another provider or region replaces
    nothing in place (:func:`~generator.fleet_diff.replaces_in_place`) and keeps its own (none). Where two files of
    one side name the same pool or deployment (``render`` refuses them), each file's own replacements are kept.
    """
    merged = [(file, old, new) for file, old, new, diff in compared if replaces_in_place(diff)]
    old, new = _merged([(file, plan) for file, plan, _ in merged]), _merged([(file, plan) for file, _, plan in merged])
    if old is None or new is None:
        return [{"file": file, "files": [file], **entry} for file, _, _, diff in compared for entry in diff["replacements"]]
    order = {file: i for i, (file, _, _) in enumerate(merged)}
    out = []
    for entry in pool_replacements(old[0], new[0]):
        files = {old[1][p["pool"]] for p in entry["removed"]} | {new[1][p["pool"]] for p in entry["added"]}
        named = sorted(files, key=order.__getitem__)
        out.append({"file": named[0], "files": named, **entry})
    return out


def _merged(plans: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, str]] | None:
    """One plan of the pools and deployments of ``plans`` (file, plan), and each pool's file; None where two clash.

    Each pool's node says its provider (:func:`~generator.fleet_diff.pool_replacements` reads the plan's otherwise).
    """
    pools: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}
    deployments: dict[str, dict[str, Any]] = {}
    for file, plan in plans:
        for pool in plan["pools"]:
            if pool["name"] in pools:
                return None
            node = pool["node"]
            pools[pool["name"]] = {**pool, "node": {**node, "provider": node.get("provider") or plan.get("provider")}}
            where[pool["name"]] = file
        for dep in plan["deployments"]:
            if dep["name"] in deployments:
                return None
            deployments[dep["name"]] = dep
    return {"pools": list(pools.values()), "deployments": list(deployments.values())}, where
