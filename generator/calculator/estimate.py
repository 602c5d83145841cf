"""The quick calculator behind ``specgen estimate``: one model, one shape, a JSON-able answer.

Kept light on purpose (standard library plus the sizing core): it must answer a cold start in
well under 0.1 s, so no pydantic, jsonschema, jinja2, ruamel or click on this path.
"""

from __future__ import annotations

import math

from generator import catalog
from generator.calculator.model_limits import check_layout
from generator.calculator.model_source import (
    ResolvedModel,
    fixed_format_problem,
    model_weight_format,
    resolve_model,
    served_precision,
)
from generator.catalog.host_cpu import REFERENCE_CPU_ID, host_time_scale
from generator.catalog.nvfp4_layout import nvfp4_layout_note
from generator.errors import InfeasibleError, InputError, UsageError
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import no_prefix_cache_reason, pooling_model_signs, without_vllm_reason
from generator.sizing.constants import CONSTANT_BOUNDS, Constants, with_overrides
from generator.sizing.context_limit import (
    CONTEXT_EXTENSION,
    llama_cpp_rope_note,
    longer_context_wording,
    served_limit_phrase,
)
from generator.sizing.distributed_runtime import nvlink_collectives, nvlink_replica
from generator.sizing.engine_runtime import ENGINE_NAMES, batch_limits, default_max_num_batched_tokens, per_sequence_host_scale
from generator.sizing.expert_parallel import check_ep_divides_data_parallel, check_expert_parallel_model, training_weight_layout
from generator.sizing.kv_cache import size_kv_cache, token_bytes_per_gpu, windowed_split
from generator.sizing.loadability import (
    VLLM_AUTO_DTYPE_SOURCE,
    default_group_problem,
    dense_format_problem,
    engine_gguf_problem,
    float16_problem,
    format_problems,
    half_format,
    loadability_problems,
    served_float_format,
)
from generator.sizing.loaded_weights import llama_cpp_format, llama_cpp_formats, loaded_format
from generator.sizing.memory import InferenceMemory, size_inference
from generator.sizing.moe_layer_step import engine_moe_layer_step_s
from generator.sizing.performance import (
    accelerator_for,
    decode_step,
    dequantized_rates,
    prefill_seconds,
    prompt_taken_seconds,
    saturated_throughput,
    step_budget_batch,
)
from generator.sizing.precision import (
    WeightFormat,
    alias_note,
    auto_kv_cache_precision,
    float16_cast_note,
    kv_cache_bits,
    no_int8_kv_cache,
    weight_format,
)
from generator.sizing.prompt_attention_kernel import prompt_query_rows
from generator.sizing.quantization import checkpoint_kv_cache_precision, checkpoint_kv_note
from generator.sizing.serving_queue import least_spread_mix, mix_moments, prompt_tail, steady_state, tail_problem
from generator.sizing.throughput_gaps import counted_text, gap_text, matching_gap
from generator.sizing.training_hardware import flash_attention_note, fp16_note, launches_flash_attention, stack_note
from generator.sizing.vllm_kv import request_kv_bytes, start_shortfall_bytes, vllm_kv_cache
from generator.sizing.weights import Parallelism, engine_stages, size_weights
from generator.units import GIB

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from generator.calculator.machine import FixedSpec
    from generator.catalog.records import GpuSpec
    from generator.sizing.architecture import Architecture
    from generator.sizing.gpu_share import GpuShare
    from generator.sizing.kv_cache import KvCacheSizes
    from generator.sizing.memory import Capacity
    from generator.sizing.offload import StreamCapacity
    from generator.sizing.training import TrainingMemory, TrainingSetup
    from generator.workload.models import GpuSharing, InferenceSpec

#: Context sized when none is given: never a model's full 128k unless asked.
DEFAULT_CONTEXT_TOKENS = 4096
#: Training sequence length when neither ``--seq-len`` nor ``--context`` is given.
DEFAULT_TRAINING_SEQUENCE = 2048

#: Ranges of an existing machine's options, as ``hardware.fixed`` in ``schemas/workload.schema.json``.
PCIE_LANES = (1, 4, 8, 16)
PCIE_GENERATIONS = (3, 6)
MEMORY_CHANNELS = (1, 96)
CPU_SOCKETS = (1, 8)
#: Cores of one socket ``--cpu-cores`` takes (the largest x86 sockets sold hold 192 cores; 512 leaves room).
CPU_CORES = (1, 512)
DDR_MT_PER_S = (1000, 12000)


#: Why ``--dataset-tokens`` is refused without ``--gpu``.
DATASET_NEEDS_GPU = (
    "--dataset-tokens needs --gpu: a run's hours are its steps at one GPU's speed (the memory breakdown needs none)"
)

#: Serving engines whose KV-cache accounting the estimate and the planner know.
SERVING_ENGINES = ("vllm", "sglang")

#: ``--share-strategy`` choices, and ``--share``'s range: ``kubernetes.gpu_sharing`` strategies other than mig and
#: ``replicas_per_gpu``'s range in the workload schema.
SHARE_STRATEGIES = ("time-slicing", "mps")
SHARE_REPLICAS = (2, 48)


class EstimateRequest(NamedTuple):
    """Everything ``specgen estimate`` can be asked."""

    model: str
    precision: str | None = None
    kv_precision: str | None = None
    context_tokens: int | None = None
    batch: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    gpu: str | None = None
    gpu_memory_utilization: float | None = None
    #: Serving engine whose KV accounting sizes the cache (:data:`SERVING_ENGINES`).
    engine: str = "vllm"
    #: Whether ``engine`` was asked for: where it was not (the command line without ``--engine``), a GGUF precision on
    #: ``gpu`` is sized as llama.cpp holds it (:mod:`generator.calculator.llama_cpp_estimate`; newuser86 item 1).
    engine_chosen: bool = True
    #: Where the layers PP leaves over go (:data:`~generator.sizing.weights.STAGE_RULES`); None: the engine's. The
    #: calibration's TensorRT-LLM rows, sized through the vLLM estimate, take TensorRT-LLM's (``first``).
    pipeline_stages: str | None = None
    #: SGLang's ``--mem-fraction-static``; None: SGLang's default for the GPU.
    mem_fraction_static: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    #: 95th-percentile prompt tokens (a long-prompt tail, as a workload's ``p95_input_tokens``); None: none given.
    p95_input_tokens: int | None = None
    #: Share of each prompt the engine's prefix cache holds (a workload's ``cached_prompt_share``); 0: none.
    cached_prompt_share: float = 0.0
    max_batched_tokens: int | None = None
    #: Most sequences a replica runs at once (vLLM --max-num-seqs); None: the engine's default on the GPU.
    max_num_seqs: int | None = None
    train: str | None = None
    #: None: the framework's default, else adamw (mixed precision); ZeRO stage likewise (else 0).
    optimizer: str | None = None
    zero_stage: int | None = None
    gpus: int | None = None
    micro_batch: int = 1
    #: Gradient accumulation steps of a training job: above 1 its gradients stay resident beside each micro-batch.
    accumulation: int = 1
    seq_len: int | None = None
    checkpointing: str = "full"
    #: False where ``--gradient-checkpointing`` is not given: a job on a GPU is then sized at the fastest level that
    #: fits, as a plan sizes it (:mod:`lighter_checkpointing`, newuser108, fix194); ``checkpointing`` where none does.
    checkpointing_given: bool = True
    flash_attention: bool = True
    lora_rank: int = 16
    #: PEFT ``lora_dropout`` (0 <= p < 1; 0 is PEFT's default).
    lora_dropout: float = 0.0
    lora_targets: tuple[str, ...] = ("all-linear",)
    offload_optimizer: bool = False
    offload_params: bool = False
    constants: tuple[tuple[str, float], ...] = ()
    #: An existing machine (``--ram-gib`` and friends): plan placement and offload on it.
    fixed: FixedSpec | None = None
    allowed_precisions: tuple[str, ...] = ()
    min_context_tokens: int | None = None
    #: Read an ``org/name`` id from the Hugging Face Hub even when the catalog has it.
    from_hub: bool = False
    #: What a request does: ``generate``, or a pooling task (``embed``, ``score``: :mod:`generator.calculator.pooling_estimate`).
    task: str = "generate"
    #: Catalog id of the serving host's CPU: scales the per-sequence host time by its single-thread speed
    #: against the reference host (generator/catalog/host_cpu.py); None: the reference host.
    host_cpu: str | None = None
    #: Fine-tuning framework profile and its techniques (None: the framework's default).
    framework: str | None = None
    loss: str | None = None
    activation_offload: bool | None = None
    optimizer_in_backward: bool | None = None
    #: Optimizer states in bitsandbytes' paged memory; None: the framework recipe's.
    paged_optimizer: bool | None = None
    fused_kernels: bool | None = None
    #: What the linear layers' GEMMs run in (``--compute-precision``): bf16, or fp8 (FP8 training, full training only).
    compute_precision: str = "bf16"
    #: Answer the longest training sequence that fits ``gpu`` (``--max-seq-len``).
    max_seq_len: bool = False
    #: Tokens in one pass over the training data, and passes over it (a workload's ``training.dataset_tokens`` and
    #: ``training.epochs``): with ``gpu``, the run's hours and GPU-hours.
    dataset_tokens: int | None = None
    epochs: float = 1.0
    #: One pod's share of ``gpu`` a replica of one GPU is sized in, as a plan under ``kubernetes.gpu_sharing`` sizes it:
    #: a MIG profile (``--mig``), or ``share`` time-slicing / MPS replicas a GPU (``--share``, ``--share-strategy``).
    mig: str | None = None
    share: int | None = None
    share_strategy: str = "time-slicing"
    #: LoRA adapters served over the model (a workload's ``inference.lora``: :mod:`generator.calculator.lora_estimate`):
    #: ``adapters``, ``max_rank``, ``max_loras`` and ``max_cpu_loras`` (None: the engine's defaults), ``target_modules``
    #: (None: all-linear); no adapters where ``lora_adapters`` is None.
    lora_adapters: int | None = None
    lora_max_rank: int | None = None
    max_loras: int | None = None
    max_cpu_loras: int | None = None
    lora_target_modules: tuple[str, ...] | None = None
    #: OpenAI tool calls (a workload's ``inference.tool_calling``): the llama-server lines take ``--jinja`` (fix184).
    tool_calling: bool = False


#: The request's field of each ``inference.lora`` field; the option is its name with dashes (``--lora-adapters``).
LORA_REQUEST_FIELDS = {
    "adapters": "lora_adapters",
    "max_rank": "lora_max_rank",
    "max_loras": "max_loras",
    "max_cpu_loras": "max_cpu_loras",
    "target_modules": "lora_target_modules",
}


def _constants(req: EstimateRequest) -> Constants:
    overrides: dict[str, Any] = dict(req.constants)
    if req.gpu_memory_utilization is not None:
        overrides["gpu_memory_utilization"] = req.gpu_memory_utilization
    if req.max_batched_tokens is not None:
        overrides["prefill_chunk_tokens"] = req.max_batched_tokens
    try:
        return with_overrides(overrides)
    except InputError as exc:  # a --set value out of its range, or no constant of that name: a usage error
        raise UsageError(str(exc)) from None


def _given_batched_tokens(req: EstimateRequest) -> int | None:
    """The tokens of a forward pass the user gives: ``--max-batched-tokens``, else ``--set prefill_chunk_tokens``."""
    chunk = req.max_batched_tokens or dict(req.constants).get("prefill_chunk_tokens")
    return int(chunk) if chunk else None


def _engine_batches(req: EstimateRequest, gpu: GpuSpec, consts: Constants, model_type: str) -> list[Constants]:
    """The constants with each batch limit to size at on ``gpu`` (:func:`batch_limits`), in order.

    vLLM's prompt-attention kernel for ``model_type`` on ``gpu`` (Triton unified attention for a sink model before
    Hopper) unless ``--set prompt_attention_query_rows`` names one (:func:`prompt_query_rows`).

    The batch is capped at ``--max-num-seqs``, else a ``--set`` ``max_batch_size``, else a ``--set`` ``max_num_seqs``,
    else the engine's default; vLLM's profiling run samples ``--max-num-seqs`` rows, else a ``--set``
    ``max_num_seqs``, else as many as the batch.
    """
    explicit = dict(req.constants)
    rows = prompt_query_rows(consts, req.engine, gpu.architecture, model_type)  # --set's own (0 too) or the engine's
    if rows != consts.prompt_attention_query_rows:
        consts = consts._replace(prompt_attention_query_rows=rows)
    # --set's moe_layer_step_s (0 too), else the engine's: vLLM's fused-MoE layers, as the planner's engine_constants
    consts = consts._replace(moe_layer_step_s=engine_moe_layer_step_s(consts, req.engine))
    seqs = req.max_num_seqs or explicit.get("max_num_seqs")
    given = req.max_num_seqs or explicit.get("max_batch_size") or seqs
    if req.engine != "vllm":
        # SGLang splits --max-running-requests over its attention-DP ranks (each runs given // dp); the limits here are
        # each engine's, which a replica of attention-DP ranks runs dp of
        dp = Parallelism(req.tp, req.pp, req.ep).attention_dp
        per_rank = max(1, int(given) // dp) if given else None
        limits = batch_limits(req.engine, gpu.name, gpu.memory_bytes, per_rank, consts.max_batch_size)
        return [consts._replace(max_batch_size=n) for n in limits]
    # the tokens of a forward pass: the user's, else vLLM's server default
    default = default_max_num_batched_tokens(req.engine, gpu.name, gpu.memory_bytes) or consts.prefill_chunk_tokens
    tokens = _given_batched_tokens(req) or default
    if given and int(given) > tokens:
        # the option that set the sequences
        source = "--max-num-seqs" if req.max_num_seqs else f"--set {'max_batch_size' if given != seqs else 'max_num_seqs'}"
        raise InputError(
            f"{int(given):,} sequences a step are more than the {tokens:,} tokens a forward pass runs: vLLM refuses to "
            f"start so (max_num_batched_tokens must be at least max_num_seqs); raise --max-batched-tokens or lower "
            f"{source}"
        )
    limits = batch_limits(req.engine, gpu.name, gpu.memory_bytes, int(given) if given else None, consts.max_batch_size, tokens)
    return [consts._replace(max_batch_size=n, max_num_seqs=int(seqs) if seqs else n, prefill_chunk_tokens=tokens) for n in limits]


#: The command-line option of each request field whose name differs from it.
_OPTION = {"context_tokens": "context", "min_context_tokens": "min-context", "zero_stage": "zero"}


def _option(field: str) -> str:
    return "--" + _OPTION.get(field, field).replace("_", "-")


#: Largest ``--dataset-tokens`` and ``--epochs``: ``training.dataset_tokens`` and ``training.epochs`` in the workload schema.
MAX_DATASET_TOKENS = 10**15
MAX_EPOCHS = 1000

#: Largest value of each count option: far above any real deployment, far below what makes the sizing slow.
#: Longest ``--seq-len`` (the workload schema's ``training.sequence_length`` maximum), where ``--max-seq-len`` stops.
MAX_SEQ_LEN = 1 << 24
_MAXIMUM = {
    "batch": 1_048_576,
    "tp": 1024,
    "pp": 1024,
    "ep": 8192,
    "micro_batch": 4096,
    "accumulation": 65_536,
    "lora_rank": 4096,
    "context_tokens": 1 << 24,
    "input_tokens": 1 << 24,
    "output_tokens": 1 << 24,
    "p95_input_tokens": 1 << 24,
    "max_batched_tokens": 1 << 24,
    "max_num_seqs": 65_536,
    "gpus": 1_000_000,
    "seq_len": MAX_SEQ_LEN,
    "min_context_tokens": 1 << 24,
    "dataset_tokens": MAX_DATASET_TOKENS,
}
#: Largest RAM, swap and NVMe sizes (GiB) and NVMe read rate (GB/s) of an existing machine (as in the workload schema).
MAX_RAM_GIB = 65_536
MAX_DISK_GIB = 1_048_576
MAX_NVME_READ_GB_PER_S = 1000
#: As hardware.fixed.nvme_read_gb_per_s: the cold start and an NVMe tier divide by it.
MIN_NVME_READ_GB_PER_S = 0.01


def _check_positive(**values: int | None) -> None:
    """Every given (not None) value must be a whole number from 1 to its maximum."""
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{_option(name)} must be a whole number of at least 1, got {value!r}")
        high = _MAXIMUM.get(name)
        if high is not None and value > high:
            raise UsageError(f"{_option(name)} must be at most {high:,}, got {value:,}")


def _check_number(
    option: str,
    value: float,
    low: float,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> None:
    """``value`` must be a finite number from ``low`` up to ``high`` (both inclusive unless told)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value >= low if low_inclusive else value > low)
    ok = ok and (high is None or (value <= high if high_inclusive else value < high))
    if not ok:
        low_text = f"{'>=' if low_inclusive else '>'} {low:g}"
        high_text = f"{int(high):,}" if high is not None and float(high).is_integer() else f"{high:g}"
        rule = (
            low_text
            if high is None
            else f"in {'[' if low_inclusive else '('}{low:g}, {high_text}{']' if high_inclusive else ')'}"
        )
        raise UsageError(f"{option} must be a number {rule}, got {value!r}")


def _check_fixed(spec: FixedSpec) -> None:
    """The existing machine: the same ranges as ``hardware.fixed`` in the workload schema."""
    if spec.gpu:  # none: a machine without a GPU, llama.cpp on its CPU alone (newuser86 item 2)
        _check_positive(gpus=spec.gpu_count)
    if spec.gpu_count > 16:
        raise UsageError(f"--gpus must be at most 16 for an existing machine, got {spec.gpu_count}")
    _check_number("--ram-gib", spec.ram_gib, 0, MAX_RAM_GIB, low_inclusive=False)
    _check_number("--reserved-ram-gib", spec.reserved_ram_gib, 0, MAX_RAM_GIB)
    from generator.calculator.machine import channels_problem, module_on_a_desktop, ram_beyond_slots, reserve_leaves_no_ram

    # the rules of hardware.fixed: the reservation must leave RAM to place the model in, the RAM fit the CPU's slots
    problem = reserve_leaves_no_ram(spec, f"--reserved-ram-gib {spec.reserved_ram_gib:g}", "--ram-gib")
    if problem is not None:
        raise InputError(problem)
    _check_number("--swap-gib", spec.swap_gib, 0, MAX_DISK_GIB)
    _check_number("--nvme-gib", spec.nvme_gib, 0, MAX_DISK_GIB)
    _check_number("--nvme-read-gb-per-s", spec.nvme_read_gb_per_s, MIN_NVME_READ_GB_PER_S, MAX_NVME_READ_GB_PER_S)
    if spec.pcie_lanes is not None and spec.pcie_lanes not in PCIE_LANES:
        raise UsageError(f"--pcie-lanes must be one of {', '.join(map(str, PCIE_LANES))}, got {spec.pcie_lanes!r}")
    for option, value, (low, high) in (
        ("--pcie-gen", spec.pcie_gen, PCIE_GENERATIONS),
        ("--memory-channels", spec.memory_channels, MEMORY_CHANNELS),
        ("--ddr-mt-per-s", spec.ddr_mt_per_s, DDR_MT_PER_S),
        ("--cpu-sockets", spec.cpu_sockets, CPU_SOCKETS),
        ("--cpu-cores", spec.cpu_cores, CPU_CORES),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high):
            raise UsageError(f"{option} must be a whole number from {low} to {high}, got {value!r}")
    if spec.cpu and spec.cpu_cores:  # newuser88: a catalog CPU's cores are its record's
        raise UsageError(f"--cpu-cores is for a CPU the catalog lacks: --cpu {spec.cpu} counts its own cores")
    _check_threads(spec)
    if not channels_problem(spec) and (slots := ram_beyond_slots(spec, "--ram-gib")):
        raise InputError(slots)
    if module := module_on_a_desktop(spec):
        raise InputError(module)


def _check_threads(spec: FixedSpec) -> None:
    """``--threads``: a whole number from 1 to the threads of ``--cpu``'s part over ``--cpu-sockets`` (fix153).

    It needs a catalog CPU: the part's threads bound it and its cores are what the threads run on (a CPU the catalog
    lacks gives its cores with ``--cpu-cores``, the cores of one socket llama.cpp's threads run on).
    """
    from generator.calculator.machine import threads_problem

    if spec.threads is None:
        return
    if isinstance(spec.threads, bool) or not isinstance(spec.threads, int) or spec.threads < 1:
        raise UsageError(f"--threads must be a whole number of at least 1, got {spec.threads!r}")
    if problem := threads_problem(spec, lambda field: f"--{field}"):
        # a CPU the catalog lacks gives its cores instead
        lacks = "; for a CPU the catalog lacks give --cpu-cores, the cores of one socket llama.cpp's threads run on"
        if spec.cpu_cores:  # hostile89: it told a user who gave --cpu-cores to give --cpu-cores
            lacks = (
                f"; --cpu-cores {spec.cpu_cores} (a CPU the catalog lacks) already gives the cores of one socket "
                "llama.cpp's threads run on: leave --threads out"
            )
        raise UsageError(problem + (lacks if not spec.cpu else ""))


def check_request(req: EstimateRequest) -> None:
    """Reject every out-of-range number of ``req`` with a UsageError naming its option (exit 2, newuser73 item 9)."""
    _check_positive(
        batch=req.batch,
        tp=req.tp,
        pp=req.pp,
        ep=req.ep,
        micro_batch=req.micro_batch,
        accumulation=req.accumulation,
        lora_rank=req.lora_rank,
        context_tokens=req.context_tokens,
        input_tokens=req.input_tokens,
        output_tokens=req.output_tokens,
        p95_input_tokens=req.p95_input_tokens,
        max_batched_tokens=req.max_batched_tokens,
        max_num_seqs=req.max_num_seqs,
        gpus=req.gpus,
        seq_len=req.seq_len,
        min_context_tokens=req.min_context_tokens,
        dataset_tokens=req.dataset_tokens,
    )
    _check_number("--lora-dropout", req.lora_dropout, 0, 0.99)
    if req.train and req.lora_targets != ("all-linear",):  # the schema's limits (fix172 item 4)
        from generator.calculator.target_limits import targets_problem

        if wrong := targets_problem("--lora-targets", req.lora_targets):
            raise UsageError(wrong)
    _check_tail(req)
    _check_number("--cached-prompt-share", req.cached_prompt_share, 0, 1, high_inclusive=False)
    _check_number("--epochs", req.epochs, 0, MAX_EPOCHS, low_inclusive=False)
    if req.host_cpu is not None and req.host_cpu not in catalog.cpus():
        raise InputError(f"unknown host CPU '{req.host_cpu}'; choose a cpus.json id such as {REFERENCE_CPU_ID}")
    if req.engine not in SERVING_ENGINES:
        raise InputError(f"unknown serving engine '{req.engine}'; choose one of {', '.join(SERVING_ENGINES)}")
    if req.mem_fraction_static is not None:
        _check_number("--mem-fraction-static", req.mem_fraction_static, 0, 1, low_inclusive=False, high_inclusive=False)
    if req.gpu_memory_utilization is not None:  # the constant's own range, named as the flag (review70 item 17)
        low, low_in, high, high_in = CONSTANT_BOUNDS["gpu_memory_utilization"]
        _check_number("--gpu-memory-utilization", req.gpu_memory_utilization, low, high, low_in, high_in)
    if req.fixed is not None:
        _check_fixed(req.fixed)
    # the command line refuses these first (exit 2); callers of estimate() get the same answer
    if req.train and req.fixed is not None:
        raise InputError("an existing machine (--ram-gib) is planned for inference; it cannot be combined with --train")
    if req.train == "full" and req.precision is not None:
        raise InputError("--precision cannot be combined with --train full: full training holds bf16 weights")
    if req.dataset_tokens is not None and not req.train:
        raise InputError("--dataset-tokens applies to training: add --train full, lora or qlora")
    if req.dataset_tokens is not None and req.gpu is None:
        raise InputError(DATASET_NEEDS_GPU)
    _check_share(req)
    if any(getattr(req, field) is not None for field in LORA_REQUEST_FIELDS.values()):  # lora_estimate loads only so
        from generator.calculator.lora_estimate import check_lora_options

        check_lora_options(req)


def _check_share(req: EstimateRequest) -> None:
    """``--mig`` / ``--share``: one of them, for an inference replica of one GPU given (the command line exits 2 first)."""
    if req.mig is None and req.share is None:
        if req.share_strategy != "time-slicing":
            raise InputError("--share-strategy needs --share: the replicas a GPU is shared between")
        return
    option = f"--mig {req.mig}" if req.mig is not None else f"--share {req.share}"
    if req.mig is not None and req.share is not None:
        raise InputError(
            "--mig and --share do not go together: a GPU is split into MIG instances, or shared between time-slicing / "
            "MPS replicas"
        )
    if req.share is not None:
        low, high = SHARE_REPLICAS
        if isinstance(req.share, bool) or not isinstance(req.share, int) or not low <= req.share <= high:
            raise UsageError(f"--share must be a whole number from {low} to {high} (replicas_per_gpu), got {req.share!r}")
        if req.share_strategy not in SHARE_STRATEGIES:
            raise InputError(f"--share-strategy must be one of {', '.join(SHARE_STRATEGIES)}, got {req.share_strategy!r}")
    elif req.share_strategy != "time-slicing":
        raise InputError("--share-strategy is for --share (time-slicing or MPS replicas), not --mig")
    if req.gpu is None:
        raise InputError(f"{option} needs --gpu: a share of which GPU")
    if req.train:
        raise InputError(f"{option} sizes a serving replica; a training job keeps whole GPUs (drop --train or {option})")
    if req.fixed is not None:
        raise InputError(f"{option} cannot be combined with --ram-gib: a machine of yours is planned with whole GPUs")
    for name, degree in (("--tp", req.tp), ("--pp", req.pp), ("--ep", req.ep)):
        if degree > 1:
            raise InputError(
                f"{option} sizes a replica in one pod's share of one GPU; {name} {degree} makes a replica of several "
                "GPUs, which keeps whole GPUs (a plan gives it a pool without sharing: gpu-sharing-whole-gpus)"
            )


def tp_group_note(gpu: GpuSpec, tp: int, pp: int = 1) -> str | None:
    """A warning where a serving TP group is wider than every catalog server (and scale-up domain) of ``gpu`` holds.

    newuser50 item 6: ``--tp 16`` of B200 was timed as one server's group (its all-reduces over a PCIe link, no network
    latency) and decoded faster than TP8, where a plan lays such a replica out over servers as pipeline stages. A GPU
    no catalog server holds is not checked (the estimate cannot tell its servers). ``pp``: the stages given, which the
    plan's layout multiplies (review34 item 13).
    """
    counts = [max(p.gpu_counts) for p in catalog.platforms().values() if gpu.id in p.gpu_ids and p.gpu_counts]
    most = max([gpu.nvlink_domain_gpus, *counts]) if counts else tp
    if tp <= most:
        return None
    servers = -(-tp // most)
    return (
        f"--tp {tp} spans {servers} servers of {gpu.id} (at most {most} GPUs a server or scale-up domain): its "
        "all-reduces are timed over a PCIe link with no network latency, so its decode is optimistic; a plan lays such a "
        f"replica out as --tp {most} --pp {servers * pp}, its stages over the servers' network"
    )


def _gpu_share(req: EstimateRequest, gpu: GpuSpec) -> tuple[GpuSharing, GpuShare]:
    """The share of ``gpu`` that ``--mig`` / ``--share`` ask for, as a plan sizes a replica in it (exit 1 where none)."""
    from generator.sizing.gpu_share import gpu_share
    from generator.workload.models import GpuSharing

    option = f"--mig {req.mig}" if req.mig is not None else f"--share {req.share}"
    if gpu.vendor != "nvidia":
        raise InputError(f"{option}: GPU '{gpu.id}' is not an NVIDIA GPU: MIG, time-slicing and MPS share NVIDIA GPUs")
    if req.mig is not None:
        from generator.workload.sharing import mig_problem

        if problem := mig_problem(gpu.id, req.mig, "choose a MIG-capable GPU, or --share"):
            raise InputError(f"{option}: {problem}")
        sharing = GpuSharing("mig", mig_profile=req.mig)
    else:
        sharing = GpuSharing(req.share_strategy, replicas_per_gpu=req.share)  # type: ignore[arg-type]
    share = gpu_share(gpu, sharing)
    if share is None:
        raise InputError(f"{option}: the catalog has no such share of GPU '{gpu.id}'")
    return sharing, share


def _share_result(sharing: GpuSharing, share: GpuShare, gpu_id: str, consts: Constants) -> dict[str, Any]:
    """The share an estimate is sized in, as JSON: what one pod gets, and vLLM's setting for the pod."""
    from generator.sizing.gpu_share import pod_memory_fraction

    return {
        "strategy": share.strategy,
        "mig_profile": sharing.mig_profile,
        "per_gpu": share.per_gpu,
        "memory_bytes": share.memory_bytes,
        "memory_basis": share.memory_basis,
        "sm_fraction": share.sm_fraction,
        "bandwidth_fraction": share.bandwidth_fraction,
        # time-sliced pods each see the whole GPU: vLLM's fraction of it is the share's fraction (the render's)
        "pod_gpu_memory_utilization": pod_memory_fraction(consts.gpu_memory_utilization, sharing),
        "text": share.text(gpu_id),
    }


def _sglang_pod_settings(sharing: GpuSharing, sglang_log: dict[str, Any]) -> dict[str, Any]:
    """An SGLang pod's settings in its share, as the render gives them (:func:`~generator.render.ansible.sglang_engine_vars`).

    The fraction sized with and, time-sliced or MPS-shared, the pool's tokens as ``--max-total-tokens``: SGLang's fraction
    is of the memory free when it starts, not of the GPU's (fuzz33 item 4: the estimate told the user to start vLLM).
    """
    from generator.sizing.gpu_share import sglang_pool_capped

    out: dict[str, Any] = {"pod_mem_fraction_static": sglang_log["mem_fraction_static"]}
    if sglang_pool_capped(sharing):
        out["pod_max_total_tokens"] = sglang_log["max_total_num_tokens"]
    return out


def _check_tail(req: EstimateRequest) -> None:
    """``--p95-input-tokens`` describes a mix with the prompts' mean (the workload's ``p95_input_tokens`` checks)."""
    tail, (isl, _) = req.p95_input_tokens, _sequence_tokens(req)
    if tail is None:
        return
    said = ", --input-tokens" if req.input_tokens is not None else ", the default --input-tokens"
    if why := tail_problem(tail, isl, "--p95-input-tokens", "the average prompt", said):
        raise InputError(why)


def training_precision(req: EstimateRequest, optimizer: str, half: str = "bf16") -> tuple[str, str]:
    """Weight format of the model a training job holds, and a phrase on its precision regime.

    Full training keeps bf16 weights (fp32 for ``adamw-torch-amp``, which autocasts them) whatever
    the checkpoint's format; LoRA keeps the frozen base in ``--precision`` (default bf16) and
    QLoRA in nf4 unless ``--precision`` says otherwise. Adapters are in the bytes the regime's optimizer (``optimizer``,
    as the job resolved it: its own, its recipe's or its framework's) keeps them
    (fp32, or 16-bit under torchtune's bf16 optimizers: newuser22 item 12). ``half`` is the 16-bit format the GPU
    computes in: fp16 on one without bf16, in the same bytes (newuser22 item 8).
    """
    # training and SGLang sizing are imported where used: an inference estimate's cold start does without them
    from generator.sizing.training import OPTIMIZERS, TrainingSetup

    opt = OPTIMIZERS.get(optimizer)
    if req.train in ("lora", "qlora"):
        base = TrainingSetup(method=req.train, base_precision=req.precision).base_precision_name
        base = half if base == "bf16" else base
        adapters = half if opt is not None and opt.adapter_bytes == 2 else "fp32"
        return base, f"frozen {base} base weights, {adapters} LoRA adapters"
    if opt is not None and opt.weight_bytes == 4:
        return "fp32", f"{half} autocast over fp32 weights (mixed precision)"
    if opt is not None and opt.state_bytes <= opt.moment_bytes:
        return half, f"pure {half} ({half} weights, no fp32 master copy)"
    return half, f"{half} mixed precision ({half} weights, fp32 master copy in the optimizer states)"


def recipe_accumulation_note(framework: str, recipe: str, steps: int) -> str:
    """Why a recipe's optimizer-in-backward default is not applied: the job accumulates (newuser25 item 3)."""
    return (
        f"{framework}'s {recipe} recipe steps the optimizer in backward (optimizer_in_bwd: True), which takes no gradient "
        f"accumulation: with {steps} accumulation steps it is sized without it, the whole model's gradients held "
        "(--accumulation 1 with a larger --micro-batch keeps it)"
    )


def training_method_label(method: str, base: str | None) -> str:
    """The job as the estimate names it: ``method``, but LoRA over a quantized base that is not NF4 says so.

    QLoRA is by definition adapters over a 4-bit NF4 base (arXiv:2305.14314); over int8, fp8 or GPTQ int4 the same
    job is LoRA over a quantized base, and is named so whatever ``--train`` said (newuser22 item 8).
    """
    if base is None or method == "full":
        return method
    fmt = weight_format(base)
    if fmt.is_quantized and not fmt.name.startswith("nf4"):
        return f"LoRA over an {fmt.name} base"  # int8, int4, fp8: each read with "an"
    return method


def estimate(req: EstimateRequest, *, advise: bool = True) -> dict[str, Any]:
    """Size one model for inference (default) or training (``train`` set); a JSON-able dict.

    ``advise``: a training job that does not fit its GPU is estimated again with each setting that shrinks it
    (:func:`_fitting_changes`), and a replica whose weights leave vLLM no KV memory at each larger TP
    (:func:`~generator.calculator.smallest_tp.smallest_starting_tp`); False for those estimates themselves.

    A training job on a GPU that gives no checkpointing level (``checkpointing_given`` False) is sized at the fastest
    level that fits, as a plan sizes it (:func:`~generator.calculator.lighter_checkpointing.planned_checkpointing`,
    fix194); full where no lighter level fits, or where no GPU (or ``--max-seq-len``) sets what fits.
    """
    if req.train and req.gpu and not req.checkpointing_given and not req.max_seq_len:
        from generator.calculator.lighter_checkpointing import planned_checkpointing

        planned, passed = planned_checkpointing(req, advise=advise)
        if planned is not None and planned["training"].get("checkpointing_chosen"):
            return planned  # a lighter level, with its reasons
        result = planned if planned is not None else _estimate(req, advise=advise)
        if passed:  # fix195: why the framework's own none was not taken, where the training line says it
            result["training"]["checkpointing_passed_over"] = passed
        return result
    return _estimate(req, advise=advise)


def _estimate(req: EstimateRequest, *, advise: bool) -> dict[str, Any]:
    """:func:`estimate` at ``req``'s checkpointing level."""
    check_request(req)
    try:
        model = resolve_model(req.model, from_hub=req.from_hub)
    except InputError as exc:
        if req.train or req.engine != "vllm":  # newuser62 item 6: vLLM's reason is said to vLLM's jobs alone
            raise without_vllm_reason(exc) from None
        raise
    arch = model.architecture
    if req.task != "generate":  # an embedding or reranking server (newuser65 item 11)
        return _pooling(req, model)
    if arch.encoder_only:
        # the estimate sizes a generating server (prefill, decode, a KV cache) or a language model's training (causal
        # attention, a vocabulary's logits); an encoder answers a request in one bidirectional pass
        raise InputError(
            f"MODEL: {model.name} is an encoder-only ({arch.model_type}) model with no LM head: it does not generate, "
            "and its training is not sized; estimate it with --task embed (or, as a sequence classifier, --task score) "
            "and --input-tokens, or plan it as such a deployment in a workload (specgen plan)"
        )
    check_layout(arch, req.tp, req.pp)
    # --ep above 1 on a dense model is refused (exit 1), for serving and training
    advice = f": instead of --ep {req.ep} use --tp / --pp, or --gpus for data-parallel training"
    check_expert_parallel_model(arch, req.ep, model.id, advice)
    consts = _constants(req)
    gpu = catalog.find_gpu(req.gpu) if req.gpu else None
    shared = _gpu_share(req, gpu) if gpu is not None and (req.mig is not None or req.share is not None) else None
    if gpu is not None and shared is not None:  # one pod's share of the GPU: its memory, SMs and bandwidth (the planner's)
        from generator.sizing.gpu_share import shared_gpu

        gpu = shared_gpu(gpu, shared[1])
    batches = _engine_batches(req, gpu, consts, arch.model_type) if gpu is not None and not req.train else [consts]
    consts = batches[0]
    # serving spreads the experts of one replica over EP GPUs (attention data-parallel beside TP); training
    # carves its expert-parallel groups out of the data-parallel ranks (TrainingSetup.expert_parallel)
    par = Parallelism(req.tp, req.pp) if req.train else Parallelism(req.tp, req.pp, req.ep)
    if req.fixed is not None and par == Parallelism() and req.fixed.gpu_count > 1:
        # a machine of yours splits the layers over its GPUs (llama.cpp -ts, vLLM --pipeline-parallel-size), as its
        # plan does: the header and the per-GPU figures are that layout's (newuser19 item 9 said TP 1 x PP 1 = 1 GPU)
        from generator.sizing.offload import layer_split_degree

        par = Parallelism(pp=layer_split_degree(req.fixed.gpu_count, arch))
    elif not req.train:  # the layers PP leaves over go where the engine puts them (newuser32 item 9)
        stages = req.pipeline_stages or engine_stages(req.engine)
        par = par._replace(stages=stages, vision_tp=req.engine == "vllm")  # vLLM splits the vision tower (newuser62 item 3)
    if req.precision and (fixed := fixed_format_problem(model, req.precision)):  # newuser29 item 1
        raise InputError(f"--precision {req.precision}: {fixed}")
    if req.allowed_precisions and arch.file_weights is not None and arch.file_weights.fixed_format:
        name = req.allowed_precisions[0]
        raise InputError(
            f"--allow-precision {name}: {fixed_format_problem(model, name) or f'{model.id} already holds {name} weights'}; "
            "a GGUF file is planned only at its own type: drop --allow-precision"
        )
    precision = served_precision(model, req.precision)
    fmt = model_weight_format(arch, precision)
    # a GGUF precision without --engine, --ram-gib or a share of the GPU: llama.cpp's file on the GPUs given
    llama_gpus = (
        gpu is not None and not req.train and req.fixed is None and shared is None and fmt.gguf is not None
        and not req.engine_chosen and req.ep == 1
    )  # fmt: skip
    for option, setting in (
        ("--gpu-memory-utilization", req.gpu_memory_utilization),
        ("--max-num-seqs", req.max_num_seqs),
        ("--max-batched-tokens", req.max_batched_tokens),
    ):
        if llama_gpus and setting is not None:  # vLLM's settings, which llama.cpp has none of (newuser86)
            raise UsageError(
                f"{option} is vLLM's setting: a GGUF precision ({fmt.name}) without --engine is sized as llama.cpp holds "
                "it; add --engine vllm for vLLM's GGUF loader"
            )
    # no GPU on the machine (--ram-gib without --gpu): llama.cpp on the CPU alone
    host_only = req.fixed is not None and not req.fixed.gpu
    llama = llama_gpus or req.fixed is not None
    # llama.cpp's KV cache is 16-bit (f16) whatever a GGUF file's weights are, an F32 file's too
    fixed_fp32 = precision == "fp32" and arch.file_weights is not None and arch.file_weights.fixed_format
    # a GPU without bf16 runs a service's bf16 weights in float16, or float32 where vLLM refuses the model in float16
    # (fix68 items 2 and 3), and caches (engine dtype auto) in the same float
    cast_from = None
    if gpu is not None and not req.train and not llama:
        served = served_float_format(arch.model_type, fmt.name, gpu.architecture, req.engine)
        if served != fmt.name:
            cast_from, precision = fmt.name, served
            fmt = model_weight_format(arch, served)
    # llama.cpp caches in f16 (its default -ctk f16 -ctv f16), labelled so (fix185 item 1: it read bf16)
    kv_name = req.kv_precision or ("fp16" if llama else auto_kv_cache_precision("bf16" if fixed_fp32 else precision))
    stated = None
    if req.kv_precision is None and not llama and not req.train:
        # fix196: vLLM caches in the FP8 a ModelOpt checkpoint states (kv_cache_quant_algo), its flag left unset
        stated = checkpoint_kv_cache_precision(arch.quantization, precision, req.engine)
        kv_name = stated or kv_name
    if req.kv_precision is None and kv_name == "bf16" and gpu is not None and not llama:
        kv_name = half_format(gpu.architecture)
    if kv_name == "int8" and not llama and not req.train:
        raise InputError(
            f"--kv-precision int8: {no_int8_kv_cache(ENGINE_NAMES.get(req.engine, req.engine))}; use fp8, or --ram-gib "
            "for llama.cpp's q8_0 cache on an existing machine"
        )
    kv_bits = kv_cache_bits(kv_name)
    # one request of the prompt and output given must fit the context sized (newuser15 item 2: 100,000-token prompts
    # were sized at the default 4,096 and said to fit)
    # (the speed figures' own tokens: either given, the other at its default, review 11 item 6)
    asked = sum(_sequence_tokens(req)) if not req.train and (req.input_tokens or req.output_tokens) else 0
    if req.p95_input_tokens is not None and not req.train:  # the p95 prompt's request must fit too
        asked = req.p95_input_tokens + _sequence_tokens(req)[1]
    sizes = "--p95-input-tokens" if req.p95_input_tokens is not None else "--input-tokens"  # what sized the context
    context = req.context_tokens if req.context_tokens is not None else _default_context(arch, asked)
    if asked > context:
        raise InputError(f"{sizes} + --output-tokens ({asked:,}) is more than --context {context:,}: one such "
                         "request does not fit the context sized; raise --context")  # fmt: skip
    if req.min_context_tokens and req.min_context_tokens > context:
        # as min_context_tokens above max_context_tokens in a workload
        given = "--context" if req.context_tokens is not None else "the default context (give --context)"
        raise InputError(f"--min-context {req.min_context_tokens:,} is more than {given} {context:,}")
    notes = list(arch.notes)
    if req.precision and (aliased := alias_note(req.precision)):  # llama-quantize's q4_k (fix151)
        notes.append(aliased)
    # beyond the model's served limit: a serving engine refuses to start, a training job extends its context (a note)
    served = served_limit_phrase(model.name, arch.max_model_len)
    if req.train:
        # a training job's sequence is --seq-len, else --context, else 2048 (see _training)
        sequence = next((n for n in (req.seq_len, req.context_tokens) if n is not None), DEFAULT_TRAINING_SEQUENCE)
        if arch.max_model_len and sequence > arch.max_model_len:
            notes.append(f"sequence length {sequence:,} is more than {served}; {CONTEXT_EXTENSION}")
        if req.seq_len is None and req.context_tokens is None:
            notes.append(f"no --seq-len given: sized for {sequence}-token sequences")
    elif arch.max_model_len and context > arch.max_model_len:
        # as a workload's max_context_tokens above it: vLLM and SGLang do not start, llama-server caps each slot at it
        given = "--context" if req.context_tokens is not None else f"{sizes} + --output-tokens"
        engine = req.fixed.offload_engine if req.fixed is not None else "llama.cpp" if llama else "vllm"
        raise InputError(f"{given} {context:,} is more than {served}; {longer_context_wording(engine if llama else 'vllm')}")
    elif (
        llama
        and (rope := arch.llama_cpp_rope)
        and context > rope.context_length
        and (req.fixed.offload_engine if req.fixed is not None else "llama.cpp") == "llama.cpp"
    ):
        # fix157 item 3: vLLM's limit is the rope_scaling's stretch; llama-server's is the GGUF's context_length unless
        # the stretch is given at launch (ik_llama.cpp caps no slot)
        notes.append(llama_cpp_rope_note(rope, context))
    if not req.train and req.context_tokens is None:
        notes.append(f"no --context given: sized for {context} tokens")
    if not req.train and (pooled := pooling_model_signs(arch, model.name, model.id)):
        # newuser62 item 7: Qwen3-Embedding-8B was given chat figures (its 0.62B head, sampler rows, decode) silently
        notes.append(
            f"warning: {model.name} looks like an embedding or reranking model ({pooled}): this estimate sizes it as a "
            "generating model (LM head, the sampler's logits rows, decode); a pooling server (vLLM --runner pooling) "
            "loads no LM head and never decodes: estimate it with --task embed or --task score (or plan it with task: embed "
            "or task: score) for its own sizing"
        )
    if not req.train and arch.vision is not None:  # newuser62 item 1: a VLM was sized as text alone without a word
        from generator.sizing.vision import image_input_text

        notes.append(image_input_text(arch.vision, model.name, "--input-tokens and --context"))

    if gpu is not None and gpu.bridged and 1 < par.tp <= gpu.nvlink_domain_gpus:
        # the estimate sizes a card without a server: it keeps the card's own link, and says so
        notes.append(
            f"TP{par.tp} is sized over the {gpu.name}'s NVLink bridge, assumed fitted between the cards; "
            f"a server without one joins them over PCIe Gen{gpu.pcie_gen}"
        )
    elif gpu is not None and gpu.bridged and req.train and 1 < (req.gpus or 1) <= gpu.nvlink_domain_gpus:
        # newuser68 item 9: a training job's ranks on two GeForce cards were timed over a bridge most pairs lack, unsaid
        notes.append(
            f"the {req.gpus} GPUs' gradient and ZeRO traffic is sized over the {gpu.name}'s NVLink bridge, assumed "
            f"fitted between the cards; without one it crosses PCIe Gen{gpu.pcie_gen} (plan the machine as "
            "hardware.inventory with custom.gpu_bridge: false to time that)"
        )
    # any engine, a machine of yours as well, and as a LoRA base (fuzz17 item 11: Transformers' MXFP4 is gpt-oss's)
    if dense := dense_format_problem(fmt, arch):
        raise InputError(f"{model.id} in {fmt.name} will not load: {dense}")
    for name in req.allowed_precisions:
        if dense := dense_format_problem(weight_format(name), arch):
            raise InputError(f"--allow-precision {name}: {model.id} in {name} will not load: {dense}")
        if gpu is not None and (unserved := format_problems(weight_format(name), gpu.architecture)):  # review 17 M2
            raise InputError(f"--allow-precision {name}: {model.id} in {name} on {gpu.name} will not load: {unserved[0]}")
        by_engine = not req.train and not llama  # vLLM or SGLang, whose GGUF loaders lack MXFP4 (review26 item 3)
        if by_engine and (unloaded := engine_gguf_problem(weight_format(name), arch, "--ram-gib")):
            raise InputError(f"--allow-precision {name}: {model.id} in {name} will not load under vLLM or SGLang: {unloaded}")
    if not req.train and not llama and (unloaded := engine_gguf_problem(fmt, arch, "--ram-gib")):
        raise InputError(f"{model.id} in {fmt.name} will not load under vLLM or SGLang: {unloaded}")
    if not req.train and gpu is not None:  # on a machine of yours as well: no engine there has the kernel either
        unserved = format_problems(fmt, gpu.architecture)
        if unserved:
            # the engine has no kernel for this format on this GPU: an invalid combination, exit 1
            raise InputError(f"{model.id} in {fmt.name} on {gpu.name} will not load: {unserved[0]}")
    if not req.train and not llama:
        problems = loadability_problems(arch, fmt, par)
        if problems:
            # the layout options do not split this model (heads, experts, quantization blocks): an invalid value, exit 1
            raise InputError(f"{model.id} in {fmt.name} at TP {par.tp} / EP {par.ep} will not load: {'; '.join(problems)}")
        if (unsplit := default_group_problem(arch, fmt, par)) is not None:
            # a 16-bit model asked in a group-quantized format: accepted, but the checkpoints published would not load
            notes.append(f"warning: {unsplit}")
        if gpu is not None and (wide := tp_group_note(gpu, par.tp, par.pp)) is not None:
            notes.append(f"warning: {wide}")
        float16 = float16_problem(arch.model_type, fmt, gpu, req.engine) if gpu is not None else None
        if float16 is not None:
            notes.append(f"warning: {float16}")  # what a plan rules out (review35 item 3)
        elif cast_from is None and (cast := float16_cast_note(arch.torch_dtype, fmt.name)) is not None:
            notes.append(cast)  # a bf16 checkpoint asked in fp16 (or f16), or the other way (fix153)
        if gpu is not None and cast_from is not None:
            notes.append(_cast_note(gpu, arch.model_type, cast_from, fmt.name, req.engine))
        if (publisher := catalog.publisher_fp8_note(model.id, fmt.name)) is not None:
            notes.append(publisher)
        if (layout := nvfp4_layout_note(model.id, arch, fmt.name)) is not None:
            notes.append(layout[1])  # fix196: which modules nvfp4 keeps in BF16
    if stated is not None:
        notes.append(checkpoint_kv_note(ENGINE_NAMES.get(req.engine, req.engine)))
    if req.fixed is not None and (gguf := llama_cpp_format(fmt)) is not fmt:
        # a machine of yours is planned for llama.cpp, which runs the checkpoint's GGUF (newuser38 item 5: gpt-oss-120b
        # was sized at its 60.77 GiB checkpoint where llama.cpp's file holds 59.02)
        from generator.calculator.offload_report import llama_cpp_file_note

        notes.append(llama_cpp_file_note(arch, fmt, gguf))
        fmt = gguf
    nvlink = gpu is not None and nvlink_replica(gpu.interconnect_kind, gpu.nvlink_domain_gpus, par)
    memory_bytes = gpu.memory_bytes if gpu else None
    # as the engine holds the weights on that GPU (Marlin's MXFP4 padding); a machine of yours runs llama.cpp's file
    held = loaded_format(fmt, gpu.architecture, req.engine, arch.quantization) if gpu and not llama and not req.train else fmt
    lora = None  # the adapters served, as the planner's service of them (a workload's inference.lora)
    without_rates: dict[str, Any] | None = None  # the replica's throughput without them, where throughput is asked
    if req.lora_adapters is not None and not req.train:
        from generator.calculator import lora_estimate

        # a GGUF precision without --engine is llama.cpp's file, on the GPUs or not: its adapters are llama.cpp's, not
        # vLLM's slots (fix172 item 5: without --gpu, or with --share, they were sized as vLLM's over the GGUF)
        if llama or (fmt.gguf is not None and not req.engine_chosen):
            raise InputError(f"--lora-adapters with {fmt.name} without --engine: {lora_estimate.LLAMA_CPP_LORA}")
        lora = lora_estimate.lora_serving_spec(req, arch, context, kv_name)

    def sized(with_consts: Constants) -> tuple[InferenceMemory, InferenceMemory]:
        """The replica's memory at ``with_consts``: without the adapters, and with their slots before the KV pool."""
        plain = size_inference(arch, held, kv_bits, context, req.batch, par, with_consts, memory_bytes, nvlink=nvlink)
        if lora is None:
            return plain, plain
        from generator.planner.lora_replica import with_lora_slots

        # vLLM's shrink buffer at a forward pass's tokens (--max-batched-tokens or the engine's default)
        chunk = with_consts.prefill_chunk_tokens
        return plain, with_lora_slots(arch, lora, par, plain, with_consts, memory_bytes or 0, chunk)

    without, inference = sized(consts)
    if (padding := held.expert_padding) and held != fmt and gpu is not None:
        # newuser55 item 5: the weights a GPU holds were more than the model's, unexplained
        checkpoint = size_inference(arch, fmt, kv_bits, context, req.batch, par, consts, None, nvlink=nvlink).weights
        if (extra := inference.weights.per_gpu_bytes - checkpoint.per_gpu_bytes) > 0:
            notes.append(
                f"vLLM runs these {fmt.name.upper()} experts through Marlin on {gpu.architecture} GPUs, whose kernels pad "
                f"each rank's expert matrices (widths to multiples of {padding[0]}, the hidden size to {padding[1]}): "
                f"{extra / GIB:.2f} GiB a GPU more than the checkpoint's weights"
            )

    def starts(sized: InferenceMemory) -> bool:
        """Whether one whole-context request fits the pool and passes vLLM's start-up check.

        The check charges a sliding layer a forward pass's tokens beyond its window (newuser55 item 2).
        """
        cap = sized.capacity
        if cap is None or cap.max_concurrency < 1:
            return cap is None
        chunk, available = consts.prefill_chunk_tokens, cap.kv_available_bytes
        return req.engine != "vllm" or not start_shortfall_bytes(
            arch, kv_bits, context, par, consts.kv_block_tokens, chunk, available
        )

    for fewer in batches[1:]:  # as the planner does: vLLM's smaller limit where its default leaves no room for one request
        if starts(inference):
            break
        plain, retry = sized(fewer)
        if starts(retry):
            small, default = fewer.max_num_seqs, consts.max_num_seqs
            notes.append(
                f"sized at --max-num-seqs {small}: at vLLM's default of {default} on this GPU its profiling run samples "
                f"{default} sequences' activations and logits and leaves too little KV cache for one {context:,}-token "
                f"request; start vLLM with --max-num-seqs {small}"
            )
            consts, inference, without = fewer, retry, plain
    # newuser44 item 7: a batch of the average prompt and output given is sized as a plan sizes its batch, each sequence
    # at --input-tokens + --output-tokens in the KV pool (the plan's batch 101 of 1,850-token sequences was sized at
    # 101 x 16,384 tokens and said not to fit); one whole-context sequence must fit beside it, as the plan asks too
    whole_kv = inference.kv
    average = sum(_sequence_tokens(req)) if _average_batch(req) else None
    sized_at = "context" if average is None else "average"
    if average is not None:
        kv, floored = _batch_kv_cache(arch, kv_bits, context, average, req.batch, par)
        sized_at = "one_whole_context" if floored else sized_at
        inference = inference._replace(kv=kv, per_gpu=inference.per_gpu._replace(kv_cache=kv.per_gpu_bytes))
    result: dict[str, Any] = {
        "model": {
            "id": model.id,
            "name": model.name,
            "source": model.source,
            "model_type": arch.model_type,
            "layers": arch.num_layers,
            "max_position_embeddings": arch.max_position_embeddings,
            "max_model_len": arch.max_model_len,
        },
        "weights_from": _weights_from(arch, fmt),
        "params": {
            "total": arch.params_total,
            "active": arch.params_active,
            # the text model: every parameter less the vision tower, what a GGUF holds (its projector is a file of its
            # own) and llama-bench's ``params`` counts (every tensor's elements, each routed expert's included)
            "text": arch.params_total - arch.vision_params,
            "embedding": arch.embedding_params,
            "lm_head": arch.lm_head_params,
        },
        "precision": {"weights": fmt.name, "kv_cache": kv_name, **({"cast_from": cast_from} if cast_from else {})},
        "parallelism": {
            "tp": par.tp,
            "pp": par.pp,
            "ep": req.ep,
            "attention_dp": par.attention_dp,
            "gpus_per_replica": par.gpus,
        },
        "weights": {"bytes": inference.weights.total_bytes, "bytes_per_gpu": inference.weights.per_gpu_bytes},
        "kv_cache": {
            "bytes_per_token": inference.kv.bytes_per_token,
            # with sliding-window layers: the bytes a token takes in the layers that keep every token, and the most a
            # sequence holds in the sliding ones (their window); bytes_per_token and 0 without them
            **dict(zip(("bytes_per_token_growing", "window_bytes_per_sequence"), windowed_split(arch, kv_bits), strict=True)),
            # one token of one sequence on the fullest GPU (TP splits the KV heads, PP the layers)
            "bytes_per_token_per_gpu": token_bytes_per_gpu(arch, kv_bits, par),
            # linear-attention layers' recurrent state, whole model, in every sequence whatever its length
            "state_bytes_per_sequence": inference.kv.state_bytes_per_sequence,
            "bytes": inference.kv.total_bytes,
            "bytes_per_gpu": inference.kv.per_gpu_bytes,
            "context_tokens": context,
            "sequences": req.batch,
            # each sequence's tokens the bytes are sized at: the context, or the average prompt and output of a batch
            "tokens_per_sequence": average or context,
            # what the batch is sized at: "average" (as a plan sizes its batch) or "context" (review29 item 10: the
            # two may be the same number of tokens), or "one_whole_context" where the batch at the average holds less
            # than one sequence of the whole context (the bytes are that sequence's)
            "sized_at": sized_at,
            # the batch at the whole context each (the bytes above where the batch is sized so)
            "whole_context_bytes": whole_kv.total_bytes,
            # where the batch queues past the pool (capacity's whole_context_batch or average_batch "queued"), the bytes
            # above and the memory table are the sequences_held it runs at a time, and asked_bytes / asked_bytes_per_gpu
            # the batch's as asked (review76 item 12)
        },
        "notes": notes,
    }
    if par.ep > 1 and req.engine == "vllm":
        # vLLM's expert parallelism: EP = TP x DP, attention tensor-parallel within each data-parallel rank
        pipeline = f" --pipeline-parallel-size {par.pp}" if par.pp > 1 else ""
        result["parallelism"]["vllm_flags"] = (
            f"--tensor-parallel-size {par.tp} --data-parallel-size {par.attention_dp}{pipeline} --enable-expert-parallel"
        )
    refused: MachineRefusedError | None = None
    if req.fixed is not None and host_only:
        from generator.calculator.llama_cpp_estimate import host_only as on_host

        slots = _llama_cpp_slots(req)
        tokens = _sequence_tokens(req)
        result.update(on_host(arch, fmt, kv_name, kv_bits, context, req.fixed, slots, tokens, consts, _model_args(model)))
        result["parallelism"]["gpus_per_replica"] = 0
    elif llama_gpus and gpu is not None:
        from generator.calculator.llama_cpp_estimate import on_gpus

        slots = _llama_cpp_slots(req)
        tokens = _sequence_tokens(req)
        from generator.calculator.llama_cpp_vendor import gpu_runtime, prompt_unchecked_note

        result.update(on_gpus(arch, fmt, kv_name, kv_bits, context, gpu.id, par.gpus, slots, tokens, consts, _model_args(model)))
        notes.append(
            f"{fmt.name} is a GGUF precision: sized as llama.cpp holds its file (its KV cache, compute buffer and "
            f"{gpu_runtime(gpu.vendor)} context); --engine vllm sizes vLLM's GGUF loader instead, and --ram-gib plans "
            "offload to system RAM"
        )
        if "ttft_s" in result["llama_cpp"] and (unchecked := prompt_unchecked_note(gpu.vendor)):
            notes.append(unchecked)  # newuser99 item 1, acc171: what of an AMD GPU's llama.cpp TTFT is checked
        if par.gpus > 1:  # llama.cpp's default split is by layer (-sm layer), each GPU a run of whole layers
            notes.append(
                f"llama.cpp splits the layers over the {par.gpus} GPUs (-ts, its default -sm layer), not tensor- or "
                "pipeline-parallel: the table is the fullest GPU's, and one stream runs the GPUs in turn"
            )
    elif req.fixed is not None:
        try:
            result.update(_fixed_machine(req, model, fmt, kv_name, context, consts))
        except MachineRefusedError as exc:
            # no placement: the per-GPU table is the model held whole on the machine's GPUs, nothing offloaded
            refused = exc
            result.update(exc.document)
            result["memory"] = {"per_gpu": inference.per_gpu.as_dict(), "placed": False}
        result["precision"]["weights"] = result["offload"]["precision"]
        gpu_id = result.get("machine", {}).get("gpu") if "ttft_s" in result.get("throughput", {}) else None
        if gpu_id:  # newuser99 item 1, acc171: what of an AMD GPU's llama.cpp TTFT is checked
            from generator.calculator.llama_cpp_vendor import prompt_unchecked_note

            if unchecked := prompt_unchecked_note(catalog.find_gpu(gpu_id).vendor):
                notes.append(unchecked)
    elif req.train:
        _training_result(result, req, model, par, consts, gpu, advise=advise, served=served)
    else:
        result["memory"] = {"per_gpu": inference.per_gpu.as_dict(), "overhead_parts": inference.overhead_parts}
        if gpu is not None:  # fix183 item 4: no vLLM / SGLang measurement on RDNA 3, as llama.cpp's path says of its own
            from generator.calculator.rdna3_engines import rdna3_engine_note

            if rdna3 := rdna3_engine_note(req.engine, gpu.architecture):
                notes.append(rdna3)
        if gpu and inference.capacity is not None:
            cap = inference.capacity
            engine_log: dict[str, Any]
            if req.engine == "sglang":
                from generator.sizing.sglang_kv import sglang_inference_capacity

                sglang = sglang_inference_capacity(
                    arch, kv_bits, context, par, gpu.memory_bytes, inference, req.mem_fraction_static
                )
                inference = inference._replace(capacity=sglang.capacity)
                cap = sglang.capacity
                if lora is not None:  # the pool without the adapters, beside (lora.without_adapters)
                    alone = sglang_inference_capacity(
                        arch, kv_bits, context, par, gpu.memory_bytes, without, req.mem_fraction_static
                    )
                    without = without._replace(capacity=alone.capacity)
                fraction = sglang.mem_fraction_static
                basis = f"SGLang's --mem-fraction-static {fraction:g}, for the weights and the KV pool"
                engine_log = {
                    "sglang_log": {
                        "mem_fraction_static": fraction,
                        "max_total_num_tokens": sglang.pool.tokens,
                        "cell_bytes_per_token": sglang.pool.cell_bytes,
                    },
                    "engine": "sglang",
                }
            else:
                fraction = consts.gpu_memory_utilization
                basis = f"vLLM's --gpu-memory-utilization {fraction:g}"
                if consts.kv_budget_of_free_memory:
                    # the budget the capacity used: TensorRT-LLM's fraction of what the held bytes leave free (fix157
                    # item 2: the text named vLLM's 0.9 of the whole GPU under --set kv_budget_of_free_memory=1)
                    basis = (
                        f"TensorRT-LLM's free_gpu_memory_fraction {consts.gpu_memory_utilization:g} of the memory the "
                        "weights, activations and overhead leave free (kv_budget_of_free_memory 1)"
                    )
                engine_log = {"vllm_log": _vllm_log(arch, kv_bits, cap.kv_available_bytes, context, par, consts)}
            fit = _fit(gpu.id, gpu.memory_bytes, inference.per_gpu.total, fraction, basis)
            if consts.kv_budget_of_free_memory and req.engine != "sglang":  # the capacity's budget, as its basis says
                fit["usable_bytes"], fit["fits"] = cap.budget_bytes, inference.per_gpu.total <= cap.budget_bytes
            if not engine_log.get("vllm_log", {"starts": True})["starts"]:
                # vLLM's start-up check refuses it: no fit, as a plan takes it (newuser55 item 2: "fits" and exit 0 beside
                # "vLLM refuses to start")
                fit["fits"] = False
            else:
                _held_batch_fit(fit, cap, req.engine, req.batch, context, average)
            result["capacity"] = {
                **fit,
                "budget_bytes": cap.budget_bytes,
                # one GPU's KV bytes; the replica's tokens and sequences, every attention-DP rank together ...
                "kv_cache_bytes": cap.kv_available_bytes,
                "kv_cache_tokens": cap.kv_cache_tokens,
                "max_concurrency": round(cap.max_concurrency, 2),
                # ... and one attention-DP rank's (its TP group's pool: what vLLM logs as 'GPU KV cache size')
                "attention_dp_ranks": cap.attention_dp,
                "kv_cache_tokens_per_dp_rank": cap.rank_kv_cache_tokens,
                "max_concurrency_per_dp_rank": round(cap.rank_max_concurrency, 2),
                # a sliding-window layer holds only its window of a longer request: the tokens are then the context
                # the pool serves (concurrency x context), more than its token slots (newuser13 item 6); SGLang's pool
                # is sized here with every layer full (newuser21 item 11)
                "kv_cache_tokens_windowed": req.engine != "sglang"
                and any(layer.window_tokens is not None and layer.window_tokens < context for layer in arch.layers),
                **engine_log,
            }
            log = engine_log.get("vllm_log")
            if advise and log and not log["starts"] and cap.kv_available_bytes <= 0 and shared is None:
                # the weights leave no KV memory: the smallest --tp that starts it, the remedy's "add GPUs" (newuser97 item 5)
                from generator.calculator.smallest_tp import smallest_starting_tp

                log["smallest_starting_tp"] = smallest_starting_tp(req, arch, gpu)
            elif advise and log and not log["starts"] and shared is None:  # KV memory short: an FP8 cache (fix183 item 3)
                from generator.calculator.fp8_kv_start import fp8_kv_start

                if (fp8 := fp8_kv_start(req, kv_name, gpu)) is not None:
                    log["fp8_kv_starts"] = fp8
            if advise and log and not log["starts"] and shared is None and req.engine == "vllm":
                # a larger --gpu-memory-utilization (newuser107), whether the KV memory is short or the weights leave
                # none at the fraction asked (review98 bug 2: int4 72B on 2 x 24 GB starts at 0.95)
                from generator.calculator.utilization_start import utilization_start

                if (more := utilization_start(req, consts.gpu_memory_utilization)) is not None:
                    log["utilization_starts"] = more
            queue = fit.get("whole_context_batch") or fit.get("average_batch") or {}
            if queue.get("queued"):
                _size_at_held(result, arch, kv_bits, context, average, queue["sequences_held"], par)
            if (
                req.input_tokens is not None
                or req.output_tokens is not None
                or req.p95_input_tokens is not None
                or req.cached_prompt_share
            ):
                result["throughput"] = _throughput(req, arch, gpu, held, kv_bits, par, inference, consts, lora)
                if lora is not None:  # the same replica without the adapters, beside (lora.without_adapters)
                    without_rates = _throughput(req, arch, gpu, held, kv_bits, par, without, consts)
                rated = result["throughput"]
                if result["capacity"].get("average_batch", {}).get("queued") and rated.get("requests_per_s"):
                    # the batch's requests at the rate the running ones finish (the saturated batch's)
                    rated["drain_s"] = round(req.batch / rated["requests_per_s"], 1)
                tokens = (rated["input_tokens"], rated["output_tokens"])
                batch = rated["saturation_batch"]  # where max_output_tokens_per_s runs (review25 C)
                # review 14 item 6: the plan's only
                if gap := matching_gap(req.engine, gpu, arch, held.name, tokens, batch, par.tp, attention_dp=par.attention_dp):
                    rate = rated["max_output_tokens_per_s"]
                    said = gap_text(gap, req.engine, gpu.id, rate, "output tokens/s", arch=arch, precision=held.name)
                    # which figure a plan of this replica counts on, and why, as the plan's warning ends (newuser73 item 6)
                    counted = counted_text(gap, rate, " output tokens/s a replica", "a plan")
                    shown = "the figures above are the model's" + (
                        f", {gap.margin:.2f}x what a plan counts on" if gap.margin > 1 else ""
                    )
                    notes.append(f"{said}; {counted}; {shown}")
    if lora is not None:
        from generator.calculator.lora_estimate import lora_result, lora_slot_notes

        result["lora"] = lora_result(lora, arch, par, inference, without, without_rates)
        notes += lora_slot_notes(result["lora"], req.batch)  # the plan's lora-slots-short (fix191)
    if shared is not None:
        sharing, share = shared
        result["gpu_share"] = _share_result(sharing, share, gpu.id if gpu is not None else str(req.gpu), consts)
        if (sglang_log := result.get("capacity", {}).get("sglang_log")) is not None:
            result["gpu_share"].update(_sglang_pod_settings(sharing, sglang_log))
        if share.strategy != "mig":
            isolation = ", and no memory is isolated between the pods" if share.strategy == "time-slicing" else ""
            notes.append(
                f"{share.strategy} x{share.per_gpu}: the share's rates assume all {share.per_gpu} replicas on the GPU at "
                f"full load at once (1/{share.per_gpu} of its compute and memory bandwidth each, as a plan takes them); a "
                f"lightly loaded neighbour leaves more{isolation}"
            )
    result["constants"] = {
        "gpu_memory_utilization": consts.gpu_memory_utilization,
        "prefill_chunk_tokens": consts.prefill_chunk_tokens,
    }
    if refused is not None:
        refused.document = result
        raise refused
    return result


def _held_batch_fit(fit: dict[str, Any], cap: Capacity, engine: str, batch: int, context: int, average: int | None) -> None:
    """Whether ``batch`` sequences fit the KV pool ``cap`` (``fit["fits"]``, in place), and how many queue past it.

    ``average``: the tokens of a sequence at the average prompt and output, None where the batch is sized at ``context``
    each. Each attention-DP rank's pool holds whole sequences (:meth:`Capacity.sequences_held`, SGLang's one-token pages
    as vLLM's blocks).
    """
    if average is None and (engine == "sglang" or batch > 1):
        # SGLang's fraction holds the weights and the KV pool, activations and graphs live beside it: it runs
        # where the pool holds one request, as a plan takes it (newuser15 item 3); each attention-DP rank's pool
        # holds whole sequences (its pages are one token). --batch's whole-context sequences past what the pool
        # holds run that many at a time and the rest queue, as both schedulers admit a request by the tokens it
        # holds (newuser71 item 8: 8 x 131,072 tokens "fit" a pool of 2.43; newuser73 item 8: vLLM's 64 of them
        # on a pool of 22.5 read "does NOT fit", exit 3, where vLLM starts and runs 22 at a time)
        whole_held = cap.sequences_held(context)
        fit["fits"] = whole_held >= 1
        if batch > 1:
            fit["whole_context_batch"] = {"sequences_held": whole_held, "sequences_asked": batch}
            if fit["fits"] and batch > whole_held:
                fit["whole_context_batch"]["queued"] = batch - whole_held
    elif average is not None:
        # one whole-context sequence fits; a batch of average ones past what the pool's tokens hold runs that
        # many at a time and the rest queue, as vLLM admits them (newuser65 item 12: an offline queue of 100,000
        # prompts read "does NOT fit", exit 3, where LLM.generate runs them all); SGLang's scheduler admits by
        # the tokens a request holds too, each attention-DP rank from its own pool of one-token pages (review71
        # item 2: 100 requests of 1,200 tokens, 29% of its pool, read "does NOT fit", exit 3)
        # one whole-context sequence in a rank's pool (SGLang), in the replica's (vLLM)
        one_whole = (cap.rank_max_concurrency if engine == "sglang" else cap.max_concurrency) >= 1
        held_at_average = cap.sequences_held(average)
        fit["fits"] = one_whole and held_at_average >= 1
        fit["average_batch"] = {"tokens_per_sequence": average, "sequences_held": held_at_average}
        if fit["fits"] and batch > held_at_average:
            fit["average_batch"]["queued"] = batch - held_at_average


def _training_result(
    result: dict[str, Any],
    req: EstimateRequest,
    model: ResolvedModel,
    par: Parallelism,
    consts: Constants,
    gpu: GpuSpec | None,
    *,
    advise: bool,
    served: str,
) -> None:
    """A training job's figures in ``result`` (in place): its memory, method, host RAM, fit and speed on ``gpu``.

    ``served``: the model's served limit in words (:func:`served_limit_phrase`); ``advise`` as :func:`estimate`'s.
    """
    arch = model.architecture
    notes: list[str] = result["notes"]
    setup, mem = _training(req, model, par, consts, gpu)
    breakdown = mem.per_gpu
    del result["kv_cache"]  # a training job holds no KV cache (its activations are in memory.per_gpu)
    result["precision"].pop("kv_cache", None)
    half_note = fp16_note(gpu.id, gpu.architecture) if gpu is not None else None
    trained_name, regime = training_precision(req, setup.optimizer, "fp16" if half_note else "bf16")
    if half_note:
        regime += f"; {half_note}"
    if gpu is not None and (no_flash := flash_attention_note(gpu.id, gpu.architecture, setup.flash_attention)):
        notes.append(no_flash)
    # a GPU's model-parallel shard before ZeRO: each layer by TP, the routed experts by TP x EP as well
    trained = size_weights(arch, weight_format(trained_name), training_weight_layout(par, req.ep))
    result["precision"]["weights"] = trained_name
    result["precision"]["training"] = regime
    result["weights"] = {"bytes": trained.total_bytes, "bytes_per_gpu": trained.per_gpu_bytes}
    result["parallelism"]["data_parallel"] = setup.data_parallel
    result["params"]["trainable"] = mem.trainable_params
    from generator.sizing.training import activations_beyond_gradients

    result["training"] = {
        "method": setup.method,
        "method_label": training_method_label(setup.method, setup.base_precision_name),
        "optimizer": setup.optimizer,
        "zero_stage": setup.zero_stage,
        "data_parallel": setup.data_parallel,
        "expert_parallel": setup.expert_parallel,
        "micro_batch_size": setup.micro_batch_size,
        "accumulation_steps": setup.accumulation_steps,
        # the activations row counts what they hold beyond the gradients (review35 item 9: said under Megatron too)
        "activations_beyond_gradients": activations_beyond_gradients(setup, setup.data_parallel),
        "offload_optimizer": setup.offloads_optimizer(),
        "paged_optimizer": setup.paged_optimizer,
        "offload_params": setup.offload_params,
        "sequence_length": setup.sequence_length,
        "checkpointing": setup.checkpointing,
        # as the plan launches it: FlashAttention-2 does not run below Ampere (fix68 item 4)
        "flash_attention": (
            launches_flash_attention(gpu.architecture, setup.flash_attention) if gpu is not None else setup.flash_attention
        ),
        "lora_rank": setup.lora_rank if setup.method != "full" else None,
        "lora_targets": ", ".join(setup.lora_targets) if setup.method != "full" else None,
        "lora_dropout": setup.lora_dropout if setup.method != "full" else None,
        "host_ram_bytes_per_gpu": mem.host_ram_bytes_per_gpu,
        "activation_bytes_per_token": mem.activation_bytes_per_token,
    }
    world = setup.data_parallel * par.gpus
    result["training"].update(_host_ram(arch, setup, mem.host_ram_bytes_per_gpu, world, gpu, consts))
    loss, activation_offload, optimizer_in_backward = setup.techniques()
    from generator.sizing.frameworks import job_recipe

    recipe = job_recipe(setup.framework, setup.method, setup.data_parallel * par.gpus, setup.zero_stage, setup.offload_params)
    if recipe and recipe.optimizer_in_backward and req.optimizer_in_backward is None and setup.accumulation_steps > 1:
        notes.append(recipe_accumulation_note(setup.framework or "", recipe.name, setup.accumulation_steps))
    if gpu is not None and (stack := stack_note(gpu.id, gpu.vendor, setup.method, setup.framework)):
        notes.append(stack)
    result["training"].update(
        framework=setup.framework,
        recipe=recipe.name if recipe else None,
        loss=loss,
        activation_offload=activation_offload,
        optimizer_in_backward=optimizer_in_backward,
        fused_kernels=setup.kernels_fused(),
        fp32_unquantized=(upcast := setup.upcasts_unquantized()),
    )
    if setup.compute_precision != "bf16":  # FP8 training: said only where asked, so a bf16 answer is unchanged
        # imported here: training_mfu loads dataclasses, which a serving estimate's cold start does without
        from generator.sizing.training_mfu import fp8_casts_text

        result["training"]["compute_precision"] = setup.compute_precision
        result["precision"]["training"] += (
            "; FP8 training: the linear layers' GEMMs at the GPU's dense FP8 rate, the LM head's at bf16's"
            f"{fp8_casts_text(setup.framework)}; attention, norms, the optimizer and the gradient reduction as in bf16"
        )
    if upcast:
        result["precision"]["training"] += (
            "; embeddings, LM head and norms cast to fp32 (PEFT prepare_model_for_kbit_training, as "
            f"{setup.framework} leaves them), a bf16 cast of the LM head saved for backward, an fp32 residual stream"
        )
    result["memory"] = {
        "per_gpu": breakdown.as_dict(),
        "weight_parts": dict(mem.weight_parts),
        "allocator_reserve": mem.allocator_reserve_bytes,
        "activation_peak": mem.activation_peak_bytes,
    }
    if gpu:
        margin = consts.safety_margin_fraction
        result["capacity"] = _fit(gpu.id, gpu.memory_bytes, breakdown.total, 1 - margin, f"a {margin:.0%} margin kept free")
        if not result["capacity"]["fits"] and setup.micro_batch_size > 1:
            usable = result["capacity"]["usable_bytes"]
            notes.append(_smaller_micro_batch(arch, setup, par, consts, usable, nvlink=training_nvlink(gpu, setup, par)))
        if not result["capacity"]["fits"] and advise and not req.max_seq_len:
            changes = _fitting_changes(req, setup, par)
            result["capacity"]["fits_with"] = changes
            notes.append(_fitting_changes_note(changes) + _by_hand(setup, setup.data_parallel * par.gpus, changes))
        if req.max_seq_len:
            usable = result["capacity"]["usable_bytes"]
            nvlink = training_nvlink(gpu, setup, par)
            longest = longest_training_sequence(arch, setup, par, consts, usable, nvlink=nvlink)
            result["training"]["max_sequence_length"] = longest
            # the margin is a planning choice that costs tokens (newuser22 item 12): what all of the memory holds
            whole = longest_training_sequence(arch, setup, par, consts, gpu.memory_bytes, nvlink=nvlink)
            result["training"]["max_sequence_length_without_margin"] = whole
            if whole >= MAX_SEQ_LEN:  # the search stops there: memory may hold more (fix191)
                result["training"]["max_sequence_length_capped"] = True
                notes.append(
                    f"--max-seq-len stops at {MAX_SEQ_LEN:,} tokens, the longest --seq-len takes (a workload's "
                    f"training.sequence_length at most): the GPU's memory holds sequences at least that long"
                    + ("" if longest >= MAX_SEQ_LEN else " without the margin")
                )
            # offloaded states and activations grow with the sequence too, in host RAM (fuzz20 item 16)
            from generator.sizing.training import size_training

            at_longest = size_training(arch, setup._replace(sequence_length=max(longest, 1)), par, consts, nvlink=nvlink)
            result["training"]["max_sequence_host_ram_bytes_per_gpu"] = at_longest.host_ram_bytes_per_gpu
            # what the GPU holds at the answer (newuser45 item 10: the table above is at --seq-len's length)
            result["training"]["max_sequence_memory_bytes_per_gpu"] = at_longest.per_gpu.total
            if longest == 0:
                from generator.calculator.training_levers import already_on, lighter_states

                on = already_on(setup, activations=False)
                notes.append(
                    f"no sequence fits: the model states and runtime alone need more than the {usable / GIB:.1f} GiB "
                    f"usable on this GPU; {lighter_states(setup)}{LIGHTER_METHOD[setup.method]}" + (f"; {on}" if on else "")
                )
            if arch.max_model_len and longest > arch.max_model_len:
                notes.append(f"memory allows {longest:,}-token sequences, more than {served}; {CONTEXT_EXTENSION}")
            if longest > 0:
                # the speed of the answer's sequence, not of --seq-len's (newuser43 item 9: 1,592 tokens/s at 2,048
                # printed under a 71,687-token answer); it fits the usable memory by construction
                timed = setup._replace(sequence_length=longest)
                _add_speed(result, req, model, timed, at_longest, par, gpu, consts, fits=True)
                result["training_speed"]["timed_at_longest_sequence"] = longest
        else:
            _add_speed(result, req, model, setup, mem, par, gpu, consts)
    elif req.max_seq_len:
        raise InputError("--max-seq-len needs --gpu: the longest sequence that fits which GPU")


class MachineRefusedError(InfeasibleError):
    """The model cannot run on the machine given (exit 3), with the estimate's document of it (``offload.fits`` false).

    ``document``: what ``--json`` prints and the text is made of (review70 item 1: nothing was printed on exit 3).
    """

    def __init__(self, message: str, document: dict[str, Any]) -> None:
        """The message said on stderr, and the document."""
        super().__init__(message)
        self.document = document


def _cast_note(gpu: GpuSpec, model_type: str, checkpoint: str, served: str, engine: str) -> str:
    """Why a service's ``checkpoint`` weights are sized and timed in ``served`` on ``gpu`` (one without bf16)."""
    if served == "fp32":
        return (
            f"warning: {gpu.id} has no bf16 and vLLM refuses {model_type} in float16 (numerical instability), so its dtype "
            f"auto serves the {checkpoint} checkpoint in float32 ({VLLM_AUTO_DTYPE_SOURCE}): sized so, four bytes a weight "
            "and a float32 KV cache, at the GPU's scalar fp32 rate; a plan at bf16 rules this GPU out for it (a GPU with "
            "bf16 serves it in half the memory)"
        )
    engine_said = f"vLLM's dtype auto falls back to it, {VLLM_AUTO_DTYPE_SOURCE}" if engine == "vllm" else "no bf16 arithmetic"
    return (
        f"{gpu.id} has no bf16: the {checkpoint} weights are served cast to float16 ({engine_said}), two bytes a value "
        "as sized, with a float16 KV cache, at the GPU's fp16 rate; a checkpoint whose activations overflow float16 "
        "(above 65,504) needs a GPU with bf16"
    )


def _default_context(arch: Architecture, asked: int) -> int:
    """The context sized where no ``--context`` is given.

    The model's own up to :data:`DEFAULT_CONTEXT_TOKENS`, at least the request asked (``asked`` tokens).
    """
    return max(min(DEFAULT_CONTEXT_TOKENS, arch.max_model_len or DEFAULT_CONTEXT_TOKENS), asked)


def _pooling(req: EstimateRequest, model: ResolvedModel) -> dict[str, Any]:
    """``--task embed`` / ``score``: one pooling replica on ``--gpu`` (:func:`pooling_estimate`).

    At the default context where none is given (:func:`_default_context`).
    """
    from generator.calculator.pooling_estimate import pooling_estimate

    if req.gpu is None or req.input_tokens is None:  # the parser asks for both; a request built in code may not
        raise InputError(f"--task {req.task} needs --gpu and --input-tokens")
    context = req.context_tokens or _default_context(model.architecture, req.input_tokens)
    gpu, consts = catalog.find_gpu(req.gpu), _constants(req)
    # newuser100: a plan sizes an embedding replica in a GPU's share (kubernetes.gpu_sharing); the estimate refused it
    shared = _gpu_share(req, gpu) if req.mig is not None or req.share is not None else None
    result = pooling_estimate(
        model,
        gpu,
        consts,
        task=req.task,
        input_tokens=req.input_tokens,
        context=context,
        degrees=(req.tp, req.pp),
        precision=req.precision,
        kv_precision=req.kv_precision,
        max_num_seqs=req.max_num_seqs,
        max_batched_tokens=req.max_batched_tokens,
        share=None if shared is None else shared[1],
    )
    result["notes"] = [] if req.context_tokens else [f"no --context given: sized for {context} tokens"]
    if shared is not None:
        result["gpu_share"] = _share_result(*shared, gpu.id, consts)
    return result


def _add_speed(
    result: dict[str, Any],
    req: EstimateRequest,
    model: ResolvedModel,
    setup: TrainingSetup,
    mem: TrainingMemory,
    par: Parallelism,
    gpu: GpuSpec,
    consts: Constants,
    *,
    fits: bool | None = None,
) -> None:
    """The training job's speed on ``gpu`` (and a run's hours) where it fits; where it does not, why none is given.

    ``fits``: whether ``setup`` fits, where it is not the job the capacity was found for (``--max-seq-len``'s answer).
    """
    if not (result["capacity"]["fits"] if fits is None else fits):
        if req.dataset_tokens is not None:
            result["notes"].append(f"no step time or run hours: the job does not fit {gpu.id}")
        return
    if (why := gpu.unrated("bf16")) is not None:
        result["notes"].append(f"no step time or run hours: {why}")
        return
    from generator.calculator.training_time import training_speed

    result["training_speed"] = training_speed(model, setup, mem, par, gpu, consts, req.ep, req.dataset_tokens, req.epochs)


def _vllm_log(
    arch: Architecture, kv_bits: int, available_bytes: int, context: int, par: Parallelism, consts: Constants
) -> dict[str, Any]:
    """The KV figures vLLM's start-up log would print for this budget, with the pool by layer type."""
    cache = vllm_kv_cache(arch, kv_bits, available_bytes, context, par, consts.kv_block_tokens, consts.prefill_chunk_tokens)
    needed = request_kv_bytes(arch, kv_bits, context, par, consts.kv_block_tokens, consts.prefill_chunk_tokens)
    return {
        "gpu_kv_cache_size_tokens": cache.logged_tokens,
        # vLLM's start-up check: one request of the full context must fit, else it refuses ("X GiB KV cache is needed")
        "one_request_kv_bytes": needed,
        "starts": needed <= available_bytes,
        "max_concurrency": round(cache.max_concurrency, 2),
        "kv_cache_groups": cache.groups,
        "by_layer_type": [
            {
                "kind": t.kind,
                "layers": t.layers,
                "padding_layers": t.padding_layers,
                "pool_bytes": t.pool_bytes,
                "bytes_per_token_per_layer": t.layer_bytes_per_token,
            }
            for t in cache.by_layer_type
        ],
    }


def _average_batch(req: EstimateRequest) -> bool:
    """Whether ``--batch`` is sized at the average prompt and output given, as a plan sizes its batch (newuser44 item 7).

    A batch of more than one served by vLLM or SGLang with ``--input-tokens`` or ``--output-tokens`` given (both admit a
    request by the tokens it holds, review71 item 2); one sequence is sized at the whole context, as is a batch without
    them (SGLang's verdict is then its pool holding the batch's whole-context sequences) or on a machine of yours
    (llama.cpp's slots each take the context).
    """
    given = req.input_tokens is not None or req.output_tokens is not None
    return given and req.batch > 1 and not req.train and req.fixed is None and req.engine in ("vllm", "sglang")


def _sequence_tokens(req: EstimateRequest) -> tuple[int, int]:
    """Prompt and output tokens of the speed figures (1000 and 200 unless given)."""
    isl = req.input_tokens if req.input_tokens is not None else 1000
    osl = req.output_tokens if req.output_tokens is not None else 200
    return isl, osl


def _throughput(
    req: EstimateRequest,
    arch: Architecture,
    gpu: GpuSpec,
    fmt: WeightFormat,
    kv_bits: int,
    par: Parallelism,
    inference: InferenceMemory,
    consts: Constants,
    lora: InferenceSpec | None = None,
) -> dict[str, Any]:
    """Roofline throughput of one replica: saturated output rate, and TTFT / TPOT at ``--batch``.

    ``lora``: the adapters served, whose kernels every step times (:mod:`generator.calculator.lora_estimate`).
    """
    isl, osl = _sequence_tokens(req)
    # per-sequence host time as the engine's host loop does it, on the serving host's CPU
    host_scale = per_sequence_host_scale(req.engine, host_time_scale(req.host_cpu))
    acc = accelerator_for(gpu, fmt.compute, par.tp, host_scale, fmt)
    if lora is not None:
        from generator.planner.lora_replica import with_lora_adapters

        acc = with_lora_adapters(acc, arch, lora, par)
    cap = inference.capacity
    assert cap is not None
    budget = consts.prefill_chunk_tokens if req.engine == "vllm" else None  # SGLang prefills in batches of their own
    held_tokens = cap.sequences_held(isl + osl) * (isl + osl)  # whole sequences: a recurrent state takes pages of its own
    share = req.cached_prompt_share  # of each prompt, what the prefix cache holds: the rest is prefilled (a plan's rule)
    if share and (uncached := no_prefix_cache_reason(req.model, arch)) is not None:
        raise InputError(f"--cached-prompt-share {share:g}: {uncached}: drop it")

    new, cached = prompt_tail(isl, share)
    sat = saturated_throughput(
        arch, inference.weights, kv_bits, par, acc, held_tokens, isl, osl, consts, budget, cached, req.engine == "sglang"
    )
    # the batch at steady state, as a plan states it: each finished sequence's place taken by a new prompt, whose
    # prefill takes its share of every second from the decode steps (newuser34 item 7: the decode-only step was the
    # TPOT); a batch above the saturated one waits for admission: the replica runs the saturated batch, no more, and a
    # prompt's first token comes with a step of that batch (fuzz29 item 9: a step of all 100,000 was counted)
    running = min(req.batch, sat.batch)
    # the decode-only step too is of the batch that runs (newuser73 item 7: "decode-only step of all 16" where 13 ran,
    # a step the engine never takes)
    runs = decode_step(arch, inference.weights, kv_bits, par, acc, running, isl + osl // 2, consts)

    # a prompt prefills its new tail alone, attending to the cached prefix (cached_prompt_share)
    def prompt_alone(n: int) -> float:  # a prompt's own prefill, its passes reading the weights
        fresh, prefix = prompt_tail(n, share)
        return prefill_seconds(arch, par, acc, fresh, consts, inference.weights, cached_tokens=prefix)

    def taken(n: int) -> float:  # the time a prompt takes from the replica under load
        fresh, prefix = prompt_tail(n, share)
        if req.engine == "sglang":  # its passes are forwards of their own, each reading the weights (prompt_taken_seconds)
            return prompt_taken_seconds(arch, par, acc, fresh, consts, inference.weights, prefix)
        return prefill_seconds(arch, par, acc, fresh, consts, fill=False, cached_tokens=prefix)

    alone = prompt_alone(isl)
    ttft = mean_ttft = alone + runs.seconds
    ttft_p95 = ttft * consts.ttft_p95_factor  # as a plan checks it before queueing, the prompts' spread unstated
    prefill = taken(isl)
    extra: dict[str, Any] = {"cached_prompt_share": share, "prefill_new_tokens": new} if share else {}
    if req.p95_input_tokens is not None:  # a long-prompt tail: the plan's mix (newuser34 item 4)
        mix = least_spread_mix(isl, req.p95_input_tokens)
        lengths = (mix.short_tokens, mix.long_tokens)
        prefill, _ = mix_moments(mix, *(taken(n) for n in lengths))
        short, long = (prompt_alone(n) for n in lengths)
        mean_ttft = mix_moments(mix, short, long)[0] + runs.seconds
        # the spread stated, not allowed for (acc122): the p95 prompt alone, one prompt in twenty that long, before queueing
        ttft_p95 = max(ttft, long + runs.seconds)
        extra |= {"p95_input_tokens": mix.long_tokens, "ttft_p95_prompt_s": round(long + runs.seconds, 5)}
    # --batch is a fixed concurrency: a client's cycle is its TTFT (its own prefill) and its answer, whose steps share
    # each second with the prompts of the other running - 1 only, so the rate is the one Little's law gives over the
    # printed TTFT and TPOT, running / (TTFT + output x TPOT) (newuser73 item 17: the rate stretched the decode by the
    # sequence's own prefill as well, which its TTFT already holds, 3-16% below what the printed figures give)
    others = prefill * (running - 1) / running
    state = steady_state(running, mean_ttft, runs.seconds, osl, others)
    # what stops the saturated batch, as the plan's reasons say it (review 10 item 6)
    rates = dequantized_rates(arch, par, acc, consts)
    limits = {
        "max_num_batched_tokens": step_budget_batch(budget * par.attention_dp * par.pp, new, osl) if budget else None,
        "max_num_seqs": consts.max_batch_size * par.attention_dp,
        "kv_cache": cap.sequences_held(isl + osl),
    }
    return {
        "input_tokens": isl,
        "output_tokens": osl,
        "max_output_tokens_per_s": round(sat.output_tokens_per_s, 1),
        "saturation_batch": sat.batch,
        "saturation_limit": next((name for name, n in limits.items() if n == sat.batch), "kv_cache"),
        "ttft_s": round(ttft, 5),
        # the TTFT p95 a plan holds against slo.ttft_p95_ms for a prompt alone (queueing under load comes on top)
        "ttft_p95_alone_s": round(ttft_p95, 5),
        **extra,
        # at --batch with the prompts its sequences bring (the plan's TPOT), and the decode-only step beside it
        "tpot_s": round(state.tpot_s, 6),
        "decode_tokens_per_s": round(state.requests_per_s * osl, 1),
        "requests_per_s": round(state.requests_per_s, 4),
        "steady_batch": running,
        # the share of the other sequences' prompts between a sequence's tokens (what stretches its TPOT), and the
        # replica's time in prefill, its own prompts' too (newuser55 item 3: "0% of the time in prefill" at batch 1 where a
        # 24,000-token prompt's 1.5 s are a fifth of its request)
        "prefill_share": round(state.prefill_busy, 4),
        "prefill_time_share": round(min(1.0, state.requests_per_s * prefill), 4),
        "decode_step_s": round(runs.seconds, 6),
        "decode_step_tokens_per_s": round(runs.tokens_per_s, 1),
        # what limits the decode step at --batch (tpot_s), not the saturated rate beside it (newuser13 item 7)
        "decode_step_bound": "compute" if runs.compute_seconds > runs.memory_seconds else "memory bandwidth",
        "dense_tflops": gpu.tflops(acc.compute),
        "memory_bandwidth_gb_per_s": gpu.memory_bandwidth_gb_per_s,
        # the dense GEMM rate the GPU is modelled to reach: its measured max-achievable rate where measured (the basis
        # below), not the rate normalised to the H100 the efficiencies were fitted on, which the roofline applies them to
        # (newuser42 item 9: an A100's 337.6 beside its 312 dense peak, "measured")
        "sustained_tflops": round(acc.physical_tflops, 1),
        # measured, borrowed from a measured card of its class, or the reference's share (newuser25 item 2)
        "sustained_tflops_basis": gpu.tensor_rate_basis(),
        # the same for memory bandwidth: the stream measurement where measured, not the H100-normalised figure
        "sustained_memory_bandwidth_gb_per_s": round(acc.memory_bandwidth_gb_per_s * gpu.reference_bandwidth_share, 1),
        # the quantized matrices' compute-bound rate where their kernels dequantize in the main loop (review 27 item 3)
        **({"dequantized_in_gemm": rates.to_dict()} if rates is not None else {}),
    }


#: What a training job that fits nowhere could train instead (fuzz15 item 10: a LoRA job was told to train adapters).
LIGHTER_METHOD = {
    "full": " or train adapters (--train lora / qlora)",
    "lora": " or quantize the base (--train qlora)",
    "qlora": "",
}


def _slots_summary(slots: StreamCapacity) -> dict[str, Any]:
    """``throughput.slots`` of an estimate on a machine with ``--batch N``: the slots' tokens/s, all and each."""
    return {
        "slots": slots.streams,
        "tokens_per_s": round(slots.tokens_per_s, 3),
        "stream_tokens_per_s": round(slots.stream_tokens_per_s, 3),
        "context_tokens": slots.context_tokens,
        "step": slots.mode,
    }


def _fixed_machine(
    req: EstimateRequest, model: ResolvedModel, fmt: WeightFormat, kv_name: str, context: int, consts: Constants
) -> dict[str, Any]:
    """Place the model on an existing machine (``--ram-gib`` given): offload plan, speed, settings."""
    arch = model.architecture
    from generator.calculator.llama_cpp_threads import estimate_thread_args
    from generator.calculator.machine import build_machine, machine_findings, numa_note, place_over_nodes, wider_machine
    from generator.calculator.offload_report import (
        alternatives,
        checklist,
        findings,
        fixed_file,
        offload_summary,
        offload_unblock,
        runtime_settings,
    )
    from generator.calculator.prefill_bound import prefill_summary
    from generator.calculator.upgrade_options import upgrade_options
    from generator.sizing.offload import MAX_STREAMS, Machine, OffloadPlan, RateTarget, plan_offload, slots_at

    spec = req.fixed
    assert spec is not None
    machine, _gpu, basis = build_machine(spec)
    formats = llama_cpp_formats(fmt, [weight_format(name) for name in req.allowed_precisions])  # as llama.cpp holds them
    prompt, output = _sequence_tokens(req)
    slots_asked = req.batch or 1
    if slots_asked > MAX_STREAMS:
        raise UsageError(f"--batch on a machine is its llama.cpp server slots: at most {MAX_STREAMS:,}, got {slots_asked:,}")

    def place(on: Machine, tokens: int = context) -> OffloadPlan:
        # the decode step reads the KV of the context in use halfway through the answer, as the serving estimate's
        # of several allowed precisions none of which fits VRAM, the largest that decodes within the interactive TPOT
        # (100 ms: the estimate takes no latency target), as a plan of an interactive service does (newuser68 item 5)
        return plan_offload(
            arch, formats, kv_cache_bits(kv_name), tokens, req.min_context_tokens, on, prompt, consts, alternatives(arch),
            prompt + output // 2, spec.offload_engine, RateTarget(1000 / consts.interactive_tokens_per_s),
        )  # fmt: skip

    def on_disk(placed: OffloadPlan) -> int:
        return placed.placement.disk_bytes

    machine_doc = {
        "gpu": spec.gpu,
        "gpus": spec.gpu_count,
        "ram_gib": spec.ram_gib,
        "reserved_ram_gib": spec.reserved_ram_gib,
        "bandwidths": basis,
    }
    machine_found = [
        {"level": level, "code": code, "message": msg} for level, code, _, msg in machine_findings(spec, consts, "--pcie-lanes")
    ]
    try:
        plan, machine, spans = place_over_nodes(place, machine, wider_machine(machine, spec), on_disk)
        slots = None
        if slots_asked > 1:  # newuser68 item 8: --batch N is N server slots, as plan sizes a rate's (-np N)
            slots = slots_at(
                arch, plan.weight_format, kv_cache_bits(kv_name), plan.placement.context_tokens, machine,
                consts._replace(offload_ubatch_tokens=plan.ubatch_tokens),  # at the plan's -ub (newuser85)
                prompt + output // 2, prompt + output, slots_asked, spec.offload_engine,
            )  # fmt: skip
            if slots is None:
                raise InfeasibleError(
                    f"{slots_asked} server slots of {prompt + output:,}-token requests do not fit beside the weights"
                )
            if slots.context_tokens > plan.placement.context_tokens:  # their KV cache, placed as the model is
                tokens = slots.context_tokens
                plan, machine, spans = place_over_nodes(
                    lambda on: place(on, tokens), machine, wider_machine(machine, spec), on_disk
                )
    except InfeasibleError as exc:
        # a host short of RAM for what it keeps beside the GPUs says its own levers (review70 item 2)
        lever = getattr(exc, "unblock", None)
        unblock = offload_unblock(arch, formats) if lever is None else f"to unblock: {lever}"
        # review70 item 1: the breakdown is printed on exit 3 as --help says, the --gpu-only verdict's way (fits false)
        refused = {
            "offload": {
                "fits": False,
                "blocked_by": str(exc),
                "unblock": unblock,
                "engine": spec.offload_engine,
                "precision": formats[0].name,
                "context_tokens": context,
            },
            "machine": machine_doc,
            "findings": machine_found,
        }
        raise MachineRefusedError(f"the model cannot run on this machine: {exc}; {unblock}", refused) from None
    # the refusal's keys, null where it fits: one shape for a script either way (review73 item 6)
    summary = {"fits": True, "blocked_by": None, "unblock": None, **offload_summary(plan, machine)}
    numa = numa_note(spec, spans) if plan.placement.offloaded else None  # only what lives off the GPUs reads their memory
    numa_level, numa_code = ("warning", "numa-spans-nodes") if spans else ("info", "one-socket-bandwidth")
    fullest = max((b.as_dict() for b in plan.placement.per_gpu), key=lambda d: d["total"])
    settings = runtime_settings(
        arch,
        plan,
        machine,
        consts,
        catalog.find_gpu(spec.gpu).name,
        _given_batched_tokens(req),
        kv_name,
        spans,
        wider_machine(machine, spec),
        slots_asked,
        # the threads a plan's line runs with, where they are given or the machine has several sockets (acc146: the
        # estimate's line had none, on 2+ sockets leaving llama.cpp's default, every socket's cores, under --numa
        # numactl), on a converted GGUF's line too (fix172 item 2)
        threads=lambda options, placed, on: estimate_thread_args(spec, on, options, placed),
        model=_model_args(model),  # -m <file> on each line (fix176 item 1)
        jinja=req.tool_calling,  # tool calls through the GGUF's chat template (fix184 item 5)
    )
    return {
        # newuser68 item 3: the precision placed (an allowed one below --precision where the plan chose it), and the
        # weights the fullest GPU holds in the placement (memory.per_gpu's), not the whole file over the GPUs
        "weights_from": _weights_from(arch, plan.weight_format),
        "weights": {"bytes": size_weights(arch, plan.weight_format).total_bytes, "bytes_per_gpu": fullest["weights"]},
        "offload": summary,
        "memory": {"per_gpu": fullest, "placed": True},
        "throughput": {
            "decode_tokens_per_s": round(plan.cost.decode_tokens_per_s, 3),
            "ttft_s": round(plan.cost.ttft_s, 3),
            # the prompt the TTFT is of, its prefill rate (llama.cpp's "prompt eval") and its passes' -ub (newuser38 10)
            "ttft_prompt_tokens": plan.cost.prompt_tokens,
            "prefill_tokens_per_s": round(plan.cost.prefill_tokens_per_s, 3),
            "ubatch_tokens": plan.ubatch_tokens,
            "bound": plan.cost.bound,
            "mode": plan.cost.mode,
            # fix192: which part of the prompt's passes bounds the prefill (PCIe, GPU or CPU compute), and each part
            **prefill_summary(plan.cost),
            **({} if slots is None else {"slots": _slots_summary(slots)}),
        },
        "machine": machine_doc,
        # newuser107: what one more GPU of its kind, or twice the RAM, would give (each placed as this machine is)
        "upgrades": upgrade_options(spec, place, on_disk),
        "runtime_settings": settings,
        "checklist": checklist(plan, machine, wider_machine(machine, spec), consts, settings),
        "findings": [
            *machine_found,
            *({"level": numa_level, "code": numa_code, "message": w} for w in [numa] if w),
            *(
                {"level": lvl, "code": code, "message": msg}
                for lvl, code, msg in findings(plan, machine, consts, fixed_file(arch))
            ),
        ],
    }


def _model_args(model: ResolvedModel) -> Callable[[str], list[str]]:
    """The ``-m <file>`` words of the estimate's llama-server lines of ``model``, by the GGUF type a line runs."""
    from generator.calculator.llama_server_model import model_args

    return lambda precision: model_args(model, precision)


def _llama_cpp_slots(req: EstimateRequest) -> int:
    """llama-server's slots (``-np``) of ``--batch``, each of the whole context (a unified KV cache of them all)."""
    from generator.sizing.offload import MAX_STREAMS

    if req.batch > MAX_STREAMS:
        raise UsageError(f"--batch on llama.cpp is its server slots: at most {MAX_STREAMS:,}, got {req.batch:,}")
    return req.batch


def _weights_from(arch: Architecture, fmt: WeightFormat) -> str:
    """Whether the weight bytes are the checkpoint's own (read from its files) or computed from the config."""
    files = arch.file_weights
    return files.source if files is not None and files.precision == fmt.name else "computed from the config"


def _batch_kv_cache(
    arch: Architecture, kv_bits: int, context: int, average: int | None, sequences: int, par: Parallelism
) -> tuple[KvCacheSizes, bool]:
    """The KV cache of ``sequences`` at ``average`` tokens each (``context`` each where None); True where floored.

    review70 item 3: a batch at the average is never less than one whole-context sequence, batch 1's figure (a batch of
    2 x 1,200 tokens showed less memory than 1 x 4,096): the pool holds one such request at least, as vLLM's start-up
    check asks. The second value says the floor sized it (``kv_cache.sized_at`` "one_whole_context").
    """
    kv = size_kv_cache(arch, kv_bits, average or context, sequences, par)
    if average is not None and (one := size_kv_cache(arch, kv_bits, context, 1, par)).per_gpu_bytes > kv.per_gpu_bytes:
        return one, True
    return kv, False


def _size_at_held(
    result: dict[str, Any], arch: Architecture, kv_bits: int, context: int, average: int | None, held: int, par: Parallelism
) -> None:
    """The memory table's KV cache at the sequences a queueing batch holds at a time; the batch asked beside it.

    review76 item 12: ``--batch 64 --context 131072`` of a 70B on 4 H100 sized 64 whole-context sequences, 640 GiB of KV
    and 679.79 GiB in all a GPU of 80, beside the verdict that the pool holds 3 and the rest queue. The bytes and the
    table are now the 3 held (at the average length where the batch is sized so, one whole-context sequence at least,
    as it is sized); ``asked_bytes`` and ``asked_bytes_per_gpu`` keep the batch's as asked.
    """
    kv = result["kv_cache"]
    held_kv, floored = _batch_kv_cache(arch, kv_bits, context, average, held, par)
    if floored:
        kv["sized_at"] = "one_whole_context"
    per_gpu = result["memory"]["per_gpu"]
    per_gpu["total"] += held_kv.per_gpu_bytes - per_gpu["kv_cache"]
    per_gpu["kv_cache"] = held_kv.per_gpu_bytes
    kv["asked_bytes"], kv["asked_bytes_per_gpu"] = kv["bytes"], kv["bytes_per_gpu"]
    kv["bytes"], kv["bytes_per_gpu"], kv["sequences_held"] = held_kv.total_bytes, held_kv.per_gpu_bytes, held


def _fit(gpu_id: str, memory: int, need: int, usable_fraction: float, basis: str) -> dict[str, Any]:
    """Whether ``need`` fits the usable share of a GPU (the serving engine's utilization, or the planner's margin).

    ``basis`` says what sets the share (printed beside the verdict).
    """
    usable = int(memory * usable_fraction)
    return {"gpu": gpu_id, "gpu_memory_bytes": memory, "fits": need <= usable, "usable_bytes": usable, "usable_basis": basis}


def training_nvlink(gpu: GpuSpec | None, setup: TrainingSetup, par: Parallelism) -> bool:
    """Whether a training job's GPUs have NVLink peers (no GPU named: the PCIe figure, as for serving)."""
    if gpu is None:
        return False
    return nvlink_collectives(gpu.interconnect_kind, gpu.nvlink_domain_gpus, setup.data_parallel * par.gpus)


def _training(
    req: EstimateRequest, model: ResolvedModel, par: Parallelism, consts: Constants, gpu: GpuSpec | None
) -> tuple[TrainingSetup, Any]:
    from generator.sizing.frameworks import (
        QLORA_DATA_PARALLEL_ONLY,
        framework_profile,
        job_recipe,
        layout_refusal,
        resolved_regime,
    )
    from generator.sizing.training import TrainingSetup, framework_model_type, size_training, with_recipe
    from generator.sizing.training_conflicts import zero_offload_regime_refusal

    # expert parallelism is carved out of data parallel: at least ep data-parallel ranks, a multiple of them
    gpus = req.gpus if req.gpus is not None else par.gpus * req.ep
    if gpus % par.gpus:
        raise InputError(f"--gpus {gpus} is not a multiple of tp x pp = {par.gpus}")
    check_ep_divides_data_parallel(req.ep, gpus // par.gpus, "--ep", f" (--gpus {gpus} / tp x pp {par.gpus})")
    # a 4-bit base under lora is QLoRA by another name (as training_conflicts reads it)
    four_bit = req.train == "lora" and req.precision is not None and weight_format(req.precision).bits <= 4
    if refused := layout_refusal(req.framework, par.tp, par.pp, req.ep, "qlora" if four_bit else req.train or "full"):
        flag, why = refused
        advice = {
            "tp": "use --gpus for data-parallel ranks, or --framework megatron / torchtune",
            "pp": "shard instead (--zero 3), or --framework megatron",
            "ep": "use --framework megatron or deepspeed",  # fuzz14 item 7
        }[flag]
        if why == QLORA_DATA_PARALLEL_ONLY:
            advice = "use --gpus for data-parallel ranks (--zero 3 shards the base over them), or train lora"
        raise InputError(f"--{flag} {getattr(par, flag) if flag != 'ep' else req.ep}: {why}; {advice}")
    # the stage first (the recipe depends on it: axolotl's bf16 model at ZeRO-0 only), then the regime its recipe takes
    zero_stage = resolved_regime(req.framework, None, req.zero_stage, gpus // par.gpus)[1]
    recipe = job_recipe(req.framework, req.train or "full", gpus, zero_stage, req.offload_params)
    optimizer = resolved_regime(req.framework, req.optimizer, req.zero_stage, gpus // par.gpus, recipe)[0]
    setup = TrainingSetup(
        method=req.train or "full",
        optimizer=optimizer,
        zero_stage=zero_stage,
        data_parallel=gpus // par.gpus,
        micro_batch_size=req.micro_batch,
        sequence_length=next((n for n in (req.seq_len, req.context_tokens) if n is not None), DEFAULT_TRAINING_SEQUENCE),
        checkpointing=req.checkpointing,
        flash_attention=req.flash_attention,
        lora_rank=req.lora_rank,
        lora_dropout=req.lora_dropout,
        lora_targets=req.lora_targets,
        offload_optimizer=req.offload_optimizer,
        offload_params=req.offload_params,
        base_precision=req.precision if req.train in ("lora", "qlora") else None,
        framework=req.framework,
        loss=req.loss,
        activation_offload=req.activation_offload,
        optimizer_in_backward=req.optimizer_in_backward,
        fused_kernels=req.fused_kernels,
        compute_precision=req.compute_precision,
        expert_parallel=req.ep,
        model_type=framework_model_type(model.architecture),
        # a pipeline runs micro-batches through every step, as the planner sizes it where no global batch is given
        accumulation_steps=max(req.accumulation, consts.training_pipeline_microbatches if par.pp > 1 else 1),
    )
    setup = with_recipe(setup, recipe, optimizer_given=req.optimizer is not None, paged=req.paged_optimizer)
    offload_refusal = (
        zero_offload_regime_refusal(framework_profile(req.framework), req.optimizer)
        if req.offload_optimizer and req.optimizer is not None and req.framework is not None and zero_stage != 0
        else None
    )
    if offload_refusal:  # review77 item 11: an optimizer given that DeepSpeed's ZeRO-Offload does not step
        raise InputError(f"--optimizer {req.optimizer}: {offload_refusal}")
    if gpu is not None:
        from generator.sizing.training_hardware import precision_problem

        base = setup.base_precision_name if setup.method != "full" else None
        framework = framework_profile(req.framework).name if req.framework else None
        if unfit := precision_problem(
            gpu.id,
            gpu.architecture,
            framework=framework,
            optimizer=optimizer,
            base_precision=base,
            fp8_dense_tflops=gpu.tflops("fp8"),
            compute_precision=setup.compute_precision,
        ):
            raise InputError(f"--gpu {gpu.id}: {unfit}")
    return setup, size_training(model.architecture, setup, par, consts, nvlink=training_nvlink(gpu, setup, par))


#: Each option the memory levers are offered as (:mod:`generator.calculator.training_levers`): the request field it sets
#: and how its value is read (None: a switch, set True).
_LEVER_OPTIONS: dict[str, tuple[str, Callable[[str], Any] | None]] = {
    "--gradient-checkpointing": ("checkpointing", str),
    "--loss": ("loss", str),
    "--activation-offload": ("activation_offload", None),
    "--optimizer-in-backward": ("optimizer_in_backward", None),
    "--optimizer": ("optimizer", str),
    "--zero": ("zero_stage", int),
    "--offload-optimizer": ("offload_optimizer", None),
    "--offload-params": ("offload_params", None),
    "--accumulation": ("accumulation", int),
    "--micro-batch": ("micro_batch", int),
    "--gpus": ("gpus", int),
    "--train": ("train", str),
}

#: The most GPUs a job that does not fit is tried on, its model states sharded over them (ZeRO-3).
MOST_GPUS_TRIED = 8


def _lever_request(req: EstimateRequest, flags: str) -> EstimateRequest:
    """``req`` with the options of ``flags`` set.

    ``flags`` as a lever offers them: "--zero 1 --offload-optimizer", "--optimizer-in-backward with --accumulation 1".
    """
    changes: dict[str, Any] = {}
    for option, value in _options(flags).items():
        field, kind = _LEVER_OPTIONS[option]
        changes[field] = True if kind is None or value is None else kind(value)
    return req._replace(**changes)


def _fitting_changes(req: EstimateRequest, setup: TrainingSetup, par: Parallelism) -> list[dict[str, Any]]:
    """The settings that make a training job that does not fit its GPU fit, each tried alone, with what it holds then.

    newuser54 item 2: "does NOT fit" came with no advice (an 8B full fine-tune 1 GiB over on 4 RTX 6000 Ada; a 7B at
    8,192 tokens that a fused loss takes from 29.43 to 14.34 GiB a GPU). The memory levers the job has off first (its
    training unchanged), then a lighter method, then the fewest GPUs up to :data:`MOST_GPUS_TRIED` whose ZeRO-3 shards
    hold it; where no one change fits, the memory levers together. Each is the estimate of the job so changed: its
    bytes a GPU, and its tokens a second where a dataset is given.
    """
    from generator.calculator.training_levers import activation_levers, offload_levers, state_levers
    from generator.sizing.frameworks import framework_profile
    from generator.sizing.training_conflicts import DEEPSPEED_FRAMEWORKS

    levers = [lever.flag for lever in (*activation_levers(setup), *state_levers(setup), *offload_levers(setup)) if not lever.on]
    if setup.zero_stage != 3:  # parameter offload is ZeRO-3's (review36 item 5: offered bare, it was always refused)
        levers = [f"--zero 3 {flag}" if flag == "--offload-params" else flag for flag in levers]
    profile = framework_profile(setup.framework) if setup.framework else None
    gpus = setup.data_parallel * par.gpus
    # the data-parallel ranks given sharding more of the state, no host RAM taken (newuser70 item 5: a 70B LoRA on 8
    # H100 was offered parameter offload, where --zero 3 alone fits at 40 GiB)
    # (review71 item 7: Megatron's stages are 0 and 1, so ZeRO-1, its distributed optimizer, is tried too: a Llama 8B on
    # 8 Gaudi 3 was offered --zero 1 --offload-optimizer at 857 tokens/s where --zero 1 alone fits at 11,897)
    sharding = [
        (f"--zero {stage}", "memory")
        for stage in (1, 2, 3)
        if setup.data_parallel > 1
        and stage > setup.zero_stage
        and (profile is None or profile.zero_stages is None or stage in profile.zero_stages)
    ]
    tries = [*sharding, *((flags, "memory") for flags in levers)]
    tries += [(f"--train {m}", "method") for m in {"full": ("lora", "qlora"), "lora": ("qlora",)}.get(setup.method, ())]
    if profile is None or profile.zero_stages is None or 3 in profile.zero_stages:
        tries += [(f"--gpus {n} --zero 3", "gpus") for n in (2, 4, 8) if gpus < n <= MOST_GPUS_TRIED and n % par.gpus == 0]
    fitting: list[dict[str, Any]] = []
    for flags, kind in tries:
        if kind == "gpus" and any(f["kind"] == "gpus" for f in fitting):
            continue  # the fewest GPUs that hold it
        if (found := _fits_with(req, flags, kind)) is not None:
            fitting.append(found)
    # the sharding stages first among the settings tried together (a distributed optimizer costs no step time where an
    # offload does: review71 item 7's H100 FP8 job fits with --zero 1 --loss chunked at 12,247 tokens/s, where the one
    # change that fit alone was --zero 1 --offload-optimizer at 1,848)
    levers = [*(flags for flags, _ in sharding), *levers]
    lever_sets = [levers]
    if setup.framework in DEEPSPEED_FRAMEWORKS and any("--offload-optimizer" in flags for flags in levers):
        # together with ZeRO-Offload, which steps DeepSpeed's fp32 CPU Adam, an 8-bit optimizer is refused (review77
        # item 11): the offload is offered, the 8-bit regime alone (above) only; a smaller micro-batch is tried with
        # either (below)
        lever_sets = [
            [flags for flags in levers if not (flags.startswith("--optimizer ") and "8bit" in flags)],
            [flags for flags in levers if "--offload-optimizer" not in flags],
        ]
        levers = lever_sets[0]
    if len(levers) > 1 and not any(f["kind"] == "memory" and _no_offload(f["flags"]) for f in fitting):
        # the memory settings together, each that the framework takes beside the others (optimizer offload and stepping
        # in backward exclude each other), before a lighter method (review36 item 5: only QLoRA was offered where a
        # chunked loss and optimizer offload fit the full fine-tune)
        together, tried = _together(req, "", levers)
        if tried is not None and len(together) > 1 and _flags(*together) not in {f["flags"] for f in fitting}:
            fitting = [_change(_flags(*together), "together", tried), *fitting]
    if setup.micro_batch_size > 1 and not any(f["fits"] and f["kind"] in ("memory", "together") for f in fitting):
        # nothing keeps the job's training at its micro-batch: a smaller one, the accumulation keeping its batch, with
        # the memory settings together, before a lighter method or more GPUs are its only ways, or "a larger GPU"
        # (newuser76 item 12: Gemma 3 1B at 8,192 tokens, micro-batch 4, was sent to a larger GPU where micro-batch 1
        # with a chunked loss fits in 22.16 GiB: its 262,144-token vocabulary's fp32 logits are what does not fit)
        fitting = [*_smaller_micro_batches_together(req, setup, lever_sets), *fitting]
    return fitting


def _together(req: EstimateRequest, base: str, levers: list[str]) -> tuple[list[str], dict[str, Any] | None]:
    """The memory settings ``levers`` added to ``base``'s options in turn until the job fits, then each taken out again.

    Taken out where the rest still fit; with the estimate of the last tried (None: every one refused). The settings
    kept exclude ``base``'s own. Each is added in the order offered, those the framework refuses beside the others
    skipped (optimizer offload and stepping in backward exclude each other).
    """
    together: list[str] = []
    tried: dict[str, Any] | None = None
    for flags in levers:
        try:
            tried = estimate(_lever_request(req, _flags(base, *together, flags)), advise=False)
        except InputError:
            continue
        together.append(flags)
        if tried["capacity"]["fits"]:
            break
    if tried is not None and tried["capacity"]["fits"]:
        # then each taken out again where the rest still fit (review37 item 5: five flags where three fit)
        for flags in list(reversed(together)):  # the offloads, which cost step time, first
            rest = [f for f in together if f != flags]
            try:
                fewer = estimate(_lever_request(req, _flags(base, *rest)), advise=False)
            except InputError:
                continue
            if fewer["capacity"]["fits"]:
                together, tried = rest, fewer
    return together, tried


def _smaller_micro_batches_together(
    req: EstimateRequest, setup: TrainingSetup, lever_sets: list[list[str]]
) -> list[dict[str, Any]]:
    """The micro-batches below the job's that fit, each with the fewest of its memory settings, as changes.

    Each micro-batch that divides the job's sequences a step (micro-batch x accumulation), the accumulation raised to
    keep them (its gradients then stay resident across the micro-batches), largest first: alone, else with the settings
    of each of ``lever_sets`` (the settings a framework takes together: ZeRO-Offload or an 8-bit optimizer under
    DeepSpeed) added in turn as :func:`_together` adds them. A smaller micro-batch is kept only where it needs none of
    the settings a larger one took beyond its own (fewer settings: an offload's step time or an 8-bit optimizer
    spared), and the search stops at the first that fits alone. The note ranks them by speed
    (:func:`_fitting_changes_note`).
    """
    batch = setup.micro_batch_size * setup.accumulation_steps
    found: list[dict[str, Any]] = []
    taken: list[set[str]] = []
    for micro in range(setup.micro_batch_size - 1, 0, -1):
        if batch % micro:
            continue
        base = f"--micro-batch {micro} --accumulation {batch // micro}"
        try:
            alone = estimate(_lever_request(req, base), advise=False)
        except InputError:
            continue
        tries = [([], alone)] if alone["capacity"]["fits"] else [_together(req, base, levers) for levers in lever_sets]
        for together, tried in tries:
            if tried is None or not tried["capacity"]["fits"] or any(set(together) >= earlier for earlier in taken):
                continue
            found.append(_change(_flags(base, *together), "micro-batch", tried))
            taken.append(set(together))
        if alone["capacity"]["fits"]:
            break
    return found


def _no_offload(flags: str) -> bool:
    """Whether a change of memory settings moves nothing to the host (no step time spent on host copies)."""
    return "offload" not in flags


def _options(flags: str) -> dict[str, str | None]:
    """The options of ``flags`` and their values (None: a switch), each once, the last of an option given twice."""
    tokens = [t for t in flags.split() if t != "with"]
    options: dict[str, str | None] = {}
    for at, token in enumerate(tokens):
        if token.startswith("--"):
            value = tokens[at + 1] if at + 1 < len(tokens) and not tokens[at + 1].startswith("--") else None
            options.pop(token, None)
            options[token] = value
    return options


def _flags(*parts: str) -> str:
    """Options joined, each given once, the last value of an option given twice ("--zero 1 ... --zero 3": --zero 3)."""
    joined = _options(" ".join(parts))
    return " ".join(f"{option} {value}" if value is not None else option for option, value in joined.items())


def _fits_with(req: EstimateRequest, flags: str, kind: str) -> dict[str, Any] | None:
    """The estimate of the job with ``flags``, where it fits; None where it does not or the change is refused."""
    try:
        tried = estimate(_lever_request(req, flags), advise=False)
    except InputError:  # a setting this job's framework or method refuses
        return None
    return _change(flags, kind, tried) if tried["capacity"]["fits"] else None


def _change(flags: str, kind: str, tried: dict[str, Any]) -> dict[str, Any]:
    speed = tried.get("training_speed") or {}
    return {
        "flags": flags,
        "kind": kind,
        "fits": tried["capacity"]["fits"],
        "per_gpu_bytes": tried["memory"]["per_gpu"]["total"],
        "tokens_per_second_per_gpu": speed.get("tokens_per_second_per_gpu"),
    }


def _fitting_changes_note(changes: list[dict[str, Any]]) -> str:
    """The note of :func:`_fitting_changes`: each change that fits with its GiB a GPU (and tokens a second)."""

    def said(change: dict[str, Any]) -> str:
        speed = change["tokens_per_second_per_gpu"]
        rate = f", {speed:,.0f} tokens/s a GPU" if speed and speed >= 0.5 else f", {speed:.2g} tokens/s a GPU" if speed else ""
        return f"{change['flags']} ({change['per_gpu_bytes'] / GIB:.2f} GiB{rate})"

    fitting = [c for c in changes if c["fits"]]
    if not fitting:
        together = [said(c) for c in changes if c["kind"] == "together"]
        after = f" (its memory settings together: {together[0]})" if together else ""
        return f"no one change of its memory settings, method or up to {MOST_GPUS_TRIED} GPUs makes it fit{after}: a larger GPU"
    # hostile79 item 12: on 1,000,000 GPUs "--zero 3 (10.00 GiB, 0 tokens/s a GPU)" was advice; a change that trains at
    # under one token a second a GPU is left out where another runs, and named with its rate
    stalled = [c for c in fitting if c["tokens_per_second_per_gpu"] is not None and c["tokens_per_second_per_gpu"] < 0.5]
    changes = [c for c in fitting if c not in stalled] or fitting
    order = {"memory": 0, "together": 0, "micro-batch": 0, "method": 1, "gpus": 2}
    # the job's own training first (one setting or several together), the fastest first (offloads cost step time: review71
    # item 7), then the least memory
    ranked = sorted(changes, key=lambda c: (order[c["kind"]], -(c["tokens_per_second_per_gpu"] or 0), c["per_gpu_bytes"]))
    left = [c for c in stalled if c not in changes]
    out = f"it fits with {'; or '.join(said(c) for c in ranked)}"
    if left:
        rates = " and ".join(f"{c['tokens_per_second_per_gpu']:.2g}" for c in left)
        out += (
            f" (left out: {', '.join(c['flags'] for c in left)}, which fit{'s' if len(left) == 1 else ''} but train"
            f"{'s' if len(left) == 1 else ''} at {rates} tokens/s a GPU)"
        )
    return out


def _by_hand(setup: TrainingSetup, gpus: int, changes: list[dict[str, Any]]) -> str:
    """What the fit hint adds where it offers Unsloth several GPUs: that it runs on them only as set up by hand.

    fix170 item 2 (newuser96 left 1): Llama 3.1 70B QLoRA on 2 x RTX 4090 was offered "--zero 3 --offload-params" with no
    word that Unsloth's ZeRO-3 is Accelerate or DeepSpeed set up by hand (the plan warns it: ``unsloth-multi-gpu``).
    """
    if setup.framework != "unsloth" or not any(c["fits"] and (gpus > 1 or c["kind"] == "gpus") for c in changes):
        return ""
    from generator.sizing.frameworks import UNSLOTH_MULTI_GPU

    return f". {UNSLOTH_MULTI_GPU}"


def _smaller_micro_batch(
    arch: Architecture, setup: TrainingSetup, par: Parallelism, consts: Constants, usable_bytes: int, *, nvlink: bool
) -> str:
    """How a job that does not fit at its micro-batch could (newuser24 item 13).

    The largest micro-batch that fits, with the accumulation that keeps its batch; else what shrinks the activations
    and the model states.
    """
    from generator.calculator.training_levers import already_on, lighter_activations, lighter_states
    from generator.sizing.training import size_training

    micro = setup.micro_batch_size
    batch = micro * setup.accumulation_steps

    def sized(m: int) -> tuple[int, bool]:
        """Bytes a GPU at micro-batch ``m``, and whether at the accumulation that keeps the batch.

        Raised to keep it where it divides: the gradients then stay resident across the micro-batches (newuser76 item
        12: Gemma 3 1B at micro-batch 1 was said to fit in 22.16 GiB "with --accumulation 4", which holds 24.02). Where
        the job cannot accumulate (its optimizer steps inside backward), at its own accumulation.
        """
        if batch % m == 0:
            try:
                kept = setup._replace(micro_batch_size=m, accumulation_steps=batch // m)
                return size_training(arch, kept, par, consts, nvlink=nvlink).per_gpu.total, True
            except InputError:
                pass
        return size_training(arch, setup._replace(micro_batch_size=m), par, consts, nvlink=nvlink).per_gpu.total, False

    fitting: tuple[int, int, bool] | None = None
    for m in range(micro - 1, 0, -1):
        total, keeps = sized(m)
        if total <= usable_bytes:
            fitting = (m, total, keeps)
            break
    lighter = lighter_activations(setup)
    if fitting is None:
        ways = [w for w in (lighter, lighter_states(setup) + LIGHTER_METHOD[setup.method]) if w]
        on = already_on(setup)
        return f"no micro-batch below {micro} fits either: {'; or '.join(ways)}" + (f"; {on}" if on else "")
    m, total, keeps = fitting
    keep = f" (--accumulation {batch // m} keeps {batch} sequences a step)" if keeps else ""
    on = already_on(setup, states=False)
    return (
        f"--micro-batch {m} fits ({total / GIB:.2f} GiB){keep}"
        + (f"; or {lighter}" if lighter else "")
        + (f"; {on}" if on else "")
    )


def longest_training_sequence(
    arch: Architecture, setup: TrainingSetup, par: Parallelism, consts: Constants, usable_bytes: int, *, nvlink: bool
) -> int:
    """The longest ``sequence_length`` whose per-GPU training memory fits ``usable_bytes`` (0: not even 1 token).

    Memory never falls as the sequence grows, so a binary search over lengths finds it. It stops at ``MAX_SEQ_LEN``
    (--seq-len's limit, the workload's ``sequence_length`` maximum): an answer there may be short of what memory holds.
    """
    from generator.sizing.training import size_training

    def fits(tokens: int) -> bool:
        return (
            size_training(arch, setup._replace(sequence_length=tokens), par, consts, nvlink=nvlink).per_gpu.total <= usable_bytes
        )

    if not fits(1):
        return 0
    low, high = 1, 1
    while fits(high * 2) and high < MAX_SEQ_LEN:
        high *= 2
    high = min(high * 2, MAX_SEQ_LEN)
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


__all__ = ["EstimateRequest", "check_request", "estimate", "training_precision"]


def _host_ram(
    arch: Architecture, setup: TrainingSetup, offloaded_per_gpu: int, world: int, gpu: GpuSpec | None, consts: Constants
) -> dict[str, Any]:
    """The job's hard host RAM a node, as ``specgen plan`` counts a node (newuser29 item 3).

    A node holds all ``world`` GPUs where one catalog server of ``gpu`` does, else a server's GPUs, on as many servers
    as the step places the job on (:func:`multi_server`; fuzz35 item 3: 1,000 GPUs were counted on one node).
    """
    from generator.calculator.training_time import host_gpus, multi_server
    from generator.sizing.checkpoint_load import size_checkpoint_load, training_host_ram

    servers = multi_server(gpu, world) if gpu is not None else None
    gpus = host_gpus(servers, world)
    load = size_checkpoint_load(arch, setup, consts)
    host, text = training_host_ram(load, offloaded_per_gpu, gpus)
    return {
        "checkpoint_load_bytes": load.held_bytes,
        "checkpoint_load_per_process": load.per_process,
        "host_ram_bytes_per_node": host,
        "host_ram_gib_per_node": math.ceil((consts.host_os_ram_bytes + host) / GIB),
        "host_ram_node_gpus": gpus,
        "host_ram_nodes": servers.nodes if servers else 1,
        "host_ram_job_gpus": world,
        "host_ram_text": f"{consts.host_os_ram_bytes / GIB:g} GiB kept for the OS and its processes + {text}",
    }
