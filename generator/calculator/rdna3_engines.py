"""What the quick estimate says of vLLM / SGLang on an RDNA 3 card (RX 7900 XTX, Radeon PRO W7900): fix183 item 4.

Its llama.cpp path says an AMD prompt is unchecked (:mod:`generator.calculator.llama_cpp_vendor`); the serving engines'
path said nothing, though no measurement of either engine on RDNA 3 is in specgen's calibration (its AMD rows are
the Instinct MI300X's, CDNA 3): the decode and prefill rates there are modelled from the GPU's bandwidth and tensor
rate with efficiencies fitted on other GPUs. Whether the engine runs on the card at all is its own documentation's word.
"""

from __future__ import annotations

from generator.sizing.engine_runtime import ENGINE_NAMES

#: vLLM's GPU installation page, v0.14.0 (the version specgen's vLLM sources cite): its ROCm requirements list
#: "Radeon RX 7900 series (gfx1100/1101)" beside MI200s, MI300 and MI350. The Radeon PRO W7900 is gfx1100 too.
VLLM_ROCM_GPUS_URL = "https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/"
#: SGLang's own page for AMD GPUs: written for the Instinct MI300X, it names no Radeon card.
SGLANG_AMD_URL = "https://docs.sglang.io/platforms/amd_gpu.html"

#: What each engine's own documentation says of RDNA 3 (gfx1100).
_SUPPORT = {
    "vllm": (
        f"vLLM's ROCm requirements list the Radeon RX 7900 series (gfx1100/1101), the chip of the RX 7900 XTX and the "
        f"Radeon PRO W7900, among the GPUs it supports ({VLLM_ROCM_GPUS_URL})"
    ),
    "sglang": (
        f"SGLang's own AMD page is written for the Instinct MI300X and names no Radeon card ({SGLANG_AMD_URL}): "
        "check that your SGLang build runs on gfx1100 before you rely on it"
    ),
}


def rdna3_engine_note(engine: str, architecture: str) -> str | None:
    """The note that specgen has no ``engine`` measurement on an RDNA 3 GPU, and what the engine says of the card.

    None off RDNA 3, and for an engine other than vLLM or SGLang.
    """
    if architecture != "rdna3" or engine not in _SUPPORT:
        return None
    return (
        f"specgen has no {ENGINE_NAMES[engine]} measurement on RDNA 3 (its AMD serving rows are the Instinct MI300X's, "
        "CDNA 3): a rate on this GPU is modelled from its memory bandwidth and tensor rate with efficiencies fitted on "
        f"other GPUs, unchecked; {_SUPPORT[engine]}"
    )
