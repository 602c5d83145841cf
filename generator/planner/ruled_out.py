"""Layouts the search ruled out, as reasons a reader of the plan can act on.

The candidate builders note each layout they drop as a :class:`Blocked` record (GPU, platform, code, why).
Two of those reach the plan: a chosen platform's layouts dropped because their PSUs could not power them
(so the plan says why it fits fewer GPUs in a chassis), and why owned servers were left free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any

from generator.named_tuple import NamedTuple
from generator.planner.blocked import OWNED_SHORT, Blocked
from generator.planner.nodes import PSU_OVER_CAPACITY

#: Reasons kept per deployment in one line (the rest are counted).
MAX_REASONS = 2
#: The Ansible inventory group of the named owned hosts a plan leaves free (fix198 item 1: they were in no group, so
#: ``ansible-playbook -l`` could not reach them and nothing said they were free); a child of ``all``, not of
#: ``gpu_nodes``, whose pools' group vars they have none of.
FREE_HOSTS_GROUP = "free_nodes"


def _on(gpu_id: str, platform_id: str, blocked: Sequence[Blocked]) -> list[Blocked]:
    """The distinct reasons, in the order found, that layouts of ``gpu_id`` on ``platform_id`` were dropped."""
    return list(dict.fromkeys(b for b in blocked if (b.gpu_id, b.platform_id) == (gpu_id, platform_id)))


def psu_ruled_out(gpu_id: str, platform_id: str, blocked: Sequence[Blocked], on_owned: bool = False) -> list[str]:
    """Why layouts of the chosen hardware with more GPUs per node were dropped: their PSUs cannot power them.

    Where the chosen part runs on owned servers (``on_owned``) or the layout dropped had owned ones, the owned
    servers are kept whatever their PSUs: what is ruled out is buying more of them.
    """
    texts = (
        f"buying more {_server(b)} is ruled out: {b.why}" if on_owned or b.owned else f"ruled out: {b.why}"
        for b in _on(gpu_id, platform_id, blocked)
        if b.code == PSU_OVER_CAPACITY
    )
    return list(dict.fromkeys(texts))


def _server(b: Blocked) -> str:
    """``"<n>-GPU <platform>"`` where the record has its GPUs per node, else the platform."""
    return f"{b.gpus_per_node}-GPU {b.platform_id}" if b.gpus_per_node else b.platform_id


def _left_free_reason(b: Blocked) -> str:
    """A dropped layout's reason as why owned servers were left free: a PSU limit is the servers to buy's."""
    if b.code != PSU_OVER_CAPACITY or not b.owned:
        return b.why
    return (
        f"the layout needs {b.nodes} x {_server(b)}, {b.owned} owned free; the {b.nodes - b.owned} more to buy "
        f"would run over their PSUs: {b.why}"
    )


class OwnedBuild(NamedTuple):
    """The owned servers of one kind, as the plan's inventory report counts them."""

    servers: int
    gpus_per_server: int
    #: Those the plan leaves free.
    free: int
    #: Why no more of them are bought (None: more may be).
    not_bought: str | None


def _too_few(reasons: Sequence[Blocked], build: OwnedBuild | None) -> str:
    """Why layouts needing more owned servers than are free were dropped, in terms of the owned build where known.

    The fewest servers of the build's GPU count a layout needed (newuser42 item 3: "32 x dell-xe7740 (1 x
    h100-pcie-80gb) needs 32 servers; 0 owned are free" was said of two free 8-GPU servers).
    """
    if build is None:
        return reasons[0].why
    on_build = [r for r in reasons if r.code == OWNED_SHORT and r.gpus_per_node == build.gpus_per_server and r.nodes]
    if not on_build:
        return reasons[0].why
    least = min(on_build, key=lambda r: (r.nodes, r.pp, r.why))
    per = build.gpus_per_server
    layout = f", {least.layout}," if least.layout else ""
    return (
        f"its smallest layout on {per}-GPU servers{layout} needs {least.nodes} of them ({least.nodes * per} GPUs), and "
        f"{build.servers} x {per} GPUs ({build.servers * per} in all) are owned, {build.free} free"
        + (f"; {build.not_bought}" if build.not_bought else "")
    )


def why_left_free(
    gpu_id: str,
    platform_id: str,
    blocked: Mapping[str, Sequence[Blocked]],
    users: Set[str] = frozenset(),
    feasible: Set[str] = frozenset(),
    verdicts: Mapping[str, str] | None = None,
    build: OwnedBuild | None = None,
) -> str:
    """Why the deployments other than ``users`` took no owned server of one kind, or "" where none was dropped there.

    Per deployment: of those in ``feasible`` (a layout there was feasible), what the fleet search found of the fleets
    running it there (``verdicts``, by name; :mod:`generator.planner.left_free` checks it), or until it is checked that
    the fleet ranks better by the objective without it; else what rules the server out (its pins, RAM, network, PSU,
    SLO), else the fewest servers of the owned ``build`` its layouts need (more of them are not bought).
    """
    unchecked = "a layout on them was feasible, but the fleet ranks better by the objective without it"
    parts = [f"{name}: {(verdicts or {}).get(name, unchecked)}" for name in sorted(feasible - set(users))]
    for name, found in blocked.items():
        reasons = _on(gpu_id, platform_id, found)
        if name in users or name in feasible or not reasons:
            continue
        # of the layouts whose servers to buy run over their PSUs, the one buying fewest says it (a wider one, tried for
        # the time between nodes, says the same of more servers)
        bought_over = [r for r in reasons if r.code == PSU_OVER_CAPACITY and r.owned]
        fewest = min(bought_over, key=lambda r: (r.nodes, r.why)) if bought_over else None
        # a layout over more servers than are owned, which their network rules out, is one of servers short too: not
        # why those owned were left free (fix113)
        said = [r for r in reasons if r.code != OWNED_SHORT and not r.wider_than_owned and (r is fewest or r not in bought_over)]
        server = list(dict.fromkeys(_left_free_reason(r) for r in said))
        kept = server[:MAX_REASONS] if server else [_too_few(reasons, build)]
        more = f" (+{len(server) - MAX_REASONS} more)" if len(server) > MAX_REASONS else ""
        parts.append(f"{name}: {'; '.join(kept)}{more}")
    return " | ".join(parts)


def owned_build(entry: Mapping[str, Any]) -> OwnedBuild:
    """The owned build of an owned kind's entry in the plan's inventory report."""
    return OwnedBuild(entry["owned"], entry["gpus_per_server"], entry["free"], entry["not_bought"])


def left_free_message(entry: Mapping[str, Any], why: str) -> str:
    """The ``inventory-free`` finding of an owned kind's entry in the plan's inventory report, with ``why`` (may be "")."""
    hosts = f": {', '.join(entry['free_hosts'])} (Ansible group {FREE_HOSTS_GROUP})" if entry["free_hosts"] else ""
    return (
        f"{entry['free']} of {entry['owned']} owned {entry['platform']} server(s) ({entry['gpus_per_server']} x "
        f"{entry['gpu']}) left free{hosts}" + (f"; not used by {why}" if why else "")
    )
