"""Training settings that contradict each other: each is refused at its field instead of being sized silently.

Sources:
- torchtune's distributed recipes wrap the model with FSDP2 (full shard, or ZeRO-2 with
  ``fsdp_reshard_after_forward: False``); a plain FSDP2 loop is the same: neither has a replicated (ZeRO-0) or
  optimizer-only (ZeRO-1) data-parallel path.
- QLoRA is LoRA over a base quantized to 4 or 8 bits (bitsandbytes ``load_in_4bit`` / ``load_in_8bit``); over a
  16-bit base it is LoRA.
- Megatron-LM loads no bitsandbytes base: its LoRA (NeMo / Megatron-Bridge PEFT) trains over bf16 or FP8 weights,
  so QLoRA's NF4 base runs through the Hugging Face stack (PEFT: hf, trl, unsloth, axolotl, llama-factory...).
"""

from __future__ import annotations

from generator.sizing.frameworks import framework_profile
from generator.sizing.precision import weight_format

#: Frameworks that shard data-parallel ranks with FSDP2 only.
FSDP2_FRAMEWORKS = ("fsdp2", "torchtune")


def training_conflicts(
    *,
    method: str,
    framework: str | None = None,
    zero_stage: int | None = None,
    data_parallel: int | None = None,
    base_precision: str | None = None,
    offload_params: bool = False,
) -> list[tuple[str, str]]:
    """(field, why) for each contradiction among the settings given; None: not given (``data_parallel``: not known yet).

    Fields: ``precision``, ``framework``, ``zero_stage``, ``offload_params`` (parameter offload is ZeRO-3's: FSDP's
    ``CPUOffloadPolicy`` on a fully sharded model, DeepSpeed's ``offload_param`` at stage 3). Optimizer offload is not
    among them: ``offload_optimizer`` also stands for bitsandbytes' paged optimizers (8-bit states paged to host RAM,
    at ZeRO-0 on one GPU: torchtune's single-device recipes), so neither an 8-bit optimizer nor stage 0 contradicts it.
    """
    out: list[tuple[str, str]] = []
    fsdp2 = framework is not None and framework_profile(framework).name in FSDP2_FRAMEWORKS
    if method == "qlora" and base_precision is not None and weight_format(base_precision).bits >= 16:
        out.append(
            (
                "precision",
                f"QLoRA trains adapters over a base quantized to 4 or 8 bits; over a {base_precision} base it is LoRA: "
                "train lora, or give a 4- or 8-bit precision (nf4 by default)",
            )
        )
    four_bit = base_precision is not None and weight_format(base_precision).bits <= 4
    if (method == "qlora" or four_bit) and framework is not None and framework_profile(framework).name == "megatron":
        # a 4-bit base under lora is QLoRA by another name (fuzz18 item 9)
        out.append(
            (
                "framework",
                "megatron has no bitsandbytes 4-bit base (its LoRA trains over bf16 or FP8 weights): train qlora with a "
                "PEFT-based framework (hf, trl, unsloth, axolotl, llama-factory), or lora with megatron",
            )
        )
    if fsdp2 and zero_stage in (0, 1) and (data_parallel is None or data_parallel > 1):
        out.append(
            (
                "zero_stage",
                f"{framework} shards data-parallel ranks with FSDP2 (ZeRO-3, or ZeRO-2 without resharding after "
                f"forward); it has no ZeRO-{zero_stage} path: give 2 or 3, or leave it out",
            )
        )
    if offload_params and zero_stage is not None and zero_stage != 3:
        out.append(
            (
                "offload_params",
                f"parameter offload is ZeRO stage 3 / FSDP full shard (DeepSpeed offload_param, FSDP CPU offload), not "
                f"ZeRO-{zero_stage}: give zero_stage 3 (--zero 3) or leave the parameter offload out",
            )
        )
    return out
