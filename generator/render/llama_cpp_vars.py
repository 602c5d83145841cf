"""A llama.cpp-family service's engine vars in a pool's Ansible group vars (``hardware.fixed``'s placement).

fix149: the entry carried vLLM's flags (``vllm_args``: ``--gpu-memory-utilization``, ``--cpu-offload-gb`` ...) beside
llama.cpp's options, for an engine the pool does not run, and no line, file or threads for the one it does. The vars
are the serving engine's alone: its options (``llama_cpp``), the GGUF file it loads (``model_file``, ``gguf_type``),
and its options' command line (``args``: the placement's ``-ngl`` / ``-ot`` / ``-ts`` / ``-c`` / ``-np`` / ``-ub`` and
``--threads`` where the plan knows the CPU; the runner adds ``-m`` with ``specgen_nvme.model_cache_dir`` and
``model_file``: a path in the list passed yamllint's 80 columns for a long repository name).
"""

from __future__ import annotations

import posixpath
from typing import Any

from generator.calculator.offload_report import llama_cpp_args
from generator.planner.plan import DeploymentPlan
from generator.sizing.precision import WEIGHT_FORMATS

#: The GGUF tensor type of a float precision llama.cpp loads as stored (``convert_hf_to_gguf.py --outtype``);
#: a quantized one's is its format's own (``WeightFormat.gguf``: Q4_K_M, MXFP4_MOE ...).
FLOAT_GGUF_TYPES = {"bf16": "BF16", "fp16": "F16", "fp32": "F32"}

#: How a model read from a local GGUF file is named in ``DeploymentPlan.model_source``.
LOCAL_GGUF = "local GGUF: "


def gguf_type(precision: str) -> str | None:
    """The GGUF file type llama.cpp loads the placement's weights from; None for a checkpoint it cannot load."""
    fmt = WEIGHT_FORMATS.get(precision)
    return fmt.gguf if fmt is not None and fmt.gguf else FLOAT_GGUF_TYPES.get(precision)


def model_file(d: DeploymentPlan) -> str | None:
    """The name of the GGUF file the runner loads from the hosts' model cache; None where llama.cpp cannot load it.

    The workload's own file by its name, else the model's converted to the placement's type (``<repository
    name>-<TYPE>.gguf``, as published GGUF repositories name theirs); for a checkpoint llama.cpp cannot load, the
    plan's note says which file to convert to. The folder is ``specgen_nvme.model_cache_dir``.
    """
    if d.model_source.startswith(LOCAL_GGUF):
        return posixpath.basename(d.model_source.removeprefix(LOCAL_GGUF))
    kind = gguf_type(d.precision)
    if kind is None:
        return None
    return f"{d.model_id.rsplit('/', 1)[-1]}-{kind}.gguf"


def llama_cpp_engine_vars(d: DeploymentPlan) -> dict[str, Any]:
    """The engine entry of a deployment placed on ``hardware.fixed``: its llama.cpp-family server's settings only.

    ``--threads``: the threads the CPU's share was timed at, where the plan sets them (``details.llama_cpp_threads``:
    ``hardware.fixed.threads``, else the given CPU's cores, one socket's where bound to one node;
    :func:`generator.calculator.llama_cpp_threads.llama_cpp_threads`). The RoPE-scaling flags of a request past the GGUF's
    context_length come with the plan's options (``rope_scaling`` ..., written by the one writer of those flags).
    """
    settings = d.details["runtime_settings"]
    engine = str(d.details["offload"]["engine"])  # llama.cpp or ik_llama.cpp, whose options these are
    options: dict[str, Any] = settings[f"{engine}_options"]
    out: dict[str, Any] = {
        "name": engine,
        # a request's context: the placement's is the slots' shared cache (newuser77 item 11: 810,000 tokens for 324
        # slots, past DeepSeek-V3's 163,840), the -c the args carry
        "max_model_len": settings["vllm"].get("--max-model-len", d.details["context_tokens"]),
        "llama_cpp": options,
    }
    args = llama_cpp_args(options)
    if threads := d.details.get("llama_cpp_threads"):
        out["threads"] = threads
        args += ["--threads", str(threads)]
    if (name := model_file(d)) is not None:
        out["model_file"] = name
        out["gguf_type"] = gguf_type(d.precision) or "as stored"
    out["args"] = args
    if note := settings.get(f"{engine}_note"):  # the GGUF a checkpoint llama.cpp cannot load must be converted to
        out["llama_cpp_note"] = note
    return out
