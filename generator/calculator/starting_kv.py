"""The KV cache of an estimate re-run with one setting changed, where vLLM's start-up check then passes.

The remedies of a refused replica (an FP8 KV cache: :mod:`fp8_kv_start`; a larger ``--gpu-memory-utilization``:
:mod:`utilization_start`) each re-run the estimate's own sizing with only their setting changed and read the same two
figures from it.
"""

from __future__ import annotations

from generator.errors import InputError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest


def starting_kv(req: EstimateRequest) -> dict[str, Any] | None:
    """``kv_cache_tokens`` and ``kv_cache_bytes`` (one GPU's) of ``req``'s estimate where vLLM starts; None if not.

    None too where the estimate refuses the request; it runs with ``advise=False`` (no remedy searched inside it).
    """
    from generator.calculator.estimate import estimate

    try:
        tried = estimate(req, advise=False)
    except InputError:
        return None
    cap = tried.get("capacity", {})
    if not cap.get("vllm_log", {}).get("starts"):
        return None
    return {"kv_cache_tokens": cap["kv_cache_tokens"], "kv_cache_bytes": cap["kv_cache_bytes"]}
