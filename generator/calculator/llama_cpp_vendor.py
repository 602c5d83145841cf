"""What the quick estimate says of llama.cpp on a GPU not of the maker its prompt model was fitted on (newuser99).

llama.cpp's prompt timing (generator/sizing/llama_cpp_prompt.py) is fitted on CUDA runs alone; on another maker's GPU
the estimate times the prompt at the serving engines' prefill rate, which llama.cpp's ROCm scoreboard reads 43-200%
fast (tests/data/llama_cpp_amd_scoreboard.json). The memory a process may allocate and its context are the GPU
runtime's: CUDA on NVIDIA, HIP (ROCm) on AMD.
"""

from __future__ import annotations

from generator.sizing.llama_cpp_prompt import CUDA_VENDOR

#: llama.cpp's ROCm scoreboard, whose pp512 rows the serving prefill reads 43-200% fast.
ROCM_SCOREBOARD_URL = "https://github.com/ggml-org/llama.cpp/discussions/15021"


def gpu_runtime(vendor: str) -> str:
    """The GPU runtime llama.cpp allocates through on a GPU of ``vendor``: CUDA on NVIDIA, HIP on AMD."""
    return "CUDA" if vendor == CUDA_VENDOR else "HIP"


def prompt_unchecked_note(vendor: str | None) -> str | None:
    """The note that a llama.cpp TTFT on a GPU of ``vendor`` is not llama.cpp's fitted prompt path.

    None on NVIDIA, and without a GPU (``vendor`` None or empty: a machine of CPUs alone).
    """
    if not vendor or vendor == CUDA_VENDOR:
        return None
    return (
        "the TTFT is unchecked on this GPU: llama.cpp's prompt timing is fitted on NVIDIA GPUs alone, so the prompt is "
        "timed at the serving engines' prefill rate, which reads 43-200% faster than llama-bench's pp512 on llama.cpp's "
        f"ROCm scoreboard (RX 7900 XTX, Radeon PRO W7900, Instinct MI210: {ROCM_SCOREBOARD_URL}): expect the GPU's "
        "part of the prompt to take up to about 3 times as long"
    )
