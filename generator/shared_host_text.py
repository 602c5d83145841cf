"""The GPUs of each owned host that services sharing it take, as the plan text and SPEC.md say it (fix167).

``'small' and 'chat' share gpu-01: GPUs 0-1 'chat', 2-3 'small', 4-7 idle``: one line a host, from a pool's
``host_gpus`` (spec.json), so that two services on one server read as one server, not one each.
"""

from __future__ import annotations

from collections.abc import Iterable


def gpu_ranges(gpus: Iterable[int]) -> str:
    """``0-1, 4, 6-7``: GPU indices as runs."""
    runs: list[list[int]] = []
    for g in sorted(set(gpus)):
        if runs and g == runs[-1][1] + 1:
            runs[-1][1] = g
        else:
            runs.append([g, g])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def shared_host_lines(entries: Iterable[tuple[str, str, Iterable[int]]], gpus_per_host: int) -> list[str]:
    """One line a host: who shares it and which of its ``gpus_per_host`` GPUs each takes, the rest idle.

    ``entries``: (host, deployment, the replica's GPUs there), in the pool's order (its deployments in plan order).
    """
    hosts: dict[str, dict[str, list[int]]] = {}
    for host, deployment, gpus in entries:
        hosts.setdefault(host, {}).setdefault(deployment, []).extend(gpus)
    lines = []
    for host, taken in hosts.items():
        names = [f"'{name}'" for name in taken]
        who = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
        verb = "share" if len(names) > 1 else "runs alone on"
        parts = sorted((min(gpus), f"{gpu_ranges(gpus)} '{name}'") for name, gpus in taken.items())
        idle = sorted(set(range(gpus_per_host)) - {g for gpus in taken.values() for g in gpus})
        said = [text for _, text in parts] + ([f"{gpu_ranges(idle)} idle"] if idle else [])
        lines.append(f"{who} {verb} {host}: GPUs {', '.join(said)}")
    return lines
