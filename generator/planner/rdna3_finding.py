"""The plan's note that specgen has no vLLM / SGLang measurement on the RDNA 3 cards it serves on (fix186 item 2).

fix183 item 4 put it in ``specgen estimate``; a plan serving on owned RX 7900 XTX or Radeon PRO W7900 servers
(``hardware.inventory``, the one path that serves with vLLM or SGLang on them: no catalog platform holds them, and
``hardware.fixed`` runs llama.cpp) said nothing. The words are the estimate's
(:func:`generator.calculator.rdna3_engines.rdna3_engine_note`).
"""

from __future__ import annotations

from collections.abc import Iterable

from generator.calculator.rdna3_engines import rdna3_engine_note
from generator.catalog.records import GpuSpec
from generator.planner.plan import Finding, Level

#: The finding's code.
RDNA3_ENGINE_UNMEASURED = "rdna3-engine-unmeasured"


def rdna3_engine_findings(index: int, name: str, engine: str, gpus: Iterable[GpuSpec]) -> list[Finding]:
    """Once a deployment, where ``engine`` serves it on an RDNA 3 GPU among ``gpus`` (its parts').

    An info for vLLM, whose ROCm requirements list the card; a warning for SGLang, whose AMD page names no Radeon card.
    """
    for gpu in gpus:
        if note := rdna3_engine_note(engine, gpu.architecture):
            level: Level = "info" if engine == "vllm" else "warning"
            return [Finding(level, RDNA3_ENGINE_UNMEASURED, f"deployment {name} on {gpu.id}: {note}", f"deployments[{index}]")]
    return []
