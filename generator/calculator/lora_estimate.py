"""``specgen estimate``'s LoRA serving options: a workload's ``inference.lora`` on the command line (fix161).

``--lora-adapters``, ``--lora-max-rank``, ``--max-loras``, ``--max-cpu-loras`` and ``--lora-target-modules`` are the
fields ``adapters``, ``max_rank``, ``max_loras``, ``max_cpu_loras`` and ``target_modules``. They are refused by the
workload's rules (:mod:`generator.sizing.lora_serving`: one function each, naming the option here and the field there),
and sized by the planner's functions (:mod:`generator.planner.lora_replica`: the slots and vLLM's shrink buffer come out
of the KV pool, the punica kernels time every step; :mod:`generator.planner.lora_plan`: the ``lora`` entry and its
reason line). Loaded only where adapters are asked: an estimate without them imports none of it (its cold start).
"""

from __future__ import annotations

from generator.calculator.estimate import LORA_REQUEST_FIELDS
from generator.calculator.target_limits import targets_problem
from generator.errors import InputError, UsageError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.estimate import EstimateRequest
    from generator.sizing.architecture import Architecture
    from generator.sizing.memory import InferenceMemory
    from generator.sizing.weights import Parallelism
    from generator.workload.models import InferenceSpec

#: The estimate's option of each ``inference.lora`` field (``--lora-adapters``: the request's ``lora_adapters``).
OPTIONS = {field: "--" + name.replace("_", "-") for field, name in LORA_REQUEST_FIELDS.items()}
#: Why a machine of yours (``--ram-gib``, ``hardware.fixed``) or a GGUF file on the GPUs is not sized with adapters
#: (fix172 item 5: llama.cpp's LoRA is not vLLM's, so vLLM's slots are not sized for it). llama-server loads every
#: ``--lora`` adapter GGUF at start (convert_lora_to_gguf.py's, its tensors in the type its ``--outtype`` wrote), and a
#: request picks adapters by the scales of its ``lora`` list, "requests with different LoRA configurations will not be
#: batched" (https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md): no adapter slots (vLLM's
#: ``--max-loras``), no host-RAM pool (``--max-cpu-loras``), no rank cap; the adapters' bytes beside the base are not
#: placed by the offload model, so the estimate refuses rather than size llama.cpp as vLLM.
LLAMA_CPP_LORA = (
    "it is sized as llama.cpp's server, whose --lora adapters are not sized here: llama-server loads every adapter "
    "GGUF at start, in the adapter file's own type (convert_lora_to_gguf.py --outtype), and a request picks them by "
    "its 'lora' list of scales (requests of different lists are not batched together); it has no adapter slots "
    "(--max-loras) or host-RAM pool (--max-cpu-loras) to size. Size vLLM or SGLang on --gpu (a GGUF precision with "
    "--engine), or merge the adapter into the model (llama-export-lora) and size that"
)
#: The targets where none are given (the schema's default).
DEFAULT_TARGETS = ("all-linear",)


def check_lora_options(req: EstimateRequest) -> None:
    """A UsageError (exit 2) at the first LoRA option out of its range or against the engine's rules.

    The ranges are the schema's (:data:`~generator.sizing.lora_serving.LORA_RANGES`), the rules the workload's.
    """
    from generator.sizing.lora_serving import LORA_RANGES, cpu_loras_problem, max_loras_problem, rank_problem

    if req.lora_adapters is None:
        given = next(o for f, o in OPTIONS.items() if getattr(req, LORA_REQUEST_FIELDS[f]) is not None)
        raise UsageError(f"{given} needs --lora-adapters: the adapters served (a workload's inference.lora.adapters)")
    if req.train:
        raise UsageError("--lora-adapters sizes adapters served by an engine; a training job's are --lora-rank / --lora-targets")
    if req.task != "generate":
        raise UsageError(f"--lora-adapters: a pooling server (--task {req.task}) is not sized with LoRA adapters")
    if req.fixed is not None:
        raise UsageError(f"--lora-adapters cannot be combined with --ram-gib: {LLAMA_CPP_LORA}")
    if req.lora_max_rank is None:
        raise UsageError("--lora-adapters needs --lora-max-rank: the rank every adapter slot is sized at (max_rank)")
    for field, (low, high) in LORA_RANGES.items():
        value = getattr(req, LORA_REQUEST_FIELDS[field])
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high):
            raise UsageError(f"{OPTIONS[field]} must be a whole number from {low} to {high:,}, got {value!r}")
    targets = req.lora_target_modules
    if targets is not None and (wrong := targets_problem(OPTIONS["target_modules"], targets)):  # the schema's limits
        raise UsageError(wrong)
    why = (
        rank_problem(req.engine, req.lora_max_rank, OPTIONS["max_rank"])
        or max_loras_problem(req.max_loras, req.lora_adapters, (OPTIONS["max_loras"], OPTIONS["adapters"]))
        or cpu_loras_problem(
            req.engine, req.max_cpu_loras, req.max_loras, req.lora_adapters, (OPTIONS["max_cpu_loras"], OPTIONS["max_loras"])
        )
    )
    if why:
        raise UsageError(why)


def lora_serving_spec(req: EstimateRequest, arch: Architecture, context: int, kv_precision: str) -> InferenceSpec:
    """The service the planner would size for the request's adapters (its LoRA fields, engine, context and KV dtype).

    A target the model lacks, or its output layer / embedding, is refused as a workload's is (InputError, exit 1).
    """
    from generator.sizing.lora_serving import target_problem
    from generator.workload.models import InferenceSpec, LoraAdapters

    assert req.lora_adapters is not None  # check_lora_options
    assert req.lora_max_rank is not None
    targets = req.lora_target_modules or DEFAULT_TARGETS
    if why := target_problem(arch, targets, OPTIONS["target_modules"], engine=req.engine):
        said = OPTIONS["target_modules"]
        raise InputError(why if why.startswith(said) else f"{said} {','.join(targets)}: {why}")
    lora = LoraAdapters(
        adapters=req.lora_adapters,
        max_rank=req.lora_max_rank,
        target_modules=targets,
        max_loras=req.max_loras,
        max_cpu_loras=req.max_cpu_loras,
    )
    spec = InferenceSpec(max_context_tokens=context, kv_cache_precision=kv_precision, lora=lora)
    return spec._replace(engine="sglang") if req.engine == "sglang" else spec


#: The throughput figures the ``lora`` entry keeps of the same replica without the adapters.
COMPARED_RATES = ("max_output_tokens_per_s", "saturation_batch", "ttft_s", "tpot_s", "requests_per_s", "decode_step_s")


def lora_result(
    spec: InferenceSpec,
    arch: Architecture,
    par: Parallelism,
    mem: InferenceMemory,
    without: InferenceMemory,
    rates: dict[str, Any] | None,
) -> dict[str, Any]:
    """The estimate's ``lora`` entry: the plan's (:func:`~generator.planner.lora_plan.lora_details`), the replica beside.

    ``without``: the same replica's memory without the adapters; ``rates``: its throughput (None where not asked).
    """
    from generator.planner.lora_plan import lora_details

    out = {"engine": spec.engine, **lora_details(arch, spec, par, mem.overhead_parts.get("lora_shrink_buffer", 0))}
    if spec.engine != "vllm":
        out.pop("shrink_buffer_bytes_per_gpu", None)
    cap, plain = mem.capacity, without.capacity
    if cap is not None and plain is not None:
        out["without_adapters"] = {
            "kv_cache_bytes": plain.kv_available_bytes,
            "kv_cache_tokens": plain.kv_cache_tokens,
            "max_concurrency": round(plain.max_concurrency, 2),
        }
        if rates is not None:
            out["without_adapters"]["throughput"] = {key: rates[key] for key in COMPARED_RATES}
    return out


def lora_slot_notes(lora: dict[str, Any], batch: int) -> list[str]:
    """``warning:`` where ``--batch``'s distinct adapters outnumber the slots: the planner's ``lora-slots-short``.

    ``lora``: the estimate's ``lora`` entry (:func:`lora_result`), judged by the plan's rule
    (:func:`~generator.planner.lora_slot_wait.slots_short_text`).
    """
    from generator.planner.lora_slot_wait import slots_short_text

    asked = f"a batch of {batch:,} sequence{'s' if batch != 1 else ''} (--batch)"
    said = slots_short_text(lora, batch, lora["engine"], asked, OPTIONS["max_loras"], "a re-run")
    return [] if said is None else [f"warning: {said}"]


def lora_lines(result: dict[str, Any]) -> list[str]:
    """The estimate's text of its adapters: the plan's reason line, the KV pool and the rates without them beside."""
    from generator.planner.lora_plan import lora_reason
    from generator.units import GIB

    lora = result["lora"]
    lines = [f"  LoRA         {lora_reason(result, lora['engine']).removeprefix('LoRA: ')}"]
    before = lora.get("without_adapters")
    cap = result.get("capacity")
    if before and cap:
        context = result["kv_cache"]["context_tokens"]
        lines.append(
            f"               KV cache {before['kv_cache_bytes'] / GIB:,.2f} -> {cap['kv_cache_bytes'] / GIB:,.2f} GiB a GPU, "
            f"max concurrency {before['max_concurrency']:,.2f} -> {cap['max_concurrency']:,.2f} at {context:,} tokens"
        )
    if (thr := result.get("throughput")) and "max_output_tokens_per_s" in (plain := before or {}).get("throughput", {}):
        base = plain["throughput"]
        lines.append(
            f"               LoRA kernels ({lora['kernels_per_pass']:,} a GPU each forward pass, timed in every step): "
            f"{base['max_output_tokens_per_s']:,.0f} -> {thr['max_output_tokens_per_s']:,.0f} output tokens/s at "
            f"saturation, TPOT {base['tpot_s'] * 1000:.1f} -> {thr['tpot_s'] * 1000:.1f} ms and "
            f"{base['requests_per_s']:,.2f} -> {thr['requests_per_s']:,.2f} req/s at batch {result['kv_cache']['sequences']}"
        )
    return lines
