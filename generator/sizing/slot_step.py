"""What a step of llama.cpp server slots decoding together does with the weights held off the GPUs, in words (acc146).

The parallel-slots texts said "the CPU's arithmetic (is) not counted, so at best" since the slots were first planned
(2026-12-03); the CPU's multiplies have been counted once a slot since newuser38 (``offload.cpu_weight_seconds``), and
a step of ``offload_min_batch_tokens`` slots or more is not the CPU's at all: llama.cpp's CUDA backend takes every op
of a batch that wide whose weights are in host memory, the scheduler copying them to the GPU first
(ggml-cuda.cu ``ggml_backend_cuda_device_offload_op``, ``get_op_batch_size(op) >= min_batch_size``, 32). So a slot of
34 decoding on one thread (0.64 tokens/s, its step PCIe's) can be faster than one alone (0.44, the CPU's), which the
text now says rather than read as a bound.
"""

from __future__ import annotations


def slot_step_text(mode: str, engine: str, each_tokens_per_s: float, alone_tokens_per_s: float) -> str:
    """The words beside the slots' tokens/s (the caller brackets them): how their step runs ``mode``.

    ``mode``: :attr:`~generator.sizing.offload.StreamCapacity.mode`.

    ``each_tokens_per_s`` against ``alone_tokens_per_s`` (one stream's): where the slots' step is the GPU's and a
    slot is the faster, the text says why.
    """
    if mode == "pcie-stream":
        said = (
            f"a step this wide {engine} runs on the GPU, the weights held in RAM copied to it each step, not multiplied "
            "on the CPU"
        )
        if each_tokens_per_s > alone_tokens_per_s:
            said += ": each is faster than one stream alone, whose step the CPU multiplies"
        return said
    if mode == "cpu-compute":
        return "the weights read once a step for all, the CPU multiplying them by every slot's token"
    return "the weights read once a step for all"
