"""What a plan says of a service's LoRA adapters (``inference.lora``): its details, a reason line and a finding.

The memory is sized in :func:`generator.planner.lora_replica.with_lora_slots` (the slots come out of the KV pool) and the
kernels' time in every step (:class:`generator.sizing.lora_serving.LoraStep`: a roofline plus a fixed time a kernel);
here it is said: the slots
each GPU holds, the host RAM of the CPU adapter caches, and what of the kernels' cost the step times count.
"""

from __future__ import annotations

from typing import Any

from generator.planner.lora_replica import lora_sizes
from generator.planner.plan import Finding
from generator.sizing.architecture import Architecture
from generator.sizing.lora_serving import (
    ENGINE_LORA,
    LORA_KERNEL_SECONDS,
    lora_kernels,
    per_stage,
    served_cpu_loras,
    served_max_loras,
)
from generator.sizing.weights import Parallelism
from generator.units import GIB, MIB
from generator.workload.models import InferenceSpec

#: Published vLLM runs with one small adapter against the base model, for the finding's caution: the current engine's
#: (unsloth#5123, vLLM 0.19.2: -40 to -44%, which the kernels' fixed time explains) and the removed V0 engine's
#: (vllm#11267: -33.6%, its per-token BGMV / SGMV kernels, retired in vllm#14685). benchmarks/CALIBRATION.md, acc139 /
#: acc141 entries.
LORA_MEASURED_SOURCES = (
    "https://github.com/unslothai/unsloth/pull/5123",
    "https://github.com/vllm-project/vllm/pull/11267",
)


def lora_details(arch: Architecture, spec: InferenceSpec, par: Parallelism, shrink_buffer_bytes: int) -> dict[str, Any]:
    """The ``lora`` entry of a service's details: its engine settings and what they cost (bytes, FLOPs).

    ``shrink_buffer_bytes``: vLLM's float32 shrink buffer its replica was sized with (its memory's overhead part).
    """
    lora = spec.lora
    assert lora is not None
    sizes = lora_sizes(arch, spec, par)
    kernels = per_stage(lora_kernels(arch, spec.engine, lora.target_modules), arch, par.pp)
    out: dict[str, Any] = {
        "adapters": lora.adapters,
        "max_loras": served_max_loras(lora.max_loras, spec.engine, lora.adapters),
        "max_rank": lora.max_rank,
        "target_modules": list(lora.target_modules),
        "slot_bytes_per_gpu": sizes.slot_bytes_per_gpu,
        "slots_bytes_per_gpu": sizes.gpu_bytes,
        "adapter_bytes": sizes.adapter_bytes,
        "host_bytes_per_replica": sizes.host_bytes,
        "flops_per_token": sizes.flops_per_token,
        "slot_read_bytes_per_step": sizes.slot_read_bytes_per_step,
        "kernels_per_pass": kernels,
    }
    if spec.engine == "vllm":  # its default is max_loras: the adapters all stay loaded only where it is said
        out["max_cpu_loras"] = served_cpu_loras(lora.max_cpu_loras, lora.adapters)
        out["shrink_buffer_bytes_per_gpu"] = shrink_buffer_bytes
    elif lora.max_cpu_loras is not None:  # SGLang --max-loaded-loras (unset: no limit, every adapter loaded)
        out["max_cpu_loras"] = lora.max_cpu_loras
    return out


def lora_reason(details: dict[str, Any], engine: str) -> str:
    """The reason line: the slots each GPU holds before the KV pool, and the host copies."""
    lora = details["lora"]
    slots = lora["max_loras"]
    flag = ENGINE_LORA[engine].batch_flag
    wrapped = "every linear layer (vLLM wraps them all)" if ENGINE_LORA[engine].wraps_every_linear else "the target modules"
    cpu = lora.get("max_cpu_loras", lora["adapters"])
    return (
        f"LoRA: {slots} adapter slot{'s' if slots != 1 else ''} ({flag}) at rank {lora['max_rank']} over {wrapped} hold "
        f"{lora['slots_bytes_per_gpu'] / MIB:,.0f} MiB a GPU ({lora['slot_bytes_per_gpu'] / MIB:,.1f} MiB a slot), "
        "allocated before the KV pool, which is that much smaller; host RAM "
        f"{lora['host_bytes_per_replica'] / GIB:,.1f} GiB a replica for {cpu} adapters of "
        f"{lora['adapter_bytes'] / MIB:,.1f} MiB each at rank {lora['max_rank']} in each worker process"
    )


def lora_findings(index: int, name: str, details: dict[str, Any], weights_bytes_per_gpu: int) -> list[Finding]:
    """What of the LoRA kernels' cost the TTFT, TPOT and rates count (fixed time a kernel, roofline), and what not.

    The adapters' host copies need no finding: the node's RAM is sized for them (``ReplicaShape.host_ram_bytes``).
    """
    lora = details.get("lora")
    if not isinstance(lora, dict):
        return []
    at = f"deployments[{index}].inference.lora"
    share = f"{100 * lora['slot_read_bytes_per_step'] / weights_bytes_per_gpu:.1f}" if weights_bytes_per_gpu else "?"
    kernels = lora["kernels_per_pass"]
    return [
        Finding(
            "info",
            "lora-kernels-timed",
            f"deployment {name}: the TTFT, TPOT and rates count the LoRA kernels (punica shrink and expand): a fixed "
            f"{LORA_KERNEL_SECONDS * 1e6:,.0f} us of GPU time for each of the {kernels:,} they launch a GPU each forward "
            f"pass ({kernels * LORA_KERNEL_SECONDS * 1e3:,.2f} ms a decode step or prompt pass, "
            "https://github.com/vllm-project/vllm/pull/32425), and a roofline: "
            f"{lora['flops_per_token'] / 1e6:,.0f} MFLOP a token, each token's activations passed again, and "
            f"the slots of the distinct adapters a step's batch holds (of {lora['adapters']} taken as equally used, at "
            f"most {lora['max_loras']}): read up to {lora['slot_read_bytes_per_step'] / MIB:,.0f} MiB of adapter slots a "
            f"GPU each decode step whose batch uses every slot ({share}% beside the {weights_bytes_per_gpu / GIB:,.1f} "
            "GiB of weights a GPU reads a step). Not counted: the engine's per-step adapter bookkeeping and kernels it "
            "swaps under LoRA (vLLM's MoE experts). A published run of current vLLM with one small adapter lost 40-44% "
            "of its decode throughput, where these terms give 45-50% from its measured base step; the often-quoted "
            "33.6% loss was vLLM's removed V0 engine "
            f"({', '.join(LORA_MEASURED_SOURCES)}), so measure a replica with the adapters before relying on the SLO "
            "margin",
            at,
        )
    ]
