"""A spec.json deployment's GPUs against its layout: TP (or a wider EP) x PP x replicas, as the planner writes them.

fix162 item 2: a ``spec.json`` whose deployment's ``gpus`` disagreed with its layout (hand-edited, or damaged) was
compared without a word: ``diff`` read ``TP2xPP1 x4 (16 GPUs)`` and ``changed: GPUs 8 -> 16``, exit 0. The planner
writes a replica's GPUs as ``max(tp, expert_parallel) x pp`` (``Parallelism.gpus``) and a deployment's as its replicas'
(a split's as its parts' summed), so any other figure is no plan's. Two layouts hold GPUs otherwise and are not checked:
a pool whose GPUs are shared (``shares_per_gpu``: several replicas a GPU) and a ``hardware.fixed`` server (its layer
split gives GPUs past the model's layers none), and a training job (a sequence of jobs holds its widest job's GPUs).
"""

from __future__ import annotations

from typing import Any

from generator.errors import SpecShapeError
from generator.input_files import short

#: The platform id of a ``hardware.fixed`` server's pool (``generator.planner.fixed``).
FIXED_PLATFORM = "fixed"


def _whole(pool: Any) -> bool:
    """Whether ``pool`` (a ``plan.pools`` entry, or None) holds replicas on whole GPUs of a server the planner sized."""
    if not isinstance(pool, dict):
        return False
    node = pool.get("node")
    return not pool.get("shares_per_gpu") and not (isinstance(node, dict) and node.get("platform_id") == FIXED_PLATFORM)


def _layout(record: dict[str, Any], expert_parallel: Any) -> tuple[int, str]:
    """The GPUs a layout holds and how they are counted: ``TP 2 x PP 1 x 4 replicas``."""
    tp, pp, replicas = record["tp"], record["pp"], record["replicas"]
    ep = expert_parallel if isinstance(expert_parallel, int) and not isinstance(expert_parallel, bool) else 1
    wide = f"EP {ep} (wider than TP {tp})" if ep > tp else f"TP {tp}"
    return max(tp, ep) * pp * replicas, f"{wide} x PP {pp} x {replicas} replica{'' if replicas == 1 else 's'}"


def check_layout_gpus(path: str, where: str, dep: dict[str, Any], pools: dict[str, Any]) -> None:
    """Raise SpecShapeError at ``where.gpus`` where a deployment's GPUs are not its layout's (its parts' for a split).

    ``dep`` has passed the diff's shape checks (``tp``, ``pp``, ``replicas``, ``gpus`` whole numbers); ``pools``:
    ``plan.pools`` by name.
    """
    if dep.get("kind", "inference") != "inference":
        return
    parts = dep.get("split") or []
    if not parts:
        if not _whole(pools.get(dep["pool"])):
            return
        held, said = _layout(dep, (dep.get("details") or {}).get("expert_parallel"))
        if dep["gpus"] != held:
            raise SpecShapeError(path, f"{where}.gpus", f"is {_figure(dep['gpus'])}, not {said} = {held:,}: {_REDO}")
        return
    if not all(_whole(pools.get(part["pool"])) for part in parts):
        return
    figures = []
    for j, part in enumerate(parts):
        held, said = _layout(part, part.get("expert_parallel"))
        if "gpus" in part and part["gpus"] != held:
            raise SpecShapeError(path, f"{where}.split[{j}].gpus", f"is {_figure(part['gpus'])}, not {said} = {held:,}: {_REDO}")
        figures.append((held, said))
    total = sum(held for held, _ in figures)
    if dep["gpus"] != total:
        summed = " + ".join(f"{held:,} ({said})" for held, said in figures)
        raise SpecShapeError(path, f"{where}.gpus", f"is {_figure(dep['gpus'])}, not its parts' {summed} = {total:,}: {_REDO}")


def _figure(value: Any) -> str:
    """A count as the message gives it: ``1,024``; what is no whole number, quoted."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else short(value)


_REDO = "the planner writes a deployment's GPUs as its layout holds them; render the spec.json again rather than edit it"
