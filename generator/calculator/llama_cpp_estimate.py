"""The quick estimate of a GGUF precision as llama.cpp holds it: on the GPUs given alone, or on a machine without a GPU.

newuser86 item 1: without ``--ram-gib`` a GGUF precision was judged by vLLM's memory rules (``--gpu-memory-utilization``
0.9, vLLM's runtime), so Gemma 3 27B at q5_k_m (an 18.73 GiB file) read "does NOT fit" an RTX 4090 that llama.cpp holds
whole. The verdict and the table are now the offload model's placement with nothing offloaded
(:func:`generator.sizing.offload.place`, as ``--ram-gib`` and ``hardware.fixed`` place it): the weights less the input
embedding, the f16 KV cache of ``-c``, the compute buffer at ``-ub`` 512 and the CUDA context, against all the memory
CUDA lets a process allocate. Item 2: ``--ram-gib`` without ``--gpu`` places everything in system RAM
(:func:`~generator.sizing.offload.place_on_host`) and times the decode by the offload model's CPU path (the DIMMs'
bandwidth and the cores, :func:`~generator.sizing.offload.offload_cost`).
"""

from __future__ import annotations

from generator.calculator.llama_cpp_threads import estimate_thread_args
from generator.calculator.llama_cpp_vendor import gpu_runtime
from generator.calculator.machine import (
    FixedSpec,
    build_host_machine,
    build_machine,
    machine_findings,
    numa_note,
    place_over_nodes,
    wider_machine,
)
from generator.calculator.offload_report import (
    GGUF_NATIVE_FORMATS,
    file_precision,
    gguf_conversion_head,
    llama_cpp_line,
    llama_cpp_numa,
    llama_cpp_options,
)
from generator.errors import InfeasibleError
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.context_limit import LlamaCppRope, rope_options
from generator.sizing.offload import (
    HostRamShortError,
    Machine,
    Placement,
    compute_buffer_bytes,
    offload_cost,
    place,
    place_on_host,
)
from generator.sizing.precision import WeightFormat

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.offload_report import ModelArgs

#: The RAM the GPU-only estimate places with (GiB): enough that the host never limits it; the machine's RAM is not known,
#: and only the input embedding and the runtime live there when everything else fits the GPUs.
UNCHECKED_RAM_GIB = 65_536


def _command(
    p: Placement,
    gpus: int,
    kv_name: str,
    slots: int,
    engine: str,
    rope: LlamaCppRope | None,
    context: int,
    host: tuple[FixedSpec, Machine, str | None] | None = None,
    model: ModelArgs | None = None,
) -> str:
    """The llama-server arguments of a placement (the ``--ram-gib`` estimate's own).

    ``rope``: the model's llama.cpp RoPE scaling, given at launch where a request's ``context`` is past the GGUF's
    context_length (fix159). ``host``: the machine given, the one its speed was timed on, and its ``--numa``
    (:func:`llama_cpp_numa`): that and the ``--threads`` a plan's line would run (:func:`estimate_thread_args`; acc146:
    on 2+ sockets the CPU-only line had neither, llama.cpp's default threads being every socket's cores). ``model``: the
    ``-m <file>`` words of the line's GGUF type (fix176).
    """
    numa = host[2] if host else None
    options = llama_cpp_options(p, gpus, kv_name, numa, slots, engine=engine, rope=rope_options(rope, context, engine))
    threads = estimate_thread_args(host[0], host[1], options, p) if host else []
    return llama_cpp_line(options, threads, model(file_precision(p.precision)) if model else ())


def on_gpus(
    arch: Architecture,
    fmt: WeightFormat,
    kv_name: str,
    kv_bits: int,
    context: int,
    gpu_id: str,
    gpus: int,
    slots: int,
    tokens: tuple[int, int],
    consts: Constants,
    model: ModelArgs | None = None,
) -> dict[str, Any]:
    """``memory``, ``capacity`` and ``llama_cpp`` of a GGUF precision on ``gpus`` x ``gpu_id`` with no RAM given.

    ``slots``: llama-server's ``-np`` (``--batch``), each of ``context`` tokens in one ``-c``; ``tokens``: the prompt and
    output the decode speed is timed at (the KV in use halfway through the answer). Where the model does not fit whole,
    the table is the model held whole on the GPUs and the layers llama.cpp would keep on them are said.
    """
    engine = "llama.cpp"
    spec = FixedSpec(gpu=gpu_id, gpu_count=gpus, ram_gib=UNCHECKED_RAM_GIB, reserved_ram_gib=0.0)
    machine, gpu, _ = build_machine(spec)
    total_context = context * slots
    try:
        placement = place(arch, fmt, kv_bits, total_context, machine, consts, allow_offload=False)
        fits = True
    except InfeasibleError:
        fits = False
        # the model whole on GPUs without a limit: the table of what it would need, laid out as llama.cpp splits it
        placement = place(arch, fmt, kv_bits, total_context, machine._replace(gpu_memory_bytes=2**60), consts)
    fullest = max((b.as_dict() for b in placement.per_gpu), key=lambda d: d["total"])
    runtime = gpu_runtime(gpu.vendor)  # HIP on AMD (newuser99 item 2)
    basis = (
        f"{engine}'s rules: the weights but the input embedding (in RAM), the KV cache of -c, its compute buffer at "
        f"-ub {consts.offload_ubatch_tokens} and the {runtime} context, in all the memory {runtime} lets a process allocate"
    )
    doc: dict[str, Any] = {"engine": engine, "context_tokens": total_context, "slots": slots}
    if fits:
        prompt, output = tokens
        cost = offload_cost(arch, fmt, kv_bits, placement, machine, prompt, consts, prompt + output // 2, engine=engine)
        doc.update(
            command=_command(placement, gpus, kv_name, slots, engine, arch.llama_cpp_rope, context, model=model),
            decode_tokens_per_s=round(cost.decode_tokens_per_s, 3),
            bound=cost.bound,
            ttft_s=round(cost.ttft_s, 3),
            ttft_prompt_tokens=prompt,
            output_tokens=output,
        )
    else:
        try:  # the layers llama.cpp keeps on the GPUs with the rest in RAM, were the RAM enough
            offloaded = place(arch, fmt, kv_bits, total_context, machine, consts)
            doc["layers_on_gpu"] = offloaded.layers_on_gpu
            doc["expert_layers_in_ram"] = sum(1 for d in offloaded.layer_devices if "+experts:" in d)
        except InfeasibleError as exc:
            doc["offload_blocked_by"] = str(exc)
        doc["layers"] = arch.num_layers
    return {
        # the weights the fullest GPU holds, as a placement with --ram-gib says them (the input embedding in RAM)
        "weights": {"bytes": placement.file_bytes, "bytes_per_gpu": fullest["weights"]},
        "memory": {"per_gpu": fullest, "placed": fits},
        "capacity": {
            "gpu": gpu.id,
            "gpu_memory_bytes": gpu.memory_bytes,
            "fits": fits,
            "usable_bytes": gpu.memory_bytes,
            "usable_basis": basis,
            "engine": engine,
        },
        "llama_cpp": doc,
    }


def _ram_basis(spec: FixedSpec, spans: bool) -> str:
    """The RAM the placement's free figure is of: one NUMA node's or every node's on several sockets; "" on one.

    newuser88 item 5: ``--cpu-sockets 4 --ram-gib 64`` said "0.62 GiB RAM free after the reserve" beside "RAM 7.38 GiB"
    with nothing saying the 0.62 is of one node's 16 GiB (the 8 GiB reserve kept whole on it).
    """
    if spec.cpu_sockets < 2:
        return ""
    if spans:
        return f"of all {spec.cpu_sockets} NUMA nodes' {spec.ram_gib:g} GiB, the model spread over them"
    reserve = f", the {spec.reserved_ram_gib:g} GiB reserve kept on it" if spec.reserved_ram_gib else ""
    return f"of one NUMA node's {spec.ram_gib / spec.cpu_sockets:.4g} GiB of {spec.ram_gib:g}{reserve}"


def host_only(
    arch: Architecture,
    fmt: WeightFormat,
    kv_name: str,
    kv_bits: int,
    context: int,
    spec: FixedSpec,
    slots: int,
    tokens: tuple[int, int],
    consts: Constants,
    model: ModelArgs | None = None,
) -> dict[str, Any]:
    """``memory``, ``machine``, ``cpu_only`` and ``findings`` of a model on ``spec``, a machine without a GPU.

    The decode of ``slots`` streams (llama-server ``-np``) is timed by the offload model's CPU path: the weights and KV
    read from the DIMMs, the cores' multiplies, the CPU's attention. The prompt's time is not: the offload model's CPU
    rate is a decode's (matrix-vector products); llama.cpp's CPU prompt passes run matrix-matrix kernels that no
    calibrated figure covers. Raises :class:`~generator.errors.InfeasibleError` where the RAM does not hold it.
    """
    engine = spec.offload_engine
    machine, basis = build_host_machine(spec)
    total_context = context * slots
    try:  # one node's RAM, else every node's (a machine of several sockets), as an offload is placed
        placement, machine, spans = place_over_nodes(
            lambda on: place_on_host(arch, fmt, kv_bits, total_context, on, consts, engine),
            machine,
            wider_machine(machine, spec),
            lambda placed: placed.disk_bytes,
        )
    except HostRamShortError as exc:
        raise InfeasibleError(f"the model cannot run on this machine: {exc}; to unblock: {exc.unblock}") from None
    prompt, output = tokens
    cost = offload_cost(
        arch, fmt, kv_bits, placement, machine, prompt, consts, prompt + output // 2, streams=slots, engine=engine
    )
    buffer = compute_buffer_bytes(arch, consts)
    host = (spec, machine, llama_cpp_numa(placement, spans, wider_machine(machine, spec)))  # the line's --numa, --threads
    table = {
        "weights": placement.cpu_bytes,
        "kv_cache": placement.kv_cpu_bytes,
        "activations": buffer,
        "gradients": 0,
        "optimizer": 0,
        "overhead": consts.runtime_host_bytes,
        "total": placement.ram_used_bytes,
    }
    seconds = {k: round(v, 6) for k, v in cost.seconds_per_token.items() if v}
    numa = numa_note(spec, spans)
    findings = [
        {"level": lvl, "code": code, "message": msg} for lvl, code, _, msg in machine_findings(spec, consts, "--pcie-lanes")
    ]
    if numa:
        level, code = ("warning", "numa-spans-nodes") if spans else ("info", "one-socket-bandwidth")
        findings.append({"level": level, "code": code, "message": numa})
    if fmt.gguf is None and fmt.name not in GGUF_NATIVE_FORMATS:  # fp8, int4 ...: as the --gpu offload's note says
        gguf, head = gguf_conversion_head(arch, fmt, engine)
        said = f"{head}; the figures are the {fmt.name} checkpoint's, --precision {gguf.name} plans that file"
        findings.append({"level": "warning", "code": "gguf-conversion", "message": said})
    return {
        "weights": {"bytes": placement.file_bytes, "bytes_per_gpu": 0},
        "memory": {"host": table, "placed": True},
        "machine": {
            "gpu": None,
            "gpus": 0,
            "ram_gib": spec.ram_gib,
            "reserved_ram_gib": spec.reserved_ram_gib,
            "bandwidths": basis,
        },
        "cpu_only": {
            "engine": engine,
            "context_tokens": total_context,
            "slots": slots,
            "ram_used_bytes": placement.ram_used_bytes,
            "ram_free_after_reserve_bytes": placement.ram_free_bytes,
            "ram_basis": _ram_basis(spec, spans),
            "nvme_paged_bytes": placement.disk_bytes,
            "decode_tokens_per_s": round(cost.decode_tokens_per_s, 3),
            "decode_tokens_per_s_all_slots": round(cost.decode_tokens_per_s * slots, 3),
            "decode_context_tokens": min(prompt + output // 2, total_context),
            "bound": cost.bound,
            "seconds_per_token": seconds,
            "cold_start_s": round(cost.cold_start_s, 3),
            "command": _command(placement, 0, kv_name, slots, engine, arch.llama_cpp_rope, context, host, model),
            "not_estimated": (
                "the prompt's time (TTFT): the CPU rate counted is a decode's matrix-vector products, and llama.cpp's "
                "CPU prompt passes run matrix-matrix kernels no calibrated figure covers"
            ),
        },
        "findings": findings,
    }
