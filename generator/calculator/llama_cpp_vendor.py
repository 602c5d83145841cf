"""What the quick estimate says of llama.cpp's prompt on a GPU not of its rates' maker (newuser99, acc171).

llama.cpp's prompt timing (generator/sizing/llama_cpp_prompt.py) is fitted on CUDA runs; on an AMD GPU it follows the
kernels llama.cpp's HIP build runs there (RDNA 3: the quantized matrices copied to fp16 for hipBLAS; CDNA: int8 MMQ on
the MFMA matrix cores), checked against llama-bench's pp512 on llama.cpp's ROCm and Vulkan scoreboards and one ROCm issue
(tests/data/llama_cpp_amd_scoreboard.json, benchmarks/CALIBRATION.md); another maker's GPU keeps the serving engines'
prefill, which no run checks. The memory a process may allocate and its context are the GPU runtime's: CUDA on NVIDIA,
HIP (ROCm) on AMD.
"""

from __future__ import annotations

from generator.sizing.llama_cpp_prompt import CUDA_VENDOR, HIP_VENDOR

#: llama.cpp's ROCm scoreboard, whose pp512 rows check the HIP prompt timing.
ROCM_SCOREBOARD_URL = "https://github.com/ggml-org/llama.cpp/discussions/15021"


def gpu_runtime(vendor: str) -> str:
    """The GPU runtime llama.cpp allocates through on a GPU of ``vendor``: CUDA on NVIDIA, HIP on AMD."""
    return "CUDA" if vendor == CUDA_VENDOR else "HIP"


def prompt_unchecked_note(vendor: str | None) -> str | None:
    """The note of what is and is not checked of a llama.cpp TTFT on a GPU of ``vendor``.

    None on NVIDIA, and without a GPU (``vendor`` None or empty: a machine of CPUs alone).
    """
    if not vendor or vendor == CUDA_VENDOR:
        return None
    if vendor == HIP_VENDOR:
        return (
            "the TTFT is timed by the kernels llama.cpp's HIP build runs on this GPU (RDNA 3: the quantized weights "
            "copied to fp16 for hipBLAS; CDNA: int8 MMQ on its matrix cores) at rates fitted on NVIDIA GPUs, checked "
            "against llama-bench's pp512 of single-GPU dense runs on the RX 7900 XTX, Radeon PRO W7900 and Instinct "
            f"MI210 ({ROCM_SCOREBOARD_URL}); a MoE model's prompt, newer builds that run MMQ on RDNA 3 and the MI300X "
            "are unchecked"
        )
    return (
        "the TTFT is unchecked on this GPU: llama.cpp's prompt timing follows its CUDA and HIP kernels, so on this "
        "maker's GPU the prompt is timed at the serving engines' prefill rate, which no llama.cpp run checks"
    )
