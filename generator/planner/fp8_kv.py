"""Where an FP8 KV cache (``kv_cache_precision: fp8``, the engine's ``--kv-cache-dtype``) is offered as a lever.

One rule for the plan's ``kv-cache-fp8`` advice (:mod:`generator.planner.engine_limits`) and a refusal's (fix183
item 3: a layout whose 16-bit KV cache did not fit was refused with no word of the FP8 cache that fits it).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start reaches this module)
if TYPE_CHECKING:
    from generator.catalog.records import GpuSpec

#: Engines whose KV cache can be FP8 (``--kv-cache-dtype``; :data:`generator.render.ansible.FP8_KV_CACHE_DTYPE`).
FP8_KV_ENGINES = ("vllm", "sglang")


def fp8_kv_offered(engine: str, kv_cache_precision: str, gpu: GpuSpec) -> bool:
    """Whether ``kv_cache_precision: fp8`` is advised for a 16-bit cache of ``engine`` on ``gpu``.

    A GPU with an FP8 tensor rate; not Gaudi, whose FP8 cache needs calibration (``gaudi-fp8-calibration``).
    """
    if kv_cache_precision not in ("bf16", "fp16") or engine not in FP8_KV_ENGINES:
        return False
    return bool(gpu.dense_tflops.get("fp8")) and not gpu.architecture.startswith("gaudi")
