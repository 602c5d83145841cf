"""A service's images, added to its prompts as the tokens they take (newuser62 item 1).

specgen sizes the tokens a request gives the language model. A vision-language model turns each image into tokens
that take prefill and KV cache as text does, so ``images_per_request`` (the average images in a request) times the
tokens one image takes is added to ``avg_input_tokens`` (and to ``p95_input_tokens`` where given) before anything is
sized. The tokens of an image: ``image_tokens`` where given, else the model's fixed count where every image is resized
to one size (Gemma 3's ``mm_tokens_per_image``, LLaVA-1.5's 576); a model whose count depends on the image's size
(Qwen2-VL / Qwen2.5-VL, Pixtral) needs ``image_tokens``. The vision encoder's own compute is still not counted (the
``image-tokens`` finding says so).
"""

from __future__ import annotations

import math

from generator.calculator.model_source import ResolvedModel
from generator.errors import InputError, MultipleInputError
from generator.workload.loader import Document
from generator.workload.models import InferenceDeployment, InferenceSpec, TrainingDeployment, Workload


def image_tokens_per_request(spec: InferenceSpec, model: ResolvedModel) -> int:
    """Tokens a request's images add to its prompt (0 without ``images_per_request``); call after :func:`add_image_tokens`."""
    tower = model.architecture.vision
    if not spec.images_per_request or tower is None:
        return 0
    per_image = spec.image_tokens or (tower.image_tokens if tower.any_size else 0)
    return math.ceil(spec.images_per_request * per_image)


def add_image_tokens(doc: Document, wl: Workload, models: dict[str, ResolvedModel]) -> Workload:
    """``wl`` with each service's image tokens in its prompt lengths; a problem is an error at its field."""
    errors: list[InputError] = []
    deployments: list[InferenceDeployment | TrainingDeployment] = []
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or not (dep.inference.images_per_request or dep.inference.image_tokens):
            deployments.append(dep)
            continue
        spec, model = dep.inference, models[dep.name]
        tower = model.architecture.vision

        def error(field: str, message: str, index: int = i) -> None:
            errors.append(InputError(message, doc.locate(("deployments", index, "inference", field))))

        if not spec.images_per_request:
            error("image_tokens", "image_tokens is the tokens one image takes: it means nothing without images_per_request")
        elif tower is None:
            error(
                "images_per_request",
                f"{model.name} has no vision tower specgen counts (a text model, or a tower noted as not counted): "
                "images_per_request means nothing for it; give the image tokens in avg_input_tokens if it takes images",
            )
        elif spec.image_tokens is None and not tower.any_size:
            # newuser71 item 9: a tower counted approximately has no rule, and printed "(ViT: )"
            rule = tower.tokens_rule or "a tower specgen counts approximately, whose tokens an image it does not know"
            error(
                "images_per_request",
                f"the tokens one image takes depend on its size for {model.name} ({tower.kind}: {rule}): "
                "give image_tokens, the tokens of the images the service takes",
            )
        else:
            added = image_tokens_per_request(spec, model)
            spec = spec._replace(
                avg_input_tokens=spec.avg_input_tokens + added,
                p95_input_tokens=None if spec.p95_input_tokens is None else spec.p95_input_tokens + added,
            )
            longest = (spec.p95_input_tokens or spec.avg_input_tokens) + spec.avg_output_tokens
            if longest > spec.max_context_tokens:
                tail = "p95_input_tokens" if spec.p95_input_tokens is not None else "avg_input_tokens"
                error(
                    "images_per_request",
                    f"{tail} with the images' {added:,} tokens, and avg_output_tokens, {longest:,} tokens in all, exceed "
                    f"max_context_tokens ({spec.max_context_tokens:,}): such a request would not fit its context window",
                )
        deployments.append(dep._replace(inference=spec))
    if errors:
        raise errors[0] if len(errors) == 1 else MultipleInputError(errors)
    return wl._replace(deployments=tuple(deployments))
