"""Settings a sharded training job's plan relies on that the frameworks leave off (newuser76 item 7).

- DeepSpeed ZeRO-3 on a routed mixture-of-experts model under Transformers: ZeRO-3 prefetches parameters in the
  module order it traced, and a routed MoE block runs a different subset of its experts each step; DeepSpeed's answer is
  to make the whole block a ZeRO-3 leaf module, gathered whole: ``deepspeed.utils.set_z3_leaf_modules(model,
  [<block class>])``, "particularly useful in the context of Mixture of Experts (MoE) models. In MoE models, the
  computation order of experts varies across forward passes" (https://deepspeed.readthedocs.io/en/latest/zero3.html).
  The sizing already gathers a whole layer at a time, which is what a leaf block does, so no number changes.
- A QLoRA job whose bitsandbytes 4-bit base is sharded (ZeRO-3 / FSDP over several ranks): FSDP and ZeRO-3 shard
  float tensors only, so the packed 4-bit weights must be stored in the float dtype the rest of the model uses,
  ``BitsAndBytesConfig(bnb_4bit_quant_storage=torch.bfloat16)`` ("Use PEFT QLoRA and FSDP",
  https://huggingface.co/docs/peft/accelerate/fsdp); the sizing shards the packed storage as that setting makes
  them (:func:`generator.sizing.training.bnb_quant_state_bytes`).
"""

from __future__ import annotations

from typing import Any

from generator.sizing.architecture import Architecture
from generator.sizing.frameworks import framework_profile
from generator.sizing.training import BNB_QUANT_STATE_FORMATS, TrainingSetup

#: The sparse MoE block class of Transformers' modeling file, by the config's ``model_type``.
MOE_BLOCK_CLASSES: dict[str, str] = {
    "mixtral": "MixtralSparseMoeBlock",
    "qwen2_moe": "Qwen2MoeSparseMoeBlock",
    "qwen3_moe": "Qwen3MoeSparseMoeBlock",
    "deepseek_v2": "DeepseekV2MoE",
    "deepseek_v3": "DeepseekV3MoE",
    "olmoe": "OlmoeSparseMoeBlock",
}

Z3_LEAF_SOURCE = "https://deepspeed.readthedocs.io/en/latest/zero3.html"
QUANT_STORAGE_SOURCE = "https://huggingface.co/docs/peft/accelerate/fsdp"


def z3_leaf_block(arch: Architecture, setup: TrainingSetup) -> str | None:
    """The MoE block a DeepSpeed ZeRO-3 job must mark a leaf module (its class, or a description); None where none."""
    if not arch.is_moe or setup.zero_stage != 3 or setup.data_parallel < 2 or setup.framework is None:
        return None
    if framework_profile(setup.framework).dp_collectives != "deepspeed":  # FSDP / Megatron: no ZeRO-3 tracing
        return None
    return MOE_BLOCK_CLASSES.get(arch.model_type, f"the sparse MoE block class of {arch.model_type}'s modeling file")


def sharded_nf4(setup: TrainingSetup) -> bool:
    """A QLoRA job whose bitsandbytes 4-bit base is sharded over its data-parallel ranks (PEFT's stacks)."""
    if setup.method != "qlora" or setup.zero_stage != 3 or setup.data_parallel < 2:
        return False
    if setup.base_precision_name not in BNB_QUANT_STATE_FORMATS:
        return False
    return setup.framework is None or framework_profile(setup.framework).peft_lora


def sharding_settings(arch: Architecture, setup: TrainingSetup) -> tuple[list[str], dict[str, Any]]:
    """The reasons naming these settings, and the training details (group vars) that carry them."""
    reasons: list[str] = []
    details: dict[str, Any] = {}
    block = z3_leaf_block(arch, setup)
    if block is not None:
        reasons.append(
            f"DeepSpeed ZeRO-3 on a routed MoE model: mark each MoE block a ZeRO-3 leaf module before training, "
            f"deepspeed.utils.set_z3_leaf_modules(model, [{block}]), so that ZeRO-3 gathers the block whole: its prefetch "
            "follows the module order it traced, and the order a routed block runs its experts in varies from one "
            f"forward pass to the next ({Z3_LEAF_SOURCE}); the memory above gathers a whole layer at a time, as a leaf "
            "block does"
        )
        details["z3_leaf_modules"] = [block]
    if sharded_nf4(setup):
        reasons.append(
            "the 4-bit base is sharded over the data-parallel ranks, which ZeRO-3 and FSDP do to float tensors only: load "
            "it with BitsAndBytesConfig(bnb_4bit_quant_storage=torch.bfloat16), so the packed weights are stored as the "
            f"bf16 the rest of the model is, as this plan sizes them ({QUANT_STORAGE_SOURCE})"
        )
        details["bnb_4bit_quant_storage"] = "bfloat16"
    return reasons, details
