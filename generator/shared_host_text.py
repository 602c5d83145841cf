"""The GPUs of each owned host that services sharing it take, as the plan text and SPEC.md say it (fix167).

``'small' and 'chat' share gpu-01: GPUs 0-1 'chat', 2-3 'small', 4-7 idle``: one line a host, from a pool's
``host_gpus`` (spec.json), so that two services on one server read as one server, not one each; hosts in a row laid
out alike in one line (``a-03 to a-15 (13 hosts, each)``: a pool's bought hosts, fix171).
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
    said_of: list[tuple[str, str, str]] = []  # (who, verb, what), a host each
    for taken in hosts.values():
        names = [f"'{name}'" for name in taken]
        who = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
        verb = "share" if len(names) > 1 else "runs alone on"
        parts = sorted((min(gpus), f"{gpu_ranges(gpus)} '{name}'") for name, gpus in taken.items())
        idle = sorted(set(range(gpus_per_host)) - {g for gpus in taken.values() for g in gpus})
        said = [text for _, text in parts] + ([f"{gpu_ranges(idle)} idle"] if idle else [])
        said_of.append((who, verb, f"GPUs {', '.join(said)}"))
    # hosts in a row laid out alike (a pool's bought hosts, fix171) are said once: "a-03 to a-15 (13 hosts)"
    lines: list[str] = []
    order = list(hosts)
    start = 0
    for end in range(1, len(order) + 1):
        if end < len(order) and said_of[end] == said_of[start]:
            continue
        who, verb, what = said_of[start]
        run = order[start:end]
        wheres = [f"{run[0]} to {run[-1]} ({len(run)} hosts, each)"] if len(run) > 2 else run
        lines += [f"{who} {verb} {where}: {what}" for where in wheres]
        start = end
    return lines
