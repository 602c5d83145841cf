"""The fields the workload file gives a deployment off their defaults, as the plan's inputs say them."""

from __future__ import annotations

from typing import Any

from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, TrainingDeployment, given_fields


def _inputs(dep: InferenceDeployment | TrainingDeployment, given: Any) -> dict[str, Any]:
    """The ``inference`` or ``training`` fields the workload gives ``dep`` off their defaults (``slo.tpot_ms``: 50).

    ``given``: the deployment's mapping as the file has it; a field the loader derived (a batch job's rate from its
    requests and deadline) is not one the workload gave (review76 item 7).
    """
    kind = "inference" if isinstance(dep, InferenceDeployment) else "training"
    written = given.get(kind) if isinstance(given, dict) else None
    fields = given_fields(dep.inference if isinstance(dep, InferenceDeployment) else dep.training)
    return {k: v for k, v in fields.items() if _written(written, k.split("."))}


def _given(loaded: LoadedWorkload, index: int) -> Any:
    """Deployment ``index``'s mapping as the workload file has it (None where the document holds none)."""
    deployments = loaded.document.data.get("deployments") if isinstance(loaded.document.data, dict) else None
    return deployments[index] if isinstance(deployments, list) and index < len(deployments) else None


def _written(data: Any, path: list[str]) -> bool:
    """Whether the file's mapping ``data`` holds the dotted field ``path`` (``slo.tpot_ms``)."""
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True
