"""The limits of a list of LoRA target module names, read from the workload schema (one source for both options).

``--lora-targets`` (a training job's ``training.lora_target_modules``) and ``--lora-target-modules`` (served adapters'
``inference.lora.target_modules``) take what the schema's ``maxItems`` / ``minItems`` and the items' ``maxLength``
allow (fix172: ``--lora-targets`` took 70 names, or a name of 200 characters, that a workload refuses). Read only where
targets are given: the estimate's cold start loads no schema.
"""

from __future__ import annotations

#: Where each option's list is in the workload schema (properties under ``deployments.items``).
SCHEMA_FIELDS = {
    "--lora-targets": ("training", "lora_target_modules"),
    "--lora-target-modules": ("inference", "lora", "target_modules"),
}


def target_limits(option: str) -> tuple[int, int, int]:
    """``(fewest names, most names, most characters a name)`` of ``option``'s list, as the workload schema has them."""
    import json

    from generator.paths import schema_path

    with open(schema_path("workload"), encoding="utf-8") as fh:
        node = json.load(fh)["properties"]["deployments"]["items"]
    for key in SCHEMA_FIELDS[option]:
        node = node["properties"][key]
    return int(node["minItems"]), int(node["maxItems"]), int(node["items"]["maxLength"])


def targets_problem(option: str, targets: tuple[str, ...]) -> str | None:
    """Why ``targets`` given to ``option`` are out of the schema's limits (a UsageError's words), None where within."""
    fewest, most, chars = target_limits(option)
    if not fewest <= len(targets) <= most:
        return f"{option} takes {fewest} to {most} module names, got {len(targets)}"
    if long := next((t for t in targets if len(t) > chars), None):
        return f"{option}: a name is at most {chars} characters, got {len(long)}"
    return None
