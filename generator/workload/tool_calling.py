"""Where ``inference.tool_calling`` can be rendered, each refusal at its field.

The parser comes from :mod:`generator.catalog.tool_parsers` by the model's family. Refused: a model of no family in
that table (no parser to name: the engine would start and answer tool calls with HTTP 400, or not start), a pooling
task (embed, score: no chat completion to call a tool from), and ``hardware.fixed`` (llama.cpp's server, whose tool
calls take ``--jinja`` and the model's chat template; specgen renders no llama-server flags for them).
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel
from generator.catalog.tool_parsers import supported_families, tool_call_parser
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import InferenceSpec


def tool_calling_errors(
    doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel | None, *, fixed: bool
) -> list[InputError]:
    """Errors at deployment ``i``'s ``inference.tool_calling`` (none where it is off)."""
    if not spec.tool_calling:
        return []
    where = doc.locate(("deployments", i, "inference", "tool_calling"))
    if fixed:
        why = (
            "hardware.fixed is served by llama.cpp's server, whose tool calls take --jinja and the model's chat "
            "template, which specgen does not render: drop tool_calling and start llama-server with --jinja, or "
            "serve the model with vLLM or SGLang on a planned server"
        )
        return [InputError(f"tool_calling: {why}", where)]
    if spec.pooling:
        return [InputError(f"tool_calling: a pooling service (task: {spec.task}) calls no tools; drop tool_calling", where)]
    if model is None or tool_call_parser(model.architecture.model_type, model.id, spec.engine) is not None:
        return []
    why = (
        f"tool_calling: no {spec.engine} tool-call parser is known for {model.id} (model_type "
        f"{model.architecture.model_type!r}); supported families: {supported_families()} "
        "(generator/catalog/tool_parsers.json); drop tool_calling or serve a model of one of them"
    )
    return [InputError(why, where)]
