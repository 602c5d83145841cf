"""Whether a replica's ``max_loras`` slots hold the distinct adapters its planned batch asks for (``lora-slots-short``).

vLLM's scheduler admits a waiting request of an adapter the step does not yet hold only while the step holds fewer than
``max_loras`` adapters; otherwise it skips the request, which waits until one of the running adapters has no request
left in the batch (``Scheduler.schedule``: "Scheduling would exceed max_loras, skip",
https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py); SGLang's ``--max-loras-per-batch``
alike. The plan's batch at its load (Little's law: the rate a replica takes x the time a request holds a place) is
drawn from the adapters taken as equally used, as the LoRA kernels' time takes it
(:func:`~generator.sizing.lora_serving.expected_distinct_adapters`, uncapped here): where those requests' distinct
adapters outnumber the slots, the batch the TTFT and the wait for a place are timed at cannot form, and requests of the
other adapters wait for a slot, a wait the TTFT p95 does not count. The finding says so with the slots that hold them
and what they cost a GPU; the plan's figures stay those of the batch it sized.
"""

from __future__ import annotations

import math
from typing import Any

from generator.planner.plan import Finding
from generator.sizing.lora_serving import ENGINE_LORA, expected_distinct_adapters
from generator.units import MIB

#: The scheduler lines the finding cites.
SCHEDULER_SOURCE = "https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py"


def distinct_adapters_in_batch(adapters: int, sequences: float) -> float:
    """Distinct adapters among ``sequences`` requests drawn uniformly from ``adapters``, no cap: ``N x (1 - (1 - 1/N)^B)``."""
    return expected_distinct_adapters(adapters, adapters, sequences)


def slots_needed(adapters: int, sequences: float) -> int:
    """The fewest slots that hold the batch's distinct adapters on average (rounded up, at most ``adapters``)."""
    return min(adapters, math.ceil(distinct_adapters_in_batch(adapters, sequences)))


def slots_short_text(lora: dict[str, Any], batch: int, engine: str, batch_text: str, setting: str, resized: str) -> str | None:
    """Why ``batch``'s distinct adapters do not fit ``lora``'s ``max_loras`` slots; None where they do.

    ``lora``: the ``lora`` entry of a plan's details or the estimate's (``adapters``, ``max_loras``,
    ``slot_bytes_per_gpu``); ``batch_text``: the batch as its output names it ("its planned batch of 40 requests a
    replica"); ``setting``: what sets the slots there; ``resized``: what sizes them again. The one rule the planner's
    finding and the estimate's warning share (fix191).
    """
    adapters, slots = lora["adapters"], lora["max_loras"]
    needed = slots_needed(adapters, batch)
    if needed <= slots:
        return None
    distinct = distinct_adapters_in_batch(adapters, batch)
    flag = ENGINE_LORA[engine].batch_flag
    extra = (needed - slots) * lora["slot_bytes_per_gpu"]
    return (
        f"{batch_text}, drawn from {adapters} adapters taken as equally used, holds {distinct:,.1f} distinct adapters "
        f"on average, but {flag} {slots} lets a step hold {slots}: the engine skips a request of any other adapter "
        f"until one of the {slots} has none left in the batch ({SCHEDULER_SOURCE}), so that batch cannot form and "
        f"those requests wait for a slot, a wait the TTFT p95 and the rates do not count. Set {setting} to at least "
        f"{needed} (another {extra / MIB:,.0f} MiB a GPU out of the KV pool; {resized} sizes the slots and their "
        "kernels, which may move the batch), or route each adapter's requests to replicas of their own so that "
        f"a replica sees at most {slots} adapters; adapters used unevenly hold fewer at once"
    )


def lora_slot_findings(index: int, name: str, details: dict[str, Any], engine: str) -> list[Finding]:
    """``lora-slots-short`` where the planned batch's distinct adapters outnumber ``max_loras``; none otherwise."""
    lora = details.get("lora")
    batch = details.get("batch_per_replica")
    if not isinstance(lora, dict) or not isinstance(batch, int) or batch <= 0:
        return []
    planned = f"its planned batch of {batch} requests a replica"
    if (said := slots_short_text(lora, batch, engine, planned, "max_loras", "a re-plan")) is None:
        return []
    path = f"deployments[{index}].inference.lora.max_loras"
    return [Finding("warning", "lora-slots-short", f"deployment {name}: {said}", path)]
