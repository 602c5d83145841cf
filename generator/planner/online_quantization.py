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

from generator.calculator.model_source import ResolvedModel, default_precision, model_weight_format
from generator.planner.plan import DeploymentPlan, Finding
from generator.sizing.weights import size_weights

#: Served formats an engine makes from a 16-bit checkpoint as it loads it (each is also its ``--quantization`` value).
ONLINE_FORMATS = ("fp8",)
#: Checkpoint formats online quantization starts from.
SIXTEEN_BIT = ("bf16", "fp16")
#: vLLM's in-flight bitsandbytes NF4, which specgen does not render (fuzz24 L9).
BNB_INFLIGHT = "https://docs.vllm.ai/en/latest/features/quantization/bnb/"


def quantized_online_from(model: ResolvedModel, served: str) -> str | None:
    """The checkpoint's own format where the engine quantizes it to ``served`` as it loads it; None otherwise."""
    own = default_precision(model)
    return own if served in ONLINE_FORMATS and own in SIXTEEN_BIT else None


def served_file_bytes(model: ResolvedModel, served: str, served_bytes: int) -> int:
    """Bytes of the model files a node serving ``model`` as ``served`` keeps: the checkpoint's own where quantized online."""
    own = quantized_online_from(model, served)
    if own is None:
        return served_bytes
    arch = model.architecture
    return size_weights(arch, model_weight_format(arch, own)).total_bytes


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
        own = default_precision(model)
        cast = own in SIXTEEN_BIT and d.precision in SIXTEEN_BIT
        if d.precision == own or cast or quantized_online_from(model, d.precision) is not None:
            continue
        bnb = (
            f" (vLLM also makes nf4 as it loads 16-bit weights with --quantization bitsandbytes, {BNB_INFLIGHT}, which "
            "specgen does not render: its bitsandbytes kernels are not those the plan's throughput is of)"
            if d.precision == "nf4"
            else ""
        )
        out.append(
            Finding(
                "warning",
                "precision-not-in-checkpoint",
                f"'{d.name}' is sized at {d.precision}, but {d.model_id} holds {own} weights and the engine makes "
                f"{d.precision} only from a checkpoint quantized to it (online it quantizes 16-bit weights to "
                f"{' or '.join(ONLINE_FORMATS)} alone){bnb}: started on this checkpoint it loads the {own} weights, "
                f"and the plan's weights, KV cache and replicas are not what runs; point model at a checkpoint in "
                f"{d.precision} (a Hub id, or a local config.json with its quantization_config) or plan a precision "
                "it holds or is quantized to online",
                f"deployments[{i}].inference.precision",
            )
        )
    return out
