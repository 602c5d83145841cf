"""Serving runtimes as what they are: whether the host loop does work for every running sequence each step.

The engine constant ``decode_overhead_per_sequence_s`` is host time per running sequence and step (request
bookkeeping, sampling and stop checks, detokenization), fitted on TensorRT-LLM's PyTorch executor, whose
loop is Python and handles every request each iteration. Runtimes with the same kind of loop (vLLM's and
SGLang's Python schedulers) pay it too; vLLM's is V1's, the engine new plans assume (the 2024 MI300X
calibration rows ran a build their source does not name: ``benchmarks/CALIBRATION.md``). TensorRT-LLM's C++
runtime as its static-batch benchmark drives it (``gptSessionBenchmark``: one ``GptSession::generate`` call
per batch, greedy sampling on the GPU, no scheduler, no detokenization) has no per-sequence host work: only
the per-step overhead remains. ``trtllm-serve`` (PyTorch backend, its default) puts the same PyExecutor behind an
OpenAI-compatible HTTP server, so its label resolves to the PyTorch executor's runtime (:data:`SAME_RUNTIME`).
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple


class EngineRuntime(NamedTuple):
    """A serving runtime's host loop."""

    name: str
    #: Whether the host loop handles each running sequence every step (a Python scheduler / executor).
    per_sequence_host_work: bool
    #: Where the loop can be read.
    source: str


#: Runtimes by the engine name the calibration rows and the estimate use.
RUNTIMES: dict[str, EngineRuntime] = {
    runtime.name: runtime
    for runtime in (
        EngineRuntime(
            "tensorrt-llm",
            True,
            "https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/py_executor.py",
        ),
        EngineRuntime(
            "tensorrt-llm-cpp",
            False,
            "https://github.com/NVIDIA/TensorRT-LLM/blob/027cd518e3b63809a5c5799187991e7f1164fb12/benchmarks/cpp/gptSessionBenchmark.cpp",
        ),
        EngineRuntime(
            "vllm",
            True,
            "https://github.com/vllm-project/vllm/blob/b4622cf924bc72504aed99e486062d6633fde39e/vllm/v1/core/sched/scheduler.py",
        ),
        EngineRuntime("sglang", True, "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/managers/scheduler.py"),
    )
}


#: Engine labels that run another label's runtime: ``trtllm-serve`` drives TensorRT-LLM's PyExecutor (its ``serve``
#: command builds the PyTorch ``LLM`` for ``--backend pytorch``, the default), the runtime ``tensorrt-llm`` names.
SAME_RUNTIME: dict[str, str] = {"tensorrt-llm-serve": "tensorrt-llm"}


def runtime_of(engine: str) -> EngineRuntime | None:
    """The runtime an engine label runs (a :data:`SAME_RUNTIME` alias resolved); None for an unknown label."""
    return RUNTIMES.get(SAME_RUNTIME.get(engine, engine))


def per_sequence_host_scale(engine: str, cpu_scale: float) -> float:
    """The per-sequence host-time multiplier of ``engine`` on a host whose CPU scales host time by ``cpu_scale``.

    ``cpu_scale`` (:func:`generator.catalog.host_cpu.host_time_scale`) applies where the runtime's loop does
    per-sequence work; a runtime without it gets 0. An unknown engine raises ``ValueError`` naming the known ones.
    """
    runtime = runtime_of(engine)
    if runtime is None:
        known = sorted([*RUNTIMES, *SAME_RUNTIME])
        raise ValueError(f"unknown serving runtime '{engine}'; known: {', '.join(known)}")
    return cpu_scale if runtime.per_sequence_host_work else 0.0


#: How the engines write their names.
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}
#: Each engine's flag for the most sequences a replica runs at once.
MAX_SEQUENCES_FLAG = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests"}

#: Where vLLM sets its batch limits when the user sets none: ``EngineArgs.get_batch_defaults`` (V1, the OpenAI API server).
VLLM_BATCH_DEFAULTS = (
    "https://github.com/vllm-project/vllm/blob/99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b/vllm/engine/arg_utils.py"
)

#: vLLM's test of a GPU for its larger batch defaults: at least this much memory, and not an A100 (vLLM PR #17885).
VLLM_LARGE_GPU_BYTES = 70 * 2**30


#: vLLM's limit on the GPUs that do not pass that test, and on every GPU before it (V0's ``max_num_seqs`` default).
VLLM_SMALL_GPU_MAX_NUM_SEQS = 256


def _vllm_large_gpu(gpu_name: str, gpu_memory_bytes: int) -> bool:
    """VLLM's test for its larger batch defaults (:data:`VLLM_LARGE_GPU_BYTES`)."""
    return gpu_memory_bytes >= VLLM_LARGE_GPU_BYTES and "a100" not in gpu_name.lower()


def default_max_num_seqs(engine: str, gpu_name: str, gpu_memory_bytes: int) -> int | None:
    """The most sequences ``engine`` runs at once on a GPU when none is set; None where no engine default is known here.

    vLLM (:data:`VLLM_BATCH_DEFAULTS`): 1,024 on GPUs of 70 GiB or more whose name does not say A100 (H100, H200,
    B200, MI300X, RTX PRO 6000 96GB), 256 on the rest (A100, L40S, L4, 24-48 GB RTX cards). SGLang sizes its request
    pool from the KV tokens (2,048 to 4,096), so the caller's cap stands.
    """
    if engine != "vllm":
        return None
    return 1024 if _vllm_large_gpu(gpu_name, gpu_memory_bytes) else VLLM_SMALL_GPU_MAX_NUM_SEQS


def default_max_num_batched_tokens(engine: str, gpu_name: str, gpu_memory_bytes: int) -> int | None:
    """The tokens ``engine``'s server runs in one forward pass when none is set; None where no default is known here.

    They are the chunk of a chunked prefill and the tokens of vLLM's profiling run. vLLM's OpenAI server
    (:data:`VLLM_BATCH_DEFAULTS`): 8,192 on the GPUs of its larger defaults, 2,048 on the rest.
    """
    if engine != "vllm":
        return None
    return 8192 if _vllm_large_gpu(gpu_name, gpu_memory_bytes) else 2048


def batch_limits(
    engine: str, gpu_name: str, gpu_memory_bytes: int, given: int | None, fallback: int, batched_tokens: int | None = None
) -> tuple[int, ...]:
    """The batch limits to size a replica at, in order: ``given`` (the user's), else the engine's default, else ``fallback``.

    Where the default is vLLM's larger one, its smaller one follows: vLLM's profiling run samples as many rows of
    logits as the limit, and where that leaves no room for one request the smaller limit is the one to run with.
    vLLM refuses to start with more sequences than ``batched_tokens`` (its tokens a forward pass): a default above
    them is lowered to them, as the engine settings rendered then say.
    """
    running = given or default_max_num_seqs(engine, gpu_name, gpu_memory_bytes) or fallback
    limits: tuple[int, ...] = (running,)
    if engine == "vllm" and not given and running > VLLM_SMALL_GPU_MAX_NUM_SEQS:
        limits = (running, VLLM_SMALL_GPU_MAX_NUM_SEQS)
    if engine == "vllm" and batched_tokens and not given:
        limits = tuple(dict.fromkeys(min(limit, batched_tokens) for limit in limits))
    return limits
