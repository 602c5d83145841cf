"""A service quantized as its engine loads it (online), and the checkpoint files its nodes then hold.

vLLM quantizes a 16-bit checkpoint's weights to FP8 as it loads them when started with ``--quantization fp8``
(dynamic per-tensor scales, no calibration: https://docs.vllm.ai/en/v0.5.4/quantization/fp8.html "Quick Start with
Online Dynamic Quantization", https://docs.vllm.ai/en/stable/features/quantization/fp8/); SGLang does the same ("add
--quantization fp8 on a fp16 checkpoint", https://docs.sglang.io/advanced_features/server_arguments.html). Without
it either engine serves the checkpoint's own 16-bit weights, and the plan's weight and KV memory are not what runs.
The node still downloads and keeps the 16-bit files: its disk holds the checkpoint's bytes, not the served ones.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator import catalog
from generator.calculator.model_source import ResolvedModel, default_precision, model_weight_format
from generator.planner.plan import DeploymentPlan, Finding, Pool
from generator.sizing.loadability import default_group_problem
from generator.sizing.precision import gguf_serving_note, weight_format
from generator.sizing.weights import Parallelism, size_weights
from generator.units import GIB

#: Served formats an engine makes from a 16-bit checkpoint as it loads it (each is also its ``--quantization`` value).
ONLINE_FORMATS = ("fp8",)
#: Checkpoint formats online quantization starts from.
SIXTEEN_BIT = ("bf16", "fp16")
#: vLLM's FP8 weights made as the 16-bit ones stream in, each layer quantized as it is loaded: the load's peak stays near
#: the FP8 size only from this change on (merged 2026-01-07); before it vLLM held the 16-bit weights whole, and its
#: 0.13.0 and 0.14.0 ran out of memory loading Qwen3-30B-A3B so on one 80 GB GPU (vllm PR 32773).
STREAMING_FP8 = "https://github.com/vllm-project/vllm/pull/31914"
STREAMING_FP8_OOM = "https://github.com/vllm-project/vllm/pull/32773"
#: vLLM's in-flight bitsandbytes NF4, which specgen does not render (fuzz24 L9).
BNB_INFLIGHT = "https://docs.vllm.ai/en/latest/features/quantization/bnb/"


def quantized_online_from(model: ResolvedModel, served: str) -> str | None:
    """The checkpoint's own format where the engine quantizes it to ``served`` as it loads it; None otherwise."""
    own = default_precision(model)
    return own if served in ONLINE_FORMATS and own in SIXTEEN_BIT else None


def _stored_bytes(model: ResolvedModel, served: str) -> int | None:
    """Bytes of the checkpoint's files where the engine makes ``served`` of them as it loads them; None: served as stored.

    The engine casts a checkpoint stored in fp32 (its safetensors headers', else its config's ``torch_dtype``) to 16
    bits whatever it serves (``default_precision``: bf16), and quantizes a 16-bit one online
    (:func:`quantized_online_from`); either way the node downloads and keeps the stored files. newuser87 item 2:
    BAAI/bge-m3 (``torch_dtype: float32``) is 2.27 GB of files, said as its 1.14 GB served.
    """
    arch = model.architecture
    files = arch.file_weights
    if files is not None and files.precision == "fp32" and not files.fixed_format:
        return files.total_bytes  # as its headers give them
    fp32 = files is None and arch.quantization is None and arch.torch_dtype in ("float32", "float")
    stored = "fp32" if fp32 else quantized_online_from(model, served)
    return None if stored is None else size_weights(arch, model_weight_format(arch, stored)).total_bytes


def served_file_bytes(model: ResolvedModel, served: str, served_bytes: int) -> int:
    """Bytes of the model files a node serving ``model`` as ``served`` keeps: the stored ones (:func:`_stored_bytes`).

    One rule: where the engine makes ``served`` of the checkpoint as it loads it (an fp32 one cast, a 16-bit one
    quantized online), the node keeps the files as stored; where it serves them as stored, ``served_bytes``.
    """
    stored = _stored_bytes(model, served)
    return served_bytes if stored is None else max(stored, served_bytes)


def unserved_precision_finding(index: int, name: str, precision: str, model: ResolvedModel, engine: str) -> Finding | None:
    """``precision-not-in-checkpoint`` for a service served in a format its checkpoint does not hold; None otherwise.

    Service ``name`` (deployment ``index``) is served as ``precision``, which ``model``'s checkpoint does not hold and
    no engine makes of it as it loads it.

    The one text ``plan`` and ``validate`` say (newuser110: ``validate`` said "ok" of NVFP4 asked of the BF16
    Llama 3.3 70B, which ``plan`` then warned would load its BF16 weights).
    """
    own = default_precision(model)
    cast = own in SIXTEEN_BIT and precision in SIXTEEN_BIT
    if precision == own or cast or quantized_online_from(model, precision) is not None:
        return None
    bnb = (
        f" (vLLM also makes nf4 as it loads 16-bit weights with --quantization bitsandbytes, {BNB_INFLIGHT}, which "
        "specgen does not render: its bitsandbytes kernels are not those the plan's throughput is of)"
        if precision == "nf4"
        else ""
    )
    # a GGUF type: the engine serves the .gguf file, made by no quantization_config (fix153)
    way = gguf_serving_note(precision, engine) or (
        f"point model at a checkpoint in {precision} (a Hub id, or a local config.json with its "
        "quantization_config) or plan a precision it holds or is quantized to online"
    )
    return Finding(
        "warning",
        "precision-not-in-checkpoint",
        f"'{name}' is sized at {precision}, but {model.id} holds {own} weights and the engine makes "
        f"{precision} only from a checkpoint quantized to it (online it quantizes 16-bit weights to "
        f"{' or '.join(ONLINE_FORMATS)} alone){bnb}: started on this checkpoint it loads the {own} weights, "
        f"and the plan's weights, KV cache and replicas are not what runs; {way}",
        f"deployments[{index}].inference.precision",
    )


def unserved_precision_findings(deployments: list[DeploymentPlan], models: Mapping[str, ResolvedModel]) -> list[Finding]:
    """Services sized in a format their checkpoint does not hold and no engine makes of it as it loads it.

    newuser27 item 2: ``precision: int4`` on the 16-bit Qwen3-32B was sized as an AWQ/GPTQ model (9 GiB a GPU) while
    the rendered engine started the BF16 checkpoint (30.5 GiB a GPU): the plan's KV cache and replicas were not what
    runs. A 16-bit checkpoint served at the other 16-bit dtype is cast as it loads (vLLM ``--dtype``).
    """
    out = []
    for i, d in enumerate(deployments):
        model = models.get(d.name)
        if d.kind != "inference" or model is None:
            continue
        engine = str(d.details.get("serving_engine", "vllm"))
        unserved = unserved_precision_finding(i, d.name, d.precision, model, engine)
        if unserved is None:
            continue
        out.append(unserved)
        par = Parallelism(d.tp, d.pp, int(d.details.get("expert_parallel") or 1))
        if (unsplit := default_group_problem(model.architecture, weight_format(d.precision), par)) is not None:
            field = f"deployments[{i}].inference.precision"
            out.append(Finding("warning", "default-group-does-not-split", f"'{d.name}': {unsplit}", field))
    return out


def online_peak_findings(
    deployments: list[DeploymentPlan], models: Mapping[str, ResolvedModel], pools: list[Pool]
) -> list[Finding]:
    """Services vLLM quantizes online whose 16-bit shard a GPU is more than the GPU holds (newuser31 item 10).

    Such a replica loads only on a vLLM that quantizes each layer as it streams in (:data:`STREAMING_FP8`): an older
    one holds the 16-bit weights first (Mixtral 8x7B's 87 GiB of BF16 on one 80 GB H100), and does not start.
    """
    gpu_of = {p.name: p.node.gpu_id for p in pools}
    out = []
    for i, d in enumerate(deployments):
        model = models.get(d.name)
        if d.kind != "inference" or model is None or d.details.get("serving_engine", "vllm") != "vllm":
            continue
        own = quantized_online_from(model, d.precision)
        gpu = catalog.gpus().get(gpu_of.get(d.pool, ""))
        if own is None or gpu is None:
            continue
        arch = model.architecture
        shard = size_weights(
            arch, model_weight_format(arch, own), Parallelism(d.tp, d.pp, stages="vllm", vision_tp=True)
        ).per_gpu_bytes
        if shard <= gpu.memory_bytes:
            continue
        out.append(
            Finding(
                "warning",
                "online-quantization-peak",
                f"'{d.name}' quantizes {d.model_id}'s {own} checkpoint to {d.precision} as vLLM loads it, and its {own} "
                f"shard a GPU ({shard / GIB:.1f} GiB at TP{d.tp} PP{d.pp}) is more than {gpu.id}'s "
                f"{gpu.memory_bytes / GIB:.1f} GiB: it starts only on a vLLM that quantizes each layer as it streams in "
                f"({STREAMING_FP8}, merged 2026-01-07; 0.13.0 and 0.14.0 ran out of memory so, {STREAMING_FP8_OOM}); run "
                f"such a release, or point model at a checkpoint already in {d.precision}",
                f"deployments[{i}].inference.precision",
            )
        )
    return out


#: vLLM on Intel Gaudi (the vllm-gaudi plugin) runs FP8 weights and KV cache through Intel Neural Compressor, from a
#: calibration run of the model on the same Gaudi generation ("Currently, quantization is validated only on Llama
#: models"; ``vllm serve ... --quantization inc --kv-cache-dtype fp8_inc`` with ``QUANT_CONFIG`` set).
GAUDI_FP8 = "https://docs.vllm.ai/projects/gaudi/en/latest/configuration/quantization/inc.html"


def gaudi_fp8_findings(deployments: list[DeploymentPlan], pools: list[Pool]) -> list[Finding]:
    """Services vLLM runs on Gaudi in FP8 (weights or KV cache): they need a calibration run first (newuser34 item 6)."""
    gpu_of = {p.name: p.node.gpu_id for p in pools}
    out = []
    for i, d in enumerate(deployments):
        gpu = catalog.gpus().get(gpu_of.get(d.pool, ""))
        engine = d.details.get("serving_engine", "vllm")
        if d.kind != "inference" or engine != "vllm" or gpu is None or not gpu.architecture.startswith("gaudi"):
            continue
        if "fp8" not in (d.precision, d.kv_cache_precision):
            continue
        out.append(
            Finding(
                "warning",
                "gaudi-fp8-calibration",
                f"'{d.name}' serves FP8 on {gpu.id}: vLLM on Gaudi runs it through Intel Neural Compressor "
                "(--quantization inc, --kv-cache-dtype fp8_inc, as the group vars say), from a calibration run of the "
                "model on the same Gaudi generation (vllm-gaudi's calibrate_model.sh) with QUANT_CONFIG pointing at its "
                f"measurements, and validates it on Llama models only ({GAUDI_FP8}); without them the engine does not "
                "start in FP8",
                f"deployments[{i}].inference.precision",
            )
        )
    return out
