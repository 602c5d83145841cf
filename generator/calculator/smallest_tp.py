"""The smallest ``--tp`` at which vLLM starts a replica whose weights leave no KV memory at the TP asked (newuser97 item 5).

The estimate's remedy said "add GPUs (--tp)" without how many; the README promises the estimate says how many GPUs.
The answer re-runs the estimate's own sizing at each larger TP that vLLM accepts (it divides the attention heads, and
the KV heads and TP divide one another: :func:`generator.sizing.loadability.head_split_problems`), up to the most
GPUs a catalog server of the GPU holds (8 where no catalog server holds it).
"""

from __future__ import annotations

from generator import catalog
from generator.errors import InputError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest
    from generator.catalog.records import GpuSpec
    from generator.sizing.architecture import Architecture

#: The widest TP tried for a GPU no catalog server holds (an HGX baseboard's 8).
UNKNOWN_SERVER_GPUS = 8


def widest_tp(gpu: GpuSpec) -> int:
    """The most GPUs a catalog server of ``gpu`` holds (:data:`UNKNOWN_SERVER_GPUS` where none holds it)."""
    counts = [max(p.gpu_counts) for p in catalog.platforms().values() if gpu.id in p.gpu_ids and p.gpu_counts]
    return max(counts) if counts else UNKNOWN_SERVER_GPUS


def tp_degrees(arch: Architecture, above: int, widest: int) -> list[int]:
    """TP degrees above ``above`` up to ``widest`` that split the attention heads and the KV heads as vLLM requires."""
    from generator.sizing.loadability import head_split_problems  # the engines' rule, loaded with the search

    return [tp for tp in range(above + 1, widest + 1) if not head_split_problems(arch, tp)]


def smallest_starting_tp(req: EstimateRequest, arch: Architecture, gpu: GpuSpec) -> dict[str, Any]:
    """``tp`` (None where none starts) and its ``weights_bytes_per_gpu``; ``server_gpus``, the widest TP, and ``tp_tried``.

    Each degree is the estimate run again with only ``--tp`` changed (``advise=False``: no search inside it); a degree
    the estimate refuses (an expert-parallel or quantization-block split) is passed over.
    """
    from generator.calculator.estimate import estimate

    widest = widest_tp(gpu)
    degrees = tp_degrees(arch, req.tp, widest)
    for tp in degrees:
        try:
            tried = estimate(req._replace(tp=tp), advise=False)
        except InputError:
            continue
        if tried.get("capacity", {}).get("vllm_log", {}).get("starts"):
            weights = int(tried["memory"]["per_gpu"]["weights"])
            return {"tp": tp, "weights_bytes_per_gpu": weights, "server_gpus": widest, "tp_tried": degrees}
    return {"tp": None, "weights_bytes_per_gpu": None, "server_gpus": widest, "tp_tried": degrees}
