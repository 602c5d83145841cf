"""A service whose nodes lack the host RAM its LoRA adapters' CPU caches take: where it is refused, and what fits (fix161).

Each engine worker (a GPU) keeps ``max_cpu_loras`` adapters loaded in host RAM (vLLM's ``--max-cpu-loras``, SGLang's
``--max-loaded-loras``; :func:`generator.sizing.lora_serving.lora_serving`), so a node of N GPUs holds N caches beside
the OS reserve. Where every layout is ruled out by a node's RAM so (``ram-short`` on a cloud or owned node,
``ram-exceeds-platform`` where the platform takes no more DIMMs), the refusal stands at the field that sets the caches
(``inference.lora.max_cpu_loras``, else ``adapters``, its default) and names the ``max_cpu_loras`` each node kind holds.
"""

from __future__ import annotations

from generator.planner.blocked import Blocked
from generator.units import GIB
from generator.workload.models import InferenceDeployment

#: Node-assembly findings that rule a layout out on the node's host RAM.
RAM_CODES = frozenset({"ram-short", "ram-exceeds-platform"})


def caches_room(ram_gib: int, os_bytes: int, caches_bytes: int) -> tuple[int, int]:
    """What a node of ``ram_gib`` holds for the caches beside ``os_bytes``, and what the caches take on it."""
    return max(0, ram_gib * GIB - os_bytes), caches_bytes


def _ruled_out_by_caches(blocked: list[Blocked]) -> list[Blocked]:
    return [b for b in blocked if b.code in RAM_CODES and b.host_ram_room is not None]


def caches_rule_out_all(blocked: list[Blocked]) -> bool:
    """Whether the adapters' caches are what rules out every layout ``blocked`` names (a node's RAM each)."""
    return bool(blocked) and len(_ruled_out_by_caches(blocked)) == len(blocked)


def lora_ram_field(dep: InferenceDeployment, index: int, blocked: list[Blocked]) -> tuple[str | int, ...] | None:
    """The field a service's refusal stands at where its adapters' caches rule out every layout; None otherwise."""
    lora = dep.inference.lora
    if lora is None or not caches_rule_out_all(blocked):
        return None
    return ("deployments", index, "inference", "lora", "max_cpu_loras" if lora.max_cpu_loras is not None else "adapters")


def lora_ram_hint(dep: InferenceDeployment, blocked: list[Blocked]) -> str | None:
    """What unblocks layouts the adapters' caches rule out: the ``max_cpu_loras`` each node kind holds, or more RAM.

    None where no layout is ruled out so.
    """
    lora = dep.inference.lora
    short = _ruled_out_by_caches(blocked)
    if lora is None or not short:
        return None
    from generator.sizing.lora_serving import served_cpu_loras, served_max_loras

    cached = served_cpu_loras(lora.max_cpu_loras, lora.adapters)
    slots = served_max_loras(lora.max_loras, dep.inference.engine, lora.adapters)
    fits: dict[str, int] = {}
    for b in short:
        assert b.host_ram_room is not None
        room, need = b.host_ram_room
        # the caches scale with max_cpu_loras: the most whose caches the node holds beside the OS
        held = room * cached // need if need else cached
        fits[b.platform_id] = min(fits.get(b.platform_id, held), held)
    each = ", ".join(f"{n:,} on {platform}" for platform, n in sorted(fits.items(), key=lambda kv: (-kv[1], kv[0])))
    best = max(fits.values())
    more_ram = "allow a platform with more RAM per GPU (each GPU's engine worker keeps its own cache)"
    now = f"{cached:,}" + ("" if lora.max_cpu_loras is not None else ", unset: every adapter")
    if best >= slots:
        return (
            f"lower inference.lora.max_cpu_loras to {best:,} or fewer (now {now}; the adapters beyond it are read from "
            f"disk again when asked for): the most each node's RAM holds beside the OS is {each}; or {more_ram}"
        )
    return (
        f"no node allowed holds even max_loras' {slots:,} adapters in each GPU's cache (the engines refuse max_cpu_loras "
        f"below max_loras; most that fit: {each}): {more_ram}, a lower max_rank or fewer target_modules (smaller adapters)"
    )
