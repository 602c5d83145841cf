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
- under SGLang, a target its ``--lora-target-modules`` does not take (:data:`SGLANG_TARGETS`; hostile87: a PEFT name
  such as ``self_attn.q_proj`` or Mixtral's ``w1`` was rendered as a flag SGLang refuses to start with).
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel
from generator.errors import InputError
from generator.sizing.engine_runtime import ENGINE_NAMES
from generator.workload.loader import Document
from generator.workload.models import InferenceSpec

#: The names SGLang's ``--lora-target-modules`` takes (argparse ``choices``: ``SUPPORTED_LORA_TARGET_MODULES`` and
#: ``all``, https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/utils/common.py and
#: python/sglang/srt/server_args.py), less ``embed_tokens`` and ``lm_head``, which are refused here as not sized; its
#: ``all`` is rendered for PEFT's ``all-linear``. Any other name stops the server at its argument parser.
SGLANG_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "qkv_proj", "gate_up_proj")


def lora_errors(doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel | None, *, fixed: bool) -> list[InputError]:
    """Errors at deployment ``i``'s ``inference.lora`` fields (none where it has no adapters)."""
    lora = spec.lora
    if lora is None:
        return []

    def at(field: str | None = None) -> tuple[str | int, ...]:
        return ("deployments", i, "inference", "lora") + ((field,) if field else ())

    if fixed:
        why = (
            "hardware.fixed is sized as llama.cpp's server, which applies --lora adapters at load for every request, "
            "not per request from GPU slots: serve the adapters with vLLM or SGLang on a planned server, or merge one "
            "into the model"
        )
        return [InputError(f"lora: {why}", doc.locate(at()))]
    if spec.pooling:
        why = f"a pooling service (task: {spec.task}) is not sized with LoRA adapters; drop lora"
        return [InputError(f"lora: {why}", doc.locate(at()))]
    from generator.sizing.lora_serving import ENGINE_LORA, VLLM_MAX_LORA_RANKS, served_max_loras  # only with adapters

    errors: list[InputError] = []
    if spec.engine == "vllm" and lora.max_rank not in VLLM_MAX_LORA_RANKS:
        up = next(r for r in VLLM_MAX_LORA_RANKS if r > lora.max_rank)
        errors.append(
            InputError(
                f"max_rank {lora.max_rank}: vLLM's --max-lora-rank takes {', '.join(map(str, VLLM_MAX_LORA_RANKS))}; "
                f"set {up} (every slot is sized at it, and adapters of a lower rank fit)",
                doc.locate(at("max_rank")),
            )
        )
    max_loras = served_max_loras(lora.max_loras, spec.engine)
    if lora.max_loras is not None and lora.max_loras > lora.adapters:
        errors.append(
            InputError(
                f"max_loras {lora.max_loras} is more than adapters {lora.adapters}: each slot holds GPU memory the KV "
                f"cache would have, and a batch uses at most {lora.adapters}; set max_loras to {lora.adapters} or fewer",
                doc.locate(at("max_loras")),
            )
        )
    if lora.max_cpu_loras is not None and lora.max_cpu_loras < max_loras:
        rules = ENGINE_LORA[spec.engine]
        errors.append(
            InputError(
                f"max_cpu_loras {lora.max_cpu_loras} is below max_loras {max_loras}: {ENGINE_NAMES[spec.engine]} refuses "
                f"to start ({rules.host_flag} must be at least {rules.batch_flag}); raise it",
                doc.locate(at("max_cpu_loras")),
            )
        )
    if model is not None:
        errors += _target_errors(doc, at("target_modules"), lora.target_modules, model)
    if spec.engine == "sglang" and not errors:
        errors += _sglang_target_errors(doc, at("target_modules"), lora.target_modules)
    return errors


def _sglang_target_errors(doc: Document, path: tuple[str | int, ...], targets: tuple[str, ...]) -> list[InputError]:
    """An error where SGLang's ``--lora-target-modules`` would not take a target (:data:`SGLANG_TARGETS`)."""
    from generator.sizing.lora_modules import LORA_ALL

    if not (refused := [t for t in targets if t != LORA_ALL and t not in SGLANG_TARGETS]):
        return []
    last = [t.rsplit(".", 1)[-1] for t in refused]
    hint = f" (as {', '.join(dict.fromkeys(last))})" if any(n in SGLANG_TARGETS for n in last) else ""
    return [
        InputError(
            f"target_modules {', '.join(refused)}: SGLang's --lora-target-modules takes {', '.join(SGLANG_TARGETS)} "
            f"or all-linear, a module's last name, over every layer; give the modules so{hint}, or engine: vllm",
            doc.locate(path),
        )
    ]


def _target_errors(
    doc: Document, path: tuple[str | int, ...], targets: tuple[str, ...], model: ResolvedModel
) -> list[InputError]:
    """An error where a target names no linear module of the model, or the output layer / the input embedding."""
    from generator.sizing.lora_modules import matches_embedding, matches_lm_head
    from generator.sizing.training import lora_targets

    if head := [t for t in targets if matches_lm_head(t) or matches_embedding(t)]:
        return [
            InputError(
                f"target_modules {', '.join(head)}: the engines' output-layer and embedding LoRA buffers are not sized "
                "(their shapes differ between vLLM releases); give the decoder layers' modules, or all-linear",
                doc.locate(path),
            )
        ]
    try:
        lora_targets(model.architecture, targets)
    except InputError as exc:
        return [InputError(exc.message, doc.locate(path))]
    return []
