"""Who holds the owned servers a refused deployment could not have, as its refusal says it (fix167).

Services sharing an owned server each counted it: two services on one DGX read "'small' holds 1 x dgx-h100; 'chat'
holds 1 x dgx-h100", as if two servers. Where the deployments holding a kind count more of its servers than the pass
holds of it (``held``), they share them: said once, with the GPUs each one's replicas take: "the owned dgx-h100
(1 server) is shared by deployments 'small' and 'chat' ('small' 2, 'chat' 2 of its 8 GPUs)". fix185 item 2: "'embed'
holds 1 x dgx-h100" did not say the server is the user's own, taken: "the owned dgx-h100 (1 server) is taken by
deployment 'embed'".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from generator.planner.inventory import ServerKey
from generator.planner.option import Option
from generator.planner.placement import gpu_block
from generator.shared_host_text import shared_host_lines
from generator.units import figure_text
from generator.words import listed


def held_text(holders: Sequence[tuple[str, Option]], held: Mapping[ServerKey, int] | None) -> list[str]:
    """Each holder's owned servers (``the owned dgx-h100 (1 server) is taken by deployment 'a'``), shared ones once.

    A kind they share is said once, where they share it.

    ``holders``: (deployment name, its option), each option once (a chain's jobs hold one). ``held``: the owned
    servers of each kind the pass holds; None: not known (each holder said on its own, as before).
    """
    counts: dict[ServerKey, list[tuple[str, int]]] = {}
    gpus: dict[ServerKey, dict[str, Fraction]] = {}  # the GPUs each holder's replicas take of a kind
    for name, opt in holders:
        for part in opt.pieces:
            if part.candidate.owned_nodes:
                counts.setdefault(part.server_kind, []).append((name, part.candidate.owned_nodes))
                taken = gpus.setdefault(part.server_kind, {})
                taken[name] = taken.get(name, Fraction(0)) + part.gpus_used
    shared = {
        kind
        for kind, who in counts.items()
        if held is not None and len(who) > 1 and sum(n for _, n in who) > held.get(kind, 0) > 0
    }
    out: list[str] = []
    for name, opt in holders:
        own = [
            (p.candidate.owned_nodes, p.hardware.platform.id)
            for p in opt.pieces
            if p.candidate.owned_nodes and p.server_kind not in shared
        ]
        out += [f"{_owned_text(own)} taken by deployment '{name}'"] if own else []
        for kind in sorted({p.server_kind for p in opt.pieces if p.server_kind in shared}):
            who = counts[kind]
            if who[0][0] == name:  # said once, where its first holder stands
                names = listed([f"'{n}'" for n in dict.fromkeys(n for n, _ in who)], "and")
                servers = held[kind] if held else 0
                each = ", ".join(f"'{n}' {figure_text(float(g))}" for n, g in gpus[kind].items())
                of = f"its {kind[2]}" if servers == 1 else f"their {servers * kind[2]:,}"
                out.append(f"{_owned_text([(servers, kind[0])])} shared by deployments {names} ({each} of {of} GPUs)")
    return out


def _owned_text(servers: Sequence[tuple[int, str]]) -> str:
    """``the owned dgx-h100 (1 server) is``: the owned servers of each platform taken, and the verb (fix185 item 2).

    A refusal read "'embed' holds 1 x dgx-h100", which did not say the server is the user's own, taken.
    """
    kinds = " and ".join(f"{pid} ({n} server{'' if n == 1 else 's'})" for n, pid in servers)
    many = len(servers) > 1 or servers[0][0] > 1
    return f"the owned {kinds} {'are' if many else 'is'}"


def owned_short_why(layout: str, nodes: int, free: int, not_bought: str, shared: str = "") -> str:
    """Why a layout needing more owned servers than are free was dropped: ``3 x TP8 ... needs 3 servers; 1 owned ...``.

    ``shared``: the servers counted ``free`` that other services hold in part (:func:`shared_owned_text`), said beside.
    """
    return f"{layout} needs {nodes} server{'' if nodes == 1 else 's'}; {free} owned are free{shared} and {not_bought}"


def shared_owned_text(
    holders: Sequence[tuple[int, str, Option]], key: ServerKey, held: int, partial: int, hosts: Sequence[str]
) -> str:
    """The owned servers of ``key`` other services hold in part: whose GPUs they take and which idle (fix171).

    A pass where services share servers leaves such a server free to the next service (its idle GPUs), so a refusal
    read "needs 3 servers; 1 owned are free" of a DGX two services use half of. ``holders``: (the deployment's index in
    the workload, its name, its option); ``held``: the servers of ``key`` they hold, ``partial`` of them in part;
    ``hosts``: the kind's owned host names in inventory order (its pool takes the first). One server held: which of its
    GPUs each takes, as the plan lays them out (:func:`~generator.planner.placement.gpu_block`: the widest replica
    first, then the workload's order), and which idle; else how many each takes of them and how many idle.
    """
    per = key[2]
    widths: list[tuple[int, int, str, int]] = []  # (-width, workload order, name, replica number)
    taken: dict[str, Fraction] = {}
    exact = held == 1
    for order, name, opt in holders:
        for part in opt.pieces:
            if part.server_kind != key or not part.candidate.owned_nodes:
                continue
            taken[name] = taken.get(name, Fraction(0)) + part.gpus_used
            exact = exact and part.shares_servers and not part.candidate.shares_per_gpu
            if exact:
                widths += [(-part.replica_shape.par.gpus, order, name, n) for n in range(part.candidate.replicas)]
    if not exact:
        each = ", ".join(f"'{n}' {figure_text(float(g))}" for n, g in taken.items())
        idle = held * per - math.ceil(sum(taken.values()))
        return f", {partial} shared ({each} of their {held * per:,} GPUs taken, {idle:,} idle)"
    room = list(range(per))
    entries: list[tuple[str, str, tuple[int, ...]]] = []
    for negative_width, _, name, _ in sorted(widths):
        gpus = gpu_block(room, -negative_width, per)
        room = [g for g in room if g not in gpus]
        entries.append((hosts[0] if hosts else f"the owned {key[0]}", name, gpus))
    (line,) = shared_host_lines(entries, per)
    return f", 1 shared ({line})"
