"""Who holds the owned servers a refused deployment could not have, as its refusal says it (fix167).

Services sharing an owned server each counted it: two services on one DGX read "'small' holds 1 x dgx-h100; 'chat'
holds 1 x dgx-h100", as if two servers. Where the deployments holding a kind count more of its servers than the pass
holds of it (``held``), they share them: said once, "'small' and 'chat' share 1 x dgx-h100".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from generator.planner.inventory import ServerKey
from generator.planner.option import Option
from generator.words import listed


def held_text(holders: Sequence[tuple[str, Option]], held: Mapping[ServerKey, int] | None) -> list[str]:
    """Each holder's owned servers (``'a' holds 1 x dgx-h100``), a kind they share said once where they share it.

    ``holders``: (deployment name, its option), each option once (a chain's jobs hold one). ``held``: the owned
    servers of each kind the pass holds; None: not known (each holder said on its own, as before).
    """
    counts: dict[ServerKey, list[tuple[str, int]]] = {}
    for name, opt in holders:
        for part in opt.pieces:
            if part.candidate.owned_nodes:
                counts.setdefault(part.server_kind, []).append((name, part.candidate.owned_nodes))
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
                names = listed([f"'{n}'" for n, _ in dict.fromkeys(who)], "and")
                out.append(f"{names} share {held[kind] if held else 0} x {kind[0]}")
    return out
