"""Layouts the search ruled out, as reasons a reader of the plan can act on.

The candidate builders note each layout they drop as a :class:`Blocked` record (GPU, platform, code, why).
Two of those reach the plan: a chosen platform's layouts dropped because their PSUs could not power them
(so the plan says why it fits fewer GPUs in a chassis), and why owned servers were left free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from generator.planner.blocked import OWNED_SHORT, Blocked
from generator.planner.nodes import PSU_OVER_CAPACITY

#: Reasons kept per deployment in one line (the rest are counted).
MAX_REASONS = 2


def _on(gpu_id: str, platform_id: str, blocked: Sequence[Blocked]) -> list[Blocked]:
    """The distinct reasons, in the order found, that layouts of ``gpu_id`` on ``platform_id`` were dropped."""
    return list(dict.fromkeys(b for b in blocked if (b.gpu_id, b.platform_id) == (gpu_id, platform_id)))


def psu_ruled_out(gpu_id: str, platform_id: str, blocked: Sequence[Blocked]) -> list[str]:
    """Why layouts of the chosen hardware with more GPUs per node were dropped: their PSUs cannot power them."""
    return [f"ruled out: {b.why}" for b in _on(gpu_id, platform_id, blocked) if b.code == PSU_OVER_CAPACITY]


def why_left_free(gpu_id: str, platform_id: str, blocked: Mapping[str, Sequence[Blocked]], users: Set[str] = frozenset()) -> str:
    """Why the deployments other than ``users`` took no owned server of one kind, or "" where none was dropped there.

    Per deployment: what rules the server out (RAM, network, PSU, SLO), else the first layout that needs more
    servers than are owned and free (more of them are not bought).
    """
    parts = []
    for name, found in blocked.items():
        reasons = _on(gpu_id, platform_id, found)
        if name in users or not reasons:
            continue
        server = [r.why for r in reasons if r.code != OWNED_SHORT]
        kept = server[:MAX_REASONS] if server else [reasons[0].why]
        more = f" (+{len(server) - MAX_REASONS} more)" if len(server) > MAX_REASONS else ""
        parts.append(f"{name}: {'; '.join(kept)}{more}")
    return " | ".join(parts)
