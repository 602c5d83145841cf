"""Whether an FP8 KV cache starts a replica vLLM's start-up check refuses with a 16-bit one (fix183 item 3).

The estimate's remedy named a shorter context, a lower ``--max-num-seqs`` and more GPUs, never ``--kv-precision fp8``
(vLLM's ``--kv-cache-dtype fp8``), which halves a token's KV. The answer re-runs the estimate's own sizing with only
the KV precision changed, where the engine offers an FP8 cache on the GPU (:func:`generator.planner.fp8_kv.fp8_kv_offered`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest
    from generator.catalog.records import GpuSpec


def fp8_kv_start(req: EstimateRequest, kv_name: str, gpu: GpuSpec) -> dict[str, Any] | None:
    """The KV tokens and bytes an FP8 cache holds where vLLM then starts; None where it does not, or none is offered."""
    from generator.calculator.starting_kv import starting_kv
    from generator.planner.fp8_kv import fp8_kv_offered

    if not fp8_kv_offered(req.engine, kv_name, gpu):
        return None
    return starting_kv(req._replace(kv_precision="fp8"))
