"""Fixed hardware: say an offload plan in a user's terms.

Shared by ``specgen estimate --ram-gib ...`` and workloads with ``hardware.fixed`` (kept free of
pydantic and click for the estimate's cold start): runtime settings for llama.cpp, Hugging Face
Accelerate, vLLM and DeepSpeed ZeRO-Inference, warnings, and a checklist to verify on the machine.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from generator.calculator.machine import NUMACTL_ONE_NODE, place_over_nodes
from generator.calculator.prefill_bound import prompt_figures, prompt_prefill_text
from generator.errors import InfeasibleError
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.context_limit import rope_args, rope_options
from generator.sizing.engine_runtime import default_max_num_batched_tokens, default_max_num_seqs
from generator.sizing.offload import (
    Machine,
    OffloadCost,
    OffloadPlan,
    Placement,
    cpu_attention_gflops_per_s,
    larger_ubatch,
    layer_split_degree,
    llama_cpp_kv_bits,
    offload_cost,
    place,
    runs_on_host,
    splits_context_over_slots,
)
from generator.sizing.page_cache import PagedReads
from generator.sizing.precision import KV_CACHE_BITS, WEIGHT_FORMATS, WeightFormat, kv_cache_bits
from generator.sizing.step_down import GGUF_STEP_DOWNS, lower_precisions, quality_note, step_down_phrase
from generator.sizing.vllm_reservation import vllm_reservation
from generator.sizing.weights import Parallelism, size_weights
from generator.units import GB, GIB, seconds_text

#: What the user can change when a model cannot run on the machine at all.
_UNBLOCK_REST = (
    "a shorter context, more system RAM or a smaller reserve, free NVMe space for memory-mapped layers, or a GPU with more memory"
)
#: Precisions tried when looking for one that would avoid offloading altogether, or that decodes much faster: llama.cpp's
#: i-quants among them (newuser68 item 4: q2_k was advised for a 70B on a 32 GB card where iq3_xs fits it whole, and
#: a 24 GB card's iq2_xs plan, 29 tokens/s, was never named). The plan sorts them by their bytes for the model. The
#: K-quants' _S / _L files and Q4_0 are among them (fix153: q4_k_s fits a card q4_k_m does not by 5% of the bytes);
#: the legacy Q4_1, Q5_0 and Q5_1 are not, as llama-quantize's own table (step_down.GGUF_PERPLEXITY_ADDED) gives each a
#: file no smaller that adds more perplexity than a K-quant's (q5_k_m, q5_k_s, q4_k_s): never the better choice.
ALTERNATIVES = (
    "fp8",
    "int8",
    "q8_0",
    "q6_k",
    "q5_k_m",
    "q5_k_s",
    "iq4_nl",
    "q4_k_m",
    "q4_k_s",
    "q4_0",
    "iq4_xs",
    "int4",
    "q3_k_l",
    "iq3_m",
    "iq3_s",
    "q3_k_m",
    "iq3_xs",
    "q3_k_s",
    "iq3_xxs",
    "q2_k",
    "q2_k_s",
    "iq2_m",
    "iq2_s",
    "iq2_xs",
    "iq2_xxs",
    "iq1_m",
    "iq1_s",
)


def fixed_file(arch: Architecture) -> bool:
    """Whether the model is a file run as stored (a GGUF): a lower precision is then another file, not a setting."""
    return arch.file_weights is not None and arch.file_weights.fixed_format


def offload_unblock(arch: Architecture, formats: Sequence[WeightFormat]) -> str:
    """What would let a model that cannot be placed run: a GGUF precision below every one of ``formats`` where one exists.

    Not for a model every GGUF of which keeps its routed experts MXFP4 (gpt-oss): a lower type re-quantizes only the
    rest, a few percent of the bytes (newuser38 item 5: "q3_k_m stores the mxfp4 weights in 0.96x the bytes" was the
    first lever offered for a 2 GiB shortfall of gpt-oss-120b, whose q2_k file is 0.75 GiB smaller); that saving is
    said instead, for the user to weigh against what is missing.
    """
    steps = lower_precisions(arch, formats, GGUF_STEP_DOWNS)
    if not steps:
        return f"to unblock: {_UNBLOCK_REST}"
    if keeps_mxfp4_experts(arch):
        tried = min(formats, key=lambda f: size_weights(arch, f).total_bytes)
        sizes = size_weights(arch, tried)
        smallest = min(steps, key=lambda s: s.weight_ratio)
        saved = sizes.total_bytes * (1 - smallest.weight_ratio)
        return (
            f"to unblock: {_UNBLOCK_REST} (a lower GGUF type is no lever here: every GGUF of it keeps the MXFP4 routed "
            f"experts, {sizes.expert_bytes / sizes.total_bytes:.0%} of the {tried.name} weights, and {smallest.name}, "
            f"the smallest, re-quantizes the rest into {_gib(saved):.2f} GiB less)"
        )
    pick = next((s for s in steps if s.name == "q4_k_m"), steps[0])  # llama.cpp's common default, else the next step down
    lower = "a smaller .gguf file of the model" if fixed_file(arch) else "allow a lower precision"
    return f"to unblock: {lower} (e.g. {step_down_phrase(arch, formats, [pick])}), {_UNBLOCK_REST}"


def keeps_mxfp4_experts(arch: Architecture) -> bool:
    """Whether the model is an MXFP4 checkpoint, whose routed experts every GGUF type keeps MXFP4 (gpt-oss)."""
    return arch.quantization is not None and arch.quantization.precision == "mxfp4"


def llama_cpp_file_note(arch: Architecture, checkpoint: WeightFormat, gguf: WeightFormat) -> str:
    """That the plan sizes llama.cpp's GGUF of the checkpoint (:func:`~generator.sizing.loaded_weights.llama_cpp_format`)."""
    ours, theirs = size_weights(arch, gguf).total_bytes, size_weights(arch, checkpoint).total_bytes
    return (
        f"llama.cpp runs the {checkpoint.name} checkpoint as its GGUF, {gguf.name} (the routed experts MXFP4 as stored, "
        f"every other matrix Q8_0): {_gib(ours)} GiB of weights, where the checkpoint vLLM loads holds {_gib(theirs)}"
    )


def alternatives(arch: Architecture | None = None) -> tuple[Any, ...]:
    """Weight formats tried as fallbacks that avoid offloading: GGUF types alone for a GGUF file (another file of it)."""
    gguf_only = arch is not None and fixed_file(arch)
    return tuple(WEIGHT_FORMATS[name] for name in ALTERNATIVES if not gguf_only or WEIGHT_FORMATS[name].gguf)


def tokens_per_s_text(tokens_per_s: float) -> str:
    """A decode speed to two places from the three the JSON keeps, so that every line shows the JSON's figure."""
    return f"{round(tokens_per_s, 3):.2f}"


def _gib(n: float) -> float:
    return round(n / GIB, 2)


#: llama.cpp's KV cache type (``-ctk`` / ``-ctv``) for a planned KV precision; f16, its default, for 16-bit ones. It
#: has no fp8 cache: q8_0 is the nearest (llama.cpp ``common/arg.cpp`` kv_cache_types).
LLAMA_CPP_KV_TYPES = {"fp32": "f32", "int8": "q8_0", "fp8": "q8_0"}

#: llama.cpp's prompt tokens a pass when -ub is not given (common.h n_ubatch = 512).
LLAMA_CPP_UBATCH = 512


def llama_cpp_numa(p: Placement, spans_nodes: bool, wider: Machine | None) -> str | None:
    """llama.cpp's ``--numa`` for a placement, as the offload speed counts the machine's NUMA nodes.

    ``distribute`` where the offloaded weights need every node's RAM (``spans_nodes``); ``numactl`` where one node's
    RAM holds them on a machine of several (``wider``: every node's RAM, None for one socket): the speed counts one
    socket, so llama.cpp runs under ``numactl -N 0 -m 0`` and keeps its threads on that CPU map (llama.cpp's ``--numa
    numactl``: "use the CPU map provided by numactl", tools/server/README.md); None where nothing is offloaded.
    """
    if spans_nodes:
        return "distribute"
    return "numactl" if wider is not None and p.offloaded else None


#: ik_llama.cpp's MLA mode for DeepSeek-style models, with flash attention: FlashMLA-3, the form its CPU attention rate
#: was fitted on (every MLA row of the calibration ran ``-mla 3 -fa``; ``-mla, --mla-use``: 0 / 1 / 2 / 3,
#: https://github.com/ikawrakow/ik_llama.cpp/blob/main/docs/parameters.md, PR 273 "FlashMLA-3: fastest CPU-only
#: inference for DeepSeek models").
IK_LLAMA_CPP_MLA = 3

#: What ik_llama.cpp's planned line leaves out of its own flags, and why (said beside the line).
IK_LLAMA_CPP_NOTE = (
    "ik_llama.cpp's llama-server: no -rtr (run-time repack), which repacks the tensors held in RAM to row-interleaved "
    "types, of which the k-quants have no CUDA kernel, so that their products stay on the CPU even in prompt passes "
    "(https://github.com/ikawrakow/ik_llama.cpp#readme: do not use -rtr with experts left on the CPU), where the TTFT "
    "is timed with them copied to the GPU; no -fmoe, fused MoE being its default (--no-fmoe turns it off); no -kvu, "
    "which it lacks: -c is split equally over the -np slots "
    "(https://github.com/ikawrakow/ik_llama.cpp/blob/main/docs/parameters.md)"
)


def llama_cpp_options(
    p: Placement,
    gpus: int,
    kv_precision: str,
    numa: str | None = None,
    streams: int = 1,
    ubatch: int = 512,
    engine: str = "llama.cpp",
    mla: bool = False,
    rope: Mapping[str, Any] | None = None,
    jinja: bool = False,
    flash_attention: str = "auto",
) -> dict[str, Any]:
    """llama.cpp's settings for a placement, as fields a deployment tool assembles (a regex can outgrow a YAML line).

    ``-ngl`` counts the output layer where it is on a GPU. ``-ts`` counts it on the last GPU: llama.cpp splits
    min(-ngl, layers + 1) slots, the output layer the last, and a layer goes to the first GPU whose share, summed with
    those before it, exceeds its slot's (llama-model.cpp get_layer_buft_list), so the first would otherwise take one
    layer more (newuser19 item 3). A quantized KV cache type needs flash attention (newuser19 item 2). ``numa``: its
    ``--numa`` (:func:`llama_cpp_numa`), with the ``numactl`` arguments that bind it to one node where it is ``numactl``.
    ``streams``: the server slots the rate needs (``-np``), beyond one sharing the ``-c`` tokens in one KV cache.
    ``ubatch``: a prompt pass's tokens (``-b`` and ``-ub``) where the plan chose more than llama.cpp's 512
    (``OffloadPlan.ubatch_tokens``). ``engine``: the llama.cpp-family server the line is for: ik_llama.cpp takes
    mainline's flags but ``-kvu`` (its slots split ``-c``: :func:`splits_context_over_slots`), and runs flash attention
    (``-fa on``, the kernels its CPU attention rate is of) and, for a model of MLA attention (``mla``), ``-mla 3``.
    ``rope``: the RoPE scaling a request's context needs (:func:`~generator.sizing.context_limit.rope_options`).
    ``jinja``: OpenAI tool calls (``inference.tool_calling``), which llama-server answers through the GGUF's Jinja chat
    template: ``--jinja`` (off by default before llama.cpp made it the default, said redundant since:
    https://github.com/ggml-org/llama.cpp/blob/edb465a901a36028919c4c4a3715b47bb8c88687/docs/function-calling.md;
    ik_llama.cpp's since https://github.com/ikawrakow/ik_llama.cpp/pull/677). ``flash_attention``: the machine's
    ``-fa`` (``hardware.fixed.flash_attention``), said on the line where given (not ``auto``, llama.cpp's default; fix202).
    """
    head_on_gpu = p.lm_head_device != "cpu"
    kv_type = LLAMA_CPP_KV_TYPES.get(kv_precision)
    options: dict[str, Any] = {
        "n_gpu_layers": p.layers_on_gpu + (1 if head_on_gpu else 0),
        "ctx_size": p.context_tokens,
        "cache_type": kv_type or "f16",  # llama.cpp's default cache type
        **(rope or {}),
    }
    ik = engine == "ik_llama.cpp"
    if kv_type or ik:
        options["flash_attn"] = "on"
    if ik and mla:
        options["mla"] = IK_LLAMA_CPP_MLA
    if expert_layers := [i for i, d in enumerate(p.layer_devices) if "+experts:" in d]:
        options["cpu_expert_layers"] = expert_layers
    if gpus > 1:
        per_gpu = [sum(1 for d in p.layer_devices if d.startswith(f"gpu:{g}")) for g in range(gpus)]
        per_gpu[-1] += 1 if head_on_gpu else 0
        options["tensor_split"] = per_gpu
    # always said: llama-server left to itself runs 4 slots sharing -c since
    # https://github.com/ggml-org/llama.cpp/pull/16736, where the plan timed and sized ``streams``
    options["parallel"] = streams
    if streams > 1 and not splits_context_over_slots(engine):
        options["kv_unified"] = True
    if ubatch != LLAMA_CPP_UBATCH:
        options["batch_size"] = options["ubatch_size"] = ubatch  # -b at least -ub: llama.cpp clamps -ub to -b
    options["no_mmap"] = p.disk_bytes == 0 and p.offloaded
    if numa:
        options["numa"] = numa
    if numa == "numactl":
        options["numactl"] = NUMACTL_ONE_NODE
    if jinja:  # fix184: tool calls (inference.tool_calling / the estimate's --tool-calling)
        options["jinja"] = True
    if flash_attention != "auto":  # fix202: hardware.fixed.flash_attention given (off: refused with a q8_0 cache)
        options["flash_attn"] = flash_attention
    return options


def llama_cpp_args(options: dict[str, Any]) -> list[str]:
    """The llama.cpp command-line arguments of :func:`llama_cpp_options`.

    One shape however many sockets: where bound to one node, the process is started under ``numactl`` with the
    options' ``numactl`` arguments (review 19 item 4).
    """
    args = ["-ngl", str(options["n_gpu_layers"]), "-c", str(options["ctx_size"]), *rope_args(options)]
    if "flash_attn" in options:
        args += ["-fa", options["flash_attn"], "-ctk", options["cache_type"], "-ctv", options["cache_type"]]
    if mla := options.get("mla"):
        args += ["-mla", str(mla)]
    if layers := options.get("cpu_expert_layers"):
        args += ["-ot", f"blk\\.({'|'.join(map(str, layers))})\\.ffn_.*_exps\\.=CPU"]
    if split := options.get("tensor_split"):
        args += ["-ts", ",".join(map(str, split))]
    if parallel := options.get("parallel"):
        args += ["-np", str(parallel), *(["-kvu"] if options.get("kv_unified") else [])]
    if ubatch := options.get("ubatch_size"):
        args += ["-b", str(options["batch_size"]), "-ub", str(ubatch)]
    if numa := options.get("numa"):
        args += ["--numa", numa]
    if options.get("jinja"):  # fix184: tool calls through the GGUF's chat template
        args.append("--jinja")
    return [*args, "--no-mmap"] if options["no_mmap"] else args


#: The ``--threads N`` words of a llama.cpp-family line: of its options, its placement and the machine it was placed on
#: (the estimate's :func:`~generator.calculator.llama_cpp_threads.estimate_thread_args`).
ThreadArgs = Callable[[dict[str, Any], Placement, Machine], list[str]]


#: The model words of a llama.cpp-family line (``-m <file>``) for the GGUF type its placement holds (the estimate's
#: :func:`~generator.calculator.llama_server_model.model_args`).
ModelArgs = Callable[[str], list[str]]


def llama_cpp_line(options: dict[str, Any], threads: Sequence[str] = (), model: Sequence[str] = ()) -> str:
    """The llama.cpp-family line of ``model`` (``-m <file>``), ``options`` and ``threads``, each word shell-quoted.

    The one writer of every llama-server line the estimate prints (fix172 item 1: the CPU-only and GPU-only lines were
    joined with spaces, so an ``-ot`` pattern's ``|`` and ``*`` or a value with a space read as shell syntax; fix176
    item 1: the lines named no model, so a line copied started a server without one).
    """
    return shlex.join([*model, *llama_cpp_args(options), *threads])


def file_precision(precision: str) -> str:
    """The GGUF type of the file a llama.cpp-family line of a placement at ``precision`` runs.

    ``precision`` itself where llama.cpp holds it as a file (a GGUF type, or a checkpoint's bf16 / fp16 / fp32 floats);
    else the type it is converted to (:func:`conversion_type`: int4 -> q4_k_m, fp8 -> q8_0).
    """
    fmt = WEIGHT_FORMATS.get(precision)
    if fmt is None or fmt.gguf is not None or fmt.name in GGUF_NATIVE_FORMATS:
        return precision
    return conversion_type(fmt).name


def runtime_settings(
    arch: Architecture,
    plan: OffloadPlan,
    machine: Machine,
    consts: Constants,
    gpu_name: str,
    batched_tokens: int | None,
    kv_precision: str,
    spans_nodes: bool = False,
    wider: Machine | None = None,
    streams: int = 1,
    request_tokens: int | None = None,
    threads: ThreadArgs | None = None,
    model: ModelArgs | None = None,
    jinja: bool = False,
) -> dict[str, Any]:
    """The same placement as settings of four common runtimes.

    ``gpu_name``: the machine's GPU, on which vLLM's defaults depend; ``batched_tokens``: vLLM's tokens a forward pass
    where the user gives them; ``kv_precision``: the KV cache's, which llama.cpp must be told (its default is f16);
    ``spans_nodes``: the offloaded weights fill more than one NUMA node's RAM; ``wider``: the machine with every
    node's RAM, where one node's is what ``machine`` counts (a GGUF file placed for the note may need it);
    ``streams``: llama.cpp server slots the request rate needs; ``request_tokens``: a request's context where the
    placement's KV cache is the slots' (vLLM's ``--max-model-len``). The llama.cpp-family line is the plan's engine's
    (``plan.engine``), under its own name (``settings[plan.engine]``, ``settings[plan.engine + "_options"]``).
    ``threads``: the ``--threads`` words of a line (the estimate's), on its own line and on a converted GGUF's line alike
    (fix172 item 2: the conversion note's line had none where the estimate's own line had them); None: none (a plan's
    line, whose threads the renderer adds from ``details.llama_cpp_threads``). ``model``: the ``-m <file>`` words of a
    line's GGUF type (the estimate's, on its own line and the converted file's); None: none (a plan's line).
    """
    p = plan.placement
    n = arch.num_layers
    on_gpu = p.layers_on_gpu
    numa = llama_cpp_numa(p, spans_nodes, wider)
    engine = plan.engine
    # a request past the GGUF's context_length of a RoPE-scaled model: the stretch given at launch (fix159)
    rope = rope_options(arch.llama_cpp_rope, request_tokens or p.context_tokens, engine)
    options = llama_cpp_options(
        p, machine.gpus, kv_precision, numa, streams, plan.ubatch_tokens, engine, arch.uses_mla, rope, jinja,
        machine.flash_attention,
    )  # fmt: skip
    # None: a GGUF file's own tensor types (gguf-q4_k_s, ...); llama.cpp's GGUF of an MXFP4 checkpoint is planned, but
    # vLLM, Accelerate and DeepSpeed load the checkpoint itself
    checkpoint = "mxfp4" if p.precision == "mxfp4_moe" and not fixed_file(arch) else p.precision
    fmt = WEIGHT_FORMATS.get(checkpoint)
    accelerate: dict[str, Any]
    deepspeed: dict[str, Any]
    if fmt is None or fmt.gguf is not None:
        # Transformers' GGUF loader, which Accelerate and DeepSpeed both load through, dequantizes every tensor to a
        # float type: none of this placement's sizes applies
        unpacked = size_weights(arch, WEIGHT_FORMATS["bf16"]).total_bytes
        dequantized = f"Transformers dequantizes a {p.precision} GGUF file to 16-bit floats on load, about {_gib(unpacked)} GiB"
        accelerate = {"note": f"{dequantized}: use llama.cpp, or a bf16 / bitsandbytes checkpoint with Accelerate"}
        deepspeed = {"note": f"{dequantized}: use llama.cpp, or a bf16 checkpoint with DeepSpeed ZeRO-Inference"}
    else:
        max_memory = {str(g): f"{_gib(b.weights + b.kv_cache)}GiB" for g, b in enumerate(p.per_gpu)}
        # the checkpoint's bytes beyond the GGUF placed (an MXFP4 checkpoint's BF16 attention) in CPU memory too
        beyond = size_weights(arch, fmt).total_bytes - p.file_bytes if checkpoint != p.precision else 0
        max_memory["cpu"] = f"{_gib(p.cpu_bytes + p.kv_cpu_bytes + max(0, beyond))}GiB"
        accelerate = {"device_map": "auto", "max_memory": max_memory}
        if p.disk_bytes:
            accelerate["offload_folder"] = "/var/lib/specgen/offload"
        device = "nvme" if p.disk_bytes else "cpu"
        zero: dict[str, Any] = {"stage": 3, "offload_param": {"device": device, "pin_memory": True}}
        if device == "nvme":
            zero["offload_param"]["nvme_path"] = "/var/lib/specgen/offload"
        deepspeed = {"zero_optimization": zero}
    settings: dict[str, Any] = {
        engine: llama_cpp_line(
            options,
            threads(options, p, machine) if threads else (),
            model(file_precision(p.precision)) if model else (),
        ),
        f"{engine}_options": options,
        "accelerate": accelerate,
        "vllm": _vllm_offload(arch, p, machine, consts, gpu_name, batched_tokens, kv_precision, fmt, request_tokens),
        "deepspeed_zero_inference": deepspeed,
        "layers": {"total": n, "on_gpu": on_gpu, "cpu": p.layer_devices.count("cpu"), "disk": p.layer_devices.count("disk")},
    }
    notes = [IK_LLAMA_CPP_NOTE] if engine == "ik_llama.cpp" else []
    if fmt is not None and fmt.gguf is None and fmt.name not in GGUF_NATIVE_FORMATS:
        line = settings[engine]
        on = (machine, wider)
        notes.append(
            _gguf_conversion(
                arch, p, fmt, on, consts, kv_precision, spans_nodes, line, plan, streams, rope, threads, model, jinja
            )
        )
    if options["cache_type"] == "q8_0":
        notes.append(
            (f"{engine} has no fp8 KV cache; its " if kv_precision == "fp8" else f"{engine}'s ")
            + "q8_0 cache stores 8.5 bits an element (32 in 34 bytes), as the KV cache is sized here"
        )
    if notes:
        settings[f"{engine}_note"] = "; ".join(notes)
    return settings


def conversion_type(fmt: WeightFormat) -> WeightFormat:
    """The GGUF type of about ``fmt``'s bits that a checkpoint llama.cpp cannot load is converted to."""
    return WEIGHT_FORMATS["q4_k_m" if fmt.bits <= 5 else "q8_0"]


def gguf_conversion_head(arch: Architecture, fmt: WeightFormat, engine: str) -> tuple[WeightFormat, str]:
    """The GGUF type of about ``fmt``'s bits that llama.cpp runs for a checkpoint it cannot load, and the words saying so.

    The GGUF file is a little larger (q4_k_m 4.5 bits against int4's 4, q8_0 8.5 against fp8's 8).
    """
    gguf = conversion_type(fmt)
    sizes = f"{_gib(size_weights(arch, gguf).total_bytes)} GiB against {_gib(size_weights(arch, fmt).total_bytes)}"
    return gguf, f"{engine} loads GGUF files, not {fmt.name} checkpoints: convert to {gguf.name} ({sizes})"


def _gguf_conversion(
    arch: Architecture,
    p: Placement,
    fmt: WeightFormat,
    machines: tuple[Machine, Machine | None],
    consts: Constants,
    kv_precision: str,
    spans_nodes: bool,
    line: str,
    plan: OffloadPlan,
    streams: int = 1,
    rope: Mapping[str, Any] | None = None,
    threads: ThreadArgs | None = None,
    model: ModelArgs | None = None,
    jinja: bool = False,
) -> str:
    """What llama.cpp needs for a checkpoint it cannot load: the GGUF type of about its bits, and that file's own line.

    ``streams``: the server slots the plan's line runs, which the file's line runs too (newuser77 item 11: ``-c
    810000 ... -np 1``, the 324 slots' shared cache given to one); ``rope``: the plan's line's RoPE scaling, which the
    file's line carries too; ``threads``: the ``--threads`` words of the file's line, of its placement, as the plan's
    line has its own (fix172 item 2). No ``llama-quantize`` line is given, so none of its threads: the note names the
    type to convert to, and llama-quantize left to itself runs every hardware thread (``nthread <= 0``:
    ``std::thread::hardware_concurrency()``, src/llama-quant.cpp), what a one-off conversion wants.

    The GGUF file is a little larger (q4_k_m 4.5 bits against int4's 4, q8_0 8.5 against fp8's 8), so near the VRAM
    edge it places fewer layers on the GPUs (fuzz17 item 8: Llama 3.3 70B int4 on an A100 40GB at ``-ngl 81``, its
    q4_k_m file at ``-ngl 75``); the file is placed on the same machine at the same context, and its line is given
    where it differs. ``machines``: the machine the checkpoint was placed on, and the one with every NUMA node's RAM
    where that counts one node's (None otherwise): the file spreads over the nodes where one node's RAM would not
    hold it, as the checkpoint's placement does (review 17 item M1). Its prompt passes are sized for the plan's prompt as
    the file's own plan sizes them (:func:`larger_ubatch`), for the plan's engine.
    """
    prompt_tokens, engine = plan.cost.prompt_tokens, plan.engine
    machine, wider = machines
    gguf, head = gguf_conversion_head(arch, fmt, engine)
    kv_bits = kv_cache_bits(kv_precision)
    try:
        there, on, spread = place_over_nodes(
            lambda on: place(arch, gguf, kv_bits, p.context_tokens, on, consts, engine=engine),
            machine,
            None if spans_nodes else wider,  # a placement already over every node's RAM has no wider machine
            lambda placed: placed.disk_bytes,
        )
    except InfeasibleError:
        return f"{head}, which does not fit this machine at {p.context_tokens:,} tokens; or use the vLLM / Accelerate settings"
    timed = (there, offload_cost(arch, gguf, kv_bits, there, on, prompt_tokens, consts, engine=engine))
    there, _, ubatch = larger_ubatch(arch, gguf, kv_bits, on, prompt_tokens, consts, timed, engine=engine)
    numa = llama_cpp_numa(there, spans_nodes or spread, wider)
    options = llama_cpp_options(
        there, machine.gpus, kv_precision, numa, streams, ubatch, engine, arch.uses_mla, rope, jinja, machine.flash_attention
    )
    own = llama_cpp_line(options, threads(options, there, on) if threads else (), model(gguf.name) if model else ())
    run = "run it with the same line" if own == line else f"run it with {own} (it places differently)"
    return f"{head} and {run}, or use the vLLM / Accelerate settings"


#: vLLM's GGUF support, which loads a GGUF from one file only.
VLLM_GGUF_DOCS = "https://docs.vllm.ai/en/latest/features/quantization/gguf/"
#: The largest file the Hugging Face Hub stores: a larger GGUF is published in parts (llama-gguf-split)
#: (https://github.com/huggingface/hub-docs/pull/2007: "Per file: 50GB max").
HUB_FILE_LIMIT_BYTES = 50 * 10**9


def _noted(settings: dict[str, Any], note: str) -> dict[str, Any]:
    """``settings`` with ``note`` after any note they carry."""
    return settings | {"note": "; ".join(filter(None, (settings.get("note"), note)))}


def _vllm_offload(
    arch: Architecture,
    p: Placement,
    machine: Machine,
    consts: Constants,
    gpu_name: str,
    batched_tokens: int | None,
    kv_precision: str,
    fmt: WeightFormat | None = None,
    request_tokens: int | None = None,
) -> dict[str, Any]:
    """The placement as vLLM settings, or why vLLM cannot serve it (``fmt``: the checkpoint vLLM loads, where not the file).

    ``request_tokens``: a request's context (``--max-model-len``) where the placement's KV cache holds several (the
    llama.cpp slots' shared cache): newuser77 item 11, 324 slots' 810,000 tokens were rendered ``--max-model-len
    810000``, past DeepSeek-V3's 163,840 positions, which vLLM refuses at start.

    ``--cpu-offload-gb`` (GiB of weights per GPU kept in CPU memory) is what leaves room on each GPU, within its
    ``--gpu-memory-utilization``, for the profiling reservation and one ``--max-model-len`` request's KV cache of the
    GPU's layers: vLLM keeps every layer's KV on the GPU, where llama.cpp keeps an offloaded layer's in RAM. An fp8
    cache is asked for (``--kv-cache-dtype fp8``); vLLM has no int8 cache, so one is sized as its 16-bit default.
    """
    tokens_len = min(request_tokens or p.context_tokens, p.context_tokens)
    settings: dict[str, Any] = {
        "--max-model-len": tokens_len,
        "--pipeline-parallel-size": layer_split_degree(machine.gpus, arch),
        "--gpu-memory-utilization": consts.gpu_memory_utilization,
    }
    # the placement's KV is llama.cpp's (an 8-bit cache in q8_0, 8.5 bits an element): vLLM's elements at its bits
    bits = KV_CACHE_BITS[kv_precision]
    kv_scale = float(bits / llama_cpp_kv_bits(bits))
    if kv_precision == "fp8":
        settings["--kv-cache-dtype"] = "fp8"
    elif kv_precision == "int8":
        kv_scale *= 16 / KV_CACHE_BITS["int8"]
        settings["note"] = "vLLM has no int8 KV cache: these settings are sized for its 16-bit cache (auto)"
    if p.disk_bytes:
        return _noted(settings, "vLLM offloads to CPU memory only; this placement also needs NVMe, use llama.cpp or DeepSpeed")
    par = Parallelism(pp=machine.gpus)
    # its profiling run: vLLM's server defaults on this GPU (tokens of the forward, rows of the sampler)
    default = default_max_num_batched_tokens("vllm", gpu_name, machine.gpu_memory_bytes) or consts.prefill_chunk_tokens
    tokens = batched_tokens or default
    seqs = default_max_num_seqs("vllm", gpu_name, machine.gpu_memory_bytes) or consts.max_num_seqs
    reserved = vllm_reservation(arch, par, consts._replace(max_num_seqs=seqs), tokens, nvlink=False).total
    one_request = tokens_len / p.context_tokens if p.context_tokens else 1.0  # of the placement's cache
    kv = math.ceil((p.kv_gpu_bytes + p.kv_cpu_bytes) * kv_scale * one_request / machine.gpus)
    room = consts.gpu_memory_utilization * machine.gpu_memory_bytes - reserved - kv
    # vLLM loads the file's weights once (llama.cpp loads a tied table twice), an MXFP4 checkpoint's as stored
    held = size_weights(arch, fmt).total_bytes if fmt is not None and fmt.name != p.precision else p.file_bytes
    weights = held / machine.gpus
    if room <= 0:
        return _noted(
            settings,
            f"vLLM cannot start here: its profiling reservation ({_gib(reserved)} GiB) and the KV cache of one "
            f"{tokens_len:,}-token request ({_gib(kv)} GiB a GPU) fill its {consts.gpu_memory_utilization:g} of "
            f"{_gib(machine.gpu_memory_bytes)} GiB; use llama.cpp, or a shorter --max-model-len",
        )
    offload = max(0, math.ceil((weights - room) / GIB))
    ram = machine.ram_bytes - machine.reserved_ram_bytes - consts.runtime_host_bytes
    if offload * GIB * machine.gpus > ram:
        return _noted(
            settings,
            f"vLLM would keep {offload * machine.gpus} GiB of weights in CPU memory (--cpu-offload-gb "
            f"{offload} a GPU), more than the {_gib(ram)} GiB of RAM free after the reserve; use llama.cpp",
        )
    # the tokens it was sized for, where they are not vLLM's default there (review 9 L7b)
    given = {"--max-num-batched-tokens": tokens} if tokens != default else {}
    settings = settings | given | {"--cpu-offload-gb": offload}
    if (fmt is None or fmt.gguf is not None) and held > HUB_FILE_LIMIT_BYTES:  # newuser49 item 7
        return _noted(
            settings,
            f"vLLM loads a GGUF from one file only ({VLLM_GGUF_DOCS}), and one of {_gib(held)} GiB is published on the "
            "Hub in parts (at most 50 GB a file): merge them first (llama-gguf-split --merge)",
        )
    return settings


#: Formats a GGUF file holds as they are besides its own quantization types: the float types and MXFP4 (llama.cpp's
#: ``MXFP4`` tensor type, gpt-oss's native format).
GGUF_NATIVE_FORMATS = frozenset({"bf16", "fp16", "fp32", "mxfp4"})


def _ram_rows(plan: OffloadPlan, machine: Machine, wider: Machine | None) -> list[tuple[str, str, str]]:
    """The RAM rows of the checklist: the whole machine's, as ``free`` reads it, and the model's node's where it has several.

    ``machine``: what the placement counted (one NUMA node's RAM on a machine of several sockets, unless it spans them);
    ``wider``: every node's RAM, None for one socket. ``free`` reads the whole machine, so the RAM left is counted over
    every node's (newuser25 item 7: 110.84 GiB predicted, one node's 384 GiB less the model, where ``free -g`` reads
    about 495 GiB of a 768 GiB machine); one node's is what ``numactl -H`` shows for the node the model is bound to.
    """
    used = plan.placement.ram_used_bytes
    whole = wider or machine
    rows = [
        ("RAM used by the model process", "ps -o rss= -p <pid>; free -g", f"{_gib(used)} GiB"),
        (
            "RAM left for the other services",
            "free -g (available) minus the model process",
            f"{_gib(whole.ram_bytes - used):g} GiB of {_gib(whole.ram_bytes):g} (less what the OS takes)",
        ),
    ]
    if machine.ram_bytes < whole.ram_bytes:  # bound to one node (numactl -m 0): its RAM is what the model may fill
        rows.append(
            (
                "RAM left on NUMA node 0 (the model's)",
                "numactl -H (node 0 free) while the model runs",
                f"{_gib(machine.ram_bytes - used):g} GiB of {_gib(machine.ram_bytes):g}",
            )
        )
    return rows


def _streamed_row(
    plan: OffloadPlan, machine: Machine, consts: Constants | None, settings: dict[str, Any] | None
) -> list[tuple[str, str, str]]:
    """The decode row of the engines that stream weights held in RAM to the GPU each step, where any are.

    vLLM's ``--cpu-offload-gb``, Accelerate's ``device_map`` with a CPU share and DeepSpeed ZeRO-Inference's
    ``offload_param`` copy the weights held off the GPU over the host link every forward pass, where llama.cpp
    multiplies them on the CPU: their speed is the placement's PCIe-streamed one, not llama.cpp's (newuser80 item 5:
    gpt-oss-120b on an RTX 5090 was predicted 43.68 tokens/s for "llama.cpp eval time / vLLM metrics", vLLM streaming
    36 GB a token over 63 GB/s makes at most 1.75). Where llama.cpp holds the model whole but vLLM's settings still
    offload (its ``--gpu-memory-utilization`` share and profiling reservation leave less room), vLLM's row is the
    whole-GPU step plus its own offloaded GiB over the host link.
    """
    c = plan.cost
    if plan.placement.offloaded:
        return [
            (
                "decode tokens/s under vLLM --cpu-offload-gb, Accelerate or DeepSpeed ZeRO-Inference",
                "vLLM metrics / tokens timed, batch 1",
                f"{tokens_per_s_text(c.stream_mode_tokens_per_s)} tokens/s (PCIe-streamed: the weights held off the GPU "
                "cross the host link each token)",
            )
        ]
    vllm = (settings or {}).get("vllm")
    offload = vllm.get("--cpu-offload-gb") if isinstance(vllm, dict) else None
    if not offload or consts is None:
        return []
    link = machine.pcie_gb_per_s * 1e9 * consts.pcie_efficiency
    seconds = 1 / c.decode_tokens_per_s + offload * GIB * machine.gpus / link
    return [
        (
            f"decode tokens/s under vLLM --cpu-offload-gb {offload}",
            "vLLM metrics, batch 1",
            f"{tokens_per_s_text(1 / seconds)} tokens/s (its {offload} GiB a GPU held in RAM cross the host link, "
            f"{machine.pcie_gb_per_s:g} GB/s x pcie_efficiency {consts.pcie_efficiency:g}, each token)",
        )
    ]


def checklist(
    plan: OffloadPlan,
    machine: Machine,
    wider: Machine | None = None,
    consts: Constants | None = None,
    settings: dict[str, Any] | None = None,
) -> list[dict[str, str]]:
    """What to measure on the real machine, with the predicted value next to each item.

    ``consts`` and ``settings`` (:func:`runtime_settings`): vLLM's own offload, where llama.cpp's placement holds the
    model whole (:func:`_streamed_row`).

    ``machine``: the one the placement counted; ``wider``: every NUMA node's RAM where ``machine`` counts one node's.
    """
    p, c = plan.placement, plan.cost
    rows = [
        (
            "VRAM used per GPU",
            "nvidia-smi --query-gpu=memory.used --format=csv",
            ", ".join(f"{_gib(b.total)} GiB" for b in p.per_gpu),
        ),
        *_ram_rows(plan, machine, wider),
        (
            "host-to-device traffic per token",
            "nvidia-smi dmon -s t (rxpci) divided by tokens/s",
            f"{c.pcie_bytes_per_token / 1e6:.2f} MB",
        ),
        (
            "time to first token",
            # fix195: the prompt, its -ub, the prefill rate and what bounds it, in the words of the plan's reasons and
            # the estimate's speed line (the prompt and -ub were said here before: said once, beside the prediction)
            f"{plan.engine} prompt eval time",
            f"{seconds_text(c.ttft_s)} for {prompt_prefill_text(prompt_figures(c))}",
        ),
        (
            "decode tokens/s",
            f"{plan.engine} eval time, batch 1",
            f"{tokens_per_s_text(c.decode_tokens_per_s)} tokens/s ({c.bound}-bound)",
        ),
        *_streamed_row(plan, machine, consts, settings),
        ("cold start (load from NVMe)", "time from process start to ready", seconds_text(c.cold_start_s)),
        ("swap activity", "vmstat 1 (si/so stay 0)", "0 pages/s"),
        ("other services' latency", "their own health checks while generating", "unchanged"),
    ]
    return [{"item": item, "how": how, "predicted": value} for item, how, value in rows]


#: From this share of a token's time spent in the CPU's attention on, a placement is warned of it.
CPU_ATTENTION_WARN_SHARE = 0.25


def findings(
    plan: OffloadPlan, machine: Machine, consts: Constants, file_run_as_stored: bool = False
) -> list[tuple[str, str, str]]:
    """(level, code, message) warnings about a fixed-hardware placement.

    ``file_run_as_stored``: the model is a GGUF file, whose lower precision is another file to get, not one to allow.
    """
    p, c = plan.placement, plan.cost
    out: list[tuple[str, str, str]] = []
    # the reserve itself is never planned into (place() raises instead); warn when little is left beyond it
    if p.offloaded and p.ram_free_bytes < 0.05 * machine.ram_bytes:
        risk = "swap" if machine.swap_bytes else "the out-of-memory killer"
        out.append(
            (
                "warning",
                "swap-risk",
                f"only {_gib(p.ram_free_bytes)} GiB of RAM stay free beyond the reserve: a spike means {risk}",
            )
        )
    if p.disk_bytes and c.paged is not None:
        out.append(("warning", "nvme-offload", nvme_text(plan, machine, consts, c.paged)))
    if c.pinned_fallback_bytes and c.pinned_ttft_s is not None:
        out.append(("warning", "pinned-buffers-large", pinned_text(c, machine, consts, plan.engine)))
    if p.offloaded and c.mode == "cpu-compute" and not machine.cpu_cores:
        out.append(
            (
                "info",
                "cpu-cores-unknown",
                f"no CPU given: the {tokens_per_s_text(c.decode_tokens_per_s)} tokens/s counts the CPU's memory "
                "bandwidth alone, as if it had the cores to read at it; a CPU of few cores multiplies slower (llama.cpp's "
                f"threads, one a core, {consts.cpu_core_gparams_per_s:g} billion weights a second each with VNNI's 8-bit "
                f"dot product, {consts.cpu_core_gparams_per_s_without_vnni:g} without it: AMD's Zen 2 / Zen 3, Intel's "
                "Skylake-derived cores): give the CPU "
                "(--cpu, hardware.fixed.cpu; see 'specgen catalog cpus') to count its cores",
            )
        )
    # as the context fills, under llama.cpp (whose line is printed), which computes the RAM layers on the CPU
    full = plan.full_context or c
    attention_s, full_speed = full.cpu_attention_s, full.cpu_mode_tokens_per_s
    if attention_s >= CPU_ATTENTION_WARN_SHARE / full_speed:
        on_host = sum(1 for d in p.layer_devices if runs_on_host(d))
        out.append(
            (
                "warning",
                "cpu-attention",
                f"{on_host} of the {len(p.layer_devices)} layers run their attention on the CPU under {plan.engine}, "
                f"which slows decode as the context fills: at the full {p.context_tokens:,} tokens it takes "
                f"{attention_s * 1e3:,.0f} of the {1e3 / full_speed:,.0f} ms a token, {tokens_per_s_text(full_speed)} "
                f"tokens/s against {tokens_per_s_text(c.cpu_mode_tokens_per_s)} at the average context "
                f"{_attention_rate_text(plan.engine, consts)}",
            )
        )
    # the file's own bytes: the tiers hold a tied embedding twice (newuser85: Gemma 3 27B q5_k_m's 18.73 GiB file said
    # as 19.81, its 1.08 GiB input embedding counted again beside its copy as the output layer)
    file_bytes = p.file_bytes or p.gpu_bytes + p.cpu_bytes + p.disk_bytes
    cold = f"the cold start of {seconds_text(c.cold_start_s)} assumes it is read from NVMe at {machine.nvme_read_gb_per_s:g} GB/s"
    if not machine.nvme_bytes:  # unknown or none: the estimate's default
        out.append(("info", "model-file-off-nvme", f"no free NVMe is given for the {_gib(file_bytes)} GiB model file: {cold}"))
    elif file_bytes > machine.nvme_bytes:  # never with an NVMe tier: place() refuses that
        out.append(
            (
                "warning",
                "model-file-off-nvme",
                f"the {_gib(file_bytes)} GiB model file does not fit the {_gib(machine.nvme_bytes)} GiB of free NVMe "
                f"given (nvme_gib, --nvme-gib): it must live on another disk, and {cold}",
            )
        )
    if c.decode_tokens_per_s < consts.interactive_tokens_per_s:
        out.append(
            (
                "warning",
                "slow-decode",
                f"{tokens_per_s_text(c.decode_tokens_per_s)} tokens/s is below {consts.interactive_tokens_per_s:g} "
                "tokens/s: not interactive",
            )
        )
    if plan.kv_int8_tokens_per_s:  # newuser101 item 2: the cache, not the weights, pushed layers off the GPUs
        out.append(
            (
                "warning",
                "kv-cache-offloads",
                f"with llama.cpp's q8_0 KV cache (-fa on -ctk q8_0 -ctv q8_0: 8.5 bits an element, not 16) the "
                f"{plan.weight_format.name} weights fit entirely in VRAM at this context and decode "
                f"{tokens_per_s_text(plan.kv_int8_tokens_per_s)} tokens/s, against {tokens_per_s_text(c.decode_tokens_per_s)} "
                "now; give kv_cache_precision int8 (estimate: --kv-precision int8), or a shorter context",
            )
        )
    if plan.fitting_alternative:
        name = plan.fitting_alternative
        out.append(
            (
                "warning",
                "quantize-instead",
                f"at {name} ({_gib(plan.fitting_alternative_bytes)} GiB of weights) the model would fit entirely in "
                f"VRAM and decode {tokens_per_s_text(plan.fitting_alternative_tokens_per_s)} tokens/s, against "
                f"{tokens_per_s_text(c.decode_tokens_per_s)} now{quality_note(name)}; "
                + (f"use a {name} .gguf file of it" if file_run_as_stored else "allow that precision"),
            )
        )
    elif plan.faster_alternatives:
        speeds = ", ".join(f"{name} {tokens_per_s_text(speed)}" for name, speed in plan.faster_alternatives)
        out.append(
            (
                "warning",
                "quantize-instead",
                f"a lower precision decodes faster on this machine: {speeds} tokens/s, against "
                f"{tokens_per_s_text(c.decode_tokens_per_s)} now{quality_note(plan.faster_alternatives[-1][0])}; "
                + ("use a .gguf file of it at one" if file_run_as_stored else "allow one"),
            )
        )
    return out


def _attention_rate_text(engine: str, consts: Constants) -> str:
    """The CPU attention rate a plan's engine is timed at, and what else it says of it (the cpu-attention warning)."""
    rate = cpu_attention_gflops_per_s(engine, consts)
    if engine == "ik_llama.cpp":
        return (
            f"(ik_llama.cpp's CPU flash attention, whose query heads sharing a KV head multiply together: {rate:g} "
            f"GFLOP/s, against llama.cpp's {consts.cpu_attention_gflops_per_s:g})"
        )
    return (
        f"(llama.cpp's CPU attention with flash attention on, its default: {rate:g} GFLOP/s); with an f16 cache "
        "llama.cpp ran it about twice as fast with flash attention off (-fa off)"
    )


def pinned_text(c: OffloadCost, machine: Machine, consts: Constants, engine: str = "llama.cpp") -> str:
    """The warning of a ``--no-mmap`` placement whose pinned buffers are taken not to be granted (review26 item 1).

    ``engine``: the llama.cpp-family server the plan runs, named as it is (newuser49 item 6). llama.cpp falls back
    to pageable memory without saying so above its debug log; the plan's TTFT is timed at that rate, and the pinned
    path's TTFT is given beside it, with what to read in the load log to tell them apart.
    """
    share = c.pinned_fallback_bytes / machine.ram_bytes
    return (
        f"{engine}'s --no-mmap asks for {_gib(c.pinned_fallback_bytes)} GiB of pinned (page-locked) host buffers, "
        f"{share:.0%} of the machine's {_gib(machine.ram_bytes):g} GiB of RAM, more than the "
        f"{consts.pinned_host_ram_share:.0%} taken to be granted (pinned_host_ram_share: Windows grants about half of "
        f"RAM, Linux what is free when the model loads); where cudaMallocHost fails {engine} holds the weights in "
        f"pageable memory instead, logged at debug level only, and copies them to the GPU at "
        f"{consts.offload_pageable_copy_efficiency:g} of the pinned rate, or its RAM's rate over the "
        f"{consts.pageable_copy_host_passes:g} passes a copy staged through pinned buffers takes where that is slower: "
        f"the TTFT of {seconds_text(c.ttft_s)} is "
        f"timed so, {seconds_text(c.pinned_ttft_s or 0.0)} if they are pinned (2 published prompt runs of one 64 GiB "
        "machine that asked 82% of it, not fitted: timed so, +69% and -67%; at the pinned rate +272% and -46%: it "
        "pinned them in the faster run, not in the slower). The load log tells: 'CUDA_Host model buffer size' where "
        "they were pinned, 'CPU model buffer size' where not; on a machine that pins them, set pinned_host_ram_share "
        "to 1 (constants:, --set)"
    )


#: The source that found the page cache's buffered I/O, not the drive, the limit of a model paged from NVMe.
PAGE_CACHE_LIMIT_SOURCE = "https://github.com/ubergarm/r1-ktransformers-guide"


def nvme_text(plan: OffloadPlan, machine: Machine, consts: Constants, paged: PagedReads) -> str:
    """The warning of a placement with weights on NVMe.

    It says the page cache and the hit rate assumed, what a token pages in and at what rate, that buffered I/O may be
    the limit, and the speed if the page cache kept none of the weights.
    """
    p, c = plan.placement, plan.cost
    drive = machine.nvme_read_gb_per_s
    text = (
        f"{_gib(p.disk_bytes)} GiB of weights live on NVMe, in the memory-mapped model file: the page cache, the "
        f"{_gib(c.page_cache_bytes)} GiB of RAM the weights held off the GPUs may take ({_gib(max(p.ram_free_bytes, 0))} "
        "GiB of it beyond the weights placed in RAM), keeps the pages read most"
    )
    if paged.routed_bytes:
        text += (
            f", the most used routed experts of every layer among them: {paged.expert_cached_share:.0%} of the experts' "
            f"bytes, assumed to serve {paged.hit_rate:.0%} of a token's expert reads (popularity lognormal at "
            f"expert_popularity_cv {paged.popularity_cv:g}; {paged.expert_cached_share:.0%} if every expert were used "
            "alike)"
        )
    dense, experts = paged.dense_nvme_bytes, c.nvme_bytes_per_token - paged.dense_nvme_bytes
    parts = [
        (size, f"{what} at {drive * share:.1f} GB/s ({name} {share:g} of the drive's {drive:g} GB/s)")
        for size, what, name, share in (
            (dense, "dense weights read in order", "nvme_efficiency", consts.nvme_efficiency),
            (experts, "routed experts faulted in at random", "nvme_paged_read_efficiency", consts.nvme_paged_read_efficiency),
        )
        if size >= 0.005 * GIB
    ]
    text += f"; {_gib(c.nvme_bytes_per_token)} GiB a token are paged in from NVMe"
    if len(parts) == 1:
        text += f", {parts[0][1]}"
    elif parts:
        text += ": " + ", ".join(f"{_gib(size)} GiB of {what}" for size, what in parts)
    text += (
        ". Page faults go through the kernel's page cache, whose buffered I/O, not the drive, may be the limit (a "
        f"4-drive RAID0 gave no gain: {PAGE_CACHE_LIMIT_SOURCE})"
    )
    if c.evicted_tokens_per_s is not None:
        evicted, now = tokens_per_s_text(c.evicted_tokens_per_s), tokens_per_s_text(c.decode_tokens_per_s)
        text += (
            f"; if the page cache kept none of them (other programs' files, a second model), a token reads its "
            f"{_gib(c.nvme_bytes_per_token + c.ram_weight_bytes_per_token)} GiB of weights from NVMe: {evicted} "
            f"tokens/s instead of {now}"
        )
    return text


def offload_summary(plan: OffloadPlan, machine: Machine) -> dict[str, Any]:
    """The placement and its cost as JSON-able data."""
    p, c = plan.placement, plan.cost
    return {
        # the engine the figures are timed for and whose command the settings give
        "engine": plan.engine,
        "precision": p.precision,
        "context_tokens": p.context_tokens,
        "decisions": list(plan.decisions),
        "bytes": {
            "gpu": p.gpu_bytes,
            "cpu": p.cpu_bytes,
            "disk": p.disk_bytes,
            "kv_gpu": p.kv_gpu_bytes,
            "kv_cpu": p.kv_cpu_bytes,
            "embedding_cpu": p.embedding_bytes,
        },
        "layers": list(p.layer_devices),
        "embedding_device": p.embedding_device,
        "lm_head_device": p.lm_head_device,
        "per_gpu": [b.as_dict() for b in p.per_gpu],
        "gpu_budget_bytes": p.gpu_budget_bytes,
        "ram_used_bytes": p.ram_used_bytes,
        "ram_free_after_reserve_bytes": p.ram_free_bytes,
        "mode": c.mode,
        "bound": c.bound,
        "seconds_per_token": {k: round(v, 6) for k, v in c.seconds_per_token.items()},
        "cpu_compute_tokens_per_s": round(c.cpu_mode_tokens_per_s, 3),
        "pcie_stream_tokens_per_s": round(c.stream_mode_tokens_per_s, 3),
        "pcie_bytes_per_token": c.pcie_bytes_per_token,
        "cold_start_s": round(c.cold_start_s, 2),
        "model_file_gb": round(p.file_bytes / GB, 2),
        **({"page_cache": page_cache_summary(c, c.paged)} if c.paged is not None else {}),
    }


def page_cache_summary(cost: OffloadCost, paged: PagedReads) -> dict[str, Any]:
    """The page cache a placement with weights on NVMe assumed, and what a token reads past it, as JSON-able data."""
    return {
        "bytes": cost.page_cache_bytes,
        "expert_cached_share": round(paged.expert_cached_share, 4),
        "expert_hit_rate": round(paged.hit_rate, 4),
        "popularity_cv": paged.popularity_cv,
        "nvme_bytes_per_token": cost.nvme_bytes_per_token,
        "cached_bytes_per_token": int(paged.cached_bytes),
    }
