"""Where ``inference.lora`` (LoRA adapters served over the base model) can be sized, each refusal at its field.

The sizing is :mod:`generator.sizing.lora_serving` (the engine's GPU slots, host copies). Refused:

- ``hardware.fixed``: sized as llama.cpp's server, whose ``--lora`` adapters are applied at load, not served per request
  from slots; a pooling task (embed, score), whose LoRA serving neither engine sizes this way;
- a ``max_rank`` vLLM does not accept (``MaxLoRARanks``): it refuses to start, so the next one up is named;
- ``max_loras`` above ``adapters`` (slots never filled, memory taken from the KV cache for nothing);
- ``max_cpu_loras`` below the adapters in one batch (vLLM refuses ``max_cpu_loras < max_loras``,
  https://github.com/vllm-project/vllm/blob/main/vllm/config/lora.py; SGLang ``--max-loaded-loras`` below
  ``--max-loras-per-batch``, https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py);
- target modules the model lacks (as a training job's ``lora_target_modules`` are checked), and ``lm_head`` /
  ``embed_tokens``, whose serving buffers are not sized;
- under SGLang, a target its ``--lora-target-modules`` does not take (``lora_serving.SGLANG_TARGETS``; hostile87: a PEFT
  name such as ``self_attn.q_proj`` or Mixtral's ``w1`` was rendered as a flag SGLang refuses to start with).
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import InferenceSpec


def lora_errors(doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel | None, *, fixed: bool) -> list[InputError]:
    """Errors at deployment ``i``'s ``inference.lora`` fields (none where it has no adapters)."""
    lora = spec.lora
    if lora is None:
        return []

    def at(field: str | None = None) -> tuple[str | int, ...]:
        return ("deployments", i, "inference", "lora") + ((field,) if field else ())

    if fixed:
        why = (
            "hardware.fixed is sized as llama.cpp's server, which loads every --lora adapter at start and picks them "
            "per request by scale, with no adapter slots or host-RAM pool to size: serve the adapters with vLLM or "
            "SGLang on a planned server, or merge one into the model"
        )
        return [InputError(f"lora: {why}", doc.locate(at()))]
    if spec.pooling:
        why = f"a pooling service (task: {spec.task}) is not sized with LoRA adapters; drop lora"
        return [InputError(f"lora: {why}", doc.locate(at()))]
    # the engines' rules, one definition each beside the estimate's options (generator.sizing.lora_serving)
    from generator.sizing.lora_serving import cpu_loras_problem, max_loras_problem, rank_problem, target_problem

    problems = [
        ("max_rank", rank_problem(spec.engine, lora.max_rank)),
        ("max_loras", max_loras_problem(lora.max_loras, lora.adapters)),
        ("max_cpu_loras", cpu_loras_problem(spec.engine, lora.max_cpu_loras, lora.max_loras, lora.adapters)),
        ("target_modules", target_problem(model.architecture, lora.target_modules, engine=spec.engine) if model else None),
    ]
    return [InputError(why, doc.locate(at(field))) for field, why in problems if why is not None]
