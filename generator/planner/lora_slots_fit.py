"""The LoRA slots a layout ruled out on GPU memory would fit with: the ``max_loras`` or ``max_rank`` that fits (fix165).

The engines allocate ``max_loras`` slots at ``max_rank`` on every GPU before the KV pool
(:mod:`generator.sizing.lora_serving`), so where a layout holds no sequence's KV cache, fewer or smaller slots may be
what makes it fit. The figure is found with the same sizing as the layout (``fits``: whether a replica of the service
so set holds one sequence), never from the bytes said in the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from generator.workload.models import InferenceSpec

#: Settings that fit, each (max_loras, max_rank): fewer slots at the rank given, else lower ranks.
LoraFit = tuple[tuple[int, int], ...]


def _with(spec: InferenceSpec, max_loras: int, max_rank: int) -> InferenceSpec:
    assert spec.lora is not None
    return spec._replace(lora=spec.lora._replace(max_loras=max_loras, max_rank=max_rank))


def lora_slots_fit(spec: InferenceSpec, fits: Callable[[InferenceSpec], bool]) -> LoraFit | None:
    """What fits: the most ``max_loras`` below the served slots at ``max_rank``, else lower ranks.

    Where one slot is too many at ``max_rank``: the highest rank the engine takes below it at the served slots, and at
    one slot where that is higher.

    None without adapters, or where nothing fits so (the slots are not what leaves no room).
    """
    from generator.sizing.lora_serving import rank_problem, served_max_loras

    lora = spec.lora
    if lora is None:
        return None
    slots = served_max_loras(lora.max_loras, spec.engine, lora.adapters)
    if slots > 1 and fits(_with(spec, 1, lora.max_rank)):
        low, high = 1, slots - 1  # low fits; the most that fits lies in [low, high]
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if fits(_with(spec, mid, lora.max_rank)) else (low, mid - 1)
        return ((low, lora.max_rank),)
    ranks = [r for r in range(lora.max_rank - 1, 0, -1) if rank_problem(spec.engine, r) is None]
    # vLLM takes few ranks; SGLang any: the powers of two are tried there, as adapters are trained at
    tried = ranks if spec.engine == "vllm" else [r for r in ranks if r & (r - 1) == 0]
    at_slots = next(((slots, r) for r in tried if fits(_with(spec, slots, r))), None)
    at_one = next(((1, r) for r in tried if fits(_with(spec, 1, r))), None) if slots > 1 else None
    found = tuple(fit for fit in (at_slots, at_one) if fit is not None)  # never equal: at_one only where slots > 1
    return found or None


def lora_slots_hint(fits: dict[str, LoraFit], slots: int, max_rank: int) -> str:
    """What unblocks the layouts whose LoRA slots leave no room, from each GPU's settings that fit (``fits`` by GPU id).

    ``slots`` and ``max_rank``: the service's.
    """

    def way(m: int, r: int) -> str:
        return f"max_loras {m}" if r == max_rank else f"max_rank {r}" if m == slots else f"max_loras {m} at max_rank {r}"

    said = [f"{' or '.join(way(m, r) for m, r in found)} on {gpu_id}" for gpu_id, found in sorted(fits.items())]
    return (
        f"inference.lora (max_loras {slots} at max_rank {max_rank}): {'; '.join(said)}, which the GPU's memory holds "
        "beside a sequence's KV cache (each GPU holds max_loras slots at max_rank before it)"
    )
