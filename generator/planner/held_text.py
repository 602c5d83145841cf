"""Who holds the owned servers a refused deployment could not have, as its refusal says it (fix167).

Services sharing an owned server each counted it: two services on one DGX read "'small' holds 1 x dgx-h100; 'chat'
holds 1 x dgx-h100", as if two servers. Where the deployments holding a kind count more of its servers than the pass
holds of it (``held``), they share them: said once, with the GPUs each one's replicas take: "'small' and 'chat' share
1 x dgx-h100 ('small' 2, 'chat' 2 of its 8 GPUs)".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from generator.planner.inventory import ServerKey
from generator.planner.option import Option
from generator.units import figure_text
from generator.words import listed


def held_text(holders: Sequence[tuple[str, Option]], held: Mapping[ServerKey, int] | None) -> list[str]:
    """Each holder's owned servers (``'a' holds 1 x dgx-h100``), a kind they share said once where they share it.

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
            f"{p.candidate.owned_nodes} x {p.hardware.platform.id}"
            for p in opt.pieces
            if p.candidate.owned_nodes and p.server_kind not in shared
        ]
        out += [f"'{name}' holds {' and '.join(own)}"] if own else []
        for kind in sorted({p.server_kind for p in opt.pieces if p.server_kind in shared}):
            who = counts[kind]
            if who[0][0] == name:  # said once, where its first holder stands
                names = listed([f"'{n}'" for n in dict.fromkeys(n for n, _ in who)], "and")
                servers = held[kind] if held else 0
                each = ", ".join(f"'{n}' {figure_text(float(g))}" for n, g in gpus[kind].items())
                of = f"its {kind[2]}" if servers == 1 else f"their {servers * kind[2]:,}"
                out.append(f"{names} share {servers} x {kind[0]} ({each} of {of} GPUs)")
    return out
