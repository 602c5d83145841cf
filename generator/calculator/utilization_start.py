"""Whether a larger ``--gpu-memory-utilization`` starts a replica vLLM's start-up check refuses (newuser107).

Llama-3.3-70B at int4 on two RTX 3090s (``--tp 2``, 8,192 tokens) was refused at vLLM's default 0.9 (0.40 GiB of KV
cache a GPU where one request needs 0.63), and the remedy named a shorter context, fewer sequences and more GPUs but
not the fraction itself, which a home lab serving a 70B model on 24 GB cards raises first. The answer re-runs the
estimate's own sizing with only the fraction changed, at each of :data:`UTILIZATIONS_TRIED` above the one asked.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest

#: The fractions tried, above vLLM's default 0.9: 0.95 leaves 1.2 GiB of a 24 GiB card outside vLLM's budget (for
#: memory it does not profile: another process, a display the card drives); nothing above it is offered.
UTILIZATIONS_TRIED = (0.92, 0.95)


def utilization_start(req: EstimateRequest, asked: float) -> dict[str, Any] | None:
    """The smallest fraction above ``asked`` (the one sized) at which vLLM starts, with its KV tokens; None if none.

    ``gpu_memory_utilization`` (the fraction), ``kv_cache_tokens`` and ``kv_cache_bytes`` (one GPU's) where it starts.
    """
    from generator.calculator.starting_kv import starting_kv

    for fraction in UTILIZATIONS_TRIED:
        if fraction > asked and (kv := starting_kv(req._replace(gpu_memory_utilization=fraction))) is not None:
            return {"gpu_memory_utilization": fraction, **kv}
    return None
